"""What several tabs' views read: a board version's ranked frames and entries, the page size, the systems
that may be shown or picked.

No Gradio here: the tabs wire these to components, tests call them directly.
"""

from __future__ import annotations

import weakref

import pandas as pd

from ... import ranking, reported
from ...ranking import BOARD, OFFICIAL, Entry
from ...results import PARTS
from ...service import Board
from ...tracks import TRACKS, Track
from .. import columns as cols
from ..format import short

ALL = "All"


# Ranked frames per board version: one board version is ranked once per (track, metric, slice), not once per
# handler (the table, its charts, the pickers and the leaders each read it; ~0.2 s per track at 3,000 systems).
_RANKED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_RANKED_KEEP = 64  # results kept per board version (ranked frames per metric and slice, choices, leaders): bounded


def ranked(
    board: Board,
    track_name: str,
    rank_by: str | None = None,
    slice_: tuple[str, str] | None = None,
    protocol: str = BOARD,
) -> pd.DataFrame:
    """board.table(track, rank_by, slice_) for the board's current version, computed once; a copy (callers may
    change it). `protocol`: every system's scores as that protocol computes them (ranks and CIs within it)."""
    rank_by = rank_by or TRACKS[track_name].rank_by  # one frame whether the default metric is named or not
    protocol = ranking.protocol_of(TRACKS[track_name], protocol)
    key = ("ranked", track_name, rank_by, slice_) + ((protocol,) if protocol != BOARD else ())
    frame = per_version(board, key, lambda: _rank(board, track_name, rank_by, slice_, protocol))
    return frame.copy()


def _rank(board: Board, track_name: str, rank_by: str, slice_: tuple[str, str] | None, protocol: str = BOARD) -> pd.DataFrame:
    """board.table(track_name, rank_by=rank_by, slice_=slice_), from the track's entries listed once per version
    (a listing is a pass over every entry of the board: 10,000s at scale)."""
    entries = track_entries(board, track_name, protocol)
    return ranking.table(TRACKS[track_name], entries, rank_by=rank_by, slice_=slice_)


def per_version(board: Board, key: tuple, compute):
    """compute(), once per board version and key (the last _RANKED_KEEP keys of the version are kept)."""
    version, store = _RANKED.get(board, (None, {}))
    if version != board.version:
        store = {}
        _RANKED[board] = (board.version, store)
    if key not in store:
        if len(store) >= _RANKED_KEEP:
            store.pop(next(iter(store)))
        store[key] = compute()
    return store[key]


def track_entries(board: Board, track_name: str, protocol: str = BOARD) -> list[Entry]:
    """board.entries(track_name) for the board's current version, listed once (choices, filters, charts and
    pickers each read it; a listing is a pass over every entry of the board). Shared: not to be changed.

    `protocol` OFFICIAL: the same entries with their summaries as the official scripts score them (a track that
    declares deviations; the board's otherwise)."""
    track = TRACKS[track_name]
    if ranking.protocol_of(track, protocol) == OFFICIAL:
        return per_version(
            board,
            ("entries", track_name, OFFICIAL),
            lambda: ranking.entries_in(track, board.entries(track_name, PARTS), OFFICIAL),
        )
    return per_version(board, ("entries", track_name), lambda: board.entries(track_name))


def page_rows(board: Board) -> int:
    """Systems a table shows at first and adds per "show more" (TABLE_PAGE_ROWS, in the Settings' page section)."""
    return board.settings.page.table_page_rows


# The most rows one table request renders: beyond it the CSV export has them (bounds what a caller can ask for).
MAX_TABLE_ROWS = 5000


def rows_wanted(rows, page: int) -> int:
    """The number of systems to show from a control or API value: the page size when missing or not a number,
    within 1..MAX_TABLE_ROWS."""
    try:
        wanted = int(rows)
    except (TypeError, ValueError, OverflowError):
        return page
    return min(max(wanted, 1), MAX_TABLE_ROWS)


def reported_rows(board: Board, track: Track) -> list:
    """The track's reported rows against the gold the board scores with."""
    if not track.reported_files:
        return []
    return reported.for_track(track, board.gold(track.name)).rows


judge_label = cols.judge_label


def system_choices(
    board: Board,
    track_name: str,
    reported_too: bool = False,
    limit: int | None = None,
    search: str = "",
    keep: tuple | list = (),
) -> list[tuple[str, str]]:
    """(label, id) for the scored systems of a track, best first; then its reported rows when asked (compare).

    `limit`: the first `limit` scored systems only (a picker of 10,000 choices is heavy in a browser); `search`:
    only those whose name or id contains it (before the cut, so any system can be found); `keep`: ids listed
    wherever they rank (the current picks, a permalink's system).
    """
    raw = ranked(board, track_name)
    scored = raw[raw["status"] == "scored"] if "status" in raw else pd.DataFrame({"name": [], "id": []})
    keep_ids = [k for k in keep if k]
    if search and not scored.empty:
        needle = search.casefold()
        hay = (scored["name"].astype(str) + " " + scored["id"].astype(str)).str.casefold()
        scored = scored[hay.str.contains(needle, regex=False) | scored["id"].isin(keep_ids)]
    if limit is not None and len(scored) > limit:
        scored = scored[(pd.Series(range(len(scored)), index=scored.index) < limit) | scored["id"].isin(keep_ids)]
    out = [(f"{short(name, 60)} · {i[:7]}", i) for name, i in zip(scored["name"].tolist(), scored["id"].tolist())]
    if reported_too:
        track = TRACKS[track_name]
        rows = [(f"reported · {short(r.name, 60)}", reported.row_id(track, r)) for r in reported_rows(board, track)]
        if search:
            rows = [(label, i) for label, i in rows if search.casefold() in label.casefold() or i in keep_ids]
        out += rows
    return out


def system_ids(board: Board, track_name: str, reported_too: bool = False) -> set[str]:
    """Every id system_choices can list (unbounded): what a pick or a permalink is checked against."""
    raw = ranked(board, track_name)
    ids = set() if raw.empty else set(raw.loc[raw["status"] == "scored", "id"].tolist())
    if reported_too:
        track = TRACKS[track_name]
        ids |= {reported.row_id(track, r) for r in reported_rows(board, track)}
    return ids


def reported_row(board: Board, entry_id: str | None):
    """(track, row) of a reported id, or None."""
    return reported.find(entry_id, board.gold) if reported.is_reported(entry_id) else None


def visible_entry(board: Board, entry_id: str | None) -> Entry | None:
    """The submission with this id, unless maintainers hid it: a hidden one is as unknown as a wrong id."""
    e = board.entry(entry_id) if entry_id else None
    return None if e is None or e.hidden else e
