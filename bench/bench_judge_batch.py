"""Live vs batch judging of one demo submission: calls, batch lines, tokens, wall time.

    python bench/bench_judge_batch.py [--delay 0.05] [--batch-seconds 1.0] [--concurrency 4] [--poll 0.2]

Runs the real openai client against the local fake server (tests/openaifake.py),
each mode with a throw-away judge cache: `--delay` is added to every HTTP request
(a live call's model latency, also each Files/Batches request), `--batch-seconds`
is a batch's turnaround from creation to completion (hours on OpenAI: its wall time
there is the provider's, not ours). Then a re-run of each mode on its warm cache,
which must cost nothing. Token counts from the fake are whitespace words: compare
the two modes, not the absolute numbers.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from leaderboard.judge import make_judge
from leaderboard.scoring import score_bytes

from openaifake import FakeOpenAI

SUBMISSION = sorted((ROOT / "assets" / "demo" / "submissions" / "unidoc").glob("*.jsonl"))[0]


def run(mode: str, args: argparse.Namespace, cache: Path) -> list[dict]:
    rows = []
    with FakeOpenAI(delay=args.delay, batch_seconds=args.batch_seconds) as fake:
        for attempt in ("first", "re-run"):
            judge = make_judge(
                "openai",
                cache_dir=cache,
                model="fake-judge",
                base_url=fake.base_url,
                api_key="bench",
                concurrency=args.concurrency,
                mode=mode,
                poll_seconds=args.poll,
            )
            calls_before, lines_before, api_before = fake.calls, len(fake.batch_bodies), len(fake.batch_calls)
            started = time.perf_counter()
            summary = score_bytes(SUBMISSION.read_bytes(), SUBMISSION.name, None, judge).summary
            seconds = time.perf_counter() - started
            led = summary["judge_ledger"]
            rows.append(
                {
                    "mode": mode,
                    "run": attempt,
                    "answers": led["items"],
                    "chat calls": fake.calls - calls_before,
                    "batches": len(led.get("batch_ids", [])),
                    "batch lines": len(fake.batch_bodies) - lines_before,
                    "files/batches requests": len(fake.batch_calls) - api_before,
                    "prompt tokens": led["prompt_tokens"] + led["gold_prompt_tokens"],
                    "completion tokens": led["completion_tokens"] + led["gold_completion_tokens"],
                    "wall s": round(seconds, 2),
                    "completeness": round(summary["overall"]["completeness"], 6),
                    "faithfulness": round(summary["overall"]["faithfulness"], 6),
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.05, help="seconds added to every HTTP request")
    parser.add_argument("--batch-seconds", type=float, default=1.0, help="a batch's turnaround on the fake server")
    parser.add_argument("--concurrency", type=int, default=4, help="live calls in flight (JUDGE_CONCURRENCY)")
    parser.add_argument("--poll", type=float, default=0.2, help="batch polling interval (JUDGE_BATCH_POLL_SECONDS)")
    args = parser.parse_args()
    print(f"submission {SUBMISSION.name}; delay {args.delay}s per request, batch turnaround {args.batch_seconds}s")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("live", "batch"):
            rows += run(mode, args, Path(tmp) / mode)
    keys = list(rows[0])
    widths = {k: max(len(k), *(len(str(r[k])) for r in rows)) for k in keys}
    print("  ".join(k.rjust(widths[k]) for k in keys))
    for r in rows:
        print("  ".join(str(r[k]).rjust(widths[k]) for k in keys))
    live, batch = rows[0], rows[2]
    same = (live["completeness"], live["faithfulness"]) == (batch["completeness"], batch["faithfulness"])
    print(
        f"same scores live and batch: {same}; requests sent: live {live['chat calls']}, batch {batch['files/batches requests']}"
    )


if __name__ == "__main__":
    main()
