"""From per-unit scores to a submission's numbers: one function for every track.

A track computes one score per gold unit and metric (0 where the system gave
nothing, NaN where a unit could not be scored, e.g. a judge failure) and
declares the resampling design in its `UnitIndex`: units of one cluster are
resampled together, strata are resampled separately and weigh the same.
`summarise` turns that into the overall values, bootstrap CIs, breakdowns and
the per-unit arrays a comparison reads, so no track writes its own
score-and-CI block.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .metrics import BootstrapPlan


@dataclass
class UnitIndex:
    """The canonical order of a metric's gold units; per-unit arrays align with it."""

    ids: list[str]
    clusters: list  # resampled together (futurepedia: the record id)
    strata: list[str]  # resampled separately, then averaged (vdr: the dataset)

    @cached_property
    def codes(self) -> tuple[np.ndarray, np.ndarray]:
        """(stratum, cluster) code per unit, numbered in order of first appearance: the bootstrap's order."""
        return first_appearance_codes(self.strata), first_appearance_codes(self.clusters)

    @cached_property
    def layouts(self) -> dict:
        """The bootstrap layouts `summarise` made over this index, by packed mask of scored units (`_layout`)."""
        return {}


def first_appearance_codes(labels) -> np.ndarray:
    pos: dict = {}
    return np.fromiter((pos.setdefault(x, len(pos)) for x in labels), dtype=np.int64, count=len(labels))


@dataclass
class Summarised:
    """Per-unit scores summarised along one unit index: what a track's scorer builds its Scores from (a stored
    result is results.Summary)."""

    overall: dict[str, float | None] = field(default_factory=dict)
    ci: dict[str, list[float]] = field(default_factory=dict)
    breakdowns: dict[str, dict[str, dict[str, float | None]]] = field(default_factory=dict)
    units: dict[str, np.ndarray] = field(default_factory=dict)

    def merge(self, other: Summarised) -> Summarised:
        """Another unit index's summary folded in (futurepedia: one index per task); breakdown cells merge per value."""
        self.overall.update(other.overall)
        self.ci.update(other.ci)
        self.units.update(other.units)
        for axis, cells in other.breakdowns.items():
            mine = self.breakdowns.setdefault(axis, {})
            for value, metrics in cells.items():
                mine.setdefault(value, {}).update(metrics)
        return self


def summarise(
    index: UnitIndex,
    values: Mapping[str, np.ndarray],
    answered: np.ndarray,
    *,
    scope: np.ndarray | None = None,
    axes: Mapping[str, tuple[np.ndarray, list[str]]] | None = None,
    with_ci: bool = True,
) -> Summarised:
    """Overall value, CI, breakdowns and per-unit array of every metric in `values`.

    values[key]: one score per unit of `index` (0 where unanswered, NaN where not scored: left out).
    answered: the units the system answered; the per-unit arrays are NaN elsewhere, so a comparison
        can keep to the units both systems answered.
    scope: the units that count (vdr: the datasets the submission covers); default all.
    axes: {axis: (category code per unit, category names)}; a breakdown lists every category with a
        unit in scope, each metric's mean over its scored units (None when it has none).
    with_ci: False leaves the CIs out (the same overall values, without the bootstrap).

    The overall value is the mean over strata of each stratum's mean; its CI is the percentile
    bootstrap of BootstrapPlan with clusters resampled whole inside each stratum, clusters and strata
    taken in the order of their first unit in the index. Metrics scored on the same units share one
    plan and one matrix product.
    """
    n = len(index.ids)
    scope = np.ones(n, dtype=bool) if scope is None else np.asarray(scope, dtype=bool)
    strata, clusters = index.codes
    out = Summarised()
    groups: dict[bytes, tuple[np.ndarray, list[str]]] = {}
    for key, v in values.items():
        ok = scope & ~np.isnan(v)
        groups.setdefault(np.packbits(ok).tobytes(), (ok, []))[1].append(key)
    for packed, (ok, keys) in groups.items():
        if not ok.any():  # nothing scored (every answer a judge failure): no number, never a guess
            out.overall.update(dict.fromkeys(keys, None))
            continue
        matrix = np.column_stack([values[k][ok] for k in keys])
        plan_values, weights, stratum_means = _resampled(matrix, _layout(index, ok, packed))
        overall = np.mean(stratum_means, axis=0)
        if not with_ci:
            out.overall.update((key, float(overall[j])) for j, key in enumerate(keys))
            continue
        bounds = BootstrapPlan.for_sizes(tuple(len(m) for m in plan_values)).ci(plan_values, weights)
        for j, key in enumerate(keys):
            out.overall[key] = float(overall[j])
            out.ci[key] = [float(bounds[j, 0]), float(bounds[j, 1])]
    for axis, (codes, names) in (axes or {}).items():
        out.breakdowns[axis] = _means_by(values, codes, names, scope)
    answered = np.asarray(answered, dtype=bool)
    out.units = {k: np.where(answered, v, np.nan) for k, v in values.items()}
    return out


@dataclass(frozen=True)
class _Layout:
    """Where each stratum's scored units are and how their clusters group them: fixed by the index and the
    mask of scored units, so computed once per (index, mask), not once per scoring."""

    rows: list[np.ndarray]  # per stratum (in stratum-code order), its positions among the scored units
    local: list[np.ndarray | None]  # per stratum, each unit's cluster numbered by first unit; None: one unit each
    sizes: list[np.ndarray]  # per stratum, its clusters' sizes


_LAYOUTS_KEPT = 8  # per index: the board's mask, the official one's, a few others


def _layout(index: UnitIndex, ok: np.ndarray, packed: bytes) -> _Layout:
    layouts = index.layouts
    found = layouts.get(packed)
    if found is None:
        strata, clusters = (c[ok] for c in index.codes)
        rows, local, sizes = [], [], []
        for s in np.unique(strata):
            at = np.flatnonzero(strata == s)
            codes = np.unique(clusters[at], return_inverse=True)[1]  # codes number clusters by first unit
            size = np.bincount(codes).astype(np.float64)
            rows.append(at)
            local.append(None if len(size) == len(at) else codes)
            sizes.append(size)
        if len(layouts) >= _LAYOUTS_KEPT:
            layouts.pop(next(iter(layouts)))
        found = layouts[packed] = _Layout(rows, local, sizes)
    return found


def _resampled(matrix: np.ndarray, layout: _Layout):
    """(rows the bootstrap draws per stratum, their weights or None, each stratum's mean per metric).

    Rows are units when every cluster is one unit; cluster means when the clusters of each stratum
    have one size (the same statistic as sums over sizes, without weights: futurepedia); else cluster
    sums, weighted by the cluster sizes.
    """
    rows, means = [], []
    for at, local, size in zip(layout.rows, layout.local, layout.sizes):
        m = matrix[at]
        means.append(m.mean(axis=0))
        if local is None:
            rows.append(m)
        else:
            rows.append(np.stack([np.bincount(local, weights=m[:, j], minlength=len(size)) for j in range(m.shape[1])], axis=1))
    sizes = layout.sizes
    if all((size == size[0]).all() for size in sizes):
        return [r / size[0] if size[0] != 1 else r for r, size in zip(rows, sizes)], None, means
    return rows, sizes, means


def _means_by(values: Mapping[str, np.ndarray], codes: np.ndarray, names: list[str], scope: np.ndarray):
    """{category: {metric: mean over its scored units in scope}}, categories without a unit in scope left out.

    The units in scope are put in category order once (a stable sort), so each category's values are one
    slice: the same numbers in the same order as a mask selects them, so the same mean to the last bit,
    without a mask over every unit per category and metric (56 language pairs x 11,032 units a file)."""
    codes = np.asarray(codes)
    units = np.flatnonzero(scope)
    order = units[np.argsort(codes[units], kind="stable")]
    bounds = np.searchsorted(codes[order], np.arange(len(names) + 1))  # category j: order[bounds[j]:bounds[j + 1]]
    present = [(name, bounds[j], bounds[j + 1]) for j, name in enumerate(names) if bounds[j + 1] > bounds[j]]
    out: dict[str, dict[str, float | None]] = {name: {} for name, _, _ in present}
    for key, v in values.items():
        mine = v[order]
        nan = np.isnan(mine)
        scored = ~nan if nan.any() else None
        for name, a, b in present:
            part = mine[a:b] if scored is None else mine[a:b][scored[a:b]]
            out[name][key] = float(part.mean()) if len(part) else None  # np.mean: the number a reader recomputes
    return out
