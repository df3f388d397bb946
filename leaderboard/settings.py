"""The board's one Settings, built by the entry points (app.py, cli.py) from the environment's declarations
(leaderboard/environment.py) and passed down: scoring and judging here, the store in `store`
(`leaderboard.store.settings.StoreSettings`), the page and the server in `page`. Nothing below the entry
points reads the environment.

    python -m leaderboard.settings     # prints the README's settings table (tests/test_readme.py checks it)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .environment import default, default_data_dir, read, readme_table
from .store.settings import StoreSettings
from .tracks import TRACKS
from .tracks.beir_hub import HubAccess


@dataclass(frozen=True)
class PageSettings:
    """The page and the server around it."""

    # systems a table shows at first and adds per "show more"
    table_page_rows: int = default("TABLE_PAGE_ROWS")
    # set by Hugging Face on a Space: submitting needs a login, refresh is for the admins
    space_id: str | None = None
    # off a Space, Gradio's mocked Hugging Face login instead of a typed-in name
    local_login: bool = False
    server_name: str = default("GRADIO_SERVER_NAME")
    server_port: int = default("PORT")
    log_level: str = default("LOG_LEVEL")
    # what one client and every client together may hold in, and send to, Gradio's upload folder
    upload_client_mib: int = default("UPLOAD_CLIENT_MIB")
    upload_client_files: int = default("UPLOAD_CLIENT_FILES")
    upload_client_mib_per_hour: int = default("UPLOAD_CLIENT_MIB_PER_HOUR")
    upload_client_files_per_hour: int = default("UPLOAD_CLIENT_FILES_PER_HOUR")
    upload_folder_mib: int = default("UPLOAD_FOLDER_MIB")
    upload_folder_files: int = default("UPLOAD_FOLDER_FILES")
    upload_claim_seconds: float = default("UPLOAD_CLAIM_SECONDS")

    @property
    def on_space(self) -> bool:
        return bool(self.space_id)

    @property
    def login_required(self) -> bool:
        """Submit as a logged-in Hugging Face user on a Space; off a Space only when LOCAL_LOGIN=1 asks for it.

        Off a Space, Gradio mocks the login with the machine's own token (get_token(), whoami on HF_ENDPOINT) and
        asks the Hub who that is while the page is built: an unreachable Hub or a machine without a token would
        then stop the app from starting. So a locally run board (a maintainer's machine, tests) uses it only on
        request; a Hub-backed board run locally without it takes the typed-in name, as the local demo does.
        """
        return self.on_space or self.local_login

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> PageSettings:
        return cls(
            table_page_rows=read(env, "TABLE_PAGE_ROWS"),
            space_id=read(env, "SPACE_ID"),
            local_login=(read(env, "LOCAL_LOGIN") or "") == "1",
            server_name=read(env, "GRADIO_SERVER_NAME"),
            server_port=int(read(env, "GRADIO_SERVER_PORT") or read(env, "PORT")),
            log_level=read(env, "LOG_LEVEL"),
            upload_client_mib=read(env, "UPLOAD_CLIENT_MIB"),
            upload_client_files=read(env, "UPLOAD_CLIENT_FILES"),
            upload_client_mib_per_hour=read(env, "UPLOAD_CLIENT_MIB_PER_HOUR"),
            upload_client_files_per_hour=read(env, "UPLOAD_CLIENT_FILES_PER_HOUR"),
            upload_folder_mib=read(env, "UPLOAD_FOLDER_MIB"),
            upload_folder_files=read(env, "UPLOAD_FOLDER_FILES"),
            upload_claim_seconds=read(env, "UPLOAD_CLAIM_SECONDS"),
        )


@dataclass(frozen=True)
class Settings:
    data_dir: Path = field(default_factory=default_data_dir)
    gold: dict[str, str | None] = field(default_factory=dict)
    judge: str = "none"
    judge_model: str = default("JUDGE_MODEL")
    openai_base_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    judge_concurrency: int = default("JUDGE_CONCURRENCY")
    judge_mode: str = default("JUDGE_MODE")
    judge_batch_poll_seconds: float = default("JUDGE_BATCH_POLL_SECONDS")
    judge_batch_max_items: int = default("JUDGE_BATCH_MAX_ITEMS")
    judge_batch_dir: Path | None = None
    # (prompt, completion) dollars per million tokens of the openai judge's model: a dry run's cost; None: unknown
    judge_price_per_mtok: tuple[float, float] | None = None
    admin_users: tuple[str, ...] = default("ADMIN_USERS")
    # the page's timer: new data and the status line reach open pages this often
    status_poll_seconds: float = default("STATUS_POLL_SECONDS")
    # the board's public address (permalinks in pull-request comments); None: unknown
    board_url: str | None = None
    # the store's section; a Board given its own StoreSettings uses that one
    store: StoreSettings = field(default_factory=StoreSettings)
    page: PageSettings = field(default_factory=PageSettings)

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
            "mode": self.judge_mode,
            "poll_seconds": self.judge_batch_poll_seconds,
            "max_items": self.judge_batch_max_items,
            "batch_dir": self.judge_batch_dir,
        }

    def hub_access(self, store: StoreSettings | None = None) -> HubAccess:
        """How the tracks read gold from the Hub: the store's endpoint and timeout (`store`: another store
        section than this one's), the gold's local copies under the data folder."""
        store = store or self.store
        return HubAccess(endpoint=store.hf_endpoint, timeout=store.hub_timeout, data_dir=self.data_dir)

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, default_judge: str = "none") -> Settings:
        """Every section from `env` (the entry points pass os.environ); a bad value raises ValueError naming it."""

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
            judge_mode=read(env, "JUDGE_MODE"),
            judge_batch_poll_seconds=read(env, "JUDGE_BATCH_POLL_SECONDS"),
            judge_batch_max_items=read(env, "JUDGE_BATCH_MAX_ITEMS"),
            judge_batch_dir=read(env, "JUDGE_BATCH_DIR"),
            judge_price_per_mtok=read(env, "JUDGE_PRICE_PER_MTOK"),
            admin_users=read(env, "ADMIN_USERS"),
            status_poll_seconds=read(env, "STATUS_POLL_SECONDS"),
            board_url=read(env, "BOARD_URL") or space_url(read(env, "SPACE_ID")),
            store=StoreSettings.from_env(env),
            page=PageSettings.from_env(env),
        )


def space_url(space_id: str | None) -> str | None:
    """The address Hugging Face serves a Space's app at: `owner/My_Space` -> https://owner-my-space.hf.space."""
    if not space_id or "/" not in space_id:
        return None
    return "https://" + space_id.replace("/", "-").replace("_", "-").replace(".", "-").lower() + ".hf.space"


if __name__ == "__main__":
    print(readme_table(TRACKS))
