"""Settings of scoring, judging and the page, read from the environment (declared in environment.py).

The store's settings are `leaderboard.store.settings.StoreSettings`; both read their
variables through `leaderboard.environment`, which holds every name, default and meaning.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .environment import default, default_data_dir, read
from .tracks import TRACKS


@dataclass(frozen=True)
class Settings:
    data_dir: Path = field(default_factory=default_data_dir)
    gold: dict[str, str | None] = field(default_factory=dict)
    judge: str = "none"
    judge_model: str = default("JUDGE_MODEL")
    openai_base_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    judge_concurrency: int = default("JUDGE_CONCURRENCY")
    admin_users: tuple[str, ...] = default("ADMIN_USERS")
    # the page's timer: new data and the status line reach open pages this often
    status_poll_seconds: float = default("STATUS_POLL_SECONDS")
    # the board's public address (permalinks in pull-request comments); None: unknown
    board_url: str | None = None

    @property
    def results_dir(self) -> Path:
        return self.data_dir / "results"

    @property
    def judge_cache_dir(self) -> Path:
        return self.data_dir / "judge"

    def judge_kwargs(self) -> dict:
        return {
            "cache_dir": self.judge_cache_dir,
            "model": self.judge_model,
            "base_url": self.openai_base_url,
            "api_key": self.openai_api_key,
            "concurrency": self.judge_concurrency,
        }

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, default_judge: str = "none") -> Settings:
        env = os.environ if env is None else env

        def text(name: str) -> str | None:
            return (env.get(name) or "").strip() or None

        judge = read(env, "JUDGE") or default_judge
        return cls(
            data_dir=read(env, "LEADERBOARD_DATA_DIR"),
            gold={name: text(track.gold_env) for name, track in TRACKS.items()},
            judge=judge,
            judge_model=read(env, "JUDGE_MODEL"),
            openai_base_url=read(env, "OPENAI_BASE_URL"),
            openai_api_key=read(env, "OPENAI_API_KEY"),
            judge_concurrency=read(env, "JUDGE_CONCURRENCY"),
            admin_users=read(env, "ADMIN_USERS"),
            status_poll_seconds=read(env, "STATUS_POLL_SECONDS"),
            board_url=read(env, "BOARD_URL") or space_url(read(env, "SPACE_ID")),
        )


def space_url(space_id: str | None) -> str | None:
    """The address Hugging Face serves a Space's app at: `owner/My_Space` -> https://owner-my-space.hf.space."""
    if not space_id or "/" not in space_id:
        return None
    return "https://" + space_id.replace("/", "-").replace("_", "-").replace(".", "-").lower() + ".hf.space"


def settings(**kwargs) -> Settings:
    return Settings.from_env(**kwargs)
