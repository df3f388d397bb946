"""A board of a few hundred systems: tables page, search and filters pick among every row, pickers and charts stay
bounded, and links to a system far down the ranking still open it.

One app for the module: the demo board plus 300 generated systems (bench/bench_scale.py's generator: copies of
the demo systems' files and cached results under their own names, 100 per track), with a page of 20 systems.
"""

from __future__ import annotations

import contextlib
import re
import sys
from pathlib import Path

import gradio as gr
import pandas as pd
import pytest
from gradio_client import Client

from leaderboard.settings import PageSettings
from leaderboard.tracks import TRACKS
from leaderboard.ui import views
from leaderboard.ui.tabs import CompareTab, SystemTab, TrackTab
from leaderboard.ui.tabs.system import all_systems

from appserver import running_app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import bench_scale

PAGE = 20
TRACK = "unidoc"  # a track with reported rows (published figures) among its rescored ones


@contextlib.contextmanager
def paging_app(root: Path, systems: int = 300):
    """The demo board plus `systems` generated ones, served, with a page of PAGE systems."""
    page = PageSettings(table_page_rows=PAGE)
    with running_app(root / "demo", page=page) as demo:
        templates = bench_scale.templates_of(demo.board, demo.data_dir)
    bench_scale.generate(root / "big", systems, templates)
    with running_app(root / "big", page=page) as big:
        yield big


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with paging_app(tmp_path_factory.mktemp("paging")) as big:
        yield big


@pytest.fixture(scope="module")
def client(app):
    return Client(app.url, verbose=False, download_files=str(app.data_dir / "downloads"))


@pytest.fixture(scope="module")
def tabs(app):
    """The page's tab units on the app's board (their handlers, called directly)."""
    with gr.Blocks():
        return {"track": TrackTab(app.board, TRACKS[TRACK]), "compare": CompareTab(app.board), "system": SystemTab(app.board)}


def default_view(client) -> dict:
    spec = client.view_api(return_format="dict", print_info=False)["named_endpoints"][f"/table_{TRACK}"]["parameters"]
    return {p["parameter_name"]: p["parameter_default"] if p["parameter_has_default"] else "" for p in spec}


def table(client, **changes) -> tuple[pd.DataFrame, dict, str]:
    """(frame of the data as sent, with Id, Recall@10 and a `reported` flag; the raw value; the label)."""
    view = {**default_view(client), "columns": ["id"], **changes}
    out = client.predict(**view, api_name=f"/table_{TRACK}")
    value = out.get("value", out) if "__type__" in out else out
    frame = pd.DataFrame(value["data"], columns=value["headers"])
    shown = value["metadata"]["display_value"] if value.get("metadata") else []
    frame["reported"] = ["reported-badge" in row[0] for row in shown]
    return frame, value, out.get("label", "")


def board_systems(app, **kw) -> pd.DataFrame:
    """Every ranked row of the track (no reported rows), in ranking order: the truth the pages are cut from."""
    return app.board.table(TRACK, **kw)


def test_the_board_is_generated_with_real_files(app):
    rows = board_systems(app)
    assert len(rows) > 100 and (rows["status"] == "scored").all()  # every copy read from its cached results


def test_first_page_has_the_top_systems_in_ranking_order_and_the_label_counts_all(client, app):
    frame, _, label = table(client)
    every = board_systems(app)
    systems = frame[~frame["reported"]]
    assert len(systems) == PAGE
    assert systems["Id"].tolist() == every["id"].head(PAGE).tolist()
    assert label == f"UniDoc-Bench: ranked by Recall@10 · showing {PAGE} of {len(every):,} systems"
    # reported rows stay among the rows shown where their value falls: above the page's last system, never below
    assert frame["reported"].any()
    last = every["recall@10"].iloc[PAGE - 1]
    shown_reported = views.filtered_table(app.board, TRACK, None, None, "", {}, True)
    shown_reported = shown_reported[shown_reported["reported"].astype(bool)]
    assert len(frame[frame["reported"]]) == int((shown_reported["recall@10"] > last).sum())


def test_show_more_grows_the_page_and_the_permalink_keeps_it(client, app, tabs):
    first, _, _ = table(client)
    more, _, label = table(client, rows=2 * PAGE)
    every = board_systems(app)
    assert more[~more["reported"]]["Id"].tolist() == every["id"].head(2 * PAGE).tolist()
    assert more["Id"].head(len(first)).tolist() == first["Id"].tolist()
    assert f"showing {2 * PAGE} of {len(every):,} systems" in label
    track = tabs["track"]
    assert track.show_more(PAGE) == 2 * PAGE
    restored = track.restore({"rows": [str(2 * PAGE)]}, TRACK)
    assert restored[track.rows]["value"] == 2 * PAGE
    controls = [restored[c].get("value", c.value) for c in track.controls]  # a control at its built value: none sent
    _, query, *_ = track.render(*controls)
    assert f"rows={2 * PAGE}" in query
    _, default_query, *_ = track.render(*controls[:-2], PAGE, controls[-1])  # rows, then the Scores choice
    assert "rows=" not in default_query  # the default page leaves the link as it was


def test_rows_from_a_caller_are_bounded(client, app):
    one, _, _ = table(client, rows=-5)
    assert len(one[~one["reported"]]) == 1
    every, _, label = table(client, rows=10**9)
    assert len(every[~every["reported"]]) == len(board_systems(app)) and "showing" not in label
    assert views.page_rows(app.board) == PAGE
    assert views.rows_wanted("many", PAGE) == PAGE and views.rows_wanted(10**9, PAGE) == views.MAX_TABLE_ROWS


def test_search_finds_a_system_far_beyond_the_first_page(client, app):
    deep = board_systems(app).iloc[-3]
    frame, _, label = table(client, search=deep["name"])
    assert deep["id"] in frame["Id"].tolist()
    assert "showing" not in label


def test_filters_apply_before_the_cut(client, app):
    every = board_systems(app)
    value = every["paradigm"].iloc[-1]  # the paradigm of the last system: its rows run deep into the ranking
    matching = every[every["paradigm"] == value]
    assert len(matching) > PAGE
    frame, _, label = table(client, paradigm=[value])
    assert frame[~frame["reported"]]["Id"].tolist() == matching["id"].head(PAGE).tolist()
    assert f"of {len(matching):,} systems" in label


def test_csv_has_every_row(client, app):
    view = {k: v for k, v in default_view(client).items() if k != "rows"}
    csv = pd.read_csv(client.predict(**view, api_name=f"/export_csv_{TRACK}"))
    assert set(board_systems(app)["id"]) <= set(csv["id"])
    assert len(csv) == len(views.filtered_table(app.board, TRACK, None, None, "", {}, True))


def test_charts_draw_the_top_systems_and_the_pick_and_say_so(app, tabs):
    every = views.filtered_table(app.board, TRACK, None, None, "", {}, True)
    deep = board_systems(app)["id"].iloc[-1]
    rows, note = views.chart_rows(every, deep)
    rescored = rows[~rows["reported"].astype(bool)]
    assert len(rescored) == views.CHART_SERIES + 1 and rescored["id"].iloc[-1] == deep
    assert note == f"top {views.CHART_SERIES} of {len(board_systems(app)):,} shown"
    track = tabs["track"]
    controls = [c.value for c in track.controls]
    systems = set(board_systems(app)["name"])  # rescored systems (reported rows are few and all drawn)
    drawn = []
    for index in range(len(TRACKS[TRACK].charts)):
        fig = track.chart(index, None, deep, *controls)
        assert any(note in (a.text or "") for a in fig.layout.annotations), TRACKS[TRACK].charts[index].title
        drawn.append(strings_of(fig) & systems)
    assert any(drawn)  # the charts do draw systems...
    assert all(len(names) <= views.CHART_SERIES + 1 for names in drawn), [
        sorted(n)[:40] for n in drawn
    ]  # ...never one series per system of the board


def strings_of(fig) -> set[str]:
    """Every text in a figure's traces (names, labels, hover, category axes), and each line of it."""
    found = set()
    for trace in fig.data:
        for attr in ("name", "text", "hovertext", "x", "y", "customdata"):
            value = getattr(trace, attr, None)
            for item in value if isinstance(value, (tuple, list)) else [value]:
                for text in item if isinstance(item, (tuple, list)) else [item]:
                    if isinstance(text, str):
                        found |= {text, *re.split(r"<br>|\n", text)}
    return found


def test_pickers_list_a_page_and_find_any_system(app):
    every = board_systems(app)
    deep = every.iloc[-2]
    choices = views.system_choices(app.board, TRACK, limit=PAGE)
    assert len(choices) == PAGE and deep["id"] not in {i for _, i in choices}
    found = views.system_choices(app.board, TRACK, limit=PAGE, search=deep["name"])
    assert deep["id"] in {i for _, i in found}
    kept = views.system_choices(app.board, TRACK, limit=PAGE, keep=[deep["id"]])
    assert [i for _, i in kept][-1] == deep["id"] and len(kept) == PAGE + 1
    listed = all_systems(app.board, PAGE)
    assert len(listed) <= PAGE * len(TRACKS) + sum(len(views.reported_rows(app.board, t)) for t in TRACKS.values())
    assert deep["id"] in {i for _, i in all_systems(app.board, PAGE, search=deep["id"][:7])}


def test_a_permalink_beyond_the_first_page_opens_compare_and_system(client, app, tabs):
    every = board_systems(app)
    a, b = every["id"].iloc[-1], every["id"].iloc[-5]
    compare = tabs["compare"]
    restored = compare.restore({"tab": ["compare"], "track": [TRACK], "a": [a], "b": [b]}, "compare")
    assert restored[compare.a]["value"] == a and restored[compare.b]["value"] == b
    assert {a, b} <= {i for _, i in restored[compare.a]["choices"]}
    assert len(restored[compare.a]["choices"]) <= PAGE + 2 + len(views.reported_rows(app.board, TRACKS[TRACK]))
    system = tabs["system"]
    shown = system.restore({"tab": ["system"], "sys": [a]}, "system")[system.system]
    assert shown["value"] == a and a in {i for _, i in shown["choices"]}
    assert system.restore({"tab": ["system"], "sys": ["nonexistent"]}, "system")[system.system]["value"] is None
    # the views the links open, through the API
    summary, metrics, *_ = client.predict(track=TRACK, system_a=a, system_b=b, api_name="/compare")
    assert every.set_index("id").loc[a, "name"] in summary and metrics["data"]
    meta, *_ = client.predict(entry_id=a, api_name="/detail")
    assert a in meta
