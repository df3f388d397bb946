"""The System tab's views: one submission's details, its per-category and per-unit scores, its raw records.

No Gradio here: ui/tabs/system.py wires these to components, tests call them directly.
"""

from __future__ import annotations

import json

import pandas as pd

from ... import reported
from ...ranking import Entry
from ...service import Board
from ...tracks import TRACKS, Track
from .. import protocol_html
from ..format import ci_text, esc, link_html, num
from .common import judge_label, reported_row, visible_entry


def detail(board: Board, entry_id: str | None) -> tuple[str, pd.DataFrame, pd.DataFrame]:
    """(metadata HTML, per-category scores, per-unit scores) of one submission."""
    found = reported_row(board, entry_id)
    if found is not None:  # published figures: their source and every figure; no per-unit scores
        html, frame = reported.detail(*found, esc)
        return html, frame, pd.DataFrame()
    e = visible_entry(board, entry_id)
    if e is None:
        return "<p>Pick a system.</p>", pd.DataFrame(), pd.DataFrame()
    units = unit_frame(board, e)
    html = _meta_html(e)
    if board.rescoring(e):  # a page only reads: the rescoring is queued, the next view has the per-unit scores
        html += "<p><b>Per-unit scores are being rescored</b>; they show here in a moment.</p>"
    return html, _breakdown_frame(e), units


def _meta_html(e: Entry) -> str:
    s = e.summary
    track = TRACKS.get(s.track or "")
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
        ("Scored", esc(s.scored_at)),
        ("Metric version", esc(s.metric_version)),
        ("Judge", esc(judge_label(s.judge))),
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
    if s.overall:
        metrics = "".join(
            f"<tr><th>{esc(m.label)}</th><td>{num(s.overall.get(m.key))} <small>{ci_text(*(s.ci.get(m.key) or [None, None]))}</small></td></tr>"
            for m in (track.metrics if track else [])
            if m.key in s.overall
        )
        html += f'<table class="meta">{metrics}</table><p>{s.n} units scored, {s.missing} missing.</p>'
        html += protocol_html.side_by_side(track, s)  # the official script's protocol beside the board's
    if s.errors:
        items = "".join(f"<li><code>{esc(err)}</code></li>" for err in s.errors)
        html += f'<div class="errors"><b>{s.error_count or len(s.errors):,} problem(s):</b><ul>{items}</ul></div>'
    if s.warnings:
        items = "".join(f"<li>{esc(w)}</li>" for w in s.warnings[:20])
        html += f"<details><summary>{len(s.warnings)} warning(s)</summary><ul>{items}</ul></details>"
    ledger = s.judge_ledger
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
    track = TRACKS.get(e.summary.track or "")
    for axis, cells in e.summary.breakdowns.items():
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
    track = TRACKS.get(e.summary.track or "")
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
    track = TRACKS.get(e.summary.track or "")
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
