"""Reported rows (published figures beside rescored systems): loaded and checked against the track declarations,
shown with their exact figures, never ranked, never with a CI, never in a paired test.

The expected figures are read from the shared files themselves (assets/reported/, copied from the shared folder),
never typed here: a figure shown that differs from its file fails.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from leaderboard import reported
from leaderboard.reported import ChartSummary
from leaderboard.tracks import TRACKS
from leaderboard.tracks.vdr import FAMILIES
from leaderboard.ui import figures, views

from appserver import running_app

ROOT = Path(__file__).resolve().parents[1]
FILES = ROOT / "assets" / "reported"
SHARED = ROOT.parent / "shared" / "reported"
UNIDOC, VDR = TRACKS["unidoc"], TRACKS["vdr"]


def load(name: str) -> dict:
    return json.loads((FILES / name).read_text(encoding="utf-8"))


def rows_by_key(track, gold=None) -> dict:
    gold = gold if gold is not None else track.load_gold()
    result = reported.for_track(track, gold)
    assert result.problem == ""
    return {r.key: r for r in result.rows}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with running_app(tmp_path_factory.mktemp("reported-board")) as running:
        yield running


# ---- the files ------------------------------------------------------------------------------------------------
def test_copied_files_are_the_shared_ones_with_their_provenance():
    if not SHARED.exists():
        pytest.skip(f"{SHARED} not found: the shared folder is not on this machine")
    for track in TRACKS.values():
        for name in track.reported_files:
            assert (FILES / name).read_bytes() == (SHARED / name).read_bytes(), name
    assert load("vidore-mteb-results.json")["source"]["snapshot_commit"]  # provenance kept
    assert load("vidore-token-pooling.json")["licence_notes"]


# ---- unidoc: the paper's systems ----------------------------------------------------------------------------
def test_unidoc_rows_equal_the_paper_figures():
    paper = load("unidoc-bench-paper.json")
    rows = rows_by_key(UNIDOC)
    assert set(rows) == {s["key"] for s in paper["systems"]}
    for system in paper["systems"]:
        row = rows[system["key"]]
        for key, value in system["overall"].items():
            if key.endswith("_top20"):  # no board equivalent: detail view only
                assert key not in row.overall and value in [v for _, v, _ in row.detail_overall]
            else:
                assert row.overall[key] == value
        for axis, cells in system["breakdowns"].items():
            for category, fig in cells.items():
                for key, value in fig.items():
                    if key.endswith(("_top20", "_table5")):
                        assert key not in row.breakdowns[axis][category]
                        assert value in row.detail_breakdowns[axis][category].values()
                    else:
                        assert row.breakdowns[axis][category][key] == value
        if "cost_usd_per_query" in system:
            assert (system["cost_usd_per_query"], "USD") in [(v, u) for _, v, u in row.detail_overall]
            assert (system["latency_s_per_query"], "s") in [(v, u) for _, v, u in row.detail_overall]
        assert "1,600" in row.source.measured_on and "judge" in row.source.measured_on
        assert "faithfulness" not in row.overall  # the paper has it per type only: never invented overall


# ---- vdr: MTEB, the ColPali paper, the token-pooling curve -----------------------------------------------------
def test_vdr_rows_show_the_gold_datasets_and_an_honest_headline():
    mteb = load("vidore-mteb-results.json")
    gold = VDR.load_gold()
    datasets = sorted(gold.qrels)
    rows = rows_by_key(VDR, gold)
    for model, per_dataset in mteb["models"].items():
        row = rows[model]
        shown = row.breakdowns.get("dataset", {})
        assert set(shown) == {d for d in datasets if per_dataset.get(d) is not None}  # only the gold's datasets
        for d, cell in shown.items():
            assert cell["ndcg@5"] == per_dataset[d]
        if all(per_dataset.get(d) is not None for d in datasets):
            assert row.overall["ndcg@5"] == pytest.approx(np.mean([per_dataset[d] for d in datasets]), abs=1e-12)
            assert "mean of the reported per-dataset values" in row.computed["ndcg@5"]
        else:  # a source without every gold dataset has no headline
            assert "ndcg@5" not in row.overall
        for d in per_dataset:
            if d not in datasets and per_dataset[d] is not None:
                assert per_dataset[d] in row.detail_breakdowns["dataset"][d].values()
    # the demo gold's V2 family is complete: a family value only where gold and source have all its datasets
    v2 = FAMILIES["ViDoRe-V2"]
    colqwen = rows["vidore/colqwen2.5-v0.2"]
    assert colqwen.breakdowns["family"]["ViDoRe-V2"]["ndcg@5"] == pytest.approx(
        np.mean([mteb["models"]["vidore/colqwen2.5-v0.2"][d] for d in v2])
    )
    assert "ViDoRe-V1" not in colqwen.breakdowns["family"]  # the demo gold has 4 of its 10 datasets
    # English-query values in the table, every language in the detail view
    langs = mteb["vidore_v2_per_query_language"]["values"]["vidore/colqwen2.5-v0.2"]["vidore/esg_reports_v2"]
    assert colqwen.breakdowns["dataset"]["vidore/esg_reports_v2"]["ndcg@5"] == langs["english"]
    assert set(langs.values()) <= set(colqwen.detail_breakdowns["dataset"]["vidore/esg_reports_v2"].values())


def test_vdr_headline_follows_the_gold():
    """A gold the source fully covers gets the mean; one with a dataset the source lacks gets none."""

    class Gold:
        sha256 = "test-gold"

        def __init__(self, names):
            self.qrels = {n: {} for n in names}

    mteb = load("vidore-mteb-results.json")["models"]
    v1 = FAMILIES["ViDoRe-V1"]
    rows = {r.key: r for r in VDR.reported_rows(reported.read_files(VDR), Gold(v1))}
    bm25 = rows["baseline/BM25 (Unstructured + OCR) [ColPali paper Table 2]"]
    assert bm25.overall["ndcg@5"] == pytest.approx(np.mean([mteb[bm25.key][d] for d in v1]))
    assert bm25.breakdowns["family"]["ViDoRe-V1"]["ndcg@5"] == pytest.approx(bm25.overall["ndcg@5"])
    text_only = rows["baseline/BM25 (Unstructured text-only) [ColPali paper Table 2]"]  # "-" cells: no headline
    assert "ndcg@5" not in text_only.overall and "family" not in text_only.breakdowns
    rows = {r.key: r for r in VDR.reported_rows(reported.read_files(VDR), Gold([*v1, "vidore/not_in_any_source"]))}
    assert all("ndcg@5" not in r.overall for r in rows.values())


def test_token_pooling_curve_is_its_own_series_with_the_files_figures():
    pooling = load("vidore-token-pooling.json")["rows"]
    rows = rows_by_key(VDR)
    curve = [rows[f"colpali-token-pooling-{r['pool_factor']}"] for r in pooling]
    for row, src in zip(curve, pooling):
        assert row.overall["compression"] == src["compression"]
        assert row.chart_overall == {"ndcg@5": src["ndcg@5_mean_of_6_datasets_computed_here"], "compression": src["compression"]}
        assert "ndcg@5" not in row.overall  # 6 ViDoRe V1 datasets: not the board's gold, no table headline
        assert "mean of the reported per-dataset values" in row.chart_note
        assert len({r.series for r in curve}) == 1


# ---- validation at load ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "edit, expected",
    [
        (lambda d: d["systems"][0]["overall"].update({"recall@10": 1.7}), "outside [0, 1]"),
        (lambda d: d["systems"][0]["overall"].update({"bleu": 0.5}), "unknown figure 'bleu'"),
        (lambda d: d["systems"][0]["breakdowns"]["domain"].update({"mars": {"recall@10": 0.5}}), "unknown domain"),
        (lambda d: d["systems"][1].update({"key": d["systems"][0]["key"]}), "same id"),
        (lambda d: d["systems"][0]["overall"].update({"recall@10": "0.8"}), "expected a number"),
    ],
)
def test_a_bad_figure_is_refused_at_load_and_the_board_runs_on(edit, expected):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = load("unidoc-bench-paper.json")
        edit(data)
        (folder / "unidoc-bench-paper.json").write_text(json.dumps(data), encoding="utf-8")
        result = reported.for_track(UNIDOC, UNIDOC.load_gold(), folder)
    assert result.rows == [] and expected in result.problem


def test_inconsistent_computed_means_are_refused():
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in VDR.reported_files:
            shutil.copy(FILES / name, folder / name)
        data = load("vidore-token-pooling.json")
        data["rows"][2]["ndcg@5_mean_of_6_datasets_computed_here"] += 0.01
        (folder / "vidore-token-pooling.json").write_text(json.dumps(data), encoding="utf-8")
        result = reported.for_track(VDR, VDR.load_gold(), folder)
    assert result.rows == [] and "not the mean of its per-dataset figures" in result.problem


# ---- the board: tables, ranks, CIs, charts, detail, compare -------------------------------------------------
def test_table_cells_equal_the_files_and_never_touch_ranks(app):
    board, paper = app.board, {s["key"]: s for s in load("unidoc-bench-paper.json")["systems"]}
    alone = views.filtered_table(board, "unidoc", None, None, "", {}, False)
    both = views.filtered_table(board, "unidoc", None, None, "", {}, True)
    marked = both[both["reported"]]
    assert len(marked) == len(paper) and len(both) == len(alone) + len(paper)
    # reported rows: no rank, no CI-aware rank, no CI, and the file's figures exactly
    assert marked["rank"].isna().all() and marked["rank_ub"].isna().all()
    for m in UNIDOC.metrics:
        assert marked[f"{m.key}:low"].isna().all() and marked[f"{m.key}:high"].isna().all()
    for _, row in marked.iterrows():
        src = paper[row["id"].rsplit(":", 1)[1]]
        for m in UNIDOC.metrics:
            expected = src["overall"].get(m.key)
            assert (row[m.key] == expected) if expected is not None else pd.isna(row[m.key])
        assert src["name"] in row["name"] and "1,600" in row["source"]
    # the rescored rows keep their ranks and "Rank (CI)" exactly as without reported rows
    rescored = both[~both["reported"]].set_index("id")
    alone = alone.set_index("id")
    assert rescored.loc[alone.index, "rank"].tolist() == alone["rank"].tolist()
    assert rescored.loc[alone.index, "rank_ub"].tolist() == alone["rank_ub"].tolist()
    # placed among them by value: the recall column is sorted over both kinds
    recall = both["recall@10"].dropna().tolist()
    assert recall == sorted(recall, reverse=True) and both["reported"].iloc[: len(recall)].any()


def test_table_value_shows_badge_source_and_style(app):
    disp, raw = views.table_frames(app.board, "unidoc", show_reported=True)
    value = views.table_value(disp, raw, UNIDOC)
    headers = value["headers"]
    shown, data, styling = value["metadata"]["display_value"], value["data"], value["metadata"]["styling"]
    for i, is_reported in enumerate(raw["reported"]):
        rank = shown[i][headers.index("Rank")]
        if is_reported:
            assert rank.startswith('<span class="reported-badge" title="Reported, not rescored: Peng et al.')
            assert styling[i][0] == views.REPORTED_STYLE
            assert shown[i][headers.index("Rank (CI)")] == "" and "<sub>" not in shown[i][headers.index("Recall@10")]
            assert data[i][headers.index("Recall@10")] == raw["recall@10"].iloc[i] or pd.isna(raw["recall@10"].iloc[i])
        else:
            assert rank.isdigit() and styling[i][0] in ("", *views.BAND_STYLES)  # rescored: its tie band's shade
    assert views.datatypes(disp, UNIDOC)[headers.index("System")] == "str"  # names stay plain text


def test_vdr_headline_cell_says_it_is_a_mean_and_slices_show_dataset_figures(app):
    mteb = load("vidore-mteb-results.json")["models"]
    disp, raw = views.table_frames(app.board, "vdr", show_reported=True)
    i = raw.index[raw["id"] == "reported:vdr:vidore-colqwen2.5-v0.2"][0]
    assert "mean of the reported per-dataset values" in disp["nDCG@5"][i] and "<sub>" not in disp["nDCG@5"][i]
    sliced = views.filtered_table(app.board, "vdr", None, "Dataset: vidore/docvqa_test_subsampled", "", {}, True)
    for _, row in sliced[sliced["reported"]].iterrows():
        key = reported.find(row["id"], app.board.gold)[1].key
        source = mteb.get(key) or {}
        if key in mteb:
            assert row["ndcg@5"] == source["vidore/docvqa_test_subsampled"]


def test_toggle_off_removes_every_reported_row_and_filters_apply_to_them(app):
    off = views.filtered_table(app.board, "vdr", None, None, "", {}, False)
    assert not off["reported"].any() and len(off) == len([e for e in app.board.entries("vdr") if not e.duplicate_of])
    on = views.filtered_table(app.board, "vdr", None, None, "", {"method": ["pool"]}, True)
    assert set(on["name"]) == {f"ColPali + token pooling, pool factor {k}" for k in range(2, 8)}  # filters apply
    assert "pool" in views.filter_choices(app.board, VDR)["method"]  # a reported row's value is a filter choice


def test_charts_draw_reported_rows_apart_with_the_files_figures(app):
    board = app.board
    raw = views.filtered_table(board, "unidoc", None, None, "", {}, True)
    systems = views.chart_systems(board, "unidoc", raw)
    paper = {s["name"]: s for s in load("unidoc-bench-paper.json")["systems"]}
    fig = figures.by_axis(UNIDOC, systems, "domain", "recall@10")
    bars = [t for t in fig.data if t.name.endswith(figures.REPORTED_MARK)]
    assert len(bars) == 4  # the four systems with retrieval figures per domain; VRAG and Vertex have none
    for bar in bars:
        src = paper[bar.name[: -len(figures.REPORTED_MARK)]]
        assert list(bar.y) == [src["breakdowns"]["domain"][d]["recall@10"] for d in bar.x]
        assert bar.marker.pattern.shape == "/" and "reported, not rescored" in bar.hovertemplate
    # vdr: the pooling curve is its own series; the Pareto front is made of rescored points only
    raw = views.filtered_table(board, "vdr", None, None, "", {}, True)
    systems = views.chart_systems(board, "vdr", raw)
    fig = figures.tradeoff(VDR, systems, "compression", "ndcg@5", "model")
    pooling = load("vidore-token-pooling.json")["rows"]
    curve = next(t for t in fig.data if "token pooling" in t.name)
    assert list(curve.x) == [r["compression"] for r in pooling]
    assert list(curve.y) == [r["ndcg@5_mean_of_6_datasets_computed_here"] for r in pooling]
    rescored = {
        (s.overall["compression"], s.overall["ndcg@5"])
        for _, s in systems
        if not isinstance(s, ChartSummary) and "compression" in s.overall
    }
    front = next(t for t in fig.data if t.name == "Pareto front")
    assert set(zip(front.x, front.y)) <= rescored


def test_detail_view_shows_source_and_every_figure(app):
    paper = load("unidoc-bench-paper.json")
    system = paper["systems"][0]
    html, breakdown, units = views.detail(app.board, f"reported:unidoc:{system['key']}")
    assert units.empty
    for text in ("arXiv:2510.03663", "Licence", "figures cited from a paper", "1,600 QA pairs", "not rescored"):
        assert text in html
    assert f"{system['cost_usd_per_query']!r} USD" in html and f"{system['latency_s_per_query']!r} s" in html
    assert f"{system['overall']['completeness_top20']!r}" in html
    cells = breakdown.set_index("Value")
    for category, fig in system["breakdowns"]["question_type"].items():
        assert cells.loc[category, "Faithfulness"] == repr(fig["faithfulness"])
        assert cells.loc[category, "Completeness (Table 5, top-k not stated)"] == repr(fig["completeness_table5"])
    html, *_ = views.detail(app.board, "reported:vdr:vidore-colqwen2.5-v0.2")
    assert "CC0 1.0" in html and "mean of the reported per-dataset values" in html
    html, breakdown, _ = views.detail(app.board, "reported:unidoc:no-such-row")
    assert html == "<p>Pick a system.</p>" and breakdown.empty


def test_compare_with_a_reported_row_is_differences_only(app, monkeypatch):
    board = app.board
    monkeypatch.setattr(board, "compare", lambda *a, **k: pytest.fail("a reported row never enters a paired test"))
    e = next(e for e in board.entries("unidoc") if e.status == "scored" and e.name.startswith("MM fusion"))
    paper = {s["key"]: s for s in load("unidoc-bench-paper.json")["systems"]}["paper-text"]
    text, metrics, fig, top = views.compare_view(board, e.id, "reported:unidoc:paper-text")
    assert views.NO_TEST in text and top.empty
    assert list(metrics.columns) == ["Metric", "A", "B", "A − B"]  # no CI, no p, no significance
    for _, row in metrics.iterrows():
        key = next(m.key for m in UNIDOC.metrics if m.label == row["Metric"])
        assert float(row["B"]) == pytest.approx(paper["overall"][key], abs=5e-4)
        assert float(row["A − B"]) == pytest.approx(e.summary.overall[key] - paper["overall"][key], abs=5e-4)
    assert "Faithfulness" not in metrics["Metric"].tolist()  # only the metrics both have
    bars = {t.name: t for t in fig.data}
    domain = bars["domain"]
    expected = [e.summary.breakdowns["domain"][d]["recall@10"] - paper["breakdowns"]["domain"][d]["recall@10"] for d in domain.x]
    assert list(domain.y) == pytest.approx(expected)
    # across tracks, or an unknown reported id: said plainly
    assert views.compare_view(board, e.id, "reported:vdr:vidore-colqwen2.5-v0.2")[0] == "Pick two systems of the same track."
    assert views.compare_view(board, e.id, "reported:unidoc:nope")[0] == "Unknown system: pick again."
    # a rescored and a reported system of one track, asked for on another track
    assert (
        views.compare_view(board, e.id, "reported:unidoc:paper-text", "vdr")[0]
        == "Pick two systems of the VDR compression track."
    )
    assert views.compare_view(board, e.id, "reported:unidoc:paper-text", "unidoc")[0].startswith("<b>A</b>")


def test_choices_and_about_cite_every_source(app):
    ids = [i for _, i in views.system_choices(app.board, "unidoc", reported_too=True)]
    assert "reported:unidoc:paper-vrag" in ids
    assert not any(reported.is_reported(i) for _, i in views.system_choices(app.board, "unidoc"))
    from leaderboard.ui.about import about_markdown

    text = about_markdown()
    for needle in ("arXiv:2510.03663", "CC0 1.0", "MIT License", "arXiv 2407.01449", "1,600 questions"):
        assert needle in text


# ---- the public API, through gradio_client ------------------------------------------------------------------
@pytest.fixture(scope="module")
def client(app):
    from gradio_client import Client

    return Client(app.url, verbose=False, download_files=str(app.data_dir / "downloads"))


def _frame(value) -> pd.DataFrame:
    value = value.get("value", value) if isinstance(value, dict) and "__type__" in value else value
    return pd.DataFrame(value["metadata"]["display_value"], columns=value["headers"]), pd.DataFrame(
        value["data"], columns=value["headers"]
    )


def test_api_table_default_view_has_the_reported_rows(client):
    paper = {s["name"]: s for s in load("unidoc-bench-paper.json")["systems"]}
    columns = ["Paradigm", "Recall@10", "Completeness", "Rank (CI)", "Status"]
    shown, data = _frame(client.predict("Recall@10", "All", "", [], [], [], columns, api_name="/table_unidoc"))
    marked = shown["Status"] == "reported"
    assert marked.sum() == len(paper)
    for i in shown.index[marked]:
        src = paper[shown["System"][i]]
        assert 'class="reported-badge"' in shown["Rank"][i] and "licence: figures cited from a paper" in shown["Rank"][i]
        assert shown["Rank (CI)"][i] == "" and pd.isna(data["Rank"][i])
        assert shown["System"][i] == src["name"]  # no badge of another kind (a pull request's "pending review")
        expected = src["overall"].get("recall@10")
        # the sort data is the file's figure, exactly (null where the paper has none)
        assert data["Recall@10"][i] == expected if expected is not None else pd.isna(data["Recall@10"][i])
        assert shown["Recall@10"][i] == ("–" if expected is None else f"{expected:.3f}")
    off, _ = _frame(client.predict("Recall@10", "All", "", [], [], [], columns, False, api_name="/table_unidoc"))
    assert not (off["Status"] == "reported").any() and len(off) == len(shown) - len(paper)


def test_api_detail_compare_and_csv_with_reported_rows(client, app):
    html, breakdown, category, units = client.predict("reported:unidoc:paper-image", api_name="/detail")
    system = next(s for s in load("unidoc-bench-paper.json")["systems"] if s["key"] == "paper-image")
    assert "arXiv:2510.03663" in html and f"{system['cost_usd_per_query']!r} USD" in html
    cells = pd.DataFrame(breakdown["data"], columns=breakdown["headers"]).set_index("Value")
    for domain, fig in system["breakdowns"]["domain"].items():
        assert cells.loc[domain, "Recall@10"] == repr(fig["recall@10"])
        assert cells.loc[domain, "Completeness at top-20 (Table 4)"] == repr(fig["completeness_top20"])

    e = next(e for e in app.board.entries("unidoc") if e.status == "scored" and e.name.startswith("BM25"))
    summary, metrics, plot, top, unit = client.predict("unidoc", "reported:unidoc:paper-image", e.id, api_name="/compare")
    assert "no significance test: reported figures" in summary and "(reported)" in summary
    m = pd.DataFrame(metrics["data"], columns=metrics["headers"])
    assert list(m.columns) == ["Metric", "A", "B", "A − B"]
    assert m.set_index("Metric").loc["Recall@10", "A"] == f"{system['overall']['recall@10']:.3f}"

    path = client.predict("Recall@10", "All", "", [], [], [], [], True, api_name="/export_csv_unidoc")
    csv = pd.read_csv(Path(path))
    marked = csv[csv["reported"]]
    assert len(marked) == 6 and marked["source"].str.contains("arXiv:2510.03663").all()
    assert marked["rank"].isna().all() and marked["recall@10:low"].isna().all()
    row = marked.set_index("id").loc["reported:unidoc:paper-image"]
    assert row["recall@10"] == system["overall"]["recall@10"] and row["precision@10"] == system["overall"]["precision@10"]
    assert not csv.loc[~csv["reported"], "rank"].isna().all()  # rescored rows keep their rank
    path = client.predict("nDCG@5", "All", "", [], [], [], False, api_name="/export_csv_vdr")
    assert not pd.read_csv(Path(path))["reported"].any()


def test_who_leads_sets_the_best_rescored_beside_the_best_reported(app):
    paper = load("unidoc-bench-paper.json")["systems"]
    raw = views.filtered_table(app.board, "unidoc", None, None, "", {}, True)
    text = views.leaders_html(app.board, UNIDOC, raw, "recall@10")
    assert "Best per domain (Recall@10)" in text and "Best per answer type (Recall@10)" in text
    for domain in ("finance", "legal"):
        best = max(
            (s for s in paper if "recall@10" in s["breakdowns"]["domain"][domain]),
            key=lambda s: s["breakdowns"]["domain"][domain]["recall@10"],
        )
        rescored = max(
            (e for e in app.board.entries("unidoc") if e.status == "scored"),
            key=lambda e: e.summary.breakdowns["domain"][domain]["recall@10"],
        )
        row = text.split(f"<tr><th>{domain}</th>", 1)[1].split("</tr>", 1)[0]
        assert f"{best['breakdowns']['domain'][domain]['recall@10']:.3f}</td>" in row.split("</td>")[1] + "</td>"
        assert f"{rescored.summary.breakdowns['domain'][domain]['recall@10']:.3f}" in row.split("</td>")[0]
    assert (
        views.leaders_html(app.board, UNIDOC, views.filtered_table(app.board, "unidoc", None, None, "", {}, False), "recall@10")
        == ""
    )
