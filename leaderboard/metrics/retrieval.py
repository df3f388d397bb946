"""Precision@k / Recall@k with (doc, page-range) overlap matching (UniDoc-Bench)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# A context or a candidate: (doc id, first page, last page), pages inclusive.
Span = tuple[str, int, int]


def page_overlap_precision_recall(
    candidates: Sequence[tuple[str, int, int, str | None]],
    gold: Sequence[Span],
    k: int = 10,
) -> tuple[float, float]:
    """Precision@k and Recall@k of one ranked candidate list.

    A candidate hits when it shares the doc and at least one page with any gold
    context (partial overlap counts, as in the paper). A candidate repeating an
    earlier one (same doc, pages and modality) is a miss, so padding a list with
    copies earns nothing. Precision divides by k, not by the list length, so a
    short list is not rewarded. Identical gold contexts count once.
    """
    gold_set = list(dict.fromkeys(gold))
    if not gold_set:
        raise ValueError("a question needs at least one gold context")
    seen: set[tuple[str, int, int, str | None]] = set()
    hits = 0
    covered = [False] * len(gold_set)
    for cand in candidates[:k]:
        if cand in seen:
            continue
        seen.add(cand)
        doc, start, end, _ = cand
        hit = False
        for j, (gdoc, gstart, gend) in enumerate(gold_set):
            if gdoc == doc and start <= gend and gstart <= end:
                hit = True
                covered[j] = True
        hits += hit
    return hits / k, sum(covered) / len(gold_set)


def page_overlap_batch(
    cand_q: np.ndarray,
    cand_doc: np.ndarray,
    cand_start: np.ndarray,
    cand_end: np.ndarray,
    cand_repeat: np.ndarray,
    gold_doc: np.ndarray,
    gold_start: np.ndarray,
    gold_end: np.ndarray,
    n_gold: np.ndarray,
    k: int = 10,
) -> tuple[np.ndarray, np.ndarray]:
    """Precision@k and Recall@k of many questions at once (the same rules as above).

    Candidates are flat arrays (already cut to the first k of each list) with
    `cand_q` the question row of each; docs are integer codes (-1 for a doc
    not in the gold). Gold contexts are (questions, G) arrays padded with doc
    -2; `n_gold` counts the distinct contexts per question. One (candidates, G)
    comparison replaces a Python loop per question.
    """
    gd, gs, ge = gold_doc[cand_q], gold_start[cand_q], gold_end[cand_q]
    match = (cand_doc[:, None] == gd) & (cand_start[:, None] <= ge) & (gs <= cand_end[:, None])
    match &= ~cand_repeat[:, None]
    n_q, g = gold_doc.shape
    hits = np.bincount(cand_q, weights=match.any(axis=1), minlength=n_q)
    covered = np.zeros((n_q, g), dtype=bool)
    rows, cols = np.nonzero(match)
    covered[cand_q[rows], cols] = True
    return hits / k, covered.sum(axis=1) / np.maximum(n_gold, 1)
