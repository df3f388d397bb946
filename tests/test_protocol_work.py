"""The protocol steps of one file share their work (`Track.protocol_work`) and the intermediate steps are scored
headline-only: neither may change a number. Every stored official value and deviation effect must equal, to
the last bit, what scoring each step on its own, in full, gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from leaderboard import protocols
from leaderboard.scoring import check
from leaderboard.tracks import TRACKS

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "assets" / "demo" / "submissions"


def _checked(track: str, path: Path):
    checked = check(path.read_bytes(), path.name)
    assert checked.ok, checked.errors[:3]
    return checked


def _with_refusals(parsed: dict) -> dict:
    """A futurepedia file with every fifth prediction of each task a refusal of the scripts' phrase list."""
    out = {}
    for task, preds in parsed.items():
        units = {}
        for i, (unit, payload) in enumerate(preds.items()):
            if i % 5 == 0:
                payload = ("insufficient information", payload[1]) if task == "selection" else "insufficient information"
            units[unit] = payload
        out[task] = units
    return out


def _cases():
    for track in ("unidoc", "futurepedia", "vdr"):
        for path in sorted((DEMO / track).iterdir()):
            yield pytest.param(track, path, False, id=f"{track}-{path.name}")
    yield pytest.param("futurepedia", DEMO / "futurepedia" / "polyrag-xl.jsonl", True, id="futurepedia-refusals")


def _naive_steps(track, parsed, gold) -> list:
    """Each prefix of the deviations scored on its own, in full, with nothing shared."""
    names = [d.name for d in track.deviations]
    return [track.score_with(parsed, gold, frozenset(names[:i])) for i in range(len(names) + 1)]


@pytest.mark.parametrize(("track_name", "path", "refusals"), list(_cases()))
def test_shared_work_and_headline_only_steps_change_no_number(track_name, path, refusals):
    track = TRACKS[track_name]
    checked = _checked(track_name, path)
    parsed = _with_refusals(checked.parsed) if refusals else checked.parsed
    naive = _naive_steps(track, parsed, checked.gold)
    board = track.score(parsed, checked.gold)
    assert board.overall == naive[-1].overall
    official, effects = protocols.official_report(track, parsed, checked.gold, board)
    assert (official.overall, official.ci, official.breakdowns) == (naive[0].overall, naive[0].ci, naive[0].breakdowns)
    assert (official.n, official.missing) == (naive[0].n, naive[0].missing)
    assert official.extra.get("notes") == naive[0].extra.get("notes")
    for i, effect in enumerate(effects):
        before, after = naive[i].overall, naive[i + 1].overall
        expected = {
            k: after[k] - before[k] if after.get(k) is not None and before.get(k) is not None else None for k in effect["effect"]
        }
        assert effect["effect"] == expected, effect["name"]


@pytest.mark.parametrize("track_name", ["unidoc", "futurepedia", "vdr"])
def test_steps_in_any_order_share_work_correctly(track_name):
    """The shared work is keyed by what each fix changes: asked for the steps backwards, it gives the same."""
    track = TRACKS[track_name]
    path = sorted((DEMO / track_name).iterdir())[0]
    checked = _checked(track_name, path)
    names = [d.name for d in track.deviations]
    naive = _naive_steps(track, checked.parsed, checked.gold)
    work = track.protocol_work(checked.parsed, checked.gold)
    for i in reversed(range(len(names) + 1)):
        fixes = frozenset(names[:i])
        got = track.score_with(checked.parsed, checked.gold, fixes, headline_only=True, work=work)
        assert got.overall == naive[i].overall, sorted(fixes)
        full = track.score_with(checked.parsed, checked.gold, fixes, work=work)
        assert (full.overall, full.ci, full.breakdowns) == (naive[i].overall, naive[i].ci, naive[i].breakdowns)
