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
from functools import lru_cache
from itertools import accumulate

import numpy as np

from . import ngram_kernel
from .compiled import compiled
from .ngram import ngram_set, normalise
from .ngram_kernel import CHUNK_CHARS, _points, _space_table, _text_points, in_chunks, runs

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


def script_predictions(predictions: list[str]) -> list[str]:
    """[script_normalise(p.lower()) for p in predictions] (the scripts lowercase a prediction first).

    Most predictions are sentences, with a character that keeps the scripts' one-token steps from applying
    (`_shapes`): such a prediction is its lowercased text lowercased again and stripped. Both lowercasings
    run once over the predictions joined by NUL: NUL is not punctuation, has no case and is neither cased
    nor case-ignorable (so a final sigma before it is final, as at the end of a text). Only the others
    (single words, numbers, empty texts) and the texts to strip are handled one by one. A prediction
    holding NUL itself sends all of them through `script_normalise`. The predictions go through in runs of
    about CHUNK_CHARS characters, so the copies of one run, not of the whole file, are held at once."""
    spans = runs(predictions, CHUNK_CHARS)
    if len(spans) == 1:
        return _script_predictions(predictions)
    return [text for a, b in spans for text in _script_predictions(predictions[a:b])]


def script_points(predictions: list[str], joined: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """ngram_kernel.text_points(script_predictions(predictions)), without building the texts: the
    sentences' code points are their span of the lowercased predictions' UTF-32, which `_shapes` reads
    anyway, so they are neither split into strings nor joined and encoded again. `joined`: as in_chunks'."""
    return in_chunks(predictions, CHUNK_CHARS, _script_points, joined)


def _script_predictions(predictions: list[str]) -> list[str]:
    joined = _script_joined(predictions)
    if isinstance(joined, list):
        return joined
    lowered, _, _, _, replaced = joined
    out = lowered.split("\0")
    for i, text in replaced.items():
        out[i] = text
    return out


def _script_points(predictions: list[str], joined: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    joined = _script_joined(predictions, joined)
    if isinstance(joined, list):
        return _text_points(joined)
    _, points, first, last, replaced = joined
    lengths = last - first + 1
    if replaced:  # each replaced text's span swapped for its own points
        pieces, end = [], 0
        for i, text in replaced.items():
            pieces += [points[end : first[i]], _points(text)]
            end = last[i] + 1
            lengths[i] = len(text)
        pieces.append(points[end:])
        points = np.concatenate(pieces)
    starts = np.zeros(len(predictions) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    return points[points != 0], starts  # the NULs between the texts dropped (none is inside one)


def _script_joined(predictions: list[str], joined: str | None = None):
    """The predictions' script normalisations, as a list when one of them holds NUL; else (the lowercased
    predictions joined by NUL, its UTF-32 code points, where each text begins and ends there, {i: its
    normalised text} for the predictions whose normalised text is not their span of the lowercased ones).
    `joined`: ngram_kernel.joined_texts(predictions), when the caller has it (no prediction holds NUL)."""
    if joined is None:
        joined = "\0".join(predictions)
        if joined.count("\0") != len(predictions) - 1:
            return [script_normalise(p.lower()) for p in predictions]
    lowered = joined.lower()
    # The second lowercasing (script_normalise's own) leaves lowered text as it is on this interpreter's Unicode
    # tables (`_lower_idempotent`): it is then skipped, ~10 ns a character of every file's predictions. Where
    # it is not, every prediction goes one by one (the shapes measured are the first lowercasing's).
    if not _lower_idempotent() and lowered.lower() != lowered:
        return [script_normalise(p.lower()) for p in predictions]
    sentence, edge, points, first, last = _shapes(lowered, len(predictions))
    replaced = {
        i: lowered[first[i] : last[i] + 1].strip() if sentence[i] else script_normalise(predictions[i].lower())
        for i in np.flatnonzero(~sentence | edge).tolist()
    }
    return lowered, points, first, last, replaced


@lru_cache(maxsize=1)
def _lower_idempotent() -> bool:
    """Whether str.lower() of any lowercased text is that text: every character a lowercasing can produce
    lowercases to itself, and none is a capital sigma (the one character whose lowering reads its context),
    so a lowered text lowers again character by character, unchanged. Checked once per process over every
    code point (one C-level call, a few ms), since the answer belongs to the interpreter's Unicode version."""
    points = np.concatenate([np.arange(0xD800), np.arange(0xE000, 0x110000)]).astype("<u4")  # surrogates left out
    lowered = points.tobytes().decode("utf-32-le").lower()
    return "\u03a3" not in lowered and lowered.lower() == lowered


_WORD, _BLOCKER, _WHITE = 1, 2, 4


@lru_cache(maxsize=1)
def _classes() -> np.ndarray:
    """Per code point, bits: _WORD (neither whitespace, ASCII punctuation nor NUL), _WHITE (whitespace)
    and _BLOCKER: a word character of the BMP that is neither alphabetic nor a digit, and whose NFKD holds
    such a character too ('。', '，'). Past the BMP no character is taken for a blocker (the exact path
    then decides)."""
    space = _space_table()
    out = np.full(0x110000, _WORD, dtype=np.uint8)
    out[: len(space)][space] = _WHITE
    out[[ord(c) for c in string.punctuation]] = 0
    out[0] = 0
    for c in np.flatnonzero(out[:0x10000] == _WORD).tolist():
        ch = chr(c)
        if not (0xD800 <= c <= 0xDFFF or _single_char(ch)):  # a lone surrogate is left to the exact path
            if not all(map(_single_char, unicodedata.normalize("NFKD", ch))):
                out[c] |= _BLOCKER
    return out


def _single_char(ch: str) -> bool:
    return ch.isalpha() or ch.isdigit()


def _shapes(joined: str, count: int) -> tuple[np.ndarray, ...]:
    """Per NUL-separated text of `joined` (lowercased predictions): (whether the scripts' steps are sure to
    leave it a text of several tokens, whether its first or last character is whitespace), then the code
    points of `joined` and per text where it begins and ends in them (last = first - 1: empty).

    A text is sure to stay several tokens when it holds a space between two word characters (the space
    survives the punctuation removal and the strip, and NFKD keeps it) or a blocker (it survives both, and
    so does a character of its NFKD that is neither alphabetic nor a digit): either way neither the
    punctuation-free text nor its NFKD is one alphabetic or numeric token. One compiled pass over the code
    points (each a class lookup): the array form took a gather and eight whole-text passes, ~2 ms a file."""
    points = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    sentence = np.zeros(count, dtype=np.bool_)
    edge = np.zeros(count, dtype=np.bool_)
    first = np.empty(count, dtype=np.int64)
    last = np.empty(count, dtype=np.int64)
    if compiled(_shape_loop)(points, _classes(), sentence, edge, first, last) != count:
        raise ValueError("the joined text holds another number of texts")  # the caller counted its NULs
    return sentence, edge, points, first, last


def _shape_loop(points, classes, sentence, edge, first, last) -> int:
    """_shapes' per-text flags and spans over `points` (texts separated by NUL); returns the texts seen.
    A space is `sure` between two word characters of its own text: NUL is no word character, so a space at
    a text's edge never is. Stops writing past len(first) texts (the caller then raises)."""
    count, text, start = len(first), 0, 0
    n = len(points)
    for i in range(n + 1):
        if i == n or points[i] == 0:
            if text < count:
                first[text], last[text] = start, i - 1
                if i > start:
                    edge[text] = (classes[points[start]] & _WHITE) != 0 or (classes[points[i - 1]] & _WHITE) != 0
            text += 1
            start = i + 1
            continue
        if text >= count:
            continue
        c = classes[points[i]]
        if c & _BLOCKER:
            sentence[text] = True
        elif points[i] == 32 and start < i < n - 1 and classes[points[i - 1]] & _WORD and classes[points[i + 1]] & _WORD:
            sentence[text] = True
    return text


def warm_up() -> None:
    """ngram_kernel.warm_up, and the scripts' normalisation loop (`_shapes`), which every file's official
    protocol runs: compiled (or loaded from the cache) now, so the first submission waits for none of them."""
    ngram_kernel.warm_up()
    script_points(["Abc d", "x"])


# Held by six of the phrases (the Latin-script ones): where no prediction holds it, one search stands for six
_SHARED = "nsuf"


def refusals(predictions: list[str], joined: str | None = None) -> list[bool]:
    """[refused(p) for p in predictions], each phrase searched once over them all joined by NUL (no phrase
    holds NUL, so an occurrence lies inside one prediction); `joined`: ngram_kernel.joined_texts(predictions),
    when the caller has it (no prediction holds NUL)."""
    if joined is None:
        joined = "\0".join(predictions)
        if joined.count("\0") != len(predictions) - 1:
            return [refused(p) for p in predictions]
    out = [False] * len(predictions)
    starts = None  # where each text begins, with its NUL: built at the first occurrence (most files have none)
    shared = _SHARED in joined
    for phrase in REFUSALS:
        if not shared and _SHARED in phrase:
            continue  # it holds a text the predictions do not
        at = joined.find(phrase)
        while at >= 0:
            if starts is None:
                starts = list(accumulate(map((1).__add__, map(len, predictions)), initial=0))
            item = bisect_right(starts, at) - 1
            out[item] = True
            at = joined.find(phrase, starts[item + 1])  # this prediction is a refusal already: on to the next
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
