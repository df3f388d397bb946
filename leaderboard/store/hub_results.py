"""RESULTS_REPO: scored results shared between app instances, so a fresh Space starts without rescoring.

Result files are named by content hash + metric version, so a name already in
the repo is never uploaded again; a file that fails its check on the way down is
skipped (the board rescores that submission) and replaced by the next push.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
from pathlib import Path, PurePosixPath

from huggingface_hub import CommitOperationAdd
from huggingface_hub.errors import RepositoryNotFoundError

from .hub_client import HubClient
from .naming import RESULTS_DIR

log = logging.getLogger(__name__)


def _safe_relative(path: str) -> PurePosixPath | None:
    rel = PurePosixPath(path)
    if rel.is_absolute() or any(part in ("", ".", "..") for part in rel.parts):
        return None
    return rel


class ResultsRepo:
    def __init__(self, client: HubClient, repo_id: str, *, write_lock: threading.Lock):
        self.client = client
        self.repo_id = repo_id
        self._write_lock = write_lock
        # Results files the repo holds in a bad state: the next push replaces them.
        self._bad_remote_results: set[str] = set()

    def push(self, local_dir: Path) -> int:
        """Upload result files under `local_dir` that the repo lacks (or holds damaged), in one commit."""
        local_dir = Path(local_dir)
        local = (
            {
                f.relative_to(local_dir).as_posix(): f
                for f in sorted(local_dir.rglob("*"))
                if f.is_file() and not any(p.startswith(".") for p in f.relative_to(local_dir).parts)
            }
            if local_dir.is_dir()
            else {}
        )
        if not local:
            return 0
        with self._write_lock, self.client.errors("pushing results", self.repo_id):
            try:
                head = self.client.head(self.repo_id)
                remote = self.client.list_files(self.repo_id, head, under=RESULTS_DIR)
            except RepositoryNotFoundError:
                self.client.create_repo(self.repo_id)
                remote = {}
            missing = [rel for rel in local if f"{RESULTS_DIR}/{rel}" not in remote or rel in self._bad_remote_results]
            if not missing:
                return 0
            self.client.commit(
                self.repo_id,
                [
                    CommitOperationAdd(path_in_repo=f"{RESULTS_DIR}/{rel}", path_or_fileobj=local[rel].read_bytes())
                    for rel in missing
                ],
                f"Add {len(missing)} cached result file(s)",
            )
            self._bad_remote_results.difference_update(missing)
            return len(missing)

    def pull(self, local_dir: Path) -> int:
        """Download result files that `local_dir` lacks; a missing repo means nothing cached yet.

        Each file is checked before it is installed (scoring.result_file_problem): a
        truncated or mismatched one is skipped and logged, so the board rescores that
        submission, and the next push replaces it in the repo.
        """
        from ..scoring import result_file_problem  # lazily: the store itself never scores

        local_dir = Path(local_dir)
        with self.client.errors("pulling results", self.repo_id):
            try:
                head = self.client.head(self.repo_id)
            except RepositoryNotFoundError:
                return 0
            remote = self.client.list_files(self.repo_id, head, under=RESULTS_DIR)
            count = 0
            for path in sorted(remote):
                rel = _safe_relative(path[len(RESULTS_DIR) + 1 :])
                if rel is None:
                    continue
                target = local_dir.joinpath(*rel.parts)
                if target.exists():
                    continue
                source = self.client.download(self.repo_id, path, head)
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
            return count
