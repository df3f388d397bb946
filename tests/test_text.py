"""System text: one normal form, refused when blank, invisible, reordering or too long."""

from __future__ import annotations

import json

import pytest

from leaderboard.problems import Problems
from leaderboard.scoring import check, score_checked
from leaderboard.text import normalize_text, text_problem
from leaderboard.tracks import TRACKS


def test_normalize_text_folds_compatibility_forms_and_whitespace():
    assert normalize_text("  Ｂｉｇ\u00a0\tRAG \n v2  ") == "Big RAG v2"
    assert normalize_text("ﬁne") == "fine"
    assert normalize_text("\u3000") == ""


@pytest.mark.parametrize(
    "text, code",
    [("a\x00b", "U+0000"), ("ding\x07", "U+0007"), ("\u200b", "U+200B"), ("abc\u202edcba", "U+202E"), ("x\ufeff", "U+FEFF")],
)
def test_control_and_format_characters_are_named(text, code):
    problem = text_problem(text)
    assert problem is not None and code in problem


def test_plain_text_in_any_script_passes():
    for text in ("BM25 + Llama-3.1-8B", "准将 RAG", "نظام", "Ünïcödé (v2)"):
        assert text_problem(normalize_text(text)) is None


def validate(system: dict, track: str = "unidoc") -> tuple[dict, Problems]:
    problems = Problems()
    return TRACKS[track].validate_system(system, "header", problems), problems


BASE = {"name": "ok", "paradigm": "text"}


def test_validated_system_holds_normalised_values_and_keeps_other_keys():
    system, problems = validate({**BASE, "name": "  My\t\tＲＡＧ ", "organization": "Lab  X", "extra": " kept as is "})
    assert problems.ok
    assert system == {"name": "My RAG", "organization": "Lab X", "paradigm": "text", "extra": " kept as is "}


@pytest.mark.parametrize(
    "name, expected",
    [
        ("\u200b\u200b", "U+200B"),  # looks blank: zero-width only
        ("   ", "only blanks"),
        ("evil\u202eтxt", "U+202E"),
        ("bell\x07", "U+0007"),
        ("x" * 81, "at most 80 characters, got 81"),
    ],
)
def test_bad_names_are_refused_precisely(name, expected):
    _, problems = validate({**BASE, "name": name})
    assert not problems.ok
    assert any(expected in line and "system.name" in line for line in problems.lines()), problems.lines()


@pytest.mark.parametrize(
    "field, limit", [("organization", 120), ("retriever", 120), ("generator", 120), ("description", 2000), ("judge_note", 2000)]
)
def test_text_field_limits_count_normalised_characters(field, limit):
    _, ok = validate({**BASE, field: "y" * limit + "   "})
    assert ok.ok
    _, too_long = validate({**BASE, field: "y" * (limit + 1)})
    assert any(f"at most {limit:,} characters" in line for line in too_long.lines())


def test_vdr_model_and_method_are_limited_and_normalised():
    base = {"name": "n", "storage": {"vidore/x": {"vectors": 1, "vectors_uncompressed": 2}}}
    system, problems = validate({**base, "model": " colpali ", "method": "m" * 121}, "vdr")
    assert system["model"] == "colpali"
    assert any("system.method" in line and "at most 120" in line for line in problems.lines())


def test_link_limits():
    _, long_link = validate({**BASE, "link": "https://x.org/" + "a" * 500})
    assert any("at most 500 characters" in line for line in long_link.lines())
    _, bidi = validate({**BASE, "link": "https://x.org/\u202eabc"})
    assert any("U+202E" in line for line in bidi.lines())
    _, ftp = validate({**BASE, "link": "ftp://x.org"})
    assert any("http:// or https://" in line for line in ftp.lines())


def test_the_scored_summary_shows_the_normalised_name():
    record = {"task": "monolingual", "id": 0, "query_lang": "en", "prediction": "x"}
    gold = TRACKS["futurepedia"].load_gold()
    record["id"] = gold.records[0].id
    data = "\n".join(json.dumps(x) for x in ({"track": "futurepedia", "system": {"name": " Ｔｅａｍ   one "}}, record)).encode()
    checked = check(data, "s.jsonl")
    assert checked.ok, checked.errors
    assert checked.system["name"] == "Team one"
    assert score_checked(checked, "x").summary.system["name"] == "Team one"
