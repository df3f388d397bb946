"""The rescoring pipeline: independent files, invalid records, and the content-hash cache."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

import leaderboard.scoring as scoring
from leaderboard.scoring import Rescorer
from leaderboard.tracks import TRACKS

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "assets" / "demo" / "submissions"


def demo_files() -> list[Path]:
    return sorted(p for p in DEMO.rglob("*") if p.is_file())


def test_demo_submissions_all_score(tmp_path):
    files = demo_files()
    assert len(files) >= 15
    results = Rescorer(tmp_path).score_many(files)
    bad = [(r.path, r.summary.errors[:3]) for r in results if r.summary.status != "scored"]
    assert not bad
    assert {r.summary.track for r in results} == set(TRACKS)


def test_one_bad_file_never_stops_the_others(tmp_path):
    files = demo_files()[:3]
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"track": "unidoc", "system": {"name": "x", "paradigm": "text"}}\n{"id": ')
    missing = tmp_path / "gone.jsonl"
    results = Rescorer(tmp_path / "cache").score_many([files[0], broken, missing, files[1], files[2]])
    assert [r.summary.status for r in results] == ["scored", "invalid", "invalid", "scored", "scored"]
    assert "invalid JSON" in results[1].summary.errors[0]
    assert "cannot read" in results[2].summary.errors[0]


def test_unchanged_submissions_are_never_rescored(tmp_path, monkeypatch):
    files = demo_files()
    first = Rescorer(tmp_path).score_many(files)
    calls = []
    monkeypatch.setattr(scoring, "score_checked", lambda *a, **k: calls.append(a) or None)
    second = Rescorer(tmp_path).score_many(files)  # a fresh process reads the same cache folder
    assert calls == [] and all(r.cached for r in second)
    assert [r.summary for r in first] == [r.summary for r in second]


def test_cache_key_follows_metric_version_and_gold(tmp_path, monkeypatch):
    f = next(p for p in demo_files() if "/unidoc/" in p.as_posix())
    assert not Rescorer(tmp_path).score_file(f).cached
    assert Rescorer(tmp_path).score_file(f).cached
    monkeypatch.setattr(scoring, "METRIC_VERSION", "999")
    assert not Rescorer(tmp_path).score_file(f).cached
    monkeypatch.undo()
    r = Rescorer(tmp_path)
    r._gold_shas = {**r.gold_shas, "unidoc": "0" * 64}  # other gold: other key
    assert not r.score_file(f).cached


def test_per_unit_scores_round_trip_through_the_cache(tmp_path):
    f = next(p for p in demo_files() if "/vdr/" in p.as_posix())
    scored = Rescorer(tmp_path).score_file(f)
    units = Rescorer(tmp_path).cache.load_units(scored.key)
    gold = TRACKS["vdr"].load_gold()
    assert set(units) == {"ndcg@5"} and len(units["ndcg@5"]) == len(TRACKS["vdr"].units(gold, "ndcg@5").ids)
    # the per-dataset means of the units that were answered reproduce the breakdown
    # wherever the submission answered every query of the dataset
    idx = TRACKS["vdr"].units(gold, "ndcg@5")
    for ds, cell in scored.summary.breakdowns["dataset"].items():
        vals = np.array([u for u, s in zip(units["ndcg@5"], idx.strata) if s == ds])
        if not np.isnan(vals).any():
            assert cell["ndcg@5"] == np.mean(vals)


def test_cli_score_json_has_the_contract_keys():
    f = next(p for p in demo_files() if "/futurepedia/" in p.as_posix())
    out = subprocess.run(
        [sys.executable, "-m", "leaderboard", "score", str(f), "--json"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    result = json.loads(out)
    assert {"track", "system", "n", "missing", "overall", "ci", "breakdowns"} <= set(result)
    assert result["track"] == "futurepedia"
    for key, (low, high) in result["ci"].items():
        assert low <= result["overall"][key] <= high


def test_a_scorer_bug_is_reported_by_log_reference_only(tmp_path, monkeypatch, caplog):
    """An internal error names no exception class or server path on the submission, and the log has the traceback."""
    path = demo_files()[0]
    secret = str(tmp_path / "server-only-path")

    def explode(*args, **kwargs):
        raise KeyError(secret)

    for t in TRACKS.values():
        monkeypatch.setattr(type(t), "score", explode)
    result = Rescorer(tmp_path / "cache").score_file(path)
    assert result.summary.status == "invalid"
    [message] = result.summary.errors
    ref = result.summary.sha256[:12]
    assert message == f"file: internal error while scoring (log ref {ref})"
    assert "KeyError" not in message and secret not in message
    assert any(ref in r.getMessage() and r.exc_info for r in caplog.records)
