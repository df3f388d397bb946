"""Duplicates by content: the fingerprint of parsed predictions ignores form, never content."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

import leaderboard.scoring as scoring
from leaderboard.submission import parse_envelope

ROOT = Path(__file__).resolve().parents[1]
SUBMISSIONS = ROOT / "assets" / "demo" / "submissions"


def demo(track: str) -> tuple[dict, list[dict]]:
    """(header, records) of the track's first demo submission."""
    path = sorted((SUBMISSIONS / track).iterdir())[0]
    env = parse_envelope(path.read_bytes(), path.name)
    return {"track": env.track, "system": env.system}, env.records


def jsonl(header: dict, records: list[dict], end: str = "") -> bytes:
    return ("\n".join(json.dumps(x) for x in [header, *records]) + end).encode()


def fingerprint(data: bytes, name: str, monkeypatch=None, generic: bool = False) -> str:
    if generic:
        with monkeypatch.context() as m:
            m.setattr(scoring, "fast_parse", lambda *a, **k: None)
            checked = scoring.check(data, name)
    else:
        checked = scoring.check(data, name)
    assert checked.ok, checked.errors[:3]
    assert checked.fingerprint == scoring.score_checked(checked, "x").summary.fingerprint
    return checked.fingerprint


def changed(track: str, records: list[dict]) -> list[dict]:
    """The same records with one value changed."""
    out = json.loads(json.dumps(records))
    first = out[0]
    if track == "unidoc":
        first["answer"] = (first.get("answer") or "") + " (edited)"
    elif track == "futurepedia":
        first["prediction"] += " (edited)"
    else:
        first["ranking"][0]["score"] += 0.5
    return out


@pytest.mark.parametrize("track", ["unidoc", "futurepedia", "vdr"])
def test_same_predictions_in_any_form_have_one_fingerprint(track, monkeypatch):
    header, records = demo(track)
    base = fingerprint(jsonl(header, records), "a.jsonl")
    reordered_keys = [dict(reversed(list(r.items()))) for r in records]
    shuffled = records[:]
    random.Random(0).shuffle(shuffled)
    other_header = {**header, "system": {**header["system"], "name": "Someone else's copy", "description": "x"}}
    variants = {
        "gzipped": (gzip.compress(jsonl(header, records)), "a.jsonl.gz"),
        "trailing newline": (jsonl(header, records, "\n\n"), "a.jsonl"),
        "keys reordered": (jsonl(header, reordered_keys), "a.jsonl"),
        "lines shuffled": (jsonl(header, shuffled), "a.jsonl"),
        "other header": (jsonl(other_header, records), "b.jsonl"),
        "json envelope": (json.dumps({**header, "predictions": records}, indent=1).encode(), "a.json"),
        "json gzipped": (gzip.compress(json.dumps({"predictions": shuffled, **header}).encode()), "c.json.gz"),
    }
    for label, (data, name) in variants.items():
        assert fingerprint(data, name) == base, label
    # the generic reader (used when the fast path declines a file) canonicalises the same way
    assert fingerprint(jsonl(header, shuffled), "a.jsonl", monkeypatch, generic=True) == base


@pytest.mark.parametrize("track", ["unidoc", "futurepedia", "vdr"])
def test_one_changed_value_changes_the_fingerprint(track):
    header, records = demo(track)
    assert fingerprint(jsonl(header, changed(track, records)), "a.jsonl") != fingerprint(jsonl(header, records), "a.jsonl")


def test_one_record_fewer_changes_the_fingerprint():
    header, records = demo("vdr")
    assert fingerprint(jsonl(header, records[1:]), "a.jsonl") != fingerprint(jsonl(header, records), "a.jsonl")


def test_fingerprints_differ_across_tracks_and_invalid_files_have_none():
    prints = {fingerprint(jsonl(*demo(t)), "a.jsonl") for t in ("unidoc", "futurepedia", "vdr")}
    assert len(prints) == 3
    header, records = demo("vdr")
    bad = scoring.check(jsonl(header, [*records, {"dataset": "nope"}]), "a.jsonl")
    assert not bad.ok and bad.fingerprint is None
    assert scoring.score_checked(bad, "x").summary.fingerprint is None


@pytest.mark.parametrize(
    "path", sorted(p for track in ("unidoc", "futurepedia", "vdr") for p in (SUBMISSIONS / track).iterdir()), ids=lambda p: p.name
)
def test_duplicates_score_alike_to_the_last_bit(path, monkeypatch):
    """A file and its records shuffled are one submission (one fingerprint), so every stored number is the same,
    bit for bit, on either path: no sum may add predictions in the file's order."""
    from leaderboard.results import encode

    env = parse_envelope(path.read_bytes(), path.name)
    header = {"track": env.track, "system": env.system}
    shuffled = env.records[:]
    random.Random(1).shuffle(shuffled)

    def scored(data: bytes, generic: bool = False) -> bytes:
        with monkeypatch.context() as m:
            if generic:
                m.setattr(scoring, "fast_parse", lambda *a, **k: None)
            summary = scoring.score_bytes(data, "a.jsonl").summary
        assert summary.status == "scored", summary.errors[:3]
        summary.sha256, summary.scored_at = "", ""
        return encode(summary)

    base = scored(jsonl(header, env.records))
    assert scored(jsonl(header, shuffled)) == base
    assert scored(jsonl(header, shuffled), generic=True) == base
