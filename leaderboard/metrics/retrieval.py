"""Precision@k / Recall@k with (doc, page-range) overlap matching (UniDoc-Bench)."""

from __future__ import annotations

from collections.abc import Sequence

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
