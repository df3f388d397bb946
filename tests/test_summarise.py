"""The shared summariser follows the UnitIndex's design: clusters move whole, strata weigh the same, NaN is left out."""

from __future__ import annotations

import numpy as np

from leaderboard.metrics import BootstrapPlan
from leaderboard.summarise import UnitIndex, summarise


def test_unequal_clusters_inside_strata_resample_whole_clusters():
    # stratum "x": clusters a (3 units), b (1), c (2); stratum "y": d (1), e (2)
    clusters = ["a", "a", "a", "b", "c", "c", "d", "e", "e"]
    strata = ["x"] * 6 + ["y"] * 3
    v = np.array([1.0, 0.0, 1.0, 0.5, 0.0, 0.25, 1.0, 0.0, 0.5])
    s = summarise(UnitIndex([str(i) for i in range(9)], clusters, strata), {"m": v}, np.ones(9, bool))
    assert np.isclose(s.overall["m"], np.mean([v[:6].mean(), v[6:].mean()]))
    # by hand: per stratum, per-cluster sums weighted by cluster sizes, clusters in order of first unit
    plan = BootstrapPlan.for_sizes((3, 2))
    want = plan.ci([np.array([2.0, 0.5, 0.25]), np.array([1.0, 0.5])], [np.array([3.0, 1, 2]), np.array([1.0, 2])])[0]
    assert np.allclose(s.ci["m"], want)


def test_equal_clusters_give_the_cluster_mean_bootstrap_and_nan_units_are_left_out():
    v = np.array([1.0, 0.0, 0.5, 0.5, np.nan, 1.0])
    answered = np.array([True, True, True, True, True, False])
    idx = UnitIndex(list("abcdef"), ["r1", "r1", "r2", "r2", "r3", "r3"], [""] * 6)
    s = summarise(
        idx,
        {"m": v, "full": np.nan_to_num(v)},
        answered,
        axes={"half": (np.array([0, 0, 0, 1, 1, 1]), ["first", "second", "none"])},
    )
    assert np.isclose(s.overall["m"], np.nanmean(v))
    # "full" has no gap: three clusters of two, resampled as cluster means
    want = BootstrapPlan.for_sizes((3,)).ci([np.array([0.5, 0.5, 0.5])])[0]
    assert np.allclose(s.ci["full"], want)
    # "m" lost one unit of r3: clusters of unequal size, weighted
    want = BootstrapPlan.for_sizes((3,)).ci([np.array([1.0, 1.0, 1.0])], [np.array([2.0, 2, 1])])[0]
    assert np.allclose(s.ci["m"], want)
    assert s.breakdowns["half"] == {"first": {"m": 0.5, "full": 0.5}, "second": {"m": 0.75, "full": 0.5}}
    assert np.isnan(s.units["m"][5]) and s.units["full"][0] == 1.0


def test_scope_keeps_only_covered_strata_and_nothing_scored_gives_none():
    idx = UnitIndex(list("abcd"), list("abcd"), ["s1", "s1", "s2", "s2"])
    v = np.array([1.0, 0.0, 1.0, 1.0])
    s = summarise(idx, {"m": v, "judged": np.full(4, np.nan)}, np.ones(4, bool), scope=np.array([True, True, False, False]))
    assert s.overall == {"m": 0.5, "judged": None} and "judged" not in s.ci
