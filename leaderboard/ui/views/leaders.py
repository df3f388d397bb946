"""The leaders strip above a track's table, as plain data: on the ranking metric and each headline metric of the
track, the top rescored system of the view, how many systems are statistically tied with it, and the best
reported figure beside it.

It follows the view as the table does (the Scores choice, the slice, search and filters, reported rows shown or
not). Ties are by interval overlap, the criterion of the table's tie bands (ranking.tie_bands): a system is tied
with the leader when its 95% interval overlaps the leader's. A slice, or a metric without CI, has no interval:
there only an equal value ties, and the strip says so.

No Gradio here: ui/html.py renders it, ui/tabs/track.py puts it on the page, tests call it directly.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ... import ranking
from ...compare import compare_metric
from ...service import Board
from ...tracks import TRACKS, Track
from .. import columns as cols
from .common import per_version
from .track import TableView, filtered_table, parse_slice

OVERLAP = "tie = 95% CIs overlap"
EQUAL = "tie = equal value (no CI{where})"


@dataclass(frozen=True)
class Reported:
    """The best published figure of the view on a metric (never ranked: beside the leader, labelled)."""

    name: str
    value: float
    source: str  # where the figure comes from (the table's hover text)


@dataclass(frozen=True)
class Leader:
    """Who leads the view on one metric."""

    key: str
    label: str
    ranks: bool  # the metric the table is ranked by
    percent: bool
    higher_is_better: bool
    systems: int  # rescored systems of the view with a value on the metric
    id: str | None = None  # None: no rescored system has the metric yet
    name: str = ""
    value: float | None = None
    low: float | None = None  # None: no interval (a slice, or a metric without CI)
    high: float | None = None
    tied: int = 0  # systems tied with the leader, by `criterion`
    tied_names: tuple[str, ...] = ()  # the first few of them, best first
    criterion: str = OVERLAP
    reported: Reported | None = None
    # The paired test of the leader against the runner-up over the units both answered (compare.py), on the
    # board's overall scores (a slice or the official script's scores have no per-unit arrays of their own here).
    runner_up: str = ""
    paired_p: float | None = None
    paired_significant: bool | None = None


@dataclass(frozen=True)
class Strip:
    track: str
    leaders: tuple[Leader, ...]
    scope: str = ""  # "scores on Domain: finance" on a slice, "" overall
    protocol: str = ranking.BOARD
    with_reported: bool = False  # the view shows the track's reported rows: each card says its best one, or none


TIED_NAMES = 3  # names a strip lists of the systems tied with a leader (the count says how many in all)


def strip_metrics(track: Track, rank_key: str) -> list[str]:
    """The ranking metric first, then the track's declared headline metrics (each once)."""
    return list(dict.fromkeys([rank_key, *track.headline]))


def leaders(board: Board, track_name: str, view: TableView) -> Strip:
    """The strip of a view, computed once per board version and view."""
    track = TRACKS[track_name]
    rank_key = cols.metric_key(track, view.rank_by)
    protocol = ranking.protocol_of(track, view.protocol)
    filters = tuple(sorted((k, tuple(v or ())) for k, v in view.filters.items()))
    key = ("strip", track_name, rank_key, view.scores_on, view.search, filters, view.show_reported, protocol)
    return per_version(board, key, lambda: _leaders(board, track, rank_key, view, protocol))


def _leaders(board: Board, track: Track, rank_key: str, view: TableView, protocol: str) -> Strip:
    on_slice = parse_slice(track, view.scores_on) is not None
    out = []
    for key in strip_metrics(track, rank_key):
        raw = filtered_table(board, track.name, key, view.scores_on, view.search, view.filters, view.show_reported, protocol)
        lead = leader_of(track, raw, key, ranks=key == rank_key, on_slice=on_slice)
        if not on_slice and protocol == ranking.BOARD and lead.id is not None:
            lead = with_paired_test(board, track, raw, lead)
        out.append(lead)
    scope = f"scores on {view.scores_on}" if on_slice else ""
    return Strip(track.name, tuple(out), scope, protocol, view.show_reported and bool(track.reported_files))


def leader_of(track: Track, raw: pd.DataFrame, key: str, ranks: bool = False, on_slice: bool = False) -> Leader:
    """The leader on `key` among the rows of a view ranked by `key` (filtered_table's rows, reported ones among them)."""
    m = track.metric(key)
    base = {"key": key, "label": m.label, "ranks": ranks, "percent": m.percent, "higher_is_better": m.higher_is_better}
    if raw.empty or key not in raw:
        return Leader(**base, systems=0)
    rescored, published = _split(raw, key)
    best_reported = _best_reported(published, key, m.higher_is_better)
    if rescored.empty:
        return Leader(**base, systems=0, reported=best_reported)
    top = rescored.iloc[0]  # rows come in ranking order on `key`
    values = pd.to_numeric(rescored[key], errors="coerce").to_numpy(float)
    low_col, high_col = rescored.get(f"{key}:low"), rescored.get(f"{key}:high")
    has_ci = m.has_ci and not on_slice and low_col is not None and pd.notna(top.get(f"{key}:low"))
    if has_ci:
        low = pd.to_numeric(low_col, errors="coerce").fillna(rescored[key]).to_numpy(float)
        high = pd.to_numeric(high_col, errors="coerce").fillna(rescored[key]).to_numpy(float)
        tied = (low <= high[0]) & (high >= low[0])
        criterion = OVERLAP
    else:
        tied = values == values[0]
        criterion = EQUAL.format(where=" on a slice" if on_slice and m.has_ci else "")
    tied[0] = False  # the leader itself
    names = rescored["name"].astype(str).to_numpy()[tied]
    return Leader(
        **base,
        systems=len(rescored),
        id=str(top["id"]),
        name=str(top["name"]),
        value=float(values[0]),
        low=float(low[0]) if has_ci else None,
        high=float(high[0]) if has_ci else None,
        tied=int(np.count_nonzero(tied)),
        tied_names=tuple(names[:TIED_NAMES]),
        criterion=criterion,
        reported=best_reported,
    )


def with_paired_test(board: Board, track: Track, raw: pd.DataFrame, lead: Leader) -> Leader:
    """`lead` with the paired test against the runner-up of the same rows (unchanged when there is none, or when
    either system has no per-unit scores on the metric)."""
    rescored, _ = _split(raw, lead.key)
    if len(rescored) < 2:
        return lead
    a, b = board.entry(lead.id), board.entry(str(rescored.iloc[1]["id"]))
    if a is None or b is None:
        return lead
    units_a, units_b = board.units(a), board.units(b)
    if lead.key not in units_a or lead.key not in units_b:
        return lead
    test = compare_metric(track, board.gold(track.name), lead.key, units_a[lead.key], units_b[lead.key])
    if test.p_value is None:
        return lead
    return dataclasses.replace(lead, runner_up=b.name, paired_p=float(test.p_value), paired_significant=test.significant)


def _split(raw: pd.DataFrame, key: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(ranked rescored rows, reported rows) of a view's rows that have a value on `key`, in table order."""
    is_reported = raw["reported"].astype(bool) if "reported" in raw else pd.Series(False, index=raw.index)
    has = pd.to_numeric(raw[key], errors="coerce").notna()
    return raw[~is_reported & raw["rank"].notna() & has], raw[is_reported & has]


def _best_reported(rows: pd.DataFrame, key: str, higher: bool) -> Reported | None:
    if rows.empty:
        return None
    values = pd.to_numeric(rows[key], errors="coerce")
    best = rows.loc[values.idxmax() if higher else values.idxmin()]
    return Reported(str(best["name"]), float(best[key]), str(best.get("source", "") or ""))


def leader_id(board: Board, track_name: str) -> str | None:
    """The id of the top rescored system of a track's default view (the board's scores, every system)."""
    strip = leaders(board, track_name, TableView(show_reported=False))
    return strip.leaders[0].id if strip.leaders else None
