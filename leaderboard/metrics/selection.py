"""Selection entropy (Futurepedia): language bias when documents disagree."""

from __future__ import annotations

import math
from collections.abc import Sequence


def selection_entropy(support: Sequence[float]) -> tuple[float, float, list[float]]:
    """(SE, normalised SE, shares p(d)) from the per-document support f(d).

    p(d) = f(d) / sum f; SE = -sum p ln p; 0 (and all shares 0) when sum f is 0;
    normalised SE = SE / ln(number of documents), in [0, 1].
    """
    if len(support) < 2:
        raise ValueError("selection needs at least two documents")
    total = float(sum(support))
    if total <= 0:
        return 0.0, 0.0, [0.0] * len(support)
    shares = [f / total for f in support]
    se = -sum(p * math.log(p) for p in shares if p > 0)
    return se, se / math.log(len(support)), shares
