"""Pushes to RESULTS_REPO during a short run: commits, listings and files sent.

    python bench/bench_results_push.py                    # this checkout
    python bench/bench_results_push.py --code /work/main  # another checkout's leaderboard package, same scenario

The real huggingface_hub client talks to the local fake Hub (tests/hubfake.py).
A board started in the background (lexical judge, pull every `--refresh`
seconds) scores and judges the demo submissions, then a second commit brings
`--new` more (generated), which it scores and judges too; then it stops.
Printed: commits to the results repo, tree listings of it, files sent in all
and per commit, and the wall time until the last system was judged.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout whose leaderboard package runs (default: this one)")
    parser.add_argument("--new", type=int, default=12, help="submissions in the second commit (default 12)")
    parser.add_argument("--refresh", type=float, default=2.0, help="STORE_REFRESH_SECONDS (default 2)")
    args = parser.parse_args()
    sys.path[:0] = [str(args.code), str(ROOT / "tests")]
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

    from huggingface_hub import constants

    from leaderboard.demo import DEMO_DIR, make_submissions
    from leaderboard.service import Board
    from leaderboard.settings import Settings
    from leaderboard.store import StoreSettings
    from leaderboard.store.hub_client import HubClient

    from hubfake import FAKE_TOKEN, running_hub

    constants.HF_HUB_OFFLINE = False
    sent: list[int] = []
    original = HubClient.commit

    def commit(self, repo_id, operations, message, parent_commit=None):
        if repo_id == "bench/results":
            sent.append(len(operations))
        return original(self, repo_id, operations, message, parent_commit)

    HubClient.commit = commit
    demo = ROOT / "assets" / "demo" / "submissions"
    first = {f"submissions/{p.parent.name}/demo/{p.name}": p.read_bytes() for p in sorted(demo.rglob("*")) if p.is_file()}
    second = {
        f"submissions/unidoc/bench/{name}": data
        for name, data in make_submissions("unidoc", DEMO_DIR / "gold" / "unidoc", args.new, seed=7)
    }

    def settled(board) -> bool:
        entries = board.entries()
        return bool(entries) and not any(e.judging or e.status == "pending" for e in entries)

    with running_hub(tokens={FAKE_TOKEN: "admin"}) as hub, tempfile.TemporaryDirectory() as tmp:
        hub.create_repo("bench/subs", repo_type="dataset")
        hub.create_repo("bench/results", repo_type="dataset")
        hub.commit("bench/subs", first)
        settings = StoreSettings(
            submissions_repo="bench/subs",
            results_repo="bench/results",
            hf_token=FAKE_TOKEN,
            hf_endpoint=hub.url,
            data_dir=Path(tmp),
            hub_timeout=10,
            refresh_seconds=args.refresh,
        )
        hub.reset_counts()
        t0 = time.monotonic()
        board = Board(Settings(data_dir=Path(tmp), judge="lexical"), settings).start(background=True)
        while not settled(board) or len(board.entries()) < len(first):
            time.sleep(0.1)
        hub.commit("bench/subs", second)
        while not settled(board) or len(board.entries()) < len(first) + len(second):
            time.sleep(0.1)
        judged_s = time.monotonic() - t0
        board.stop()
        commits = len(hub.commits("bench/results")) - 1  # the repo's own first commit
        listings = hub.count("GET", "bench/results/tree")
        print(f"code: {args.code}")
        print(
            f"{len(first)} + {len(second)} submissions, judged after {judged_s:.1f} s (pull every {args.refresh:g} s): "
            f"{commits} commit(s) to the results repo, {listings} tree listing(s) of it, "
            f"{sum(sent)} file(s) sent (per commit: {sent})"
        )


if __name__ == "__main__":
    main()
