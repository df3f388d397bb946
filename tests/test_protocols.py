"""The protocol machinery of every track (leaderboard/protocols.py) and `score --protocol` in the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leaderboard import cli, protocols
from leaderboard.results import Summary
from leaderboard.tracks.base import Deviation, Metric, Scores

ROOT = Path(__file__).resolve().parents[1]
PARTIAL = ROOT / "assets" / "demo" / "submissions" / "unidoc" / "visrag-minicpm-v-partial.jsonl"


class FakeTrack:
    """Three declared fixes whose effects interact (the second doubles what the first added): stepwise effects
    depend on the order, and still add up."""

    metrics = (Metric("m", "M", ""), Metric("judged", "J", "", needs_judge=True))
    judged_metrics = (metrics[1],)
    deviations = (Deviation("a", "", "", ""), Deviation("b", "", "", ""), Deviation("c", "", "", ""))

    def protocol_work(self, parsed, gold):
        return None

    def score_with(self, parsed, gold, fixes, verdicts=None, *, headline_only=False, work=None):
        m = 0.5 + 0.1 * ("a" in fixes)
        m *= 2 if "b" in fixes else 1
        m -= 0.3 * ("c" in fixes)
        return Scores(1, 0, {"m": m}, {"m": [m, m]}, {"axis": {"x": {"m": m}}}, {}, {"notes": ["n"]} if not fixes else {})


def test_stepwise_effects_add_up_to_board_minus_official():
    track = FakeTrack()
    board = track.score_with(None, None, frozenset("abc"))
    summary = Summary(
        track="t",
        n=1,
        missing=0,
        overall={**board.overall, "judged": 0.7},
        ci={"judged": [0.6, 0.8]},
        breakdowns={"axis": {"x": {"judged": 0.9}}},
    )
    official, devs = protocols.official_report(track, None, None, summary)
    assert official.overall == {"m": 0.5, "judged": 0.7}  # the judged value is the board's (one protocol)
    assert official.ci["judged"] == [0.6, 0.8] and official.breakdowns["axis"]["x"] == {"m": 0.5, "judged": 0.9}
    effects = [d["effect"]["m"] for d in devs]
    assert effects == pytest.approx([0.1, 0.6, -0.3])  # a: 0.5 -> 0.6; b: -> 1.2; c: -> 0.9
    assert sum(effects) == pytest.approx(board.overall["m"] - official.overall["m"])
    assert all("judged" not in d["effect"] for d in devs)
    out = protocols.cli_output(track, None, None, summary, "official")
    assert out["protocol"] == "official" and out["overall"]["m"] == 0.5 and out["notes"] == ["n"]
    with pytest.raises(ValueError, match="unknown protocol"):
        protocols.cli_output(track, None, None, summary, "paper")


def test_a_missing_value_has_no_effect_rather_than_a_guess():
    track = FakeTrack()
    devs = protocols.deviation_effects(track, None, None, {"m": None}, {"m": 0.9})
    assert devs[0]["effect"] == {"m": None} and devs[-1]["effect"]["m"] == pytest.approx(0.9 - 1.2)


def _run(capsys, *args) -> dict:
    cli.main(["score", str(PARTIAL), "--json", *args])
    return json.loads(capsys.readouterr().out)


def test_score_json_gains_the_official_values_and_the_deviations(capsys):
    board = _run(capsys)
    assert "protocol" not in board
    names = [d["name"] for d in board["deviations"]]
    assert names == ["doc-ids-as-published", "repeats-count-once", "precision-over-10", "unanswered-count"]
    assert all(set(d) == {"name", "script", "board", "effect"} for d in board["deviations"])
    for key in ("precision@10", "recall@10"):
        total = sum(d["effect"][key] for d in board["deviations"])
        assert total == pytest.approx(board["overall"][key] - board["official"][key])
    # the partial run skips 18 of 96 questions: the script leaves them out, so its numbers are higher
    assert board["official"]["recall@10"] > board["overall"]["recall@10"]
    assert "18 without a record" in board["notes"][0]
    official = _run(capsys, "--protocol", "official")
    assert official["protocol"] == "official" and official["overall"] == board["official"]
    assert official["n"] == 96 - 18 and official["missing"] == 18
    assert set(official["breakdowns"]) == set(board["breakdowns"])


def test_score_text_output_names_the_protocol(capsys):
    cli.main(["score", str(PARTIAL)])
    out = capsys.readouterr()
    assert "official script:" in out.out and "unanswered-count" in out.out and "18 without a record" in out.err
    cli.main(["score", str(PARTIAL), "--protocol", "official"])
    assert "(as the official script scores it)" in capsys.readouterr().out
