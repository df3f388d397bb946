"""Start-up without a stat per submission: what this disk already checked is served from one signature per folder.

Results index (results_index.py, "marks"): an index file whose rows were all checked at a start is marked with
the signature of the results folder and of the file; while the mark holds, a restart serves its rows without
the per-row checks. Local store (store/local.py): a directory's listing and its files' hashes are recorded with
its signature; while it holds, a restart neither lists the directory nor stats its files.

Each test makes the board (or store) record its signatures, changes the disk the way a writer does (a file
renamed over another, a new file, a removal) or damages it (an index file edited in place, garbage state), and
checks that the change is noticed: the same rows and hashes as a fresh read, and the per-row / per-file checks
run again where something changed. SETTLE_NS (how long a folder must stand unchanged before its signature is
recorded) is shortened to 30 ms here; the tests wait 60 ms where the board would wait for it.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import leaderboard.results_index as results_index
import leaderboard.store.local as local
from leaderboard.scoring import METRIC_VERSION, ResultsCache
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.store.local import HASHES_FILE, LocalStore
from leaderboard.store.naming import SUBMISSIONS_DIR

from appserver import place_submission

SETTLE_NS = 30_000_000


def settle() -> None:
    time.sleep(2 * SETTLE_NS / 1e9)


@pytest.fixture
def short_settle(monkeypatch):
    monkeypatch.setattr(results_index, "SETTLE_NS", SETTLE_NS)
    monkeypatch.setattr(local, "SETTLE_NS", SETTLE_NS)


@pytest.fixture
def row_checks(monkeypatch):
    """Keys of the index rows checked one by one (stat, size, age, soundness, per-unit file)."""
    checked: list[str] = []
    original = ResultsCache._row_summary

    def spy(self, row, *args):
        checked.append(row.key)
        return original(self, row, *args)

    monkeypatch.setattr(ResultsCache, "_row_summary", spy)
    return checked


def local_board(data_dir: Path) -> Board:
    return Board(Settings(data_dir=data_dir, judge="none"), StoreSettings(data_dir=data_dir)).start(background=False)


def shown(board: Board) -> dict[str, tuple]:
    return {
        e.id: (e.status, e.name, json.dumps(e.summary.overall, sort_keys=True), json.dumps(e.summary.ci))
        for e in board.entries()
    }


def marked_board(data_dir: Path, row_checks: list[str]) -> dict[str, tuple]:
    """Start three times: the index is built, then checked row by row and marked, then served from its marks."""
    before = shown(local_board(data_dir))
    settle()
    row_checks.clear()
    assert shown(local_board(data_dir)) == before
    assert row_checks, "the second start checks every row"
    marks = json.loads((data_dir / "results" / results_index.INDEX_DIR / results_index.MARKS_FILE).read_text())
    assert marks and all(results_index.index_path(data_dir / "results", name).is_file() for name in marks)
    row_checks.clear()
    assert shown(local_board(data_dir)) == before
    assert row_checks == []  # every row served from the marked index: no stat, no check per row
    return before


def replace(path: Path, data: bytes) -> None:
    """Write as every writer of these folders does: a temp file renamed over the target."""
    tmp = path.with_name(f".tmp-test-{path.name}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def test_a_marked_index_serves_every_row_without_a_check_per_row(tmp_path, short_settle, row_checks):
    marked_board(tmp_path, row_checks)


def test_a_marked_start_reads_no_index_file_beyond_its_first_line(tmp_path, short_settle, row_checks, monkeypatch):
    """A start from marked files reads each index file's first line (every row's identity: a twentieth of its
    bytes) and nothing after it; the first read of a row's breakdowns reads the rest of its file once and decodes
    its breakdowns line once, and they read as stored."""
    marked_board(tmp_path, row_checks)
    reads: list[str] = []  # the index files whose rest (heads and breakdowns lines) was read
    decoded: list[str] = []  # those whose breakdowns line was decoded
    split, breakdowns = results_index._Rest._split, results_index._Rest.breakdowns

    def spy_split(self, data, start):
        reads.append(str(self.path))
        return split(self, data, start)

    def spy_breakdowns(self, i):
        if self._raws is None:
            decoded.append(str(self.path))
        return breakdowns(self, i)

    monkeypatch.setattr(results_index._Rest, "_split", spy_split)
    monkeypatch.setattr(results_index._Rest, "breakdowns", spy_breakdowns)
    board = local_board(tmp_path)
    assert row_checks == [] and reads == [] and decoded == []
    scored = [e for e in board.entries() if e.status == "scored"]
    e = scored[0]
    stored = json.loads((tmp_path / "results" / f"{e.key}.json").read_text())["breakdowns"]
    assert results_index.plain(e.summary)["breakdowns"] == stored and len(reads) == len(decoded) == 1
    assert all(results_index.plain(x.summary)["breakdowns"] for x in scored)  # each file's rest read once
    files = {str(results_index.index_path(tmp_path / "results", results_index.index_name(x.key))) for x in scored}
    assert sorted(reads) == sorted(decoded) == sorted(files)


def test_a_marked_start_decodes_no_head_beyond_its_identity(tmp_path, short_settle, row_checks, monkeypatch):
    """A start (and a refresh) from marked files reads each summary's identity (sha256, track, status,
    fingerprint) from its index row and decodes no head: a head is decoded when something else of it is first
    read (a track's table), and every summary then reads as its stored file, absent identity fields absent."""
    place_submission(tmp_path, "vdr", "mallory", b"not a submission\n")  # invalid: a summary without fingerprint
    marked_board(tmp_path, row_checks)
    decoded: list[str] = []
    original = results_index.LazySummary._decoded

    def spy(self):
        if self._summary is None:
            decoded.append(self._row.key)
        return original(self)

    monkeypatch.setattr(results_index.LazySummary, "_decoded", spy)
    board = local_board(tmp_path)
    board.refresh()
    entries = board.entries()
    assert row_checks == [] and decoded == [] and entries
    assert all(isinstance(e.summary, results_index.LazySummary) for e in entries if e.key)
    invalid = 0
    for i, e in enumerate(entries):
        stored = json.loads((tmp_path / "results" / f"{e.key}.json").read_text())
        for k in results_index.IDENTITY:
            assert (k in e.summary, e.summary.get(k, "absent")) == (k in stored, stored.get(k, "absent"))
        invalid += "fingerprint" not in stored
        assert len(decoded) == i  # the identity read, nothing decoded
        assert results_index.plain(e.summary) == stored and decoded[-1] == e.key
        assert e.summary.fingerprint == stored.get("fingerprint", "absent")  # decoded: the dict's own
    assert invalid == 1  # the absent case covered
    assert len(decoded) == len(entries)


def test_a_marked_start_lists_the_results_folder_only_for_a_key_it_lacks(tmp_path, short_settle, row_checks, monkeypatch):
    """While the folder is as marked, the marked index files are read without listing it (ResultsCache._load_marked);
    a submission none of them holds (a new one) makes the board list it once, and the marked files are not read or
    checked again."""
    before = marked_board(tmp_path, row_checks)
    results, listings, listdir = str(tmp_path / "results"), [], os.listdir

    def spy(path="."):
        listings.append(str(path))
        return listdir(path)

    monkeypatch.setattr(os, "listdir", spy)
    assert shown(local_board(tmp_path)) == before
    assert results not in listings and row_checks == []
    LocalStore(tmp_path / "local").submit("vdr", "late", "jsonl", b'{"system": {"name": "late"}}\n', {})
    listings.clear()
    board = local_board(tmp_path)
    assert {i: row for i, row in shown(board).items() if i in before} == before
    assert len(shown(board)) == len(before) + 1  # the new file: no result yet, scored (invalid here) and stored
    assert listings.count(results) == 1 and row_checks == []


def test_a_summary_renamed_over_after_marking_is_noticed_and_healed(tmp_path, short_settle, row_checks):
    before = marked_board(tmp_path, row_checks)
    board = local_board(tmp_path)
    a, b = sorted((e for e in board.entries("unidoc") if e.status == "scored"), key=lambda e: e.id)[:2]
    victim = tmp_path / "results" / f"{b.key}.json"
    replace(victim, (tmp_path / "results" / f"{a.key}.json").read_bytes())  # another entry's content
    row_checks.clear()
    assert shown(local_board(tmp_path)) == before
    assert b.key in row_checks  # the folder changed: its rows checked again, the replaced one found out
    assert json.loads(victim.read_text())["sha256"] == b.summary.sha256  # rescored and rewritten


def test_a_summary_or_units_file_removed_after_marking_is_rescored(tmp_path, short_settle, row_checks):
    before = marked_board(tmp_path, row_checks)
    board = local_board(tmp_path)
    x, y = sorted((e for e in board.entries("vdr") if e.status == "scored"), key=lambda e: e.id)[:2]
    (tmp_path / "results" / f"{x.key}.json").unlink()
    (tmp_path / "results" / f"{y.key}.npz").unlink()
    row_checks.clear()
    assert shown(local_board(tmp_path)) == before
    assert row_checks
    assert (tmp_path / "results" / f"{x.key}.json").is_file() and (tmp_path / "results" / f"{y.key}.npz").is_file()


def test_an_index_file_edited_in_place_after_marking_loses_its_mark(tmp_path, short_settle, row_checks):
    before = marked_board(tmp_path, row_checks)
    name = results_index.index_name(local_board(tmp_path).entries("futurepedia")[0].key)
    path = results_index.index_path(tmp_path / "results", name)
    st = os.stat(path)
    with open(path, "r+b") as fh:  # the same bytes, size and mtime: only its ctime tells (no tool sets that back)
        first = fh.read(1)
        fh.seek(0)
        fh.write(first)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_mtime_ns == st.st_mtime_ns and os.stat(path).st_size == st.st_size
    row_checks.clear()
    assert shown(local_board(tmp_path)) == before
    assert {results_index.index_name(k) for k in row_checks} == {name}  # only that file's rows checked again


@pytest.mark.parametrize("damage", ["garbage", "oversized", "another folder's signature"])
def test_bad_or_foreign_marks_only_cost_checking_every_row(tmp_path, short_settle, row_checks, damage):
    before = marked_board(tmp_path, row_checks)
    marks_file = tmp_path / "results" / results_index.INDEX_DIR / results_index.MARKS_FILE
    if damage == "garbage":
        marks_file.write_bytes(b"\x00 not json [")
    elif damage == "oversized":  # valid marks padded past the bound: not read at all
        marks_file.write_bytes(marks_file.read_bytes() + b" " * (results_index.INDEX_HEADER_BYTES * 64))
    else:  # marks copied from another disk (or written for the folder as it was): they do not hold here
        marks = json.loads(marks_file.read_text())
        marks_file.write_text(json.dumps({n: [[m[0][0] + 1, *m[0][1:]], m[1]] for n, m in marks.items()}))
    row_checks.clear()
    assert shown(local_board(tmp_path)) == before
    assert row_checks
    settle()
    row_checks.clear()
    assert shown(local_board(tmp_path)) == before and row_checks == []  # marked again


def test_a_fresh_index_is_not_marked_until_it_has_stood_unchanged(tmp_path, row_checks):
    """With the real SETTLE_NS, the start right after the index was written checks every row again."""
    before = shown(local_board(tmp_path))
    row_checks.clear()
    assert shown(local_board(tmp_path)) == before
    assert row_checks
    assert not (tmp_path / "results" / results_index.INDEX_DIR / results_index.MARKS_FILE).exists()


# ---- the local store ------------------------------------------------------------------------------------------

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def submit_some(root: Path) -> LocalStore:
    t = [NOW]

    def clock():
        t[0] += timedelta(minutes=1)
        return t[0]

    store = LocalStore(root, submissions_per_day=50, clock=clock)
    for i in range(6):
        track, user = ("unidoc", "vdr")[i % 2], f"user{i % 3}"
        store.submit(track, user, "jsonl", json.dumps({"system": {"name": f"s{i}"}, "i": i}).encode() + b"\n", {})
    return store


@pytest.fixture
def file_reads(monkeypatch):
    """Paths stat'ed one by one, and directories listed, under the submissions folder."""
    seen = {"stat": [], "scandir": []}
    stat, scandir = os.stat, os.scandir

    def spy_stat(path, *args, **kwargs):  # the store stats a file by its path string (Path.stat calls it too)
        p = Path(path)
        if SUBMISSIONS_DIR in p.parts and p.suffix != "" and not p.name.startswith("."):
            seen["stat"].append(p.name)
        return stat(path, *args, **kwargs)

    def spy_scandir(path="."):
        if f"/{SUBMISSIONS_DIR}" in str(path):
            seen["scandir"].append(str(path))
        return scandir(path)

    monkeypatch.setattr(os, "stat", spy_stat)
    monkeypatch.setattr(os, "scandir", spy_scandir)
    return seen


def hashes(store: LocalStore) -> dict[str, str]:
    return {f.path: f.sha256 for f in store.pull().files}


def truth(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (root / SUBMISSIONS_DIR).rglob("*.jsonl")
    }


def test_a_restarted_store_lists_no_recorded_directory_and_stats_no_file(tmp_path, short_settle, file_reads):
    root = tmp_path / "local"
    submit_some(root)
    settle()
    expected = truth(root)
    assert hashes(LocalStore(root)) == expected  # hashed, directories recorded
    file_reads["stat"].clear(), file_reads["scandir"].clear()
    assert hashes(LocalStore(root)) == expected
    assert file_reads == {"stat": [], "scandir": []}


@pytest.mark.parametrize("change", ["a new submission", "a file renamed over another", "a file removed", "garbage state"])
def test_a_changed_directory_is_listed_and_hashed_again(tmp_path, short_settle, file_reads, change):
    root = tmp_path / "local"
    store = submit_some(root)
    settle()
    hashes(LocalStore(root))
    files = sorted((root / SUBMISSIONS_DIR).rglob("*.jsonl"))
    changed = files[0].parent
    if change == "a new submission":
        changed = root / store.submit("unidoc", "user0", "jsonl", b'{"system": {"name": "late"}}\n', {}).path
        changed = changed.parent
    elif change == "a file renamed over another":
        replace(files[0], b'{"system": {"name": "rewritten"}}\n')
    elif change == "a file removed":
        files[0].unlink()
    else:
        (root / HASHES_FILE).write_bytes(b"\xff[garbage")
    expected = truth(root)
    file_reads["stat"].clear(), file_reads["scandir"].clear()
    assert hashes(LocalStore(root)) == expected  # at once: the change is seen before it settles
    if change != "garbage state":  # only the changed directory is listed again
        assert file_reads["scandir"] == [str(changed)]
    else:
        assert len(file_reads["stat"]) == len(expected)  # every file checked again
    settle()
    assert hashes(LocalStore(root)) == expected  # now settled: recorded again
    file_reads["stat"].clear(), file_reads["scandir"].clear()
    assert hashes(LocalStore(root)) == expected
    assert file_reads == {"stat": [], "scandir": []}


def test_a_fresh_directory_is_not_recorded_until_it_has_stood_unchanged(tmp_path, file_reads):
    """With the real SETTLE_NS, the directories just written are listed again at the next start."""
    root = tmp_path / "local"
    submit_some(root)
    expected = truth(root)
    hashes(LocalStore(root))
    file_reads["scandir"].clear()
    assert hashes(LocalStore(root)) == expected
    assert file_reads["scandir"]


def test_a_submission_between_two_pulls_never_makes_a_stale_hash_look_recorded(tmp_path, short_settle):
    """A submit lists its track's directories; it must not record one whose files it did not hash again."""
    root = tmp_path / "local"
    store = submit_some(root)
    settle()
    hashes(store)  # every directory recorded, every hash cached
    victim = sorted((root / SUBMISSIONS_DIR).rglob("*.jsonl"))[0]
    replace(victim, b'{"system": {"name": "rewritten"}}\n')
    settle()
    track = victim.relative_to(root / SUBMISSIONS_DIR).parts[0]
    store.submit(track, "newcomer", "jsonl", b'{"system": {"name": "late"}}\n', {})  # another directory of the track
    assert hashes(store) == truth(root)
    assert hashes(LocalStore(root)) == truth(root)


@pytest.mark.parametrize("summary_gone_too", [False, True])
def test_an_index_file_changed_after_a_marked_start_gives_way_to_the_summaries_own_files(
    tmp_path, short_settle, row_checks, caplog, summary_gone_too
):
    """A start from marked files reads the rest of an index file (heads, breakdowns) when first needed, and only
    from the file as it was marked: one cut in place since (by hand) is not read, logged once; the summaries it
    held are read from their own files, and one whose file is gone too reads as what is known of it, a precise
    error, rescored at the next start. The next write of the index leaves out what could not be read back."""
    before = marked_board(tmp_path, row_checks)
    board = local_board(tmp_path)
    e = next(e for e in board.entries("vdr") if e.status == "scored")
    name = results_index.index_name(e.key)
    path = results_index.index_path(tmp_path / "results", name)
    summary_file = tmp_path / "results" / f"{e.key}.json"
    stored = json.loads(summary_file.read_text())
    data = path.read_bytes()
    with open(path, "r+b") as fh:  # in place: the same inode, as marked
        fh.truncate(data.index(b"\n") + 10)
    if summary_gone_too:
        summary_file.unlink()
    caplog.set_level("WARNING")
    if summary_gone_too:
        assert results_index.plain(e.summary) == {
            **{k: stored[k] for k in results_index.IDENTITY if k in stored},
            "errors": ["results cache: this result could not be read back; it is rescored at the next start"],
            "error_count": 1,
        }
    else:
        assert results_index.plain(e.summary) == stored
    assert len(board.table("vdr")) == len(board.entries("vdr"))  # every row of the file drawn, none lost
    assert [r.getMessage() for r in caplog.records if f"results index {name}" in r.getMessage()] == [
        f"results index {name}.json cannot be read back (changed since it was marked); its summaries are read "
        "from their own files"
    ]
    board.rescorer.cache._dirty.add(name)
    board.rescorer.cache.write_index()
    assert results_index.decode(path.read_bytes(), name, METRIC_VERSION)[1] is None
    assert shown(local_board(tmp_path)) == before  # whole again (the result whose file was gone: rescored)
