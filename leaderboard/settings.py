"""Every environment variable of the scoring side in one place, with defaults that run offline.

| variable | default | meaning |
|---|---|---|
| `<TRACK>_GOLD` (UNIDOC_GOLD...: `Track.gold_env`, one per registered track) | bundled demo gold | local path or Hugging Face dataset id of a track's gold |
| JUDGE | `lexical` in the app, `none` in the CLI | `none`, `lexical` (offline approximation) or `openai` |
| JUDGE_MODEL | `gpt-4o-mini` | model name for the `openai` judge |
| OPENAI_BASE_URL, OPENAI_API_KEY | the openai client's own defaults | any OpenAI-compatible server |
| JUDGE_CONCURRENCY | 4 | judge calls in flight at once |
| LEADERBOARD_DATA_DIR | `<repo>/.cache` | results cache, judge cache, downloads (shared with the store) |
| STATUS_POLL_SECONDS | 5 | how often an open page checks for new data and a changed status line (outage banner) |
| ADMIN_USERS | unset | comma-separated Hugging Face user names allowed to force a refresh on a Space (locally anyone may) |

The store's own variables (SUBMISSIONS_REPO, RESULTS_REPO, HF_TOKEN, ...) are
in `leaderboard/store/settings.py`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .store.settings import _default_data_dir, _positive_float, _positive_int
from .tracks import TRACKS


@dataclass(frozen=True)
class Settings:
    data_dir: Path = field(default_factory=_default_data_dir)
    gold: dict[str, str | None] = field(default_factory=dict)
    judge: str = "none"
    judge_model: str = "gpt-4o-mini"
    openai_base_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    judge_concurrency: int = 4
    admin_users: tuple[str, ...] = ()
    status_poll_seconds: float = 5.0  # the page's timer: new data and the status line reach open pages this often

    @property
    def results_dir(self) -> Path:
        return self.data_dir / "results"

    @property
    def judge_cache_dir(self) -> Path:
        return self.data_dir / "judge"

    def judge_kwargs(self) -> dict:
        return {"cache_dir": self.judge_cache_dir, "model": self.judge_model, "base_url": self.openai_base_url,
                "api_key": self.openai_api_key, "concurrency": self.judge_concurrency}

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, default_judge: str = "none") -> Settings:
        env = os.environ if env is None else env

        def text(name: str) -> str | None:
            return (env.get(name) or "").strip() or None

        judge = text("JUDGE") or default_judge
        if judge not in ("none", "lexical", "openai"):
            raise ValueError(f"JUDGE must be none, lexical or openai, got {judge!r}")
        data_dir = text("LEADERBOARD_DATA_DIR")
        return cls(
            data_dir=Path(data_dir).expanduser() if data_dir else _default_data_dir(),
            gold={name: text(track.gold_env) for name, track in TRACKS.items()},
            judge=judge,
            judge_model=text("JUDGE_MODEL") or "gpt-4o-mini",
            openai_base_url=text("OPENAI_BASE_URL"),
            openai_api_key=text("OPENAI_API_KEY"),
            judge_concurrency=_positive_int(env, "JUDGE_CONCURRENCY", 4),
            admin_users=tuple(u.strip() for u in (text("ADMIN_USERS") or "").split(",") if u.strip()),
            status_poll_seconds=_positive_float(env, "STATUS_POLL_SECONDS", 5.0),
        )


def settings(**kwargs) -> Settings:
    return Settings.from_env(**kwargs)
