"""The vdr headline counts every dataset of the gold (a missing one scores 0), with coverage beside it;
and a board scored against real gold shows no demo rows on that track, and says which gold it uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from leaderboard.gold import demo_tracks, gold_label, uses_demo_gold
from leaderboard.scoring import score_bytes
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import LocalStore, StoreSettings
from leaderboard.submission import parse_envelope, read_file
from leaderboard.tracks import TRACKS
from leaderboard.ui import columns as cols
from leaderboard.ui.layout import status_html
from leaderboard.ui.views import filtered_table

from conftest import UNIDOC_GOLD, needs_unidoc

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is a test dependency")

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "assets" / "demo" / "submissions"
VDR = TRACKS["vdr"]


def demo_qrels() -> dict[str, dict[str, dict[str, int]]]:
    """The demo gold read here, not by the track: dataset -> query -> doc -> grade."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for path in sorted(VDR.demo_gold.glob("*.qrels")):
        qrels = out.setdefault(path.stem.replace("__", "/"), {})
        for line in path.read_text(encoding="utf-8").split("\n"):
            if line.strip():
                q, _, d, g = line.split()
                qrels.setdefault(q, {})[d] = int(g)
    return out


def scored(path: Path):
    return score_bytes(path.read_bytes(), path.name).summary


def partial_runs() -> list[Path]:
    gold = demo_qrels()
    runs = []
    for path in sorted((DEMO / "vdr").iterdir()):
        records = parse_envelope(read_file(path), path.name).records
        if {r["dataset"] for r in records} != set(gold):
            runs.append(path)
    return runs


def test_the_demo_has_partial_runs_on_each_family():
    names = {p.name for p in partial_runs()}
    assert {"colsmol-256m-merge-50.jsonl", "colpali-v1-3-prune-then-merge-50.jsonl"} <= names


@pytest.mark.parametrize("path", partial_runs(), ids=lambda p: p.name)
def test_partial_headline_is_the_sum_over_submitted_datasets_over_the_datasets_of_the_gold(path):
    gold = demo_qrels()
    records = parse_envelope(read_file(path), path.name).records
    submitted = sorted({r["dataset"] for r in records})
    per_dataset, judged_total, answered = {}, 0, 0
    for ds, qrels in gold.items():
        judged = {q: docs for q, docs in qrels.items() if any(g > 0 for g in docs.values())}
        judged_total += len(judged)
        if ds not in submitted:
            continue
        run = {r["query_id"]: {e["doc"]: float(e["score"]) for e in r["ranking"]} for r in records if r["dataset"] == ds}
        per_query = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.5"}).evaluate({q: d for q, d in run.items() if q in judged})
        answered += len(per_query)
        # a judged query without a ranking scores 0
        per_dataset[ds] = sum(v["ndcg_cut_5"] for v in per_query.values()) / len(judged)
    summary = scored(path)
    assert summary.overall["ndcg@5"] == pytest.approx(sum(per_dataset.values()) / len(gold), abs=1e-12)
    assert summary.overall["coverage"] == len(submitted) / len(gold) < 1
    # the dataset breakdown lists the submitted datasets only, each as pytrec_eval scores it
    assert set(summary.breakdowns["dataset"]) == set(submitted)
    for ds, value in per_dataset.items():
        assert summary.breakdowns["dataset"][ds]["ndcg@5"] == pytest.approx(value, abs=1e-12)
    # every judged query of the gold is a unit; those of the datasets left out are missing
    assert (summary.n, summary.missing) == (judged_total, judged_total - answered)


def test_a_run_on_the_easy_datasets_no_longer_outranks_complete_runs():
    partial = scored(DEMO / "vdr" / "colpali-v1-3-prune-then-merge-50.jsonl")
    complete = scored(DEMO / "vdr" / "colpali-v1-3-merge-75.jsonl")
    assert complete.overall["coverage"] == 1.0
    own = [cell["ndcg@5"] for cell in partial.breakdowns["dataset"].values()]
    # averaged over its own datasets (the old headline) it would lead; over the gold it does not
    assert sum(own) / len(own) > complete.overall["ndcg@5"] > partial.overall["ndcg@5"]


@pytest.fixture(scope="module")
def demo_board(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("board")
    return Board(Settings(data_dir=tmp), StoreSettings(data_dir=tmp)).start(background=False)


def test_coverage_is_a_column_and_slices_list_only_the_runs_that_cover_them(demo_board):
    assert "coverage" in {c.key for c in cols.columns(VDR)}
    every = filtered_table(demo_board, "vdr")
    coverage = dict(zip(every["name"], every["coverage"]))
    partial = {n for n, c in coverage.items() if c < 1}
    assert len(partial) == 2 and len(coverage) == len(list((DEMO / "vdr").iterdir()))
    v1_only = "colpali-v1.3 (prune-then-merge 50%)"
    assert coverage[v1_only] == 0.5
    for choice in ("Dataset: vidore/esg_reports_v2", "Dataset family: ViDoRe-V2"):
        names = set(filtered_table(demo_board, "vdr", slice_choice=choice)["name"])
        assert v1_only not in names and names == set(coverage) - {v1_only}, choice
    names = set(filtered_table(demo_board, "vdr", slice_choice="Dataset: vidore/arxivqa_test_subsampled")["name"])
    assert v1_only in names and "colsmol-256M (merge 50%)" not in names


def test_the_demo_board_says_every_track_uses_the_demo_gold(demo_board):
    assert demo_board.status()["gold"] == dict.fromkeys(TRACKS, "demo")
    assert "gold: " + " · ".join(f"{t}: demo" for t in TRACKS) in status_html(demo_board)


@needs_unidoc
def test_real_unidoc_gold_keeps_the_demo_rows_off_that_track_only(tmp_path):
    board = Board(Settings(data_dir=tmp_path, gold={"unidoc": str(UNIDOC_GOLD)}), StoreSettings(data_dir=tmp_path))
    board.start(background=False)
    assert board.entries("unidoc") == []  # the demo systems were made for the demo questions
    for name in TRACKS:
        if name != "unidoc":
            on_board = {e.path.rsplit("/", 1)[-1] for e in board.entries(name)}
            assert on_board == {p.name for p in (DEMO / name).iterdir()}, name
    gold = board.status()["gold"]
    # the form read, once read (the demo submissions of the other tracks loaded every gold)
    assert gold["unidoc"] == "local " + "/".join(UNIDOC_GOLD.resolve().parts[-2:]) + " (JSON question files, 1,742 questions)"
    assert {v for k, v in gold.items() if k != "unidoc"} == {"demo"}
    assert str(UNIDOC_GOLD.resolve().parent.parent) not in status_html(board)  # no server layout on the page


def test_which_settings_count_as_the_demo_gold(tmp_path):
    unidoc = TRACKS["unidoc"]
    assert uses_demo_gold(unidoc, None) and uses_demo_gold(unidoc, " ") and uses_demo_gold(unidoc, str(unidoc.demo_gold))
    assert not uses_demo_gold(unidoc, str(tmp_path)) and not uses_demo_gold(unidoc, "Salesforce/UniDoc-Bench")
    assert demo_tracks({"unidoc": str(tmp_path)}) == frozenset(TRACKS) - {"unidoc"}
    # labels never touch the network: a Hub setting is described from the setting
    assert gold_label(VDR, "vidore-v1-v2") == "suite vidore-v1-v2.json (14 Hub datasets)"
    assert gold_label(VDR, "vidore/esg_reports_v2@0542c0d03da0ec1c8cbc517c8d78e7e95c75d3d3") == "vidore/esg_reports_v2@0542c0d"
    assert gold_label(VDR, "not an id") == "not an id (invalid)"
    assert gold_label(unidoc, "Salesforce/UniDoc-Bench") == "Salesforce/UniDoc-Bench"


def test_local_store_lists_demo_submissions_of_the_given_tracks_only(tmp_path):
    only_vdr = LocalStore(tmp_path / "a", demo_dir=DEMO, demo_tracks={"vdr"}).pull()
    assert {f.track for f in only_vdr.files} == {"vdr"}
    everything = LocalStore(tmp_path / "b", demo_dir=DEMO).pull()
    assert {f.track for f in everything.files} == set(TRACKS)
    assert sorted(f.path for f in only_vdr.files) == sorted(f.path for f in everything.files if f.track == "vdr")
