"""Incremental pull + rescore through the board service, with N submissions already scored.

    python bench/bench_refresh.py [--n 500]

The real huggingface_hub client talks to the local fake Hub (tests/hubfake.py)
on 127.0.0.1. N demo-gold submissions are committed and scored once; then one
new submission is committed and `Board.refresh()` (pull, rescore what changed,
update the board) is timed, for N and for N/10, to show the cost follows the
new file, not N.
"""

from __future__ import annotations

import argparse
import os
import statistics
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
TRACKS = ("unidoc", "futurepedia", "vdr")


def files(n: int, seed: int) -> dict[str, bytes]:
    out = {}
    for k, track in enumerate(TRACKS):
        share = n // len(TRACKS) + (1 if k < n % len(TRACKS) else 0)
        for name, data in make_submissions(track, DEMO_GOLD / track, share, seed=seed):
            out[f"submissions/{track}/bench/{seed}-{name}"] = data
    return out


def run(n: int, repeat: int) -> dict:
    with running_hub(tokens={TOKEN: "admin"}) as hub, tempfile.TemporaryDirectory() as tmp:
        hub.create_repo("bench/subs", repo_type="dataset")
        hub.commit("bench/subs", files(n, seed=1))
        store = StoreSettings(submissions_repo="bench/subs", hf_token=TOKEN, hf_endpoint=hub.url, data_dir=Path(tmp))
        t0 = time.perf_counter()
        board = Board(Settings(data_dir=Path(tmp), judge="none"), store).start(background=False)
        first = time.perf_counter() - t0
        times, rescored = [], []
        for r in range(repeat):
            new = files(1, seed=100 + r)
            hub.commit("bench/subs", new)
            hub.reset_counts()
            t = time.perf_counter()
            board.refresh()
            times.append(time.perf_counter() - t)
            rescored.append(len(hub.downloads()))
        assert len(board.entries()) == n + repeat
        return {"n": n, "first": first, "median": statistics.median(times), "downloads": max(rescored)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    for n in (args.n // 10, args.n):
        r = run(n, args.repeat)
        print(
            f"N={r['n']:4d}: first pull + score {r['first']:6.2f} s; incremental pull + rescore of 1 new file "
            f"{r['median'] * 1000:7.1f} ms (median of {args.repeat}), files downloaded {r['downloads']}"
        )


if __name__ == "__main__":
    main()
