"""Character 3-gram recall (Futurepedia), with and without normalisation."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from functools import lru_cache

import numpy as np


def normalise(text: str) -> str:
    """Unicode NFKC, casefold, whitespace runs collapsed to one space, stripped."""
    # split() and the regex's \s are the same Unicode whitespace set; split/join is the faster C path
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def normalise_many(texts: list[str]) -> list[str]:
    """[normalise(t) for t in texts], in a few C-level passes over one joined string.

    NUL separates the texts: it is a starter that composes with nothing, is not whitespace and has no case,
    so NFKC, casefold and whitespace collapsing never reach across it. A text holding NUL itself takes
    the one-by-one path.
    """
    joined = "\0".join(texts)
    if len(texts) < 2 or joined.count("\0") != len(texts) - 1:
        return list(map(normalise, texts))
    joined = unicodedata.normalize("NFKC", joined).casefold()
    # runs collapse across the whole string; a run touching a NUL leaves one space, which strip removes
    return list(map(str.strip, " ".join(joined.split()).split("\0")))


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


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: multiply, keep the top bits


class AnswerTable:
    """Gold answers as small integer codes, to score many (prediction, answer) pairs in a few numpy passes.

    A 3-gram occurs in a prediction exactly when the prediction's 3-gram set holds it, and a short
    answer (under 3 characters: the short-answer rule) occurs exactly when it is one of the
    prediction's 1- or 2-grams. So recall needs only set membership of integer codes: every gold
    character gets a small id, a gram packs its ids into one integer (shorter grams leave the top slots
    0, so they never equal a 3-gram), and a prediction gram holding a character outside the gold's
    alphabet can match nothing and is dropped.

    Answers come in groups (Futurepedia: one record's answers in every language), and a prediction is
    only ever paired with answers of one group, so each group's distinct codes get local ids 0..L-1.
    A static hash table (built once per gold) maps (group, code) to the local id; scoring a submission
    hashes every gram of every prediction once, marks a (prediction x local id) bit matrix, and reads
    each pair's recall off it: a part's grams each weigh 1 / (its grams x the parts), so a row's recall
    is the sum of the weights of its grams the prediction holds.
    """

    def __init__(self, answers: Sequence[tuple[PreparedPart, ...]], groups: Sequence[int]):
        grams_of = [[grams or ((text,) if text else ()) for text, grams in answer] for answer in answers]
        chars = sorted({c for parts in grams_of for grams in parts for gram in grams for c in gram})
        self.bits = max(len(chars).bit_length(), 1)  # bits of one character id (ids 1..len(chars))
        # code point -> id; code points past the largest gold character (and the spare last slot) map to 0
        self.char_id = np.zeros((ord(chars[-1]) if chars else 0) + 2, dtype=np.uint64)
        self.char_id[[ord(c) for c in chars]] = np.arange(1, len(chars) + 1, dtype=np.uint64)
        ids = {c: i + 1 for i, c in enumerate(chars)}
        # which characters start / end a 1- or 2-character answer: only those 1- and 2-grams are hashed
        self.short_one = np.zeros(len(chars) + 1, dtype=bool)
        self.short_first = np.zeros(len(chars) + 1, dtype=bool)
        self.short_second = np.zeros(len(chars) + 1, dtype=bool)
        self.groups = np.asarray(groups, dtype=np.int64)
        local: dict[int, dict[int, int]] = {}
        entries: list[int] = []
        weights: list[float] = []
        lengths: list[int] = []
        for answer_grams, group in zip(grams_of, groups):
            codes = local.setdefault(int(group), {})
            start = len(entries)
            for grams in answer_grams:
                for gram in grams:
                    code = 0
                    for c in gram:
                        code = (code << self.bits) | ids[c]
                    if len(gram) == 1:
                        self.short_one[ids[gram]] = True
                    elif len(gram) == 2:
                        self.short_first[ids[gram[0]]] = self.short_second[ids[gram[1]]] = True
                    entries.append(codes.setdefault(code, len(codes)))
                weights.extend([1 / (len(grams) * len(answer_grams))] * len(grams))
            lengths.append(len(entries) - start)
        self.entries = np.array(entries, dtype=np.int64)  # local id of each (row, gram)
        self.weights = np.array(weights, dtype=np.float64)
        self.row_len = np.array(lengths, dtype=np.int64)
        self.row_start = np.cumsum(self.row_len) - self.row_len
        self.width = max((len(c) for c in local.values()), default=0)  # local ids of the largest group
        self._build_hash({(g << (3 * self.bits)) | code: i for g, codes in local.items() for code, i in codes.items()})

    def _build_hash(self, local_ids: dict[int, int]) -> None:
        """Open addressing with linear probing, at most a quarter full: a missing key mostly meets an
        empty slot at once. `probes` is the longest run any key needed."""
        self.hash_bits = max((4 * len(local_ids)).bit_length(), 4)
        size = 1 << self.hash_bits
        self.slot_key = np.zeros(size, dtype=np.uint64)
        self.slot_value = np.full(size, -1, dtype=np.int64)  # -1: empty
        keys = np.fromiter(local_ids, dtype=np.uint64, count=len(local_ids))
        self.probes = 1
        for key, home in zip(local_ids.items(), self._home(keys).tolist()):
            slot, probes = home, 1
            while self.slot_value[slot] >= 0:
                slot, probes = (slot + 1) & (size - 1), probes + 1
            self.slot_key[slot], self.slot_value[slot] = key
            self.probes = max(self.probes, probes)

    def _home(self, keys: np.ndarray) -> np.ndarray:
        return (keys * _GOLDEN) >> np.uint64(64 - self.hash_bits)

    def _local_ids(self, keys: np.ndarray) -> np.ndarray:
        """Local id of each (group, code) key, -1 where the group's answers lack that code."""
        out = np.full(len(keys), -1, dtype=np.int64)
        active = np.arange(len(keys))
        slot = self._home(keys).astype(np.int64)
        mask = (1 << self.hash_bits) - 1
        for _ in range(self.probes):
            value = self.slot_value[slot]
            hit = (value >= 0) & (self.slot_key[slot] == keys[active])
            out[active[hit]] = value[hit]
            going_on = (value >= 0) & ~hit  # an empty slot ends the search: the key is absent
            active, slot = active[going_on], (slot[going_on] + 1) & mask
            if not len(active):
                break
        return out

    def __len__(self) -> int:
        return len(self.row_len)

    def recall(self, predictions: Sequence[str], group_of: np.ndarray, pred_of: np.ndarray, row_of: np.ndarray) -> np.ndarray:
        """Recall of row `row_of[e]` against prediction `pred_of[e]`, for every pair e.

        `predictions` are already normalised (as the answers were); prediction i belongs to group
        `group_of[i]`, and is only paired with rows of that group.
        """
        group_of = np.asarray(group_of, dtype=np.int64)
        pred_of = np.asarray(pred_of, dtype=np.int64)
        row_of = np.asarray(row_of, dtype=np.int64)
        if np.any(self.groups[row_of] != group_of[pred_of]):
            raise ValueError("a prediction is paired with an answer of another group")
        out = np.zeros(len(pred_of))
        # the bit matrix is predictions x local ids: at most ~64 MB of it at a time
        per_pass = max(1, (64 << 20) // max(self.width, 1))
        for first in range(0, len(predictions), per_pass):
            chosen = np.flatnonzero((pred_of >= first) & (pred_of < first + per_pass))
            if len(chosen):
                held = self._held(predictions[first : first + per_pass], group_of[first : first + per_pass])
                out[chosen] = self._pair_recalls(held, pred_of[chosen] - first, row_of[chosen])
        return out

    def _held(self, predictions: Sequence[str], group_of: np.ndarray) -> np.ndarray:
        """held[i, j]: prediction i holds local id j of its group."""
        held = np.zeros((len(predictions), self.width), dtype=bool)
        lengths = np.fromiter(map(len, predictions), dtype=np.int64, count=len(predictions))
        points = np.frombuffer("".join(predictions).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        ids = self.char_id[np.minimum(points, len(self.char_id) - 1)]
        owner = np.repeat(np.arange(len(predictions)), lengths)
        group_bits = np.uint64(3 * self.bits)
        shift = np.uint64(self.bits)
        tops = group_of.astype(np.uint64) << group_bits
        found_owner, found_keys = [], []
        n = len(ids)
        if n >= 3:  # 3-grams of gold characters inside one prediction
            a, b, c = ids[:-2], ids[1:-1], ids[2:]
            keep = np.flatnonzero((a > 0) & (b > 0) & (c > 0) & (owner[:-2] == owner[2:]))
            found_owner.append(owner[keep])
            found_keys.append(tops[owner[keep]] | (a[keep] << (np.uint64(2) * shift)) | (b[keep] << shift) | c[keep])
        if n >= 2 and self.short_first.any():
            a, b = ids[:-1], ids[1:]
            keep = np.flatnonzero(self.short_first[a] & self.short_second[b] & (owner[:-1] == owner[1:]))
            found_owner.append(owner[keep])
            found_keys.append(tops[owner[keep]] | (a[keep] << shift) | b[keep])
        if n and self.short_one.any():
            keep = np.flatnonzero(self.short_one[ids])
            found_owner.append(owner[keep])
            found_keys.append(tops[owner[keep]] | ids[keep])
        if found_keys:
            keys, owners = np.concatenate(found_keys), np.concatenate(found_owner)
            local = self._local_ids(keys)
            known = local >= 0
            held.ravel()[owners[known] * self.width + local[known]] = True  # flat indices: one pass
        return held

    def _pair_recalls(self, held: np.ndarray, pred_of: np.ndarray, row_of: np.ndarray) -> np.ndarray:
        counts = self.row_len[row_of]
        ends = np.cumsum(counts)
        entry = np.arange(ends[-1] if len(ends) else 0) + np.repeat(self.row_start[row_of] - (ends - counts), counts)
        hit = held.ravel()[np.repeat(pred_of * self.width, counts) + self.entries[entry]]
        # a missed gram adds 0.0, which leaves every sum exactly as the sum over the grams held
        return np.bincount(np.repeat(np.arange(len(row_of)), counts), weights=self.weights[entry] * hit, minlength=len(row_of))
