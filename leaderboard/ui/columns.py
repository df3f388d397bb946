"""The columns of a track's table, declared once: built from its metrics, system fields and extra columns, plus the
board's own fixed columns (Rank, Rank (CI), Tie band, System, Covered, Missing, Judge, Submitted, Status, Id).

A column is identified by its key everywhere (checkbox values, permalinks, API values); its label is what the
page shows. Labels are still accepted as input for links and API calls made before keys were used.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from pandas import NA as _NA

from ..tracks import Metric, Track
from ..tracks.base import TEXT_LIMITS, TableColumn
from .format import ci_text, esc, num

Row = dict  # one row of board.table, as a record


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    kind: str  # rank | text | metric | number
    format: Callable[[Row], str]  # the cell as shown
    sort_key: Callable[[Row], float | None] | None = None  # what the browser sorts by; None: the shown text
    shown: bool = True  # among the default columns
    optional: bool = True  # the user may hide it (Rank and System always show)
    width: str = "130px"
    # Drawn as HTML (views.datatypes): only cells of our own markup (a metric's CI in smaller type, a reported
    # row's badge), never text from submissions. A plain cell costs the browser less to draw.
    html: bool = False


def missing(value) -> bool:
    return value is None or value is _NA or (isinstance(value, float) and math.isnan(value))


def number(value) -> float | None:
    if missing(value):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def judge_label(name: str) -> str:
    return f"{name} (offline approximation, not an LLM judge)" if name.startswith("lexical") else name


def metric_cell(row: Row, m: Metric) -> str:
    value = row.get(m.key)
    if missing(value):
        if m.needs_judge and row.get("status") == "scored":
            return "judging…" if row.get("judging") else "not judged"
        return "–"
    text = f"{value:.1%}" if m.percent else num(value)
    if row.get("reported") is True and row.get(f"{m.key}:computed"):  # a mean computed here from published figures
        text += f' <sup title="{esc(row[f"{m.key}:computed"])}">mean</sup>'
    ci = ci_text(row.get(f"{m.key}:low"), row.get(f"{m.key}:high"))
    if ci:
        text += f" <sub>{ci}</sub>"  # numbers only: no submitted text ever reaches an HTML cell
    if m.needs_judge and str(row.get("judge", "")).startswith("lexical"):
        text += " <sup>≈</sup>"
    return text


def _review(row: Row) -> str:
    """The row's review note ("pending review (PR #n)"), "" when none (reported rows have no such column: NaN)."""
    review = row.get("review")
    return review if isinstance(review, str) else ""


def _system_cell(row: Row) -> str:
    """The name, with a badge while it waits in a pull request (plain text: the cell is not markdown)."""
    return str(row["name"]) + (" ⏳ pending review" if _review(row) else "")


def reported_badge(row: Row) -> str:
    """A reported row's Rank cell: a badge instead of a rank, its source on hover (text from our own files, escaped)."""
    return f'<span class="reported-badge" title="{esc(row.get("source", ""))}">reported</span>'


def status_cell(row: Row) -> str:
    status = row["status"]
    if status == "invalid":
        status = f"invalid ({row['errors']} error{'s' if row['errors'] != 1 else ''})"
    elif row.get("judging"):
        status = "scored; judging answers…"
    if _review(row):
        status += f"; {_review(row)}"
    if row.get("flag") == "flagged":
        status += " ⚑ flagged" + (f": {row['flag_reason']}" if row.get("flag_reason") else "")
    return status


def _covered(row: Row) -> str:
    n, gone = row.get("n"), row.get("missing")
    return "" if missing(n) or missing(gone) else f"{int(n) - int(gone)} / {int(n)}"


def _covered_key(row: Row) -> float | None:
    n, gone = number(row.get("n")), number(row.get("missing"))
    return None if n is None or gone is None else n - gone


def _int_text(value) -> str:
    return "" if missing(value) else str(int(value))


def _metric_column(m: Metric) -> Column:
    # wide enough for the value and its CI on one line
    width = "180px" if m.has_ci else "110px"
    return Column(m.key, m.label, "metric", lambda r: metric_cell(r, m), lambda r: number(r.get(m.key)), width=width, html=True)


def _extra_column(c: TableColumn) -> Column:
    def fmt(row: Row) -> str:
        v = row.get(c.key)
        return "" if missing(v) else f"{v:.{c.digits}%}" if c.percent else num(v, c.digits)

    return Column(c.key, c.label, "number", fmt, lambda r: number(r.get(c.key)), shown=c.shown)


def band_text(row: Row) -> str:
    """ "1–3" for a system whose tie band spans several ranks (ranking.tie_bands), "" alone in its band."""
    first, last = number(row.get("band_first")), number(row.get("band_last"))
    return f"{int(first)}–{int(last)}" if first is not None and last is not None and last > first else ""


def field_columns(track: Track) -> list:
    """System fields shown as columns: not the name (that is System), links or long free text."""
    return [f for f in track.system_fields if f.key != "name" and f.kind != "url" and f.key not in TEXT_LIMITS]


def columns(track: Track) -> list[Column]:
    """Every column the track's table can show, in display order."""
    out = [
        Column(
            "rank",
            "Rank",
            "rank",
            lambda r: reported_badge(r) if r.get("reported") is True else _int_text(r.get("rank")),
            lambda r: number(r.get("rank")),
            optional=False,
            width="84px",  # room for a reported row's "reported" badge
            html=True,
        ),
        Column(
            "rank_ci",
            "Rank (CI)",
            "rank",
            lambda r: f"≥{int(r['rank_ub'])}" if number(r.get("rank_ub")) else "",
            lambda r: number(r.get("rank_ub")),
            width="92px",
        ),
        # ranks whose intervals overlap share a band (the table shades each band too)
        Column("band", "Tie band", "rank", band_text, lambda r: number(r.get("band_first")), width="92px"),
        Column("system", "System", "text", _system_cell, optional=False, width="260px"),
    ]
    out += [Column(f.key, f.label, "text", lambda r, k=f.key: str(r.get(k, "")), shown=f.shown) for f in field_columns(track)]
    out += [_metric_column(m) for m in track.metrics]
    out += [_extra_column(c) for c in track.extra_columns]
    judged = any(m.needs_judge for m in track.metrics)
    out += [
        Column("covered", "Covered", "number", _covered, _covered_key),  # units answered / units scored
        Column(
            "missing", "Missing", "number", lambda r: _int_text(r.get("missing")), lambda r: number(r.get("missing")), shown=False
        ),
        Column(
            "judge", "Judge", "text", lambda r: str(r.get("judge", "")).replace("none", ""), shown=judged
        ),  # judged tracks show who judged, always
        Column("submitted", "Submitted", "text", lambda r: str(r.get("submitted", ""))[:10]),
        Column("status", "Status", "text", status_cell, width="150px"),
        # the submission's short content hash: citable, and what a row click opens
        Column("id", "Id", "text", lambda r: str(r["id"])),
    ]
    return out


def column_map(track: Track) -> dict[str, Column]:
    return {c.key: c for c in columns(track)}


def optional_choices(track: Track) -> list[tuple[str, str]]:
    """(label, key) of the columns a visitor may show or hide."""
    return [(c.label, c.key) for c in columns(track) if c.optional]


def default_keys(track: Track) -> list[str]:
    return [c.key for c in columns(track) if c.optional and c.shown]


def keys_of(track: Track, wanted) -> list[str]:
    """Column keys from keys or labels (older permalinks and API callers used labels); unknown names dropped."""
    by_label = {c.label: c.key for c in columns(track)}
    keys = {c.key for c in columns(track)}
    out = []
    for w in wanted or []:
        key = w if w in keys else by_label.get(w)
        if key is not None and key not in out:
            out.append(key)
    return out


def metric_key(track: Track, wanted: str | None, default: str | None = None) -> str:
    """A metric's key from its key or its label (older permalinks and API callers used labels)."""
    return next((m.key for m in track.metrics if wanted in (m.key, m.label)), default or track.rank_by)
