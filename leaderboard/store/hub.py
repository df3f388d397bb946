"""HubStore: submissions in a Hugging Face dataset repo, through huggingface_hub.

A small facade over the parts that do the work, each with its own file:

- hub_client.py: the configured Hub client, and the one place Hub errors become store errors;
- hub_pull.py: pulling the submissions repo (pull state, listings, downloads, snapshots, flags);
- hub_submit.py: submitting (duplicate check, rate limit, guarded commit, lost-reply check);
- hub_results.py: the RESULTS_REPO cache of scored results.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path

from .base import Store
from .hub_client import HubClient
from .hub_prs import PullRequestReviewer
from .hub_pull import SubmissionsPuller
from .hub_results import ResultsRepo
from .hub_submit import Submitter
from .model import Snapshot, SubmissionFile


def _utcnow() -> datetime:
    return datetime.now(UTC)


class HubStore(Store):
    remote = True

    def __init__(
        self,
        repo_id: str,
        token: str | None = None,
        endpoint: str | None = None,
        results_repo: str | None = None,
        cache_dir: Path | str = Path(".cache") / "hub",
        *,
        submissions_per_day: int = 5,
        timeout: float = 30.0,
        revision: str = "main",
        clock: Callable[[], datetime] = _utcnow,
        max_workers: int = 8,
        auto_merge: bool = False,
        pr_close_after_days: float = 14.0,
    ):
        self.repo_id = repo_id
        self.results_repo = results_repo
        self.cache_dir = Path(cache_dir)
        self.source = f"hub:{repo_id}"
        self._client = HubClient(repo_id, token, endpoint, self.cache_dir / "downloads", timeout=timeout, revision=revision)
        self._puller = SubmissionsPuller(
            self._client, repo_id, self.cache_dir / "state", source=self.source, max_workers=max_workers
        )
        # One writer at a time in this process, whichever repo it writes to.
        write_lock = threading.Lock()
        self._submitter = Submitter(
            self._client,
            repo_id,
            self.cache_dir / "submitted",
            submissions_per_day=submissions_per_day,
            clock=clock,
            write_lock=write_lock,
            on_committed=self._puller.seed,
        )
        self.pull_requests = PullRequestReviewer(
            self._client,
            repo_id,
            self.cache_dir / "state" / f"{repo_id.replace('/', '--')}.pull-requests.json",
            auto_merge=auto_merge,
            close_after_days=pr_close_after_days,
            clock=clock,
        )
        self._results = ResultsRepo(self._client, results_repo, write_lock=write_lock) if results_repo else None

    @property
    def endpoint(self) -> str:
        return self._client.endpoint

    @property
    def revision(self) -> str:
        return self._client.revision

    @property
    def timeout(self) -> float:
        return self._client.timeout

    @property
    def submissions_per_day(self) -> int:
        return self._submitter.submissions_per_day

    def __repr__(self) -> str:
        token = "<set>" if self._client.token else "<none>"  # never the token itself
        return (
            f"HubStore(repo_id={self.repo_id!r}, endpoint={self.endpoint!r}, results_repo={self.results_repo!r}, token={token})"
        )

    # ---- submissions ---------------------------------------------------------------------

    def cached_snapshot(self) -> Snapshot | None:
        return self._puller.cached_snapshot()

    def pull(self) -> Snapshot:
        return self._puller.pull()

    def flags(self) -> dict:
        """flags.json at the current head (not necessarily the last pull's)."""
        return self._puller.flags()

    def notice(self) -> str | None:
        return self._puller.notice()

    def submit(self, track: str, user: str, filename_ext: str, data: bytes, metadata: dict) -> SubmissionFile:
        return self._submitter.submit(track, user, filename_ext, data, metadata)

    # ---- results cache -------------------------------------------------------------------

    def push_results(self, local_dir: Path, changed=None, extra=None) -> int:
        """Upload result files under `local_dir` that RESULTS_REPO lacks, in one commit (0 without RESULTS_REPO).

        See ResultsRepo.push for `changed` (files written since the last push) and `extra` (the dataset view).
        """
        return self._results.push(local_dir, changed, extra) if self._results else 0

    def results_repo_paths(self) -> set[str] | None:
        """Paths RESULTS_REPO holds as last listed or committed by this process (None when not known yet)."""
        return self._results.remote_paths() if self._results else None

    def pull_results(self, local_dir: Path, wanted: Iterable[str] | None = None) -> int:
        """Install RESULTS_REPO's verdict records that `local_dir` lacks (see ResultsRepo.pull; 0 without RESULTS_REPO)."""
        return self._results.pull(local_dir, wanted) if self._results else 0

    # ---- account -------------------------------------------------------------------------

    def ensure_repos(self, private: bool | None = None) -> None:
        """Create the submissions (and results) dataset repos if missing; needs a write token."""
        for repo in filter(None, (self.repo_id, self.results_repo)):
            with self._client.errors("creating the repo", repo):
                self._client.create_repo(repo, private=private)

    def whoami(self) -> str:
        """The account the configured token belongs to."""
        with self._client.errors("checking the token"):
            return self._client.whoami()
