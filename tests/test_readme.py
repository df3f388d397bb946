"""The README's settings table lists every environment variable the code reads."""

from __future__ import annotations

import re
from pathlib import Path

from leaderboard.tracks import TRACKS

ROOT = Path(__file__).resolve().parents[1]
NAME = r"([A-Z][A-Z0-9_]{2,})"
# Every way the code reads the environment: os.environ.get / [] / setdefault, os.getenv, and the settings
# modules' readers text("X"), env.get("X"), _positive_int(env, "X", ...), _positive_float(env, "X", ...).
READS = [re.compile(p) for p in (
    rf"environ(?:\.get|\.setdefault)?[\[(]\s*[\"']{NAME}[\"']",
    rf"getenv\(\s*[\"']{NAME}[\"']",
    rf"\btext\(\s*[\"']{NAME}[\"']\s*\)",
    rf"\benv\.get\(\s*[\"']{NAME}[\"']",
    rf"_positive_(?:int|float)\(\s*env\s*,\s*[\"']{NAME}[\"']",
)]
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


def documented_variables() -> set[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Settings", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return {name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split("|")[1])}


def test_every_environment_variable_the_code_reads_is_in_the_readme_table():
    read = read_variables()
    # the scan itself works: variables read in each of the ways above are found
    assert {"SUBMISSIONS_REPO", "HUB_TIMEOUT_SECONDS", "JUDGE_CONCURRENCY", "LOG_LEVEL", "GRADIO_SERVER_PORT",
            "PORT", "SPACE_ID", "OPENAI_BASE_URL", "UNIDOC_GOLD", "VDR_GOLD"} <= read
    missing = sorted(read - documented_variables())
    assert not missing, f"add these to the README's settings table: {missing}"
