"""Work done once: a file is validated once from upload to table row, gold is read once per process and track,
a batch run validates each file once, a verdict record answers without a judge.

The counts come from spies on the one validator (`scoring._check`, behind every `scoring.check`) and on each
track's gold reader (`Track.read_gold`, behind `Track.load_gold`'s per-process memo).
"""

from __future__ import annotations

import collections
from pathlib import Path

import pytest
from test_judge_batch import judged_board, run_worker
from test_pull_requests import ALICE, board_on, hub, open_pr, run  # noqa: F401 (hub: fixture)

import leaderboard.scoring as scoring
import leaderboard.tracks.base as tracks_base
from leaderboard import demo
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.tracks import TRACKS

from openaifake import FakeOpenAI


@pytest.fixture
def validations(monkeypatch) -> collections.Counter:
    """File name -> validations of it, from now on."""
    counts: collections.Counter = collections.Counter()
    validate = scoring._check
    monkeypatch.setattr(scoring, "_check", lambda data, name, *a: counts.update([name]) or validate(data, name, *a))
    return counts


@pytest.fixture
def gold_reads(monkeypatch) -> collections.Counter:
    """Track name -> gold reads, in what is for the gold a new process (its memo emptied)."""
    counts: collections.Counter = collections.Counter()
    monkeypatch.setattr(tracks_base, "_GOLD_CACHE", {})
    for cls in {type(t) for t in TRACKS.values()}:
        read = cls.read_gold

        def counted(self, path, read=read):
            counts.update([self.name])
            return read(self, path)

        monkeypatch.setattr(cls, "read_gold", counted)
    return counts


def test_an_upload_is_validated_once_from_submit_to_table_row_and_gold_read_once_per_track(
    tmp_path, validations, gold_reads, monkeypatch
):
    board = Board(Settings(data_dir=tmp_path, judge="none"), StoreSettings(data_dir=tmp_path)).start(background=False)
    demo_files = sum(validations.values())
    assert demo_files == len(board.entries())  # each demo file validated once at the first start
    validations.clear()
    gold_asked = collections.Counter()
    load = tracks_base.Track.load_gold
    monkeypatch.setattr(tracks_base.Track, "load_gold", lambda self, *a: gold_asked.update([self.name]) or load(self, *a))
    for seed, name in enumerate(TRACKS, start=7):
        filename, data = demo.make_submissions(name, demo.DEMO_DIR / "gold" / name, 1, seed=seed)[0]
        upload = tmp_path / "uploads" / filename
        upload.parent.mkdir(exist_ok=True)
        upload.write_bytes(data)
        status = board.submit_upload(user="alice", track=name, path=upload, overrides={"name": f"Uploaded {name}"})
        assert status.ok, status
        table = board.table(name)
        mine = next(e for e in board.entries(name) if e.user == "alice")
        assert mine.status == "scored" and mine.id in set(table["id"])  # on the board when Submit returns
        assert validations[filename] == 1, (name, validations)  # the Submit tab's validation, kept for the pull
        assert gold_asked[name] == 1, (name, gold_asked)  # once in that validation, whichever path read the file
        gold_asked.clear()
        # the row's numbers are the stored file's, as a scorer that never saw the upload makes them
        stored = board.refresher.snapshot.by_path()[mine.path].local_path.read_bytes()
        fresh = scoring.score_bytes(stored, filename)
        assert mine.summary.overall == fresh.summary.overall and mine.summary.sha256 == fresh.summary.sha256
    assert sum(validations.values()) == len(TRACKS) + len(TRACKS)  # the uploads, and the fresh scorings above
    assert gold_reads == {name: 1 for name in TRACKS}  # once per process and track, whatever was validated
    # A restart (another board, this process): everything from the results cache, nothing validated or read again.
    validations.clear()
    again = Board(Settings(data_dir=tmp_path, judge="none"), StoreSettings(data_dir=tmp_path)).start(background=False)
    assert len(again.entries()) == demo_files + len(TRACKS) and not validations
    assert gold_reads == {name: 1 for name in TRACKS}


@pytest.mark.parametrize("mode", ["batch", "live"])
def test_a_file_is_validated_once_from_pull_to_its_judged_row(tmp_path, validations, monkeypatch, mode):
    with FakeOpenAI() as fake:
        board = judged_board(tmp_path, fake, monkeypatch, mode)  # the pull scores each file unjudged
        waiting = [e for e in board.entries("unidoc") if e.judging]
        assert len(waiting) >= 3
        run_worker(board)  # the judge thread: the items and the judged score from the pull's validation
        assert len(fake.batches) == (3 if mode == "batch" else 0)  # batch: one run, one batch per round for them all
    assert validations == collections.Counter(Path(e.path).name for e in board.entries())
    assert all(not e.judging and e.summary.judge == "openai:fake-judge" for e in waiting)


def test_validations_beyond_the_hand_over_bound_are_made_again_by_the_judge(tmp_path, validations, monkeypatch):
    monkeypatch.setattr(scoring, "HANDOFF_RECORDS", 150)  # room for one demo unidoc file's validation (~100 records)
    with FakeOpenAI() as fake:
        board = judged_board(tmp_path, fake, monkeypatch, "batch")
        waiting = [Path(e.path).name for e in board.entries("unidoc") if e.judging]
        validations.clear()
        run_worker(board)
    # the last one the pull scored was kept, each of the others is validated again
    assert len(waiting) >= 3 and set(validations) < set(waiting) and validations.total() == len(waiting) - 1
    assert max(validations.values()) == 1


def test_an_upload_judged_after_its_row_shows_is_still_validated_once(tmp_path, validations):
    board = Board(Settings(data_dir=tmp_path, judge="lexical"), StoreSettings(data_dir=tmp_path)).start(background=False)
    run_worker(board)  # the demo files judged
    validations.clear()
    filename, data = demo.make_submissions("unidoc", demo.DEMO_DIR / "gold" / "unidoc", 1, seed=5)[0]
    status = board.submit(user="alice", track="unidoc", filename=filename, data=data, metadata={})
    assert status.ok, status
    (mine,) = [e for e in board.entries("unidoc") if e.user == "alice"]
    assert mine.judging and mine.summary.judge == "none"  # the row shows, its judged metrics to come
    run_worker(board)
    assert mine.summary.judge == "lexical-v1" and "completeness" in mine.summary.overall
    assert validations == {filename: 1}


def test_a_pull_request_file_is_validated_once_from_review_to_table_row(hub, tmp_path, validations):  # noqa: F811
    data = run(seed=41)
    open_pr(hub, ALICE, {"submissions/vdr/alice/run1.json": data})
    board = board_on(hub, tmp_path, auto_merge=True)  # reviewed (validated, scored, kept), merged
    board.refresh()  # the merge reaches main: the pull finds the review's result by content hash
    (entry,) = board.entries("vdr")
    assert (entry.user, entry.status, entry.pull_request) == ("alice", "scored", None)
    assert validations == {"run1.json": 1}
