"""Environment variables: what the code reads, what leaderboard/environment.py declares and the README's
settings table are the same set, with the same defaults."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from leaderboard.environment import declared, readme_table
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.tracks import TRACKS

ROOT = Path(__file__).resolve().parents[1]
NAME = r"([A-Z][A-Z0-9_]{2,})"
# Every way the code reads the environment: os.environ.get / [] / setdefault, os.getenv, the settings
# modules' readers read(env, "X") (through the declarations) and text("X") / env.get("X").
READS = [
    re.compile(p)
    for p in (
        rf"environ(?:\.get|\.setdefault)?[\[(]\s*[\"']{NAME}[\"']",
        rf"getenv\(\s*[\"']{NAME}[\"']",
        rf"\btext\(\s*[\"']{NAME}[\"']\s*\)",
        rf"\benv\.get\(\s*[\"']{NAME}[\"']",
        rf"\bread\(\s*env\s*,\s*[\"']{NAME}[\"']",
    )
]
# Names built per track, like f"{t.upper()}_GOLD": one variable per track.
PER_TRACK = re.compile(r"(?:environ\.get|text)\(\s*f[\"']\{[^}]+\}(_[A-Z_]+)[\"']")


def read_variables() -> set[str]:
    found: set[str] = set()
    for path in [ROOT / "app.py", *sorted((ROOT / "leaderboard").rglob("*.py"))]:
        code = path.read_text(encoding="utf-8")
        for pattern in READS:
            found.update(pattern.findall(code))
        for suffix in PER_TRACK.findall(code):
            found.update(f"{t.upper()}{suffix}" for t in TRACKS)
        if ".gold_env" in code:  # each track's gold variable, named by Track.gold_env
            found.update(t.gold_env for t in TRACKS.values())
    return found


def readme_rows() -> dict[str, tuple[str, str]]:
    """The README's settings table as name -> (default, meaning)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Settings", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 3 or cells[0] == "variable" or set(cells[0]) <= {"-"}:
            continue
        names = re.findall(r"`([A-Z][A-Z0-9_]+)`", cells[0])
        assert len(names) == 1, f"one variable per README row, got {cells[0]!r}"
        rows[names[0]] = (cells[1], cells[2])
    return rows


def test_the_scan_finds_reads_of_every_kind():
    read = read_variables()
    assert {
        "SUBMISSIONS_REPO",
        "HUB_TIMEOUT_SECONDS",
        "JUDGE_CONCURRENCY",
        "LOG_LEVEL",
        "GRADIO_SERVER_PORT",
        "PORT",
        "SPACE_ID",
        "OPENAI_BASE_URL",
        "UNIDOC_GOLD",
        "VDR_GOLD",
        "XDG_CACHE_HOME",
    } <= read


def test_every_variable_the_code_reads_is_declared_and_every_declared_one_is_read():
    read = read_variables()
    names = {v.name for v in declared(TRACKS)}
    assert not sorted(read - names), f"declare these in leaderboard/environment.py: {sorted(read - names)}"
    assert not sorted(names - read), f"declared but read nowhere (stale?): {sorted(names - read)}"


def test_every_declared_variable_is_in_the_readme_with_its_default_and_every_row_is_declared():
    rows = readme_rows()
    variables = {v.name: v for v in declared(TRACKS)}
    assert not sorted(set(variables) - set(rows)), f"missing from the README table: {sorted(set(variables) - set(rows))}"
    assert not sorted(set(rows) - set(variables)), f"README rows nothing declares: {sorted(set(rows) - set(variables))}"
    wrong = {name: (rows[name][0], v.shown_default) for name, v in variables.items() if rows[name][0] != v.shown_default}
    assert not wrong, f"README default differs from the declared one (README, declared): {wrong}"


def test_the_readme_table_is_the_generated_one():
    # Meanings and order too: regenerate with `python -m leaderboard.settings` after changing a declaration.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme_table(TRACKS) in readme


def test_declared_defaults_are_the_settings_defaults():
    # Today's values, pinned: the app, the tests and deployments rely on them.
    store = StoreSettings.from_env({})
    assert (store.submissions_repo, store.results_repo, store.hf_token, store.hf_endpoint) == (None,) * 4
    assert (store.submissions_per_day, store.invalid_submissions_per_day) == (5, 20)
    assert (store.refresh_seconds, store.hub_timeout) == (300.0, 30.0)
    assert StoreSettings() == store  # the dataclass defaults are the declared ones too
    scoring = Settings.from_env({})
    assert (scoring.judge, scoring.judge_model, scoring.judge_concurrency) == ("none", "gpt-4o-mini", 4)
    assert (scoring.admin_users, scoring.status_poll_seconds) == ((), 5.0)
    assert (scoring.openai_base_url, scoring.openai_api_key) == (None, None)
    assert Settings.from_env({}, default_judge="lexical").judge == "lexical"
    assert scoring.data_dir == store.data_dir
    assert Settings(gold=scoring.gold) == scoring


def test_values_are_parsed_as_declared():
    env = {
        "SUBMISSIONS_REPO": " org/subs ",
        "HF_ENDPOINT": "http://127.0.0.1:9/",
        "LEADERBOARD_DATA_DIR": "~/lb",
        "SUBMISSIONS_PER_DAY": "7",
        "HUB_TIMEOUT_SECONDS": "2.5",
        "JUDGE": "openai",
        "JUDGE_CONCURRENCY": "9",
        "ADMIN_USERS": " alice, ,bob ",
        "STATUS_POLL_SECONDS": "0.5",
        "JUDGE_MODEL": "  ",
    }
    store = StoreSettings.from_env(env)
    assert (store.submissions_repo, store.hf_endpoint) == ("org/subs", "http://127.0.0.1:9")
    assert store.data_dir == Path("~/lb").expanduser() and store.backend == "hub"
    assert (store.submissions_per_day, store.hub_timeout) == (7, 2.5)
    scoring = Settings.from_env(env)
    assert (scoring.judge, scoring.judge_concurrency, scoring.admin_users) == ("openai", 9, ("alice", "bob"))
    assert (scoring.status_poll_seconds, scoring.judge_model) == (0.5, "gpt-4o-mini")  # blank means unset


@pytest.mark.parametrize(
    ("settings", "name", "value", "message"),
    [
        (Settings, "JUDGE", "gpt", "JUDGE must be none, lexical or openai"),
        (Settings, "JUDGE_CONCURRENCY", "0", "JUDGE_CONCURRENCY must be >= 1"),
        (Settings, "STATUS_POLL_SECONDS", "soon", "STATUS_POLL_SECONDS must be a number"),
        (StoreSettings, "SUBMISSIONS_PER_DAY", "2.5", "SUBMISSIONS_PER_DAY must be an integer"),
        (StoreSettings, "STORE_REFRESH_SECONDS", "-1", "STORE_REFRESH_SECONDS must be > 0"),
    ],
)
def test_a_bad_value_is_refused_naming_the_variable(settings, name, value, message):
    with pytest.raises(ValueError, match=message):
        settings.from_env({name: value})
