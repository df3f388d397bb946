"""Submitting to the submissions repo: duplicate check, rate limit, one guarded commit, lost-reply check.

A submission and its metadata go out in one commit whose parent_commit is the head
the checks were made against: if anyone committed meanwhile (another replica, a
maintainer) the Hub refuses it, and the checks run again on the new head.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import httpx2
from huggingface_hub import CommitOperationAdd
from huggingface_hub.errors import HfHubHTTPError

from .errors import DuplicateSubmission, StoreError, redact
from .hub_client import HubClient, http_status
from .model import SubmissionFile, encode_metadata, stored_metadata
from .naming import (
    SUBMISSIONS_DIR,
    check_component,
    git_blob_oid,
    meta_path,
    normalize_extension,
    parse_submission_path,
    sha256_hex,
    submission_path,
)
from .policy import check_rate
from .pull_state import FileState

log = logging.getLogger(__name__)

# The commit's parent_commit is no longer the head: someone committed meanwhile.
_CONFLICT_STATUSES = (409, 412)
_COMMIT_ATTEMPTS = 5


class Submitter:
    """Commits validated submissions; `on_committed` receives what the pull state may take without a download."""

    def __init__(
        self,
        client: HubClient,
        repo_id: str,
        copies_dir: Path,
        *,
        submissions_per_day: int,
        clock: Callable[[], datetime],
        write_lock: threading.Lock,
        on_committed: Callable[[dict[str, FileState]], None],
    ):
        self.client = client
        self.repo_id = repo_id
        self.copies_dir = copies_dir
        self.submissions_per_day = submissions_per_day
        self._clock = clock
        self._write_lock = write_lock
        self._on_committed = on_committed

    def submit(self, track: str, user: str, filename_ext: str, data: bytes, metadata: dict) -> SubmissionFile:
        check_component(track, "track")
        check_component(user, "user")
        ext = normalize_extension(filename_ext)
        digest = sha256_hex(data)
        oid = git_blob_oid(data)
        # The lock serialises this process's writers; parent_commit serialises against
        # everyone else (other replicas, maintainers): a moved head means re-check and retry.
        with self._write_lock, self.client.errors("submitting"):
            for attempt in range(_COMMIT_ATTEMPTS):
                head = self.client.head(self.repo_id)
                existing = self.client.list_files(self.repo_id, head, under=f"{SUBMISSIONS_DIR}/{track}")
                self._refuse_duplicate(existing, track, digest, oid)
                now = self._clock()
                check_rate(existing, track, user, now, self.submissions_per_day)
                path = submission_path(track, user, now, digest, ext)
                meta = stored_metadata(metadata, track=track, user=user, sha256=digest, size=len(data), submitted_at=now)
                meta_bytes = encode_metadata(meta)
                try:
                    self.client.commit(
                        self.repo_id,
                        [
                            CommitOperationAdd(path_in_repo=path, path_or_fileobj=data),
                            CommitOperationAdd(path_in_repo=meta_path(path), path_or_fileobj=meta_bytes),
                        ],
                        f"Add {track} submission by {user}",
                        parent_commit=head,
                    )
                except HfHubHTTPError as exc:
                    if http_status(exc) in _CONFLICT_STATUSES and attempt + 1 < _COMMIT_ATTEMPTS:
                        log.info("submit %s: repo moved during commit, retrying (%d)", path, attempt + 1)
                        continue
                    raise
                except httpx2.TransportError:  # a timeout, a dropped connection
                    # The commit may have gone out with no answer coming back: it may have landed all the same.
                    # Telling the user "failed" then would make them resubmit into a duplicate.
                    if not self._landed(path, digest, oid):
                        raise
                    log.info("submit %s: the Hub's reply was lost, but the commit is in the repo", path)
                break
            local = self._keep_local_copy(path, data)
            local_meta = self._keep_local_copy(meta_path(path), meta_bytes)
        self._on_committed(
            {
                path: FileState(len(data), oid, digest, str(local)),
                meta_path(path): FileState(
                    len(meta_bytes), git_blob_oid(meta_bytes), sha256_hex(meta_bytes), str(local_meta), meta
                ),
            }
        )
        return SubmissionFile(path, local, track, user, digest, meta)

    @staticmethod
    def _refuse_duplicate(existing: dict, track: str, digest: str, oid: str) -> None:
        """The same bytes already submitted to this track (by anyone) are refused, whatever the file name."""
        for path, entry in existing.items():
            if parse_submission_path(path) and (
                (entry.lfs and entry.lfs.sha256 == digest) or (not entry.lfs and entry.blob_id == oid)
            ):
                raise DuplicateSubmission(existing=path, track=track)

    def _landed(self, path: str, digest: str, oid: str) -> bool:
        """Whether the repo's head now holds `path` with exactly our bytes (after a lost commit reply)."""
        try:
            head = self.client.head(self.repo_id)
            entry = self.client.list_files(self.repo_id, head, under=path.rsplit("/", 1)[0]).get(path)
        except (HfHubHTTPError, httpx2.HTTPError, StoreError, OSError, ValueError) as exc:
            log.warning(
                "submit %s: could not check whether the commit landed: %s", path, redact(str(exc), self.client.token)[:200]
            )
            return False
        if entry is None:
            return False
        return entry.lfs.sha256 == digest if entry.lfs else entry.blob_id == oid

    def _keep_local_copy(self, path: str, data: bytes) -> Path:
        target = self.copies_dir / path
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
        return target
