"""The Judge interface both judges implement, and helpers they share."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from .verdict import JudgeItem, Ledger, Verdict, Verdicts

Progress = Callable[[int, int], None]  # progress(done, total)
# Batch mode also calls progress.on_batch(batch_id, lines_done, lines_total, since=..., waiting=...) when it has one.


def waited(seconds: float) -> str:
    """A wait in words: '45 s', '12 min', '3 h 05 min', '2 d 4 h'."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min"
    if s < 86400:
        return f"{s // 3600} h {s % 3600 // 60:02d} min"
    return f"{s // 86400:,} d {s % 86400 // 3600} h"


def batch_status(batch_id: str, lines_done: int, lines_total: int, since: float, waiting: bool, now: float) -> str:
    """A polled batch in a status line. The provider's line count can read as done long before its output
    exists (or forever, from a provider that never finishes): the wait and its age say what is going on."""
    line = f"batch {batch_id[:64]}, {int(lines_done)} of {int(lines_total)} lines"
    if waiting:
        return f"{line}, waiting for the provider for {waited(now - since)}"
    return f"{line}, its output arrived after {waited(now - since)}: reading it"


class JudgeConfigError(RuntimeError):
    """The judge cannot be built (no model, no key for api.openai.com, ...)."""


class BatchError(RuntimeError):
    """Batch mode: the batch service refused or did not answer; nothing more can be judged this run."""


class BatchPending(BatchError):
    """Batch mode: a batch is still running when the wait ended; its state is kept and a re-run resumes polling it."""

    def __init__(self, message: str, batch_id: str) -> None:
        super().__init__(message)
        self.batch_id = batch_id


class Judge(Protocol):
    kind: str  # "openai" | "lexical"
    # "live": asked one submission at a time (`judge_many`); "batch": several submissions' answers as one run
    # (`judge_groups`, judge/batch.py), which the board and the CLI group submissions for
    mode: str
    name: str  # recorded on every verdict; the board ranks one judge at a time
    judge_model: str
    prompt_version: str
    approximate: bool  # True: label its numbers as an approximation wherever they show
    description: str
    last_ledger: Ledger | None

    def judge_many(
        self, items: Sequence[JudgeItem], progress: Progress | None = None, ledger: Ledger | None = None
    ) -> dict[str, Verdict]: ...

    def estimate(self, items: Sequence[JudgeItem]) -> dict[str, int]: ...


def verdicts_of(judge: Judge, items: Sequence[JudgeItem], progress: Progress | None = None) -> Verdicts:
    """One submission's verdicts from a judge asked now, with the ledger of that run."""
    by_qid = judge.judge_many(items, progress=progress)
    ledger = judge.last_ledger
    return Verdicts(
        judge.name, judge.prompt_version, by_qid, ledger.to_dict() if ledger is not None else None, shared=not judge.approximate
    )


def check_unique(items: Sequence[JudgeItem]) -> None:
    seen: set[str] = set()
    for it in items:
        if it.qid in seen:
            raise ValueError(f"question id {it.qid!r} appears twice: judge one response per question per run")
        seen.add(it.qid)
