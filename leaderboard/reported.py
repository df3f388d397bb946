"""Reported results: figures that papers and public result repositories publish, shown beside rescored systems.

The files live in assets/reported/ (copied from their sources with their provenance fields; nothing recomputed).
Each track names its files and maps their keys onto its own metric and axis keys (`Track.reported_files`,
`Track.reported_rows`); this module reads the files, checks every row against the track's declarations at load
and turns the rows into board rows. A reported row is never ranked, has no CI, never enters a paired test and
never counts in "Rank (CI)": it only sits beside the rescored rows, marked, with its source.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .tracks import TRACKS, Track
from .tracks.base import ASSETS, Gold, ReportedRow

log = logging.getLogger(__name__)
REPORTED_DIR = ASSETS / "reported"
ID_PREFIX = "reported:"
MAX_FILE_BYTES = 1 << 20  # the shipped files are under 100 KB; anything larger is not one of them
LEGEND = (
    "Rescored rows are recomputed here from raw predictions (95% CI, rank). "
    "Rows marked reported are figures copied from a paper or results repository: source on hover, "
    "no CI, never ranked or tested."
)


class ReportedError(ValueError):
    """A reported file or row that does not fit its track's declarations (named precisely)."""


@dataclass
class Reported:
    """A track's reported rows against one gold, and what went wrong loading them (shown in About, logged)."""

    rows: list[ReportedRow]
    problem: str = ""


def row_id(track: Track, row: ReportedRow) -> str:
    """A stable id for links and pickers: the prefix, the track, the row's key as a slug."""
    return f"{ID_PREFIX}{track.name}:{re.sub(r'[^A-Za-z0-9._-]+', '-', row.key).strip('-')}"


def is_reported(entry_id) -> bool:
    return isinstance(entry_id, str) and entry_id.startswith(ID_PREFIX)


def read_files(track: Track, folder: Path = REPORTED_DIR) -> dict:
    out = {}
    for name in track.reported_files:
        path = folder / name
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ReportedError(f"{name}: larger than {MAX_FILE_BYTES:,} bytes")
        out[name] = json.loads(path.read_text(encoding="utf-8"))
    return out


def check(track: Track, rows: list[ReportedRow]) -> None:
    """Every row fits the track: known metric, axis and field keys, figures finite and in range, a cited source."""
    metrics = {m.key: m for m in track.metrics}
    axes = {a.key: a for a in track.axes}
    fields = {f.key for f in track.system_fields}
    seen: set[str] = set()
    for row in rows:
        rid = row_id(track, row)
        if rid in seen:
            raise ReportedError(f"{row.key}: two rows with the same id {rid}")
        seen.add(rid)
        if not row.name or set(row.system) - fields:
            raise ReportedError(f"{row.key}: no name, or system fields the track does not declare: {set(row.system) - fields}")
        src = row.source
        if not (src.title and src.where and src.licence and src.measured_on):
            raise ReportedError(f"{row.key}: the source needs a title, a table or file, a licence and what it measured")
        cells = [("overall", row.overall)]
        if row.chart_overall:
            cells.append(("chart", row.chart_overall))
        for axis, values in row.breakdowns.items():
            if axis not in axes:
                raise ReportedError(f"{row.key}: unknown axis {axis!r}")
            for value, figures in values.items():
                if axes[axis].values and value not in axes[axis].values:
                    raise ReportedError(f"{row.key}: unknown {axis} {value!r}")
                cells.append((f"{axis}:{value}", figures))
        for where, figures in cells:
            for key, value in figures.items():
                if key not in metrics:
                    raise ReportedError(f"{row.key} {where}: {key!r} is not a metric of the track")
                if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                    raise ReportedError(f"{row.key} {where} {key}: expected a number, got {value!r}")
                if not 0 <= value <= 1:
                    raise ReportedError(f"{row.key} {where} {key}: {value} is outside [0, 1]")
        for label, value, _unit in row.detail_overall:
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ReportedError(f"{row.key}: detail figure {label!r} is not a non-negative number: {value!r}")


_CACHE: dict[tuple, Reported] = {}
_LOCK = threading.Lock()


def for_track(track: Track, gold: Gold | None, folder: Path = REPORTED_DIR) -> Reported:
    """The track's reported rows against `gold` (read once per gold and version of the files)."""
    if not track.reported_files:
        return Reported([])
    try:
        stamps = tuple((folder / n).stat().st_mtime_ns for n in track.reported_files)
    except OSError as exc:
        return _failed(track, f"reported results not found: {Path(getattr(exc, 'filename', '') or '').name}")
    key = (track.name, getattr(gold, "sha256", ""), str(folder), stamps)
    with _LOCK:
        if key in _CACHE:
            return _CACHE[key]
    try:
        rows = track.reported_rows(read_files(track, folder), gold)
        check(track, rows)
        result = Reported(rows)
    except (ReportedError, ValueError, KeyError, TypeError, OSError) as exc:  # the board runs on without them
        result = _failed(track, f"reported results not shown: {type(exc).__name__}: {exc}"[:300])
    with _LOCK:
        _CACHE[key] = result
    return result


def _failed(track: Track, problem: str) -> Reported:
    log.error("%s: %s", track.name, problem)
    return Reported([], problem)


def find(entry_id: str, gold_of) -> tuple[Track, ReportedRow] | None:
    """(track, row) of a reported id; `gold_of(track_name)` gives the gold the rows are read against."""
    if not is_reported(entry_id):
        return None
    parts = entry_id[len(ID_PREFIX) :].split(":", 1)
    track = TRACKS.get(parts[0])
    if track is None or len(parts) != 2:
        return None
    for row in for_track(track, gold_of(track.name)).rows:
        if row_id(track, row) == entry_id:
            return track, row
    return None


# ---- what the board shows ------------------------------------------------------------------------------------
def hover(row: ReportedRow) -> str:
    """One paragraph: what the figures are and where they come from (a title attribute, a chart's hover)."""
    src = row.source
    parts = [
        f"Reported, not rescored: {src.title}",
        src.where,
        "official-script figures",  # what the source's own scoring script printed (SCORING.md, "Official scripts")
        f"licence: {src.licence}",
        f"measured on: {src.measured_on}",
    ]
    if row.note:
        parts.append(row.note)
    parts += [f"{k}: {v}" for k, v in row.computed.items() if ":" not in k]
    return "; ".join(parts)


def frame(track: Track, rows: list[ReportedRow], slice_: tuple[str, str] | None = None) -> pd.DataFrame:
    """Board rows (the columns of ranking.table) of reported rows: status `reported`, no rank, no CI."""
    records = []
    for row in rows:
        overall = row.overall if slice_ is None else row.breakdowns.get(slice_[0], {}).get(slice_[1], {})
        rec = {
            "id": row_id(track, row),
            "status": "reported",
            "flag": "",
            "flag_reason": "",
            "submitted": "",
            "user": "",
            "n": None,
            "missing": None,
            "judge": row.judge if any(track.metric(k).needs_judge for k in overall) else "",
            "judging": False,
            "errors": 0,
            "review": "",  # never in a pull request
        }
        for f in track.system_fields:
            value = row.system.get(f.key)
            rec[f.key] = "" if value is None else value if f.kind == "int" else str(value)
        rec["name"] = row.name
        for m in track.metrics:
            rec[m.key] = overall.get(m.key)
            rec[f"{m.key}:low"], rec[f"{m.key}:high"] = None, None
            how = row.computed.get(m.key if slice_ is None else f"{slice_[0]}:{slice_[1]}:{m.key}")
            if how and m.key in overall:
                rec[f"{m.key}:computed"] = how
        for c in track.extra_columns:
            if c.key in overall:
                rec[c.key] = overall[c.key]
        rec["rank"], rec["rank_ub"], rec["band_first"], rec["band_last"] = pd.NA, pd.NA, pd.NA, pd.NA
        rec["reported"] = True
        rec["source"] = hover(row)
        records.append(rec)
    return pd.DataFrame(records)


def merged(track: Track, ranked: pd.DataFrame, reported: pd.DataFrame, rank_by: str) -> pd.DataFrame:
    """Rescored rows (ranked, in their order) with reported rows placed among them by the ranking metric's value.

    Ranks and CI-aware ranks stay those of the rescored rows alone; a reported row without the metric goes after
    every row that has it, and unscored rescored rows (invalid, pending) stay last.
    """
    if reported.empty:
        return ranked.assign(reported=False, source="") if not ranked.empty else ranked
    if ranked.empty:
        both = reported
    else:
        both = pd.concat([ranked.assign(reported=False, source=""), reported], ignore_index=True)
    higher = next((m.higher_is_better for m in track.metrics if m.key == rank_by), True)
    value = pd.to_numeric(both[rank_by], errors="coerce")
    placed = ((both["status"] == "scored") | both["reported"]) & value.notna()
    tier = (~placed).astype(int) + (~placed & ~both["reported"]).astype(int)  # placed, reported without it, the rest
    order = both.assign(_tier=tier, _v=value, _pos=range(len(both))).sort_values(
        ["_tier", "_v", "_pos"], ascending=[True, not higher, True], na_position="last", kind="stable"
    )
    return order.drop(columns=["_tier", "_v", "_pos"]).reset_index(drop=True)


@dataclass
class ChartSummary:
    """What a chart builder reads of a reported row: the fields it reads of a result summary, and `reported`."""

    overall: dict
    breakdowns: dict
    system: dict
    reported: dict  # series, note, source
    sha256: str = ""  # a reported row is no submission


def chart_summary(track: Track, row: ReportedRow) -> ChartSummary:
    """What a chart builder reads of a system (the fields of a result summary it reads), marked as reported."""
    return ChartSummary(
        dict(row.chart_overall if row.chart_overall is not None else row.overall),
        row.breakdowns,
        row.system,
        {"series": row.series or "reported", "note": row.chart_note, "source": row.source.title},
    )


def _figure(value: float, unit: str = "") -> str:
    return f"{float(value)!r} {unit}".strip()


def detail(track: Track, row: ReportedRow, esc) -> tuple[str, pd.DataFrame]:
    """(metadata HTML, per-category figures) of a reported row: every figure exactly as the source gives it."""
    src = row.source
    link = f'<a href="{esc(src.url)}" target="_blank" rel="noopener noreferrer">{esc(src.url)}</a>' if src.url else ""
    meta = [
        ("System", esc(row.name)),
        ("Status", '<span class="reported-badge">reported</span> not rescored: no CI, no rank, no significance test'),
        ("Source", esc(src.title)),
        ("Table / file", esc(src.where)),
        ("Licence", esc(src.licence)),
        ("Measured on", esc(src.measured_on)),
    ]
    meta += [("Link", link)] if link else []
    meta += [("Note", esc(row.note))] if row.note else []
    for key, value in row.system.items():
        if key not in ("name", "link"):
            meta.append((esc(next((f.label for f in track.system_fields if f.key == key), key)), esc(value)))
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in meta)
    html = f'<table class="meta reported">{body}</table>'
    figures = [
        (m.label, _figure(row.overall[m.key]), row.computed.get(m.key, "as published"))
        for m in track.metrics
        if m.key in row.overall
    ]
    figures += [
        (label, _figure(value, unit), "as published" if "computed" not in label else "")
        for label, value, unit in row.detail_overall
    ]
    if row.chart_overall:
        figures += [
            (f"{track.metric(k).label} on the chart", _figure(v), row.chart_note)
            for k, v in row.chart_overall.items()
            if k not in row.overall or row.overall[k] != v
        ]
    cells = "".join(f"<tr><th>{esc(a)}</th><td>{esc(b)}</td><td><small>{esc(c)}</small></td></tr>" for a, b, c in figures)
    html += f'<table class="meta reported-figures">{cells}</table>'
    if not any(m.key == track.rank_by for m in track.metrics if m.key in row.overall):
        html += f"<p>No {esc(track.metric(track.rank_by).label)} headline: the source does not have it for this board's gold.</p>"
    if src.notes:
        html += (
            "<details><summary>Notes of the source</summary><ul>"
            + "".join(f"<li>{esc(n)}</li>" for n in src.notes)
            + "</ul></details>"
        )
    return html, breakdown_frame(track, row)


def breakdown_frame(track: Track, row: ReportedRow) -> pd.DataFrame:
    """Per category: the board's metrics, then the source's extra figures (detail only), exact values as text."""
    rows = []
    axes = list(dict.fromkeys([*row.breakdowns, *row.detail_breakdowns]))
    for axis in axes:
        label = next((a.label for a in track.axes if a.key == axis), axis)
        values = list(dict.fromkeys([*row.breakdowns.get(axis, {}), *row.detail_breakdowns.get(axis, {})]))
        for value in values:
            cell = {"Breakdown": label, "Value": value}
            for key, v in row.breakdowns.get(axis, {}).get(value, {}).items():
                how = row.computed.get(f"{axis}:{value}:{key}")
                cell[track.metric(key).label] = _figure(v) + (" (mean of the reported per-dataset values)" if how else "")
            for extra, v in row.detail_breakdowns.get(axis, {}).get(value, {}).items():
                cell[extra] = _figure(v)
            rows.append(cell)
    return pd.DataFrame(rows).fillna("")


def compare_frame(track: Track, a: dict, b: dict) -> tuple[pd.DataFrame, dict]:
    """Differences on the metrics both have (overall), and per category: no test, reported figures have no units.

    `a` and `b` are summaries (overall, breakdowns): a rescored system's or a reported row's.
    """
    rows = []
    for m in track.metrics:
        va, vb = a.get("overall", {}).get(m.key), b.get("overall", {}).get(m.key)
        if va is None or vb is None:
            continue
        rows.append({"Metric": m.label, "A": f"{va:.3f}", "B": f"{vb:.3f}", "A − B": f"{va - vb:+.3f}"})
    focus = track.rank_by
    cats: dict = {}
    for axis in track.axes:
        cells_a, cells_b = a.get("breakdowns", {}).get(axis.key, {}), b.get("breakdowns", {}).get(axis.key, {})
        for value in [v for v in cells_a if v in cells_b]:
            keys = [k for k in (focus, *(m.key for m in track.metrics)) if k in cells_a[value] and k in cells_b[value]]
            if keys:
                k = keys[0]
                cats.setdefault(axis.key, {})[value] = {
                    "a": cells_a[value][k],
                    "b": cells_b[value][k],
                    "diff": cells_a[value][k] - cells_b[value][k],
                    "metric": track.metric(k).label,
                }
    return pd.DataFrame(rows), cats


def about_markdown() -> str:
    """Every source of reported figures, with its licence, for the About tab (read from the files, any gold)."""
    lines = []
    for track in TRACKS.values():
        if not track.reported_files:
            continue
        try:
            rows = track.reported_rows(read_files(track), None)
        except (ReportedError, ValueError, KeyError, TypeError, OSError) as exc:
            lines.append(f"- {track.title}: reported results could not be read ({type(exc).__name__}).")
            continue
        if track.reported_notes:
            lines.append(f"\n**{track.title}.** {track.reported_notes}\n")
        sources: dict = {}
        for row in rows:
            sources.setdefault((row.source.title, row.source.licence, row.source.url), []).append(row.name)
        for (title, licence, url), names in sources.items():
            link = f" <{url}>" if url else ""
            lines.append(
                f"- **{track.title}**: {title}{link}. Licence: {licence}. Rows: {len(names)} ({', '.join(names[:4])}{', …' if len(names) > 4 else ''})."
            )
    return "\n".join(lines)
