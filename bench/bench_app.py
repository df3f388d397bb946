"""The app with 500 cached submissions: start-up time, the heaviest interactions, peak memory.

    python bench/bench_app.py                 # 500 submissions over the three tracks
    python bench/bench_app.py --n 200 --runs 3 --data-dir /tmp/board500   # reuse a generated, scored folder

Steps:
  1. generate N synthetic submissions with `leaderboard.demo.make_submissions`
     against the bundled demo gold, spread over the three tracks, into a
     private LEADERBOARD_DATA_DIR where the local store finds them;
  2. score them once (with the app's default lexical judge) to fill the
     results cache, as a previous run of the app would have;
  3. (a) start-up: spawn `python app.py` (through a thin wrapper that counts
     rescoring calls) and time process start -> first HTTP 200 for the page,
     minus the wall time of a process that only does `import gradio`;
     the wrapper reports how many files were rescored (must be 0) and the
     results cache must be unchanged;
  4. (b) interactions, server side: the handlers the page runs when a track
     tab opens (table render + its first chart), when compare runs, when a
     system's detail opens, and the page-load handler; timed in-process on a
     board started from the same cache; and the same calls end to end through
     gradio_client against the spawned app, for reference;
  5. (c) the spawned app's peak RSS (VmHWM) after those calls.

Targets: start-up minus import gradio < 2 s, interactions < 300 ms, memory < 1 GB.
Not a test: the machine is shared and noisy, read the figures (medians of a few runs).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

TRACK_NAMES = ("unidoc", "futurepedia", "vdr")
TARGET_STARTUP_S, TARGET_INTERACTION_MS, TARGET_RSS_MB = 2.0, 300.0, 1024.0

# The app, unchanged, with a counter on every path that scores a file.
WRAPPER = r"""
import atexit, json, sys
sys.path.insert(0, {root!r})
import leaderboard.scoring as scoring
counts = {{"score_file": 0, "score_bytes": 0}}
_score_file, _score_bytes = scoring.Rescorer.score_file, scoring.score_bytes
def score_file(self, *a, **k):
    counts["score_file"] += 1
    return _score_file(self, *a, **k)
def score_bytes(*a, **k):
    counts["score_bytes"] += 1
    return _score_bytes(*a, **k)
scoring.Rescorer.score_file, scoring.score_bytes = score_file, score_bytes
atexit.register(lambda: print("BENCH-COUNTS " + json.dumps(counts), flush=True))
sys.argv = ["app.py"]
import runpy
runpy.run_path({app!r}, run_name="__main__")
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- 1. data ---------------------------------------------------------------------------------------------
def generate(data_dir: Path, n: int) -> int:
    from leaderboard.demo import DEMO_DIR, make_submissions
    from leaderboard.store.naming import sha256_hex, submission_path

    root = data_dir / "local"
    if (root / "submissions").is_dir() and any((root / "submissions").rglob("*.json*")):
        return sum(1 for _ in (root / "submissions").rglob("*") if _.is_file() and ".meta" not in _.name)
    counts = [n // 3 + (1 if i < n % 3 else 0) for i in range(3)]
    start = datetime(2026, 1, 1, tzinfo=UTC)
    made = 0
    for track, k in zip(TRACK_NAMES, counts):
        for i, (name, data) in enumerate(make_submissions(track, DEMO_DIR / "gold" / track, k, seed=1)):
            ext = name.split(".", 1)[1]
            rel = submission_path(track, f"bench{i % 20:02d}", start + timedelta(minutes=made), sha256_hex(data), ext)
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            made += 1
    return made


def board_for(data_dir: Path):
    from leaderboard.service import Board
    from leaderboard.settings import Settings
    from leaderboard.store import StoreSettings

    return Board(Settings(data_dir=data_dir, judge="lexical"), StoreSettings(data_dir=data_dir))


def warm(data_dir: Path) -> tuple[int, float]:
    """Score everything once, judged, as a previous run of the app leaves the results cache."""
    t = time.perf_counter()
    board = board_for(data_dir).start(background=True)
    while any(e.judging for e in board.entries()):
        time.sleep(0.2)
    board.stop()
    return len(board.entries()), time.perf_counter() - t


def cache_state(data_dir: Path) -> dict[str, int]:
    return {p.relative_to(data_dir).as_posix(): p.stat().st_mtime_ns for p in (data_dir / "results").rglob("*") if p.is_file()}


# ---- 3. start-up ---------------------------------------------------------------------------------------------
def import_gradio_seconds() -> float:
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "import gradio"], check=True, cwd=ROOT, env={**os.environ, "GRADIO_ANALYTICS_ENABLED": "False"}
    )
    return time.perf_counter() - t


class AppProcess:
    def __init__(self, data_dir: Path):
        self.port = free_port()
        env = {
            **os.environ,
            "LEADERBOARD_DATA_DIR": str(data_dir),
            "GRADIO_SERVER_PORT": str(self.port),
            "LOG_LEVEL": "WARNING",
            "STORE_REFRESH_SECONDS": "3600",
        }
        code = WRAPPER.format(root=str(ROOT), app=str(ROOT / "app.py"))
        self.url = f"http://127.0.0.1:{self.port}/"
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )

    def wait_served(self, timeout: float = 120) -> float:
        while time.perf_counter() - self.t0 < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError("the app exited:\n" + self.proc.stdout.read())
            try:
                with urllib.request.urlopen(self.url, timeout=2) as r:
                    if r.status == 200 and b"gradio_config" in r.read():
                        return time.perf_counter() - self.t0
            except OSError:
                pass
            time.sleep(0.02)
        raise TimeoutError("the app did not serve the page")

    def peak_rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self) -> dict:
        self.proc.send_signal(signal.SIGINT)
        try:
            out, _ = self.proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        for line in out.splitlines():
            if line.startswith("BENCH-COUNTS "):
                return json.loads(line.split(" ", 1)[1])
        return {"error": out[-2000:]}


# ---- 4. interactions -------------------------------------------------------------------------------------------
def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def server_side(data_dir: Path, repeat: int) -> dict[str, list[float]]:
    """The handlers behind each interaction, called as Gradio calls them, on a board started from the cache."""
    import gradio as gr

    from leaderboard.tracks import TRACKS
    from leaderboard.ui import build_app, views
    from leaderboard.ui.layout import TrackTab

    board = board_for(data_dir).start(background=False)
    demo = build_app(board)
    tabs = {}
    named = {}
    load_fn = None
    for block_fn in demo.fns.values():
        fn = getattr(block_fn.fn, "__wrapped__", block_fn.fn)  # every handler is wrapped by layout.guarded
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, TrackTab):
            tabs[owner.track.name] = owner
        if block_fn.api_name:
            named[block_fn.api_name] = block_fn.fn
        if getattr(fn, "__name__", "") == "on_load":
            load_fn = block_fn.fn
    results: dict[str, list[float]] = {}
    for name, tt in tabs.items():
        t = TRACKS[name]
        controls = [t.metric(t.rank_by).label, views.ALL, "", *[[] for _ in tt.filter_fields], views.default_columns(t)]
        chart_args = [t.metric(t.rank_by).label, None, *controls]

        def switch(tt=tt, controls=controls, chart_args=chart_args):
            tt.render(*controls)  # the table (and the URL) for the tab
            tt.chart(0, *chart_args)  # its first chart, drawn when the tab opens

        results[f"switch to {name} ({len(board.entries(name))} systems): table + first chart"] = timed(switch, repeat)
        results[f"  of which table render ({name})"] = timed(lambda tt=tt, c=controls: tt.render(*c), repeat)
        ids = [i for _, i in views.system_choices(board, name)]
        results[f"compare ({name}, best two)"] = timed(lambda ids=ids, n=name: named["compare"](n, ids[0], ids[1]), repeat)
        results[f"detail view ({name}, best system)"] = timed(lambda ids=ids: named["detail"](ids[0]), repeat)
    if load_fn is not None:
        request = gr.Request(query_params={})

        results["page load (restore every control)"] = timed(lambda: load_fn(request), repeat)
    board.stop()
    return results


def client_side(url: str, data_dir: Path, repeat: int) -> dict[str, list[float]]:
    from gradio_client import Client

    from leaderboard.tracks import TRACKS
    from leaderboard.ui import views

    board = board_for(data_dir).start(background=False)  # only to know ids and controls
    client = Client(url, verbose=False)
    out = {}
    for name, t in TRACKS.items():
        controls = [t.metric(t.rank_by).label, views.ALL, "", *[[] for _ in views.filter_fields(t)], views.default_columns(t)]
        out[f"/table_{name}"] = timed(lambda n=name, c=controls: client.predict(*c, api_name=f"/table_{n}"), repeat)
        ids = [i for _, i in views.system_choices(board, name)]
        out[f"/compare ({name})"] = timed(lambda n=name, ids=ids: client.predict(n, ids[0], ids[1], api_name="/compare"), repeat)
        out[f"/detail ({name})"] = timed(lambda ids=ids: client.predict(ids[0], api_name="/detail"), repeat)
    board.stop()
    return out


def fmt_ms(values: list[float]) -> str:
    return f"median {statistics.median(values):7.1f} ms   max {max(values):7.1f} ms"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500, help="submissions besides the bundled demo (default 500)")
    parser.add_argument("--runs", type=int, default=3, help="app start-ups to time (default 3)")
    parser.add_argument("--repeat", type=int, default=5, help="calls per interaction (default 5)")
    parser.add_argument("--data-dir", type=Path, help="keep the generated, scored data here (reused when present)")
    args = parser.parse_args(argv)

    tmp = None
    data_dir = args.data_dir
    if data_dir is None:
        tmp = tempfile.mkdtemp(prefix="bench-app-")
        data_dir = Path(tmp)
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        t = time.perf_counter()
        made = generate(data_dir, args.n)
        size = sum(p.stat().st_size for p in (data_dir / "local").rglob("*") if p.is_file()) / 1e6
        print(f"data: {made} submissions ({size:.0f} MB) in {data_dir} ({time.perf_counter() - t:.1f} s)")
        entries, secs = warm(data_dir)
        print(f"results cache filled: {entries} entries (bench + demo) scored and judged in {secs:.1f} s")
        before = cache_state(data_dir)

        # (a) start-up
        imports = [import_gradio_seconds() for _ in range(args.runs)]
        starts, counts, rss, client = [], [], None, None
        for run in range(args.runs):
            app = AppProcess(data_dir)
            try:
                starts.append(app.wait_served())
                if run == args.runs - 1:
                    client = client_side(app.url, data_dir, args.repeat)
                    rss = app.peak_rss_mb()
            finally:
                counts.append(app.stop())
        after = cache_state(data_dir)
        imp, start = statistics.median(imports), statistics.median(starts)
        rescored = sum(c.get("score_file", 0) + c.get("score_bytes", 0) for c in counts)
        print(
            "\n(a) start-up with the results cache (process start -> page served), "
            f"{args.runs} runs: {', '.join(f'{s:.2f}' for s in starts)} s"
        )
        print(f"    `python -c 'import gradio'` alone: {', '.join(f'{s:.2f}' for s in imports)} s")
        print(
            f"    start-up minus import gradio: {start - imp:.2f} s (median)   target < {TARGET_STARTUP_S:.0f} s  "
            f"{'OK' if start - imp < TARGET_STARTUP_S else 'MISSED'}"
        )
        print(
            f"    files rescored at start-up: {rescored} (per run: {counts})   "
            f"results cache {'unchanged' if after == before else 'CHANGED'}  "
            f"{'OK' if rescored == 0 and after == before else 'MISSED'}"
        )

        # (b) interactions
        print(f"\n(b) interactions, server side (handler time, {args.repeat} calls each):")
        worst = 0.0
        for label, values in server_side(data_dir, args.repeat).items():
            print(f"    {label:58s} {fmt_ms(values)}")
            if not label.startswith("  "):
                worst = max(worst, statistics.median(values))
        print(
            f"    heaviest (median): {worst:.0f} ms   target < {TARGET_INTERACTION_MS:.0f} ms  "
            f"{'OK' if worst < TARGET_INTERACTION_MS else 'MISSED'}"
        )
        if client:
            print("    end to end through gradio_client (HTTP + queue + JSON), for reference:")
            for label, values in client.items():
                print(f"    {label:58s} {fmt_ms(values)}")

        # (c) memory
        print(
            f"\n(c) app process peak RSS (VmHWM) after start-up and the calls above: {rss:.0f} MB   "
            f"target < {TARGET_RSS_MB:.0f} MB  {'OK' if rss is not None and rss < TARGET_RSS_MB else 'MISSED'}"
        )
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
