"""A fresh start from RESULTS_REPO: what rescoring every submission costs now that pulled scores are not believed.

    python bench/bench_fresh_start.py [--n 500] [--gold demo|bench] [--judge none|openai]

On the local fake Hub (tests/hubfake.py): N submissions (split over the three
tracks) in a submissions repo; board A scores them all and publishes to the
results repo; board B starts on an empty disk (a new Space): it pulls the
submissions and the verdict records and rescores every submission. Then B
restarts on its own disk (the local cache is trusted: nothing rescored).
Printed per start: seconds of `start()` (and the process's CPU seconds meanwhile), submissions scored and seconds spent
scoring, results-repo files downloaded and sent (pushed with other bytes), judge calls. `--judge openai` judges the
unidoc submissions with the fake OpenAI server (tests/openaifake.py), so B's
judged numbers come from the pulled verdicts. Not a test: the machine is shared.
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
os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
os.environ.setdefault("JUDGE_MODE", "live")

import leaderboard.scoring as scoring
from leaderboard.demo import make_gold, make_submissions
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.tracks.base import DEMO_GOLD

from hubfake import running_hub
from openaifake import FakeOpenAI

TOKEN = "hf_benchBENCHbench0123456789"
TRACKS = ("unidoc", "futurepedia", "vdr")

scored = {"n": 0, "seconds": 0.0}
_score_checked = scoring.score_checked


def _counted(*a, **k):  # every scoring of a file, judged or not, ends here
    scored["n"] += 1
    return _score_checked(*a, **k)


_score_file = scoring.Rescorer.score_file  # recorded verdicts included: a pull scores through it alone


def _timed(method):
    def wrapper(self, *a, **k):
        t = time.perf_counter()
        try:
            return method(self, *a, **k)
        finally:
            scored["seconds"] += time.perf_counter() - t

    return wrapper


scoring.score_checked = _counted
scoring.Rescorer.score_file = _timed(_score_file)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--gold", choices=("demo", "bench"), default="demo")
    ap.add_argument("--judge", choices=("none", "lexical", "openai"), default="none")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, running_hub(tokens={TOKEN: "bench"}) as hub, FakeOpenAI() as judge_server:
        work = Path(tmp)
        gold = {}
        files = {}
        for i, track in enumerate(TRACKS):
            gold[track] = str(make_gold(track, work / f"gold-{track}", seed=1, size="bench")) if args.gold == "bench" else None
            k = args.n // 3 + (1 if i < args.n % 3 else 0)
            source = Path(gold[track]) if gold[track] else DEMO_GOLD / track
            for name, data in make_submissions(track, source, k, seed=1):
                files[f"submissions/{track}/bench{len(files) % 20:02d}/{name}"] = data
        hub.create_repo("bench/subs", repo_type="dataset")
        hub.create_repo("bench/results", repo_type="dataset")
        hub.commit("bench/subs", files)
        print(f"{len(files)} submissions, {sum(map(len, files.values())) / 1e6:.1f} MB, gold {args.gold}, judge {args.judge}")

        def start(data_dir: Path, label: str) -> Board:
            store = StoreSettings(
                submissions_repo="bench/subs",
                results_repo="bench/results",
                hf_token=TOKEN,
                hf_endpoint=hub.url,
                data_dir=data_dir,
                hub_timeout=60,
                # the benchmark's own demo submissions are not on a track scored against bench gold
            )
            settings = Settings(
                data_dir=data_dir,
                gold={t: g for t, g in gold.items() if g},
                judge=args.judge,
                judge_model="fake-judge",
                openai_base_url=judge_server.base_url,
            )
            scored.update(n=0, seconds=0.0)
            hub.reset_counts()
            calls = judge_server.calls
            held = dict(hub.commits("bench/results")[-1].files) if hub.commits("bench/results") else {}
            t, cpu = time.perf_counter(), time.process_time()
            board = Board(settings, store).start(background=False)
            if args.judge != "none":
                board.judge_queue.put("")
                board.judge_queue.run()  # what waits for the judge, judged in this thread
            took, cpu = time.perf_counter() - t, time.process_time() - cpu
            pulled = sum(1 for p in hub.downloads() if p.startswith("results/"))
            now = hub.commits("bench/results")[-1].files if hub.commits("bench/results") else {}
            sent = sum(1 for path, oid in now.items() if path.startswith("results/") and held.get(path) != oid)
            print(
                f"{label:<34} {took:6.1f} s ({cpu:5.1f} s CPU)   scored {scored['n']:4d} in {scored['seconds']:6.1f} s   "
                f"results files downloaded {pulled:4d}, sent {sent:4d}   judge calls {judge_server.calls - calls}"
            )
            return board

        start(work / "a", "A: first start (nothing published)")
        start(work / "b", "B: fresh disk, results repo full")
        start(work / "b", "B: restart on its own disk")


if __name__ == "__main__":
    main()
