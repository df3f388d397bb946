"""`lexical-v1`: an offline, deterministic APPROXIMATION of the LLM judge.

No model, no network: it lets the bundled demo show E2E columns, and its
numbers must always be labelled as an approximation (judge name `lexical-v1`).

- gold facts     = sentences of the gold answer
- response facts = sentences of the response
- a fact is supported by a reference text when
      overlap = (content-word recall + character-3-gram recall) / 2 >= 0.6
  where recall is the share of the fact's distinct content words (resp. the
  3-grams of those words, padded with spaces) that occur in the reference.
  Completeness uses the response as the reference; faithfulness uses the gold
  answer plus the evidence facts.

Why 0.6: on the published UniDoc-Bench gold, 71% of gold-answer sentences reach
it against their own question's evidence facts, and only 1.2% against a
neighbouring question's gold answer + evidence (often the same document).
Word recall alone misses inflections ("grew"/"growth"); 3-grams alone are
inflated by long references; the mean of the two separates best.

It cannot see paraphrase, negation or wrong numbers inside a matching
sentence: it is a smoke test of the pipeline, not a judge of truth.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import lru_cache

from .base import Progress, check_unique
from .text import STOPWORDS, all_words, char_trigrams, split_sentences
from .verdict import JudgeItem, Ledger, Verdict

NAME = "lexical-v1"
THRESHOLD = 0.6


class Reference:
    """A reference text's words (stopwords included: "No." can match) and, computed
    only when a fact needs them, their 3-grams."""

    __slots__ = ("_grams", "words")

    def __init__(self, words: frozenset[str]) -> None:
        self.words = words
        self._grams: frozenset[str] | None = None

    @classmethod
    def of(cls, text: str) -> Reference:
        return cls(frozenset(all_words(text)))

    @property
    def grams(self) -> frozenset[str]:
        if self._grams is None:
            self._grams = char_trigrams(self.words)
        return self._grams


def fact_words(words: list[str]) -> frozenset[str]:
    """A fact's content words (all its words when it has no content word)."""
    return frozenset(w for w in words if w not in STOPWORDS) or frozenset(words)


def overlap(fact: frozenset[str], ref: Reference) -> float:
    """(content-word recall + 3-gram recall) / 2 of a fact against a reference."""
    if not fact:
        return 0.0
    grams = char_trigrams(fact)
    return (len(fact & ref.words) / len(fact) + len(grams & ref.grams) / len(grams)) / 2


def is_supported(fact: frozenset[str], ref: Reference) -> bool:
    """overlap(fact, ref) >= THRESHOLD, skipping the 3-grams when words alone decide
    (all words present => every gram present; word recall < 2*T-1 => below T whatever the grams)."""
    if not fact:
        return False
    w = len(fact & ref.words) / len(fact)
    if w == 1.0:
        return True
    if (w + 1.0) / 2 < THRESHOLD:
        return False
    return overlap(fact, ref) >= THRESHOLD


@lru_cache(maxsize=8192)
def _gold_side(gold_answer: str, evidence: tuple[str, ...]) -> tuple[list[str], list[frozenset[str]], Reference]:
    # The gold side repeats for every submission: split and tokenise it once per question.
    facts = split_sentences(gold_answer)
    return facts, [fact_words(all_words(f)) for f in facts], Reference.of("\n".join([gold_answer, *evidence]))


class LexicalJudge:
    kind = "lexical"
    mode = "live"
    approximate = True
    name = NAME
    judge_model = "lexical"
    prompt_version = f"{NAME}-t{THRESHOLD}"
    description = (
        f"lexical overlap approximation ({NAME}): a sentence counts as a fact, supported when "
        f"(word recall + 3-gram recall)/2 >= {THRESHOLD}; not an LLM judge"
    )

    def __init__(self) -> None:
        self.last_ledger: Ledger | None = None

    def new_ledger(self) -> Ledger:
        return Ledger(judge=self.name, judge_model=self.judge_model, prompt_version=self.prompt_version)

    def judge_one(self, it: JudgeItem) -> Verdict:
        gold_facts, gold_prepared, reference = _gold_side(it.gold_answer, tuple(it.evidence_facts))
        response_facts = split_sentences(it.response)
        # Tokenise each sentence once; the response's reference words are their union.
        sentence_words = [all_words(f) for f in response_facts]
        response_reference = Reference(frozenset().union(*sentence_words))
        return Verdict(
            judge=self.name,
            judge_model=self.judge_model,
            prompt_version=self.prompt_version,
            qid=it.qid,
            response_sha256=it.response_sha256,
            gold_sha256=it.gold_sha256,
            gold_facts=gold_facts,
            gold_fact_supported=[is_supported(f, response_reference) for f in gold_prepared],
            response_facts=response_facts,
            response_fact_supported=[is_supported(fact_words(ws), reference) for ws in sentence_words],
            failure=None if gold_facts else "gold answer has no sentence to use as a fact",
        )

    def judge_many(
        self, items: Sequence[JudgeItem], progress: Progress | None = None, ledger: Ledger | None = None
    ) -> dict[str, Verdict]:
        """No disk cache on purpose: recomputing is faster than reading a file per verdict."""
        check_unique(items)
        started = time.monotonic()
        ledger = ledger or self.new_ledger()
        self.last_ledger = ledger
        out: dict[str, Verdict] = {}
        total = len(items)
        step = max(1, total // 100)
        for i, it in enumerate(items, 1):
            out[it.qid] = self.judge_one(it)
            if progress and (i % step == 0 or i == total):
                progress(i, total)
        failures = sum(v.failure is not None for v in out.values())
        ledger.add(items=total, judged=total, failures=failures)
        ledger.add(seconds=round(time.monotonic() - started, 3))
        return out

    def estimate(self, items: Sequence[JudgeItem]) -> dict[str, int]:
        return {
            "items": len(items),
            "cached": 0,
            "calls": 0,
            "verdict_calls": 0,
            "gold_calls": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
        }
