"""Every tab unit restores only its own components, by name, so a permalink can never set the wrong control."""

from __future__ import annotations

import gradio as gr

from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.tracks import TRACKS
from leaderboard.ui import build_app, views
from leaderboard.ui.tabs import AboutTab, CompareTab, SubmitTab, SystemTab, TrackTab


def test_each_unit_restores_its_own_components(tmp_path):
    board = Board(Settings(data_dir=tmp_path, judge="none"), StoreSettings(data_dir=tmp_path))
    with gr.Blocks():
        units = [TrackTab(board, t, on_screen=i == 0) for i, t in enumerate(TRACKS.values())]
        units += [c(board) for c in (CompareTab, SystemTab, SubmitTab, AboutTab)]
    track = next(iter(TRACKS.values()))
    links = [
        {},
        {"tab": [track.name], "rank": [track.metrics[-1].key], "cols": ["id"]},
        {"tab": ["compare"], "track": [track.name], "a": ["x"], "b": ["y"]},
        {"tab": ["system"], "sys": ["x"]},
    ]
    for params in links:
        tab = (params.get("tab") or [track.name])[0]
        for unit in units:
            restored = unit.restore(params, tab)
            assert set(restored) == set(unit.restore_outputs), unit.id  # every restored control, and only those
    tt = units[0]
    restored = tt.restore(links[1], track.name)
    assert restored[tt.rank_by]["value"] == track.metrics[-1].key and restored[tt.columns]["value"] == ["id"]
    # another tab's link: defaults, which the controls have as built: no value is sent (a value sent again fires
    # the control's change, and every track re-rendered its table at each page load)
    assert all("value" not in update for update in (tt.restore(links[1], "compare")[c] for c in tt.controls))
    assert all("value" not in update for u in units[:3] for update in (u.restore({}, track.name)[c] for c in u.controls))
    # an older link naming the metric and the columns by their labels restores the same view
    old = tt.restore({"rank": [track.metrics[-1].label], "cols": ["Id"]}, track.name)
    assert old[tt.rank_by]["value"] == track.metrics[-1].key and old[tt.columns]["value"] == ["id"]
    assert len({u.id for u in units}) == len(units)
    # Only the first track's table is drawn when the page is built; a link opening on another track draws that one
    # (its table, leaders and per-system picker), and leaves the others as they are.
    later = units[1]
    assert not later.drawn_at_build and tt.drawn_at_build
    opened = later.restore({"tab": [later.id]}, later.id)
    assert "value" in opened[later.table] and "choices" in opened[later.chart_system]
    assert all("value" not in tt.restore({"tab": [later.id]}, later.id)[c] for c in (tt.table, tt.leaders))
    assert "value" not in later.restore({}, track.name)[later.table]
    # every page load's restore gives each tab its slice and filter choices as the board has them now
    restored = later.restore({}, track.name)
    assert restored[later.slice]["choices"] == views.slice_choices(board, later.track)
    choices = views.filter_choices(board, later.track)
    assert [u["choices"] for u in (restored[c] for c in later.filters)] == [
        [(v, v) if not isinstance(v, tuple) else v for v in choices.get(f.key, [])] for f in later.filter_fields
    ]
    # a hostile link opening on it: every value outside the choices falls back, the rows asked for are capped
    hostile = {
        "tab": [later.id],
        "rank": ["<script>"],
        "slice": ["nope: x" * 500],
        "q": ["x" * 10_000],
        "cols": ["../../etc", "id"],
        "rows": ["9" * 400],
        **{f"f.{f.key}": ["<img src=x>"] for f in later.filter_fields},
    }
    drawn = later.restore(hostile, later.id)
    # (the fallbacks are the built values: left as they are, no value sent)
    assert "value" not in drawn[later.rank_by] and "value" not in drawn[later.slice]
    assert all("value" not in drawn[c] for c in later.filters) and drawn[later.columns]["value"] == ["id"]
    assert drawn[later.rows]["value"] == views.MAX_TABLE_ROWS and "value" in drawn[later.table]


def test_every_handler_of_the_page_is_guarded(tmp_path):
    board = Board(Settings(data_dir=tmp_path, judge="none"), StoreSettings(data_dir=tmp_path))
    demo = build_app(board)
    fns = [f.fn for f in demo.fns.values() if f.fn is not None]
    assert fns and all(getattr(fn, "__wrapped__", None) is not None for fn in fns)
