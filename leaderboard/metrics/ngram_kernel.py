"""Character 3-gram recall of many (prediction, answer row) pairs in one compiled loop (Futurepedia scoring).

An answer row is `ngram.answer_row`'s (needles, weights): a part's distinct 3-grams, or the whole text of a
part shorter than 3 characters (the short-answer rule), each with its weight. A row's recall against a
prediction is the sum of the weights of the needles the prediction contains, added one by one in needle
order from 0.0: exactly what `sum(compress(weights, map(prediction.__contains__, needles)))` computes, so
the numbers are the same to the last bit.

A needle occurs in a prediction exactly when it is one of the prediction's n-grams of its length, so each
character n-gram is packed into one integer (21 bits a code point: U+10FFFF fits; each code point + 1, so
0 means "no character" and a 3-gram, whose top field is never 0, never equals a 1- or 2-gram). Per
prediction its grams are packed once and put in a small hash table (a short prediction) or sorted (a long
one), and each needle is one lookup: O(L log L + needles x log L) at worst per prediction of L
characters, never L x needles, whatever text a stranger sends (the length bound is base.MAX_ANSWER).

The loops are compiled with numba, imported only at their first call (compiled.py: the first Futurepedia
scoring of a process; `warm_up()`, or nale.warm_up() with the scripts' loop too, for a caller that wants it
earlier), never at `import leaderboard.*` nor at gold load: the app's start-up loads every track's gold and
does not pay for it. Without numba the same functions run interpreted: the same numbers, only slower (a
warning is logged once).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from .compiled import compiled
from .ngram import normalise

_SHIFT = 21  # bits per code point: the largest, U+10FFFF (+ 1), is below 2**21 (numba reads it as a constant)


def pack(gram: str) -> int:
    """A 1- to 3-character string as one non-negative int64 code (each code point + 1, 21 bits apiece)."""
    if not 1 <= len(gram) <= 3:
        raise ValueError(f"a needle has 1 to 3 characters, got {len(gram)}")
    code = 0
    for c in gram:
        code = (code << _SHIFT) | (ord(c) + 1)
    return code


# Every character has a bucket (0-62): ASCII letters 1, ASCII digits 2, other ASCII 0 (spaces, punctuation: in
# nearly every text, so never a reason to skip), any other character 3 + its 128-character block folded onto
# 60. A needle is found only where the prediction holds each of its characters, so a row each of whose needles
# has a character of a bucket the prediction lacks (a Hangul answer against a Latin-script prediction) scores
# 0.0 without a lookup: exact whatever the buckets, which only decide how often that happens.
_ASCII_BUCKET = np.array([1 if chr(c).isalpha() else 2 if chr(c).isdigit() else 0 for c in range(128)], dtype=np.int64)


def _bucket_bits(points: np.ndarray) -> np.ndarray:
    """1 << bucket of each code point (int64), bucket 0 dropped (it constrains nothing)."""
    points = points.astype(np.int64)
    bucket = 3 + (points >> 7) % 60
    ascii_ = points < 128
    bucket[ascii_] = _ASCII_BUCKET[points[ascii_]]
    return (np.int64(1) << bucket) & ~np.int64(1)


def _common_buckets(codes: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Per row, the buckets every one of its needles has a character of (0 for a row without needles)."""
    needle = np.zeros(len(codes), dtype=np.int64)
    for shift in (0, _SHIFT, 2 * _SHIFT):
        field = (codes >> shift) & ((1 << _SHIFT) - 1)  # a code point + 1, or 0: no character
        held = field > 0
        needle[held] |= _bucket_bits(field[held] - 1)
    out = np.zeros(len(start) - 1, dtype=np.int64)
    full = start[1:] > start[:-1]
    if full.any():
        out[full] = np.bitwise_and.reduceat(needle, start[:-1][full])
    return out


class NeedleRows:
    """Answer rows (ngram.answer_row's (needles, weights)) as flat arrays: row r's needles are
    codes[start[r]:start[r + 1]] (packed with `pack`) with their weights; `short[r]`: row r holds a 1- or
    2-character needle; `common[r]`: the character buckets each of its needles has (`_common_buckets`).
    Built once per gold load."""

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
        if not (np.isfinite(self.weights) & (self.weights >= 0)).all():
            # the kernel adds weight x found, +0.0 for a needle not found: the sum's bits only for such weights
            raise ValueError("a needle's weight must be finite and not negative")
        self.start = np.array(starts, dtype=np.int64)
        self.short = np.array(short, dtype=np.bool_)
        self.common = _common_buckets(self.codes, self.start)  # (_bucket_bits) the kernel's skip test

    def __len__(self) -> int:
        return len(self.short)

    @classmethod
    def joined(cls, sets: Sequence[NeedleRows]) -> tuple[NeedleRows, np.ndarray]:
        """The rows of several sets one after another, and where each set's rows begin: row r of set i is
        row offsets[i] + r, with the same needles and weights (so the same recall against any prediction)."""
        out = cls(())
        sizes = np.array([len(s) for s in sets], dtype=np.int64)
        needles = np.array([len(s.codes) for s in sets], dtype=np.int64)
        out.codes = np.concatenate([s.codes for s in sets])
        out.weights = np.concatenate([s.weights for s in sets])
        out.start = np.concatenate(
            [*(s.start[:-1] + base for s, base in zip(sets, np.cumsum(needles) - needles)), [len(out.codes)]]
        )
        out.short = np.concatenate([s.short for s in sets])
        out.common = np.concatenate([s.common for s in sets])
        return out, np.cumsum(sizes) - sizes


# Up to this many grams a prediction's grams go in a hash table of _SLOTS; past it, sorted. 256: a prediction
# of up to ~86 characters paired with a short needle (3 grams a character) still takes the table; at 128 the
# longer ones were sorted (~120 sorts a bench file, ~1 ms). A probe chain stays at most _SMALL long.
_SMALL = 256
# A power of 2, 16 x _SMALL: a prediction of ~30 grams fills <1% of the slots, so a needle's first probe
# nearly always settles it (the loop that walks a collision is a branch that mispredicts: per bench file 4096
# slots measured ~0.2 ms cheaper than 2048, ~0.6 ms than 1024, ~2 ms than 256; 8192 no better). 32 KiB of
# int64: within the L1 cache. The table is emptied slot by slot after each prediction (only its <= _SMALL
# grams), so its size costs nothing there.
_SLOTS = 4096
_SLOT_BITS = 12  # log2(_SLOTS)
# Fibonacci hashing: the top _SLOT_BITS bits of code x 0x9E3779B97F4A7C15 (mod 2**64; here as an int64), which
# mix all three 21-bit fields; the xor-fold it replaced left many more collisions on real text.
_HASH = -0x61C8864680B583EB
_GRAM = (1 << (3 * _SHIFT)) - 1  # the low three fields: the last three characters of a rolling code


def slot_of(code: int) -> int:
    """The first slot of the kernel's table a packed gram probes (the kernel writes this inline: numba
    compiles one function). int(): the product is taken exactly (Python ints) where the loop runs
    interpreted and wraps in int64 where compiled; either way its top _SLOT_BITS bits, the slot, are the same."""
    return ((int(code) * _HASH) >> (64 - _SLOT_BITS)) & (_SLOTS - 1)


def _recall_pairs(points, pred_start, pair_pred, pair_row, codes, weights, row_start, row_short, row_common, out):
    """out[e] = recall of row pair_row[e] against prediction pair_pred[e] (the code points
    points[pred_start[p]:pred_start[p + 1]]).

    A prediction's packed grams are built when its pairs begin (pairs grouped by prediction build them
    once; any order is correct, only slower): its 3-grams, and its 1- and 2-grams too once a paired row
    holds a short needle. Up to _SMALL grams (nearly every prediction) they go in a small open-addressing
    table (linear probing; 0, which no packed gram is, marks an empty slot, and the slots a prediction took
    are emptied when the next one is built): a needle costs a probe or two, and even grams chosen to
    collide cost at most _SMALL probes each, a constant. Past _SMALL the grams are merge-sorted and each
    needle is a binary search, O(L log L + needles x log L) for any input.
    Numba compiles this one function as written (a helper would have to be jitted too); interpreted, it
    gives the same numbers."""
    longest = 0
    for p in range(len(pred_start) - 1):
        longest = max(longest, pred_start[p + 1] - pred_start[p])
    grams = np.empty(3 * longest, dtype=np.int64)  # one buffer for every prediction: no allocation per record
    slot_code = np.zeros(_SLOTS, dtype=np.int64)  # a gram's code, or 0: an empty slot
    taken = np.empty(_SMALL, dtype=np.int64)  # the slots the current prediction's grams hold: taken[:used]
    used = 0
    current, with_short, n, buckets = -1, False, 0, 0
    for e in range(len(pair_pred)):
        p, r = pair_pred[e], pair_row[e]
        if p != current or (row_short[r] and not with_short):
            current, with_short, n, buckets = p, row_short[r], 0, 0
            first, end = pred_start[p], pred_start[p + 1]
            code = 0
            for i in range(first, end):
                # int64 before packing: points are uint32 (4 bytes a character), and numpy (the interpreted
                # fallback) keeps uint32 + 1 a uint32, whose shifts would lose the upper fields
                c = np.int64(points[i]) + 1  # + 1: a packed field is never 0
                # the prediction's character buckets (_bucket_bits, written inline)
                buckets |= np.int64(1) << (_ASCII_BUCKET[c - 1] if c <= 128 else 3 + ((c - 1) >> 7) % 60)
                code = ((code << _SHIFT) | c) & _GRAM  # rolling: the 3-gram ending at i (once i - first >= 2)
                if i - first >= 2:
                    grams[n] = code
                    n += 1
                if with_short:
                    grams[n] = c
                    n += 1
                    if i > first:
                        grams[n] = code & ((1 << (2 * _SHIFT)) - 1)  # the 2-gram ending at i
                        n += 1
            for i in range(used):  # empty the previous prediction's slots: O(its grams), not O(_SLOTS)
                slot_code[taken[i]] = 0
            used = 0
            if n <= _SMALL:
                for i in range(n):
                    code = grams[i]
                    slot = ((int(code) * _HASH) >> (64 - _SLOT_BITS)) & (_SLOTS - 1)  # slot_of(code)
                    while slot_code[slot] != 0 and slot_code[slot] != code:
                        slot = (slot + 1) & (_SLOTS - 1)
                    if slot_code[slot] == 0:  # (else a repeated gram, already held)
                        slot_code[slot] = code
                        taken[used] = slot
                        used += 1
            else:  # a merge sort: O(L log L) for any input; numba's quicksort can be driven quadratic, and
                # a stranger chooses the prediction (numba takes `kind` only in argsort)
                held = grams[:n]
                held[:] = held[np.argsort(held, kind="mergesort")]
        if row_common[r] & ~buckets:  # every needle has a character the prediction lacks: none is found
            out[e] = 0.0
            continue
        # Weights add in needle order from 0.0: bit for bit what sum(compress(...)) gives. A needle not found
        # adds weight x False = +0.0, which leaves the sum as it is (weights are positive and finite, and the
        # sum starts at +0.0): the same bits without a branch on found, which random text mispredicts.
        total = 0.0
        if n <= _SMALL:
            for k in range(row_start[r], row_start[r + 1]):
                code = codes[k]
                slot = ((int(code) * _HASH) >> (64 - _SLOT_BITS)) & (_SLOTS - 1)  # slot_of(code)
                held = slot_code[slot]
                while (held != code) & (held != 0):  # & not `and`: one branch, rarely taken
                    slot = (slot + 1) & (_SLOTS - 1)
                    held = slot_code[slot]
                total += weights[k] * (held == code)
        else:
            for k in range(row_start[r], row_start[r + 1]):
                code, low, high = codes[k], 0, n
                while low < high:  # binary search of grams[:n]
                    mid = (low + high) >> 1
                    if grams[mid] < code:
                        low = mid + 1
                    else:
                        high = mid
                total += weights[k] * (low < n and grams[low] == code)
        out[e] = total


def _collapse_whitespace(points, is_space, out, starts):
    """Write each NUL-separated text of `points` to `out` with its whitespace runs as one space and none at
    either end (what " ".join(text.split()) does); starts[i] = where text i begins in out, starts[-1] =
    the size written (returned too). `is_space[c]`: str.isspace(chr(c)) (none past the table's end)."""
    size, text, pending = 0, 0, False
    starts[0] = 0
    for c in points:
        if c == 0:
            text += 1
            starts[text] = size
            pending = False
        elif c < len(is_space) and is_space[c]:
            pending = size > starts[text]  # one space between words, none before the first
        else:
            if pending:
                out[size] = 32
                size += 1
                pending = False
            out[size] = c
            size += 1
    starts[text + 1] = size
    return size


@lru_cache(maxsize=1)
def _space_table() -> np.ndarray:
    # str.split() splits on str.isspace() characters; the last of them is U+3000 (a test checks the whole range)
    return np.array([chr(c).isspace() for c in range(0x3001)], dtype=np.bool_)


# Texts are normalised a run of about this many characters at a time: a run's copies (the NUL-joined text,
# its NFKC and casefolded forms, its UTF-32 buffer: some 14 bytes a character) stay a few tens of MB
# whatever the file, instead of growing with it (a file of 32,768-character predictions holds 50M+).
CHUNK_CHARS = 1 << 22


def runs(texts: Sequence[str], chunk: int) -> list[tuple[int, int]]:
    """[(first, end)] of consecutive texts, each run about `chunk` characters (a longer text is a run of its own)."""
    if sum(map(len, texts)) + len(texts) < chunk:  # nearly every file: one run
        return [(0, len(texts))]
    ends = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1)
    out, start, base = [], 0, 0
    while start < len(texts):
        end = max(int(np.searchsorted(ends, base + chunk, side="left")) + 1, start + 1)  # the text reaching chunk ends it
        end = min(end, len(texts))
        out.append((start, end))
        start, base = end, int(ends[end - 1])
    return out


def joined_texts(texts: Sequence[str], chunk: int = CHUNK_CHARS) -> str | None:
    """The texts joined by NUL when they are one run of `chunk` characters and none holds NUL itself, else None:
    what the bulk passes (both normalisations, the refusals) start from, checked once for all of them, so
    each takes a `joined` it is given as one run of NUL-separated texts without measuring it again."""
    if len(runs(texts, chunk)) != 1:
        return None
    joined = "\0".join(texts)
    return joined if joined.count("\0") == len(texts) - 1 else None


def in_chunks(texts: Sequence[str], chunk: int, points_of, joined: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """points_of(texts) (a (points, starts) pair) computed on `runs` of the texts and put together: the same
    arrays as one call, since no text's points depend on another's. `joined`: joined_texts(texts), when the
    caller has it, handed to points_of(texts, joined) as the one run."""
    if joined is not None:
        return points_of(texts, joined)
    spans = runs(texts, chunk)
    if len(spans) == 1:
        return points_of(texts)
    parts = [points_of(texts[a:b]) for a, b in spans]
    points = np.concatenate([p for p, _ in parts])
    sizes = np.cumsum([0, *(len(p) for p, _ in parts)])
    starts = np.concatenate([*(s[:-1] + base for (_, s), base in zip(parts, sizes)), [sizes[-1]]]).astype(np.int64)
    return points, starts


def normalised_points(texts: Sequence[str], chunk: int = CHUNK_CHARS, joined: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The code points of [ngram.normalise(t) for t in texts] in one uint32 array, and where each text
    starts in it (len(texts) + 1 offsets), one code point per character, lone surrogates included.

    NFKC and casefold run once over the texts joined by NUL: NUL is a starter that composes with nothing,
    is not whitespace and has no case, so neither reaches across it; the whitespace collapsing then runs
    compiled, text by text. A text holding NUL itself takes the one-by-one path. The texts go through in
    runs of about `chunk` characters (see `in_chunks`).
    """
    return in_chunks(texts, chunk, _normalised_points, joined)


def _normalised_points(texts: Sequence[str], joined: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    if joined is None:  # (a `joined` given is joined_texts': no text holds NUL)
        joined = "\0".join(texts)
        if joined.count("\0") != len(texts) - 1:
            return _points_one_by_one(texts)
    points = _points(unicodedata.normalize("NFKC", joined).casefold())
    out = np.empty_like(points)
    starts = np.empty(len(texts) + 1, dtype=np.int64)
    size = compiled(_collapse_whitespace)(points, _space_table(), out, starts)
    return out[:size], starts


def _points_one_by_one(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    normalised = [normalise(t) for t in texts]
    starts = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, normalised), dtype=np.int64, count=len(texts)), out=starts[1:])
    return _points("".join(normalised)), starts


def text_points(texts: Sequence[str], chunk: int = CHUNK_CHARS) -> tuple[np.ndarray, np.ndarray]:
    """`texts` as they are (normalised some other way, e.g. as a benchmark's script does), in the layout
    of `normalised_points`."""
    return in_chunks(texts, chunk, _text_points)


def _text_points(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    starts = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), out=starts[1:])
    return _points("".join(texts)), starts


def _points(text: str) -> np.ndarray:
    # 4 bytes a character, the UTF-32 buffer itself (read-only): a file's predictions reach 128 MiB of text
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def recall_pairs(rows: NeedleRows, predictions: tuple[np.ndarray, np.ndarray], pair_pred, pair_row) -> np.ndarray:
    """Recall of row pair_row[e] against prediction pair_pred[e] of `predictions` (normalised_points), for every pair e.

    List a prediction's pairs together: its grams are built once per run of pairs."""
    out = np.zeros(len(pair_pred))
    compiled(_recall_pairs)(*pair_arguments(rows, predictions, pair_pred, pair_row), out)
    return out


def grouped_order(pair_pred, predictions: int) -> np.ndarray:
    """np.argsort(pair_pred, kind="stable") for predictions 0 .. predictions - 1: the pairs grouped by
    prediction (as recall_pairs wants them), each prediction's in their own order, by a counting sort:
    O(pairs + predictions), where the comparison sort of a file's ~10^5 pairs took ~1 ms."""
    pair_pred = np.ascontiguousarray(pair_pred, dtype=np.int64)
    if len(pair_pred) and not (0 <= pair_pred.min() and pair_pred.max() < predictions):
        raise ValueError("a pair names a prediction out of range")  # the compiled loop does not check bounds
    order = np.empty(len(pair_pred), dtype=np.int64)
    compiled(_counting_order)(pair_pred, np.zeros(predictions + 1, dtype=np.int64), order)
    return order


def _counting_order(pair_pred, start, order):
    for p in pair_pred:  # start[p + 1]: how many pairs name p, then where p's pairs begin
        start[p + 1] += 1
    for p in range(len(start) - 1):
        start[p + 1] += start[p]
    for e in range(len(pair_pred)):
        p = pair_pred[e]
        order[start[p]] = e
        start[p] += 1


def same_texts(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Per text of two layouts of as many texts (`normalised_points`'): whether it has the same code points in
    both. Compared in place, character by character: no array per character (a file at the size cap holds
    some 25M characters a task)."""
    (a_points, a_starts), (b_points, b_starts) = a, b
    if len(a_starts) != len(b_starts):
        raise ValueError("the layouts hold different numbers of texts")
    _check_layout(a_points, a_starts)
    _check_layout(b_points, b_starts)
    out = np.empty(len(a_starts) - 1, dtype=np.bool_)
    compiled(_same_texts)(a_points, a_starts, b_points, b_starts, out)
    return out


def _same_texts(a_points, a_starts, b_points, b_starts, out):
    for t in range(len(out)):
        a, b, n = a_starts[t], b_starts[t], a_starts[t + 1] - a_starts[t]
        same = n == b_starts[t + 1] - b
        k = 0
        while same and k < n:
            same = a_points[a + k] == b_points[b + k]
            k += 1
        out[t] = same


def appended(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray], texts) -> tuple[np.ndarray, np.ndarray]:
    """Layout `a` followed by the texts `texts` (indices, in order) of layout `b`: text len(a) - 1 + j is
    b's texts[j]. One array written once (a's points copied, then b's texts'), no index per character."""
    (a_points, a_starts), (b_points, b_starts) = a, b
    _check_layout(b_points, b_starts)
    texts = np.ascontiguousarray(texts, dtype=np.int64)
    if len(texts) and not (0 <= texts.min() and texts.max() < len(b_starts) - 1):
        raise ValueError("a text index is out of range")
    lengths = b_starts[texts + 1] - b_starts[texts]
    starts = np.concatenate([a_starts, a_starts[-1] + np.cumsum(lengths)])
    points = np.empty(int(starts[-1]), dtype=np.uint32)
    points[: a_starts[-1]] = a_points[: a_starts[-1]]
    compiled(_copy_texts)(b_points, b_starts, texts, points, int(a_starts[-1]))
    return points, starts


def _copy_texts(points, starts, texts, out, at):
    for t in texts:
        for i in range(starts[t], starts[t + 1]):
            out[at] = points[i]
            at += 1


def _check_layout(points, starts) -> None:
    # the compiled loops do not check bounds
    if starts[0] != 0 or starts[-1] > len(points) or np.any(np.diff(starts) < 0):
        raise ValueError("prediction offsets out of order")


def pair_arguments(rows: NeedleRows, predictions: tuple[np.ndarray, np.ndarray], pair_pred, pair_row) -> tuple:
    """The kernel's arguments but `out`, checked: every index in range (the compiled loop does not check bounds)."""
    points, starts = predictions
    pair_pred = np.ascontiguousarray(pair_pred, dtype=np.int64)
    pair_row = np.ascontiguousarray(pair_row, dtype=np.int64)
    if pair_pred.shape != pair_row.shape or pair_pred.ndim != 1:
        raise ValueError("pair_pred and pair_row must be 1-d and of one length")
    if len(pair_pred) and not (0 <= pair_pred.min() and pair_pred.max() < len(starts) - 1):
        raise ValueError("a pair names a prediction out of range")
    if len(pair_row) and not (0 <= pair_row.min() and pair_row.max() < len(rows)):
        raise ValueError("a pair names a row out of range")
    _check_layout(points, starts)
    return points, starts, pair_pred, pair_row, rows.codes, rows.weights, rows.start, rows.short, rows.common


def warm_up() -> None:
    """Compile (or load from the cache) the loops now, on tiny inputs of the real argument types, so the
    first submission does not wait for them: both layouts of points, the writable ones of `normalised_points`
    and the read-only UTF-32 buffer of `text_points` (numba compiles each apart). nale.warm_up adds the
    scripts' own loop."""
    rows = NeedleRows([(("abc", "é"), (0.5, 0.5))])
    layouts = (normalised_points(["abcé", "x y"]), text_points(["abcé", "x y"]))
    for points in layouts:
        recall_pairs(rows, points, [0], [0])
        for other in layouts:
            same_texts(points, other)
            appended(points, other, [1])
    grouped_order([0], 1)
