"""The admission rules (leaderboard/admission.py) over plain entries, and pull-request review's independence from the
board: the Submit tab and review share these rules; the surfaces' wording is pinned by test_duplicates.py,
test_pull_requests.py and test_submit_safety.py."""

from __future__ import annotations

import ast
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from leaderboard.admission import Admission, name_key
from leaderboard.ranking import Entry
from leaderboard.results import Summary

ROOT = Path(__file__).resolve().parents[1]


def entry(i: int, user: str, name: str, fingerprint: str = "", at: str | None = None) -> Entry:
    return Entry(
        id=f"id{i}",
        path=f"submissions/vdr/{user}/{i}.json",
        summary=Summary(fingerprint=fingerprint or None, system={"name": name}, status="scored"),
        user=user,
        submitted_at=at,
        metadata={"system": {"name": name}},
        status="scored",
    )


def test_a_duplicate_is_the_earliest_entry_with_the_fingerprint():
    late = entry(1, "bob", "B", "f" * 8, "2026-01-02T00:00:00+00:00")
    early = entry(2, "carol", "C", "f" * 8, "2026-01-01T00:00:00+00:00")
    undated = entry(3, "dan", "D", "f" * 8)
    rules = Admission("vdr", [late, undated, early, entry(4, "eve", "E", "g" * 8)], 5)
    assert rules.duplicate_of("f" * 8) is early
    assert rules.duplicate_of("h" * 8) is None
    assert rules.duplicate_of(None) is None and rules.duplicate_of("") is None  # no fingerprint: nothing to compare


def test_a_name_is_held_by_another_submitter_compared_normalised_and_case_folded():
    rules = Admission("vdr", [entry(1, "bob", "My  RAG"), entry(2, "alice", "Other")], 5)
    assert name_key("ＭＹ rag ") == name_key("my rag") == "my rag"  # NFKC, whitespace collapsed, case-folded
    assert rules.name_holder("alice", "my rag").id == "id1"
    assert rules.name_holder("bob", "MY RAG") is None  # one's own name again is fine
    assert rules.name_holder("alice", "free") is None
    assert rules.name_holder("alice", None) is None and rules.name_holder("alice", 7) is None and name_key(7) == ""


def test_the_daily_count_is_the_utc_day_of_the_submitter():
    now = datetime(2026, 3, 1, 23, 30, tzinfo=UTC)
    rules = Admission(
        "vdr",
        [
            entry(1, "alice", "a", at="2026-03-01T00:00:01+00:00"),
            entry(2, "alice", "b", at="2026-03-01T23:00:00+00:00"),
            entry(3, "alice", "c", at="2026-02-28T23:59:59+00:00"),  # yesterday
            entry(4, "bob", "d", at="2026-03-01T10:00:00+00:00"),  # someone else
            entry(5, "alice", "e"),  # no stamp: not counted
        ],
        2,
    )
    assert rules.used_today("alice", now) == 2 and rules.used_today("bob", now) == 1
    # a clock in another zone counts the same UTC day
    assert rules.used_today("alice", now.astimezone(timezone(timedelta(hours=5)))) == 2
    assert rules.over_limit(2) and not rules.over_limit(1)


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            found |= {node.module or "", *(f"{node.module or ''}.{a.name}".lstrip(".") for a in node.names)}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def test_pull_request_review_and_the_rules_never_import_the_board():
    """service imports pr_review; pr_review and admission import no service (not even for type checking): no cycle."""
    for module in ("pr_review.py", "admission.py"):
        imported = _imports(ROOT / "leaderboard" / module)
        assert not {m for m in imported if m == "service" or m.endswith(".service") or m.startswith("service.")}, module
    source = (ROOT / "leaderboard" / "pr_review.py").read_text(encoding="utf-8")
    assert "board._" not in source and "rescorer" not in source  # collaborators arrive as arguments
