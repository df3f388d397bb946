"""The `Store` interface that both backends (local folder, Hub dataset repo) implement."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from pathlib import Path

from .model import Snapshot, SubmissionFile


class Store(ABC):
    """Where submissions live. The store never parses or scores a submission.

    Implementations are safe to call from several threads (the refresher pulls
    while users submit).
    """

    #: "hub:<repo>" or "local:<folder>", shown next to "data as of".
    source: str = ""
    #: Whether a pull goes over the network (and may be slow): the app then pulls in the background.
    remote: bool = False
    #: Reviewer of pull-request submissions (hub_prs.PullRequestReviewer); None where there are no pull requests.
    pull_requests = None

    @abstractmethod
    def pull(self) -> Snapshot:
        """Bring the local copy up to date; download only new or changed files.

        Raises StoreUnavailable when the backend cannot be reached; the caller
        keeps its previous snapshot.
        """

    @abstractmethod
    def submit(self, track: str, user: str, filename_ext: str, data: bytes, metadata: dict) -> SubmissionFile:
        """Store one already-validated submission and its metadata together (one commit).

        Raises DuplicateSubmission (same bytes already in this track),
        RateLimited (per-user daily limit), StoreUnavailable, InvalidName.
        """

    @abstractmethod
    def flags(self) -> dict:
        """Maintainers' flags: repo path -> {"status": "hidden"|"flagged", "reason": str}."""

    def notice(self) -> str | None:
        """A problem admins should see in the status line (a broken flags.json), None when all is well."""
        return None

    def cached_snapshot(self) -> Snapshot | None:
        """What an earlier pull left on disk, without any network (None when there is nothing).

        Lets a restarted app serve the last good data while the backend is unreachable.
        """
        return None

    def push_results(self, local_dir: Path, changed=None, extra=None) -> int:
        """Upload result files missing from the results repo (and the `extra` repo files); how many were sent.

        `changed`: the files of `local_dir` written since the last push, when the caller knows them.
        """
        return 0

    def pull_results(self, local_dir: Path, wanted: Iterable[str] | None = None) -> int:
        """Install the verdict records `local_dir` lacks (of those named in `wanted`, when given); how many."""
        return 0
