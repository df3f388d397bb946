"""Run the real app in-process for end-to-end tests: a Board on a private data folder, served on a free port.

    with running_app(tmp_path) as app:      # app.url, app.board, app.data_dir
        Client(app.url).predict(...)

The board reads the bundled demo submissions and gold plus whatever the test
put under `<data_dir>/local/submissions/<track>/<user>/` before the start. The
judge is the offline lexical one; `running_app` waits until every answer is
judged, so tables show final numbers. Everything is stopped on exit. Apps
after the first one of a test run start from the first one's results cache.
"""

from __future__ import annotations

import atexit
import contextlib
import shutil
import socket
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from leaderboard.service import Board
from leaderboard.settings import PageSettings, Settings
from leaderboard.store import StoreSettings
from leaderboard.store.naming import sha256_hex, submission_path

# Debian's chromium, driven through Playwright by the browser tests and bench/bench_browser.py (never
# `playwright install`), started quiet: no first-run pages, no network of its own
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass
class App:
    url: str
    board: Board
    data_dir: Path
    blocks: object


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def place_submission(
    data_dir: Path, track: str, user: str, data: bytes, ext: str = "jsonl", stamp: str = "20260101T000000Z"
) -> Path:
    """Put a submission file where the local store finds it (what a stored upload looks like)."""
    when = datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    target = Path(data_dir) / "local" / submission_path(track, user, when, sha256_hex(data), ext)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


def wait_judged(board: Board, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while any(e.judging for e in board.entries()):
        if time.monotonic() > deadline:
            raise TimeoutError("the judge did not finish")
        time.sleep(0.1)


# Scored results (and verdicts) of the demo, kept from the first app of the test run for the next ones:
# scoring is covered elsewhere, and a warm results cache is what a restarted app starts from anyway.
_WARM: dict[str, Path] = {}


def _seed_results(data_dir: Path, judge: str) -> None:
    if judge in _WARM and not (data_dir / "results").exists():
        shutil.copytree(_WARM[judge], data_dir / "results")


def _keep_results(data_dir: Path, judge: str) -> None:
    if judge not in _WARM and (data_dir / "results").is_dir():
        keep = Path(tempfile.mkdtemp(prefix="board-results-"))
        atexit.register(shutil.rmtree, keep, True)
        shutil.copytree(data_dir / "results", keep / "results")
        _WARM[judge] = keep / "results"


@contextlib.contextmanager
def running_app(
    data_dir: Path,
    judge: str = "lexical",
    store_settings: StoreSettings | None = None,
    status_poll_seconds: float = 5.0,
    page: PageSettings | None = None,
):
    """`store_settings`: another store (a fake Hub) instead of the local folder; the app then opens at once,
    before its first pull, as a deployed one does. `page`: the page's settings (page size, upload bounds)."""
    from leaderboard.ui import build_app, launch_kwargs

    data_dir = Path(data_dir)
    _seed_results(data_dir, judge)
    board = Board(
        Settings(data_dir=data_dir, judge=judge, status_poll_seconds=status_poll_seconds, page=page or PageSettings()),
        store_settings or StoreSettings(data_dir=data_dir),
    )
    board.start(background=True)
    blocks = None
    try:
        if store_settings is None:  # a remote store's data arrives later: nothing to wait for or keep
            wait_judged(board)
            _keep_results(data_dir, judge)
        blocks = build_app(board)
        port = free_port()
        kwargs = {**launch_kwargs(board.settings), "server_name": "127.0.0.1", "server_port": port}
        blocks.queue(default_concurrency_limit=4).launch(prevent_thread_lock=True, quiet=True, **kwargs)
        yield App(f"http://127.0.0.1:{port}/", board, data_dir, blocks)
    finally:
        if blocks is not None:
            blocks.close()
        board.stop()
