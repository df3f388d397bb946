"""Every environment variable the store reads, with defaults that run offline.

With no variable set the store is the local folder (no account, no network).
The lead may fold this into leaderboard/settings.py later; keep names stable.

| variable | default | meaning |
|---|---|---|
| SUBMISSIONS_REPO | unset (local backend) | Hub dataset repo holding submissions, e.g. `org/rag-leaderboard-submissions` |
| RESULTS_REPO | unset | Hub dataset repo caching scored results |
| HF_TOKEN | unset | token used for the Hub (needs write access to submit / push results) |
| HF_ENDPOINT | https://huggingface.co | Hub endpoint (tests point it at the local fake) |
| LEADERBOARD_DATA_DIR | `<repo>/.cache`, or the user cache dir if the repo is read-only | downloads, local submissions, pull state |
| SUBMISSIONS_PER_DAY | 5 | submissions per user, per track, per UTC day |
| INVALID_SUBMISSIONS_PER_DAY | 20 | rejected uploads (invalid, duplicate, name taken) per user, per track, per UTC day |
| STORE_REFRESH_SECONDS | 300 | how often the app pulls the repo |
| HUB_TIMEOUT_SECONDS | 30 | per-request network timeout for Hub calls (a request that got no answer is not resent) |
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_SUBMISSIONS_DIR = REPO_ROOT / "assets" / "demo" / "submissions"


def _default_data_dir() -> Path:
    if os.access(REPO_ROOT, os.W_OK):
        return REPO_ROOT / ".cache"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "open-rag-leaderboard"


def _positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from exc
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return value


def _positive_float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number, got {raw!r}") from exc
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


@dataclass(frozen=True)
class StoreSettings:
    submissions_repo: str | None = None
    results_repo: str | None = None
    hf_token: str | None = field(default=None, repr=False)  # never printed
    hf_endpoint: str | None = None
    data_dir: Path = field(default_factory=_default_data_dir)
    submissions_per_day: int = 5
    invalid_submissions_per_day: int = 20
    refresh_seconds: float = 300.0
    hub_timeout: float = 30.0
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
    def from_env(cls, env: Mapping[str, str] | None = None) -> StoreSettings:
        env = os.environ if env is None else env

        def text(name: str) -> str | None:
            value = (env.get(name) or "").strip()
            return value or None

        data_dir = text("LEADERBOARD_DATA_DIR")
        return cls(
            submissions_repo=text("SUBMISSIONS_REPO"),
            results_repo=text("RESULTS_REPO"),
            hf_token=text("HF_TOKEN"),
            hf_endpoint=(text("HF_ENDPOINT") or "").rstrip("/") or None,
            data_dir=Path(data_dir).expanduser() if data_dir else _default_data_dir(),
            submissions_per_day=_positive_int(env, "SUBMISSIONS_PER_DAY", 5),
            invalid_submissions_per_day=_positive_int(env, "INVALID_SUBMISSIONS_PER_DAY", 20),
            refresh_seconds=_positive_float(env, "STORE_REFRESH_SECONDS", 300.0),
            hub_timeout=_positive_float(env, "HUB_TIMEOUT_SECONDS", 30.0),
        )
