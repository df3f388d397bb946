"""The results tables: a restart serves every row from one parquet table per track, and never trusts a bad or
stale one.

Each test starts a board on the demo data (which writes the tables), then damages
a table or the summaries it stands for the way a crash, a bad upload to
RESULTS_REPO or a hand edit would, restarts, and checks the rows and numbers
are the ones the summaries hold, and which summary files had to be read.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import msgspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_results_dataset import hub_board

import leaderboard.results as results
import leaderboard.scoring as scoring
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.tracks import TRACKS
from leaderboard.ui import views

from hubfake import fake_hub  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "assets" / "demo" / "submissions"
DEMO_SYSTEMS = sum(1 for p in DEMO.rglob("*") if p.is_file())


def local_board(data_dir: Path) -> Board:
    return Board(Settings(data_dir=data_dir, judge="none"), StoreSettings(data_dir=data_dir)).start(background=False)


def shown(board: Board) -> dict[str, tuple]:
    """Every system as the board shows it: status, name, headline numbers and CIs, every breakdown cell, both
    protocols."""
    out = {}
    for track in TRACKS:
        for e in board.entries(track, results.PARTS):
            s = e.summary
            out[e.id] = (
                e.status,
                e.name,
                *(
                    json.dumps(msgspec.to_builtins(getattr(s, k)), sort_keys=True)
                    for k in ("overall", "ci", "breakdowns", "official", "deviations")
                ),
            )
    return out


@pytest.fixture
def summary_reads(monkeypatch):
    """Keys of the results-cache summary files read (the tables are not counted)."""
    reads: list[str] = []
    original = scoring.ResultsCache.load

    def load(self, key):
        if key not in self._rows:
            reads.append(key)
        return original(self, key)

    monkeypatch.setattr(scoring.ResultsCache, "load", load)
    return reads


def table_file(data_dir: Path, track: str) -> Path:
    return results.table_path(data_dir / "results", track)


def test_a_restart_serves_every_row_from_the_tables_without_reading_one_summary(tmp_path, summary_reads):
    before = shown(local_board(tmp_path))
    assert len(before) == DEMO_SYSTEMS
    assert all(table_file(tmp_path, t).is_file() for t in TRACKS)
    summary_reads.clear()
    board = local_board(tmp_path)
    assert summary_reads == []
    assert shown(board) == before  # same rows, same numbers, breakdowns and the official protocol included
    for track in TRACKS:  # a row from a table equals the summary read from its own file
        fresh = scoring.ResultsCache(tmp_path / "results")
        fresh._by_sha = {}  # no tables: from the file
        e = board.entries(track, results.PARTS)[0]
        assert fresh.load(e.key) == e.summary
    e = next(e for e in board.entries("futurepedia") if e.status == "scored")
    html, breakdown, units = views.detail(board, e.id)
    assert e.name in html and len(breakdown) > 0 and len(units) > 0


def test_a_track_is_handed_out_complete_and_its_official_part_read_only_when_asked(tmp_path):
    local_board(tmp_path)
    board = local_board(tmp_path)
    track = next(t for t in TRACKS.values() if t.deviations)
    heads = [e for e in board.entries(track.name, ()) if e.status == "scored"]  # a start read the identities only
    assert heads and all(e.summary.breakdowns is results.UNSET and e.summary.overall for e in heads)
    entries = board.entries(track.name)
    assert all(e.summary.breakdowns is not results.UNSET for e in entries)
    assert all(e.summary.official is results.UNSET for e in entries if e.status == "scored")
    e = board.entry(next(e.id for e in entries if e.status == "scored"))
    assert results.complete(e.summary) and isinstance(e.summary.official, results.Protocol)
    for name in TRACKS:  # what the pages read: never UNSET
        assert all(results.complete(x.summary) for x in board.entries(name, results.PARTS))
    for t in TRACKS.values():
        for axis in t.slice_axes:
            value = next(iter(next(x for x in board.entries(t.name) if x.status == "scored").summary.breakdowns[axis]))
            assert not board.table(t.name, slice_=(axis, value)).empty


def _rewrite(path: Path, change) -> None:
    table = pq.read_table(path)
    pq.write_table(change(table), path)


@pytest.mark.parametrize(
    "damage",
    [
        "garbage",
        "truncated",
        "another metric version",
        "another schema",
        "a head that is not a summary",
        "an identity column that does not make its key",
        "a row whose size differs",
    ],
)
def test_a_damaged_table_is_ignored_logged_once_and_rebuilt_from_the_summaries(tmp_path, caplog, damage, summary_reads):
    first = local_board(tmp_path)
    before = shown(first)
    path = table_file(tmp_path, "vdr")
    raw = path.read_bytes()
    meta = {b"format": results.TABLE_FORMAT.encode(), b"metric_version": scoring.METRIC_VERSION.encode()}

    def column(table, name, values):
        return table.set_column(table.schema.get_field_index(name), name, pa.array(values, table.schema.field(name).type))

    if damage == "garbage":
        path.write_bytes(b"\x00\xff not parquet")
    elif damage == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "another metric version":
        _rewrite(path, lambda t: t.replace_schema_metadata({**meta, b"metric_version": b"0"}))
    elif damage == "another schema":
        _rewrite(path, lambda t: t.drop_columns(["mtime_ns"]))
    elif damage == "a head that is not a summary":
        _rewrite(path, lambda t: column(t, "head", [b'{"sha256": 12}', *t.column("head").to_pylist()[1:]]))
    elif damage == "an identity column that does not make its key":  # another gold than the row's key names
        _rewrite(path, lambda t: column(t, "gold_sha256", ["0" * 64, *t.column("gold_sha256").to_pylist()[1:]]))
    else:
        _rewrite(path, lambda t: column(t, "size", [1, *t.column("size").to_pylist()[1:]]))
    caplog.set_level(logging.WARNING)
    summary_reads.clear()
    board = local_board(tmp_path)
    assert shown(board) == before
    problems = [r.getMessage() for r in caplog.records if "tables/vdr.parquet" in r.getMessage()]
    whole = damage not in ("an identity column that does not make its key", "a row whose size differs")
    assert len(problems) == (1 if whole else 0) and str(tmp_path) not in "".join(problems)
    vdr_rows = sum(1 for e in board.entries("vdr"))
    assert len(set(summary_reads)) == (vdr_rows if whole else 1)  # only what the table could not vouch for
    board.rescorer.cache.write_tables()  # what the board does after its next change (a column read late: its heads)
    assert results.read_table(path, scoring.METRIC_VERSION) is not None  # rewritten, sound
    summary_reads.clear()
    assert shown(local_board(tmp_path)) == before and summary_reads == []  # the table has them again
    assert len([r for r in caplog.records if "tables/vdr.parquet" in r.getMessage()]) == len(problems)  # not again


def test_a_summary_rewritten_after_the_table_is_read_from_its_file_and_healed(tmp_path, summary_reads):
    first = local_board(tmp_path)
    before = shown(first)
    a, b = sorted((e for e in first.entries("unidoc") if e.status == "scored"), key=lambda e: e.id)[:2]
    victim = tmp_path / "results" / f"{b.key}.json"
    victim.write_bytes((tmp_path / "results" / f"{a.key}.json").read_bytes())  # another entry's content
    summary_reads.clear()
    board = local_board(tmp_path)
    assert shown(board) == before
    assert set(summary_reads) == {b.key}  # only the rewritten one
    assert json.loads(victim.read_text())["sha256"] == b.summary.sha256  # rescored and rewritten
    summary_reads.clear()
    assert shown(local_board(tmp_path)) == before and summary_reads == []  # the table has it again


def test_a_summary_edited_in_place_with_its_size_kept_is_read_from_its_file(tmp_path, summary_reads):
    first = local_board(tmp_path)
    e = next(e for e in first.entries("vdr") if e.status == "scored")
    path = tmp_path / "results" / f"{e.key}.json"
    st = path.stat()
    path.write_bytes(path.read_bytes())  # same bytes, a new modification time: no longer the file the row took
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000))
    summary_reads.clear()
    local_board(tmp_path)
    assert summary_reads == [e.key]


def test_rows_whose_summary_or_units_file_is_gone_are_dropped_and_those_systems_rescored(tmp_path):
    first = local_board(tmp_path)
    before = shown(first)
    x, y = sorted((e for e in first.entries("vdr") if e.status == "scored"), key=lambda e: e.id)[:2]
    (tmp_path / "results" / f"{x.key}.json").unlink()
    (tmp_path / "results" / f"{y.key}.npz").unlink()
    board = local_board(tmp_path)
    assert shown(board) == before
    assert (tmp_path / "results" / f"{x.key}.json").is_file() and (tmp_path / "results" / f"{y.key}.npz").is_file()
    keys = set(pq.read_table(table_file(tmp_path, "vdr"), columns=["key"]).column("key").to_pylist())
    assert {x.key, y.key} <= keys


def test_an_unchanged_restart_rewrites_no_table(tmp_path):
    local_board(tmp_path)
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "results" / results.TABLES_DIR).glob("*.parquet")}
    board = local_board(tmp_path)
    assert board.rescorer.cache.write_tables() == []
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps


def test_a_results_repo_table_is_never_installed_and_a_fresh_disk_writes_its_own(fake_hub, tmp_path, summary_reads):  # noqa: F811
    fake_hub.create_repo("org/subs", repo_type="dataset")
    fake_hub.create_repo("org/results", repo_type="dataset")
    files = sorted((DEMO / "vdr").glob("*.jsonl"))[:3]
    fake_hub.commit("org/subs", {f"submissions/vdr/demo/{p.name}": p.read_bytes() for p in files})

    def board(data_dir: Path) -> Board:
        return hub_board(fake_hub, data_dir)

    first = board(tmp_path / "a")
    before = shown(first)
    published = fake_hub.files("org/results")
    assert "results/tables/vdr.parquet" in published
    fake_hub.commit("org/results", {"results/tables/vdr.parquet": b"not a table"})
    fake_hub.reset_counts()
    assert shown(board(tmp_path / "b")) == before  # a fresh disk: every submission rescored
    assert not [p for p in fake_hub.downloads() if p.startswith("results/")]
    own = table_file(tmp_path / "b", "vdr").read_bytes()
    assert fake_hub.files("org/results")["results/tables/vdr.parquet"] == own  # its push replaced the edited table
    summary_reads.clear()
    assert shown(board(tmp_path / "b")) == before  # a restart of that disk: served from its own table
    assert summary_reads == []


def test_a_restarted_local_store_reads_no_unchanged_submission_and_never_trusts_a_stale_hash(tmp_path, monkeypatch):
    from leaderboard.store.local import HASHES_FILE, LocalStore

    root = tmp_path / "local"
    first = {f.path: f.sha256 for f in LocalStore(root, demo_dir=DEMO).pull().files}
    assert len(first) == DEMO_SYSTEMS
    opened: list[str] = []
    original = open

    def spy(file, *args, **kwargs):
        if str(file).startswith(str(DEMO)):
            opened.append(str(file))
        return original(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", spy)
    assert {f.path: f.sha256 for f in LocalStore(root, demo_dir=DEMO).pull().files} == first
    assert opened == []  # every hash from the saved ones

    # One saved hash is wrong for its file as it is now (rewritten in place, its size and mtime restored):
    # its ctime differs, so the file is read and hashed again.
    saved = json.loads((root / HASHES_FILE).read_text())
    victim = sorted(saved["files"])[0]
    saved["files"][victim][2] -= 1
    saved["files"][victim][3] = "0" * 64
    (root / HASHES_FILE).write_text(json.dumps(saved))
    assert {f.path: f.sha256 for f in LocalStore(root, demo_dir=DEMO).pull().files} == first
    assert opened == [victim]

    (root / HASHES_FILE).write_text("[garbage")  # unreadable: everything is hashed again, nothing wrong
    opened.clear()
    assert {f.path: f.sha256 for f in LocalStore(root, demo_dir=DEMO).pull().files} == first
    assert len(opened) == DEMO_SYSTEMS
