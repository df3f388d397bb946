"""The first screen's view data without a server: the leaders strip (leader, ties, reported beside), the tie bands of
the ranking, and the VDR trade-off chart's curves per (model, method)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from leaderboard import ranking
from leaderboard.compare import compare_metric
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.tracks import TRACKS
from leaderboard.ui import html, views
from leaderboard.ui.views.leaders import OVERLAP


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    d = Path(tmp_path_factory.mktemp("leaders"))
    return Board(Settings(data_dir=d, judge="none"), StoreSettings(data_dir=d)).start(background=False)


def overlaps(a, b) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


# ---- tie bands -------------------------------------------------------------------------------------------------
def test_tie_bands_run_to_the_last_interval_overlapping_the_top():
    # a wide interval far down still overlaps the top's: the band reaches it; the next band starts after it
    first, last = ranking.tie_bands([0.85, 0.83, 0.78, 0.70, 0.40], [0.95, 0.93, 0.82, 0.86, 0.50])
    assert first.tolist() == [1, 1, 1, 1, 5] and last.tolist() == [4, 4, 4, 4, 5]
    first, last = ranking.tie_bands([0.85, 0.80, 0.60], [0.95, 0.84, 0.70])
    assert first.tolist() == [1, 2, 3] and last.tolist() == [1, 2, 3]  # no overlap: every system alone
    # without intervals only equal values tie; lower-is-better mirrors the bounds
    assert ranking.tie_bands([3, 3, 1], [3, 3, 1])[1].tolist() == [2, 2, 3]
    first, last = ranking.tie_bands([0.1, 0.15, 0.3], [0.2, 0.25, 0.4], higher_is_better=False)
    assert first.tolist() == [1, 1, 3] and last.tolist() == [2, 2, 3]


def test_every_band_of_the_demo_tables_holds_the_systems_overlapping_its_top(board):
    for name, track in TRACKS.items():
        table = views.ranked(board, name)
        scored = table[table["rank"].notna()]
        key = track.rank_by
        bounds = list(zip(scored[f"{key}:low"].fillna(scored[key]), scored[f"{key}:high"].fillna(scored[key])))
        tops = scored.drop_duplicates("band_first", keep="first").index
        assert len(tops) > 1 and (scored["band_first"] <= scored["rank"]).all(), name
        for top in tops:
            i = scored.index.get_loc(top)
            band = scored[scored["band_first"] == scored.loc[top, "band_first"]]
            outside = [j for j in range(len(scored)) if scored.index[j] not in band.index]
            assert not any(overlaps(bounds[i], bounds[j]) for j in outside if j > i), (name, top)
            assert (band["band_last"] == int(band["band_last"].iloc[0])).all()
        assert table.loc[table["rank"].isna(), "band_first"].isna().all()  # unranked rows have no band


def test_the_table_shows_and_shades_the_bands(board):
    disp, raw = views.table_frames(board, "unidoc")
    cells = disp["Tie band"].tolist()
    assert cells[:5] == ["1–2", "1–2", "3–5", "3–5", "3–5"]
    alone = views.table_frames(board, "futurepedia")[0]["Tie band"].tolist()
    assert alone[0] == "" and alone[1] == "2–3"  # a system alone in its band shows none
    value = views.table_value(disp, raw, TRACKS["unidoc"])
    styles = [row[0] for row in value["metadata"]["styling"]]
    assert styles[0] == styles[1] == views.BAND_STYLES[0] and styles[2] == views.BAND_STYLES[1]  # the next band
    assert views.band_shades([{"band_first": 3, "band_last": 3}]) == [""]
    # the CSV export's columns: every one it had, the band's added
    assert {"rank", "rank_ub", "band_first", "band_last"} <= set(views.view_rows(board, "unidoc", views.TableView()))


# ---- the leaders strip -----------------------------------------------------------------------------------------
def test_the_strip_names_the_leader_its_ties_and_the_best_reported_figure(board):
    track = TRACKS["unidoc"]
    strip = views.leaders(board, "unidoc", views.TableView(show_reported=True))
    assert [lead.key for lead in strip.leaders] == ["recall@10", "completeness"]  # ranking metric, then headline
    lead = strip.leaders[0]
    table = views.ranked(board, "unidoc")
    top = table.iloc[0]
    assert lead.ranks and lead.id == top["id"] and lead.name == top["name"] and lead.value == top["recall@10"]
    assert (lead.low, lead.high) == (top["recall@10:low"], top["recall@10:high"])
    scored = table[table["rank"].notna()]
    expected = sum(overlaps((lo, hi), (lead.low, lead.high)) for lo, hi in zip(scored["recall@10:low"], scored["recall@10:high"]))
    assert lead.tied == expected - 1 >= 1 and lead.criterion == OVERLAP
    assert lead.systems == len(scored) and lead.tied_names[0] == scored.iloc[1]["name"]
    reported = views.reported_rows(board, track)
    best = max((r for r in reported if "recall@10" in r.overall), key=lambda r: r.overall["recall@10"])
    assert lead.reported.name == best.name and lead.reported.value == best.overall["recall@10"]
    text = html.leaders_strip(strip)
    assert "tie = 95% CIs overlap" in text and "reported" in text and f"{best.overall['recall@10']:.3f}" in text
    # the paired test against the runner-up, as the Compare tab runs it
    runner = board.entry(scored.iloc[1]["id"])
    test = compare_metric(
        track, board.gold("unidoc"), "recall@10", board.units(board.entry(lead.id))["recall@10"], board.units(runner)["recall@10"]
    )
    assert lead.runner_up == runner.name and lead.paired_p == test.p_value and lead.paired_significant == test.significant
    assert "vs #2: paired p" in text
    assert strip.with_reported and not views.leaders(board, "futurepedia", views.TableView(show_reported=True)).with_reported
    # reported rows hidden: none beside it either
    assert views.leaders(board, "unidoc", views.TableView(show_reported=False)).leaders[0].reported is None


def test_the_strip_follows_the_ranking_metric_filters_slice_and_scores(board):
    picked = views.leaders(board, "unidoc", views.TableView(rank_by="precision@10"))
    assert [lead.key for lead in picked.leaders] == ["precision@10", "recall@10", "completeness"]
    best = views.ranked(board, "unidoc", "precision@10").iloc[0]
    assert picked.leaders[0].id == best["id"]
    text = views.leaders(board, "unidoc", views.TableView(filters={"paradigm": ["text"]})).leaders[0]
    texts = views.filtered_table(board, "unidoc", filters={"paradigm": ["text"]})
    assert text.id == texts.iloc[0]["id"] and text.systems == len(texts)
    on_slice = views.leaders(board, "unidoc", views.TableView(scores_on="Domain: finance"))
    assert on_slice.scope == "scores on Domain: finance" and on_slice.leaders[0].low is None
    assert on_slice.leaders[0].paired_p is None  # no per-unit arrays of a slice's own: no paired test
    assert "no CI on a slice" in on_slice.leaders[0].criterion
    official = views.leaders(board, "futurepedia", views.TableView(protocol=ranking.OFFICIAL))
    frame = views.ranked(board, "futurepedia", protocol=ranking.OFFICIAL)
    assert official.protocol == ranking.OFFICIAL and official.leaders[0].value == frame.iloc[0]["monolingual"]
    # a metric without CI: only an equal value ties
    compression = views.leaders(board, "vdr", views.TableView(rank_by="compression")).leaders[0]
    assert compression.low is None and "equal value" in compression.criterion


def test_the_strip_escapes_names():
    lead = views.Leader(
        "m", "M", True, False, True, 2, id="x", name="<img src=x onerror=alert(1)>", value=0.5, tied=1, tied_names=("<b>",)
    )
    text = html.leaders_strip(views.Strip("t", (lead,)))
    assert "<img" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text and "<b>" not in text


def test_the_leader_of_each_track_is_its_tables_top(board):
    for name in TRACKS:
        top = views.ranked(board, name).iloc[0]
        assert views.leader_id(board, name) == top["id"]


# ---- the VDR trade-off chart -----------------------------------------------------------------------------------
def test_the_tradeoff_draws_one_curve_per_model_and_method(board):
    track = TRACKS["vdr"]
    index = next(i for i, c in enumerate(track.charts) if c.kind == "tradeoff")
    _, raw = views.table_frames(board, "vdr")
    systems = views.chart_systems(board, "vdr", raw)
    fig = views.chart(track, index, systems, None, None)
    curves = [t for t in fig.data if t.name != "Pareto front"]
    pairs = {(s.system["model"], s.system["method"]) for _, s in systems}
    assert sorted(t.name for t in curves) == sorted(f"{m} · {k}" for m, k in pairs)
    for t in curves:
        model, method = t.name.split(" · ")
        assert f"Method: {method}" in t.hovertemplate and f"Base model: {model}" in t.hovertemplate
        assert list(t.x) == sorted(t.x)  # along its own method, never back and forth across methods
    same_model = [t for t in curves if t.name.startswith("colqwen2-v1.0 · ")]
    assert len({t.line.color for t in same_model}) == 1 and len({t.line.dash for t in same_model}) == len(same_model)
    assert "one curve per base model and method" in fig.layout.title.text
    assert np.isfinite([v for t in curves for v in t.y]).all()
