"""Bootstrap confidence intervals and a paired significance test.

Resampling plans depend only on the number of units, the number of resamples
and the seed, never on the scores, so one plan serves every submission of a
track: a CI is then a matrix product, not 1,000 Python-level resamples.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache

import numpy as np

from .compiled import available, compiled

RESAMPLES = 1000
SEED = 0


def _counts(rng: np.random.Generator, n: int, resamples: int) -> np.ndarray:
    """(resamples, n) matrix: how often each unit is drawn in each resample."""
    idx = rng.integers(0, n, size=(resamples, n))
    flat = (idx + np.arange(resamples)[:, None] * n).ravel()
    return np.bincount(flat, minlength=resamples * n).reshape(resamples, n).astype(np.float64)


@cache
def _blas_libraries() -> list:
    from threadpoolctl import ThreadpoolController  # the BLAS libraries numpy loaded, found once per process

    return [lib for lib in ThreadpoolController().lib_controllers if lib.user_api == "blas"]


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the enclosed matrix products on one BLAS thread (the same numbers: each output element is one
    thread's dot product either way). A bootstrap product (1,000 resamples x a few thousand units x a few
    metrics) takes about a millisecond on one core; woken for it, the BLAS worker threads then spin for
    their timeout, burning the other core of a small shared machine for as long as the scoring itself."""
    libraries = _blas_libraries()
    before = [lib.num_threads for lib in libraries]
    for lib in libraries:
        lib.set_num_threads(1)
    try:
        yield
    finally:
        for lib, threads in zip(libraries, before):
            lib.set_num_threads(threads)


@dataclass(frozen=True)
class BootstrapPlan:
    """Percentile bootstrap over strata (one stratum = plain resampling).

    Each stratum (a VDR dataset, or the whole unit set) is resampled on its
    own; a replicate's statistic is the mean over strata of the stratum means,
    so every stratum weighs the same, as the headline number does.
    """

    strata: tuple[np.ndarray, ...]

    @classmethod
    def for_sizes(cls, sizes: tuple[int, ...], resamples: int = RESAMPLES, seed: int = SEED) -> BootstrapPlan:
        return _plan(tuple(int(s) for s in sizes), resamples, seed)

    @property
    def resamples(self) -> int:
        return self.strata[0].shape[0]

    @cached_property
    def drawn(self) -> tuple[np.ndarray, ...]:
        """Per stratum and resample, how many units it draws (the denominator of an unweighted mean)."""
        return tuple(counts.sum(axis=1) for counts in self.strata)

    @cached_property
    def small(self) -> tuple[np.ndarray, ...] | None:
        """The counts as bytes (a unit is drawn far fewer than 256 times in any real resample), for the compiled
        product: an eighth of the memory to stream per product; None when a count does not fit (then BLAS)."""
        if max(int(c.max(initial=0)) for c in self.strata) > 255:
            return None
        return tuple(np.ascontiguousarray(c, dtype=np.uint8) for c in self.strata)

    def replicates(self, values: list[np.ndarray], weights: list[np.ndarray] | None = None) -> np.ndarray:
        """Replicate statistics, shape (resamples, metrics).

        `values[s]` is (n_s, metrics): per-unit scores, or per-cluster sums when
        `weights[s]` (n_s,) holds the cluster sizes (the mean is then the
        resampled sum over the resampled size, i.e. all units of a cluster move
        together).
        """
        if len(values) != len(self.strata):
            raise ValueError("one value matrix per stratum")
        out = None
        product = self._compiled_product() or self._blas_product
        for s in range(len(self.strata)):
            v = np.asarray(values[s], dtype=np.float64)
            if v.ndim == 1:
                v = v[:, None]
            num = product(s, v)
            den = product(s, np.asarray(weights[s], dtype=np.float64)[:, None])[:, 0] if weights is not None else self.drawn[s]
            means = num / np.maximum(den, 1e-300)[:, None]
            out = means if out is None else out + means
        return out / len(self.strata)

    def _compiled_product(self):
        """counts @ v of stratum s by the compiled loop over the byte counts, or None (no numba, or a count
        over 255): each metric's column is its own sum in a fixed order, so a column's numbers do not depend
        on the columns beside it (BLAS may pick another kernel for another width)."""
        small = self.small
        if small is None or not available():  # BLAS then: interpreted, the loop would crawl
            return None
        # reassociated sums: vectorised, ~4x faster than BLAS on the 8x larger float counts it would read
        kernel = compiled(_counts_times, frozenset({"reassoc", "contract"}))

        def product(s: int, v: np.ndarray) -> np.ndarray:
            out = np.empty((small[s].shape[0], v.shape[1]))
            kernel(small[s], np.ascontiguousarray(v.T), out)
            return out

        return product

    def _blas_product(self, s: int, v: np.ndarray) -> np.ndarray:
        with one_blas_thread():
            return self.strata[s] @ v

    def ci(self, values, weights=None, level: float = 0.95) -> np.ndarray:
        """(metrics, 2) array of [low, high] percentile intervals."""
        reps = self.replicates(values, weights)
        alpha = (1 - level) / 2 * 100
        return percentiles(reps, (alpha, 100 - alpha)).T


def percentiles(reps: np.ndarray, qs: tuple[float, ...]) -> np.ndarray:
    """np.percentile(reps, qs, axis=0) (the default linear method, the same arithmetic: the same bits) with
    one partition at the few ranks needed instead of numpy's general machinery; anything not finite is left to
    numpy itself."""
    n = reps.shape[0]
    if n < 2 or not np.isfinite(reps).all():
        return np.percentile(reps, list(qs), axis=0)
    virtual = (n - 1) * (np.asarray(qs, dtype=np.float64) / 100)
    below = np.floor(virtual).astype(np.intp)
    above = np.minimum(below + 1, n - 1)
    part = np.partition(reps, np.unique(np.concatenate([below, above])), axis=0)
    a, b = part[below], part[above]
    gamma = (virtual - below).reshape(-1, *(1,) * (reps.ndim - 1))
    diff = b - a
    return np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)


def _counts_times(counts, values_t, out):  # out[i, k] = sum over j of counts[i, j] * values_t[k, j]
    rows, n = counts.shape
    for i in range(rows):
        for k in range(values_t.shape[0]):
            acc = 0.0
            for j in range(n):
                acc += counts[i, j] * values_t[k, j]
            out[i, k] = acc


@lru_cache(maxsize=64)
def _plan(sizes: tuple[int, ...], resamples: int, seed: int) -> BootstrapPlan:
    if not sizes or min(sizes) < 1:
        raise ValueError("every stratum needs at least one unit")
    rng = np.random.default_rng(seed)
    return BootstrapPlan(tuple(_counts(rng, n, resamples) for n in sizes))


@dataclass(frozen=True)
class PairedResult:
    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci: tuple[float, float]
    p_value: float
    significant: bool


def paired_test(
    a: list[np.ndarray],
    b: list[np.ndarray],
    weights: list[np.ndarray] | None = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> PairedResult:
    """Paired bootstrap of mean(A) - mean(B) over the units both systems answered.

    `a[s]`, `b[s]` are aligned per-unit (or per-cluster sum) vectors for stratum s.
    Significant at 95% when the percentile CI of the difference excludes 0; the
    two-sided p-value is twice the smaller tail share of replicates at 0.
    """
    diffs = [np.asarray(x, float) - np.asarray(y, float) for x, y in zip(a, b)]
    plan = BootstrapPlan.for_sizes(tuple(len(d) for d in diffs), resamples, seed)
    reps = plan.replicates(diffs, weights)[:, 0]

    def point(vals: list[np.ndarray]) -> float:
        if weights is None:
            return float(np.mean([np.mean(v) for v in vals]))
        return float(np.mean([np.sum(v) / np.sum(w) for v, w in zip(vals, weights)]))

    mean_a, mean_b = point([np.asarray(x, float) for x in a]), point([np.asarray(y, float) for y in b])
    low, high = np.percentile(reps, [2.5, 97.5])
    tail = min(np.mean(reps <= 0), np.mean(reps >= 0))
    p = float(min(1.0, 2 * tail))
    return PairedResult(
        n=int(sum(len(d) for d in diffs)),
        mean_a=mean_a,
        mean_b=mean_b,
        diff=mean_a - mean_b,
        ci=(float(low), float(high)),
        p_value=p,
        significant=bool(low > 0 or high < 0),
    )
