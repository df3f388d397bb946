"""Start-up with many cached submissions: 1,000 / 3,000 / 10,000, and the growth per 1,000.

    python bench/bench_scale.py                       # 1000 3000 10000
    python bench/bench_scale.py --sizes 1000 10000 --runs 3

For each size, a private LEADERBOARD_DATA_DIR holds N submissions (a third per
track) with their results already cached, as a previous run of the app leaves
them: the summaries and per-unit files are written directly (copies of the
demo systems' results with shifted numbers and their own hashes,
fingerprints and names), so nothing is scored. The submission files are small
placeholders: with their results cached the board never reads them, and a
rescore would show as an "invalid" row (counted and printed: must be 0).

Each run is a fresh process (`python bench/bench_scale.py --child DIR`) that
times `import gradio`, then `Board().start()` plus `build_app(board)` (what
`python app.py` does before it listens), and prints its peak RSS (VmHWM).
The first run of a size starts without a results index (it is built then);
the following ones start from it. Targets at 10,000: start-up minus
`import gradio` <= 1 s, peak RSS < 1 GB. Not a test: read the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

TARGET_STARTUP_S, TARGET_RSS_MB = 1.0, 1024.0


def templates(work: Path) -> dict[str, list[tuple[dict, bytes]]]:
    """(summary, per-unit file bytes) of every scored demo system, by track, as a judged board leaves them."""
    from leaderboard import results_index
    from leaderboard.service import Board
    from leaderboard.settings import Settings
    from leaderboard.store import StoreSettings

    board = Board(Settings(data_dir=work, judge="lexical"), StoreSettings(data_dir=work)).start(background=True)
    while any(e.judging for e in board.entries()):
        time.sleep(0.2)
    board.stop()
    out: dict[str, list[tuple[dict, bytes]]] = {}
    for e in board.entries():
        if e.status == "scored":
            npz = work / "results" / f"{e.key}.npz"
            summary = results_index.plain(e.summary)
            out.setdefault(summary["track"], []).append((summary, npz.read_bytes() if npz.exists() else b""))
    return out


def generate(data_dir: Path, n: int, tmpl: dict[str, list[tuple[dict, bytes]]]) -> None:
    """N placeholder submissions in the local store's folder, each with its cached result written directly."""
    from leaderboard.scoring import ResultsCache
    from leaderboard.store.naming import sha256_hex, submission_path

    tracks = sorted(tmpl)
    results = data_dir / "results"
    results.mkdir(parents=True, exist_ok=True)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(n):
        track = tracks[i % len(tracks)]
        summary, npz = tmpl[track][(i // len(tracks)) % len(tmpl[track])]
        data = json.dumps({"bench": i}).encode() + b"\n"
        sha = sha256_hex(data)
        target = data_dir / "local" / submission_path(track, f"bench{i % 50:02d}", start + timedelta(minutes=i), sha, "jsonl")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        shift = (i % 997) / 997 * 0.05  # spread the numbers so ranks differ
        s = {
            **summary,
            "sha256": sha,
            "fingerprint": sha256_hex(f"fingerprint {i}".encode()),
            "system": {**summary["system"], "name": f"{summary['system'].get('name', 'system')}-{i}"},
            "overall": {k: (v - shift if isinstance(v, float) else v) for k, v in summary["overall"].items()},
        }
        key = ResultsCache.key(sha, track, s.get("gold_sha256"), s.get("judge", "none"))
        (results / f"{key}.json").write_text(json.dumps(s))
        if npz:
            (results / f"{key}.npz").write_bytes(npz)


def child(data_dir: Path) -> None:
    """One start-up, as `python app.py` does it, in this fresh process: printed as JSON."""
    t = time.perf_counter()
    import gradio  # noqa: F401

    import_s = time.perf_counter() - t
    t, cpu = time.perf_counter(), time.process_time()
    from leaderboard.service import Board
    from leaderboard.settings import Settings
    from leaderboard.store import StoreSettings
    from leaderboard.ui import build_app

    board = Board(Settings(data_dir=data_dir, judge="lexical"), StoreSettings(data_dir=data_dir)).start(background=True)
    started_s, started_cpu = time.perf_counter() - t, time.process_time() - cpu
    build_app(board)
    total_s, total_cpu = time.perf_counter() - t, time.process_time() - cpu
    entries = board.entries()
    board.stop()
    rss = next(int(x.split()[1]) / 1024 for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmHWM:"))
    print(
        json.dumps(
            {
                "import_gradio_s": import_s,
                "board_start_s": started_s,
                "board_start_cpu_s": started_cpu,
                "startup_s": total_s,
                "startup_cpu_s": total_cpu,
                "rows": len(entries),
                "invalid": sum(e.status == "invalid" for e in entries),
                "peak_rss_mb": rss,
            }
        )
    )


def run_child(data_dir: Path) -> dict:
    env = {**os.environ, "LOG_LEVEL": "WARNING", "STORE_REFRESH_SECONDS": "3600"}
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(data_dir)], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 3000, 10000])
    parser.add_argument("--runs", type=int, default=3, help="start-ups per size from the index (median printed)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    with tempfile.TemporaryDirectory() as tmp:
        tmpl = templates(Path(tmp) / "demo")
        figures = []
        for n in args.sizes:
            data_dir = Path(tmp) / f"board{n}"
            t = time.perf_counter()
            generate(data_dir, n, tmpl)
            gen_s = time.perf_counter() - t
            first = run_child(data_dir)
            runs = [run_child(data_dir) for _ in range(args.runs)]
            median = statistics.median(r["startup_s"] for r in runs)
            figures.append((n, median, statistics.median(r["board_start_cpu_s"] for r in runs)))

            def med(k: str, runs: list[dict] = runs) -> float:
                return statistics.median(r[k] for r in runs)

            print(
                f"{n:6d} submissions (generated in {gen_s:.1f} s): {runs[-1]['rows']} rows, {runs[-1]['invalid']} invalid | "
                f"import gradio {med('import_gradio_s'):.2f} s\n"
                f"        start-up minus import gradio: without an index {first['startup_s']:.2f} s "
                f"(Board.start {first['board_start_s']:.2f} s, CPU {first['board_start_cpu_s']:.2f} s); "
                f"from the index {median:.2f} s, CPU {med('startup_cpu_s'):.2f} s "
                f"(Board.start {med('board_start_s'):.2f} s, CPU {med('board_start_cpu_s'):.2f} s; "
                f"the rest is build_app) | peak RSS {max(r['peak_rss_mb'] for r in runs):.0f} MB",
                flush=True,
            )
            shutil.rmtree(data_dir)
        if len(figures) > 1:
            (n0, s0, c0), (n1, s1, c1) = figures[0], figures[-1]
            print(
                f"growth per 1,000 submissions ({n0} -> {n1}): start-up {(s1 - s0) / (n1 - n0) * 1e6:.0f} ms, "
                f"Board.start CPU {(c1 - c0) / (n1 - n0) * 1e6:.0f} ms"
            )
        print(f"targets at 10,000: start-up minus import gradio <= {TARGET_STARTUP_S:g} s, peak RSS < {TARGET_RSS_MB:g} MB")


if __name__ == "__main__":
    main()
