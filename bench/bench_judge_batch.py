"""Live vs batch judging of one demo submission: calls, batch lines, tokens, wall time; then a whole board.

    python bench/bench_judge_batch.py [--delay 0.05] [--batch-seconds 1.0] [--concurrency 4] [--poll 0.2] [--board 6]

Runs the real openai client against the local fake server (tests/openaifake.py),
each mode with a throw-away judge cache: `--delay` is added to every HTTP request
(a live call's model latency, also each Files/Batches request), `--batch-seconds`
is a batch's turnaround from creation to completion (hours on OpenAI: its wall time
there is the provider's, not ours). Then a re-run of each mode on its warm cache,
which must cost nothing. Token counts from the fake are whitespace words: compare
the two modes, not the absolute numbers.

Whole board (`--board N`): N distinct submissions (the demo answers, each system's
reworded) judged in batch mode one at a time, as the app did before (each its own
run: up to three batches each), then grouped as one run (`judge_groups`, what the
app does now): batches created, lines and wall time of each, on fresh caches.
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
from leaderboard.scoring import check, score_bytes

from openaifake import FakeOpenAI

SUBMISSION = sorted((ROOT / "assets" / "demo" / "submissions" / "unidoc").glob("*.jsonl"))[0]


def fake_judge(fake: FakeOpenAI, args: argparse.Namespace, cache: Path, mode: str):
    """The openai judge against the fake server, in `mode` (live or batch)."""
    return make_judge(
        "openai",
        cache_dir=cache,
        model="fake-judge",
        base_url=fake.base_url,
        api_key="bench",
        concurrency=args.concurrency,
        mode=mode,
        poll_seconds=args.poll,
    )


def run(mode: str, args: argparse.Namespace, cache: Path) -> list[dict]:
    rows = []
    with FakeOpenAI(delay=args.delay, batch_seconds=args.batch_seconds) as fake:
        for attempt in ("first", "re-run"):
            judge = fake_judge(fake, args, cache, mode)
            calls_before, lines_before, api_before = fake.calls, len(fake.batch_bodies), len(fake.batch_calls)
            started = time.perf_counter()
            summary = score_bytes(SUBMISSION.read_bytes(), SUBMISSION.name, None, judge).summary
            seconds = time.perf_counter() - started
            led = summary.judge_ledger
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
                    "completeness": round(summary.overall["completeness"], 6),
                    "faithfulness": round(summary.overall["faithfulness"], 6),
                }
            )
    return rows


def board_items(n: int) -> list[list]:
    """The judge items of n distinct submissions: the demo systems with answers, cycled, each copy reworded."""
    demo = [p for p in sorted(SUBMISSION.parent.glob("*.jsonl")) if "retrieval" not in p.name]
    groups = []
    for i in range(n):
        src = demo[i % len(demo)]
        checked = check(src.read_bytes(), src.name)
        items = checked.track.judge_items(checked.parsed, checked.gold)
        if i >= len(demo):  # a copy: its own answers, so no line is shared by chance
            items = [type(it)(it.qid, it.question, it.gold_answer, it.evidence_facts, f"{it.response} (v{i})") for it in items]
        groups.append(items)
    return groups


def run_board(args: argparse.Namespace, grouped: bool, cache: Path, groups: list[list]) -> dict:
    with FakeOpenAI(delay=args.delay, batch_seconds=args.batch_seconds) as fake:
        judge = fake_judge(fake, args, cache, "batch")
        started = time.perf_counter()
        if grouped:
            verdicts = [v.by_qid for v in judge.judge_groups(groups)]
        else:
            verdicts = [judge.judge_many(g) for g in groups]
        seconds = time.perf_counter() - started
        return {
            "board": "grouped (now)" if grouped else "one at a time (before)",
            "submissions": len(groups),
            "answers": sum(map(len, groups)),
            "batches": len(fake.batches),
            "batch lines": len(fake.batch_bodies),
            "chat calls": fake.calls,
            "wall s": round(seconds, 2),
            "verdicts": verdicts,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.05, help="seconds added to every HTTP request")
    parser.add_argument("--batch-seconds", type=float, default=1.0, help="a batch's turnaround on the fake server")
    parser.add_argument("--concurrency", type=int, default=4, help="live calls in flight (JUDGE_CONCURRENCY)")
    parser.add_argument("--poll", type=float, default=0.2, help="batch polling interval (JUDGE_BATCH_POLL_SECONDS)")
    parser.add_argument("--board", type=int, default=6, help="submissions of the whole-board figure (0: skip it)")
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
    if args.board > 0:
        groups = board_items(args.board)
        with tempfile.TemporaryDirectory() as tmp:
            board_rows = [run_board(args, grouped, Path(tmp) / str(grouped), groups) for grouped in (False, True)]
        keys = [k for k in board_rows[0] if k != "verdicts"]
        widths = {k: max(len(k), *(len(str(r[k])) for r in board_rows)) for k in keys}
        print(f"\nwhole board, batch mode: {args.board} submissions")
        print("  ".join(k.rjust(widths[k]) for k in keys))
        for r in board_rows:
            print("  ".join(str(r[k]).rjust(widths[k]) for k in keys))
        before, now = board_rows
        print(
            f"same verdicts: {before['verdicts'] == now['verdicts']}; batches {before['batches']} -> {now['batches']}, "
            f"wall {before['wall s']} s -> {now['wall s']} s"
        )


if __name__ == "__main__":
    main()
