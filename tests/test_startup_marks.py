"""Start-up without a stat per submission file: what this disk already hashed is served from one signature per
directory.

Local store (store/local.py): a directory's listing and its files' hashes are recorded with its signature; while
it holds, a restart neither lists the directory nor stats its files. Each test makes the store record its
signatures, changes the disk the way a writer does (a file renamed over another, a new file, a removal) or
damages it (garbage state), and checks that the change is noticed: the same hashes as a fresh read, and the
per-file checks run again where something changed. SETTLE_NS (how long a directory must stand unchanged before
its signature is recorded) is shortened to 30 ms here; the tests wait 60 ms where the store would wait for it.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import leaderboard.store.local as local
from leaderboard.store.local import HASHES_FILE, LocalStore
from leaderboard.store.naming import SUBMISSIONS_DIR

SETTLE_NS = 30_000_000


def settle() -> None:
    time.sleep(2 * SETTLE_NS / 1e9)


@pytest.fixture
def short_settle(monkeypatch):
    monkeypatch.setattr(local, "SETTLE_NS", SETTLE_NS)


def replace(path: Path, data: bytes) -> None:
    """Write as every writer of these folders does: a temp file renamed over the target."""
    tmp = path.with_name(f".tmp-test-{path.name}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


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
