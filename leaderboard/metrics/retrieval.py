"""Precision@k / Recall@k over gold pages (UniDoc-Bench), in the board's protocol and the script's.

A candidate is `(doc, first page, last page, modality)`, or the same with its own `id` as a fifth
element. The gold of a question is a set of (doc, page) pairs.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from .compiled import available, compiled

Candidate = tuple  # (doc, first, last, modality) or (doc, first, last, modality, id)


def same_candidate(a: Candidate, b: Candidate) -> bool:
    """Both carry an id: the ids decide; either lacks one: doc, pages and modality decide."""
    if len(a) == 5 and len(b) == 5:
        return a[4] == b[4]
    return a[:4] == b[:4]


def repeat_flags(candidates: Sequence[Candidate]) -> list[bool]:
    """Per candidate: whether it is the same candidate as an earlier one of the list."""
    ids: set = set()
    keys: set = set()  # every earlier candidate's (doc, first, last, modality)
    keys_without_id: set = set()
    out = []
    for c in candidates:
        key = c[:4]
        if len(c) == 5:
            out.append(c[4] in ids or key in keys_without_id)
            ids.add(c[4])
        else:
            out.append(key in keys)
            keys_without_id.add(key)
        keys.add(key)
    return out


def page_precision_recall(
    candidates: Sequence[Candidate],
    gold_pages: Collection[tuple[str, int]],
    k: int = 10,
    *,
    repeats_count_once: bool = True,
    precision_over_k: bool = True,
) -> tuple[float, float]:
    """Precision@k and Recall@k of one ranked candidate list, walked in rank order over its first k.

    A candidate is a hit when one of its pages is a gold page of its doc, and covers the gold pages it
    shares that no earlier candidate covered. With `repeats_count_once`, a candidate that is the same
    as an earlier one is a miss and covers nothing (the script counts every copy). Precision divides by
    k, or with `precision_over_k` off by the number of candidates walked (the script's rule; an empty
    list then has no precision: NaN). Recall = covered gold pages / gold pages.
    """
    gold = set(gold_pages)
    if not gold:
        raise ValueError("a question needs at least one gold page")
    top = list(candidates[:k])
    repeated = repeat_flags(top) if repeats_count_once else [False] * len(top)
    covered: set = set()
    hits = 0
    for c, rep in zip(top, repeated):
        if rep:
            continue
        shared = {(d, p) for d, p in gold if d == c[0] and c[1] <= p <= c[2]}
        hits += bool(shared)
        covered |= shared
    denominator = k if precision_over_k else len(top)
    precision = hits / denominator if denominator else float("nan")
    return precision, len(covered) / len(gold)


def page_hits_batch(
    cand_q: np.ndarray,
    cand_doc: np.ndarray,
    cand_start: np.ndarray,
    cand_end: np.ndarray,
    cand_miss: np.ndarray,
    gold_doc: np.ndarray,
    gold_page: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(hits, covered gold pages) per question, for many questions at once (the rules above).

    Candidates are flat arrays, already cut to the first k of each list, `cand_q` the question row of
    each; docs are integer codes (-1 for a doc not in the gold); `cand_miss` marks candidates that count
    as misses whatever their pages (repeats, in the board's protocol). Gold pages are (questions, G)
    arrays, padded with doc -2. One (candidates, G) comparison replaces a loop per question; a page is
    covered when any candidate shares it, which is the walk's count, since the order only decides who
    covers it first.
    """
    if available():  # else the array form below: the same numbers
        kernel = compiled(_page_hits)
        n_q = gold_doc.shape[0]
        if len(cand_q) and not (0 <= cand_q.min() and cand_q.max() < n_q):
            raise ValueError("a candidate names a question out of range")  # the compiled loop checks no bounds
        hits = np.zeros(n_q)
        covered = np.zeros(gold_doc.shape, dtype=np.bool_)
        args = (cand_q, cand_doc, cand_start, cand_end, cand_miss, gold_doc, gold_page)
        kernel(*(np.ascontiguousarray(a) for a in args), hits, covered)
        return hits, covered.sum(axis=1)
    gd, gp = gold_doc[cand_q], gold_page[cand_q]
    match = (cand_doc[:, None] == gd) & (cand_start[:, None] <= gp) & (gp <= cand_end[:, None])
    match &= ~cand_miss[:, None]
    n_q, g = gold_doc.shape
    hits = np.bincount(cand_q, weights=match.any(axis=1), minlength=n_q)
    covered = np.zeros((n_q, g), dtype=bool)
    rows, cols = np.nonzero(match)
    covered[cand_q[rows], cols] = True
    return hits, covered.sum(axis=1)


def _page_hits(cand_q, cand_doc, cand_start, cand_end, cand_miss, gold_doc, gold_page, hits, covered):
    """page_hits_batch's loop, one candidate at a time over its question's gold pages (no (candidates, G) arrays)."""
    for c in range(len(cand_q)):
        if cand_miss[c]:
            continue
        q = cand_q[c]
        hit = False
        for j in range(gold_doc.shape[1]):
            if gold_doc[q, j] == cand_doc[c] and cand_start[c] <= gold_page[q, j] <= cand_end[c]:
                hit = True
                covered[q, j] = True
        if hit:
            hits[q] += 1.0
