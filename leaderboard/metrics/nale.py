"""Character 3-gram recall as the Futurepedia scripts compute it (eval_mono.py / eval_cross.py of
niane030422-cmd/NALE), and each of the board's fixes to it switchable on its own (SCORING.md, "Official
scripts").

A part of a gold answer becomes an ngram_kernel row whose recall against a prediction is the part's own
recall (not divided by the number of parts: how parts are combined is the caller's, since the script sums
parts where the board averages units). The same compiled kernel as the board's then scores every pair.
"""

from __future__ import annotations

import re
import string
import unicodedata
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from itertools import accumulate

from .ngram import ngram_set, normalise

# The scripts' "insufficient information" phrases, matched in the raw prediction (case-sensitive, before
# any lowercasing): zh, en, ja, fr, ar, es, ko, pt, es, pt.
REFUSALS = (
    "信息不足",
    "insufficient information",
    "十分な情報がないため",
    "informations insuffisantes",
    "المستند يحتوي على معلومات غير كافية",
    "insuficiente en los documentos",
    "문서 정보가 부족하여",
    "insuficientes no documento",
    "información insuficiente",
    "informações insuficientes",
)

# str.translate with a deletion table runs a slow per-character path on any non-ASCII text; the regex is ~3x faster.
_ASCII_PUNCTUATION = re.compile(f"[{re.escape(string.punctuation)}]")
# Removed from a gold of 3 or more characters before its 3-grams are taken (artefacts of a list printed as text).
_BRACKETS = (("['", ""), ("']", ""), ('["', ""), ('"]', ""), ("', '", " "), ('", "', " "))


@dataclass(frozen=True)
class Recipe:
    """How one part is scored: the script's way, or with some of the board's fixes."""

    distinct: bool  # distinct-3grams: the set of 3-grams (spaces included), not the list without spaces
    board_normalisation: bool  # normalise-both-sides: NFKC, casefold, whitespace; not the script's steps
    short_rule: bool  # short-answers-score: a gold under 3 characters scores 1 when it occurs


_REFUSAL = re.compile("|".join(map(re.escape, REFUSALS)))  # one scan instead of ten


def refused(prediction: str) -> bool:
    """Whether the scripts read `prediction` as a refusal."""
    return _REFUSAL.search(prediction) is not None


def _single_token(text: str) -> bool:
    # "not empty, not blanks, and all letters or all digits": a text with a space never qualifies
    return text.isalpha() or text.isdigit()


def script_normalise(text: str) -> str:
    """The scripts' normalisation: ASCII punctuation removed, then NFKD, each step kept only when its
    result is one alphabetic or one numeric token (so a phrase keeps its punctuation and accents, a single
    Hangul word is decomposed into jamo); then lowercased and stripped."""
    step = _ASCII_PUNCTUATION.sub("", text).replace("  ", " ").strip()
    if _single_token(step):
        text = step
    step = unicodedata.normalize("NFKD", text)
    if _single_token(step):
        text = step
    return text.lower().strip()


def prediction_text(prediction: str, recipe: Recipe) -> str:
    """The prediction as the recipe compares it (the script lowercases it before normalising)."""
    return normalise(prediction) if recipe.board_normalisation else script_normalise(prediction.lower())


def script_predictions(predictions: list[str]) -> list[str]:
    """[script_normalise(p.lower()) for p in predictions] (the scripts lowercase a prediction first), with
    the lowercasing, the punctuation removal and NFKD each run once over the predictions joined by NUL.
    None of them touches NUL or reaches across it: NUL is not punctuation, has no case and is neither cased
    nor case-ignorable (so a final sigma before it is final, as at the end of a text), and it is a starter
    that composes with nothing. A prediction holding NUL itself takes the one-by-one path."""
    joined = "\0".join(predictions)
    if joined.count("\0") != len(predictions) - 1:
        return [script_normalise(p.lower()) for p in predictions]
    lowered = joined.lower()
    texts = lowered.split("\0")
    stripped = [s.replace("  ", " ").strip() for s in _ASCII_PUNCTUATION.sub("", lowered).split("\0")]
    texts = [s if s.isalpha() or s.isdigit() else t for t, s in zip(texts, stripped)]
    decomposed = unicodedata.normalize("NFKD", "\0".join(texts)).split("\0")
    return [(s if s.isalpha() or s.isdigit() else t).lower().strip() for t, s in zip(texts, decomposed)]


def refusals(predictions: list[str]) -> list[bool]:
    """[refused(p) for p in predictions], from one scan of them all (no phrase holds NUL, the separator)."""
    joined = "\0".join(predictions)
    out = [False] * len(predictions)
    if joined.count("\0") != len(predictions) - 1:
        return [refused(p) for p in predictions]
    starts = list(accumulate((len(p) + 1 for p in predictions), initial=0))
    for match in _REFUSAL.finditer(joined):
        out[bisect_right(starts, match.start()) - 1] = True
    return out


def split_answer(answer, recipe: Recipe, *, split: bool) -> list[str]:
    """A gold answer's parts: a list as given; a string split on ", " when `split` (ori_ans). The board
    drops parts that normalise to empty; the script keeps them (they score 0 and count)."""
    parts = list(answer) if isinstance(answer, list) else answer.split(", ") if split else [answer]
    return [p for p in parts if normalise(p)] if recipe.board_normalisation else parts


def part_row(part: str, recipe: Recipe) -> tuple[tuple[str, ...], tuple[float, ...], int]:
    """(needles, counts, size): the part's recall against a prediction is the sum of the counts of the
    needles found in it over `size`, the script's "matches / the list's length" with whole numbers, so a
    part found whole scores exactly 1.

    A 3-gram listed k times in the script's list counts k (repeats kept); with distinct-3grams each counts
    1. A part without a needle scores 0."""
    text = normalise(part) if recipe.board_normalisation else script_normalise(part)
    if len(text) < 3:
        return ((text,), (1.0,), 1) if recipe.short_rule and text else ((), (), 1)
    if not recipe.board_normalisation:
        for old, new in _BRACKETS:
            text = text.replace(old, new)
    if recipe.distinct:
        grams = sorted(ngram_set(text))
        return tuple(grams), (1.0,) * len(grams), max(len(grams), 1)
    listed = Counter(g for g in (text[i : i + 3] for i in range(len(text) - 2)) if " " not in g)
    needles = tuple(sorted(listed))
    return needles, tuple(float(listed[g]) for g in needles), max(sum(listed.values()), 1)
