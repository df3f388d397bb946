"""Completeness and faithfulness of one judge verdict (unidoc track, SCORING.md).

Pure functions over a verdict (a `leaderboard.judge.Verdict` or its JSON dict):

- completeness = share of the gold answer's claims (those that answer the
  question) the response states;
- faithfulness = share of the response's claims (those that answer the question)
  supported by the gold answer plus the gold evidence facts; 0.0 when the
  response makes no such claim.

A judge failure, or a verdict whose lists do not line up, gives None: not scored
and counted as a failure by the caller, never a guessed number.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np


def _get(verdict: Any, key: str) -> Any:
    return verdict[key] if isinstance(verdict, Mapping) else getattr(verdict, key)


def is_failure(verdict: Any) -> bool:
    return _get(verdict, "failure") is not None


def _flags(verdict: Any, facts_key: str, flags_key: str) -> list[bool] | None:
    facts, flags = _get(verdict, facts_key), _get(verdict, flags_key)
    if len(facts) != len(flags) or not all(isinstance(f, bool) for f in flags):
        return None
    return list(flags)


def completeness(verdict: Any) -> float | None:
    if is_failure(verdict):
        return None
    flags = _flags(verdict, "gold_facts", "gold_fact_supported")
    if not flags:  # no gold fact: nothing to be complete about, so no score
        return None
    return sum(flags) / len(flags)


def faithfulness(verdict: Any) -> float | None:
    if is_failure(verdict):
        return None
    flags = _flags(verdict, "response_facts", "response_fact_supported")
    if flags is None:
        return None
    return sum(flags) / len(flags) if flags else 0.0


def judged_scores(verdict: Any) -> dict[str, float] | None:
    """{"completeness", "faithfulness"} of one verdict, or None when it cannot be scored."""
    c, f = completeness(verdict), faithfulness(verdict)
    if c is None or f is None:
        return None
    return {"completeness": c, "faithfulness": f}


JUDGED_KEYS = ("completeness", "faithfulness")


def judged_units(n: int, answered: Iterable[tuple[int, str]], verdicts: Mapping[str, Any]) -> tuple[dict[str, np.ndarray], int]:
    """Per-unit completeness and faithfulness of any judged track, and the number of judge failures.

    `answered` holds (position in the unit index, unit id) of every answer the judge saw. A unit
    without an answer scores 0; a failed or unusable verdict gives NaN (left out of every mean and
    CI, never guessed).
    """
    out = {k: np.zeros(n) for k in JUDGED_KEYS}
    failures = 0
    for pos, unit in answered:
        verdict = verdicts.get(unit)
        scores = judged_scores(verdict) if verdict is not None else None
        if scores is None:
            failures += 1
            for k in JUDGED_KEYS:
                out[k][pos] = np.nan
        else:
            for k in JUDGED_KEYS:
                out[k][pos] = scores[k]
    return out, failures
