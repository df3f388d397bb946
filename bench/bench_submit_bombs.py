"""Bombs through the Submit tab while another visitor browses: the app's peak memory and slowest page request.

    python bench/bench_submit_bombs.py            # every track: a {}-bomb (.json.gz) and a record flood (.jsonl.gz)

The app runs in a child process (tests/appserver.py `running_app`, bundled demo data); an attacker client
submits each file through /submit one after the other while a visitor client requests /table_<track> in a
loop. Printed: each submission's reply time and first problem, the visitor's request count and slowest
request, and the app's peak RSS (VmHWM). Targets (issue 8): peak < 1.2 GB, slowest page request < 2 s.
Not a test: the machine is shared and noisy, read the figures.
"""

from __future__ import annotations

import gzip
import io
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from gradio_client import Client, handle_file

ROOT = Path(__file__).resolve().parents[1]
TARGET_RSS_MB, TARGET_PAGE_S = 1200, 2.0
SERVE = """
import sys
sys.path.insert(0, {tests!r})
from appserver import running_app
with running_app({data!r}) as app:
    print(app.url, flush=True)
    sys.stdin.read()
"""
UNIDOC_COLUMNS = ["Organisation", "Paradigm", "Recall@10", "Precision@10", "Completeness", "Faithfulness",
                  "Rank (CI)", "Covered", "Status"]
HEADERS = {
    "unidoc": b'{"track":"unidoc","system":{"name":"Bomb"}',
    "futurepedia": b'{"track":"futurepedia","system":{"name":"Bomb"}',
    "vdr": b'{"track":"vdr","system":{"name":"Bomb","model":"m","method":"none","storage":{}}',
}
FLOOD_RECORD = {
    "unidoc": b'{"id":"finance-0000","retrieved":[]}\n',
    "futurepedia": b'{"task":"monolingual","id":1,"query_lang":"en","prediction":"x"}\n',
    "vdr": b'{"dataset":"vidore/arxivqa_test_subsampled","query_id":"q1","ranking":[]}\n',
}


def gz(parts) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as out:
        for part in parts:
            out.write(part)
    return buf.getvalue()


def bomb(track: str, count: int = 20_000_000) -> bytes:
    return gz([HEADERS[track] + b',"predictions":[{}', *([b",{}" * 1_000_000] * (count // 1_000_000)), b"]}"])


def flood(track: str, count: int = 1_500_000) -> bytes:
    """Well-formed records far past the track's limit, under the 128 MiB size cap once decompressed."""
    return gz([HEADERS[track] + b"}\n", *([FLOOD_RECORD[track] * 100_000] * (count // 100_000))])


def peak_rss_mb(pid: int) -> float:
    return int(re.search(r"VmHWM:\s+(\d+)", Path(f"/proc/{pid}/status").read_text()).group(1)) / 1024


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-bombs-"))
    code = SERVE.format(tests=str(ROOT / "tests"), data=str(tmp / "board"))
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            cwd=ROOT)
    try:
        url = proc.stdout.readline().strip()
        print(f"app up at {url}; peak RSS after start-up {peak_rss_mb(proc.pid):.0f} MB")
        files = []
        for track in HEADERS:
            for kind, make, ext in (("bomb", bomb, "json.gz"), ("flood", flood, "jsonl.gz")):
                path = tmp / f"{track}-{kind}.{ext}"
                path.write_bytes(make(track))
                files.append((track, kind, path))
        visitor, stop, times = Client(url, verbose=False), threading.Event(), []

        def browse() -> None:
            while not stop.is_set():
                start = time.perf_counter()
                visitor.predict("Recall@10", "All", "", [], [], [], UNIDOC_COLUMNS, api_name="/table_unidoc")
                times.append(time.perf_counter() - start)

        browser = threading.Thread(target=browse, daemon=True)
        browser.start()
        attacker = Client(url, verbose=False)
        for track, kind, path in files:
            start = time.perf_counter()
            html = attacker.predict(track, handle_file(str(path)), "", "", "", "", "bomber", api_name="/submit")
            first = re.search(r"<li><code>(.*?)</code>", html)
            print(f"{track:12} {kind:5} {path.stat().st_size / 1024:6.0f} KB  {time.perf_counter() - start:5.1f} s  "
                  f"{first.group(1)[:110] if first else html[:110]}")
        stop.set()
        browser.join(60)
        rss = peak_rss_mb(proc.pid)
        print(f"visitor: {len(times)} table requests, slowest {max(times):.2f} s (target < {TARGET_PAGE_S} s)")
        print(f"app peak RSS: {rss:.0f} MB (target < {TARGET_RSS_MB} MB)")
    finally:
        proc.stdin.close()
        proc.wait(60)


if __name__ == "__main__":
    main()
