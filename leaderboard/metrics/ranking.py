"""nDCG@k with trec_eval conventions (graded linear gains, ties by doc id descending)."""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence

# log2(rank + 1) for ranks 1..100, computed once.
_DISCOUNT = [1.0 / math.log2(r + 2) for r in range(100)]


def _discount(i: int) -> float:
    return _DISCOUNT[i] if i < len(_DISCOUNT) else 1.0 / math.log2(i + 2)


def ideal_dcg(grades: Mapping[str, float], k: int) -> float:
    gains = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    return sum(g * _discount(i) for i, g in enumerate(gains))


def ndcg_at_k(
    docs: Sequence[str], scores: Sequence[float], grades: Mapping[str, float], k: int = 5
) -> float:
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


def ndcg_at_k_batch(
    rankings: Mapping[str, tuple[Sequence[str], Sequence[float]]],
    qrels: Mapping[str, Mapping[str, float]],
    k: int = 5,
) -> dict[str, float]:
    """nDCG@k for every judged query of `qrels`; a query without ranking scores 0."""
    out: dict[str, float] = {}
    for qid, grades in qrels.items():
        if ideal_dcg(grades, k) == 0:
            continue
        ranking = rankings.get(qid)
        out[qid] = ndcg_at_k(ranking[0], ranking[1], grades, k) if ranking else 0.0
    return out
