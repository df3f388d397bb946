"""Start-up and click latency with many cached submissions: 1,000 / 3,000 / 10,000, and the growth per 1,000.

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
times `import gradio`, then `import app` and `app.start()` (`Board(settings).start()`
plus `build_app(board)` under one collector pause: the start-up figure, what
`python app.py` does before `queue().launch()`, which
gradio then spends rebuilding its app and starting the server: timed apart, once
per size, as it does not depend on the board), and prints its peak RSS (VmHWM).
Its bytecode is cached between runs (in the run's temporary folder), as Python
does by default.
The first run of a size starts without the results tables (they are built
then, from the summaries: results.py); the next ones start from them, as
every start does. The first of those also serves the app and
times six clicks end to end through gradio_client (median of 5 after a warm-up), and what
a push to RESULTS_REPO pays per track to build data/<track>/systems.parquet:
the first track's table, a search for a system ranked at 90%, ranking by
another metric, "show more" (two pages), compare (the first against that deep
system) and its detail; before them, once, the last track's first table (a
track off screen at start-up is ranked when first asked for: what the first
visitor to open its tab waits; timed after another track's first table has
paid for the first request of that kind). Targets at 10,000: start-up minus `import gradio`
<= 1 s, each click <= 300 ms, peak RSS < 1 GB. Not a test: read the figures.

`templates_of(board, data_dir)` and `generate(data_dir, n, templates)` are
importable: tests build a board of a few hundred systems with them.
"""

from __future__ import annotations

import argparse
import gzip
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

TARGET_STARTUP_S, TARGET_RSS_MB, TARGET_CLICK_S = 1.0, 1024.0, 0.3


def templates(work: Path) -> dict[str, list[tuple[Any, bytes, bytes | None]]]:
    """(summary, per-unit file bytes, gzipped body) of every scored demo system, by track, as a judged board
    leaves them."""
    from leaderboard.service import Board
    from leaderboard.settings import Settings
    from leaderboard.store import StoreSettings

    board = Board(Settings(data_dir=work, judge="lexical"), StoreSettings(data_dir=work)).start(background=True)
    while any(e.judging for e in board.entries()):
        time.sleep(0.2)
    board.stop()
    return templates_of(board, work)


def templates_of(board, data_dir: Path) -> dict[str, list[tuple[Any, bytes, bytes | None]]]:
    """(summary, per-unit file bytes) of every scored system of a judged board whose results are in `data_dir`
    (a test's running demo app serves as well as the demo board `templates` starts)."""
    from leaderboard.results import PARTS
    from leaderboard.tracks import TRACKS

    work = Path(data_dir)
    files = board.refresher.snapshot.by_path() if board.refresher.snapshot else {}
    out: dict[str, list[tuple[Any, bytes, bytes | None]]] = {}
    for track in TRACKS:
        for e in board.entries(track, PARTS):  # complete summaries: copies are written whole
            if e.status == "scored" and not e.duplicate_of:
                npz = work / "results" / f"{e.key}.npz"
                body = _jsonl_body(Path(files[e.path].local_path)) if e.path in files else None
                out.setdefault(e.summary.track, []).append((e.summary, npz.read_bytes() if npz.exists() else b"", body))
    return out


def _jsonl_body(path: Path) -> bytes | None:
    """What a copy of the file is made from: for JSON lines, the header line then the other lines gzipped once (a
    copy is its own gzipped header + these bytes: gzip reads concatenated members as one stream); for one JSON
    document, the document; None for anything else."""
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    head, _, body = data.partition(b"\n")
    try:
        header = json.loads(head)
    except ValueError:
        try:
            whole = json.loads(data)
        except ValueError:
            return None
        return data if isinstance(whole, dict) and isinstance(whole.get("system"), dict) else None
    if not isinstance(header, dict) or not isinstance(header.get("system"), dict):
        return None
    return json.dumps(header).encode() + b"\n" + gzip.compress(body, 1)


def _copy(body: bytes, name: str) -> tuple[bytes, str]:
    """(bytes, extension) of a copy of a template's file under another system name."""
    head, _, rest = body.partition(b"\n")
    try:
        header = json.loads(head)
    except ValueError:  # one JSON document (pretty-printed: its first line is not a document)
        doc = json.loads(body)
        return json.dumps({**doc, "system": {**doc["system"], "name": name}}).encode(), "json"
    if "system" in header and isinstance(header["system"], dict) and rest[:2] == b"\x1f\x8b":
        header = {**header, "system": {**header["system"], "name": name}}
        return gzip.compress(json.dumps(header).encode() + b"\n", 1) + rest, "jsonl.gz"
    doc = json.loads(body)  # a one-line JSON document
    return json.dumps({**doc, "system": {**doc["system"], "name": name}}).encode(), "json"


def generate(data_dir: Path, n: int, tmpl: dict[str, list[tuple[Any, bytes, bytes | None]]]) -> None:
    """N submissions in the local store's folder, each with its cached result written directly.

    A copy of a JSON-lines demo file is that file under its own header (its own system name, so its own hash):
    compare and detail read its records. Other formats get a small placeholder (with its results cached, the
    board never reads it; a rescore would show as an "invalid" row)."""
    import msgspec

    from leaderboard import results as results_model
    from leaderboard.scoring import ResultsCache
    from leaderboard.store.naming import sha256_hex, submission_path

    tracks = sorted(tmpl)
    results = data_dir / "results"
    results.mkdir(parents=True, exist_ok=True)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(n):
        track = tracks[i % len(tracks)]
        summary, npz, body = tmpl[track][(i // len(tracks)) % len(tmpl[track])]
        name = f"{summary.system.get('name', 'system')}-{i}"
        if body is not None:
            data, ext = _copy(body, name)
        else:
            data, ext = json.dumps({"bench": i}).encode() + b"\n", "jsonl"
        sha = sha256_hex(data)
        target = data_dir / "local" / submission_path(track, f"bench{i % 50:02d}", start + timedelta(minutes=i), sha, ext)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        shift = (i % 997) / 997 * 0.05  # spread the numbers so ranks differ
        s = msgspec.structs.replace(
            summary,
            sha256=sha,
            fingerprint=sha256_hex(f"fingerprint {i}".encode()),
            system={**summary.system, "name": name},
            overall={k: (v - shift if isinstance(v, float) else v) for k, v in summary.overall.items()},
        )
        key = ResultsCache.key(sha, track, s.gold_sha256, s.judge)
        (results / f"{key}.json").write_bytes(results_model.encode(s))
        if npz:
            (results / f"{key}.npz").write_bytes(npz)


CLICKS = ("table", "search", "sort by another metric", "show more", "compare", "detail")


def clicks(board, blocks, repeats: int = 5) -> tuple[dict[str, float], float]:
    """Median seconds, end to end through gradio_client, of each click on the served app (the first track); and the
    seconds `queue().launch()` took to listen (gradio rebuilding its app and starting the server)."""
    import socket

    from gradio_client import Client

    from leaderboard.tracks import TRACKS
    from leaderboard.ui import launch_kwargs, views

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.perf_counter()  # what app.py does after build_app, until the server listens
    blocks.queue(default_concurrency_limit=4).launch(
        prevent_thread_lock=True, quiet=True, **{**launch_kwargs(board.settings), "server_name": "127.0.0.1", "server_port": port}
    )
    launch_s = time.perf_counter() - started
    try:
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        track = next(iter(TRACKS.values()))
        ids = [i for _, i in views.system_choices(board, track.name)]
        deep = board.entry(ids[int(len(ids) * 0.9)])  # a system far beyond the first page
        other = next(m.key for m in track.metrics if m.key != track.rank_by)
        table = f"/table_{track.name}"
        spec = client.view_api(return_format="dict", print_info=False)["named_endpoints"][table]["parameters"]
        # the page's default view: each parameter's default (the search box's is "", which the client calls none)
        view = {p["parameter_name"]: p["parameter_default"] if p["parameter_has_default"] else "" for p in spec}
        calls = {
            "table": lambda: client.predict(**view, api_name=table),
            "search": lambda: client.predict(**{**view, "search": deep.name}, api_name=table),
            "sort by another metric": lambda: client.predict(**{**view, "rank_by": other}, api_name=table),
            "show more": lambda: client.predict(**{**view, "rows": 2 * views.page_rows(board)}, api_name=table),
            "compare": lambda: client.predict(track=track.name, system_a=ids[0], system_b=deep.id, api_name="/compare"),
            "detail": lambda: client.predict(entry_id=deep.id, api_name="/detail"),
        }
        # Another track's first table after the start: a track is ranked when first asked for (its tab opening,
        # ui/tabs/track.py `on_screen`), so the first visitor to open it pays that once per board version. Timed
        # once, for the last track, after the second one's first table (which pays for the first request of
        # that kind, as the warm-up below does for every click) and before anything ranks the last one.
        api = client.view_api(return_format="dict", print_info=False)["named_endpoints"]

        def default_table(name: str):
            spec = api[f"/table_{name}"]["parameters"]
            view = {p["parameter_name"]: p["parameter_default"] if p["parameter_has_default"] else "" for p in spec}
            return client.predict(**view, api_name=f"/table_{name}")

        *_, second, last = TRACKS
        default_table(second)
        t = time.perf_counter()
        default_table(last)
        out = {"another track, first time (once)": time.perf_counter() - t}
        for name in CLICKS:
            calls[name]()  # warm: the first request of a kind pays for imports and caches
            times = []
            for _ in range(repeats):
                t = time.perf_counter()
                calls[name]()
                times.append(time.perf_counter() - t)
            out[name] = statistics.median(times)
        return out, launch_s
    finally:
        blocks.close()


def child(data_dir: Path, with_clicks: bool = False) -> None:
    """One start-up, as `python app.py` does it, in this fresh process: printed as JSON."""
    t = time.perf_counter()
    import gradio  # noqa: F401

    import_s = time.perf_counter() - t
    t, cpu = time.perf_counter(), time.process_time()
    import app  # what `python app.py` imports, then runs: app.start (the board loaded, the page built)
    from leaderboard.service import Board
    from leaderboard.settings import Settings
    from leaderboard.store import StoreSettings

    board = Board(Settings(data_dir=data_dir, judge="lexical"), StoreSettings(data_dir=data_dir))
    started: list[float] = []
    load = board.start

    def timed_start(*args, **kwargs):  # the board's part of app.start, timed apart
        out = load(*args, **kwargs)
        started.extend((time.perf_counter() - t, time.process_time() - cpu))
        return out

    board.start = timed_start
    board, blocks = app.start(board)
    total_s, total_cpu = time.perf_counter() - t, time.process_time() - cpu
    started_s, started_cpu = started
    entries = board.entries()
    click_s, launch_s = clicks(board, blocks) if with_clicks else ({}, None)
    publish_s = publish(board) if with_clicks else None
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
                "clicks_s": click_s,
                "launch_s": launch_s,
                "publish_s": publish_s,
            }
        )
    )


def publish(board) -> dict[str, float]:
    """Per track, seconds to build the published data/<track>/systems.parquet (the results table's listed rows
    after the board's columns, as parquet bytes): what each push to RESULTS_REPO pays besides new per-unit files
    (median of 3)."""
    from leaderboard import results_dataset
    from leaderboard.tracks import TRACKS

    out = {}
    for track in TRACKS.values():
        times = []
        for _ in range(3):
            t = time.perf_counter()
            table = results_dataset.systems_table(board, track)
            if table is not None:
                results_dataset.parquet_bytes(table)
            times.append(time.perf_counter() - t)
        out[track.name] = statistics.median(times)
    return out


def run_child(data_dir: Path, with_clicks: bool = False) -> dict:
    env = {**os.environ, "LOG_LEVEL": "WARNING", "STORE_REFRESH_SECONDS": "3600"}
    # Bytecode cached as Python does by default (a deployment compiles the app's modules at its first start
    # only), in a folder of this run: with PYTHONDONTWRITEBYTECODE set, every start compiled ~60 modules anew.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(data_dir.parent / "pycache")
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(data_dir), *(["--clicks"] if with_clicks else [])],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 3000, 10000])
    parser.add_argument("--runs", type=int, default=3, help="start-ups per size from the results tables (median printed)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--clicks", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.clicks)
        return
    with tempfile.TemporaryDirectory() as tmp:
        tmpl = templates(Path(tmp) / "demo")
        figures = []
        for n in args.sizes:
            data_dir = Path(tmp) / f"board{n}"
            t = time.perf_counter()
            generate(data_dir, n, tmpl)
            gen_s = time.perf_counter() - t
            first = run_child(data_dir)  # builds the results tables
            runs = [run_child(data_dir, with_clicks=i == 0) for i in range(args.runs)]  # clicks timed once per size
            median = statistics.median(r["startup_s"] for r in runs)
            click_s = runs[0]["clicks_s"]
            figures.append((n, median, statistics.median(r["board_start_cpu_s"] for r in runs), click_s))

            def med(k: str, runs: list[dict] = runs) -> float:
                return statistics.median(r[k] for r in runs)

            print(
                f"{n:6d} submissions (generated in {gen_s:.1f} s): {runs[-1]['rows']} rows, {runs[-1]['invalid']} invalid | "
                f"import gradio {med('import_gradio_s'):.2f} s\n"
                f"        start-up minus import gradio: without the results tables {first['startup_s']:.2f} s "
                f"(Board.start {first['board_start_s']:.2f} s, CPU {first['board_start_cpu_s']:.2f} s); "
                f"from the tables {median:.2f} s, CPU {med('startup_cpu_s'):.2f} s "
                f"(Board.start {med('board_start_s'):.2f} s, CPU {med('board_start_cpu_s'):.2f} s; "
                f"the rest is build_app); then app.py's queue().launch() until listening {runs[0]['launch_s']:.2f} s "
                f"(gradio's own, not counted above) | peak RSS {max(r['peak_rss_mb'] for r in runs):.0f} MB\n"
                f"        clicks (median of 5 unless said, end to end through gradio_client): "
                + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in click_s.items())
                + "\n        publish data/<track>/systems.parquet (median of 3): "
                + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in runs[0]["publish_s"].items()),
                flush=True,
            )
            shutil.rmtree(data_dir)
        if len(figures) > 1:
            (n0, s0, c0, k0), (n1, s1, c1, k1) = figures[0], figures[-1]
            per_1000 = 1000 / (n1 - n0)
            print(
                f"growth per 1,000 submissions ({n0} -> {n1}): start-up {(s1 - s0) * per_1000 * 1000:.0f} ms, "
                f"Board.start CPU {(c1 - c0) * per_1000 * 1000:.0f} ms; clicks "
                + ", ".join(f"{k} {(k1[k] - k0[k]) * per_1000 * 1000:+.1f} ms" for k in CLICKS if k in k0 and k in k1)
            )
        print(
            f"targets at 10,000: start-up minus import gradio <= {TARGET_STARTUP_S:g} s, each click <= "
            f"{TARGET_CLICK_S * 1000:.0f} ms, peak RSS < {TARGET_RSS_MB:g} MB"
        )


if __name__ == "__main__":
    main()
