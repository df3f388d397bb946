"""The typed fast path accepts exactly what the generic path accepts, and scores it identically."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import leaderboard.scoring as scoring
from leaderboard.fastpath import _non_blank_lines, fast_parse
from leaderboard.submission import read_bytes

ROOT = Path(__file__).resolve().parents[1]
DEMO = sorted(p for p in (ROOT / "assets" / "demo" / "submissions").rglob("*") if p.is_file())


def both(data: bytes, name: str, monkeypatch):
    fast = scoring.check(data, name)
    with monkeypatch.context() as m:
        m.setattr(scoring, "fast_parse", lambda *a, **k: None)
        generic = scoring.check(data, name)
    return fast, generic


def scores(checked):
    s = scoring.score_checked(checked, "x").summary
    return {k: getattr(s, k) for k in ("n", "missing", "overall", "ci", "breakdowns")}


@pytest.mark.parametrize("path", [p for p in DEMO if ".meta" not in p.name], ids=lambda p: p.name)
def test_demo_files_take_the_fast_path_and_score_the_same(path, monkeypatch):
    data = path.read_bytes()
    assert fast_parse(read_bytes(data, path.name), path.name, None) is not None
    fast, generic = both(data, path.name, monkeypatch)
    assert fast.ok and generic.ok
    assert scores(fast) == scores(generic)


UNIDOC = next(p for p in DEMO if "/unidoc/" in p.as_posix() and p.suffix == ".jsonl").read_bytes()
VDR = next(p for p in DEMO if "/vdr/" in p.as_posix() and p.suffix == ".jsonl").read_bytes()


def _one_per_task(data: bytes) -> bytes:
    """The header and the first record of each futurepedia task (so mutations reach every task's rules)."""
    head, *lines = data.splitlines()
    firsts = {}
    for line in lines:
        firsts.setdefault(json.loads(line)["task"], line)
    return b"\n".join([head, *firsts.values()]) + b"\n"


FUTUREPEDIA = _one_per_task(next(p for p in DEMO if p.name == "polyrag-xl.jsonl").read_bytes())
SAMPLES = {"unidoc": UNIDOC, "vdr": VDR, "futurepedia": FUTUREPEDIA}


def _small(data: bytes, n: int) -> bytes:
    return b"\n".join(data.split(b"\n")[: n + 1]) + b"\n"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(SAMPLES)), st.data())
def test_mutated_files_get_the_same_verdict_on_both_paths(track, data):
    raw = bytearray(_small(SAMPLES[track], 4))
    for _ in range(data.draw(st.integers(1, 3))):
        pos = data.draw(st.integers(0, len(raw) - 1))
        raw[pos : pos + data.draw(st.integers(0, 3))] = data.draw(
            st.sampled_from(
                [b"", b"0", b"-1", b"1e999", b"null", b'"', b"true", b"[]", b"{}", b",", b"1.5", b"\n", b" ", b"9" * 25]
            )
        )
    name = "s.jsonl"
    fast = scoring.check(bytes(raw), name)
    original = scoring.fast_parse
    scoring.fast_parse = lambda *a, **k: None
    try:
        generic = scoring.check(bytes(raw), name)
    finally:
        scoring.fast_parse = original
    assert fast.ok == generic.ok, (fast.errors, generic.errors)
    if fast.ok:
        assert scores(fast) == scores(generic)
    else:
        assert fast.errors == generic.errors  # errors always come from the generic path


@pytest.mark.parametrize("respell", ["exact", "spaced", "another"])
def test_a_records_question_text_gets_the_same_verdict_on_both_paths(respell, monkeypatch):
    """A unidoc record may carry its question: the gold's text, or it with other whitespace, passes on both paths
    (the fast one compares the exact text first, then the respaced one); another question is refused on both."""
    from leaderboard.tracks import TRACKS

    gold = TRACKS["unidoc"].load_gold(None)
    head, *lines = _small(UNIDOC, 4).decode().splitlines()
    records = [json.loads(x) for x in lines]
    for k, r in enumerate(records):
        text = gold.questions[gold.index[r["id"]]].question
        if respell == "spaced":
            text = "  " + text.replace(" ", " \t\n ") + " "
        elif respell == "another" and k == 2:
            text = gold.questions[(gold.index[r["id"]] + 1) % len(gold.questions)].question
        r["question"] = text
    data = "\n".join([head, *map(json.dumps, records)]).encode() + b"\n"
    assert (fast_parse(data, "s.jsonl", None) is not None) == (respell != "another")
    fast, generic = both(data, "s.jsonl", monkeypatch)
    assert fast.ok == generic.ok == (respell != "another")
    if fast.ok:
        assert scores(fast) == scores(generic)
    else:
        assert fast.errors == generic.errors and "question text does not match" in str(generic.errors)


def test_json_envelope_takes_the_fast_path(monkeypatch):
    lines = [json.loads(x) for x in VDR.decode().splitlines() if x.strip()]
    doc = json.dumps({**lines[0], "predictions": lines[1:]}).encode()
    assert fast_parse(doc, "s.json", None) is not None
    fast, generic = both(doc, "s.json", monkeypatch)
    assert fast.ok and scores(fast) == scores(generic)
    assert np.isfinite(fast.parsed.scores).all()


def test_nan_in_an_unchecked_header_field_is_refused_on_both_paths(monkeypatch):
    head, _, body = VDR.partition(b"\n")
    header = json.loads(head)
    header["system"]["extra_note"] = "__NAN__"
    doc = json.dumps(header).replace('"__NAN__"', "NaN").encode() + b"\n" + body
    fast, generic = both(doc, "s.jsonl", monkeypatch)
    assert not fast.ok and not generic.ok and "NaN is not allowed" in fast.errors[0]


def _with_ids(mutate) -> bytes:
    head, *lines = _small(UNIDOC, 4).decode().splitlines()
    records = [json.loads(x) for x in lines]
    for r in records:
        for k, c in enumerate(r["retrieved"]):
            c["id"] = f"{c['doc']}_id_{k}_pg{c['pages'][0]}.txt"
    mutate(records)
    return "\n".join([head, *map(json.dumps, records)]).encode() + b"\n"


def _set(key, value):
    def mutate(records):
        records[1]["retrieved"][2][key] = value

    return mutate


@pytest.mark.parametrize(
    "mutate, verdict",
    [
        (lambda records: None, "fast"),
        (_set("id", None), "fast"),  # null: no id
        (_set("id", "x" * 200), "fast"),
        (_set("id", "x" * 201), "expected at most 200 characters, got 201"),
        (_set("id", 7), "id: expected a string (the candidate's own name), got int"),
        (_set("id", ["a"]), "id: expected a string (the candidate's own name), got list"),
        (lambda records: records[1]["retrieved"].insert(1, dict(records[1]["retrieved"][0])), "repeat"),
    ],
    ids=["ids", "null", "200", "201", "int", "list", "repeated-id"],
)
def test_candidate_ids_get_the_same_verdict_on_both_paths(mutate, verdict, monkeypatch):
    """A candidate's optional `id` (a string of at most 200 characters) is checked alike on both paths; a
    repeated candidate is accepted with a warning (the generic path's, which has the line)."""
    data = _with_ids(mutate)
    assert (fast_parse(data, "s.jsonl", None) is not None) == (verdict == "fast")
    fast, generic = both(data, "s.jsonl", monkeypatch)
    assert fast.ok == generic.ok == (verdict in ("fast", "repeat"))
    if fast.ok:
        assert scores(fast) == scores(generic)
        assert any("repeated candidate" in w for w in fast.warnings) == (verdict == "repeat")
    else:
        assert fast.errors == generic.errors and verdict in str(generic.errors) and "retrieved[2]" in str(generic.errors)


def test_ids_change_the_fingerprint_only_when_given(monkeypatch):
    """Ids are part of what a file says (two chunks of a page are two candidates): a file with ids is not a
    duplicate of the same file without; a file without ids keeps the fingerprint it had."""
    plain = scoring.check(_small(UNIDOC, 4), "s.jsonl")
    named = scoring.check(_with_ids(lambda records: None), "s.jsonl")
    assert plain.ok and named.ok and plain.fingerprint != named.fingerprint


@pytest.mark.parametrize("modality", ["text", "figure", None], ids=["common", "other", "null"])
def test_any_modality_takes_the_fast_path(modality, monkeypatch):
    """The benchmark's modalities decode as shared literals; any other string (or none) still takes the fast
    path, with the generic path's fingerprint and numbers."""
    data = _with_ids(_set("modality", modality))
    assert fast_parse(data, "s.jsonl", None) is not None
    fast, generic = both(data, "s.jsonl", monkeypatch)
    assert fast.ok and generic.ok and fast.fingerprint == generic.fingerprint
    assert scores(fast) == scores(generic)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from([b"", b" ", b"\t", b"\r", b"\x0b", b"\x0c", b"x", b" x", b"x ", b"{}", b"\xc2\xa0"]),
        min_size=1,
        max_size=8,
    )
)
def test_non_blank_lines_are_the_lines_bytes_strip_leaves_text_in(lines):
    """The JSONL line check's shortcut (every line starting with a byte that is not whitespace) counts exactly
    what stripping each line counts, blank, whitespace-only and empty last lines included."""
    body = b"\n".join(lines)
    assert _non_blank_lines(body, body.count(b"\n")) == sum(map(bool, map(bytes.strip, body.split(b"\n"))))
