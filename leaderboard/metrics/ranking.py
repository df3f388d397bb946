"""nDCG@k with trec_eval conventions (graded linear gains, ties by doc id descending)."""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence

import numpy as np

# log2(rank + 1) for ranks 1..100, computed once.
_DISCOUNT = [1.0 / math.log2(r + 2) for r in range(100)]


def _discount(i: int) -> float:
    return _DISCOUNT[i] if i < len(_DISCOUNT) else 1.0 / math.log2(i + 2)


def ideal_dcg(grades: Mapping[str, float], k: int) -> float:
    gains = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    return sum(g * _discount(i) for i, g in enumerate(gains))


def ndcg_at_k(docs: Sequence[str], scores: Sequence[float], grades: Mapping[str, float], k: int = 5) -> float:
    """nDCG@k of one ranking against graded relevance.

    Documents are ordered by score descending, ties broken by doc id descending
    (trec_eval's order: tuple comparison on (score, doc) reversed does exactly
    that); gain is the grade itself (grades <= 0 gain nothing); discount
    log2(rank + 1); the ideal DCG uses the gold grades sorted, cut at k.
    A query with no relevant document has no nDCG: callers exclude it.
    """
    idcg = ideal_dcg(grades, k)
    if idcg == 0:
        raise ValueError("nDCG is undefined for a query without relevant documents")
    top = heapq.nlargest(k, zip(scores, docs))
    dcg = 0.0
    for i, (_, doc) in enumerate(top):
        g = grades.get(doc, 0)
        if g > 0:
            dcg += g * _discount(i)
    return dcg / idcg


def ndcg_at_k_many(
    scores: np.ndarray,
    docs: Sequence[str],
    lens: np.ndarray,
    grades: Sequence[Mapping[str, float]],
    idcg: np.ndarray,
    k: int = 5,
) -> np.ndarray:
    """nDCG@k of many rankings at once, identical to `ndcg_at_k` on each.

    Rankings are flat (`scores`, `docs`, `lens` per ranking). The top k of every
    ranking comes from one `argpartition` over a padded score matrix; a ranking
    whose order near the cut depends on a tie (where trec_eval breaks ties by
    doc id) goes through `ndcg_at_k` instead, so ties are always exact.
    """
    n = len(lens)
    out = np.zeros(n)
    if n == 0:
        return out
    width = max(int(lens.max()), k)
    starts = np.cumsum(lens) - lens
    rows = np.repeat(np.arange(n), lens)
    cols = np.arange(len(scores)) - np.repeat(starts, lens)
    mat = np.full((n, width), -np.inf)
    mat[rows, cols] = scores
    top = np.argpartition(-mat, k - 1, axis=1)[:, :k]
    top_scores = np.take_along_axis(mat, top, axis=1)
    order = np.argsort(-top_scores, axis=1, kind="stable")
    top = np.take_along_axis(top, order, axis=1)
    top_scores = np.take_along_axis(top_scores, order, axis=1)
    kth = top_scores[:, -1]
    # ties inside the top k, or a tie at the cut (more than k scores >= the k-th): exact path
    with np.errstate(invalid="ignore"):  # -inf padding: -inf - -inf is NaN, never a tie
        tied = (np.diff(top_scores, axis=1) == 0).any(axis=1) | ((mat >= kth[:, None]).sum(axis=1) > k)
    discount = np.array([_discount(i) for i in range(k)])
    flat_top = (starts[:, None] + top).tolist()
    valid = np.isfinite(top_scores)
    for q in range(n):
        if tied[q]:
            s, e = starts[q], starts[q] + lens[q]
            out[q] = ndcg_at_k(docs[s:e], scores[s:e].tolist(), grades[q], k)
            continue
        g = grades[q]
        dcg = 0.0
        for i, pos in enumerate(flat_top[q]):
            if valid[q, i]:
                gain = g.get(docs[pos], 0)
                if gain > 0:
                    dcg += gain * discount[i]
        out[q] = dcg / idcg[q]
    return out
