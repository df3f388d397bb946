"""Character 3-gram recall of many (prediction, answer row) pairs in one compiled loop (Futurepedia scoring).

An answer row is `ngram.answer_row`'s (needles, weights): a part's distinct 3-grams, or the whole text of a
part shorter than 3 characters (the short-answer rule), each with its weight. A row's recall against a
prediction is the sum of the weights of the needles the prediction contains, added one by one in needle
order from 0.0: exactly what `sum(compress(weights, map(prediction.__contains__, needles)))` computes, so
the numbers are the same to the last bit.

A needle occurs in a prediction exactly when it is one of the prediction's n-grams of its length, so each
character n-gram is packed into one integer (21 bits a code point: U+10FFFF fits; each code point + 1, so
0 means "no character" and a 3-gram, whose top field is never 0, never equals a 1- or 2-gram). Per
prediction its 3-grams are packed and sorted once (its 1- and 2-grams only when a paired row holds a short
needle), and each needle is a binary search: O(L log L + needles x log L) per prediction of L characters,
never L x needles, whatever length a stranger sends (the prediction bound is base.MAX_ANSWER).

The loop is compiled with numba, imported only at the first call (`kernel()`), never at
`import leaderboard.*`: the app's start-up does not pay for it. Without numba the same function runs
interpreted: the same numbers, only slower (a warning is logged once).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

log = logging.getLogger(__name__)

_SHIFT = 21  # bits per code point: the largest, U+10FFFF (+ 1), is below 2**21
_THREE = 1 << (2 * _SHIFT)  # every packed 3-gram is >= this; 1- and 2-grams are below


def pack(gram: str) -> int:
    """A 1- to 3-character string as one non-negative int64 code (each code point + 1, 21 bits apiece)."""
    if not 1 <= len(gram) <= 3:
        raise ValueError(f"a needle has 1 to 3 characters, got {len(gram)}")
    code = 0
    for c in gram:
        code = (code << _SHIFT) | (ord(c) + 1)
    return code


class NeedleRows:
    """Answer rows (ngram.answer_row's (needles, weights)) as flat arrays: row r's needles are
    codes[start[r]:start[r + 1]] (packed with `pack`) with their weights; `short[r]`: row r holds a 1- or
    2-character needle. Built once per gold load."""

    def __init__(self, rows: Sequence[tuple[Sequence[str], Sequence[float]]]):
        codes: list[int] = []
        weights: list[float] = []
        starts = [0]
        short = []
        for needles, row_weights in rows:
            if len(needles) != len(row_weights):
                raise ValueError("a row needs one weight per needle")
            codes.extend(map(pack, needles))
            weights.extend(row_weights)
            starts.append(len(codes))
            short.append(any(len(n) < 3 for n in needles))
        self.codes = np.array(codes, dtype=np.int64)
        self.weights = np.array(weights, dtype=np.float64)
        self.start = np.array(starts, dtype=np.int64)
        self.short = np.array(short, dtype=np.bool_)

    def __len__(self) -> int:
        return len(self.short)


def _recall_pairs(points, pred_start, pair_pred, pair_row, codes, weights, row_start, row_short, out):
    """out[e] = recall of row pair_row[e] against prediction pair_pred[e] (the code points
    points[pred_start[p]:pred_start[p + 1]]). A prediction's grams are built when its pairs begin: pairs
    grouped by prediction build them once (any order is correct, only slower). Numba compiles this one
    function as written; interpreted it gives the same numbers."""
    current = -1
    chars = points[:0] + 1
    threes = np.empty(0, dtype=np.int64)
    shorts = np.empty(0, dtype=np.int64)
    have_shorts = False
    for e in range(len(pair_pred)):
        p = pair_pred[e]
        if p != current:
            current = p
            chars = points[pred_start[p] : pred_start[p + 1]] + 1  # + 1: a packed field is never 0
            threes = (chars[:-2] << 42) | (chars[1:-1] << 21) | chars[2:]
            # merge sort: O(L log L) for any input (a quicksort can be driven quadratic, and a stranger
            # chooses the prediction); numba takes `kind` only in argsort
            threes = threes[np.argsort(threes, kind="mergesort")]
            have_shorts = False
        r = pair_row[e]
        if row_short[r] and not have_shorts:  # 1- and 2-grams only for a row with a short needle
            shorts = np.concatenate((chars, (chars[:-1] << 21) | chars[1:]))
            shorts = shorts[np.argsort(shorts, kind="mergesort")]
            have_shorts = True
        total = 0.0  # weights add in needle order from 0.0: bit for bit what sum(compress(...)) gives
        for k in range(row_start[r], row_start[r + 1]):
            code = codes[k]
            grams = threes if code >= _THREE else shorts
            at = np.searchsorted(grams, code)
            if at < len(grams) and grams[at] == code:
                total += weights[k]
        out[e] = total


@lru_cache(maxsize=1)
def kernel():
    """The pair loop compiled by numba (imported here, on first use), or the same loop interpreted if numba is missing.

    cache=True keeps the machine code in __pycache__ beside this module, so a new process loads it
    instead of compiling; numba itself falls back to a per-user cache directory (NUMBA_CACHE_DIR, else
    ~/.cache/numba) when that folder is read-only, and when no cache location is writable at all we
    compile without a cache rather than fail.
    """
    try:
        import numba
    except ImportError:
        log.warning("numba is not installed: Futurepedia recall runs interpreted (the same numbers, much slower)")
        return _recall_pairs
    try:  # nogil: scoring threads can run side by side while in the loop
        return numba.njit(cache=True, nogil=True)(_recall_pairs)
    except RuntimeError:  # "cannot cache function ...: no locator available": no writable cache directory
        return numba.njit(nogil=True)(_recall_pairs)


def recall_pairs(rows: NeedleRows, predictions: Sequence[str], pair_pred, pair_row) -> np.ndarray:
    """Recall of row pair_row[e] against (already normalised) prediction pair_pred[e], for every pair e.

    List a prediction's pairs together: its grams are built once per run of pairs."""
    out = np.zeros(len(pair_pred))
    kernel()(*pair_arguments(rows, predictions, pair_pred, pair_row), out)
    return out


def pair_arguments(rows: NeedleRows, predictions: Sequence[str], pair_pred, pair_row) -> tuple[np.ndarray, ...]:
    """The kernel's arguments but `out`, checked: every index in range (the compiled loop does not check bounds)."""
    pair_pred = np.ascontiguousarray(pair_pred, dtype=np.int64)
    pair_row = np.ascontiguousarray(pair_row, dtype=np.int64)
    if pair_pred.shape != pair_row.shape or pair_pred.ndim != 1:
        raise ValueError("pair_pred and pair_row must be 1-d and of one length")
    if len(pair_pred) and not (0 <= pair_pred.min() and pair_pred.max() < len(predictions)):
        raise ValueError("a pair names a prediction out of range")
    if len(pair_row) and not (0 <= pair_row.min() and pair_row.max() < len(rows)):
        raise ValueError("a pair names a row out of range")
    lengths = np.fromiter(map(len, predictions), dtype=np.int64, count=len(predictions))
    pred_start = np.zeros(len(predictions) + 1, dtype=np.int64)
    np.cumsum(lengths, out=pred_start[1:])
    # one code point per character, lone surrogates included (as str.__contains__ sees them)
    points = np.frombuffer("".join(predictions).encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
    return points, pred_start, pair_pred, pair_row, rows.codes, rows.weights, rows.start, rows.short


def warm_up() -> None:
    """Compile (or load from the cache) the kernel now, on a tiny input of the real argument types, so the
    first submission does not wait for it."""
    recall_pairs(NeedleRows([(("abc", "é"), (0.5, 0.5))]), ["abcé"], [0], [0])
