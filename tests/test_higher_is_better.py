"""A lower-is-better metric ranks, bounds, sorts, fronts and compares the other way round (Metric.higher_is_better)."""

from __future__ import annotations

import numpy as np

from leaderboard.compare import compare_metric
from leaderboard.ranking import Entry, rank_upper_bound, table
from leaderboard.results import Summary
from leaderboard.summarise import UnitIndex
from leaderboard.tracks.base import Metric, SystemField, Track
from leaderboard.ui import figures


class ToyTrack(Track):
    """A toy declaration: an accuracy (higher is better) and a latency (lower is better), 40 questions."""

    name = "toy"
    title = "Toy"
    description = "Toy track for direction tests."
    metrics = (
        Metric("accuracy", "Accuracy", "Share right."),
        Metric("latency", "Latency", "Seconds per answer.", higher_is_better=False),
    )
    rank_by = "latency"
    axes = ()
    system_fields = (SystemField("name", "System", required=True),)

    def read_gold(self, path):
        raise FileNotFoundError(path)

    def gold_units(self, gold) -> int:
        return 40

    def validate(self, env, gold, problems):
        return None

    def fingerprint(self, parsed) -> str:
        return ""

    def score(self, parsed, gold, verdicts=None):
        raise NotImplementedError

    def units(self, gold, key: str) -> UnitIndex:
        ids = [f"q{i}" for i in range(40)]
        return UnitIndex(ids=ids, clusters=ids, strata=[""] * 40)

    def unit_of(self, record):
        return None


TOY = ToyTrack()


def entry(name: str, latency: float, low: float, high: float, accuracy: float) -> Entry:
    summary = Summary(
        track="toy",
        status="scored",
        system={"name": name},
        overall={"latency": latency, "accuracy": accuracy},
        ci={"latency": [low, high], "accuracy": [accuracy - 0.01, accuracy + 0.01]},
    )
    return Entry(id=name, path=f"{name}.json", summary=summary, status="scored", sha256=name)


ENTRIES = [entry("slow", 0.9, 0.85, 0.95, 0.9), entry("fast", 0.2, 0.15, 0.25, 0.5), entry("mid", 0.3, 0.1, 0.5, 0.7)]


def test_lowest_latency_ranks_first_and_sorts_first():
    df = table(TOY, ENTRIES)
    assert list(df["name"]) == ["fast", "mid", "slow"]
    assert list(df["rank"]) == [1, 2, 3]
    # mid's CI overlaps fast's, so mid may claim rank 1; slow is beaten beyond doubt by both
    assert list(df["rank_ub"]) == [1, 1, 3]


def test_a_higher_is_better_metric_of_the_same_track_still_ranks_descending():
    df = table(TOY, ENTRIES, rank_by="accuracy")
    assert list(df["name"]) == ["slow", "mid", "fast"] and list(df["rank"]) == [1, 2, 3]


def test_rank_upper_bound_lower_is_better():
    low, high = np.array([0.1, 0.3, 0.6]), np.array([0.2, 0.5, 0.7])
    assert rank_upper_bound(low, high, higher_is_better=False).tolist() == [1, 2, 3]
    assert rank_upper_bound(low, high).tolist() == [3, 2, 1]


def test_pareto_front_with_a_lower_is_better_axis():
    pts = [(0.0, 0.5), (0.5, 0.2), (0.5, 0.4), (0.9, 0.3)]
    # more x and less y are better: (0.5, 0.2) beats (0.5, 0.4) and (0.0, 0.5); nothing beats (0.9, 0.3)
    assert figures.pareto_front(pts, True, False) == [(0.5, 0.2), (0.9, 0.3)]
    # both higher-is-better (the default): the opposite choice along y
    assert figures.pareto_front(pts) == [(0.0, 0.5), (0.5, 0.4), (0.9, 0.3)]


def test_compare_names_the_better_system_by_the_metric_direction():
    rng = np.random.default_rng(0)
    a = rng.uniform(0.1, 0.2, 40)  # A is faster (lower latency) and, on accuracy, lower
    b = a + 0.3
    latency = compare_metric(TOY, None, "latency", a, b)
    accuracy = compare_metric(TOY, None, "accuracy", a, b)
    assert latency.significant and latency.diff < 0 and latency.better == "a"
    assert accuracy.significant and accuracy.diff < 0 and accuracy.better == "b"
    same = compare_metric(TOY, None, "latency", a, a)
    assert not same.significant and same.better is None
