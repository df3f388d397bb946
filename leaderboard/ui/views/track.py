"""A track tab's views: the ranked table of a view (TableView), its choices and filters, its CSV, its charts and
leaders, as plain data (DataFrames, strings, figures).

No Gradio here: ui/tabs/track.py wires these to components, tests call them directly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

from ... import ranking, reported
from ...ranking import BOARD, OFFICIAL
from ...reported import ChartSummary
from ...service import Board
from ...tracks import TRACKS, SystemField, Track
from .. import columns as cols
from .. import figures
from ..format import esc, num, short
from .common import ALL, page_rows, per_version, ranked, reported_rows, rows_wanted, track_entries


def protocol_note(track: Track, protocol: str, show_reported: bool = False) -> str:
    """What a table caption adds under the official protocol ("" under the board's): which scores these are, and,
    with reported rows shown, that they now compare like for like (reported figures are the scripts' own)."""
    if ranking.protocol_of(track, protocol) != OFFICIAL:
        return ""
    like = "; reported rows compare like for like" if show_reported and track.reported_files else ""
    return f"scores: official script{like}"


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


def axis_values(summary, axis: str):
    """The values of `axis` a summary has breakdowns for (its breakdowns' axis keys)."""
    return summary.breakdowns.get(axis, {})


def axis_metric(summary, axis: str, metric: str) -> dict:
    """{value: its `metric` (None when absent)} of a summary's breakdowns along `axis`."""
    return {value: scores.get(metric) for value, scores in summary.breakdowns.get(axis, {}).items()}


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
            v = e.summary.judge if key == "judge" else e.system.get(key)
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
    def from_controls(cls, track: Track, values, page: int, rows: bool = True) -> TableView:
        """The view from the values Gradio passes, in the tab's control order: rank_by, scores_on, search, each
        filter (`filter_fields`), columns, show_reported, rows (`rows` False: the CSV export, which has none),
        protocol. A caller that leaves trailing ones out gets their defaults: reported rows shown, a page of
        systems (`page`: the board's page size), the board's protocol (API callers from before a control was added)."""
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
            rows=rows_wanted(tail.get("rows"), page) if rows else None,
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


def table_frames(board: Board, track_name: str, columns: list[str] | None = None, **view) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(display frame, raw frame) of a track's board under a view (`filtered_table`'s keywords): every row."""
    return display_frames(TRACKS[track_name], filtered_table(board, track_name, **view), columns)


def table_page(board: Board, track_name: str, view: TableView) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(display frame, raw frame, every raw row) of the first `view.rows` systems of a view (None: a page).

    Search and filters select among all rows first, then the page is cut, so a search finds a system ranked
    9,000th; only the page is formatted, so the cost does not grow with the board.
    """
    every = view_rows(board, track_name, view)
    page = first_systems(every, rows_wanted(view.rows, page_rows(board))).reset_index(drop=True)
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
    shades = band_shades(records) if records else [""] * len(shown)
    # reported rows look different; the systems of a tie band share a shade
    styling = [[REPORTED_STYLE if m else shade] * len(disp.columns) for m, shade in zip(marked, shades)]
    return {
        "headers": list(disp.columns),
        "data": data,
        "metadata": {"display_value": shown, "styling": styling} if shown else None,
    }


REPORTED_STYLE = "background-color: #f3f0e8; font-style: italic;"
# Tie bands of several systems, shaded in turn with two tints (two bands in a row stay apart); a system alone in
# its band is not shaded.
BAND_STYLES = ("background-color: #e6f0f9;", "background-color: #f4f8fc;")


def band_shades(records: list[dict]) -> list[str]:
    """The style of each row for its tie band: a tint per band of several systems, alternating; "" otherwise."""
    out, seen = [], 0
    last_band = None
    for r in records:
        band = (cols.number(r.get("band_first")), cols.number(r.get("band_last")))
        if band[0] is None or band[1] is None or band[1] <= band[0]:
            out.append("")
            continue
        if band != last_band:
            seen, last_band = seen + 1, band
        out.append(BAND_STYLES[(seen - 1) % 2])
    return out


def column_widths(disp: pd.DataFrame, track: Track) -> list[str]:
    """Narrow rank columns, a wide system column, the rest sized to fit (columns.py declares each width)."""
    return [c.width for c in shown_columns(disp, track)]


def datatypes(disp: pd.DataFrame, track: Track) -> list[str]:
    """HTML only for the cells of our own markup (columns.Column.html: numbers, our own tags, escaped attributes);
    everything else is plain text, submissions' text always. Not markdown: the browser ran each such cell through
    its markdown renderer and sanitiser as it drew the table, the first table on the page slower for it."""
    return ["html" if c.html else "str" for c in shown_columns(disp, track)]


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
        pick = next(((n, s) for n, s in systems if s.sha256[:12] == pair_system and c.axis in s.breakdowns), None)
        pick = pick or next(((n, s) for n, s in systems if c.axis in s.breakdowns), None)
        if pick is None:
            return figures.message_figure(c.empty or f"No system has results per {decl.label.lower()} yet.")
        return figures.safe(figures.pair_heatmap, track, pick[0], pick[1], c.axis, key, c)
    if c.kind == "tradeoff":
        return figures.safe(figures.tradeoff, track, systems, c.x, c.y, c.group, c)
    return figures.message_figure(f"unknown chart kind {c.kind}")


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
            kind = isinstance(s, ChartSummary)
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
