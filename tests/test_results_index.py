"""The results index: a restart serves every row from one file per track, and never trusts a bad or stale index.

Each test starts a board on the demo data (which writes the index), then damages
the index or the summaries it stands for the way a crash, a bad upload to
RESULTS_REPO or a hand edit would, restarts, and checks the rows and numbers
are the ones the summaries hold, and which summary files had to be read.
"""

from __future__ import annotations

import json
import logging
import pathlib
from pathlib import Path

import pytest

import leaderboard.results_index as results_index
import leaderboard.scoring as scoring
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.tracks import TRACKS
from leaderboard.ui import views

from hubfake import FAKE_TOKEN, fake_hub  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "assets" / "demo" / "submissions"
DEMO_SYSTEMS = sum(1 for p in DEMO.rglob("*") if p.is_file())


def local_board(data_dir: Path) -> Board:
    return Board(Settings(data_dir=data_dir, judge="none"), StoreSettings(data_dir=data_dir)).start(background=False)


def shown(board: Board) -> dict[str, tuple]:
    """Every system as the board shows it: status, name, headline numbers and CIs, every breakdown cell."""
    return {
        e.id: (
            e.status,
            e.name,
            json.dumps(e.summary.overall, sort_keys=True),
            json.dumps(e.summary.ci, sort_keys=True),
            json.dumps(results_index.plain(e.summary).get("breakdowns"), sort_keys=True),
        )
        for e in board.entries()
    }


@pytest.fixture
def summary_reads(monkeypatch):
    """Names of the results-cache summary files read (the index itself is not counted)."""
    reads: list[str] = []
    original = pathlib.Path.read_bytes

    def read_bytes(self):
        if self.suffix == ".json" and self.parent.name == "results" and "snapshots" not in self.parts:  # not downloads
            reads.append(self.name)
        return original(self)

    monkeypatch.setattr(pathlib.Path, "read_bytes", read_bytes)
    return reads


def index_file(data_dir: Path, key: str) -> Path:
    """The index file holding the row of results-cache key `key`."""
    return results_index.index_path(data_dir / "results", results_index.index_name(key))


def index_files(data_dir: Path, track: str) -> list[Path]:
    return sorted((data_dir / "results" / results_index.INDEX_DIR / track).glob("*.json"))


def test_a_restart_serves_every_row_from_the_index_without_reading_one_summary(tmp_path, summary_reads):
    before = shown(local_board(tmp_path))
    assert len(before) == DEMO_SYSTEMS
    assert all(index_files(tmp_path, t) for t in TRACKS)
    summary_reads.clear()
    board = local_board(tmp_path)
    assert shown(board) == before  # same rows, same numbers, breakdowns included
    assert summary_reads == []
    for track in TRACKS:  # tables, slices and details from index rows equal those from the summary files
        fresh = scoring.ResultsCache(tmp_path / "results")
        e = board.entries(track)[0]
        assert json.loads(json.dumps(fresh.load(e.key), default=dict)) == json.loads(json.dumps(e.summary, default=dict))
    e = next(e for e in board.entries("futurepedia") if e.status == "scored")
    html, breakdown, units = views.detail(board, e.id)
    assert e.name in html and len(breakdown) > 0 and len(units) > 0


def test_breakdowns_from_the_index_read_like_the_dict_they_stand_for(tmp_path):
    local_board(tmp_path)
    board = local_board(tmp_path)
    for e in board.entries():
        if e.status != "scored":
            continue
        lazy = e.summary.breakdowns
        assert isinstance(lazy, results_index.LazyBreakdowns)
        stored = json.loads((tmp_path / "results" / f"{e.key}.json").read_text())["breakdowns"]
        assert set(lazy) == set(stored) and len(lazy) == len(stored)
        for axis, cells in stored.items():
            assert axis in lazy and lazy.get(axis) == cells and lazy[axis] == cells
        assert lazy.get("no such axis", {}) == {} and "no such axis" not in lazy
        assert results_index.plain(e.summary)["breakdowns"] == stored  # JSON-ready, the same content
        with pytest.raises(TypeError):  # never silently written as {}
            json.dumps(e.summary)
    for track in TRACKS.values():
        for axis in track.slice_axes:
            value = next(iter(next(e for e in board.entries(track.name) if e.status == "scored").summary.breakdowns[axis]))
            assert not board.table(track.name, slice_=(axis, value)).empty


@pytest.mark.parametrize(
    "damage",
    [
        "garbage",
        "truncated",
        "a list",
        "another metric version",
        "a row of the wrong shape",
        "breakdowns not an object",
        "breakdowns for fewer rows",
        "no breakdowns line",
        "only the first line",
        "heads for fewer rows",
        "a head not an object",
        "an identity field not the head's",
        "an identity field the head lacks",
    ],
)
def test_a_damaged_index_is_ignored_logged_once_and_rebuilt_from_the_summaries(tmp_path, caplog, damage):
    first = local_board(tmp_path)
    before = shown(first)
    name = results_index.index_name(first.entries("vdr")[0].key)
    path = results_index.index_path(tmp_path / "results", name)
    raw = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"\x00\xff not json")
    elif damage == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "a list":
        path.write_text("[1, 2, 3]")
    elif damage == "no breakdowns line":
        path.write_bytes(b"\n".join(raw.split(b"\n")[:2]))
    elif damage == "only the first line":
        path.write_bytes(raw.split(b"\n")[0])
    else:  # the file's three lines: the rows (identity fields), their heads, then their breakdowns
        first, heads, breakdowns = (json.loads(line) for line in raw.split(b"\n"))
        if damage == "another metric version":
            first["metric_version"] = "0"
        elif damage == "a row of the wrong shape":
            first["rows"][0]["size"] = "12"
        elif damage == "breakdowns not an object":
            breakdowns[0] = [1, 2]
        elif damage == "heads for fewer rows":
            heads.pop()
        elif damage == "a head not an object":
            heads[0] = ["sha256", first["rows"][0]["sha256"]]
        elif damage == "an identity field not the head's":  # a row saying "scored" where its summary is not
            first["rows"][0]["status"], heads[0]["status"] = "scored", "invalid"
        elif damage == "an identity field the head lacks":
            heads[0].pop("fingerprint")
        else:
            breakdowns.pop()
        path.write_text("\n".join(json.dumps(line) for line in (first, heads, breakdowns)))
    caplog.set_level(logging.WARNING)
    board = local_board(tmp_path)
    assert shown(board) == before
    problems = [r.getMessage() for r in caplog.records if f"index/{name}.json" in r.getMessage()]
    assert len(problems) == (0 if damage == "another metric version" else 1)  # an older layout is not an error
    assert str(tmp_path) not in "".join(problems)
    if damage.startswith(("a head", "an identity")):
        assert ("head that is not an object" if damage.startswith("a head") else "identity fields") in problems[0]
    assert results_index.decode(path.read_bytes(), name, scoring.METRIC_VERSION)[1] is None  # rewritten, sound
    local_board(tmp_path)
    assert len([r for r in caplog.records if f"index/{name}.json" in r.getMessage()]) == len(problems)  # not again


def test_an_index_larger_than_its_summaries_can_justify_is_not_read(tmp_path, caplog, monkeypatch, summary_reads):
    before = shown(local_board(tmp_path))
    monkeypatch.setattr(results_index, "MAX_ROW_BYTES", 16)  # every real index is now "too large"
    monkeypatch.setattr(results_index, "INDEX_HEADER_BYTES", 0)
    decoded = []
    monkeypatch.setattr(results_index, "decode", lambda *a: decoded.append(a) or (None, "decoded"))
    caplog.set_level(logging.WARNING)
    summary_reads.clear()
    board = local_board(tmp_path)
    assert shown(board) == before
    assert decoded == []  # refused on its size, before reading it
    assert len(summary_reads) == DEMO_SYSTEMS
    assert any("over the" in r.getMessage() for r in caplog.records)


def test_a_summary_rewritten_after_the_index_is_read_from_its_file_and_healed(tmp_path, summary_reads):
    first = local_board(tmp_path)
    before = shown(first)
    a, b = sorted((e for e in first.entries("unidoc") if e.status == "scored"), key=lambda e: e.id)[:2]
    victim = tmp_path / "results" / f"{b.key}.json"
    victim.write_bytes((tmp_path / "results" / f"{a.key}.json").read_bytes())  # another entry's content
    summary_reads.clear()
    board = local_board(tmp_path)
    assert shown(board) == before
    assert summary_reads.count(victim.name) >= 1 and len(set(summary_reads)) == 1  # only the rewritten one
    assert json.loads(victim.read_text())["sha256"] == b.summary.sha256  # rescored and rewritten
    summary_reads.clear()
    assert shown(local_board(tmp_path)) == before and summary_reads == []  # the index has it again


def test_rows_whose_summary_or_units_file_is_gone_are_dropped_and_those_systems_rescored(tmp_path):
    first = local_board(tmp_path)
    before = shown(first)
    x, y = sorted((e for e in first.entries("vdr") if e.status == "scored"), key=lambda e: e.id)[:2]
    (tmp_path / "results" / f"{x.key}.json").unlink()
    (tmp_path / "results" / f"{y.key}.npz").unlink()
    board = local_board(tmp_path)
    assert shown(board) == before
    assert (tmp_path / "results" / f"{x.key}.json").is_file() and (tmp_path / "results" / f"{y.key}.npz").is_file()
    for k in (x.key, y.key):
        assert k in {r["key"] for r in json.loads(index_file(tmp_path, k).read_text().split("\n")[0])["rows"]}


def test_a_results_repo_index_is_never_installed_and_a_fresh_disk_writes_its_own(fake_hub, tmp_path, summary_reads):  # noqa: F811
    fake_hub.create_repo("org/subs", repo_type="dataset")
    fake_hub.create_repo("org/results", repo_type="dataset")
    files = sorted((DEMO / "vdr").glob("*.jsonl"))[:3]
    fake_hub.commit("org/subs", {f"submissions/vdr/demo/{p.name}": p.read_bytes() for p in files})

    def board(data_dir: Path) -> Board:
        settings = StoreSettings(
            submissions_repo="org/subs",
            results_repo="org/results",
            hf_token=FAKE_TOKEN,
            hf_endpoint=fake_hub.url,
            data_dir=data_dir,
            hub_timeout=5,
        )
        return Board(Settings(data_dir=data_dir, judge="none"), settings).start(background=False)

    first = board(tmp_path / "a")
    before = shown(first)
    published = fake_hub.files("org/results")
    victim = first.entries("vdr")[0]
    name = results_index.index_name(victim.key)
    assert f"results/index/{name}.json" in published
    fake_hub.commit("org/results", {f"results/index/{name}.json": b'{"format": 1, "rows": "nope"}'})
    fake_hub.reset_counts()
    assert shown(board(tmp_path / "b")) == before  # a fresh disk: every submission rescored
    assert not [p for p in fake_hub.downloads() if p.startswith("results/")]
    own = index_file(tmp_path / "b", victim.key).read_bytes()
    assert not own.startswith(b'{"format": 1, "rows": "nope"')
    assert fake_hub.files("org/results")[f"results/index/{name}.json"] == own  # its push replaced the edited index
    summary_reads.clear()
    assert shown(board(tmp_path / "b")) == before  # a restart of that disk: served from its own index
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
