"""Judges for the unidoc track's end-to-end metrics (completeness, faithfulness).

    judge = make_judge("openai", cache_dir="cache/judge")   # or make_judge("lexical", cache_dir=None)
    judge.estimate(items)                 # dry run: calls/tokens not yet cached, spends nothing
    verdicts = judge.judge_many(items, progress=TqdmProgress())
    judge.last_ledger.to_dict()           # calls, tokens, cache hits, failures of that run
    make_judge("openai", cache_dir=..., mode="batch")  # same verdicts through the Files + Batches API

Scores come from `leaderboard.metrics.judged` (completeness / faithfulness of a
verdict; None for a judge failure).
"""

from __future__ import annotations

import os

from ..environment import default
from .base import BatchError, BatchPending, Judge, JudgeConfigError, Progress, verdicts_of
from .lexical import LexicalJudge
from .progress import TqdmProgress
from .prompts import PROMPT_VERSION
from .verdict import JudgeItem, Ledger, Verdict, Verdicts

__all__ = [
    "PROMPT_VERSION",
    "BatchError",
    "BatchJudge",
    "BatchPending",
    "Judge",
    "JudgeConfigError",
    "JudgeItem",
    "LLMJudge",
    "Ledger",
    "LexicalJudge",
    "Progress",
    "TqdmProgress",
    "Verdict",
    "Verdicts",
    "make_judge",
    "verdicts_of",
]


# The openai client is imported only when an LLM judge is used: the offline
# default (lexical) then starts without it.
_LAZY = {
    "LLMJudge": ".llm",
    "ChatJSONClient": ".client",
    "RetryPolicy": ".client",
    "build_openai_client": ".client",
    "BatchJudge": ".batch",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(name)


def make_judge(
    kind: str,
    *,
    cache_dir: str | os.PathLike[str] | None,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    concurrency: int = 4,
    timeout: float = 60.0,
    max_attempts: int = 5,
    malformed_retries: int = 2,
    backoff_base: float = 1.0,
    backoff_max: float = 30.0,
    max_consecutive_failures: int = 3,
    response_format: str = "json_schema",
    temperature: float | None = 0.0,
    max_completion_tokens: int | None = None,
    max_response_chars: int = 32_000,
    mode: str = "live",
    poll_seconds: float = default("JUDGE_BATCH_POLL_SECONDS"),
    max_items: int = default("JUDGE_BATCH_MAX_ITEMS"),
    batch_dir: str | os.PathLike[str] | None = None,
    estimate_only: bool = False,
) -> Judge:
    """Build a judge.

    kind "openai": any OpenAI-compatible chat-completions server (model, base_url, api_key: the
    Settings' JUDGE_MODEL / OPENAI_BASE_URL / OPENAI_API_KEY, `Settings.judge_kwargs()`). Verdicts and
    gold facts are cached under cache_dir (required). `response_format="json_object"`
    for servers without json_schema support; `temperature=None` for models that
    reject it.
    mode "batch" (JUDGE_MODE): the openai judge's calls go through the server's Files +
    Batches API (BatchJudge: same verdicts and cache, at most max_items answers a run), polled
    every poll_seconds; with batch_dir (JUDGE_BATCH_DIR) batches are files in that folder,
    for `vllm run-batch`.
    estimate_only: a judge for `estimate` alone (a dry run): it sends nothing, so no client is built and no
    key is needed; it cannot judge.
    kind "lexical": offline approximation, ignores every other argument.
    """
    if kind == "lexical":
        return LexicalJudge()
    if kind != "openai":
        raise JudgeConfigError(f"unknown judge {kind!r}: use 'openai' or 'lexical'")
    if mode not in ("live", "batch"):
        raise JudgeConfigError(f"unknown judge mode {mode!r}: use 'live' or 'batch'")
    if not model:
        raise JudgeConfigError("the openai judge needs a model: set JUDGE_MODEL")
    if cache_dir is None:
        raise JudgeConfigError("the openai judge needs a cache_dir (verdicts must never be paid twice)")
    from .client import ChatJSONClient, RetryPolicy, build_openai_client
    from .llm import LLMJudge

    client = None if estimate_only else build_openai_client(base_url, api_key, timeout)
    chat = ChatJSONClient(
        client,
        model,
        concurrency=concurrency,
        policy=RetryPolicy(
            max_attempts=max_attempts,
            malformed_retries=malformed_retries,
            backoff_base=backoff_base,
            backoff_max=backoff_max,
            max_consecutive_failures=max_consecutive_failures,
        ),
        response_format=response_format,
        temperature=temperature,
        max_completion_tokens=max_completion_tokens,
    )
    if mode == "batch":
        from .batch import BatchJudge
        from .batchdir import BatchDir

        return BatchJudge(
            chat,
            os.fspath(cache_dir),
            max_response_chars=max_response_chars,
            poll_seconds=poll_seconds,
            max_items=max_items,
            transport=BatchDir(batch_dir) if batch_dir else None,
        )
    return LLMJudge(chat, os.fspath(cache_dir), concurrency=concurrency, max_response_chars=max_response_chars)
