"""Live status against a fake Hub: a start that never waits for the network, "data as of" that survives a
restart, a commit whose reply was lost. The same on an open page in a real browser: test_browser_status.py."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings

from hubfake import FAKE_TOKEN, fake_hub  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "assets" / "demo" / "submissions"
UNIDOC_FILES = sorted((DEMO / "unidoc").glob("*.jsonl"))
VDR_FILES = sorted((DEMO / "vdr").glob("*.jsonl"))
TIMEOUT = 5.0  # HUB_TIMEOUT_SECONDS of these boards
FAST_START = 2.0  # what "start returns at once" means on a shared two-core machine


@pytest.fixture
def hub(fake_hub):  # noqa: F811
    """The fake Hub with a submissions repo holding two UniDoc runs, and an empty results repo."""
    fake_hub.create_repo("org/subs", repo_type="dataset")
    fake_hub.create_repo("org/results", repo_type="dataset")
    fake_hub.commit("org/subs", {f"submissions/unidoc/demo/{p.name}": p.read_bytes() for p in UNIDOC_FILES[:2]})
    return fake_hub


def store_settings(hub, data_dir: Path, timeout: float = TIMEOUT, refresh: float = 0.5) -> StoreSettings:
    return StoreSettings(
        submissions_repo="org/subs",
        results_repo="org/results",
        hf_token=FAKE_TOKEN,
        hf_endpoint=hub.url,
        data_dir=data_dir,
        hub_timeout=timeout,
        refresh_seconds=refresh,
    )


def board_for(settings: StoreSettings) -> Board:
    return Board(Settings(data_dir=settings.data_dir, judge="none"), settings)


def wait_for(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        time.sleep(0.05)
    return value


def paths(board: Board) -> set[str]:
    return {e.path for e in board.entries()}


def test_start_serves_the_cache_at_once_while_the_hub_is_slow_then_takes_the_new_data(hub, tmp_path):
    settings = store_settings(hub, tmp_path)
    first = board_for(settings).start(background=False)
    cached = {e.path: e.id for e in first.entries()}
    assert len(cached) == 2
    first.stop()
    new_path = f"submissions/vdr/carol/{VDR_FILES[0].name}"
    hub.commit("org/subs", {new_path: VDR_FILES[0].read_bytes()})  # arrived while the app was down
    hub.reset_counts()
    hub.slow(TIMEOUT + 3)  # answers come after the client's timeout: every pull fails

    started = time.monotonic()
    board = board_for(settings).start(background=True)
    took = time.monotonic() - started
    try:
        assert took < FAST_START, f"start took {took:.1f} s with a Hub slower than its {TIMEOUT:g} s timeout"
        assert {e.path: e.id for e in board.entries()} == cached  # the cached rows, served at once
        assert all(e.status == "scored" for e in board.entries())
        status = board.status()
        assert status["data_as_of"].startswith("data as of") and not status["loading"] and status["banner"] is None

        # the first pull gives up after one timeout; the banner says so and nothing else was tried meanwhile
        banner = wait_for(lambda: board.status()["banner"], TIMEOUT + 4, "the outage banner")
        assert "Hub unreachable" in banner and f"within {TIMEOUT:g} s" in banner
        assert time.monotonic() - started < 2 * TIMEOUT
        assert hub.count(path_contains="org/results") == 0  # no results pull or push queued behind a dead Hub
        assert paths(board) == set(cached)

        hub.ok()  # the Hub answers again: the next pull brings the new file and clears the banner
        wait_for(
            lambda: [e.status for e in board.entries() if e.path == new_path] == ["scored"],
            3 * TIMEOUT,
            "the new file, scored, after the Hub answered",
        )
        assert board.status()["banner"] is None and paths(board) == {*cached, new_path}
    finally:
        hub.ok()
        board.stop()


def test_a_first_start_says_loading_until_the_first_pull_lands(hub, tmp_path):
    hub.slow(0.5)  # slow but within the timeout: a pull takes several seconds
    started = time.monotonic()
    board = board_for(store_settings(hub, tmp_path)).start(background=True)
    took = time.monotonic() - started
    try:
        assert took < FAST_START, f"start took {took:.1f} s"
        status = board.status()
        assert status["loading"] and status["banner"] is None and board.entries() == []
        assert status["data_as_of"] == "loading: first pull from hub:org/subs in progress"
        wait_for(lambda: len(board.entries()) == 2, 60, "the first pull's rows")
        status = board.status()
        assert not status["loading"] and status["data_as_of"].startswith("data as of")
    finally:
        hub.ok()
        board.stop()


def test_a_first_pull_that_fails_says_so_instead_of_loading(hub, tmp_path):
    hub.fail(500)
    board = board_for(store_settings(hub, tmp_path)).start(background=True)
    try:
        banner = wait_for(lambda: board.status()["banner"], 2 * TIMEOUT, "the outage banner")
        assert "no data loaded yet" in banner
        assert not board.status()["loading"] and board.status()["data_as_of"] == "no data yet"
    finally:
        hub.ok()
        board.stop()


def test_data_as_of_after_a_restart_during_an_outage_is_the_last_successful_pull(hub, tmp_path):
    settings = store_settings(hub, tmp_path)
    board = board_for(settings).start(background=False)
    first_pull = board.refresher.snapshot.fetched_at
    time.sleep(0.01)
    board.refresh()  # a later successful pull (same head): this one is "as of"
    last_pull = board.refresher.snapshot.fetched_at
    shown = board.status()["data_as_of"]
    assert last_pull > first_pull
    hub.fail(500)
    board.refresh()
    assert board.status()["banner"] and board.refresher.snapshot.fetched_at == last_pull

    restarted = board_for(settings).start(background=False)  # restarted during the outage
    assert restarted.refresher.snapshot.fetched_at == last_pull
    status = restarted.status()
    assert status["data_as_of"] == shown and "unreachable" in status["banner"]
    hub.ok()
    restarted.refresh()
    assert restarted.refresher.snapshot.fetched_at > last_pull and restarted.status()["banner"] is None


@pytest.mark.parametrize("reply_delay", [None, TIMEOUT / 2 + 2], ids=["connection-dropped", "reply-too-late"])
def test_a_commit_whose_reply_was_lost_is_a_success(hub, tmp_path, reply_delay):
    board = board_for(store_settings(hub, tmp_path, timeout=TIMEOUT / 2)).start(background=False)
    data = VDR_FILES[1].read_bytes()
    hub.lose_replies("/datasets/org/subs/commit/", delay=reply_delay)
    try:
        status = board.submit(user="dave", track="vdr", filename="run.jsonl", data=data, metadata={})
    finally:
        hub.ok()
    assert status.state == "queued", status.message
    assert hub.files("org/subs")[status.file.path] == data
    assert f"{status.file.path}.meta.json" in hub.files("org/subs")
    assert [e.status for e in board.entries() if e.path == status.file.path] == ["scored"]


def test_a_commit_not_in_the_repo_when_checked_is_not_claimed_as_stored(hub, tmp_path):
    board = board_for(store_settings(hub, tmp_path, timeout=TIMEOUT / 2)).start(background=False)
    before = set(hub.files("org/subs"))
    hub.slow(TIMEOUT, path_contains="/datasets/org/subs/commit/")  # no answer, and nothing landed yet
    try:
        status = board.submit(user="dave", track="vdr", filename="run.jsonl", data=VDR_FILES[1].read_bytes(), metadata={})
        assert status.state == "unavailable" and "retry" in status.message
        assert not set(hub.files("org/subs")) - before  # checked before the (late) commit landed
    finally:
        hub.ok()


@pytest.mark.parametrize("slow_path", ["/tree/", "/resolve/"], ids=["listing", "download"])
def test_a_request_that_timed_out_is_not_sent_again(hub, tmp_path, slow_path):
    """huggingface_hub resends a listing or a download five times after a timeout (~6 timeouts and 23 s of
    backoff); a store operation gives up after the first: one timeout, and the timer tries again later."""
    timeout = 1.0
    board = board_for(store_settings(hub, tmp_path, timeout=timeout))
    hub.slow(timeout + 3, path_contains=slow_path)
    hub.reset_counts()
    started = time.monotonic()
    try:
        board.start(background=False)
        took = time.monotonic() - started
    finally:
        hub.ok()
    assert "no answer" in board.status()["banner"] and board.entries() == []
    sent = [r for r in hub.requests if slow_path in r[1]]
    assert sent and len(sent) == len(set(sent)), sent  # each one once (downloads run side by side)
    assert took < timeout + 4, f"the first pull took {took:.1f} s with a {timeout:g} s timeout"
