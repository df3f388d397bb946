"""Hostile and heavy uploads through the Submit tab while a second client browses: peak memory, slowest page request.

    python bench/bench_abuse.py                # every payload below, once
    python bench/bench_abuse.py --only bomb    # payloads whose name contains "bomb"
    python bench/bench_abuse.py --pr-floods    # only the pull-request floods (local fake Hub, no app)
    python bench/bench_abuse.py upload-flood   # the upload route flooded, no submit (upload_flood, at the end)

Steps:
  1. build the payloads in a temporary folder: the `{}`-bomb (.json.gz and
     .jsonl.gz: ~20 million empty objects, ~57 MiB decompressed in ~60 KB), a
     record flood per track (valid-looking records far past the record limit),
     a 100,000-deep nesting, and the largest valid file per track (the demo's
     largest run grown to the limits: answers and predictions of 32,768
     characters, rankings of 100 documents);
  2. start the app (`python app.py` on a private copy of the demo data, as a
     visitor would meet it) and, from one thread, submit each payload through
     the public `/submit` endpoint with gradio_client;
  3. meanwhile a second client requests `/table_<track>` in a loop and times
     every request end to end;
  4. print, per payload, the verdict and the time it took; the slowest and the
     median page request while payloads were in flight; the app's peak RSS
     (VmHWM).

  5. pull-request floods against the local fake Hub (tests/hubfake.py), the
     board's reviewer with AUTO_MERGE=1: what a refused pull request of one
     valid file and 3,000 `.meta.json` sidecars costs (requests, downloads,
     seconds), and how long a valid pull request by another author waits
     while ten pull requests are pushed at every refresh (refreshes, seconds,
     comments the ten earn); run after the payloads, or alone with --pr-floods.

Targets (issue 8): app peak RSS < 1.2 GB, slowest page request < 2 s.
Not a test: the machine is shared and noisy; read the figures.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench_app import AppProcess  # the same spawned app as the start-up bench

TARGET_RSS_MB, TARGET_PAGE_S = 1200.0, 2.0
SYSTEM = {"name": "bench payload", "paradigm": "text", "model": "m", "method": "none"}


# ---- 1. payloads --------------------------------------------------------------------------------------------
def _gz(path: Path, chunks) -> Path:
    with gzip.open(path, "wb", compresslevel=6) as fh:
        for chunk in chunks:
            fh.write(chunk)
    return path


def empty_object_bomb(folder: Path, jsonl: bool, count: int = 20_000_000) -> Path:
    block = 1_000_000
    if jsonl:
        head = json.dumps({"track": "unidoc", "system": SYSTEM}).encode() + b"\n"
        return _gz(folder / "bomb-empty-objects.jsonl.gz", [head, *(b"{}\n" * block for _ in range(count // block))])
    head = json.dumps({"track": "unidoc", "system": SYSTEM})[:-1].encode() + b', "predictions": [{}'
    return _gz(folder / "bomb-empty-objects.json.gz", [head, *(b",{}" * block for _ in range(count // block)), b"]}"])


def record_flood(folder: Path, track: str, count: int = 1_500_000) -> Path:
    record = {
        "unidoc": {"id": "finance-0000", "retrieved": [{"doc": "d", "pages": [1]}], "answer": "a"},
        "futurepedia": {"task": "monolingual", "id": 0, "query_lang": "en", "prediction": "a"},
        "vdr": {"dataset": "vidore/docvqa_test_subsampled", "query_id": "q", "ranking": [{"doc": "d", "score": 1.0}]},
    }[track]
    line = json.dumps(record).encode() + b"\n"
    head = json.dumps({"track": track, "system": SYSTEM}).encode() + b"\n"
    block = 100_000
    return _gz(folder / f"flood-{track}.jsonl.gz", [head, *(line * block for _ in range(count // block))])


def deep_nesting(folder: Path, depth: int = 100_000) -> Path:
    path = folder / "deep-nesting.json"
    head = json.dumps({"track": "unidoc", "system": SYSTEM})[:-1]
    path.write_text(head + ', "predictions": [' + "[" * depth + "]" * depth + "]}", encoding="utf-8")
    return path


def largest_valid(folder: Path, track: str) -> Path:
    """The bundled demo's largest submission of a track, grown to the limits (and so a run of its own, not a duplicate).

    unidoc answers and futurepedia predictions padded to 32,768 characters; vdr
    rankings padded to 100 documents with made-up ids below the real ones.
    """
    from leaderboard.submission import parse_envelope

    demo = sorted((ROOT / "assets" / "demo" / "submissions" / track).rglob("*.json*"), key=lambda p: p.stat().st_size)
    source = [p for p in demo if ".meta" not in p.name][-1]
    env = parse_envelope(source.read_bytes(), source.name)
    records = env.records
    # text at the 32,768-character limit, or as long as the 128 MiB size cap allows for this many records
    # (up to 4 bytes a character in UTF-8)
    size = min(32_768, (120 << 20) // (4 * max(len(records), 1)))
    for rec in records:
        field = {"unidoc": "answer", "futurepedia": "prediction"}.get(track)
        if field:
            text = rec.get(field) or "answer"
            rec[field] = ((text + " ") * (size // (len(text) + 1) + 1))[:size]
        else:
            ranking = rec["ranking"]
            low = min(d["score"] for d in ranking)
            rec["ranking"] = ranking + [{"doc": f"pad-{k}", "score": low - 1 - k} for k in range(100 - len(ranking))]
    header = {"track": track, "system": {**env.system, "name": f"largest valid {track}"}}
    lines = [json.dumps(header), *(json.dumps(r, ensure_ascii=False) for r in records)]
    return _gz(folder / f"largest-{track}.jsonl.gz", ["\n".join(lines).encode()])


def payloads(folder: Path) -> list[tuple[str, str, Path]]:
    out = [
        ("bomb {} .json.gz", "unidoc", empty_object_bomb(folder, jsonl=False)),
        ("bomb {} .jsonl.gz", "unidoc", empty_object_bomb(folder, jsonl=True)),
        ("deep nesting", "unidoc", deep_nesting(folder)),
    ]
    for track in ("unidoc", "futurepedia", "vdr"):
        out.append((f"record flood {track}", track, record_flood(folder, track)))
    for track in ("unidoc", "futurepedia", "vdr"):
        out.append((f"largest valid {track}", track, largest_valid(folder, track)))
    return out


# ---- 2./3. submitter and browser ------------------------------------------------------------------------------
def browse(url: str, stop: threading.Event, times: list[float], errors: list[str]) -> None:
    from gradio_client import Client

    from leaderboard.tracks import TRACKS
    from leaderboard.ui import views

    client = Client(url, verbose=False)
    i = 0
    while not stop.is_set():
        name, t = list(TRACKS.items())[i % len(TRACKS)]
        controls = [t.metric(t.rank_by).label, views.ALL, "", *[[] for _ in views.filter_fields(t)], views.default_columns(t)]
        start = time.perf_counter()
        try:
            client.predict(*controls, api_name=f"/table_{name}")
            times.append(time.perf_counter() - start)
        except Exception as exc:  # a failed page request is a finding, not a crash of the bench
            errors.append(f"/table_{name}: {type(exc).__name__}: {str(exc)[:200]}")
        i += 1
        time.sleep(0.05)


def submit_all(url: str, items: list[tuple[str, str, Path]]) -> list[tuple[str, float, str]]:
    import html as htmllib
    import re

    from gradio_client import Client, handle_file

    client = Client(url, verbose=False)
    out = []
    for k, (label, track, path) in enumerate(items):
        start = time.perf_counter()
        try:
            html = client.predict(track, handle_file(str(path)), "", "", "", "", f"bench-user-{k}", api_name="/submit")
            verdict = re.sub(r"<[^>]+>", " ", str(html))
            verdict = htmllib.unescape(re.sub(r"\s+", " ", verdict).strip())
        except Exception as exc:
            verdict = f"ERROR {type(exc).__name__}: {str(exc)[:200]}"
        out.append((label, time.perf_counter() - start, verdict[:160]))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run only payloads whose label contains this text")
    parser.add_argument("--pr-floods", action="store_true", help="run only the pull-request floods (step 5)")
    args = parser.parse_args(argv)
    if args.pr_floods:
        return pr_floods()
    tmp = Path(tempfile.mkdtemp(prefix="bench-abuse-"))
    try:
        t = time.perf_counter()
        (tmp / "payloads").mkdir()
        items = [p for p in payloads(tmp / "payloads") if args.only in p[0]]
        print(f"payloads built in {time.perf_counter() - t:.1f} s:")
        for label, _, path in items:
            print(f"    {label:28s} {path.stat().st_size / 1e3:10.0f} KB on the wire")
        app = AppProcess(tmp / "data")
        try:
            print(f"app served in {app.wait_served():.1f} s")
            baseline = app.peak_rss_mb()
            stop, times, errors = threading.Event(), [], []
            browser = threading.Thread(target=browse, args=(app.url, stop, times, errors), daemon=True)
            browser.start()
            time.sleep(2)  # the browser's first requests, before any payload
            quiet = list(times)
            results = submit_all(app.url, items)
            time.sleep(5)  # accepted runs are scored and judged in the background: keep browsing meanwhile
            stop.set()
            browser.join(30)
            peak = app.peak_rss_mb()
        finally:
            app.stop()
        print("\nsubmissions (label, seconds, what the Submit tab said):")
        for label, secs, verdict in results:
            print(f"    {label:28s} {secs:6.1f} s   {verdict}")
        busy = times[len(quiet) :]
        print(
            f"\npage requests (/table_<track>) while payloads were in flight (and 5 s after): {len(busy)}, failed: {len(errors)}"
        )
        if busy:
            print(
                f"    median {statistics.median(busy) * 1000:.0f} ms, slowest {max(busy):.2f} s   "
                f"target < {TARGET_PAGE_S:.0f} s  {'OK' if max(busy) < TARGET_PAGE_S and not errors else 'MISSED'}"
            )
        for e in errors[:5]:
            print(f"    {e}")
        print(
            f"app peak RSS (VmHWM): {peak:.0f} MB (after start-up: {baseline:.0f} MB)   target < {TARGET_RSS_MB:.0f} MB  "
            f"{'OK' if peak < TARGET_RSS_MB else 'MISSED'}"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not args.only:
        pr_floods()


# ---- 5. pull-request floods (issue 24) -------------------------------------------------------------------------------
def pr_floods(sidecars: int = 3000, floods: int = 10, refresh_s: float = 30.0, minutes: float = 20.0) -> None:
    """The reviewer against the local fake Hub: a refused sidecar flood, then starvation and comment spam."""
    from datetime import UTC, datetime, timedelta

    sys.path.insert(0, str(ROOT / "tests"))
    from huggingface_hub import constants as hf_constants

    from leaderboard import demo
    from leaderboard.service import Board
    from leaderboard.settings import Settings
    from leaderboard.store import StoreSettings

    from hubfake import running_hub

    hf_constants.HF_HUB_OFFLINE = False  # 127.0.0.1 only
    token, repo = "hf_benchABUSEabuse0123456789", "bench/submissions"

    def valid(seed: int, name: str) -> bytes:
        doc = json.loads(demo.make_submissions("vdr", demo.DEMO_DIR / "gold" / "vdr", 1, seed=seed)[0][1])
        doc["system"]["name"] = name
        return json.dumps(doc).encode()

    def comments(hub, num: int) -> int:
        return sum(1 for author, _ in hub.comments(repo, num) if author == "board")

    with running_hub(tokens={token: "board"}) as hub, tempfile.TemporaryDirectory() as tmp:
        hub.create_repo(repo)
        now = [datetime.now(UTC)]
        settings = StoreSettings(
            submissions_repo=repo, hf_token=token, hf_endpoint=hub.url, data_dir=Path(tmp), hub_timeout=30, auto_merge=True
        )
        board = Board(Settings(data_dir=Path(tmp), judge="none"), settings)
        board.store.pull_requests._clock = lambda: now[0]
        board.start(background=False)

        files = {"submissions/vdr/mallory/run.json": valid(7001, "flood")}
        files.update({f"submissions/vdr/mallory/x{i}.json.meta.json": b"{}" for i in range(sidecars)})
        num = hub.open_pull_request(repo, "mallory", files)
        hub.reset_counts()
        t0 = time.perf_counter()
        board.refresh()
        secs = time.perf_counter() - t0
        outcome = board.store.pull_requests.reviews[num].outcome
        print(f"\npull request of 1 valid file + {sidecars:,} .meta.json sidecars ({outcome}, {comments(hub, num)} comment):")
        print(
            f"    one refresh: {hub.count()} requests ({hub.count(path_contains='/tree/')} listings, "
            f"{hub.count(path_contains='/commits/')} history pages), {hub.count(path_contains='/resolve/')} resolve requests, "
            f"{len(hub.downloads())} downloads, {secs:.2f} s; on main: "
            f"{sum(1 for p in hub.files(repo) if p.startswith('submissions/vdr/mallory/'))} of its files"
        )
        hub.comment(repo, num, "admin", "closing")  # out of the way of the next scenario
        hub.set_status(repo, num, "closed", "admin")

        flood = [hub.open_pull_request(repo, "flooder", {f"submissions/vdr/flooder/f{i}.json": b"{}"}) for i in range(floods)]
        board.refresh()  # the flood's first reviews: one comment each
        victim = hub.open_pull_request(repo, "alice", {"submissions/vdr/alice/run.json": valid(7002, "alice")})
        before = {n: comments(hub, n) for n in flood}
        refreshes, waited, reviewed_after = 0, 0.0, None
        for k in range(int(minutes * 60 / refresh_s)):
            for n in flood:  # every pull request of the flood gets a new head before every refresh
                hub.commit_to_pull_request(
                    repo, n, {f"submissions/vdr/flooder/f{n}.json": b'{"k": %d}' % k}, None, "push", "flooder"
                )
            now[0] += timedelta(seconds=refresh_s)
            t0 = time.perf_counter()
            board.refresh()
            refreshes += 1
            if reviewed_after is None:
                waited += time.perf_counter() - t0
                if comments(hub, victim):
                    reviewed_after = refreshes
        earned = sum(comments(hub, n) - before[n] for n in flood)
        landed = "submissions/vdr/alice/run.json" in hub.files(repo)
        print(
            f"\n{floods} pull requests pushed before every refresh, a valid one by another author opened meanwhile "
            f"({refreshes} refreshes, {refresh_s:g} s apart on the board's clock = {minutes:g} min):"
        )
        print(
            f"    the valid one reviewed at refresh {reviewed_after} ({waited:.2f} s of refreshing), landed on main: {landed}; "
            f"the flood earned {earned} comments ({earned / floods:.1f} each; one per pull request per 10 min at most)"
        )


# ---- upload flood: Gradio's /gradio_api/upload without a submit ------------------------------------------------
def upload_flood(argv: list[str] | None = None) -> None:
    """Strangers post files to the upload route and never submit them, while a second client browses tables.

        python bench/bench_abuse.py upload-flood [--clients 12] [--mib 100] [--tiny 1000] [--claim 15]

    Three waves against `python app.py` (its upload folder private to the run, UPLOAD_CLAIM_SECONDS=--claim):
    one client posting ten --mib uploads, one client posting --tiny 8-byte uploads, then --clients clients (told
    apart by X-Forwarded-For, which the app believes from the local host) posting two --mib uploads each at once.
    Prints what each wave was answered, the upload folder's peak size and file count, the slowest and median page
    request (/table_<track>) meanwhile, and how long the folder took to empty once the flood stopped.
    """
    import httpx

    parser = argparse.ArgumentParser(prog="bench_abuse.py upload-flood")
    parser.add_argument("--clients", type=int, default=12)
    parser.add_argument("--mib", type=int, default=100)
    parser.add_argument("--tiny", type=int, default=1000)
    parser.add_argument("--claim", type=float, default=15.0)
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench-upload-flood-"))
    folder = tmp / "gradio"
    os.environ.update({"GRADIO_TEMP_DIR": str(folder), "UPLOAD_CLAIM_SECONDS": str(args.claim)})

    def usage() -> tuple[int, int]:
        size = files = 0
        for root, _, names in os.walk(folder):
            for name in names:
                try:
                    size += os.stat(os.path.join(root, name)).st_size
                    files += 1
                except OSError:
                    pass
        return size, files

    peak = [0, 0]
    watching = threading.Event()

    def watch() -> None:
        while not watching.is_set():
            size, files = usage()
            peak[0], peak[1] = max(peak[0], size), max(peak[1], files)
            time.sleep(0.01)

    bodies = tmp / "bodies"
    bodies.mkdir()

    def post(http: httpx.Client, client: str, i: int, size: int) -> str:
        # a sparse file each (no disk, no memory), distinct by its first bytes: identical bytes would be one file
        # in Gradio's folder
        path = bodies / f"u{i}.jsonl"
        with open(path, "wb") as fh:
            fh.write(i.to_bytes(8, "big"))
            fh.truncate(max(size, 8))
        try:
            with open(path, "rb") as fh:
                r = http.post(
                    "gradio_api/upload", files={"files": (path.name, fh)}, headers={"X-Forwarded-For": client}, timeout=120
                )
            return str(r.status_code)
        except httpx.HTTPError as exc:
            return type(exc).__name__
        finally:
            path.unlink()

    def wave(label: str, jobs: list[tuple[str, int, bytes]], threads: int) -> None:
        from collections import Counter
        from concurrent.futures import ThreadPoolExecutor

        start = time.perf_counter()
        with httpx.Client(base_url=app.url) as http, ThreadPoolExecutor(threads) as pool:
            codes = Counter(pool.map(lambda job: post(http, *job), jobs))
        took = time.perf_counter() - start
        print(f"    {label:44s} {len(jobs):5d} in {took:5.1f} s: " + ", ".join(f"{n} x {c}" for c, n in sorted(codes.items())))

    app = AppProcess(tmp / "data")
    try:
        print(f"app served in {app.wait_served():.1f} s; upload folder {folder}")
        stop, times, errors = threading.Event(), [], []
        browser = threading.Thread(target=browse, args=(app.url, stop, times, errors), daemon=True)
        browser.start()
        deadline = time.perf_counter() + 60
        while len(times) < 10 and time.perf_counter() < deadline:  # the baseline: page requests before any upload
            time.sleep(0.1)
        quiet = len(times)
        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        print("waves (uploads, seconds, answers):")
        big = args.mib * 2**20
        wave(f"one client, ten {args.mib} MiB", [("203.0.113.1", i, big) for i in range(10)], 4)
        wave(f"one client, {args.tiny} of 8 bytes", [("203.0.113.2", 10_000 + i, 8) for i in range(args.tiny)], 8)
        many = [(f"198.51.100.{c}", 100 * c + i, big) for c in range(1, args.clients + 1) for i in range(2)]
        wave(f"{args.clients} clients, two {args.mib} MiB each, at once", many, min(len(many), 24))
        stopped = time.perf_counter()
        busy = times[quiet:]
        while usage() != (0, 0) and time.perf_counter() - stopped < args.claim + 120:
            time.sleep(0.1)
        emptied = time.perf_counter() - stopped
        watching.set()
        stop.set()
        browser.join(30)
        left = usage()
    finally:
        app.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"upload folder: peak {peak[0] / 2**20:,.0f} MiB in {peak[1]} files; after the flood: {left[0]:,} bytes in {left[1]} files"
    )
    print(f"    emptied {emptied:.1f} s after the last upload (UPLOAD_CLAIM_SECONDS={args.claim:g})")
    if quiet:
        print(
            f"page requests (/table_<track>) before the flood: {quiet}, median {statistics.median(times[:quiet]) * 1000:.0f} ms"
        )
    print(f"page requests (/table_<track>) during the flood: {len(busy)}, failed: {len(errors)}")
    if busy:
        print(f"    median {statistics.median(busy) * 1000:.0f} ms, slowest {max(busy):.2f} s   target < {TARGET_PAGE_S:.0f} s")
    for e in errors[:5]:
        print(f"    {e}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["upload-flood"]:
        upload_flood(sys.argv[2:])
    else:
        main()
