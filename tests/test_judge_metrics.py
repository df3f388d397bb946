"""completeness / faithfulness computed from verdicts exactly as SCORING.md defines them."""

from __future__ import annotations

import json

import pytest

from leaderboard.judge import Verdict
from leaderboard.metrics.judged import (
    completeness,
    faithfulness,
    is_failure,
    judged_scores,
)


def verdict(gold: list[bool], resp: list[bool], failure: str | None = None) -> Verdict:
    return Verdict(
        judge="openai:m",
        judge_model="m",
        prompt_version="v",
        qid="finance-0007",
        response_sha256="0" * 64,
        gold_facts=[f"g{i}" for i in range(len(gold))],
        gold_fact_supported=gold,
        response_facts=[f"r{i}" for i in range(len(resp))],
        response_fact_supported=resp,
        failure=failure,
    )


@pytest.mark.parametrize(
    "gold, resp, c, f",
    [
        ([True, False, False], [True, False], 1 / 3, 1 / 2),
        ([True, True], [True, True, True], 1.0, 1.0),
        ([False, False, False, False], [False], 0.0, 0.0),
        ([True, False, True, True], [], 3 / 4, 0.0),  # no extractable response fact: faithfulness 0
    ],
)
def test_scores_are_shares_of_facts(gold, resp, c, f):
    v = verdict(gold, resp)
    assert completeness(v) == pytest.approx(c) and faithfulness(v) == pytest.approx(f)
    as_json = json.loads(json.dumps(v.to_dict()))  # the cached / published form scores the same
    assert judged_scores(as_json) == {"completeness": pytest.approx(c), "faithfulness": pytest.approx(f)}


def test_a_judge_failure_is_never_a_number():
    v = verdict([True], [True], failure="malformed reply after 3 attempts")
    assert is_failure(v)
    assert completeness(v) is None and faithfulness(v) is None and judged_scores(v) is None


def test_inconsistent_verdicts_are_not_scored():
    v = verdict([True, False], [True])
    v.gold_fact_supported = [True]  # lists no longer line up
    assert completeness(v) is None and judged_scores(v) is None
    assert faithfulness(v) == 1.0
    assert completeness(verdict([], [True])) is None  # no gold fact: nothing to measure


def test_verdict_from_dict_is_strict():
    good = verdict([True], [False]).to_dict()
    assert Verdict.from_dict(good) == verdict([True], [False])
    for key, bad in [("gold_fact_supported", [1]), ("calls", True), ("failure", 3), ("qid", None)]:
        with pytest.raises(ValueError):
            Verdict.from_dict({**good, key: bad})
    with pytest.raises(ValueError):
        Verdict.from_dict({k: v for k, v in good.items() if k != "response_facts"})
