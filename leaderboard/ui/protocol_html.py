"""The official-script protocol on the page: a submission's scores under both protocols side by side, the track's
declared deviations and their effect on the file (the System tab), and the About tab's list of deviations.

Everything is rendered from the track's declaration (`Track.deviations`) and the stored summary; numbers come from
the summary only, never recomputed here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ..results import Protocol
from ..tracks import Track
from .format import ci_text, esc, num


def _number(value) -> float | None:
    """A finite number of a summary, else None (a summary is read from the results cache: not trusted blindly)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def _ci(ci: Mapping, key: str) -> str:
    bounds = ci.get(key) if isinstance(ci, Mapping) else None
    if not isinstance(bounds, (list, tuple)) or len(bounds) != 2:
        return ""
    return ci_text(_number(bounds[0]), _number(bounds[1]))


def _metric_label(track: Track, key: str) -> str:
    return next((m.label for m in track.metrics if m.key == key), key)


def side_by_side(track: Track | None, summary) -> str:
    """Both protocols' headline numbers, their difference, the declared deviations and (when the summary carries
    them) each one's effect on this file; "" for a track without deviations or a summary without scores."""
    if track is None or not track.deviations or summary.status != "scored":
        return ""
    official = summary.official or Protocol()
    board_overall, official_overall = summary.overall, official.overall
    rows = []
    for m in track.metrics:
        b, o = _number(board_overall.get(m.key)), _number(official_overall.get(m.key))
        if b is None and o is None:
            continue
        diff = "" if b is None or o is None else f"{b - o:+.3f}"
        judged = " (judged: one protocol)" if m.needs_judge else ""
        rows.append(
            f"<tr><th>{esc(m.label)}{judged}</th>"
            f"<td>{num(b)} <small>{_ci(summary.ci, m.key)}</small></td>"
            f"<td>{num(o)} <small>{_ci(official.ci, m.key)}</small></td><td>{diff}</td></tr>"
        )

    def count(part, key: str) -> str:
        value = getattr(part, key)
        return f"{value:,}" if type(value) is int else "–"

    rows.append(
        f"<tr><th>units scored / missing</th><td>{count(summary, 'n')} / {count(summary, 'missing')}</td>"
        f"<td>{count(official, 'n')} / {count(official, 'missing')}</td><td></td></tr>"
    )
    table = (
        '<table class="meta protocols"><caption>Scores: board and official script</caption>'
        "<tr><th></th><th>board</th><th>official script</th><th>board − official</th></tr>" + "".join(rows) + "</table>"
    )
    return table + deviations_table(track, summary.deviations)


def _effects(stored) -> dict[str, dict[str, float]]:
    """{deviation name: {metric key: delta}} of a summary's "deviations" (a list of {"name", "effect"}); bad items
    are left out."""
    out: dict[str, dict[str, float]] = {}
    for item in stored if isinstance(stored, list) else []:
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            continue
        effect = item.get("effect") if isinstance(item.get("effect"), Mapping) else {}
        out[item["name"]] = {str(k): v for k, v in effect.items() if _number(v) is not None}
    return out


def deviations_table(track: Track, stored=None) -> str:
    """The track's declared deviations in measuring order; an "effect on this file" column when `stored` (a
    summary's "deviations") has them."""
    effects = _effects(stored)
    head = "<tr><th>difference</th><th>the script</th><th>the board</th><th>why</th>"
    head += "<th>effect on this file (board − official)</th></tr>" if effects else "</tr>"
    lines = []
    for d in track.deviations:
        cells = [f"<code>{esc(d.name)}</code>", esc(d.script), esc(d.board), esc(d.why)]
        if effects:
            shown = effects.get(d.name, {})
            cells.append(", ".join(f"{esc(_metric_label(track, k))} {v:+.3f}" for k, v in shown.items()) or "–")
        lines.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (
        f'<table class="meta deviations"><caption>Where the board differs from the benchmark\'s own script '
        f"({len(track.deviations)})</caption>{head}{''.join(lines)}</table>"
    )


NO_DEVIATIONS = (
    "No difference from the benchmark's own script is declared: this track's board protocol is its script's, and "
    "both choices of *Scores* show the same numbers."
)


def about_markdown(track: Track) -> str:
    """The About tab's paragraph on a track's deviations, from its declaration."""
    if not track.deviations:
        return NO_DEVIATIONS
    items = "\n".join(
        f"{i}. `{d.name}`. The script: {_sentence(d.script)} The board: {_sentence(d.board)} Why: {_sentence(d.why)}"
        for i, d in enumerate(track.deviations, 1)
    )
    return (
        "Where the board differs from the benchmark's own script, in the order their effects are measured (the "
        "*Scores: official script* choice scores every system the script's way; reported rows are the script's "
        f"figures):\n\n{items}"
    )


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?", ")")) else text + "."
