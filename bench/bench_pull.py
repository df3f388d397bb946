"""Incremental pull cost: N submissions already pulled, one new one committed, pull again.

Runs the real huggingface_hub client against the local fake Hub (tests/hubfake.py)
on 127.0.0.1; nothing leaves the machine. Only the pull is timed (rescoring is
the scoring pipeline's). The target: the incremental pull costs about the same
for N=50 and N=500, i.e. it is proportional to the new file, not to N.

    python bench/bench_pull.py            # N=500, 5 incremental pulls
    python bench/bench_pull.py --n 2000 --repeat 10 --json
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

from leaderboard.store import HubStore

from hubfake import running_hub

TOKEN = "hf_benchBENCHbench0123456789"
REPO = "bench/submissions"


def submission(i: int, size: int) -> bytes:
    header = json.dumps({"track": "unidoc", "system": {"name": f"system {i}", "paradigm": "text"}})
    record = json.dumps(
        {
            "id": f"finance-{i % 10000:04d}",
            "retrieved": [{"doc": str(i), "pages": [1]}],
            "answer": "x",
        }
    )
    body = (record + "\n") * max(1, size // (len(record) + 1))
    return (header + "\n" + body).encode()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500, help="submissions already pulled (default 500)")
    parser.add_argument(
        "--size",
        type=int,
        default=20_000,
        help="bytes per submission file (default 20 kB)",
    )
    parser.add_argument("--repeat", type=int, default=5, help="incremental pulls to time (default 5)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    with (
        running_hub(tokens={TOKEN: "bench"}) as hub,
        tempfile.TemporaryDirectory() as tmp,
    ):
        hub.create_repo(REPO)
        files: dict[str, bytes] = {}
        for i in range(args.n):
            path = f"submissions/unidoc/user{i % 50}/20260101T{i // 3600 % 24:02d}{i // 60 % 60:02d}{i % 60:02d}Z-{i:012x}.jsonl"
            files[path] = submission(i, args.size)
            files[path + ".meta.json"] = json.dumps({"system": {"name": f"system {i}"}}).encode()
        hub.commit(REPO, files, message=f"{args.n} submissions")

        store = HubStore(REPO, token=TOKEN, endpoint=hub.url, cache_dir=Path(tmp) / "cache")
        started = time.perf_counter()
        first = store.pull()
        first_seconds = time.perf_counter() - started
        assert len(first.files) == args.n

        timings, downloads, requests = [], [], []
        for k in range(args.repeat):
            new = f"submissions/unidoc/newcomer/20260102T0000{k:02d}Z-{k:012x}.jsonl"
            hub.commit(REPO, {new: submission(10_000 + k, args.size)}, message="merge PR")
            hub.reset_counts()
            started = time.perf_counter()
            snap = store.pull()
            timings.append(time.perf_counter() - started)
            downloads.append(len(hub.downloads()))
            requests.append(hub.count())
            assert snap.changed == [new], snap.changed

    result = {
        "submissions_already_pulled": args.n,
        "file_bytes": len(submission(0, args.size)),
        "first_pull_seconds": round(first_seconds, 4),
        "incremental_pull_seconds_median": round(statistics.median(timings), 4),
        "incremental_pull_seconds_max": round(max(timings), 4),
        "files_downloaded_per_incremental_pull": downloads,
        "http_requests_per_incremental_pull": requests,
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"first pull of {args.n} submissions (+ metadata): {first_seconds:.3f} s")
    print(
        f"incremental pull, {args.n} already pulled + 1 new: median {statistics.median(timings) * 1000:.1f} ms, "
        f"max {max(timings) * 1000:.1f} ms over {args.repeat} runs"
    )
    print(f"files downloaded per incremental pull: {downloads}; HTTP requests: {requests}")


if __name__ == "__main__":
    main()
