"""Cost of a board refresh with N open pull requests, none changed since the last refresh.

Runs the board (real huggingface_hub client) against the local fake Hub (tests/hubfake.py) on
127.0.0.1; nothing leaves the machine. N submitters each open a pull request with a valid vdr
submission; the board reviews them all (REVIEWS_PER_REFRESH per refresh), then refreshes again
and again with nothing new. The target: a constant number of requests per idle refresh (main's
head, one page of open pull requests per 50, the pull-request heads), no download, no comment.

    python bench/bench_prs.py              # N=50, 5 idle refreshes
    python bench/bench_prs.py --n 200 --json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from huggingface_hub import constants as hf_constants

from leaderboard import demo
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings

from hubfake import running_hub

TOKEN = "hf_benchBENCHbench0123456789"
REPO = "bench/submissions"


def submission(i: int) -> bytes:
    doc = json.loads(demo.make_submissions("vdr", demo.DEMO_DIR / "gold" / "vdr", 1, seed=1000 + i)[0][1])
    doc["system"]["name"] = f"bench system {i}"
    return json.dumps(doc).encode()


def comments(hub, n: int) -> int:
    return sum(len(hub.comments(REPO, num)) for num in range(1, n + 1))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50, help="open pull requests (default 50)")
    parser.add_argument("--repeat", type=int, default=5, help="idle refreshes to measure (default 5)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    hf_constants.HF_HUB_OFFLINE = False
    with running_hub(tokens={TOKEN: "board"}) as hub, tempfile.TemporaryDirectory() as tmp:
        hub.create_repo(REPO)
        for i in range(args.n):
            hub.open_pull_request(REPO, f"user{i}", {f"submissions/vdr/user{i}/run.json": submission(i)})
        settings = StoreSettings(submissions_repo=REPO, hf_token=TOKEN, hf_endpoint=hub.url, data_dir=Path(tmp), hub_timeout=30)
        board = Board(Settings(data_dir=Path(tmp), judge="none"), settings)
        started = time.perf_counter()
        board.start(background=False)
        reviews = board.store.pull_requests.reviews
        while len(reviews) < args.n:  # a bounded number of reviews per refresh: refresh until all are done
            board.refresh()
        first_review_s = time.perf_counter() - started
        pending = sum(1 for e in board.entries("vdr") if e.pull_request is not None)
        before = comments(hub, args.n)
        requests, downloads, posts, seconds = [], [], [], []
        for _ in range(args.repeat):
            hub.reset_counts()
            t0 = time.perf_counter()
            board.refresh()
            seconds.append(time.perf_counter() - t0)
            requests.append(hub.count())
            downloads.append(len(hub.downloads()))
            posts.append(hub.count("POST"))
        figures = {
            "open_pull_requests": args.n,
            "pending_review_entries": pending,
            "first_review_seconds_all": round(first_review_s, 2),
            "idle_refresh_requests": requests,
            "idle_refresh_downloads": downloads,
            "idle_refresh_posts": posts,
            "idle_refresh_new_comments": comments(hub, args.n) - before,
            "idle_refresh_ms_median": round(statistics.median(seconds) * 1000, 1),
            "idle_refresh_ms_max": round(max(seconds) * 1000, 1),
        }
    if args.json:
        print(json.dumps(figures))
        return
    for key, value in figures.items():
        print(f"{key:32} {value}")


if __name__ == "__main__":
    main()
