"""Start-up against a slow Hub: how long `Board.start()` takes, and when the page learns about it.

    python bench/bench_startup.py [--timeout 5] [--n 30]

The real huggingface_hub client talks to the local fake Hub (tests/hubfake.py)
on 127.0.0.1, with a results repo (as on a Space). A first board pulls N
submissions and publishes their results; then the Hub answers every request
only after `timeout + 3` seconds, and a second board starts on the same disk
(a restart). Printed: the time `start()` took, when the status line showed the
outage, how many Hub requests were made meanwhile, and how long after the Hub
recovered the board had the new submission.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from leaderboard.demo import make_submissions
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.tracks.base import DEMO_GOLD

from hubfake import running_hub

TOKEN = "hf_benchBENCHbench0123456789"


def submissions(n: int, seed: int) -> dict[str, bytes]:
    return {
        f"submissions/vdr/bench/{seed}-{name}": data for name, data in make_submissions("vdr", DEMO_GOLD / "vdr", n, seed=seed)
    }


def wait(condition, limit: float) -> float | None:
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > limit:
            return None
        time.sleep(0.05)
    return time.monotonic() - started


def run(timeout: float, n: int) -> None:
    with running_hub(tokens={TOKEN: "admin"}) as hub, tempfile.TemporaryDirectory() as tmp:
        for repo in ("bench/subs", "bench/results"):
            hub.create_repo(repo, repo_type="dataset")
        hub.commit("bench/subs", submissions(n, seed=1))
        store = StoreSettings(
            submissions_repo="bench/subs",
            results_repo="bench/results",
            hf_token=TOKEN,
            hf_endpoint=hub.url,
            data_dir=Path(tmp),
            hub_timeout=timeout,
            refresh_seconds=1.0,
        )
        Board(Settings(data_dir=Path(tmp), judge="none"), store).start(background=False)
        new = submissions(1, seed=2)
        hub.commit("bench/subs", new)
        hub.slow(timeout + 3)
        hub.reset_counts()

        t0 = time.monotonic()
        board = Board(Settings(data_dir=Path(tmp), judge="none"), store).start(background=True)
        start = time.monotonic() - t0
        rows = len(board.entries())
        banner = wait(lambda: board.status()["banner"], 10 * timeout)
        requests = hub.count()
        hub.ok()
        arrived = wait(lambda: set(new) <= {e.path for e in board.entries() if e.status == "scored"}, 20 * timeout)
        board.stop()
        nan = float("nan")
        print(f"hub timeout {timeout:g} s, every answer {timeout + 3:g} s late, {n} cached submissions")
        print(f"  Board.start():                  {start:6.2f} s  ({rows} cached rows served at once)")
        print(
            f"  outage banner, from the start:  {start + banner if banner is not None else nan:6.2f} s  "
            f"({requests} Hub request(s) until then)"
        )
        print(
            f"  new submission after recovery:  {arrived if arrived is not None else nan:6.2f} s  "
            f"(pull every {store.refresh_seconds:g} s)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=5.0, help="HUB_TIMEOUT_SECONDS (default 5)")
    parser.add_argument("--n", type=int, default=30, help="cached submissions (default 30)")
    args = parser.parse_args()
    run(args.timeout, args.n)


if __name__ == "__main__":
    main()
