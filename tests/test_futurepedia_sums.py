"""futurepedia_official's column-at-a-time sums are numpy's own row sums and NaN means, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.metrics.compiled import available
from leaderboard.tracks import futurepedia_official
from leaderboard.tracks.futurepedia_official import _divisors, _levels, _nanmean, _replicate_levels, _row_sums, _sum_of, _variance


def _values(rng, shape) -> np.ndarray:
    """Values over many magnitudes, with signed zeros, NaN and infinities among them."""
    a = rng.standard_normal(shape) * 10.0 ** rng.integers(-12, 12, shape)
    u = rng.random(shape)
    a[u < 0.05] = -0.0
    a[(u >= 0.05) & (u < 0.1)] = 0.0
    a[(u >= 0.1) & (u < 0.12)] = np.nan
    a[(u >= 0.12) & (u < 0.125)] = np.inf
    return a


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    nan = np.isnan(a)
    return bool(np.array_equal(nan, np.isnan(b)) and np.array_equal(a[~nan].view(np.int64), b[~nan].view(np.int64)))


@pytest.mark.parametrize("width", [*range(0, 26), 31, 32, 33, 63, 64, 65, 127, 128, 129, 200])
def test_row_sums_are_numpys(width):
    rng = np.random.default_rng(width)
    for rows in (1, 63, 64, 1000):
        values = _values(rng, (rows, width))
        assert _same_bits(_row_sums(values), values.sum(axis=1)), (rows, width)


@pytest.mark.parametrize("shape", [(8,), (8, 7), (1000, 8), (1000, 8, 7), (1000, 8, 1), (3, 64, 9)])
def test_nanmean_is_numpys_arithmetic(shape):
    values = _values(np.random.default_rng(len(shape)), shape)
    ok = ~np.isnan(values)
    count = ok.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.where(count > 0, np.where(ok, values, 0.0).sum(axis=-1) / np.maximum(count, 1), np.nan)
    assert _same_bits(_nanmean(values), expected)


@pytest.mark.parametrize("n", [*range(1, 26), 64, 127, 128, 129, 300])
def test_python_sums_and_variances_are_numpys(n):
    rng = np.random.default_rng(100 + n)
    for _ in range(200):
        values = _values(rng, n).tolist()
        assert _same_bits(np.array([_sum_of(values)]), np.array([np.add.reduce(np.array(values))]))
        finite = [v for v in values if np.isfinite(v)] or [1.0]
        with np.errstate(invalid="ignore", over="ignore"):
            assert _same_bits(np.array([_variance(finite)]), np.array([np.var(finite)]))


@pytest.mark.parametrize("per_query", [1, 7])
def test_levels_are_the_arrays_levels(per_query):
    rng = np.random.default_rng(per_query)
    for _ in range(300):
        cells = 8 * per_query
        num = _values(rng, cells)
        den = rng.integers(0, 3, cells).astype(np.float64)
        counted = rng.integers(0, 2, cells).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where((den > 0) & (counted > 0), num / den, np.nan)
        per_lang = _nanmean(ratio.reshape(8, per_query))
        got = _levels(num.tolist(), _divisors(den, counted), per_query)
        assert _same_bits(np.array(got[0]), ratio) and _same_bits(np.array(got[1]), per_lang)
        assert _same_bits(np.array([got[2]]), np.array([_nanmean(per_lang)]))


@pytest.mark.skipif(not available(), reason="numba is not installed")
@pytest.mark.parametrize("per_query", [1, 7])
def test_compiled_replicate_levels_are_the_arrays(per_query, monkeypatch):
    rng = np.random.default_rng(7 + per_query)
    cells = 8 * per_query
    num = _values(rng, (1000, cells))
    den = rng.integers(0, 3, (1000, cells)).astype(np.float64)
    den[rng.random((1000, cells)) < 0.3] = 0.0
    den[:5] = 0.0  # replicates without any cell
    den[5:10, per_query:] = 0.0  # one language only
    counted = rng.integers(0, 2, cells).astype(np.float64)
    counted[:per_query] = 1.0
    compiled = _replicate_levels(num, den, counted, per_query)
    monkeypatch.setattr(futurepedia_official, "available", lambda: False)
    assert _same_bits(compiled, _replicate_levels(num, den, counted, per_query))


def test_resampled_denominators_are_the_product_of_their_own_table():
    from types import SimpleNamespace

    from leaderboard.tracks.futurepedia_official import _RESAMPLED_KEPT, _resampled_denominators

    gold = SimpleNamespace(protocol_cache={})
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 4, (50, 20)).astype(np.float64)
    tables = [rng.integers(0, 3, (20, 7)).astype(np.float64) for _ in range(_RESAMPLED_KEPT + 2)]
    for _ in range(2):  # computed, then found again (the oldest dropped and computed anew)
        for den in tables:
            assert _same_bits(_resampled_denominators(gold, "crosslingual", counts, den.copy()), counts @ den)
    assert len(gold.protocol_cache[("resampled denominators", "crosslingual")]) == _RESAMPLED_KEPT


@pytest.mark.skipif(not available(), reason="numba is not installed")
@pytest.mark.parametrize("width", [1, 3, 7, 8, 9, 17, 40])
def test_compiled_cross_sums_are_the_arrays(width, monkeypatch):
    from types import SimpleNamespace

    from leaderboard.tracks.futurepedia_official import _part_sums

    rng = np.random.default_rng(width)
    count = 300
    strict_parts = rng.integers(0, width + 1, count)
    other_parts = rng.integers(0, width + 1, count)
    group = np.repeat(np.arange(count), strict_parts + other_parts)
    slot = np.concatenate([np.repeat([0, 1], [a, b]) for a, b in zip(strict_parts, other_parts)]).astype(np.int64)
    position = np.concatenate([np.r_[np.arange(a), np.arange(b)] for a, b in zip(strict_parts, other_parts)]).astype(np.int64)
    recall = _values(rng, len(group))
    pairs = SimpleNamespace(
        ks=np.arange(count),
        group=group,
        slot=slot,
        position=position,
        recall=recall,
        strict_parts=strict_parts,
        other_parts=other_parts,
    )
    compiled = _part_sums("crosslingual", pairs)
    monkeypatch.setattr(futurepedia_official, "available", lambda: False)
    arrays = _part_sums("crosslingual", pairs)
    assert all(_same_bits(a, b) for a, b in zip(compiled, arrays))


@pytest.mark.parametrize("n", [1, 2, 3, 40, 999, 1000, 1001])
def test_interval_is_stats_percentiles(n):
    from leaderboard.metrics.stats import percentiles
    from leaderboard.tracks.futurepedia_official import _interval

    rng = np.random.default_rng(n)
    for _ in range(50):
        reps = rng.standard_normal(n) * 10.0 ** rng.integers(-5, 5)
        reps[rng.random(n) < 0.1] = 0.25  # ties
        assert _same_bits(np.array(_interval(reps)), percentiles(reps, (2.5, 97.5)))
