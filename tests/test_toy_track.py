"""A fourth track defined only in tests/ (toytrack.py) and registered the documented way works end to end.

The CLI validates and scores it; the app shows its tab with a table (judge column included), a chart, CSV,
compare, detail and About. Nothing outside tests/ names it: every part reads the track's declarations.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from gradio_client import Client
from toytrack import ToyQATrack, submission, write_gold

from leaderboard import cli
from leaderboard.settings import Settings
from leaderboard.tracks import TRACKS
from leaderboard.ui import views

from appserver import place_submission, running_app

RIGHT = {"q1": "carbon dioxide", "q2": "100", "q3": "1989", "q4": "Augustus"}
HALF = {"q1": "carbon dioxide", "q2": "212", "q3": "1989", "q4": "Nero"}


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """The track in the registry for this module (as `TRACKS` in tracks/__init__.py lists it), with its gold."""
    track = ToyQATrack()
    track.gold_folder = write_gold(tmp_path_factory.mktemp("toy-gold"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(TRACKS, track.name, track)
        yield track


def test_gold_variable_comes_from_the_registry(toy):
    assert Settings.from_env({"TOYQA_GOLD": "/data/toy"}).gold["toyqa"] == "/data/toy"


def test_cli_validates_and_scores_it(toy, tmp_path, capsys):
    good = tmp_path / "good.jsonl"
    good.write_bytes(submission("Toy half", HALF))
    cli.main(["validate", str(good), "--gold", str(toy.gold_folder)])
    assert "valid" in capsys.readouterr().out.lower()

    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(submission("Toy bad", {"q9": "x"}))
    with pytest.raises(SystemExit) as exit_:
        cli.main(["validate", str(bad), "--gold", str(toy.gold_folder)])
    assert exit_.value.code == 1 and "q9" in capsys.readouterr().err

    cli.main(["score", str(good), "--judge", "lexical", "--json"])
    out = json.loads(capsys.readouterr().out.splitlines()[0])
    assert out["track"] == "toyqa" and out["overall"]["exact"] == 0.5
    assert out["judge"] == "lexical-v1" and 0 < out["overall"]["judged"] <= 1
    assert out["breakdowns"]["topic"]["science"]["exact"] == 0.5


@pytest.fixture(scope="module")
def app(toy, tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("toy-board")
    place_submission(data_dir, "toyqa", "alice", submission("Toy right", RIGHT))
    place_submission(data_dir, "toyqa", "bob", submission("Toy half", HALF, org="Other Lab"))
    with running_app(data_dir) as running:
        yield running


def test_the_app_shows_the_toy_track(app, toy):
    client = Client(app.url, verbose=False, download_files=str(app.data_dir / "downloads"))
    entries = {e.name: e for e in app.board.entries("toyqa")}
    assert {e.status for e in entries.values()} == {"scored"}
    assert all(e.summary.judge == "lexical-v1" for e in entries.values())  # judged, as the track declares

    # the table, by its endpoint named after the track; the judge column and filter are there (a judged track)
    out = client.predict(
        rank_by="exact",
        scores_on="All",
        search="",
        has_results_for=[],
        judge=[],
        columns=views.default_columns(toy),
        api_name="/table_toyqa",
    )
    value = out["value"]
    df = pd.DataFrame(value["metadata"]["display_value"], columns=value["headers"])
    assert df["System"].tolist() == ["Toy right", "Toy half"]
    assert {"Exact match", "Judged completeness", "Judge"} <= set(df.columns)
    assert set(df["Judge"]) == {"lexical-v1"} and all("≈" in c for c in df["Judged completeness"])
    assert df["Exact match"].str.startswith("1.000").tolist() == [True, False]
    # a label works where a key is expected (older API callers), and the choice of columns is by key
    by_label = client.predict(
        rank_by="Exact match",
        scores_on="Topic: history",
        search="",
        has_results_for=["judged"],
        judge=["lexical-v1"],
        columns=["exact", "Judge"],
        api_name="/table_toyqa",
    )
    assert by_label["value"]["headers"] == ["Rank", "System", "Exact match", "Judge"]
    assert by_label["label"] == "Toy QA: ranked by Exact match, scores on Topic: history"

    csv = pd.read_csv(client.predict("exact", "All", "", [], [], [], api_name="/export_csv_toyqa"))
    assert csv["name"].tolist() == ["Toy right", "Toy half"] and {"exact", "judged", "judge"} <= set(csv.columns)

    a, b = entries["Toy right"].id, entries["Toy half"].id
    summary, metrics, _, top, _ = client.predict("toyqa", a, b, api_name="/compare")
    assert "Toy right" in summary and "Judged completeness" in " ".join(m[0] for m in metrics["data"])
    assert {"q2", "q4"} <= {row[0] for row in top["data"]}

    meta, breakdown, _, units = client.predict(b, api_name="/detail")
    assert "Toy half" in meta and "Exact match" in meta
    assert {"science", "history"} <= {row[1] for row in breakdown["data"]}
    assert len(units["data"]) == 4

    # the chart the track declares, drawn from the board the app serves; About documents the track
    _, raw = views.table_frames(app.board, "toyqa")
    fig = views.chart(toy, 0, views.chart_systems(app.board, "toyqa", raw), "exact", None)
    assert [bar.name for bar in fig.data] == ["Toy right", "Toy half"] and "topic" in fig.layout.title.text
    config = json.dumps(app.blocks.get_config_file(), default=str)
    assert "toyqa-plot-0" in config and "Toy QA (`toyqa`)" in config and "Toy QA: questions" in config
