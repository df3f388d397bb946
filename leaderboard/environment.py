"""Every environment variable the leaderboard reads or sets, declared once: name, default, meaning, parser.

The settings classes (`leaderboard.settings.Settings` for scoring, judging and the page,
`leaderboard.store.settings.StoreSettings` for the store) read their variables through
`read`, so a default lives here and nowhere else. The few variables the app and the
server read themselves (LOG_LEVEL, GRADIO_SERVER_*, SPACE_ID, ...) are declared here
too. The README's settings table is generated from these declarations:

    python -m leaderboard.settings     # prints the table; tests/test_readme.py checks the README holds it

Standard library only and nothing of the package (the bottom layer, docs/ARCHITECTURE.md): the gold
variables, one per registered track, are listed by `declared(TRACKS)`, the registry passed in.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
JUDGES = ("none", "lexical", "openai")
JUDGE_MODES = ("live", "batch")


def default_data_dir() -> Path:
    """`<repo>/.cache`, or a folder in the user's cache when the repository folder is read-only (an installed copy)."""
    if os.access(REPO_ROOT, os.W_OK):
        return REPO_ROOT / ".cache"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "open-rag-leaderboard"


# ---- parsers: (variable name, stripped non-empty value) -> value; a bad value raises ValueError naming the variable


def as_text(name: str, raw: str) -> str:
    return raw


def as_positive_int(name: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from exc
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return value


def as_positive_float(name: str, raw: str) -> float:
    try:
        value = float(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number, got {raw!r}") from exc
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


def as_path(name: str, raw: str) -> Path:
    return Path(raw).expanduser()


def as_url(name: str, raw: str) -> str | None:
    return raw.rstrip("/") or None


def as_names(name: str, raw: str) -> tuple[str, ...]:
    """A comma-separated list of names, blanks dropped."""
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def as_switch(name: str, raw: str) -> bool:
    if raw not in ("0", "1"):
        raise ValueError(f"{name} must be 0 or 1, got {raw!r}")
    return raw == "1"


def as_prices(name: str, raw: str) -> tuple[float, float]:
    """`in,out`: two non-negative numbers (dollars per million prompt tokens, per million completion tokens)."""
    parts = [part.strip() for part in raw.split(",")]
    try:
        prices = tuple(float(part) for part in parts)
    except ValueError:
        prices = ()
    if len(prices) != 2 or not all(0 <= p < float("inf") for p in prices):
        raise ValueError(
            f"{name} must be two numbers `in,out` (dollars per million prompt tokens, per million completion tokens), "
            f"e.g. 0.15,0.60; got {raw!r}"
        )
    return prices


def as_judge(name: str, raw: str) -> str:
    if raw not in JUDGES:
        raise ValueError(f"{name} must be none, lexical or openai, got {raw!r}")
    return raw


def as_judge_mode(name: str, raw: str) -> str:
    if raw not in JUDGE_MODES:
        raise ValueError(f"{name} must be live or batch, got {raw!r}")
    return raw


@dataclass(frozen=True)
class Variable:
    name: str
    meaning: str
    #: The value when the variable is unset or blank (a callable: computed then); None means "unset".
    default: Any = None
    #: The default as the README shows it, when the value alone does not say it (context-dependent, computed, or
    #: chosen by another library).
    shown: str | None = None
    parse: Callable[[str, str], Any] = as_text

    def read(self, env: Mapping[str, str]) -> Any:
        raw = (env.get(self.name) or "").strip()
        if raw:
            return self.parse(self.name, raw)
        return self.default() if callable(self.default) else self.default

    @property
    def shown_default(self) -> str:
        if self.shown is not None:
            return self.shown
        if self.default is None:
            return "unset"
        if isinstance(self.default, float):
            return f"{self.default:g}"
        if isinstance(self.default, str):
            return f"`{self.default}`"
        return str(self.default)


VARIABLES: tuple[Variable, ...] = (
    # ---- the store: where submissions and cached results live
    Variable(
        "SUBMISSIONS_REPO",
        "Hugging Face dataset repo of submissions (`submissions/<track>/<user>/...`, "
        "`flags.json`), e.g. `org/rag-leaderboard-submissions`",
        shown="unset: the local folder",
    ),
    Variable(
        "RESULTS_REPO",
        "dataset repo the board publishes its results to; a fresh Space takes back only the LLM judge's "
        "verdicts from it (so it never pays to judge again) and rescores every submission",
    ),
    Variable("HF_TOKEN", "token for the Hub (needs write access to both repos to submit and push results); never printed"),
    Variable("HF_ENDPOINT", "Hub endpoint (tests point it at a local fake Hub)", shown="`https://huggingface.co`", parse=as_url),
    Variable(
        "LEADERBOARD_DATA_DIR",
        "results cache, judge cache, downloads, pull state, local submissions",
        default=default_data_dir,
        shown="`<repo>/.cache`, or `$XDG_CACHE_HOME/open-rag-leaderboard` when the repository folder is read-only",
        parse=as_path,
    ),
    Variable("SUBMISSIONS_PER_DAY", "stored submissions per user, per track, per UTC day", default=5, parse=as_positive_int),
    Variable(
        "INVALID_SUBMISSIONS_PER_DAY",
        "rejected uploads (invalid, duplicate, name taken) per user, per track, "
        "per UTC day; past it the Submit tab refuses before validating",
        default=20,
        parse=as_positive_int,
    ),
    Variable(
        "STORE_REFRESH_SECONDS", "how often the app pulls new submissions (no restart)", default=300.0, parse=as_positive_float
    ),
    Variable(
        "HUB_TIMEOUT_SECONDS",
        "the longest any Hub request waits for an answer; a request that got none is "
        "not resent (the next pull tries again), and the app's start never waits for the Hub: it serves the "
        "last pull from disk, or says it is loading",
        default=30.0,
        parse=as_positive_float,
    ),
    # ---- pull-request submissions (see leaderboard/store/hub_prs.py)
    Variable(
        "AUTO_MERGE",
        "`1`: the board merges a pull request to `SUBMISSIONS_REPO` once every file in it is valid and scored; "
        "`0`: a maintainer merges (valid ones are listed as pending review meanwhile)",
        default=False,
        shown="`0`",
        parse=as_switch,
    ),
    Variable(
        "PR_CLOSE_AFTER_DAYS",
        "days after which the board closes a pull request whose latest commit is still invalid",
        default=14.0,
        parse=as_positive_float,
    ),
    Variable(
        "BOARD_URL",
        "the board's public address, for the permalinks in pull-request comments",
        shown="`https://<owner>-<name>.hf.space` from `SPACE_ID`, else none (comments then carry the system id only)",
        parse=as_url,
    ),
    # ---- scoring and judging (the gold variables, one per track, come from `declared()`)
    Variable(
        "JUDGE",
        "`none`, `lexical` (offline approximation) or `openai` (any OpenAI-compatible server)",
        shown="`lexical` in the app, `none` in the CLI",
        parse=as_judge,
    ),
    Variable("JUDGE_MODEL", "model name for the `openai` judge", default="gpt-4o-mini"),
    Variable("JUDGE_CONCURRENCY", "LLM judge calls in flight at once", default=4, parse=as_positive_int),
    Variable(
        "JUDGE_MODE",
        "`live` (chat calls, `JUDGE_CONCURRENCY` at once) or `batch` (the `openai` judge's calls go through the server's "
        "Files + Batches API: half the price, outside the live rate limits, done within 24 h; see docs/JUDGE.md)",
        default="live",
        parse=as_judge_mode,
    ),
    Variable(
        "JUDGE_BATCH_POLL_SECONDS",
        "in batch mode, how often a running batch is checked",
        default=30.0,
        parse=as_positive_float,
    ),
    Variable(
        "JUDGE_BATCH_MAX_ITEMS",
        "in batch mode, answers the app judges in one batch run: it groups the waiting submissions up to this many "
        "(at least one submission), the others go in the next run",
        default=50_000,
        parse=as_positive_int,
    ),
    Variable(
        "JUDGE_BATCH_DIR",
        "in batch mode, a folder instead of the server's Batch API: each batch is written there as "
        "`<id>.input.jsonl` and read back from `<id>.output.jsonl`, e.g. made by `vllm run-batch` (docs/JUDGE.md)",
        shown="unset: the server's Batch API",
        parse=as_path,
    ),
    Variable(
        "OPENAI_BASE_URL",
        "base URL of the OpenAI-compatible server the `openai` judge calls",
        shown="the openai client's default",
    ),
    Variable("OPENAI_API_KEY", "API key for that server", shown="the openai client's default"),
    Variable(
        "JUDGE_PRICE_PER_MTOK",
        "the `openai` judge model's price as `in,out`: dollars per million prompt tokens and per million completion "
        "tokens (e.g. `0.15,0.60`); `score --judge openai --dry-run` then prints the estimated cost beside the tokens "
        "(half of it with `--batch`, the Batch API's price)",
        shown="unset: tokens only",
        parse=as_prices,
    ),
    # ---- the page and the server
    Variable(
        "STATUS_POLL_SECONDS",
        "how often an open page checks for new data and a changed status line (an "
        "outage banner appears and clears without a reload)",
        default=5.0,
        parse=as_positive_float,
    ),
    Variable(
        "TABLE_PAGE_ROWS",
        'systems a table shows at first and adds per "show more" (search and filters pick among every row first; '
        "the CSV export has every row)",
        default=100,
        parse=as_positive_int,
    ),
    Variable(
        "ADMIN_USERS",
        "comma-separated Hugging Face user names allowed to force a refresh on a Space (locally anyone may)",
        default=(),
        shown="unset",
        parse=as_names,
    ),
    Variable(
        "UPLOAD_CLIENT_MIB",
        "MiB one client (a logged-in user, else an IP address) may hold in Gradio's upload folder at once: uploaded, "
        "not yet submitted or deleted; past it an upload is refused (429)",
        default=256,
        parse=as_positive_int,
    ),
    Variable(
        "UPLOAD_CLIENT_FILES",
        "files one client may hold in the upload folder at once (429 past it)",
        default=4,
        parse=as_positive_int,
    ),
    Variable(
        "UPLOAD_CLIENT_MIB_PER_HOUR", "MiB one client may upload per hour (429 past it)", default=1024, parse=as_positive_int
    ),
    Variable(
        "UPLOAD_CLIENT_FILES_PER_HOUR", "uploads one client may make per hour (429 past it)", default=30, parse=as_positive_int
    ),
    Variable(
        "UPLOAD_FOLDER_MIB",
        "MiB every client together may hold in the upload folder (413 past it); where submitting needs a login, uploads "
        "without one may fill half of it",
        default=2048,
        parse=as_positive_int,
    ),
    Variable(
        "UPLOAD_FOLDER_FILES",
        "files every client together may hold in the upload folder (413 past it)",
        default=400,
        parse=as_positive_int,
    ),
    Variable(
        "UPLOAD_CLAIM_SECONDS",
        "an upload that no submit has taken within this many seconds is deleted (and so are uploads cut short)",
        default=300.0,
        parse=as_positive_float,
    ),
    Variable("SPACE_ID", "set by Hugging Face on a Space: submitting needs a Hugging Face login, refresh is for `ADMIN_USERS`"),
    Variable(
        "LOCAL_LOGIN",
        "`1`: off a Space, use Gradio's mocked Hugging Face login (the account of the machine's "
        "`HF_TOKEN`, asked of `HF_ENDPOINT` when the page is built) instead of a typed-in name",
    ),
    Variable("LOG_LEVEL", "log level of `python app.py` (`DEBUG`, `INFO`, `WARNING`, ...)", default="INFO"),
    Variable("GRADIO_SERVER_NAME", "address the app listens on (a Space sets `0.0.0.0`)", default="127.0.0.1"),
    Variable("GRADIO_SERVER_PORT", "port the app listens on", shown="`PORT`, else 7860"),
    Variable("PORT", "port the app listens on when `GRADIO_SERVER_PORT` is unset", default=7860),
    Variable(
        "XDG_CACHE_HOME", "where `LEADERBOARD_DATA_DIR` defaults to when the repository folder is read-only", shown="`~/.cache`"
    ),
    Variable(
        "HF_HUB_OFFLINE",
        "huggingface_hub's offline switch; the app sets it when there is nothing to fetch",
        shown="`1` when neither `SUBMISSIONS_REPO` nor a `*_GOLD` variable is set",
    ),
    Variable(
        "HF_HUB_DISABLE_TELEMETRY",
        "huggingface_hub's telemetry switch; the app and the CLI set it unless already set",
        shown="`1` (telemetry off)",
    ),
    Variable(
        "GRADIO_ANALYTICS_ENABLED",
        "Gradio's analytics switch; the app sets it unless already set",
        shown="`False` (analytics off)",
    ),
)

_BY_NAME = {v.name: v for v in VARIABLES}


def gold_variable(track_name: str, env_name: str | None = None, meaning: str | None = None) -> Variable:
    """The variable naming a track's gold (the track's `gold_env`, by default `<TRACK>_GOLD`)."""
    return Variable(
        env_name or f"{track_name.upper()}_GOLD",
        meaning or f"local path or Hugging Face dataset id of the {track_name} track's gold",
        shown="bundled demo gold",
    )


def declared(tracks: Mapping[str, Any] | None = None) -> tuple[Variable, ...]:
    """Every variable: the fixed ones and one gold variable per track of `tracks` (the registry, passed in: the
    tracks import the package's lower layers, this module imports none of it)."""
    gold = tuple(gold_variable(name, track.gold_env, getattr(track, "gold_help", None)) for name, track in (tracks or {}).items())
    at = next(i for i, v in enumerate(VARIABLES) if v.name == "JUDGE")  # the scoring variables start there
    return VARIABLES[:at] + gold + VARIABLES[at:]


def read(env: Mapping[str, str], name: str) -> Any:
    """The value of a declared variable in `env`, parsed, or its declared default."""
    return _BY_NAME[name].read(env)


def default(name: str) -> Any:
    """A declared variable's default value (what `read` gives when it is unset)."""
    return _BY_NAME[name].read({})


def readme_table(tracks: Mapping[str, Any]) -> str:
    """The README's settings table, one row per declared variable (`python -m leaderboard.settings` prints it)."""
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    rows += [f"| `{v.name}` | {v.shown_default} | {v.meaning} |" for v in declared(tracks)]
    return "\n".join(rows)
