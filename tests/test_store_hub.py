"""HubStore against a local fake Hub, through the real huggingface_hub client over HTTP."""

from __future__ import annotations

import io
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from leaderboard.scoring import METRIC_VERSION
from leaderboard.store import (
    DuplicateSubmission,
    HubStore,
    RateLimited,
    Refresher,
    StoreMisconfigured,
    StoreSettings,
    StoreUnavailable,
    open_store,
    submit_checked,
)

from hubfake import running_hub

V = METRIC_VERSION  # cached result names carry it: `<sha>.<track>.<gold>.v<V>.<judge>`

TOKEN = "hf_SECRETtokenDoNotLeak0123456789abcd"
REPO = "org/rag-submissions"
RESULTS = "org/rag-results"
FIXED_NOW = datetime(2026, 3, 4, 12, 0, 0, tzinfo=UTC)


def jsonl(track: str, name: str, *records: dict) -> bytes:
    lines = [{"track": track, "system": {"name": name}}, *records]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


@pytest.fixture(autouse=True)
def _online_to_the_fake(monkeypatch):
    # conftest sets HF_HUB_OFFLINE=1 so nothing reaches the real Hub; these tests only ever
    # talk to 127.0.0.1 (every client gets the fake's endpoint explicitly).
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)


@pytest.fixture
def hub():
    with running_hub(tokens={TOKEN: "admin"}) as fake:
        fake.create_repo(REPO)
        yield fake


@pytest.fixture
def make_store(hub, tmp_path):
    counter = iter(range(1000))

    def make(**kwargs) -> HubStore:
        kwargs.setdefault("token", TOKEN)
        kwargs.setdefault("cache_dir", tmp_path / f"cache{next(counter)}")
        kwargs.setdefault("timeout", 5.0)
        return HubStore(REPO, endpoint=hub.url, results_repo=RESULTS, **kwargs)

    return make


def push_submissions(hub, n: int, track: str = "unidoc", start: int = 0) -> dict[str, bytes]:
    files = {
        f"submissions/{track}/user{i % 7}/20260101T0000{i % 60:02d}Z-{i:012x}.jsonl": jsonl(track, f"sys{i}", {"id": i})
        for i in range(start, start + n)
    }
    hub.commit(REPO, files, message=f"add {n} submissions")
    return files


# ---- pull ---------------------------------------------------------------------------------------


def test_first_pull_downloads_submissions_metadata_and_flags(hub, make_store):
    sub = "submissions/unidoc/bob/20260101T000000Z-aaaaaaaaaaaa.jsonl"
    data = jsonl("unidoc", "bob's system")
    hub.commit(
        REPO,
        {
            sub: data,
            sub + ".meta.json": json.dumps({"system": {"name": "bob's system"}}).encode(),
            "submissions/futurepedia/direct.json.gz": b"\x1f\x8b fake gzip",  # maintainer push, no user folder
            "submissions/unidoc/bob/notes.txt": b"not a submission",
            "README.md": b"# submissions",
            "flags.json": json.dumps({sub: {"status": "flagged", "reason": "suspicious"}}).encode(),
        },
    )
    store = make_store()
    snap = store.pull()

    assert snap.commit == hub.head(REPO)
    by_path = snap.by_path()
    assert set(by_path) == {sub, "submissions/futurepedia/direct.json.gz"}
    bob = by_path[sub]
    assert (bob.track, bob.user) == ("unidoc", "bob")
    assert bob.local_path.read_bytes() == data
    assert bob.metadata == {"system": {"name": "bob's system"}}
    import hashlib

    assert bob.sha256 == hashlib.sha256(data).hexdigest()
    direct = by_path["submissions/futurepedia/direct.json.gz"]
    assert (direct.track, direct.user, direct.metadata) == (
        "futurepedia",
        "maintainers",
        {},
    )
    assert snap.flags == {sub: {"status": "flagged", "reason": "suspicious"}}
    assert sorted(snap.changed) == sorted(by_path)
    assert snap.source == f"hub:{REPO}"


def test_hostile_metadata_sidecars_never_stop_a_pull(hub, make_store):
    """A direct upload's .meta.json nested 30,000 deep, or of 5 MB: the pull lands, the files stay listed."""
    deep = "submissions/unidoc/eve/20260101T000000Z-bbbbbbbbbbbb.jsonl"
    huge = "submissions/unidoc/eve/20260101T000001Z-cccccccccccc.jsonl"
    hub.commit(
        REPO,
        {
            deep: jsonl("unidoc", "eve deep"),
            deep + ".meta.json": b"[" * 30_000 + b"]" * 30_000,  # under the byte cap, past the recursion limit
            huge: jsonl("unidoc", "eve huge"),
            huge + ".meta.json": json.dumps({"system": {"name": "x" * 5_000_000}}).encode(),
        },
    )
    by_path = make_store().pull().by_path()
    assert "nested too deeply" in by_path[deep].metadata["meta_error"]
    assert "over 65,536 bytes" in by_path[huge].metadata["meta_error"]


def test_incremental_pull_downloads_only_the_new_file(hub, make_store):
    push_submissions(hub, 30)
    store = make_store()
    first = store.pull()
    assert len(first.files) == 30

    new = "submissions/vdr/carol/20260102T000000Z-bbbbbbbbbbbb.jsonl"
    hub.commit(REPO, {new: jsonl("vdr", "carol")}, message="merge PR #12")
    hub.reset_counts()
    snap = store.pull()

    # One GET for the file itself, nothing for the 30 others.
    assert hub.downloads() == [new]
    assert snap.changed == [new]
    assert len(snap.files) == 31
    assert snap.commit == hub.head(REPO)


def test_pull_with_unchanged_head_is_one_request(hub, make_store):
    push_submissions(hub, 5)
    store = make_store()
    store.pull()
    hub.reset_counts()
    snap = store.pull()
    assert hub.count() == 1  # repo info only: same commit, nothing listed or downloaded
    assert snap.changed == [] and len(snap.files) == 5


def test_changed_bytes_or_metadata_are_reported_and_removed_files_listed(hub, make_store):
    files = push_submissions(hub, 3)
    a, b, c = sorted(files)
    store = make_store()
    store.pull()
    hub.commit(
        REPO,
        {a: b"changed bytes", b + ".meta.json": b'{"note": "fixed name"}'},
        deletes=[c],
    )
    hub.reset_counts()
    snap = store.pull()
    assert sorted(snap.changed) == sorted([a, b])
    assert snap.removed == [c]
    assert sorted(hub.downloads()) == sorted([a, b + ".meta.json"])
    assert snap.by_path()[a].local_path.read_bytes() == b"changed bytes"
    assert snap.by_path()[b].metadata == {"note": "fixed name"}


def test_restarted_store_reuses_its_disk_cache(hub, make_store, tmp_path):
    push_submissions(hub, 10)
    make_store(cache_dir=tmp_path / "shared").pull()
    hub.reset_counts()
    # A restarted app, same disk.
    snap = make_store(cache_dir=tmp_path / "shared").pull()
    assert hub.downloads() == []
    # A new store object reports everything once, for the caller to (re)score.
    assert len(snap.changed) == 10


def test_tree_pagination_is_followed(hub, make_store):
    hub.page_size = 4
    push_submissions(hub, 11)
    snap = make_store().pull()
    assert len(snap.files) == 11
    assert hub.count("GET", "/tree/") > 3


# ---- submit -------------------------------------------------------------------------------------


def test_submit_commits_file_and_metadata_together(hub, make_store):
    store = make_store(clock=lambda: FIXED_NOW)
    data = jsonl("unidoc", "alice-rag", {"id": "finance-0001"})
    before = len(hub.commits(REPO))
    stored = store.submit("unidoc", "alice", "jsonl", data, {"system": {"name": "alice-rag"}})

    import hashlib

    digest = hashlib.sha256(data).hexdigest()
    assert stored.path == f"submissions/unidoc/alice/20260304T120000Z-{digest[:12]}.jsonl"
    commits = hub.commits(REPO)
    assert len(commits) == before + 1  # one commit for both files
    files = hub.files(REPO)
    assert files[stored.path] == data
    meta = json.loads(files[stored.path + ".meta.json"])
    assert meta["system"] == {"name": "alice-rag"}
    assert (meta["track"], meta["user"], meta["sha256"], meta["size"]) == (
        "unidoc",
        "alice",
        digest,
        len(data),
    )
    assert meta["submitted_at"] == "2026-03-04T12:00:00Z"
    assert stored.local_path.read_bytes() == data

    hub.reset_counts()
    snap = store.pull()
    assert hub.downloads() == []  # the store already has both files locally
    assert snap.changed == [stored.path]
    assert snap.by_path()[stored.path].metadata["system"] == {"name": "alice-rag"}


def test_duplicate_bytes_are_refused_without_uploading(hub, make_store):
    store = make_store()
    data = jsonl("unidoc", "same")
    first = store.submit("unidoc", "alice", "jsonl", data, {})
    hub.reset_counts()
    with pytest.raises(DuplicateSubmission) as err:
        store.submit("unidoc", "bob", "jsonl", data, {})
    assert err.value.existing == first.path
    assert first.path in str(err.value)
    assert hub.count("POST") == 0

    # a file pushed directly by a maintainer counts too
    pushed = jsonl("vdr", "pushed")
    hub.commit(REPO, {"submissions/vdr/pushed-by-hand.jsonl": pushed})
    with pytest.raises(DuplicateSubmission, match="pushed-by-hand"):
        store.submit("vdr", "carol", "jsonl", pushed, {})
    # the same bytes in another track are another submission
    store.submit("futurepedia", "alice", "jsonl", data, {})


def test_daily_limit_per_user_and_track(hub, make_store):
    now = [FIXED_NOW]
    store = make_store(submissions_per_day=2, clock=lambda: now[0])
    for i in range(2):
        store.submit("unidoc", "alice", "jsonl", jsonl("unidoc", f"run{i}"), {})
    with pytest.raises(RateLimited, match="limit: 2 per UTC day") as err:
        store.submit("unidoc", "alice", "jsonl", jsonl("unidoc", "run2"), {})
    assert err.value.used == 2
    store.submit("vdr", "alice", "jsonl", jsonl("vdr", "other track"), {})  # per track
    # per user
    store.submit("unidoc", "bob", "jsonl", jsonl("unidoc", "other user"), {})
    now[0] = FIXED_NOW + timedelta(days=1)
    # a new UTC day
    store.submit("unidoc", "alice", "jsonl", jsonl("unidoc", "run2"), {})


@dataclass
class FakeReport:
    ok: bool
    errors: list[str] = field(default_factory=list)
    track_name: str | None = None
    system: dict | None = None


def test_submit_checked_never_uploads_an_invalid_file(hub, make_store):
    store = make_store()
    before = hub.files(REPO)
    hub.reset_counts()

    def reject(data: bytes, name: str) -> FakeReport:
        return FakeReport(
            False,
            [
                "line 3, id finance-0001, field retrieved: expected a list",
                "line 9: bad JSON",
            ],
        )

    status = submit_checked(store, reject, user="alice", filename="run.jsonl", data=b"garbage")
    assert status.state == "invalid" and not status.ok
    assert status.errors == [
        "line 3, id finance-0001, field retrieved: expected a list",
        "line 9: bad JSON",
    ]
    assert hub.count() == 0  # not even a request
    assert hub.files(REPO) == before

    status = submit_checked(store, reject, user="alice", filename="run.csv", data=b"a,b")
    assert status.state == "invalid" and "expected a .json" in status.errors[0]

    def accept(data, name):
        return FakeReport(True, [], "unidoc", {"name": "alice-rag"})

    status = submit_checked(store, accept, user="alice", filename="run.jsonl", data=b"x", track="vdr")
    assert status.state == "invalid" and "declares track 'unidoc'" in status.errors[0]
    assert hub.count() == 0


def test_submit_checked_statuses(hub, make_store):
    store = make_store(submissions_per_day=1)

    def accept(data, name):
        return FakeReport(True, [], "unidoc", {"name": "alice-rag"})

    data = jsonl("unidoc", "alice-rag")

    queued = submit_checked(
        store,
        accept,
        user="alice",
        filename="C:\\fakepath\\run.jsonl",
        data=data,
        metadata={"note": "hi"},
    )
    assert queued.state == "queued" and queued.ok
    meta = json.loads(hub.files(REPO)[queued.file.path + ".meta.json"])
    assert meta["system"] == {"name": "alice-rag"} and meta["note"] == "hi" and meta["original_filename"] == "run.jsonl"

    dup = submit_checked(store, accept, user="bob", filename="run.jsonl", data=data)
    assert dup.state == "duplicate" and dup.existing == queued.file.path

    limited = submit_checked(store, accept, user="alice", filename="run2.jsonl", data=data + b"\n")
    assert limited.state == "rate_limited" and "1 per UTC day" in limited.message

    hub.down()
    down = submit_checked(store, accept, user="carol", filename="run3.jsonl", data=data + b"\n\n")
    assert down.state == "unavailable" and "retry" in down.message


def test_two_users_submitting_at_the_same_moment_both_land(hub, make_store):
    # Two replicas (two store objects, two caches) and several threads on one of them.
    replica_a, replica_b = make_store(), make_store()
    jobs = [(replica_a if i % 2 else replica_b, f"user{i}", jsonl("unidoc", f"sys{i}")) for i in range(6)]
    barrier = threading.Barrier(len(jobs))
    results, errors = [], []

    def run(store, user, data):
        barrier.wait()
        try:
            results.append(store.submit("unidoc", user, "jsonl", data, {"system": {"name": user}}))
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=job) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    files = hub.files(REPO)
    for stored, (_, user, data) in zip(sorted(results, key=lambda r: r.user), sorted(jobs, key=lambda j: j[1])):
        assert stored.user == user
        assert files[stored.path] == data
        assert json.loads(files[stored.path + ".meta.json"])["user"] == user
    assert len([p for p in files if p.endswith(".jsonl")]) == 6
    assert len(replica_a.pull().files) == 6


# ---- outages ------------------------------------------------------------------------------------


def test_hub_down_or_500_raises_store_unavailable_quickly(hub, make_store):
    push_submissions(hub, 3)
    store = make_store()
    store.pull()

    hub.fail(500)
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match="HTTP 500"):
        store.pull()
    hub.ok()

    hub.down()
    with pytest.raises(StoreUnavailable, match="cannot reach"):
        store.pull()
    assert time.monotonic() - started < 5  # no retry storm
    hub.up()
    assert len(store.pull().files) == 3


def test_unanswered_request_times_out(hub, make_store):
    store = make_store(timeout=0.3)
    hub.slow(3.0, path_contains="/revision/")
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match="no answer"):
        store.pull()
    assert time.monotonic() - started < 2.5


def test_requests_without_their_own_timeout_get_one(hub, make_store):
    import httpx2
    from huggingface_hub.utils import get_session

    make_store(timeout=0.3)  # installs the timeout hook
    hub.slow(3.0, path_contains="/tree/")
    started = time.monotonic()
    with pytest.raises(httpx2.TimeoutException):
        get_session().get(f"{hub.url}/api/datasets/{REPO}/tree/main", timeout=None)
    assert time.monotonic() - started < 2.5


def test_refresher_keeps_last_snapshot_reports_outage_and_recovers(hub, make_store):
    push_submissions(hub, 4)
    seen = []
    refresher = Refresher(make_store(), interval=0.05, on_snapshot=seen.append)
    good = refresher.refresh_now()
    assert good is not None and len(good.files) == 4 and len(seen) == 1
    assert refresher.banner() is None
    assert refresher.data_as_of().startswith(f"data as of {good.commit[:12]}")

    hub.fail(500)
    assert refresher.refresh_now() is good
    hub.down()
    assert refresher.refresh_now() is good
    assert refresher.snapshot is good
    err = refresher.last_error
    assert err is not None and err.failures == 2 and "cannot reach" in err.message
    banner = refresher.banner()
    assert banner.startswith("Hub unreachable since") and good.commit[:12] in banner

    hub.up()
    push_submissions(hub, 1, start=100)
    refresher.start(pull_first=True)  # the timer thread picks it up
    try:
        deadline = time.monotonic() + 5
        while (refresher.snapshot is good or refresher.last_error) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        refresher.stop()
    assert refresher.last_error is None and refresher.banner() is None
    assert len(refresher.snapshot.files) == 5
    assert len(seen[-1].changed) == 1


# ---- flags and results --------------------------------------------------------------------------


def test_flags_from_flags_json(hub, make_store):
    store = make_store()
    assert store.flags() == {}
    files = push_submissions(hub, 2)
    a, b = sorted(files)
    hub.commit(
        REPO,
        {
            "flags.json": json.dumps(
                {
                    a: {
                        "status": "hidden",
                        "reason": "duplicate of another team's run",
                    },
                    b: "flagged",
                    "x": {"status": "deleted"},
                }
            ).encode()
        },
    )
    expected = {
        a: {"status": "hidden", "reason": "duplicate of another team's run"},
        b: {"status": "flagged", "reason": ""},
    }
    assert store.flags() == expected
    snap = store.pull()
    assert snap.flags == expected
    # Hidden files are still listed: the board decides how to show them.
    assert len(snap.files) == 2


def _result_summary(sha: str, track: str) -> str:
    """A sound cached summary (an invalid submission's) named `<sha>.<track>.-.v<METRIC_VERSION>.none.json`."""
    return json.dumps(
        {
            "sha256": sha,
            "track": track,
            "gold_sha256": None,
            "judge": "none",
            "metric_version": METRIC_VERSION,
            "status": "invalid",
            "system": {},
            "errors": ["file: x"],
        }
    )


def _units_npz() -> bytes:
    buf = io.BytesIO()
    np.savez(buf, ndcg=np.array([0.5, np.nan]))
    return buf.getvalue()


def _record(sha: str, judge: str = "openai:m", ledger: dict | None = None) -> bytes:
    """A sound verdict record (judge/record.py) of submission `sha`, holding one verdict."""
    from leaderboard.judge.record import Record
    from leaderboard.judge.verdict import Verdict

    v = Verdict(judge, "m", "p1", "q1", "b" * 64, ["x"], [True], ["y"], [False], gold_sha256="c" * 64)
    return Record(sha, judge, "p1", ledger or {"calls": 2}, (v,)).to_bytes()


def _record_name(sha: str) -> str:
    return f"verdicts/{sha}.openai_m.json"


def test_results_push_then_fresh_pull_takes_back_the_verdicts_only(hub, make_store, tmp_path):
    local = tmp_path / "results"
    (local / "verdicts").mkdir(parents=True)
    npz = _units_npz()
    sha = "a" * 64
    (local / f"{sha}.unidoc.-.v{V}.none.json").write_text(_result_summary(sha, "unidoc"))
    (local / f"{sha}.unidoc.-.v{V}.none.npz").write_bytes(npz)
    (local / _record_name(sha)).write_bytes(_record(sha))
    (local / ".tmp-partial").write_bytes(b"ignored")
    store = make_store()
    assert store.push_results(local) == 3  # creates RESULTS_REPO on first push
    assert store.push_results(local) == 0  # nothing new, no commit
    commits = len(hub.commits(RESULTS))
    (local / f"def.vdr.-.v{V}.none.json").write_text(_result_summary("def", "vdr"))
    assert store.push_results(local) == 1
    assert len(hub.commits(RESULTS)) == commits + 1

    fresh = tmp_path / "fresh-space-results"
    hub.reset_counts()
    assert make_store().pull_results(fresh) == 1
    assert [p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file()] == [_record_name(sha)]
    assert hub.downloads() == [f"results/{_record_name(sha)}"]  # summaries and per-unit scores: never fetched
    assert (fresh / _record_name(sha)).read_bytes() == _record(sha)
    assert make_store().pull_results(fresh) == 0


def test_bad_results_in_the_results_repo_are_skipped_and_replaced_by_the_next_push(
    hub, make_store, tmp_path, caplog, monkeypatch
):
    from leaderboard.judge import record

    monkeypatch.setattr(record, "MAX_BYTES", 64 * 1024)
    a, b, c, d = ("a" * 64, "b" * 64, "c" * 64, "d" * 64)
    good = _record(a)
    hub.create_repo(RESULTS, repo_type="dataset")
    hub.commit(
        RESULTS,
        {
            f"results/{_record_name(a)}": good[: len(good) // 2],  # truncated
            f"results/{_record_name(b)}": good,  # another submission's record
            f"results/{_record_name(c)}": _record(c, ledger={"calls": "free"}),  # a ledger of text
            f"results/{_record_name(d)}": b" " * (record.MAX_BYTES + 1),  # over the cap: never downloaded
            f"results/{_record_name('e' * 64)}": _record("e" * 64),
            f"results/{a}.unidoc.-.v{V}.none.json": _result_summary(a, "unidoc").encode(),  # a summary: not installed
            "results/junk.bin": b"\0" * 1000,
        },
    )
    fresh = tmp_path / "fresh"
    store = make_store()
    caplog.set_level(logging.WARNING)
    hub.reset_counts()
    assert store.pull_results(fresh) == 1 and [p.name for p in (fresh / "verdicts").iterdir()] == [f"{'e' * 64}.openai_m.json"]
    assert f"results/{_record_name(d)}" not in hub.downloads() and "results/junk.bin" not in hub.downloads()
    assert store.pull_results(fresh) == 0
    skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(skipped) == 4  # once each, not on every pull
    # the board judges them again; its own records replace the bad ones at its next push, whatever their names
    for sha in (a, b):
        (fresh / _record_name(sha)).write_bytes(_record(sha))
    assert store.push_results(fresh, changed=[]) == 2
    assert hub.files(RESULTS)[f"results/{_record_name(a)}"] == _record(a)
    assert hub.files(RESULTS)[f"results/{_record_name(b)}"] == _record(b)


def test_a_results_file_edited_in_the_repo_is_replaced_by_the_next_push(hub, make_store, tmp_path):
    local = tmp_path / "results"
    local.mkdir()
    name = f"abc.unidoc.-.v{V}.none.json"
    (local / name).write_text(_result_summary("abc", "unidoc"))
    store = make_store()
    assert store.push_results(local) == 1
    hub.commit(RESULTS, {f"results/{name}": _result_summary("abc", "unidoc").replace("file: x", "file: y").encode()})
    assert make_store().push_results(local) == 1  # same name, other bytes: sent again
    assert hub.files(RESULTS)[f"results/{name}"] == (local / name).read_bytes()


def test_results_pull_without_results_repo_is_empty(hub, make_store, tmp_path):
    assert make_store().pull_results(tmp_path / "r") == 0


def test_ensure_repos_creates_missing_repos_and_whoami(hub, make_store):
    store = make_store()
    store.ensure_repos()
    assert hub.head(RESULTS) and hub.head(REPO)
    store.ensure_repos()  # idempotent
    assert store.whoami() == "admin"


# ---- secrets ------------------------------------------------------------------------------------


def results_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "k.json").write_text("{}")
    return folder


def _exercise_failures(hub, store, texts: list[str], results_dir: Path) -> None:
    """Every store entry point against a Hub that rejects the token (401), then answers 500."""
    hub.tokens.clear()  # the Hub no longer knows the token: 401 on every call
    for action in (
        store.pull,
        store.flags,
        store.whoami,
        lambda: store.submit("unidoc", "a", "jsonl", b"x", {}),
    ):
        with pytest.raises(StoreUnavailable) as err:
            action()
        texts += [str(err.value), repr(err.value)]
    refresher = Refresher(store)
    refresher.refresh_now()
    texts.append(refresher.banner())

    def accept(data, name):
        return FakeReport(True, [], "unidoc", {})

    texts.append(submit_checked(store, accept, user="a", filename="r.jsonl", data=b"y").message)
    hub.fail(500)
    for action in (store.pull, lambda: store.push_results(results_dir)):
        with pytest.raises(StoreUnavailable) as err:
            action()
        texts += [str(err.value), repr(err.value)]
    hub.ok()


def test_token_never_appears_in_errors_logs_or_reprs(hub, make_store, caplog, tmp_path):
    # Every logger, huggingface_hub's and httpx's included.
    caplog.set_level(logging.DEBUG)
    store = make_store()
    texts = [repr(store), repr(StoreSettings(hf_token=TOKEN))]
    texts.append(
        repr(
            open_store(
                StoreSettings(
                    submissions_repo=REPO,
                    hf_token=TOKEN,
                    hf_endpoint=hub.url,
                    data_dir=tmp_path,
                )
            )
        )
    )
    _exercise_failures(hub, store, texts, results_dir(tmp_path))
    texts += [r.getMessage() for r in caplog.records]
    joined = "\n".join(t for t in texts if t)
    assert "HF_TOKEN rejected by the Hub: check the Space secret (HTTP 401" in joined and "HTTP 500" in joined
    assert TOKEN not in joined and TOKEN[3:20] not in joined


def test_token_echoed_by_the_server_is_still_redacted(hub, make_store, caplog, tmp_path):
    # A misbehaving server (or proxy) that copies the Authorization header into its errors.
    # Third-party DEBUG traces of raw response headers are out of our hands; everything
    # the project itself emits (errors, banner, statuses, its own logs) must stay clean.
    caplog.set_level(logging.DEBUG, logger="leaderboard")
    hub.echo_auth = True
    store = make_store()
    texts: list[str] = []
    _exercise_failures(hub, store, texts, results_dir(tmp_path))
    texts += [r.getMessage() for r in caplog.records if r.name.startswith("leaderboard")]
    joined = "\n".join(t for t in texts if t)
    assert "Authorization: Bearer ***" in joined  # the echo arrived, redacted
    assert TOKEN not in joined and TOKEN[3:20] not in joined


@pytest.mark.parametrize("status", [401, 403])
def test_rejected_token_is_a_configuration_problem_not_an_outage(hub, make_store, caplog, status):
    """A token the Hub refuses is reported as a secret to fix: banner, submit message and log; never "retry later"."""
    caplog.set_level(logging.WARNING, logger="leaderboard")
    store = make_store()
    refresher = Refresher(store)
    assert refresher.refresh_now() is not None and refresher.banner() is None
    if status == 401:
        hub.tokens.clear()  # the secret was revoked: the Hub no longer knows it
    else:
        hub.fail(403)  # a read-only token, or one without access to the repo
    with pytest.raises(StoreMisconfigured, match="HF_TOKEN rejected by the Hub: check the Space secret"):
        store.pull()
    refresher.refresh_now()
    banner = refresher.banner()
    assert banner.startswith("Configuration problem since ") and f"check the Space secret (HTTP {status}" in banner
    assert "unreachable" not in banner.lower()

    def accept(data, name):
        return FakeReport(True, [], "unidoc", {})

    status_ = submit_checked(store, accept, user="a", filename="r.jsonl", data=jsonl("unidoc", "s"))
    assert status_.state == "unavailable" and "check the Space secret" in status_.message
    assert "retry" not in status_.message.lower()
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any("HF_TOKEN rejected by the Hub" in m for m in errors), errors  # the maintainers find it in the logs
    hub.ok()
    hub.tokens[TOKEN] = "admin"
    refresher.refresh_now()
    assert refresher.banner() is None  # fixed secret: the next pull clears it
