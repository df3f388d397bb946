"""What a page load costs the server: every visitor of one board version gets the tracks drawn once for all.

A plain page load draws the tab on screen (its load, its first chart) and then the tracks it does not show
(ui/layout.py `prefetch`). Those are the same for every visitor until the board changes: a second load at the
same board version builds no table and no chart, and shows the same; new data draws them again. The load's
handlers are run as the page runs them, through Gradio's own processing (which takes the update dicts it is
given apart: a kept draw must come back whole).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import gradio as gr
import pytest

from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.tracks import TRACKS
from leaderboard.ui import build_app, views


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    d = Path(tmp_path_factory.mktemp("load"))
    board = Board(Settings(data_dir=d, judge="none"), StoreSettings(data_dir=d)).start(background=False)
    return board, build_app(board)


def _handler(demo, name: str):
    return next(f for f in demo.fns.values() if f.fn is not None and getattr(f.fn, "__wrapped__", f.fn).__name__ == name)


def _page_load(demo) -> list:
    """What a plain page load sends the browser: its load, its first chart, then the other tracks (`prefetch`)."""
    load, chart, prefetch = (_handler(demo, n) for n in ("on_load", "opening_chart", "prefetch"))

    opened = {b._id: served(demo, b) for b in (*load.inputs, *chart.inputs)}  # as the page opens, before its load

    async def run():
        loaded = (await demo.process_api(load, [opened[b._id] for b in load.inputs], request=None))["data"]
        charts = (await demo.process_api(chart, [opened[b._id] for b in chart.inputs], request=None))["data"]
        # the page's values after the load: what it sent, else the component's value as built
        sent = {block._id: update for block, update in zip(load.outputs, loaded)}

        def value(block):
            if block._id not in sent:
                return block.value
            update = sent[block._id]
            if isinstance(update, dict) and update.get("__type__") == "update":
                return update.get("value", block.value)
            return update

        drawn = (await demo.process_api(prefetch, [value(b) for b in prefetch.inputs], request=None))["data"]
        return [dict(zip((b._id for b in f.outputs), out)) for f, out in ((load, loaded), (chart, charts), (prefetch, drawn))]

    return json.loads(json.dumps(asyncio.run(run()), default=str))


def served(demo, block):
    """`block`'s value as a page opens with it: in the config Gradio copies for each page it serves."""
    return next(c["props"].get("value") for c in demo.config["components"] if c["id"] == block._id)


def _tracks(demo) -> list:
    """The page's track tabs (the owners of the handler that draws a tab when it opens)."""
    return [getattr(f.fn, "__wrapped__", f.fn).__self__ for f in demo.fns.values() if f.fn and f.fn.__name__ == "draw"]


def test_a_second_page_load_at_one_board_version_draws_nothing_and_shows_the_same(page, monkeypatch):
    board, demo = page
    built: list[str] = []
    table_page, chart = views.table_page, views.chart

    def counted_table(board, track_name, *args, **kwargs):
        built.append(f"table {track_name}")
        return table_page(board, track_name, *args, **kwargs)

    def counted_chart(track, *args, **kwargs):
        built.append(f"chart {track.name}")
        return chart(track, *args, **kwargs)

    monkeypatch.setattr(views, "table_page", counted_table)
    monkeypatch.setattr(views, "chart", counted_chart)
    first = _page_load(demo)
    # the tab on screen (its load's render, its first chart) and each other track's table and chart, once
    assert sorted(built) == sorted([f"table {t}" for t in TRACKS] + [f"chart {t}" for t in TRACKS]), built
    built.clear()
    again = _page_load(demo)
    assert built == []  # no table, no chart: drawn for this board version already
    tracks = _tracks(demo)
    # the tab a page opens on: its load sends its strip, the page held the build's placeholder (the table it
    # held is current); the page is served with both since, with the board version they are for
    opens = tracks[0]
    table, strip, mark, plot = (str(c._id) for c in (opens.table, opens.strip, opens.drawn, opens.plots[0]))
    assert "lead-name" in first[0][strip] and "value" not in first[0][table]
    assert served(demo, opens.strip) == first[0][strip] and served(demo, opens.drawn) == board.version
    # its first chart too, served since; sent again at the build's version (a page served before any load, with
    # the same version, holds none)
    assert first[1][plot]["type"] == "plotly" and served(demo, opens.plots[0]) == first[1][plot]
    assert again == first  # the same tables, charts, pickers and leaders, whole
    assert [t.id for t in tracks] == list(TRACKS)
    _, _, prefetched = again
    for unit in tracks[1:]:  # the tracks off screen came drawn, for the board version: table and chart
        assert prefetched[str(unit.drawn._id)] == board.version
        assert prefetched[str(unit.table._id)]["value"]["data"] and prefetched[str(unit.plots[0]._id)]["type"] == "plotly"

    # new data (a bumped version: the board changed) draws them again, for the new version
    version = board.version
    board._bump()
    later = _page_load(demo)
    assert sorted(built) == sorted([f"table {t}" for t in TRACKS] + [f"chart {t}" for t in TRACKS]), built
    assert board.version != version
    # the page held the view of the version before: sent again, and the page served with the new one since (its
    # table as the load sent it, its strip, the versions); the next load sends neither, nor the page's version
    assert "lead-name" in later[0][strip] and later[0][table]["value"]["data"]
    assert served(demo, opens.table) == later[0][table]["value"] and served(demo, opens.strip) == later[0][strip]
    assert served(demo, opens.drawn) == served(demo, tracks[0].data_version) == board.version
    assert later[1][plot]["type"] == "plotly" and served(demo, opens.plots[0]) == later[1][plot]  # the chart too
    built.clear()
    held, held_chart, _ = _page_load(demo)
    assert [held[c].get("value") for c in (table, strip, str(tracks[0].data_version._id))] == [None] * 3
    assert held_chart[plot] == {"__type__": "update"}  # nor its chart, served with them
    assert built == [] and held[mark] == board.version
    for unit in tracks[1:]:  # marked drawn for the new version, the same numbers (the data did not change)
        assert later[2][str(unit.drawn._id)] == board.version
        assert later[2][str(unit.table._id)] == prefetched[str(unit.table._id)]
        assert later[2][str(unit.plots[0]._id)] == prefetched[str(unit.plots[0]._id)]


def test_the_versions_a_page_sends_back_with_its_load_decide_only_what_that_page_is_sent(page):
    """The versions the page's load reads back are the visitor's to send: none, absurd or behind, the page gets the
    table, strip, version and first chart whole; text where a number goes is refused with what was wrong; one claiming the
    current version only spares that page what it says it holds. The page as served is left as it was."""
    board, demo = page
    _page_load(demo)  # the page is served with the opening view for this version
    load, chart = _handler(demo, "on_load"), _handler(demo, "opening_chart")
    opens = _tracks(demo)[0]
    table, strip, plot = (str(c._id) for c in (opens.table, opens.strip, opens.plots[0]))
    before = json.dumps(demo.config["components"], default=str)

    def sent(held, fn=load):
        out = asyncio.run(demo.process_api(fn, list(held)[: len(fn.inputs)], request=None))["data"]
        return dict(zip((str(b._id) for b in fn.outputs), json.loads(json.dumps(out, default=str))))

    assert board.version != opens.built_version  # the page as served at this version holds its chart
    for held in ([None, None], [-1, -1], [1e300, 1e300], [-(2**63), 2**63], [board.version - 1, board.version - 1]):
        got = sent(held)
        assert got[table]["value"]["data"] and "lead-name" in got[strip], held
        assert sent(held, chart)[plot]["type"] == "plotly", held
    for held in (["x", "y"], [[1], {"a": 1}]):
        for fn in (load, chart):
            with pytest.raises(gr.Error, match="is not a number"):
                sent(held, fn)
    got = sent([board.version, board.version])  # what a served page sends: the table is not sent again
    assert "value" not in got[table] and sent([board.version], chart)[plot] == {"__type__": "update"}
    assert json.dumps(demo.config["components"], default=str) == before


def test_events_whose_progress_nobody_sees_keep_no_loading_status(page):
    """ui/layout.py `_no_hidden_progress`: an event whose progress is hidden, or that runs in the page alone, shows
    progress on no component, so the browser keeps no loading status for its outputs (every request's start and end
    rewrites each one it keeps); an event that shows its progress keeps it on its outputs."""
    _, demo = page
    deps = demo.get_config_file()["dependencies"]
    quiet = [d for d in deps if d["show_progress"] == "hidden" or not d["backend_fn"]]
    shown = [d for d in deps if d not in quiet]
    on_load = next(d for d in deps if len(d["outputs"]) == max(len(x["outputs"]) for x in deps))  # restores every tab
    assert on_load in quiet and quiet and shown
    assert [d["show_progress_on"] for d in quiet] == [[]] * len(quiet)
    assert [d["show_progress_on"] for d in shown] == [None] * len(shown)


def test_the_page_holds_no_code_editor(page):
    """The browser loads the module of every component type a page holds before it draws its first table, hidden
    tabs included; gr.Code's is CodeMirror (~390 KB of script), the largest of them, for raw records deep in the
    System and Compare tabs. They are read-only text boxes (`tabs/common.record_box`): the same string, no editor."""
    _, demo = page
    types = {c["type"] for c in demo.get_config_file()["components"]}
    assert "code" not in types
    assert {"textbox", "dataframe", "plot", "html"} <= types  # the census reads the page's real components
