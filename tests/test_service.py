"""The board service end to end: store -> rescoring -> entries, against a local folder and a fake Hub."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import leaderboard.scoring as scoring
from leaderboard import demo
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.submission import with_system
from leaderboard.ui.layout import status_html

from hubfake import FAKE_TOKEN, fake_hub  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "assets" / "demo" / "submissions"
UNIDOC_FILES = sorted((DEMO / "unidoc").glob("*.jsonl"))
VDR_FILES = sorted((DEMO / "vdr").glob("*.jsonl"))


def local_board(tmp_path: Path, judge: str = "none") -> Board:
    return Board(Settings(data_dir=tmp_path, judge=judge), StoreSettings(data_dir=tmp_path)).start(background=False)


def test_local_default_shows_demo_and_a_local_submission_lands(tmp_path):
    board = local_board(tmp_path)
    before = len(board.entries("unidoc"))
    assert before == len(list((DEMO / "unidoc").glob("*"))) and all(e.status == "scored" for e in board.entries())
    # a demo system's predictions under another name: the same predictions, refused as a duplicate
    copy = with_system(UNIDOC_FILES[0].read_bytes(), "x.jsonl", {"name": "Local copy of a demo system"})
    assert board.submit(user="alice", track="unidoc", filename="mine.jsonl", data=copy, metadata={}).state == "duplicate"
    _, data = demo.make_submissions("unidoc", demo.DEMO_DIR / "gold" / "unidoc", 1, seed=3)[0]
    data = with_system(data, "x.json", {"name": "Local copy of a demo system"})
    status = board.submit(user="alice", track="unidoc", filename="mine.json", data=data, metadata={})
    assert status.ok, status
    entries = board.entries("unidoc")
    assert len(entries) == before + 1
    mine = next(e for e in entries if e.user == "alice")
    assert mine.status == "scored" and mine.name.startswith("Local copy of")
    # the same bytes again: detected by content hash, nothing stored twice
    again = board.submit(user="bob", track="unidoc", filename="x.json", data=data, metadata={})
    assert again.state == "duplicate" and len(board.entries("unidoc")) == before + 1
    # an invalid file: every error, nothing stored
    bad = board.submit(
        user="alice",
        track="unidoc",
        filename="bad.jsonl",
        data=b'{"track": "unidoc", "system": {"name": "x"}}\n{"id": 3}\n',
        metadata={},
    )
    assert bad.state == "invalid" and len(bad.errors) == 2 and len(board.entries("unidoc")) == before + 1


def test_background_judging_adds_e2e_metrics_later(tmp_path):
    board = Board(Settings(data_dir=tmp_path, judge="lexical"), StoreSettings(data_dir=tmp_path))
    board.start(background=False)
    e = next(e for e in board.entries("unidoc") if e.summary.extra["answered"])
    assert e.judging and "completeness" not in e.summary.overall  # retrieval metrics at once
    board.judge_queue.put("")
    board.judge_queue.run()  # drain the queue in this thread
    assert not e.judging and e.summary.judge == "lexical-v1" and "completeness" in e.summary.overall
    # a restart finds the judged results in the cache: no judging, no rescoring
    again = Board(Settings(data_dir=tmp_path, judge="lexical"), StoreSettings(data_dir=tmp_path)).start(background=False)
    e2 = next(x for x in again.entries("unidoc") if x.id == e.id)
    assert not e2.judging and e2.summary.overall == e.summary.overall


@pytest.fixture
def hub_board(fake_hub, tmp_path):  # noqa: F811
    fake_hub.create_repo("org/subs", repo_type="dataset")
    fake_hub.create_repo("org/results", repo_type="dataset")
    fake_hub.commit("org/subs", {f"submissions/unidoc/demo/{p.name}": p.read_bytes() for p in UNIDOC_FILES[:2]})
    settings = StoreSettings(
        submissions_repo="org/subs",
        results_repo="org/results",
        hf_token=FAKE_TOKEN,
        hf_endpoint=fake_hub.url,
        data_dir=tmp_path / "a",
        hub_timeout=5,
    )
    board = Board(Settings(data_dir=tmp_path / "a", judge="none"), settings).start(background=False)
    return fake_hub, board, settings


def test_hub_pull_incremental_outage_and_recovery(hub_board, caplog, tmp_path):
    hub, board, _ = hub_board
    caplog.set_level(logging.DEBUG)
    assert len(board.entries("unidoc")) == 2 and "data as of" in board.status()["data_as_of"]
    hub.reset_counts()
    hub.commit("org/subs", {f"submissions/vdr/carol/{VDR_FILES[0].name}": VDR_FILES[0].read_bytes()})
    board.refresh()
    assert hub.downloads() == [f"submissions/vdr/carol/{VDR_FILES[0].name}"]  # only the new file
    assert [e.status for e in board.entries("vdr")] == ["scored"]

    hub.fail(500)
    board.refresh()
    assert len(board.entries()) == 3  # the last good results keep being served
    page = status_html(board)
    assert "unreachable" in page and FAKE_TOKEN not in page
    hub.ok()
    board.refresh()
    assert board.status()["banner"] is None
    assert FAKE_TOKEN not in caplog.text


def test_submit_through_the_hub_and_a_fresh_space_rescores_what_was_published(hub_board, tmp_path, monkeypatch):
    hub, board, settings = hub_board
    data = VDR_FILES[1].read_bytes()
    status = board.submit(user="dave", track="vdr", filename="run.jsonl", data=data, metadata={"note": "x"})
    assert status.ok
    stored = hub.files("org/subs")
    path = status.file.path
    assert stored[path] == data and f"{path}.meta.json" in stored
    assert any(e.path == path and e.status == "scored" for e in board.entries("vdr"))
    bad = board.submit(user="dave", track="vdr", filename="bad.jsonl", data=b"{", metadata={})
    assert bad.state == "invalid" and set(hub.files("org/subs")) == set(stored)  # nothing reached the repo
    assert any(p.startswith("results/") for p in hub.files("org/results"))  # results published

    # a fresh deployment (empty local cache) believes no published number: it rescores each submission once
    rescored = []
    real = scoring.score_checked
    monkeypatch.setattr(
        scoring, "score_checked", lambda checked, sha, *a, **k: rescored.append(sha) or real(checked, sha, *a, **k)
    )
    fresh = StoreSettings(**{**settings.__dict__, "data_dir": tmp_path / "fresh"})
    board2 = Board(Settings(data_dir=tmp_path / "fresh", judge="none"), fresh).start(background=False)
    assert sorted(e.id for e in board2.entries()) == sorted(e.id for e in board.entries())
    assert all(e.status == "scored" for e in board2.entries()) and len(rescored) == len(board.entries())
    assert {e.id: e.summary.overall for e in board2.entries()} == {e.id: e.summary.overall for e in board.entries()}


def test_a_restart_during_an_outage_serves_the_last_pull_from_disk(hub_board, tmp_path):
    hub, board, settings = hub_board
    ids = sorted(e.id for e in board.entries())
    hub.fail(500)
    restarted = Board(Settings(data_dir=tmp_path / "a", judge="none"), settings).start(background=False)
    assert sorted(e.id for e in restarted.entries()) == ids
    assert all(e.status == "scored" for e in restarted.entries())
    status = restarted.status()
    assert status["banner"] and "unreachable" in status["banner"] and "data as of" in status["data_as_of"]
    hub.ok()
    restarted.refresh()
    assert restarted.status()["banner"] is None and sorted(e.id for e in restarted.entries()) == ids


def test_a_misconfigured_judge_leaves_the_board_up_and_says_so(tmp_path, monkeypatch):
    monkeypatch.delenv("JUDGE_MODEL", raising=False)
    board = Board(Settings(data_dir=tmp_path, judge="openai", judge_model=""), StoreSettings(data_dir=tmp_path))
    board.start(background=False)
    assert board.judge is None and all(e.status == "scored" for e in board.entries())
    assert "openai judge not configured" in board.status()["judge"]
    assert all("completeness" not in e.summary.overall for e in board.entries("unidoc"))
