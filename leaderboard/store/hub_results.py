"""RESULTS_REPO: the board's results, published; of them a fresh board takes back only its judge's verdicts.

What a pull installs is one kind of file at one place: the verdict records
(results/verdicts/<sha256>.<judge>.json, judge/record.py), the one part of a
result that is expensive to make. Each is size-checked from the listing before
it is downloaded and on disk before it is parsed, then checked whole
(record.parse); anything else the repo holds (summaries, per-unit scores, the
tables, a file at a path no kind has) is never downloaded: the board rescores
every submission from its own copy and those verdicts, so a number edited in
the repo never reaches the page. A local file is the board's own and is kept.

A push sends every results file whose bytes differ from the repo's (compared by
the listing's blob or LFS id, never by name): a file someone edited in the repo
is replaced with the board's own at the next push. The dataset view
(results_dataset.py: README.md, data/...) is sent the same way. A push is one
commit; after the first listing of the repo it lists nothing and considers only
what changed.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

from huggingface_hub import CommitOperationAdd, CommitOperationDelete
from huggingface_hub.errors import RepositoryNotFoundError

from .hub_client import HubClient
from .naming import RESULTS_DIR

log = logging.getLogger(__name__)


def content_ids(data: bytes) -> frozenset[str]:
    """How the Hub's tree listing may name these bytes: git blob id (regular file) or sha256 (LFS)."""
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    return frozenset((f"git:{blob}", f"sha256:{hashlib.sha256(data).hexdigest()}"))


def listed_id(item) -> str:
    lfs = getattr(item, "lfs", None)
    return f"sha256:{lfs.sha256}" if lfs is not None else f"git:{item.blob_id}"


def _holds(listed: frozenset[str], data: bytes) -> bool:
    """Whether the repo's file (listed under these ids) holds `data`: only the listed kind of hash is computed."""
    for ident in listed:
        kind, _, digest = ident.partition(":")
        if kind == "git" and hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == digest:
            return True
        if kind == "sha256" and hashlib.sha256(data).hexdigest() == digest:
            return True
    return False


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
        """Upload, in one commit, the result files under `local_dir` whose bytes the repo does not hold at their path
        (missing, or edited there: compared by content, never by name).

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
                try:
                    data = file.read_bytes()
                except (FileNotFoundError, IsADirectoryError):
                    continue  # discarded since (a bad cache entry): nothing to send
                if _holds(remote.get(path, frozenset()), data):
                    continue
                operations.append(CommitOperationAdd(path_in_repo=path, path_or_fileobj=data))
                sent[path] = content_ids(data)
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

    def pull(self, local_dir: Path, wanted: Iterable[str] | None = None) -> int:
        """Install the verdict records `local_dir` lacks; a missing repo means nothing shared yet. Returns the count.

        Only records (judge/record.py) are considered, and with `wanted` (their paths relative to the results
        folder: the board's submissions under its judge) only those, so the repo cannot fill the disk with
        records of submissions the board does not have. One over record.MAX_BYTES by the listing is not
        downloaded, and a downloaded one is measured before it is parsed. A bad one is skipped and logged
        once: its submission is judged again, and the next push replaces it when the board has its own.
        """
        from ..judge import record  # lazily: the store itself never scores

        local_dir = Path(local_dir)
        with self.client.errors("pulling results", self.repo_id):
            try:
                head = self.client.head(self.repo_id)
            except RepositoryNotFoundError:
                return 0
            listing = self.client.list_files(self.repo_id, head)
            self._remote = {path: frozenset((listed_id(item),)) for path, item in listing.items()}
            count = 0
            wanted = set(wanted) if wanted is not None else None
            for path, item in sorted(listing.items()):
                rel = path[len(RESULTS_DIR) + 1 :] if path.startswith(f"{RESULTS_DIR}/") else ""
                if not record.is_record_path(rel) or (wanted is not None and rel not in wanted):
                    continue  # not a kind a pull installs, or not of a submission the board has: never downloaded
                target = local_dir.joinpath(*rel.split("/"))
                if target.exists():
                    continue  # the board's own
                size = getattr(item, "size", None)
                if isinstance(size, int) and size > record.MAX_BYTES:
                    self._skip(path, rel, f"is {size:,} bytes by the listing, over the {record.MAX_BYTES:,} a record may have")
                    continue
                source = self.client.download(self.repo_id, path, head)
                try:
                    found = record.read(source)  # its size first, then its content
                    if isinstance(found, str):
                        self._skip(path, rel, found)
                        continue
                    target.parent.mkdir(parents=True, exist_ok=True)
                    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
                    os.close(fd)
                    shutil.copyfile(source, tmp)
                    os.replace(tmp, target)
                    count += 1
                finally:
                    _drop_download(source)
            return count

    def _skip(self, path: str, rel: str, problem: str) -> None:
        if rel not in self._bad_remote_results:
            log.warning("results repo file %s %s; skipped, its submission is judged again", path, problem)
        self._bad_remote_results.add(rel)


def _drop_download(path: Path) -> None:
    """Remove a downloaded file from the Hub client's cache (the link and the blob it points to): installed or
    refused, it is not kept twice on disk."""
    try:
        blob = path.resolve()
        path.unlink(missing_ok=True)
        if blob != path:
            blob.unlink(missing_ok=True)
    except OSError:
        pass  # a cache file left over costs disk only


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
