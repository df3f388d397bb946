"""RESULTS_REPO: scored results shared between app instances, so a fresh Space starts without rescoring.

Result files are named by content hash + metric version, so a name already in
the repo is never uploaded again; a file that fails its check on the way down is
skipped (the board rescores that submission) and replaced by the next push.
The results index (results/index/<track>/<h>.json) and the dataset view
(results_dataset.py: README.md, data/...) are rewritten in place and sent when
their bytes differ from the repo's. A push is one commit; after the first
listing of the repo it lists nothing and considers only what changed.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

from huggingface_hub import CommitOperationAdd, CommitOperationDelete
from huggingface_hub.errors import RepositoryNotFoundError

from .hub_client import HubClient
from .naming import RESULTS_DIR

log = logging.getLogger(__name__)


def _safe_relative(path: str) -> PurePosixPath | None:
    rel = PurePosixPath(path)
    if rel.is_absolute() or any(part in ("", ".", "..") for part in rel.parts):
        return None
    return rel


def content_ids(data: bytes) -> frozenset[str]:
    """How the Hub's tree listing may name these bytes: git blob id (regular file) or sha256 (LFS)."""
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    return frozenset((f"git:{blob}", f"sha256:{hashlib.sha256(data).hexdigest()}"))


def listed_id(item) -> str:
    lfs = getattr(item, "lfs", None)
    return f"sha256:{lfs.sha256}" if lfs is not None else f"git:{item.blob_id}"


# Results files named by their content's key (summaries, per-unit scores) are uploaded once; these
# are rewritten in place as results change and uploaded whenever their bytes differ from the repo's.
MUTABLE_PREFIXES = ("index/",)


class ResultsRepo:
    def __init__(self, client: HubClient, repo_id: str, *, write_lock: threading.Lock):
        self.client = client
        self.repo_id = repo_id
        self._write_lock = write_lock
        # Results files the repo holds in a bad state: the next push replaces them.
        self._bad_remote_results: set[str] = set()
        # What the repo holds (path -> the ids its content may be listed under), as last listed or
        # committed by this process; None until known. A push then lists nothing and sends only what
        # changed locally since (`_pending`); a failed commit forgets it, so the next push lists again.
        self._remote: dict[str, frozenset[str]] | None = None
        self._pending: set[str] = set()

    def push(
        self,
        local_dir: Path,
        changed: Iterable[str] | None = None,
        extra: Mapping[str, bytes | None] | None = None,
    ) -> int:
        """Upload, in one commit, the result files under `local_dir` the repo lacks (or holds damaged or stale).

        `changed`: results files (relative to `local_dir`) written since the last push; with it, and the
        repo's content known from an earlier listing, nothing is listed and only those are considered.
        `extra`: files at other paths of the repo (the dataset view): bytes to hold there, or None to
        delete the file; sent only when they differ from the repo's. Returns the number of files sent.
        """
        local_dir = Path(local_dir)
        self._pending.update(changed or ())
        with self._write_lock, self.client.errors("pushing results", self.repo_id):
            if self._remote is None or changed is None:
                self._remote = self._list_remote()
                candidates = _local_files(local_dir)
            else:
                candidates = {rel: local_dir / rel for rel in self._pending | self._bad_remote_results}
            remote = self._remote
            operations, sent = [], {}
            for rel, file in sorted(candidates.items()):
                path = f"{RESULTS_DIR}/{rel}"
                mutable = rel.startswith(MUTABLE_PREFIXES)
                if not mutable and path in remote and rel not in self._bad_remote_results:
                    continue
                try:
                    data = file.read_bytes()
                except (FileNotFoundError, IsADirectoryError):
                    continue  # discarded since (a bad cache entry): nothing to send
                ids = content_ids(data)
                if mutable and remote.get(path, frozenset()) & ids:
                    continue
                operations.append(CommitOperationAdd(path_in_repo=path, path_or_fileobj=data))
                sent[path] = ids
            for path, data in sorted((extra or {}).items()):
                if data is None:
                    if path in remote:
                        operations.append(CommitOperationDelete(path_in_repo=path))
                        sent[path] = frozenset()
                    continue
                ids = content_ids(data)
                if not (remote.get(path, frozenset()) & ids):
                    operations.append(CommitOperationAdd(path_in_repo=path, path_or_fileobj=data))
                    sent[path] = ids
            if not operations:
                self._pending.clear()
                return 0
            try:
                self.client.commit(self.repo_id, operations, _message(sent))
            except BaseException:
                self._remote = None  # unknown now: the next push lists the repo again
                raise
            for path, ids in sent.items():
                if ids:
                    remote[path] = ids
                else:
                    remote.pop(path, None)
            self._bad_remote_results.difference_update(p[len(RESULTS_DIR) + 1 :] for p in sent)
            self._pending.clear()
            return len(operations)

    def remote_paths(self) -> set[str] | None:
        """Paths the repo holds as this process last knew them (None before the first listing)."""
        return set(self._remote) if self._remote is not None else None

    def _list_remote(self) -> dict[str, frozenset[str]]:
        try:
            head = self.client.head(self.repo_id)
        except RepositoryNotFoundError:
            self.client.create_repo(self.repo_id)
            return {}
        return {path: frozenset((listed_id(item),)) for path, item in self.client.list_files(self.repo_id, head).items()}

    def pull(self, local_dir: Path) -> int:
        """Download result files that `local_dir` lacks; a missing repo means nothing cached yet.

        Each file is checked before it is installed (scoring.result_file_problem, results_index.file_problem
        for the index): a truncated or mismatched one is skipped and logged, so the board rescores that
        submission, and the next push replaces it in the repo. Index files are installed last: an index
        row is served only for a summary written before its index (see results_index.py).
        """
        from ..results_index import INDEX_DIR, file_problem  # lazily: the store itself never scores
        from ..scoring import METRIC_VERSION, result_file_problem

        local_dir = Path(local_dir)
        with self.client.errors("pulling results", self.repo_id):
            try:
                head = self.client.head(self.repo_id)
            except RepositoryNotFoundError:
                return 0
            listing = self.client.list_files(self.repo_id, head)
            self._remote = {path: frozenset((listed_id(item),)) for path, item in listing.items()}
            remote = [p for p in listing if p.startswith(f"{RESULTS_DIR}/")]
            count, newest_ns = 0, 0
            for path in sorted(remote, key=lambda p: (p.startswith(f"{RESULTS_DIR}/{INDEX_DIR}/"), p)):
                rel = _safe_relative(path[len(RESULTS_DIR) + 1 :])
                if rel is None:
                    continue
                target = local_dir.joinpath(*rel.parts)
                if target.exists():
                    continue
                source = self.client.download(self.repo_id, path, head)
                if rel.parts[0] == INDEX_DIR:
                    problem = file_problem("/".join(rel.parts[1:]), source, METRIC_VERSION)
                else:
                    problem = result_file_problem(rel.name, source)
                if problem is not None:
                    if rel.as_posix() not in self._bad_remote_results:
                        log.warning("results repo file %s %s; skipped, it will be rescored", path, problem)
                    self._bad_remote_results.add(rel.as_posix())
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
                os.close(fd)
                shutil.copyfile(source, tmp)
                os.replace(tmp, target)
                count += 1
                if rel.parts[0] != INDEX_DIR:
                    newest_ns = max(newest_ns, target.stat().st_mtime_ns)
                elif target.stat().st_mtime_ns <= newest_ns:
                    # Installed in the same clock tick as the summaries: the index must read as written after them.
                    os.utime(target, ns=(newest_ns + 1, newest_ns + 1))
            return count


def _local_files(local_dir: Path) -> dict[str, Path]:
    if not local_dir.is_dir():
        return {}
    return {
        f.relative_to(local_dir).as_posix(): f
        for f in sorted(local_dir.rglob("*"))
        if f.is_file() and not any(p.startswith(".") for p in f.relative_to(local_dir).parts)
    }


def _message(sent: dict[str, frozenset[str]]) -> str:
    results = sum(1 for p in sent if p.startswith(f"{RESULTS_DIR}/"))
    others = len(sent) - results
    return f"Update results: {results} cached result file(s)" + (f", {others} dataset file(s)" if others else "")
