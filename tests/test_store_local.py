"""LocalStore (the offline default), settings, naming and the refresher's bookkeeping."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from leaderboard.store import (
    DuplicateSubmission,
    InvalidName,
    LocalStore,
    RateLimited,
    Refresher,
    StoreSettings,
    StoreUnavailable,
    open_store,
    submit_checked,
)
from leaderboard.store.model import Snapshot
from leaderboard.store.naming import (
    extension_of,
    parse_submission_path,
    submission_path,
)

NOW = datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)


def jsonl(track: str, name: str) -> bytes:
    return (json.dumps({"track": track, "system": {"name": name}}) + "\n" + json.dumps({"id": 1}) + "\n").encode()


@pytest.fixture
def demo(tmp_path) -> Path:
    folder = tmp_path / "demo"
    (folder / "unidoc").mkdir(parents=True)
    (folder / "vdr").mkdir()
    (folder / "unidoc" / "text-baseline.jsonl").write_bytes(jsonl("unidoc", "text baseline"))
    (folder / "vdr" / "colpali.jsonl.gz").write_bytes(gzip.compress(jsonl("vdr", "colpali")))
    (folder / "vdr" / "README.md").write_text("not a submission")
    return folder


@pytest.fixture
def store(tmp_path, demo) -> LocalStore:
    return LocalStore(tmp_path / "local", demo_dir=demo, submissions_per_day=3, clock=lambda: NOW)


def test_demo_submissions_count_as_submissions(store, demo):
    snap = store.pull()
    assert {(f.path, f.track, f.user) for f in snap.files} == {
        ("demo/unidoc/text-baseline.jsonl", "unidoc", "demo"),
        ("demo/vdr/colpali.jsonl.gz", "vdr", "demo"),
    }
    f = snap.by_path()["demo/unidoc/text-baseline.jsonl"]
    assert f.local_path == demo / "unidoc" / "text-baseline.jsonl"
    assert f.sha256 == hashlib.sha256(f.local_path.read_bytes()).hexdigest()
    assert snap.commit.startswith("local-") and snap.source.startswith("local:")


def test_submit_writes_file_and_metadata_and_next_pull_reports_it(store, tmp_path):
    first = store.pull()
    data = jsonl("unidoc", "alice-rag")
    stored = store.submit("unidoc", "alice", ".JSONL", data, {"system": {"name": "alice-rag"}})
    digest = hashlib.sha256(data).hexdigest()
    assert stored.path == f"submissions/unidoc/alice/20260506T070809Z-{digest[:12]}.jsonl"
    assert (tmp_path / "local" / stored.path).read_bytes() == data
    meta = json.loads((tmp_path / "local" / (stored.path + ".meta.json")).read_text())
    assert meta["system"] == {"name": "alice-rag"} and meta["sha256"] == digest and meta["user"] == "alice"

    snap = store.pull()
    assert snap.changed == [stored.path]
    assert snap.commit != first.commit
    assert snap.by_path()[stored.path].metadata == meta
    assert store.pull().changed == []


def test_duplicates_rate_limit_and_names(store):
    store.submit("unidoc", "alice", "jsonl", jsonl("unidoc", "a"), {})
    with pytest.raises(DuplicateSubmission, match="already submitted"):
        store.submit("unidoc", "bob", "jsonl", jsonl("unidoc", "a"), {})
    demo_bytes = jsonl("unidoc", "text baseline")
    with pytest.raises(DuplicateSubmission) as err:
        store.submit("unidoc", "bob", "jsonl", demo_bytes, {})
    assert err.value.existing == "demo/unidoc/text-baseline.jsonl"
    store.submit("unidoc", "alice", "jsonl", jsonl("unidoc", "b"), {})
    store.submit("unidoc", "alice", "json", jsonl("unidoc", "c"), {})
    with pytest.raises(RateLimited, match="3 submission"):
        store.submit("unidoc", "alice", "jsonl", jsonl("unidoc", "d"), {})
    for bad in [
        ("../x", "alice", "jsonl"),
        ("unidoc", "a/b", "jsonl"),
        ("unidoc", "alice", "csv"),
    ]:
        with pytest.raises(InvalidName):
            store.submit(*bad, b"data", {})


def test_rate_limit_resets_on_the_next_utc_day(tmp_path):
    now = [NOW]
    store = LocalStore(tmp_path, submissions_per_day=1, clock=lambda: now[0])
    store.submit("vdr", "alice", "jsonl", b"1", {})
    with pytest.raises(RateLimited):
        store.submit("vdr", "alice", "jsonl", b"2", {})
    now[0] = NOW.replace(hour=23, minute=59) + timedelta(minutes=2)
    store.submit("vdr", "alice", "jsonl", b"2", {})


def test_concurrent_local_submitters_never_overwrite(tmp_path):
    store = LocalStore(tmp_path, submissions_per_day=100)
    barrier = threading.Barrier(8)
    errors: list[Exception] = []

    def run(i):
        barrier.wait()
        try:
            store.submit("unidoc", f"user{i % 2}", "jsonl", jsonl("unidoc", f"s{i}"), {"i": i})
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    snap = store.pull()
    assert len(snap.files) == 8
    assert sorted(f.metadata["i"] for f in snap.files) == list(range(8))
    assert all(f.local_path.read_bytes() == jsonl("unidoc", f"s{f.metadata['i']}") for f in snap.files)


def test_flags_file_hides_or_flags_without_deleting(store, tmp_path):
    (tmp_path / "local").mkdir(exist_ok=True)
    (tmp_path / "local" / "flags.json").write_text(
        json.dumps(
            {
                "demo/vdr/colpali.jsonl.gz": {
                    "status": "hidden",
                    "reason": "wrong storage numbers",
                },
                "bad": {"status": "x"},
            }
        )
    )
    snap = store.pull()
    assert snap.flags == {
        "demo/vdr/colpali.jsonl.gz": {
            "status": "hidden",
            "reason": "wrong storage numbers",
        }
    }
    assert "demo/vdr/colpali.jsonl.gz" in snap.by_path()
    assert store.flags() == snap.flags
    # a broken flags.json keeps the last good flags in force (nothing un-hidden) and says so
    (tmp_path / "local" / "flags.json").write_text("{not json")
    assert store.pull().flags == snap.flags and "flags.json unreadable since" in store.notice()
    (tmp_path / "local" / "flags.json").unlink()  # no flags.json at all: nothing flagged
    assert store.pull().flags == {} and store.notice() is None


def test_broken_metadata_does_not_hide_the_submission(store, tmp_path):
    stored = store.submit("vdr", "alice", "jsonl", jsonl("vdr", "x"), {})
    (tmp_path / "local" / (stored.path + ".meta.json")).write_text("{oops")
    f = store.pull().by_path()[stored.path]
    assert "not valid JSON" in f.metadata["meta_error"]


@dataclass
class Report:
    ok: bool
    errors: list[str] = field(default_factory=list)
    track_name: str | None = None
    system: dict | None = None


def test_submit_checked_with_the_local_store(store):
    status = submit_checked(
        store,
        lambda d, n: Report(False, ["header, field track: unknown track 'nope'"]),
        user="alice",
        filename="x.json",
        data=b"{}",
    )
    assert status.state == "invalid" and status.errors == ["header, field track: unknown track 'nope'"]
    assert [f for f in store.pull().files if f.user == "alice"] == []
    status = submit_checked(
        store,
        lambda d, n: Report(True, [], "unidoc", {"name": "n"}),
        user="alice",
        filename="/tmp/gradio/abc/run.jsonl",
        data=jsonl("unidoc", "n"),
    )
    assert status.state == "queued" and status.file.metadata["original_filename"] == "run.jsonl"
    status = submit_checked(
        store,
        lambda d, n: Report(True, [], "unidoc", {"name": "n"}),
        user="bad user",
        filename="run.jsonl",
        data=jsonl("unidoc", "m"),
    )
    assert status.state == "invalid"


def test_settings_default_to_the_local_store_offline(tmp_path):
    settings = StoreSettings.from_env({})
    assert settings.backend == "local" and settings.submissions_per_day == 5
    assert settings.submissions_repo is None and settings.hf_token is None
    env = {"LEADERBOARD_DATA_DIR": str(tmp_path), "SUBMISSIONS_PER_DAY": "2"}
    store = open_store(StoreSettings.from_env(env))
    assert isinstance(store, LocalStore) and store.root == tmp_path / "local" and store.submissions_per_day == 2
    hub = StoreSettings.from_env(
        {
            "SUBMISSIONS_REPO": "org/subs",
            "HF_TOKEN": "hf_abcdefghijklmnop",
            "HF_ENDPOINT": "http://127.0.0.1:1/",
        }
    )
    assert hub.backend == "hub" and hub.hf_endpoint == "http://127.0.0.1:1"
    assert "hf_abcdefghijklmnop" not in repr(hub)
    with pytest.raises(ValueError, match="SUBMISSIONS_PER_DAY"):
        StoreSettings.from_env({"SUBMISSIONS_PER_DAY": "zero"})


def test_naming_rules():
    assert extension_of("a.jsonl.gz") == "jsonl.gz" and extension_of("a.JSON") == "json"
    assert extension_of("a.jsonl.meta.json") is None and extension_of("a.csv") is None
    assert parse_submission_path("submissions/unidoc/alice/x.jsonl") == (
        "unidoc",
        "alice",
    )
    assert parse_submission_path("submissions/unidoc/alice/deep/x.json.gz") == (
        "unidoc",
        "alice",
    )
    assert parse_submission_path("submissions/unidoc/x.json") == (
        "unidoc",
        "maintainers",
    )
    assert parse_submission_path("submissions/unidoc/alice/x.json.meta.json") is None
    assert parse_submission_path("flags.json") is None
    assert parse_submission_path("submissions/unidoc/.hidden/x.json") is None
    assert submission_path("vdr", "bob", NOW, "f" * 64, "json.gz") == "submissions/vdr/bob/20260506T070809Z-ffffffffffff.json.gz"
    # no empty, ".", ".." or hidden component anywhere: each refused, as a component-by-component check would
    for bad in ("", ".", "..", ".git", "..x"):
        for at in range(1, 4):
            parts = ["submissions", "unidoc", "alice", "x.jsonl"]
            parts.insert(at, bad)
            assert parse_submission_path("/".join(parts)) is None, parts
    assert parse_submission_path("submissions/unidoc/al.ice/x..jsonl") == ("unidoc", "al.ice")  # a dot inside is fine
    assert parse_submission_path("/submissions/unidoc/alice/x.jsonl") is None
    assert parse_submission_path("submissions/unidoc/alice/x.jsonl/") is None


class FlakyStore:
    source = "hub:org/flaky"

    def __init__(self):
        self.fail = False
        self.n = 0

    def pull(self) -> Snapshot:
        if self.fail:
            raise StoreUnavailable("Hugging Face Hub unavailable while pulling (org/flaky): server error (HTTP 500)")
        self.n += 1
        return Snapshot(f"{self.n:040x}", datetime.now(UTC), [], {}, [])


def test_refresher_bookkeeping_and_callback_errors():
    store = FlakyStore()
    calls = []

    def on_snapshot(snap):
        calls.append(snap.commit)
        raise RuntimeError("rescoring bug")  # must not break refreshing

    times = iter([NOW, NOW + timedelta(minutes=5), NOW + timedelta(minutes=10)])
    refresher = Refresher(store, on_snapshot=on_snapshot, clock=lambda: next(times))
    assert refresher.snapshot is None and refresher.data_as_of() == "no data yet"
    store.fail = True
    refresher.refresh_now()
    assert refresher.banner().endswith("no data loaded yet.")
    store.fail = False
    good = refresher.refresh_now()
    assert calls == [good.commit] and refresher.last_error is None
    store.fail = True
    refresher.refresh_now()
    refresher.refresh_now()
    err = refresher.last_error
    assert err.failures == 2 and err.since == NOW + timedelta(minutes=5) and err.last_attempt == NOW + timedelta(minutes=10)
    assert refresher.banner() == (
        "Hub unreachable since 2026-05-06 07:13 UTC (Hugging Face Hub unavailable while pulling (org/flaky): "
        f"server error (HTTP 500)); showing data as of {good.commit[:12]}, {good.fetched_at:%Y-%m-%d %H:%M} UTC."
    )


def test_refresher_names_a_bug_by_log_reference_only(caplog):
    """A bug in a pull shows in the banner as a reference the logs explain; no exception class or text on the page."""

    class BuggyStore(FlakyStore):
        def pull(self):
            raise KeyError("/srv/app/leaderboard/store/hub.py internals")

    refresher = Refresher(BuggyStore())
    refresher.refresh_now()
    banner = refresher.banner()
    ref = re.search(r"unexpected error, ref ([0-9a-f]{6}) in the logs", banner)
    assert ref and "KeyError" not in banner and "/srv" not in banner
    assert any(ref.group(1) in r.getMessage() and r.exc_info for r in caplog.records)
