"""View functions without a server: per-system charts, failing charts, Pareto front."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from leaderboard.reported import ChartSummary
from leaderboard.results import Summary
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.tracks import TRACKS
from leaderboard.ui import figures, views
from leaderboard.ui.format import esc


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    d = Path(tmp_path_factory.mktemp("views"))
    return Board(Settings(data_dir=d, judge="none"), StoreSettings(data_dir=d)).start(background=False)


def test_pair_heatmap_follows_the_chosen_system(board):
    track = TRACKS["futurepedia"]
    index = next(i for i, c in enumerate(track.charts) if c.kind == "pair_heatmap")
    _, raw = views.table_frames(board, "futurepedia")
    systems = views.chart_systems(board, "futurepedia", raw)
    with_pairs = [(n, s) for n, s in systems if "language_pair" in s.breakdowns]
    name, summary = with_pairs[1]
    fig = views.chart(track, index, systems, None, summary.sha256[:12])
    assert esc(name) in fig.layout.title.text
    assert len(fig.data[0].z) == 8 and len(fig.data[0].z[0]) == 8  # query x document language


def test_a_failing_chart_becomes_a_message(caplog):
    def broken(*_):
        raise KeyError("boom")

    fig = figures.safe(broken)
    text = fig.layout.annotations[0].text
    ref = re.search(r"could not be drawn \(ref ([0-9a-f]{6})\); the maintainers can find it in the logs", text)
    assert ref and "KeyError" not in text and "boom" not in text
    assert any(ref.group(1) in r.getMessage() and r.exc_info for r in caplog.records)


def test_the_first_charts_drawn_at_once_in_several_threads_all_draw(monkeypatch):
    """A page's first charts are built in several worker threads at once, each asking for the trimmed template.
    plotly keeps its named templates unvalidated until read, and two threads reading one at once fail with
    "Invalid value" (4 of 25 cold processes of 6 threads each, before `figures.template` took a lock). Here from
    a fresh unvalidated plotly_white each time, many times over: no figure fails."""
    import json
    import pkgutil
    import threading

    import plotly.graph_objects as go
    import plotly.io as pio

    white = json.loads(pkgutil.get_data("plotly", "package_data/templates/plotly_white.json"))
    failures: list[str] = []
    for _ in range(30):
        monkeypatch.setitem(pio.templates._templates, "plotly_white", go.layout.Template(white, _validate=False))
        figures._template.cache_clear()
        start = threading.Barrier(6)

        def draw(start=start):
            start.wait()
            try:
                go.Figure(go.Bar(x=[1], y=[2]), layout={"template": figures.template()}).to_json()
            except Exception as e:  # what a chart's build raises is the finding
                failures.append(repr(e))

        threads = [threading.Thread(target=draw) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    figures._template.cache_clear()
    assert not failures, failures[:3]


def test_pareto_front_keeps_only_undominated_points():
    pts = [(0.0, 0.9), (0.5, 0.85), (0.5, 0.7), (0.75, 0.86), (0.9, 0.5), (0.9, 0.6)]
    assert figures.pareto_front(pts) == [(0.0, 0.9), (0.75, 0.86), (0.9, 0.6)]


def test_every_declared_chart_draws_on_the_demo_board(board):
    for name, track in TRACKS.items():
        _, raw = views.table_frames(board, name)
        systems = views.chart_systems(board, name, raw)
        for i, c in enumerate(track.charts):
            fig = views.chart(track, i, systems, None, None)
            text = " ".join(a.text for a in fig.layout.annotations or [])
            assert "could not be drawn" not in text, (name, c.title)
            # the trimmed template has the defaults of every trace type drawn (a new type needs its own added)
            assert {t.type for t in fig.data} <= set(figures.template().data.to_plotly_json()), (name, c.title)


def test_a_picker_search_of_any_length_is_answered_and_a_name_is_found(board):
    """What a stranger types into a picker reaches the server on every key: a 5 MB text is answered (no match),
    the search text used is at most 200 characters (`CompareTab.find`), and a real name is still found."""
    import gradio as gr

    from leaderboard.ui.tabs.compare import CompareTab

    track = next(iter(TRACKS))
    first_id = views.system_choices(board, track)[0][1]
    name = board.entry(first_id).name
    tab = CompareTab.__new__(CompareTab)  # only `find` and `choices` are used: no Blocks needed
    tab.board = board
    found = tab.find(track, None, gr.KeyUpData(None, {"key": "a", "input_value": name}))
    assert first_id in [i for _, i in found["choices"]]
    huge = gr.KeyUpData(None, {"key": "a", "input_value": name + "x" * 5_000_000})
    assert tab.find(track, None, huge)["choices"] == []
    assert views.system_choices(board, track, search="x" * 5_000_000) == []


DATASETS = [p.stem.replace("__", "/") for p in sorted((Path(__file__).parents[1] / "assets/demo/gold/vdr").glob("*.qrels"))]


def test_bars_give_each_system_its_own_colour_whatever_reported_bars_are_among_them():
    track = TRACKS["vdr"]
    systems = []
    for i in range(10):  # rescored and reported alternating, more of each than there are colours
        breakdowns = {"dataset": {v: {"ndcg@5": 0.5 + i / 100} for v in DATASETS}}
        reported_as = {"source": "a paper", "series": "s"}
        summary = ChartSummary({}, breakdowns, {}, reported_as) if i % 2 else Summary(breakdowns=breakdowns)
        systems.append((f"system {i}", summary))
    fig = figures.by_axis(track, systems, "dataset", "ndcg@5")
    rescored = [t.marker.color for t in fig.data if not t.name.endswith(figures.REPORTED_MARK)]
    reported = [t.marker.color for t in fig.data if t.name.endswith(figures.REPORTED_MARK)]
    assert len(rescored) == len(reported) == 5
    assert len(set(rescored)) == 5 and len(set(reported)) == 5  # the 9th trace took the 1st one's colour before


def test_a_chart_grows_with_its_legend_and_its_long_labels():
    track = TRACKS["vdr"]
    cells = {"dataset": {v: {"ndcg@5": 0.5} for v in DATASETS}, "family": {"ViDoRe-V1": {"ndcg@5": 0.5}}}
    few = [(f"s{i}", Summary(breakdowns=cells)) for i in range(2)]
    many = [(f"a long system name number {i:02d}", Summary(breakdowns=cells)) for i in range(16)]
    assert figures.by_axis(track, few, "family", "ndcg@5").layout.height == figures.HEIGHT  # short labels, one row
    tilted = figures.by_axis(track, few, "dataset", "ndcg@5").layout.height
    assert tilted > figures.HEIGHT  # the dataset names do not fit side by side: tilted, half their length in height
    tall = figures.by_axis(track, many, "dataset", "ndcg@5")
    assert len(tall.data) == figures.MAX_SERIES == 8
    assert tall.layout.height == tilted + figures.LEGEND_ROW_PX  # 8 names of 29 characters: 2 rows of 4, not 1
    assert tall.layout.legend.yref == "container" and tall.layout.legend.yanchor == "bottom"


def test_a_p_value_of_no_crossing_replicate_is_shown_as_a_bound():
    """A paired bootstrap's p of 0.0 (no replicate crossed 0) is below 2 / resamples, not 0: shown as that bound."""
    from leaderboard.metrics.stats import RESAMPLES
    from leaderboard.ui.format import p_text

    assert RESAMPLES == 1000 and p_text(0.0) == "< 0.002" and p_text(0.0, 200) == "< 0.010"
    assert p_text(0.002) == "0.002" and p_text(0.0104) == "0.010" and p_text(1.0) == "1.000"
