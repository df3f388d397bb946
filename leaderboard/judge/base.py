"""The Judge interface both judges implement, and helpers they share."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from .verdict import JudgeItem, Ledger, Verdict

Progress = Callable[[int, int], None]  # progress(done, total)


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


def check_unique(items: Sequence[JudgeItem]) -> None:
    seen: set[str] = set()
    for it in items:
        if it.qid in seen:
            raise ValueError(f"question id {it.qid!r} appears twice: judge one response per question per run")
        seen.add(it.qid)
