"""The Compare tab's views: two systems side by side (a paired test when both are rescored, the differences
alone when one is a reported row).

No Gradio here: ui/tabs/compare.py wires these to components, tests call them directly.
"""

from __future__ import annotations

import pandas as pd

from ... import reported
from ...service import BeingRescored, Board
from ...tracks import TRACKS
from .. import figures
from ..format import ci_text, esc, num, p_text, short
from .common import judge_label, reported_row, visible_entry
from .system import unit_record


def compare_view(board: Board, a_id: str | None, b_id: str | None, track: str | None = None):
    """(summary markdown, metrics frame, per-category figure, top-differences frame). `track`: the track the two
    must be on (the Compare tab's choice, /compare's `track`); None: whichever track they share."""
    if not a_id or not b_id:
        return "Pick two systems of the same track.", pd.DataFrame(), figures.message_figure("Pick two systems."), pd.DataFrame()
    if a_id == b_id:
        return (
            "Pick two different systems.",
            pd.DataFrame(),
            figures.message_figure("Pick two different systems."),
            pd.DataFrame(),
        )
    if track in TRACKS and {_track_of(board, a_id), _track_of(board, b_id)} - {track, None}:
        msg = f"Pick two systems of the {TRACKS[track].title} track."
        return esc(msg), pd.DataFrame(), figures.message_figure(msg), pd.DataFrame()
    if reported.is_reported(a_id) or reported.is_reported(b_id):
        return reported_compare_view(board, a_id, b_id)
    if visible_entry(board, a_id) is None or visible_entry(board, b_id) is None:  # unknown, withdrawn or hidden
        msg = "Unknown system: pick again."
        return msg, pd.DataFrame(), figures.message_figure(msg), pd.DataFrame()
    try:
        c = board.compare(a_id, b_id)
    except BeingRescored as exc:  # a page only reads: the rescoring is queued, the next view has it
        msg = f"The per-unit scores of {' and '.join(exc.names)} are being rescored; compare again in a moment."
        return esc(msg), pd.DataFrame(), figures.message_figure(msg), pd.DataFrame()
    except (KeyError, ValueError) as exc:  # a stale pick (other track, withdrawn submission): say so
        msg = "Pick two systems of the same track." if isinstance(exc, ValueError) else "Unknown system: pick again."
        return msg, pd.DataFrame(), figures.message_figure(msg), pd.DataFrame()
    a, b = c["a"], c["b"]
    rows = []
    for m in c["metrics"]:
        label = m.label
        if TRACKS[a.summary.track].metric(m.key).needs_judge:
            label += f" (judge: {judge_label(a.summary.judge)})"
        rows.append(
            {
                "Metric": label,
                "A": num(m.a),
                "B": num(m.b),
                "A − B": "" if m.diff is None else f"{m.diff:+.3f}",
                "95% CI of A − B": ci_text(*m.ci) if m.ci else "",
                "p": "" if m.p_value is None else p_text(m.p_value),
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


def _track_of(board: Board, entry_id: str) -> str | None:
    """The track of a visible submission or a reported row, None for an unknown id (said apart, as unknown)."""
    found = reported_row(board, entry_id)
    if found is not None:
        return found[0].name
    e = visible_entry(board, entry_id)
    return e.summary.track if e is not None else None


def _compared(board: Board, entry_id: str) -> tuple[str, str, dict, bool] | None:
    """(track name, name, its figures {"overall", "breakdowns"}, reported?) of a system to compare: a visible
    rescored one or a reported row."""
    found = reported_row(board, entry_id)
    if found is not None:
        track, row = found
        return track.name, row.name, {"overall": row.overall, "breakdowns": row.breakdowns}, True
    e = visible_entry(board, entry_id)
    if e is None or e.status != "scored":
        return None
    return e.summary.track, e.name, {"overall": e.summary.overall, "breakdowns": e.summary.breakdowns}, False


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
