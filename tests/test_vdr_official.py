"""vdr's official protocol (SCORING.md, "Official scripts"): the mean nDCG@5 over the datasets a run covers,
each dataset as pytrec_eval scores it (MTEB's evaluator); the board's one fix, missing-datasets-score-0,
gives `score` exactly, and its effect is board minus official."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from leaderboard.scoring import check
from leaderboard.submission import parse_envelope, read_file
from leaderboard.tracks import TRACKS

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is a test dependency")

DEMO = Path(__file__).resolve().parents[1] / "assets" / "demo" / "submissions" / "vdr"
VDR = TRACKS["vdr"]
FIX = "missing-datasets-score-0"


def _qrels() -> dict[str, dict[str, dict[str, int]]]:
    out: dict = {}
    for path in sorted(VDR.demo_gold.glob("*.qrels")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                q, _, d, g = line.split()
                out.setdefault(path.stem.replace("__", "/"), {}).setdefault(q, {})[d] = int(g)
    return out


def _official(records: list[dict]) -> tuple[float, dict[str, float]]:
    """Mean over the covered datasets of pytrec_eval's mean nDCG@5 over the dataset's judged queries."""
    per_dataset = {}
    for ds, qrels in _qrels().items():
        judged = {q: docs for q, docs in qrels.items() if any(g > 0 for g in docs.values())}
        run = {r["query_id"]: {e["doc"]: float(e["score"]) for e in r["ranking"]} for r in records if r["dataset"] == ds}
        if not run:
            continue
        values = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.5"}).evaluate({q: d for q, d in run.items() if q in judged})
        per_dataset[ds] = sum(v["ndcg_cut_5"] for v in values.values()) / len(judged)  # an unranked query: 0
    return sum(per_dataset.values()) / len(per_dataset), per_dataset


def _scored(data: bytes, name: str):
    checked = check(data, name)
    assert checked.ok, checked.errors[:5]
    return checked.parsed, checked.gold


def _runs():
    """Every demo run, and each full one with its first dataset's rankings left out (a partial run)."""
    out = []
    for path in sorted(DEMO.iterdir()):
        data = read_file(path)
        out.append((path.name, path.name, data))
        env = parse_envelope(data, path.name)
        datasets = sorted({r["dataset"] for r in env.records})
        if len(datasets) == len(_qrels()):
            kept = [r for r in env.records if r["dataset"] != datasets[0]]
            lines = [json.dumps({"track": "vdr", "system": env.system})] + [json.dumps(r) for r in kept]
            out.append((f"{path.name} without {datasets[0]}", "partial.jsonl", "\n".join(lines).encode()))
    return out


RUNS = _runs()


@pytest.mark.parametrize("run", RUNS, ids=[r[0] for r in RUNS])
def test_official_is_the_mean_over_covered_datasets(run):
    _, filename, data = run
    parsed, gold = _scored(data, filename)
    records = parse_envelope(data, filename).records
    expected, per_dataset = _official(records)
    official = VDR.score_with(parsed, gold, frozenset())
    board = VDR.score(parsed, gold)
    assert official.overall["ndcg@5"] == pytest.approx(expected, abs=1e-12)
    assert {d: c["ndcg@5"] for d, c in official.breakdowns["dataset"].items()} == pytest.approx(per_dataset, abs=1e-12)
    assert official.breakdowns == board.breakdowns  # per-dataset and family values are the same in both
    assert official.overall["coverage"] == board.overall["coverage"]
    assert official.overall.get("compression") == board.overall.get("compression")
    covered = sum(len([q for q, g in _qrels()[d].items() if any(v > 0 for v in g.values())]) for d in per_dataset)
    assert official.n == covered  # the queries of the covered datasets; missing: those of them without a ranking
    assert official.n - official.missing == board.n - board.missing
    effect = board.overall["ndcg@5"] - official.overall["ndcg@5"]
    if board.overall["coverage"] < 1:
        assert effect < 0  # the board counts the left-out datasets as 0
        low, high = official.ci["ndcg@5"]
        assert low <= official.overall["ndcg@5"] <= high
    else:
        assert effect == pytest.approx(0, abs=1e-15) and official.ci == board.ci


def test_with_the_fix_it_is_the_board_exactly():
    for _, filename, data in RUNS:
        parsed, gold = _scored(data, filename)
        board, again = VDR.score(parsed, gold), VDR.score_with(parsed, gold, frozenset([FIX]))
        assert (again.n, again.missing, again.overall, again.ci, again.breakdowns) == (
            board.n,
            board.missing,
            board.overall,
            board.ci,
            board.breakdowns,
        )
        assert all(np.array_equal(again.units[k], board.units[k], equal_nan=True) for k in board.units)


def test_unknown_fix_is_refused():
    _, filename, data = RUNS[0]
    parsed, gold = _scored(data, filename)
    with pytest.raises(ValueError, match="unknown fix repeats-count-once"):
        VDR.score_with(parsed, gold, frozenset(["repeats-count-once"]))


def test_the_fix_is_declared():
    assert [d.name for d in VDR.deviations] == [FIX]
    assert all(d.script and d.board and d.why for d in VDR.deviations)
