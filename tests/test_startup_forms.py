"""Start-up computations rewritten for speed at 10,000 systems give exactly what their plain forms gave.

Each plain form below is the row-by-row code the board used before (kept here as the reference, not in the
package); the fast form must give the same frame / value, on the demo board plus 300 generated systems
(bench/bench_scale.py's generator, as tests/test_paging.py builds it), for every track, ranking metric and slice.
"""

from __future__ import annotations

from dataclasses import replace

import msgspec
import numpy as np
import pandas as pd
import pytest
from test_paging import paging_app

from leaderboard import ranking
from leaderboard.ranking import Entry
from leaderboard.reported import ChartSummary
from leaderboard.results import PENDING, Summary
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.tracks import TRACKS, Track
from leaderboard.ui import views


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with paging_app(tmp_path_factory.mktemp("forms")) as big:
        yield big


@pytest.fixture(scope="module")
def restarted(app):
    """The same board started again: from the results tables its first start wrote."""
    board = Board(Settings(data_dir=app.data_dir, judge="lexical"), StoreSettings(data_dir=app.data_dir))
    board.start(background=True)
    yield board
    board.stop()


# ---- the plain forms -----------------------------------------------------------------------------------------
def plain_rank_upper_bound(low, high, higher_is_better=True):
    low, high = np.asarray(low, float), np.asarray(high, float)
    if not higher_is_better:
        return 1 + (high[None, :] < low[:, None]).sum(axis=1)
    return 1 + (low[None, :] > high[:, None]).sum(axis=1)


def plain_table(track: Track, entries: list[Entry], *, include_hidden=False, rank_by=None, slice_=None) -> pd.DataFrame:
    rows = []
    fields = [(f.key, f.kind == "int") for f in track.system_fields]
    metric_columns = [(m.key, f"{m.key}:low", f"{m.key}:high") for m in track.metrics]
    for e in entries:
        if (e.hidden and not include_hidden) or e.duplicate_of:
            continue
        s = e.summary
        if s.track not in (None, track.name) or (s.status == "pending" and e.metadata.get("track") != track.name):
            continue
        flag, system = e.flag or {}, e.system
        row = {
            "id": e.id,
            "status": e.status,
            "flag": flag.get("status", ""),
            "flag_reason": flag.get("reason", ""),
            "submitted": e.submitted_at or s.scored_at,
            "user": e.user or "",
            "n": s.n,
            "missing": s.missing,
            "judge": s.judge if s.status != "pending" else "",
            "judging": e.judging,
            "errors": len(s.errors),
            "review": e.review,
        }
        for key, is_int in fields:
            value = system.get(key)
            row[key] = "" if value is None else value if is_int else str(value)
        row["name"] = e.name
        overall, ci = s.overall, s.ci
        if slice_ is not None:
            overall, ci = (s.breakdowns.get(slice_[0], {}).get(slice_[1]) or {}), {}
        for key, low, high in metric_columns:
            row[key] = overall.get(key)
            row[low], row[high] = ci.get(key) or (None, None)
        for c in track.extra_columns:
            if c.key in overall:
                row[c.key] = overall[c.key]
        rows.append(row)
    # the rows built one dict each (the form being checked); ranking itself is shared (ranking.ranked), its
    # upper bound checked against the pairwise count apart
    return ranking.ranked(track, pd.DataFrame(rows), rank_by)


def slices_seen(track: Track, entries: list[Entry]) -> list[tuple[str, str]]:
    seen = {(axis, value) for e in entries for axis in track.slice_axes for value in e.summary.breakdowns.get(axis, {})}
    return sorted(seen)


def with_every_kind_of_row(track: Track, entries: list[Entry]) -> list[Entry]:
    """The board's entries plus a hidden, a flagged, a duplicate, a pending, a pending-review and an invalid one,
    and (first) one whose overall lacks the scorer-reported columns (a row-by-row build then meets them later)."""
    scored = [e for e in entries if e.status == "scored"]
    bare = {k: v for k, v in scored[0].summary.overall.items() if k not in {c.key for c in track.extra_columns}}
    extra = [
        replace(scored[0], id="bare", summary=msgspec.structs.replace(scored[0].summary, overall=bare)),
        replace(scored[1], id="hidden", flag={"status": "hidden", "reason": "spam"}),
        replace(scored[2], id="flagged", flag={"status": "flagged", "reason": "check <b>me</b>"}),
        replace(scored[3], id="dup", duplicate_of=scored[3].id),
        replace(scored[4], id="pending", summary=PENDING, status="pending", metadata={"track": track.name}),
        replace(scored[5], id="review", pull_request=7),
        replace(scored[6], id="invalid", status="invalid", summary=Summary(track=track.name, errors=["x"], status="invalid")),
    ]
    return extra[:1] + entries + extra[1:]


# ---- fast form == plain form ----------------------------------------------------------------------------------
def test_rank_upper_bound_counts_as_the_pairwise_form():
    rng = np.random.default_rng(7)
    for trial in range(300):
        n = int(rng.integers(1, 30))
        low = rng.integers(0, 8, n).astype(float) / 4  # ties between bounds, and bounds equal to others' bounds
        high = low + rng.integers(0, 4, n) / 4
        if trial % 10 == 0:
            low[rng.integers(0, n)] = np.nan  # a NaN bound compares false both ways
        for higher in (True, False):
            assert ranking.rank_upper_bound(low, high, higher).tolist() == plain_rank_upper_bound(low, high, higher).tolist()


def test_a_track_with_no_rows_gives_an_empty_frame(app):
    assert ranking.table(TRACKS["unidoc"], []).equals(plain_table(TRACKS["unidoc"], []))


@pytest.mark.parametrize("track_name", sorted(TRACKS))
def test_table_is_the_row_by_row_frame(app, track_name):
    track = TRACKS[track_name]
    entries = app.board.entries(track_name)
    assert len(entries) > 100
    entries = with_every_kind_of_row(track, entries)
    slices = slices_seen(track, entries)
    assert slices or not track.slice_axes
    views = [(None, None)] + [(m.key, None) for m in track.metrics] + [(None, s) for s in slices]
    for rank_by, slice_ in views:
        for include_hidden in (False, True):
            kw = {"include_hidden": include_hidden, "rank_by": rank_by, "slice_": slice_}
            fast, plain = ranking.table(track, entries, **kw), plain_table(track, entries, **kw)
            assert list(fast.columns) == list(plain.columns), kw
            pd.testing.assert_frame_equal(fast, plain, check_exact=True, obj=str(kw))


def plain_slice_choices(board, track: Track) -> list[str]:
    out = [views.ALL]
    entries = board.entries(track.name)
    for axis in track.slice_axes:
        decl = next(a for a in track.axes if a.key == axis)
        seen: set[str] = set()
        for e in entries:
            seen.update(e.summary.breakdowns.get(axis, {}))
            if decl.values and seen.issuperset(decl.values):
                break
        values = [v for v in decl.values if v in seen] or sorted(seen)
        out += [f"{decl.label}: {v}" for v in values]
    return out


def plain_bests(systems, axis: str, metric: str, higher: bool) -> dict:
    """The leaders' per-value bests, decoding every cell (the form leaders_html had)."""
    bests: dict = {}
    for name, s in systems:
        kind = isinstance(s, ChartSummary)
        for value, scores in s.breakdowns.get(axis, {}).items():
            x = scores.get(metric)
            best = bests.setdefault(value, {False: None, True: None})
            if x is not None and (best[kind] is None or (x > best[kind][1] if higher else x < best[kind][1])):
                best[kind] = (name, x)
    return bests


@pytest.mark.parametrize("track_name", sorted(TRACKS))
def test_slice_choices_and_leaders_are_the_cell_by_cell_ones(restarted, track_name):
    track, board = TRACKS[track_name], restarted
    assert views.slice_choices(board, track) == plain_slice_choices(board, track)
    every = views.filtered_table(board, track_name, show_reported=True)
    systems = views.chart_systems(board, track_name, every)
    assert len(systems) > 100  # the generated systems' summaries come from the results tables
    for axis in track.slice_axes:
        for metric in [m.key for m in track.metrics]:
            for higher in (True, False):
                fast = {v: b for v, b in plain_bests_fast(systems, axis, metric, higher).items()}
                assert fast == plain_bests(systems, axis, metric, higher)
    if "reported" in every and every["reported"].any():
        assert "Who leads" in views.leaders_html(board, track, every, track.rank_by)


def plain_bests_fast(systems, axis: str, metric: str, higher: bool) -> dict:
    """The same loop over views.axis_metric (what leaders_html now reads)."""
    bests: dict = {}
    for name, s in systems:
        kind = isinstance(s, ChartSummary)
        for value, x in views.axis_metric(s, axis, metric).items():
            best = bests.setdefault(value, {False: None, True: None})
            if x is not None and (best[kind] is None or (x > best[kind][1] if higher else x < best[kind][1])):
                best[kind] = (name, x)
    return bests
