"""The store's settings: the store section of `leaderboard.settings.Settings` (every variable is declared in
leaderboard/environment.py; the entry points read them).

With no variable set the store is the local folder (no account, no network).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..environment import REPO_ROOT, default, default_data_dir, read

DEMO_SUBMISSIONS_DIR = REPO_ROOT / "assets" / "demo" / "submissions"


@dataclass(frozen=True)
class StoreSettings:
    submissions_repo: str | None = None
    results_repo: str | None = None
    hf_token: str | None = field(default=None, repr=False)  # never printed
    hf_endpoint: str | None = None
    data_dir: Path = field(default_factory=default_data_dir)
    submissions_per_day: int = default("SUBMISSIONS_PER_DAY")
    invalid_submissions_per_day: int = default("INVALID_SUBMISSIONS_PER_DAY")
    refresh_seconds: float = default("STORE_REFRESH_SECONDS")
    hub_timeout: float = default("HUB_TIMEOUT_SECONDS")
    auto_merge: bool = default("AUTO_MERGE")
    pr_close_after_days: float = default("PR_CLOSE_AFTER_DAYS")
    demo_dir: Path = DEMO_SUBMISSIONS_DIR

    @property
    def backend(self) -> str:
        return "hub" if self.submissions_repo else "local"

    @property
    def local_root(self) -> Path:
        """The local backend's repo-shaped folder (submissions/, flags.json)."""
        return self.data_dir / "local"

    @property
    def hub_cache_dir(self) -> Path:
        return self.data_dir / "hub"

    @property
    def invalid_ledger_path(self) -> Path:
        """Rejected uploads counted per user, track and UTC day (see leaderboard/limits.py)."""
        return self.data_dir / "invalid-submissions.json"

    @property
    def results_dir(self) -> Path:
        """Local results cache (the scoring pipeline's); synced with RESULTS_REPO when set."""
        return self.data_dir / "results"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> StoreSettings:
        return cls(
            submissions_repo=read(env, "SUBMISSIONS_REPO"),
            results_repo=read(env, "RESULTS_REPO"),
            hf_token=read(env, "HF_TOKEN"),
            hf_endpoint=read(env, "HF_ENDPOINT"),
            data_dir=read(env, "LEADERBOARD_DATA_DIR"),
            submissions_per_day=read(env, "SUBMISSIONS_PER_DAY"),
            invalid_submissions_per_day=read(env, "INVALID_SUBMISSIONS_PER_DAY"),
            refresh_seconds=read(env, "STORE_REFRESH_SECONDS"),
            hub_timeout=read(env, "HUB_TIMEOUT_SECONDS"),
            auto_merge=read(env, "AUTO_MERGE"),
            pr_close_after_days=read(env, "PR_CLOSE_AFTER_DAYS"),
        )
