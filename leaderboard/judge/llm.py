"""The LLM judge: gold facts once per question, then at most two calls per response.

Call budget per (question, response), every fact of the question in one call:
  call 1  extract the response's facts AND mark which gold facts it states
  call 2  mark which response facts the gold answer + evidence support
          (skipped when call 1 found no response fact: faithfulness is then 0)
An empty response costs nothing. Gold-fact extraction is a per-question one-off
outside that budget, cached as a gold artefact (judge model + prompt version).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from . import prompts, replies
from .base import Progress, check_unique
from .cache import JudgeCache
from .client import ChatJSONClient
from .text import estimate_tokens, split_sentences
from .verdict import JudgeItem, Ledger, Verdict

# Dry-run guesses for reply sizes (tokens): the JSON overhead per listed fact.
_EST_TOKENS_PER_FLAG = 12
_EST_REPLY_OVERHEAD = 15


class LLMJudge:
    kind = "openai"
    mode = "live"
    approximate = False

    def __init__(
        self,
        chat: ChatJSONClient,
        cache_dir: str,
        *,
        concurrency: int = 4,
        max_response_chars: int = 32_000,
    ) -> None:
        self.chat = chat
        self.judge_model = chat.model
        self.name = f"openai:{chat.model}"
        self.prompt_version = prompts.PROMPT_VERSION
        self.description = f"LLM judge {chat.model} (OpenAI-compatible API), prompts {self.prompt_version}"
        self.cache = JudgeCache(cache_dir, self.name, self.prompt_version)
        self.concurrency = max(1, concurrency)
        self.max_response_chars = max_response_chars
        self.last_ledger: Ledger | None = None
        self._gold_locks: dict[str, threading.Lock] = {}
        self._gold_locks_guard = threading.Lock()

    # ---------------------------------------------------------------- public API

    ledger_class: type[Ledger] = Ledger  # batch mode keeps more counts (BatchLedger)

    def new_ledger(self) -> Ledger:
        return self.ledger_class(judge=self.name, judge_model=self.judge_model, prompt_version=self.prompt_version)

    def judge_many(
        self, items: Sequence[JudgeItem], progress: Progress | None = None, ledger: Ledger | None = None
    ) -> dict[str, Verdict]:
        """Verdicts by qid; cached ones cost nothing, failures are returned (not cached)."""
        check_unique(items)
        started = time.monotonic()
        self.chat.reset()
        ledger = ledger or self.new_ledger()
        self.last_ledger = ledger
        ledger.add(items=len(items))
        out: dict[str, Verdict] = {}
        todo: list[JudgeItem] = []
        for it in items:
            hit = self.cache.get_verdict(it.qid, it.response_sha256, it.gold_sha256)
            if hit is None:
                todo.append(it)
            else:
                out[it.qid] = hit
        ledger.add(cache_hits=len(out))
        total = len(items)
        if progress:
            progress(len(out), total)
        if todo:
            pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="judge")
            try:
                futures = [pool.submit(self._judge_one, it, ledger) for it in todo]
                for fut in as_completed(futures):
                    v = fut.result()
                    out[v.qid] = v
                    if progress:
                        progress(len(out), total)
            finally:
                # Ctrl-C: drop what has not started; finished verdicts are already cached.
                pool.shutdown(wait=True, cancel_futures=True)
        ledger.add(seconds=round(time.monotonic() - started, 3))
        return {it.qid: out[it.qid] for it in items}

    def estimate(self, items: Sequence[JudgeItem]) -> dict[str, int]:
        """Dry run: calls and tokens that judging `items` would cost now. Sends nothing.

        Counts only what is not cached. Calls are an upper bound (2 per response,
        1 per uncached question for gold facts); tokens are estimated at ~4
        characters per token, with facts guessed by sentence splitting where the
        judge has not extracted them yet.
        """
        est = {
            "items": len(items),
            "cached": 0,
            "calls": 0,
            "verdict_calls": 0,
            "gold_calls": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
        }
        gold_counted: set[str] = set()
        for it in items:
            if self.cache.get_verdict(it.qid, it.response_sha256, it.gold_sha256) is not None:
                est["cached"] += 1
                continue
            gold = self.cache.get_gold(it.qid, it.gold_answer_sha256)
            if gold is None:
                gold = split_sentences(it.gold_answer) or [it.gold_answer]
                if it.qid not in gold_counted and it.gold_answer.strip():
                    gold_counted.add(it.qid)
                    est["gold_calls"] += 1
                    est["prompt_tokens"] += _tokens(prompts.gold_facts_messages(it.question, it.gold_answer))
                    est["completion_tokens"] += estimate_tokens(it.gold_answer) + _EST_REPLY_OVERHEAD
            if not it.response.strip() or len(it.response) > self.max_response_chars:
                continue
            facts = split_sentences(it.response) or [it.response]
            est["verdict_calls"] += 2
            est["prompt_tokens"] += _tokens(prompts.response_check_messages(it.question, gold, it.response))
            est["prompt_tokens"] += _tokens(prompts.fact_support_messages(it.question, it.gold_answer, it.evidence_facts, facts))
            est["completion_tokens"] += (
                estimate_tokens(it.response)
                + _EST_TOKENS_PER_FLAG * len(gold)
                + _EST_TOKENS_PER_FLAG * len(facts)
                + 2 * _EST_REPLY_OVERHEAD
            )
        est["calls"] = est["verdict_calls"] + est["gold_calls"]
        return est

    # ---------------------------------------------------------------- internals

    def _verdict(self, it: JudgeItem, **kw: Any) -> Verdict:
        base: dict[str, Any] = {
            "judge": self.name,
            "judge_model": self.judge_model,
            "prompt_version": self.prompt_version,
            "qid": it.qid,
            "response_sha256": it.response_sha256,
            "gold_sha256": it.gold_sha256,
            "gold_facts": [],
            "gold_fact_supported": [],
            "response_facts": [],
            "response_fact_supported": [],
        }
        base.update(kw)
        return Verdict(**base)

    def _gold_lock(self, qid: str) -> threading.Lock:
        with self._gold_locks_guard:
            return self._gold_locks.setdefault(qid, threading.Lock())

    def gold_facts(self, it: JudgeItem, ledger: Ledger) -> tuple[list[str] | None, str | None]:
        """The question's gold facts, extracted once (per-question lock) and cached."""
        if not it.gold_answer.strip():
            return None, "gold answer is empty"
        with self._gold_lock(it.qid):
            facts = self.cache.get_gold(it.qid, it.gold_answer_sha256)
            if facts is not None:
                ledger.add(gold_cache_hits=1)
                return facts, None
            r = self.chat.complete(
                prompts.gold_facts_messages(it.question, it.gold_answer),
                "gold_facts",
                prompts.GOLD_FACTS_SCHEMA,
                replies.gold_facts,
            )
            ledger.add(
                gold_calls=r.calls,
                gold_prompt_tokens=r.prompt_tokens,
                gold_completion_tokens=r.completion_tokens,
                retries=r.retries,
                malformed=r.malformed,
            )
            if r.failure:
                return None, f"gold facts: {r.failure}"
            self.cache.put_gold(
                it.qid,
                it.gold_answer_sha256,
                r.value,
                judge_model=self.judge_model,
                prompt_tokens=r.prompt_tokens,
                completion_tokens=r.completion_tokens,
            )
            return r.value, None

    def _judge_one(self, it: JudgeItem, ledger: Ledger) -> Verdict:
        v = self._judge_uncached(it, ledger)
        ledger.add_verdict(v)
        if v.failure is None:
            self.cache.put_verdict(v)
        return v

    def _judge_uncached(self, it: JudgeItem, ledger: Ledger) -> Verdict:
        gold, failure = self.gold_facts(it, ledger)
        if gold is None:
            return self._verdict(it, failure=failure)
        if not it.response.strip():  # nothing to judge: states no gold fact, has no fact
            return self._verdict(it, gold_facts=gold, gold_fact_supported=[False] * len(gold))
        if len(it.response) > self.max_response_chars:
            return self._verdict(
                it, gold_facts=gold, failure=f"response too long to judge ({len(it.response)} > {self.max_response_chars} chars)"
            )

        spent = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}

        def call(messages: list[dict[str, str]], name: str, schema: dict[str, Any], interpret: Any) -> Any:
            r = self.chat.complete(messages, name, schema, interpret)
            spent["calls"] += r.calls
            spent["prompt_tokens"] += r.prompt_tokens
            spent["completion_tokens"] += r.completion_tokens
            ledger.add(retries=r.retries, malformed=r.malformed)
            return r

        def check() -> tuple[Any, str | None]:
            r = call(
                prompts.response_check_messages(it.question, gold, it.response),
                "response_check",
                prompts.RESPONSE_CHECK_SCHEMA,
                lambda v: replies.response_check(v, len(gold)),
            )
            return r.value, r.failure

        def support(response_facts: list[str]) -> tuple[Any, str | None]:
            r = call(
                prompts.fact_support_messages(it.question, it.gold_answer, it.evidence_facts, response_facts),
                "fact_support",
                prompts.FACT_SUPPORT_SCHEMA,
                lambda v: replies.fact_support(v, len(response_facts)),
            )
            return r.value, r.failure

        return self._two_calls(it, gold, spent, check, support)

    def _two_calls(self, it: JudgeItem, gold: list[str], spent: dict[str, int], check: Any, support: Any) -> Verdict:
        """The verdict from an answer's two calls, however they are made (live here, from batch output in
        batch.py): the same steps give the same verdict. `check()` and `support(response_facts)` return
        (value, failure) and add what they cost to `spent`."""
        value, failure = check()
        if failure is not None:
            return self._verdict(it, gold_facts=gold, failure=f"response check: {failure}", **spent)
        response_facts, gold_supported = value
        if not response_facts:
            return self._verdict(it, gold_facts=gold, gold_fact_supported=gold_supported, **spent)
        value, failure = support(response_facts)
        facts = {"gold_facts": gold, "gold_fact_supported": gold_supported, "response_facts": response_facts}
        if failure is not None:
            return self._verdict(it, **facts, failure=f"fact support: {failure}", **spent)
        return self._verdict(it, **facts, response_fact_supported=value, **spent)


def _tokens(messages: list[dict[str, str]]) -> int:
    return sum(estimate_tokens(m["content"]) + 4 for m in messages)
