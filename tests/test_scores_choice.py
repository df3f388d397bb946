"""Both protocols of a file (the board's and the benchmark's own script's, SCORING.md "Official scripts"): scored
once and cached together, kept through the results cache and its index, and shown by the "Scores" choice of
each track tab (table, ranks, CSV, charts, permalink, detail, About) and by the optional trailing `protocol`
parameter of /table_<track> and /export_csv_<track>.

The toy track of tests/toytrack.py declares two deviations with a real `score_with`; the real tracks are checked
for what holds whatever they declare (no deviation: both choices are the board's).
"""

from __future__ import annotations

import json
from pathlib import Path

import gradio as gr
import msgspec
import pandas as pd
import pytest
from gradio_client import Client
from gradio_client.exceptions import AppError
from toytrack import ToyQATrack, submission, write_gold

import leaderboard.results as results
import leaderboard.scoring as scoring
from leaderboard import ranking, results_dataset
from leaderboard.judge import make_judge
from leaderboard.results import PARTS
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.tracks import TRACKS
from leaderboard.ui import about, figures, protocol_html, views
from leaderboard.ui.tabs import TrackTab

from appserver import place_submission, running_app

# The board casefolds answers and counts unanswered questions; the toy's "script" does neither.
CASED = {"q1": "Carbon Dioxide", "q2": "100", "q3": "1989", "q4": "augustus"}  # board 1.0, official 0.5
PARTIAL = {"q2": "100", "q3": "1989"}  # board 0.5 (2 of 4), official 1.0 (2 of the 2 answered)


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    track = ToyQATrack()
    track.gold_folder = write_gold(tmp_path_factory.mktemp("toy-gold"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(TRACKS, track.name, track)
        yield track


class CountingJudge:
    """The lexical judge, counting its runs over a file's answers."""

    def __init__(self, judge):
        self.judge, self.name, self.calls = judge, judge.name, 0

    def judge_many(self, items, progress=None):
        self.calls += 1
        return self.judge.judge_many(items, progress=progress)

    def __getattr__(self, name):  # the rest of the Judge interface: the lexical judge's
        return getattr(self.judge, name)


def write(folder: Path, name: str, answers: dict) -> Path:
    path = folder / f"{name.replace(' ', '-')}.jsonl"
    path.write_bytes(submission(name, answers))
    return path


# ---- scoring and the results cache --------------------------------------------------------------------------
def test_both_protocols_are_scored_from_one_judge_run_and_cached_together(toy, tmp_path):
    judge = CountingJudge(make_judge("lexical", cache_dir=tmp_path / "verdicts"))
    path = write(tmp_path, "Toy cased", CASED)
    scored = scoring.Rescorer(tmp_path / "results").score_file(path, judge)
    s = scored.summary
    assert judge.calls == 1  # one judge run for both protocols
    assert set(msgspec.to_builtins(s.official)) == {"overall", "ci", "breakdowns", "n", "missing"}
    assert s.overall["exact"] == 1.0 and s.official.overall["exact"] == 0.5
    assert s.official.breakdowns["topic"]["science"]["exact"] == 0.5  # "Carbon Dioxide" is not "carbon dioxide"
    # judged metrics have one protocol: the same values, the same interval
    assert s.official.overall["judged"] == s.overall["judged"] and 0 < s.overall["judged"] <= 1
    assert s.official.ci["judged"] == s.ci["judged"]
    stored = json.loads((tmp_path / "results" / f"{scored.key}.json").read_text())
    assert stored["official"] == msgspec.to_builtins(s.official)  # in the one cached summary

    # a restart serves both from the cache: nothing rescored, the judge not run again
    again = scoring.Rescorer(tmp_path / "results").score_file(path, judge)
    assert again.cached and again.key == scored.key and judge.calls == 1
    assert msgspec.to_builtins(again.summary.official) == stored["official"]

    partial = scoring.Rescorer(tmp_path / "results").score_file(write(tmp_path, "Toy partial", PARTIAL)).summary
    assert partial.overall["exact"] == 0.5 and partial.official.overall["exact"] == 1.0  # unanswered left out
    assert (partial.n, partial.missing) == (partial.official.n, partial.official.missing) == (4, 2)


def test_a_cached_summary_without_the_official_scores_is_rescored(toy, tmp_path):
    path = write(tmp_path, "Toy cased", CASED)
    scored = scoring.Rescorer(tmp_path / "results").score_file(path)
    file = tmp_path / "results" / f"{scored.key}.json"
    old = json.loads(file.read_text())
    del old["official"]  # as a board before both protocols were stored wrote it
    file.write_text(json.dumps(old))
    assert scoring.ResultsCache(tmp_path / "results").load(scored.key) is None  # not served: the choice would lie
    again = scoring.Rescorer(tmp_path / "results").score_file(path)
    assert not again.cached and again.summary.official.overall["exact"] == 0.5


def stepwise_effects(track, parsed, gold, verdicts):
    """Each deviation's effect, from the official protocol to the board's in the declared order (SCORING.md)."""
    fixes, out = frozenset(), []
    before = track.score_with(parsed, gold, fixes, verdicts).overall
    for d in track.deviations:
        fixes |= {d.name}
        after = track.score_with(parsed, gold, fixes, verdicts).overall
        effect = {k: after[k] - before[k] for k in after if after[k] is not None and before.get(k) is not None}
        out.append({"name": d.name, "script": d.script, "board": d.board, "effect": effect})
        before = after
    return out


def test_deviation_effects_are_stored_with_the_scores(toy, tmp_path):
    s = scoring.score_bytes(submission("Toy partial", PARTIAL), "p.jsonl").summary
    effects = {d["name"]: d["effect"]["exact"] for d in s.deviations}
    assert effects == {"casefold-answers": 0.0, "unanswered-count": -0.5}
    reference = stepwise_effects(toy, *_parsed(s, submission("Toy partial", PARTIAL)))
    assert effects == {d["name"]: pytest.approx(d["effect"]["exact"]) for d in reference}
    assert sum(effects.values()) == pytest.approx(s.overall["exact"] - s.official.overall["exact"])
    html = protocol_html.side_by_side(toy, s)  # the detail view: both protocols, the differences, their effects
    assert "effect on this file" in html and "Exact match -0.500" in html and "Exact match +0.000" in html


def _parsed(summary, data: bytes):
    checked = scoring.check(data, "p.jsonl")
    return checked.parsed, checked.gold, None


def local_board(data_dir: Path) -> Board:
    return Board(Settings(data_dir=data_dir, judge="none"), StoreSettings(data_dir=data_dir)).start(background=False)


def official_of(board: Board) -> dict[str, str]:
    return {e.name: json.dumps(msgspec.to_builtins(e.summary.official), sort_keys=True) for e in board.entries("toyqa", PARTS)}


def test_the_official_scores_survive_restarts_from_the_results_tables(toy, tmp_path):
    place_submission(tmp_path, "toyqa", "alice", submission("Toy cased", CASED))
    place_submission(tmp_path, "toyqa", "bob", submission("Toy partial", PARTIAL))
    first = official_of(local_board(tmp_path))
    assert json.loads(first["Toy cased"])["overall"]["exact"] == 0.5
    assert results.table_path(tmp_path / "results", "toyqa").is_file()
    for _ in range(2):  # from the table, its official part decoded when the official protocol asks
        board = local_board(tmp_path)
        assert official_of(board) == first
        raw = views.filtered_table(board, "toyqa", protocol=ranking.OFFICIAL)
        assert raw["name"].tolist() == ["Toy partial", "Toy cased"] and raw["exact"].tolist() == [1.0, 0.5]
    # the results dataset's rows carry the official numbers beside the board's
    rows = results_dataset.systems_table(board, toy).to_pandas().set_index("name")
    assert rows.loc["Toy cased", ["exact", "official:exact"]].tolist() == [1.0, 0.5]
    assert rows.loc["Toy partial", ["exact", "official:exact"]].tolist() == [0.5, 1.0]
    assert rows["official:exact:low"].notna().all() and "official:judged" in rows


# ---- the board: one app with the toy track beside the real ones ------------------------------------------------
@pytest.fixture(scope="module")
def app(toy, tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("scores-choice")
    place_submission(data_dir, "toyqa", "alice", submission("Toy cased", CASED))
    place_submission(data_dir, "toyqa", "bob", submission("Toy partial", PARTIAL))
    with running_app(data_dir) as running:
        yield running


@pytest.fixture(scope="module")
def client(app):
    return Client(app.url, verbose=False, download_files=str(app.data_dir / "downloads"))


def frame(out) -> pd.DataFrame:
    value = out.get("value", out) if "__type__" in out else out
    return pd.DataFrame(value["metadata"]["display_value"], columns=value["headers"])


TOY_ARGS = ("exact", "All", "", [], [], ["exact", "judged", "Judge"], True)  # rank_by .. show_reported


def test_table_endpoint_takes_an_optional_trailing_protocol(app, client):
    params = client.view_api(return_format="dict", print_info=False)["named_endpoints"]
    for name in TRACKS:
        for endpoint in (f"/table_{name}", f"/export_csv_{name}"):
            last = params[endpoint]["parameters"][-1]
            assert (last["parameter_name"], last["parameter_has_default"], last["parameter_default"]) == (
                "protocol",
                True,
                "board",
            )
    before = client.predict(*TOY_ARGS, api_name="/table_toyqa")
    assert client.predict(*TOY_ARGS, 100, "board", api_name="/table_toyqa") == before  # old callers: the board's
    df = frame(before)
    assert df["System"].tolist() == ["Toy cased", "Toy partial"] and df["Exact match"].str[:5].tolist() == ["1.000", "0.500"]
    assert "official" not in before["label"]

    official = client.predict(*TOY_ARGS, 100, "official", api_name="/table_toyqa")
    df = frame(official)
    assert df["System"].tolist() == ["Toy partial", "Toy cased"]  # ranked within the official protocol
    assert df["Exact match"].str[:5].tolist() == ["1.000", "0.500"] and df["Rank"].tolist() == ["1", "2"]
    assert official["label"] == "Toy QA: ranked by Exact match · scores: official script"
    # the judged column is the same under both (one protocol), and a label is taken where the key is expected
    assert sorted(frame(before)["Judged completeness"]) == sorted(df["Judged completeness"])
    assert client.predict(*TOY_ARGS, 100, "official script", api_name="/table_toyqa") == official
    with pytest.raises(AppError, match="not in the list of choices"):
        client.predict(*TOY_ARGS, 100, "<script>", api_name="/table_toyqa")


def test_export_csv_with_protocol(app, client):
    board = client.predict(*TOY_ARGS, api_name="/export_csv_toyqa")
    official = client.predict(*TOY_ARGS, "official", api_name="/export_csv_toyqa")
    assert Path(board).name == "toyqa-leaderboard.csv" and Path(official).name == "toyqa-leaderboard-official.csv"
    b, o = pd.read_csv(board), pd.read_csv(official)
    assert dict(zip(b["name"], b["exact"])) == {"Toy cased": 1.0, "Toy partial": 0.5}
    assert dict(zip(o["name"], o["exact"])) == {"Toy partial": 1.0, "Toy cased": 0.5} and o["rank"].tolist() == [1, 2]
    assert o["exact:low"].notna().all()  # the official protocol's own intervals


def test_detail_shows_both_protocols_and_the_deviations(app, client, toy):
    e = next(e for e in app.board.entries("toyqa") if e.name == "Toy cased")
    outputs = client.predict(e.id, api_name="/detail")
    assert len(outputs) == 4  # the endpoint's outputs as before
    meta = outputs[0]
    assert "Scores: board and official script" in meta and "official script" in meta
    assert "<td>1.000 <small>" in meta and "<td>0.500 <small>" in meta and "+0.500" in meta
    for d in toy.deviations:
        assert d.name in meta and d.why.replace("'", "&#x27;") in meta


def test_about_lists_every_tracks_deviations_from_the_declaration(toy):
    text = about.about_markdown()
    for track in TRACKS.values():
        section = about.track_section(track)
        if track.deviations:
            assert all(d.name in section and d.script in section and d.board in section for d in track.deviations)
        else:
            assert protocol_html.NO_DEVIATIONS in section
        assert section in text


def test_permalink_holds_the_choice_and_restores_it(app, toy):
    with gr.Blocks():
        tabs = {name: TrackTab(app.board, track, on_screen=False) for name, track in TRACKS.items()}
    tab = tabs["toyqa"]
    controls = [
        "exact",
        views.ALL,
        "",
        *([] for _ in tab.filter_fields),
        views.default_columns(toy),
        True,
        views.page_rows(app.board),
    ]
    table, query, *_ = tab.render(*controls, "official")
    assert "protocol=official" in query and "scores: official script" in table["label"]
    assert "protocol" not in tab.render(*controls, "board")[1]
    assert "protocol" not in tab.render(*controls)[1]  # a caller without it: the board's
    restored = tab.restore({"tab": ["toyqa"], "protocol": ["official"]}, "toyqa")
    assert restored[tab.protocol]["value"] == "official"
    assert frame(restored[tab.table])["System"].tolist() == ["Toy partial", "Toy cased"]  # drawn in that protocol
    assert "value" not in tab.restore({"tab": ["toyqa"]}, "toyqa")[tab.protocol]  # the default: nothing sent
    assert "value" not in tab.restore({"tab": ["toyqa"], "protocol": ["<b>"]}, "toyqa")[tab.protocol]


def test_charts_follow_the_choice(app, toy):
    with gr.Blocks():
        tab = TrackTab(app.board, toy, on_screen=False)
    rest = [*([] for _ in tab.filter_fields), views.default_columns(toy), True, views.page_rows(app.board)]
    board = tab.chart(0, "exact", None, "exact", views.ALL, "", *rest)
    official = tab.chart(0, "exact", None, "exact", views.ALL, "", *rest, "official")
    bars = {b.name: list(b.y) for b in official.data}
    assert bars == {"Toy partial": [1.0, 1.0], "Toy cased": [0.5, 0.5]}  # per topic, the script's way
    assert {b.name: list(b.y) for b in board.data} == {"Toy cased": [1.0, 1.0], "Toy partial": [0.5, 0.5]}
    assert official.layout.title.subtitle.text == figures.OFFICIAL_SUBTITLE  # no reported rows on this track
    fig = figures.with_protocol(figures.message_figure("x"), True, True)
    assert fig.layout.title.subtitle.text == f"{figures.OFFICIAL_SUBTITLE}: {figures.LIKE_FOR_LIKE}"
