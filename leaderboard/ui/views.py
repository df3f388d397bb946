"""What each part of the page shows, as plain data (DataFrames, strings, figures).

No Gradio here: layout.py wires these to components, tests call them directly.
"""

from __future__ import annotations

import json
import os
import re
import weakref
from dataclasses import dataclass, field

import pandas as pd

from .. import environment, ranking, reported
from ..ranking import BOARD, OFFICIAL, Entry
from ..results_index import LazyBreakdowns
from ..service import Board
from ..tracks import TRACKS, SystemField, Track
from . import columns as cols
from . import figures, protocol_html
from .format import ci_text, esc, link_html, num, short

ALL = "All"


# ---- the ranked table ------------------------------------------------------------------------
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
            lambda: ranking.entries_in(track, track_entries(board, track_name), OFFICIAL),
        )
    return per_version(board, ("entries", track_name), lambda: board.entries(track_name))


def protocol_note(track: Track, protocol: str, show_reported: bool = False) -> str:
    """What a table caption adds under the official protocol ("" under the board's): which scores these are, and,
    with reported rows shown, that they now compare like for like (reported figures are the scripts' own)."""
    if ranking.protocol_of(track, protocol) != OFFICIAL:
        return ""
    like = "; reported rows compare like for like" if show_reported and track.reported_files else ""
    return f"scores: official script{like}"


def page_rows() -> int:
    """Systems a table shows at first and adds per "show more" (TABLE_PAGE_ROWS)."""
    env = os.environ  # read on each call: a test or a deployment sets it without a restart of the module
    return environment.read(env, "TABLE_PAGE_ROWS")


# The most rows one table request renders: beyond it the CSV export has them (bounds what a caller can ask for).
MAX_TABLE_ROWS = 5000


def rows_wanted(rows) -> int:
    """The number of systems to show from a control or API value: the page size when missing or not a number,
    within 1..MAX_TABLE_ROWS."""
    try:
        wanted = int(rows)
    except (TypeError, ValueError, OverflowError):
        return page_rows()
    return min(max(wanted, 1), MAX_TABLE_ROWS)


def systems_in(raw: pd.DataFrame) -> int:
    """Systems (rescored rows) of a view: reported rows are not counted."""
    return int((~raw["reported"].astype(bool)).sum()) if "reported" in raw else len(raw)


def first_systems(raw: pd.DataFrame, n: int) -> pd.DataFrame:
    """The rows up to the n-th system in table order: reported rows stay where they fall among them."""
    if "reported" not in raw:
        return raw.head(n)
    systems = (~raw["reported"].astype(bool)).cumsum()
    return raw[systems.shift(fill_value=0) < n]


def slice_choices(board: Board, track: Track) -> list[str]:
    """'All', then 'axis: value' for each slice axis the track declares (open axes: values seen)."""
    return list(per_version(board, ("slices", track.name), lambda: _slice_choices(board, track)))


def _slice_choices(board: Board, track: Track) -> list[str]:
    out = [ALL]
    entries = track_entries(board, track.name)
    for axis in track.slice_axes:
        decl = next(a for a in track.axes if a.key == axis)
        seen: set[str] = set()
        for e in entries:
            seen.update(axis_values(e.summary, axis))
            if decl.values and seen.issuperset(decl.values):  # every declared value seen: the rest cannot add one
                break
        values = [v for v in decl.values if v in seen] or sorted(seen)
        out += [f"{decl.label}: {v}" for v in values]
    return out


def axis_values(summary: dict, axis: str):
    """The values of `axis` a summary has breakdowns for (its breakdowns' axis keys)."""
    breakdowns = summary.get("breakdowns", {})
    if isinstance(breakdowns, LazyBreakdowns):  # from the results index: the values without their cells
        return breakdowns.values_of(axis)
    return breakdowns.get(axis, {})


def axis_metric(summary: dict, axis: str, metric: str) -> dict:
    """{value: its `metric` (None when absent)} of a summary's breakdowns along `axis`."""
    breakdowns = summary.get("breakdowns", {})
    if isinstance(breakdowns, LazyBreakdowns):  # from the results index: that metric of each cell decoded only
        return breakdowns.metric_of(axis, metric)
    return {value: scores.get(metric) for value, scores in breakdowns.get(axis, {}).items()}


def parse_slice(track: Track, choice: str | None) -> tuple[str, str] | None:
    if not choice or choice == ALL or ": " not in choice:
        return None
    label, value = choice.split(": ", 1)
    axis = next((a.key for a in track.axes if a.label == label), None)
    return (axis, value) if axis else None


def optional_columns(track: Track) -> list[tuple[str, str]]:
    """(label, key) of the columns a visitor may show or hide (columns.py declares them)."""
    return cols.optional_choices(track)


def default_columns(track: Track) -> list[str]:
    """Keys of the columns shown by default."""
    return cols.default_keys(track)


# Filters beyond the declared system fields: which metrics a system has results for (a track whose
# metrics are partly optional, judged answers), and which judge produced them (never mixed unseen).
HAS = SystemField("has", "Has results for", filter=True)
JUDGE = SystemField("judge", "Judge", filter=True)


def filter_fields(track: Track) -> list[SystemField]:
    judged = bool(track.judged_metrics)
    extra = [HAS] if judged or track.partial_metrics else []
    if judged:
        extra.append(JUDGE)
    return [f for f in track.system_fields if f.filter] + extra


def filter_choices(board: Board, track: Track) -> dict[str, list[str]]:
    """The choices of each filter: the declared ones and every value seen on the board (reported rows too)."""
    choices = per_version(board, ("filters", track.name), lambda: _filter_choices(board, track))
    return {k: list(v) for k, v in choices.items()}


def declared_filter_choices(track: Track) -> dict[str, list[str]]:
    """The choices of each filter before any system is seen: the declared ones."""
    return _in_order(track, _declared(track))


def _declared(track: Track) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {f.key: set(f.choices) for f in filter_fields(track)}
    if "has" in out:
        out["has"] = set()
    return out


def _in_order(track: Track, out: dict[str, set[str]]) -> dict[str, list[str]]:
    order = {"has": [(m.label, m.key) for m in track.metrics]}  # (label, key): the key is the value
    return {k: order.get(k) or sorted(v) for k, v in out.items()}


def _filter_choices(board: Board, track: Track) -> dict[str, list[str]]:
    out = _declared(track)
    for e in track_entries(board, track.name):
        for key in out:
            v = e.summary.get("judge") if key == "judge" else e.system.get(key)
            if isinstance(v, str) and v and key != "has" and v != "none":
                out[key].add(v)
    for row in reported_rows(board, track):  # reported rows are filtered like the others: their values are choices
        for key in out:
            v = row.system.get(key)
            if isinstance(v, str) and v and key not in ("has", "judge") and v != "none":
                out[key].add(v)
    return _in_order(track, out)


@dataclass(frozen=True)
class TableView:
    """A table's controls, by name: what the table, its CSV export and its charts show.

    `scores_on` is the "Scores on" choice (a slice, or ALL), `filters` each filter's chosen values by field key,
    `rows` the systems shown (None: every one, the CSV export), `protocol` the "Scores" choice."""

    rank_by: str | None = None
    scores_on: str | None = None
    search: str = ""
    filters: dict[str, list[str]] = field(default_factory=dict)
    columns: list[str] | None = None
    show_reported: bool = False
    rows: int | None = None
    protocol: str = BOARD

    @classmethod
    def from_controls(cls, track: Track, values, rows: bool = True) -> TableView:
        """The view from the values Gradio passes, in the tab's control order: rank_by, scores_on, search, each
        filter (`filter_fields`), columns, show_reported, rows (`rows` False: the CSV export, which has none),
        protocol. A caller that leaves trailing ones out gets their defaults: reported rows shown, a page of
        systems, the board's protocol (API callers from before a control was added)."""
        values = list(values)
        fields = filter_fields(track)
        head = (values[:3] + [None] * 3)[:3]
        chosen = values[3 : 3 + len(fields)]
        tail = dict(zip(["columns", "show_reported", *(["rows"] if rows else []), "protocol"], values[3 + len(fields) :]))
        return cls(
            rank_by=head[0],
            scores_on=head[1],
            search=head[2] or "",
            filters=dict(zip([f.key for f in fields], chosen)),
            columns=tail.get("columns"),
            show_reported=tail.get("show_reported", True) is not False and bool(track.reported_files),
            rows=rows_wanted(tail.get("rows")) if rows else None,
            protocol=ranking.protocol_of(track, tail.get("protocol", BOARD)),
        )


def view_rows(board: Board, track_name: str, view: TableView) -> pd.DataFrame:
    """filtered_table for a view: every row of it (the CSV export, the charts)."""
    return filtered_table(
        board, track_name, view.rank_by, view.scores_on, view.search, view.filters, view.show_reported, view.protocol
    )


def filtered_table(
    board: Board,
    track_name: str,
    rank_by: str | None = None,
    slice_choice: str | None = None,
    search: str = "",
    filters: dict[str, list[str]] | None = None,
    show_reported: bool = False,
    protocol: str = BOARD,
) -> pd.DataFrame:
    """The raw board rows of a view: ranked by `rank_by`, on a slice, searched and filtered.

    `show_reported`: the track's reported rows (published figures, leaderboard/reported.py) placed among the
    ranked ones by value, unranked; every row carries `reported` (True/False) and `source`.
    `protocol`: the rescored rows' scores as that protocol computes them (reported rows are the same in both).
    """
    track = TRACKS[track_name]
    rank_key = cols.metric_key(track, rank_by)
    raw = ranked(board, track_name, rank_key, parse_slice(track, slice_choice), protocol)
    shown = reported_rows(board, track) if show_reported else []
    raw = reported.merged(track, raw, reported.frame(track, shown, parse_slice(track, slice_choice)), rank_key)
    if raw.empty:
        return raw
    if parse_slice(track, slice_choice) is not None:  # a slice view lists the systems that have that slice
        raw = raw[raw[[m.key for m in track.metrics]].notna().any(axis=1)]
        if raw.empty:
            return raw
    if search:
        needle = search.casefold()
        hay = raw["name"].astype(str) + " " + raw.get("organization", "").astype(str)
        raw = raw[hay.str.casefold().str.contains(needle, regex=False)]
    for key, wanted in (filters or {}).items():
        if not wanted:
            continue
        if key == "has":  # every chosen metric present (by key; a label from an older link works too)
            for m in track.metrics:
                if m.key in wanted or m.label in wanted:
                    raw = raw[raw[m.key].notna()]
        elif key in raw:
            raw = raw[raw[key].astype(str).isin(wanted)]
    return raw.reset_index(drop=True)


# A spreadsheet runs a cell starting with one of these as a formula (CSV injection): such text cells get a
# leading single quote, the OWASP advice. Cells that are plain numbers ("-0.25") are data and stay as they are.
_FORMULA_LEAD = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def csv_cell(value):
    if isinstance(value, str) and value.startswith(_FORMULA_LEAD) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` as it may go into a CSV file: text cells neutralised, numeric columns untouched (still numbers)."""
    out = frame.copy()
    for c in out.columns:
        if not pd.api.types.is_numeric_dtype(out[c]):
            out[c] = out[c].map(csv_cell)
    return out


def table_frames(
    board: Board,
    track_name: str,
    rank_by: str | None = None,
    slice_choice: str | None = None,
    search: str = "",
    filters: dict[str, list[str]] | None = None,
    columns: list[str] | None = None,
    show_reported: bool = False,
    protocol: str = BOARD,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(display frame, raw frame) of a track's board under the given view: every row."""
    raw = filtered_table(board, track_name, rank_by, slice_choice, search, filters, show_reported, protocol)
    return display_frames(TRACKS[track_name], raw, columns)


def table_page(board: Board, track_name: str, view: TableView) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(display frame, raw frame, every raw row) of the first `view.rows` systems of a view (None: a page).

    Search and filters select among all rows first, then the page is cut, so a search finds a system ranked
    9,000th; only the page is formatted, so the cost does not grow with the board.
    """
    every = view_rows(board, track_name, view)
    page = first_systems(every, rows_wanted(view.rows)).reset_index(drop=True)
    disp, raw = display_frames(TRACKS[track_name], page, view.columns)
    return disp, raw, every


def page_note(shown: pd.DataFrame, every: pd.DataFrame) -> str:
    """ "showing 100 of 9,873 systems" when the page is cut, "" when every system is shown."""
    n, total = systems_in(shown), systems_in(every)
    return f"showing {n:,} of {total:,} systems" if n < total else ""


def display_frames(track: Track, raw: pd.DataFrame, columns: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(display frame, raw frame) of the given rows: each shown column formatted."""
    if raw.empty:
        return pd.DataFrame({c.label: [] for c in cols.columns(track) if not c.optional}), raw
    shown = set(cols.keys_of(track, columns) if columns is not None else default_columns(track))
    records = raw.to_dict("records")  # one pass over the rows (iterrows per column is the slow part with 500 systems)
    disp = pd.DataFrame(
        {c.label: [c.format(row) for row in records] for c in cols.columns(track) if not c.optional or c.key in shown}
    )
    return disp.reset_index(drop=True), raw.reset_index(drop=True)


def shown_columns(disp: pd.DataFrame, track: Track) -> list[cols.Column]:
    """The declared columns of a display frame, in its order (its headers are their labels)."""
    by_label = {c.label: c for c in cols.columns(track)}
    return [by_label[label] for label in disp.columns]


def table_value(disp: pd.DataFrame, raw: pd.DataFrame, track: Track) -> dict:
    """The Dataframe value of a table view: sortable keys as data, the formatted cells as what is shown.

    Sorting in the browser compares the data, so numeric columns carry numbers
    (rank 10 after rank 9, 100.0% after 91.7%, a CI never in the way) while the
    page shows `disp`'s text; a missing number is null and sorts last.
    """
    records = raw.to_dict("records") if len(raw) == len(disp) else []
    columns = []
    for c in shown_columns(disp, track):
        columns.append([c.sort_key(r) for r in records] if c.sort_key is not None and records else disp[c.label].tolist())
    data = [list(row) for row in zip(*columns)] if columns else []
    shown = disp.astype(str).values.tolist()
    marked = [bool(r.get("reported")) for r in records] if records else [False] * len(shown)
    styling = [[REPORTED_STYLE if m else ""] * len(disp.columns) for m in marked]  # reported rows look different
    return {
        "headers": list(disp.columns),
        "data": data,
        "metadata": {"display_value": shown, "styling": styling} if shown else None,
    }


REPORTED_STYLE = "background-color: #f3f0e8; font-style: italic;"


def reported_rows(board: Board, track: Track) -> list:
    """The track's reported rows against the gold the board scores with."""
    if not track.reported_files:
        return []
    return reported.for_track(track, board.gold(track.name)).rows


judge_label = cols.judge_label


def column_widths(disp: pd.DataFrame, track: Track) -> list[str]:
    """Narrow rank columns, a wide system column, the rest sized to fit (columns.py declares each width)."""
    return [c.width for c in shown_columns(disp, track)]


def datatypes(disp: pd.DataFrame, track: Track) -> list[str]:
    """Markdown only for the metric cells we format ourselves; everything from submissions is plain text."""
    return ["markdown" if c.markdown else "str" for c in shown_columns(disp, track)]


def chart_systems(board: Board, track_name: str, raw: pd.DataFrame, protocol: str = BOARD) -> list[tuple[str, dict]]:
    """(name, summary) of the scored systems in table order, for the charts; a reported row's summary is marked
    `reported` (figures.py draws it apart). `protocol`: the summaries as that protocol scores them."""
    by_id = {e.id: e for e in track_entries(board, track_name, protocol)}
    track = TRACKS[track_name]
    shown = (
        {reported.row_id(track, r): r for r in reported_rows(board, track)} if "reported" in raw and raw["reported"].any() else {}
    )
    out = []
    for row_id in raw["id"].tolist() if "id" in raw else []:
        e = by_id.get(row_id)
        if e is not None and e.status == "scored":
            out.append((e.name, e.summary))
        elif row_id in shown:
            out.append((shown[row_id].name, reported.chart_summary(track, shown[row_id])))
    return out


CHART_SERIES = 15  # systems a chart draws at most: the top ones by the ranking, plus the one picked


def chart_rows(raw: pd.DataFrame, picked: str | None = None, cap: int = CHART_SERIES) -> tuple[pd.DataFrame, str]:
    """(the rows a chart draws, its note): the first `cap` systems of the view, the picked system wherever it
    ranks, every reported row (published figures, few); the note ("top 15 of 9,873 shown") when some are left out."""
    if raw.empty or "id" not in raw:
        return raw, ""
    is_reported = raw["reported"].astype(bool) if "reported" in raw else pd.Series(False, index=raw.index)
    systems = (~is_reported).cumsum()
    keep = is_reported | ((~is_reported) & (systems <= cap)) | (raw["id"] == picked)
    total = int((~is_reported).sum())
    note = f"top {cap:,} of {total:,} shown" if total > cap else ""
    return raw[keep], note


def chart(track: Track, chart_index: int, systems: list[tuple[str, dict]], metric_label: str | None, pair_system: str | None):
    """Chart `chart_index` of the track; `pair_system` is the id of the system per-system charts show."""
    c = track.charts[chart_index]
    metric = cols.metric_key(track, metric_label)
    if c.kind == "by_axis":
        decl = next(a for a in track.axes if a.key == c.axis)
        if decl.metrics and metric not in decl.metrics:
            metric = decl.metrics[0]
        return figures.safe(figures.by_axis, track, systems, c.axis, metric)
    if c.kind == "scatter":
        return figures.safe(figures.scatter, track, systems, c.x, c.y, c)
    if c.kind == "avg_var":
        return figures.safe(figures.avg_var, track, systems, metric, c)
    if c.kind == "shares":
        return figures.safe(figures.shares, track, systems, c.axis, c)
    if c.kind == "pair_heatmap":
        decl = next(a for a in track.axes if a.key == c.axis)
        key = metric if metric in decl.metrics else decl.metrics[0]
        pick = next(
            ((n, s) for n, s in systems if s.get("sha256", "")[:12] == pair_system and c.axis in s.get("breakdowns", {})), None
        )
        pick = pick or next(((n, s) for n, s in systems if c.axis in s.get("breakdowns", {})), None)
        if pick is None:
            return figures.message_figure(c.empty or f"No system has results per {decl.label.lower()} yet.")
        return figures.safe(figures.pair_heatmap, track, pick[0], pick[1], c.axis, key, c)
    if c.kind == "tradeoff":
        return figures.safe(figures.tradeoff, track, systems, c.x, c.y, c.group, c)
    return figures.message_figure(f"unknown chart kind {c.kind}")


# ---- systems, details and compare ---------------------------------------------------------------
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


def detail(board: Board, entry_id: str | None) -> tuple[str, pd.DataFrame, pd.DataFrame]:
    """(metadata HTML, per-category scores, per-unit scores) of one submission."""
    found = reported_row(board, entry_id)
    if found is not None:  # published figures: their source and every figure; no per-unit scores
        html, frame = reported.detail(*found, esc)
        return html, frame, pd.DataFrame()
    e = visible_entry(board, entry_id)
    if e is None:
        return "<p>Pick a system.</p>", pd.DataFrame(), pd.DataFrame()
    return _meta_html(e), _breakdown_frame(e), unit_frame(board, e)


def _meta_html(e: Entry) -> str:
    s = e.summary
    track = TRACKS.get(s.get("track") or "")
    status = (
        f"duplicate of {e.duplicate_of} (not ranked: the earliest copy of these predictions is)" if e.duplicate_of else e.status
    )
    rows = [
        ("System", esc(e.name)),
        ("Status", esc(status)),
        ("Submission id", f"<code>{esc(e.id)}</code>"),
        ("File", f"<code>{esc(e.path)}</code>"),
        ("Submitted by", esc(e.user or "")),
        ("Submitted", esc(e.submitted_at or "")),
        ("Scored", esc(s.get("scored_at", ""))),
        ("Metric version", esc(s.get("metric_version", ""))),
        ("Judge", esc(judge_label(s.get("judge", "")))),
    ]
    for key, value in e.system.items():
        if key == "name":
            continue
        label = next((f.label for f in track.system_fields if f.key == key), key) if track else key
        shown = (
            link_html(value)
            if key == "link"
            else f"<code>{esc(json.dumps(value))}</code>"
            if isinstance(value, (dict, list))
            else esc(value)
        )
        rows.append((esc(label), shown))
    if e.flag:
        rows.append(("Maintainers' flag", esc(f"{e.flag.get('status')}: {e.flag.get('reason', '')}")))
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    html = f'<table class="meta">{body}</table>'
    if s.get("overall"):
        metrics = "".join(
            f"<tr><th>{esc(m.label)}</th><td>{num(s['overall'].get(m.key))} <small>{ci_text(*(s.get('ci', {}).get(m.key) or [None, None]))}</small></td></tr>"
            for m in (track.metrics if track else [])
            if m.key in s["overall"]
        )
        html += f'<table class="meta">{metrics}</table><p>{s.get("n", 0)} units scored, {s.get("missing", 0)} missing.</p>'
        html += protocol_html.side_by_side(track, s)  # the official script's protocol beside the board's
    if s.get("errors"):
        items = "".join(f"<li><code>{esc(err)}</code></li>" for err in s["errors"])
        html += f'<div class="errors"><b>{s.get("error_count") or len(s["errors"]):,} problem(s):</b><ul>{items}</ul></div>'
    if s.get("warnings"):
        items = "".join(f"<li>{esc(w)}</li>" for w in s["warnings"][:20])
        html += f"<details><summary>{len(s['warnings'])} warning(s)</summary><ul>{items}</ul></details>"
    ledger = s.get("judge_ledger")
    if ledger:
        html += (
            "<p>Judge cost: "
            + esc(
                f"{ledger.get('calls', 0)} calls, {ledger.get('prompt_tokens', 0)} prompt + "
                f"{ledger.get('completion_tokens', 0)} completion tokens, "
                f"{ledger.get('cache_hits', 0)} cached, {ledger.get('failures', 0)} failures"
            )
            + _batch_cost(ledger)
            + "</p>"
        )
    return html


_BATCH_IDS_SHOWN = 6  # a long run's ids are cut: the results file has them all


def _batch_cost(ledger: dict) -> str:
    """The batch fields of a judge ledger (batch mode), escaped and bounded; empty for a live ledger."""
    if ledger.get("mode") != "batch":
        return ""
    ids = [str(b)[:64] for b in ledger.get("batch_ids") or [] if isinstance(b, str)]
    shown = ", ".join(ids[:_BATCH_IDS_SHOWN]) + (
        f" and {len(ids) - _BATCH_IDS_SHOWN} more" if len(ids) > _BATCH_IDS_SHOWN else ""
    )

    def count(key: str) -> int:
        value = ledger.get(key)
        return value if type(value) is int else 0

    return esc(
        f"; batch mode: {count('batch_lines')} lines in {len(ids)} batches"
        + (f" ({shown})" if ids else "")
        + f", {count('batch_line_failures')} failed lines, {count('batch_unreturned')} unreturned"
    )


def _breakdown_frame(e: Entry) -> pd.DataFrame:
    rows = []
    track = TRACKS.get(e.summary.get("track") or "")
    for axis, cells in e.summary.get("breakdowns", {}).items():
        label = next((a.label for a in track.axes if a.key == axis), axis) if track else axis
        for value, metrics in cells.items():
            rows.append(
                {
                    "Breakdown": label,
                    "Value": value,
                    **{_metric_label(track, k): (num(v) if isinstance(v, float) else v) for k, v in metrics.items()},
                }
            )
    return pd.DataFrame(rows).fillna("")


def _metric_label(track: Track | None, key: str) -> str:
    if track is None:
        return key
    return next((m.label for m in track.metrics if m.key == key), key)


def unit_frame(board: Board, e: Entry, category: str | None = None, search: str = "", limit: int = 500) -> pd.DataFrame:
    """Per-unit scores of a submission with the unit's categories; NaN = not answered."""
    track = TRACKS.get(e.summary.get("track") or "")
    if track is None or e.status != "scored":
        return pd.DataFrame()
    units = board.units(e)
    gold = board.gold(track.name)
    info = board.unit_info(track.name)
    frames = []
    for key, values in units.items():
        idx = track.units(gold, key)
        frames.append(pd.DataFrame({"Unit": idx.ids, "metric": _metric_label(track, key), "score": values}))
    if not frames:
        return pd.DataFrame()
    df = pd.concat(frames).pivot_table(index="Unit", columns="metric", values="score", aggfunc="first", dropna=False)
    df = df.reset_index()
    meta = pd.DataFrame.from_dict(info, orient="index")
    keep = [c for c in meta.columns if c not in ("gold", "relevant")]
    df = df.merge(meta[keep], left_on="Unit", right_index=True, how="left")
    if category:
        mask = pd.Series(False, index=df.index)
        for c in keep:
            mask |= df[c].astype(str) == category
        df = df[mask]
    if search:
        df = df[df.apply(lambda r: search.casefold() in " ".join(map(str, r.values)).casefold(), axis=1)]
    for c in df.columns:
        if df[c].dtype.kind == "f":
            df[c] = df[c].map(lambda v: "not answered" if pd.isna(v) else f"{v:.3f}")
    return df.head(limit).reset_index(drop=True)


_NOT_CATEGORIES = ("gold", "relevant", "question", "query")  # unit texts and ids, never a filter


def unit_categories(board: Board, e: Entry, most: int = 64) -> list[str]:
    """Values to filter a submission's units by: the gold's category columns (domain, language, dataset...).

    A column of the track's unit info is a category when it has few distinct
    values over the whole gold (at most `most`, and fewer than half the units):
    question texts, gold answers and query ids never are.
    """
    track = TRACKS.get(e.summary.get("track") or "")
    if track is None:
        return []
    info = board.unit_info(track.name)
    values: dict[str, set[str]] = {}
    for row in info.values():
        for k, v in row.items():
            if isinstance(v, str) and k not in _NOT_CATEGORIES:
                values.setdefault(k, set()).add(v)
    out: set[str] = set()
    for seen in values.values():
        if len(seen) <= most and len(seen) < max(2, len(info) / 2):
            out |= seen
    return sorted(v for v in out if v)


RECORD_SHOWN_CHARS = 20_000  # a page shows this much of a raw record; the rest is a download away


def full_record(board: Board, entry_id: str | None, unit: str | None) -> str | None:
    """A unit's raw prediction record as indented JSON, whole; None when there is none to show."""
    e = visible_entry(board, entry_id)
    if e is None or not unit:
        return None
    rec = board.records(e).get(unit)
    return None if rec is None else json.dumps(rec, ensure_ascii=False, indent=2)


def unit_record(board: Board, entry_id: str | None, unit: str | None, limit: int = RECORD_SHOWN_CHARS) -> str:
    """The record as the page shows it: cut after `limit` characters, saying so (a 50 MB answer stays a download)."""
    if visible_entry(board, entry_id) is None or not unit:
        return ""
    text = full_record(board, entry_id, unit)
    if text is None:
        return f"// {unit}: no prediction in this submission"
    if len(text) <= limit:
        return text
    return (
        text[:limit] + f"\n// … cut: the first {limit:,} of {len(text):,} characters are shown; "
        "download the record for the full text"
    )


def compare_view(board: Board, a_id: str | None, b_id: str | None):
    """(summary markdown, metrics frame, per-category figure, top-differences frame)."""
    if not a_id or not b_id:
        return "Pick two systems of the same track.", pd.DataFrame(), figures.message_figure("Pick two systems."), pd.DataFrame()
    if a_id == b_id:
        return (
            "Pick two different systems.",
            pd.DataFrame(),
            figures.message_figure("Pick two different systems."),
            pd.DataFrame(),
        )
    if reported.is_reported(a_id) or reported.is_reported(b_id):
        return reported_compare_view(board, a_id, b_id)
    if visible_entry(board, a_id) is None or visible_entry(board, b_id) is None:  # unknown, withdrawn or hidden
        msg = "Unknown system: pick again."
        return msg, pd.DataFrame(), figures.message_figure(msg), pd.DataFrame()
    try:
        c = board.compare(a_id, b_id)
    except (KeyError, ValueError) as exc:  # a stale pick (other track, withdrawn submission): say so
        msg = "Pick two systems of the same track." if isinstance(exc, ValueError) else "Unknown system: pick again."
        return msg, pd.DataFrame(), figures.message_figure(msg), pd.DataFrame()
    a, b = c["a"], c["b"]
    rows = []
    for m in c["metrics"]:
        label = m.label
        if TRACKS[a.summary["track"]].metric(m.key).needs_judge:
            label += f" (judge: {judge_label(a.summary.get('judge', ''))})"
        rows.append(
            {
                "Metric": label,
                "A": num(m.a),
                "B": num(m.b),
                "A − B": "" if m.diff is None else f"{m.diff:+.3f}",
                "95% CI of A − B": ci_text(*m.ci) if m.ci else "",
                "p": "" if m.p_value is None else f"{m.p_value:.3f}",
                "Significant (95%)": "yes" if m.significant else "no",
                "Shared units": str(m.n_shared),
            }
        )
    n_shared = max((m.n_shared for m in c["metrics"]), default=0)
    # Names are plain text: the markdown gets escaped names only.
    text = (
        f"<b>A</b> = {esc(a.name)} · <b>B</b> = {esc(b.name)}. Paired bootstrap (1,000 resamples) over the "
        f"{n_shared} units both answered; a difference is significant when its 95% CI excludes 0."
    )
    top = pd.DataFrame(c["top_units"])
    if not top.empty:
        top = top.rename(columns={"unit": "Unit", "a": "A", "b": "B", "diff": "A − B", "a_says": "A says", "b_says": "B says"})
        for col in ("A says", "B says", "question", "gold"):
            if col in top:
                top[col] = top[col].map(lambda t: short(t, 240))
        for col in ("A", "B"):
            top[col] = top[col].map(num)
        top["A − B"] = top["A − B"].map(lambda v: f"{v:+.3f}")
        top = top.drop(columns=[col for col in ("relevant",) if col in top])
    return text, pd.DataFrame(rows), figures.safe(figures.diff_by_category, c, a.name, b.name), top


def both_records(board: Board, a_id: str | None, b_id: str | None, unit: str | None) -> tuple[str, str]:
    return unit_record(board, a_id, unit), unit_record(board, b_id, unit)


NO_TEST = "no significance test: reported figures"


def _compared(board: Board, entry_id: str) -> tuple[str, str, dict, bool] | None:
    """(track name, name, summary, reported?) of a system to compare: a visible rescored one or a reported row."""
    found = reported_row(board, entry_id)
    if found is not None:
        track, row = found
        return track.name, row.name, {"overall": row.overall, "breakdowns": row.breakdowns}, True
    e = visible_entry(board, entry_id)
    if e is None or e.status != "scored":
        return None
    return e.summary.get("track"), e.name, e.summary, False


def reported_compare_view(board: Board, a_id: str, b_id: str):
    """A rescored system against a reported one (or two reported): the differences on the metrics both have, per
    category where both sources have the breakdown; no CI, no test (reported figures have no per-unit scores)."""
    a, b = _compared(board, a_id), _compared(board, b_id)
    if a is None or b is None:
        msg = "Unknown system: pick again."
        return msg, pd.DataFrame(), figures.message_figure(msg), pd.DataFrame()
    if a[0] != b[0]:
        msg = "Pick two systems of the same track."
        return msg, pd.DataFrame(), figures.message_figure(msg), pd.DataFrame()
    track = TRACKS[a[0]]
    metrics, cats = reported.compare_frame(track, a[2], b[2])
    tag = {True: " (reported)", False: " (rescored)"}
    text = (
        f"<b>A</b> = {esc(a[1])}{tag[a[3]]} · <b>B</b> = {esc(b[1])}{tag[b[3]]}. Differences only, on the metrics both "
        f"have: <b>{NO_TEST}</b> (published figures come without per-unit scores, and were measured on their "
        "source's data with its own protocol)."
    )
    if metrics.empty:
        text += " The two have no metric in common."
    return text, metrics, figures.safe(figures.reported_diff_by_category, track, cats, a[1], b[1]), pd.DataFrame()


def leaders_html(board: Board, track: Track, raw: pd.DataFrame, rank_key: str, protocol: str = BOARD) -> str:
    """Per value of each by-axis chart's axis: the best rescored and the best reported system on the ranking metric.

    Shown only while reported rows are on the board (the first-visit story: the paper's systems beside the
    rescored ones); names are escaped, figures are those of the table and charts.
    """
    if raw.empty or "reported" not in raw or not raw["reported"].any() or "rank" not in raw:
        return ""
    # the same rows give the same table: once per board version (every render of the default view asks)
    protocol = ranking.protocol_of(track, protocol)
    key = ("leaders", track.name, rank_key, hash(tuple(raw["id"].tolist())), len(raw), protocol)
    return per_version(board, key, lambda: _leaders_html(board, track, raw, rank_key, protocol))


def _leaders_html(board: Board, track: Track, raw: pd.DataFrame, rank_key: str, protocol: str = BOARD) -> str:
    systems = chart_systems(board, track.name, raw, protocol)
    higher = next((m.higher_is_better for m in track.metrics if m.key == rank_key), True)
    sections = []
    for axis in dict.fromkeys(c.axis for c in track.charts if c.kind == "by_axis"):
        decl = next(a for a in track.axes if a.key == axis)
        metric = rank_key if not decl.metrics or rank_key in decl.metrics else decl.metrics[0]
        # one pass over the systems per axis (not per value): the best per (value, rescored/reported)
        bests: dict[str, dict[bool, tuple[str, float] | None]] = {}
        for name, s in systems:
            kind = bool(s.get("reported"))
            for value, x in axis_metric(s, axis, metric).items():
                best = bests.get(value)
                if best is None:  # not setdefault: its default would be built for every (system, value)
                    best = bests[value] = {False: None, True: None}
                if x is not None and (best[kind] is None or (x > best[kind][1] if higher else x < best[kind][1])):
                    best[kind] = (name, x)
        values = list(decl.values) or sorted(bests)
        lines = []
        for value in values:
            best = bests.get(value, {False: None, True: None})
            if best[False] is None or best[True] is None:
                continue
            lead = (best[False][1] >= best[True][1]) == higher
            marks = {False: ' class="leader"' if lead else "", True: "" if lead else ' class="leader"'}
            cells = [f"<td{marks[k]}>{esc(short(best[k][0], 34))} {num(best[k][1])}</td>" for k in (False, True)]
            lines.append(f"<tr><th>{esc(value)}</th>{''.join(cells)}</tr>")
        if lines:
            label = track.metric(metric).label
            sections.append(
                f"<table class='leaders'><caption>Best per {esc(decl.label.lower())} ({esc(label)})</caption>"
                f"<tr><th></th><th>rescored</th><th>reported</th></tr>{''.join(lines)}</table>"
            )
    if not sections:
        return ""
    return f"<details class='leaders' open><summary>Who leads: rescored vs reported</summary>{''.join(sections)}</details>"
