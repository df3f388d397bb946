"""Columns are declared once (ui/columns.py) from each track's declarations; keys identify them, labels are shown."""

from __future__ import annotations

import pandas as pd

from leaderboard.tracks import TRACKS
from leaderboard.ui import columns as cols
from leaderboard.ui import urlstate


def test_every_track_has_unique_column_keys_and_labels():
    for track in TRACKS.values():
        declared = cols.columns(track)
        assert len({c.key for c in declared}) == len(declared), track.name
        assert len({c.label for c in declared}) == len(declared), track.name
        assert {m.key for m in track.metrics} <= {c.key for c in declared}
        assert {c.key for c in track.extra_columns} <= {c.key for c in declared}
        assert [c.key for c in declared if not c.optional] == ["rank", "system"]


def test_default_visibility_follows_the_declarations():
    for track in TRACKS.values():
        shown = set(cols.default_keys(track))
        assert ("judge" in shown) == bool(track.judged_metrics)  # a judged track always says who judged
        assert not {f.key for f in track.system_fields if not f.shown} & shown
        assert not {c.key for c in track.extra_columns if not c.shown} & shown
        assert {m.key for m in track.metrics} <= shown and "missing" not in shown


def test_labels_from_older_links_and_api_callers_map_to_keys():
    track = next(t for t in TRACKS.values() if t.extra_columns)
    extra = track.extra_columns[0]
    metric = track.metrics[0]
    assert cols.keys_of(track, [metric.label, extra.key, "Id", "no such column", metric.key]) == [metric.key, extra.key, "id"]
    assert cols.metric_key(track, metric.label) == metric.key == cols.metric_key(track, metric.key)
    assert cols.metric_key(track, "nonsense") == track.rank_by
    # a permalink carries keys
    assert urlstate.decode(urlstate.encode({"rank": metric.key, "cols": [extra.key, "id"]})) == {
        "rank": [metric.key],
        "cols": [extra.key, "id"],
    }


def test_cells_and_sort_keys():
    track = next(t for t in TRACKS.values() if t.judged_metrics)
    judged = track.judged_metrics[0]
    by_key = cols.column_map(track)
    row = {
        "rank": 10,
        "rank_ub": 3,
        "name": "A",
        "n": 8,
        "missing": 2,
        "status": "scored",
        "judging": False,
        "judge": "lexical-v1",
        judged.key: 0.5,
        f"{judged.key}:low": 0.25,
        f"{judged.key}:high": 0.75,
        "id": "abc",
        "submitted": "2026-01-02T03:04:05",
        "errors": 0,
    }
    assert by_key["rank"].format(row) == "10" and by_key["rank"].sort_key(row) == 10.0
    assert by_key["rank_ci"].format(row) == "≥3"
    assert by_key["covered"].format(row) == "6 / 8" and by_key["covered"].sort_key(row) == 6.0
    assert by_key[judged.key].format(row).startswith("0.500") and "≈" in by_key[judged.key].format(row)
    assert by_key[judged.key].html and by_key["rank"].html  # our own markup: a CI, a reported badge
    assert not any(by_key[k].html for k in ("system", "rank_ci", "band", "covered"))  # plain text: cheaper to draw
    unjudged = {**row, judged.key: float("nan")}
    assert by_key[judged.key].format(unjudged) == "not judged" and by_key[judged.key].sort_key(unjudged) is None
    assert by_key["rank"].sort_key({"rank": pd.NA}) is None
    assert by_key["submitted"].format(row) == "2026-01-02"
