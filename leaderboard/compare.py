"""Side-by-side comparison of two systems of one track: paired tests over shared units.

Pure: takes the track declaration, the gold and both systems' per-unit
scores; knows nothing of the UI or the store.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .metrics import paired_test
from .tracks import Track


@dataclass
class MetricComparison:
    key: str
    label: str
    n_shared: int
    a: float | None
    b: float | None
    diff: float | None
    ci: tuple[float, float] | None
    p_value: float | None
    significant: bool
    better: str | None = None  # "a" or "b" when significant, by the metric's direction (higher_is_better)


def _grouped(values: np.ndarray, clusters: np.ndarray, strata: np.ndarray):
    """Per stratum: per-cluster sums and sizes (all units of a cluster move together)."""
    sums, sizes = [], []
    for s in np.unique(strata):
        in_s = strata == s
        codes = np.unique(clusters[in_s], return_inverse=True)[1]
        sums.append(np.bincount(codes, weights=values[in_s]))
        sizes.append(np.bincount(codes).astype(float))
    return sums, sizes


def compare_metric(track: Track, gold, key: str, a: np.ndarray, b: np.ndarray) -> MetricComparison:
    label = track.metric(key).label
    shared = ~np.isnan(a) & ~np.isnan(b)
    n = int(shared.sum())
    if n == 0:
        return MetricComparison(key, label, 0, None, None, None, None, None, False)
    idx = track.units(gold, key)
    clusters = np.asarray(idx.clusters, dtype=object)[shared].astype(str)
    strata = np.asarray(idx.strata, dtype=object)[shared].astype(str)
    a_sums, sizes = _grouped(a[shared], clusters, strata)
    b_sums, _ = _grouped(b[shared], clusters, strata)
    res = paired_test(a_sums, b_sums, sizes)
    better = None
    if res.significant:
        better = "a" if (res.diff > 0) == track.metric(key).higher_is_better else "b"
    return MetricComparison(key, label, n, res.mean_a, res.mean_b, res.diff, res.ci, res.p_value, res.significant, better)


def compare(
    track: Track, gold, a_units: dict[str, np.ndarray], b_units: dict[str, np.ndarray], unit_info: dict[str, dict], top: int = 20
) -> dict:
    """Every shared metric with its paired test, per-category differences and the units that differ most."""
    keys = [m.key for m in track.metrics if m.key in a_units and m.key in b_units]
    metrics = [compare_metric(track, gold, k, a_units[k], b_units[k]) for k in keys]
    out: dict = {"metrics": metrics, "categories": {}, "top_units": [], "focus": None}
    focus = track.rank_by if track.rank_by in keys else (keys[0] if keys else None)
    if focus is None:
        return out
    out["focus"] = focus
    idx = track.units(gold, focus)
    a, b = a_units[focus], b_units[focus]
    shared = ~np.isnan(a) & ~np.isnan(b)
    ids = np.asarray(idx.ids, dtype=object)
    diff = a - b
    for axis in track.axes:
        labels = [unit_info.get(u, {}).get(axis.key) for u in idx.ids]
        if not any(lab is not None for lab in labels):
            continue
        labels = np.asarray(labels, dtype=object)
        cells = {}
        for value in [v for v in axis.values if v in set(labels)] or sorted({x for x in labels if x is not None}):
            m = shared & (labels == value)
            if m.any():
                cells[value] = {
                    "a": float(a[m].mean()),
                    "b": float(b[m].mean()),
                    "diff": float(diff[m].mean()),
                    "n": int(m.sum()),
                }
        if cells:
            out["categories"][axis.key] = cells
    order = np.argsort(-np.abs(np.where(shared, diff, 0)), kind="stable")
    for i in order[:top]:
        if not shared[i] or diff[i] == 0:
            break
        out["top_units"].append(
            {"unit": ids[i], "a": float(a[i]), "b": float(b[i]), "diff": float(diff[i]), **unit_info.get(ids[i], {})}
        )
    return out
