"""Character 3-gram recall (Futurepedia), with and without normalisation."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from functools import lru_cache


def normalise(text: str) -> str:
    """Unicode NFKC, casefold, whitespace runs collapsed to one space, stripped."""
    # split() and the regex's \s are the same Unicode whitespace set; split/join is the faster C path
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def ngram_set(text: str, n: int = 3) -> frozenset[str]:
    return frozenset(text[i : i + n] for i in range(len(text) - n + 1))


@lru_cache(maxsize=65536)
def _gold_grams(gold: str, normalised: bool) -> tuple[str, frozenset[str]]:
    # Gold strings repeat across every submission and unit: prepare them once.
    text = normalise(gold) if normalised else gold
    return text, ngram_set(text)


def _recall(gold: str, pred: str, pred_grams: frozenset[str], normalised: bool, short_rule: bool) -> float:
    gold_text, grams = _gold_grams(gold, normalised)
    if not grams:
        return 1.0 if short_rule and gold_text and gold_text in pred else 0.0
    return len(grams & pred_grams) / len(grams)


def char_ngram_recall(gold: str, prediction: str, *, normalised: bool = True, short_rule: bool = True) -> float:
    """Share of the distinct 3-grams of `gold` that occur in `prediction`.

    With `normalised` and `short_rule` both off this is exactly the seed recipe
    (set-based, raw strings, 0 for a gold without 3-grams). The short-answer
    rule scores a gold of fewer than 3 characters (many CJK answers) 1 when it
    occurs in the prediction, else 0, instead of always 0.
    """
    pred = normalise(prediction) if normalised else prediction
    return _recall(gold, pred, ngram_set(pred), normalised, short_rule)


def split_parts(answer: str | Sequence[str], *, split: bool) -> list[str]:
    """Parts of a multi-part gold answer, split on ", " before normalising.

    A list is already split; a string is split only when `split` (ori_ans),
    never for new_ans strings. Parts that normalise to empty are dropped.
    """
    if isinstance(answer, str):
        parts = answer.split(", ") if split else [answer]
    else:
        parts = list(answer)
    return [p for p in parts if normalise(p)]


def multi_part_recall(parts: Sequence[str], prediction: str) -> float:
    """Mean over the parts of r(part, prediction): every part must be named to score 1."""
    return prepared_recall(prepare_answer(parts), normalise(prediction))


# ---- prepared gold: scoring many predictions against the same answers ------------------------------------
# A gold answer is read once per gold load and scored against thousands of
# predictions. A 3-gram is in the prediction's 3-gram set exactly when it is a
# substring of the (normalised) prediction, so recall needs no set built per
# prediction: each distinct gold 3-gram is looked up with `str.__contains__`,
# a C-level scan of a short string.
PreparedPart = tuple[str, tuple[str, ...]]  # (normalised part, its distinct 3-grams; empty: short-answer rule)


def prepare_answer(parts: Sequence[str]) -> tuple[PreparedPart, ...]:
    """A multi-part gold answer ready for `prepared_recall` (parts as `split_parts` returns them)."""
    out = []
    for part in parts:
        text, grams = _gold_grams(part, True)
        out.append((text, tuple(sorted(grams))))
    return tuple(out)


def prepared_recall(answer: tuple[PreparedPart, ...], normalised_prediction: str) -> float:
    """multi_part_recall of a prepared answer against an already normalised prediction."""
    if not answer:
        return 0.0
    contains = normalised_prediction.__contains__
    total = 0.0
    for text, grams in answer:
        if grams:
            total += sum(map(contains, grams)) / len(grams)
        elif text and text in normalised_prediction:  # short-answer rule: the whole answer occurs
            total += 1.0
    return total / len(answer)


def answer_row(answer: tuple[PreparedPart, ...]) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """A prepared answer as (needles, weights): its recall is the sum of the weights of the needles the
    prediction contains, `sum(compress(weights, map(prediction.__contains__, needles)))`, one C-level chain.

    A part's needles are its distinct 3-grams, each weighing 1 / (its 3-grams x the parts); a part without
    3-grams is one needle, its whole text, weighing 1 / the parts (the short-answer rule).
    """
    needles: list[str] = []
    weights: list[float] = []
    for text, grams in answer:
        needles.extend(grams or (text,))
        weights.extend([1 / (len(grams) * len(answer))] * len(grams) if grams else [1 / len(answer)])
    return tuple(needles), tuple(weights)
