"""The HTML fragments of the page (header, status line, hints, submission results): plain strings, no Gradio.

Everything that came from a submission or a server path goes through `esc`.
"""

from __future__ import annotations

import time

from ..judge.base import batch_status
from ..ranking import BOARD, OFFICIAL, protocol_of
from ..reported import LEGEND
from ..service import Board
from ..tracks import Track
from .format import ci_text, esc, num, p_text

TITLE = "Open RAG Leaderboard"
TAGLINE = "Retrieval-augmented generation over real documents: every number recomputed from raw predictions."


def header() -> str:
    return f'<header class="board-head"><h1>{esc(TITLE)}</h1><p>{esc(TAGLINE)}</p></header>'


def hint(text: str) -> str:
    return f'<p class="hint">{text}</p>'


def track_hint(track: Track) -> str:
    return hint(
        f"{esc(track.description)} Sort any column from the ⋮ menu of its header; "
        "“Rank (CI)” is the best rank the 95% intervals allow; a “Tie band” groups the ranks whose intervals overlap."
    )


COMPARE_HINT = hint(
    "Pick two systems of one track: every metric with both values, the difference, its 95% CI "
    "and a paired significance test over the units both answered. A reported system (published figures) "
    "can be set against a rescored one: differences only, no significance test."
)
SUBMIT_HINT = hint(
    "Upload one file (.json, .jsonl, optionally .gz). It is validated first: an invalid file is "
    "never stored, and you see every problem. A valid one is stored in the submissions repository and "
    "rescored from its raw predictions."
)


def reported_legend(track: Track | None = None, protocol: str = BOARD) -> str:
    """The one-line legend of a track with reported rows: rescored vs reported, and (a track whose board differs
    from its benchmark's script) which scores the rescored rows show: under the official script's, like for like."""
    text = LEGEND
    if track is not None and track.deviations:
        text += (
            " Scores: official script: rescored rows are scored as the benchmark's own script scores them, so they "
            "now compare like for like with the reported rows."
            if protocol_of(track, protocol) == OFFICIAL
            else " Reported rows are official-script figures; the rescored rows show the board's scores (choose "
            "Scores: official script to compare like for like)."
        )
    return f'<p class="reported-legend"><span class="reported-badge">reported</span> {esc(text)}</p>'


def _figure(value: float, percent: bool) -> str:
    return f"{value:.1%}" if percent else num(value)


def _lead_card(lead, with_reported: bool) -> str:
    """One metric's card of the strip (views.Leader): the leader, its ties and (`with_reported`: the view shows
    reported rows) the best reported figure."""
    tag = ' <span class="lead-tag">ranks the table</span>' if lead.ranks else ""
    head = f'<span class="lead-metric">{esc(lead.label)}</span>{tag}'
    reported = ""
    if lead.reported is not None:
        r = lead.reported
        reported = (
            f'<span class="lead-reported" title="{esc(r.source)}"><span class="reported-badge">reported</span> best: '
            f'<span class="lead-rname">{esc(r.name)}</span> {_figure(r.value, lead.percent)}</span>'
        )
    last = f'<div class="lead-line">{reported or "no reported figure"}</div>' if with_reported else ""
    if lead.id is None:
        top = '<span class="lead-none">no rescored system has it yet</span>'
        return f'<div class="lead-card" data-metric="{esc(lead.key)}"><div class="lead-line">{head} {top}</div>{last}</div>'
    ci = ci_text(lead.low, lead.high) if lead.low is not None else ""
    ci_html = f" <sub>{ci}</sub>" if ci else ""
    top = (
        f'<b class="lead-name" title="{esc(lead.name)}">{esc(lead.name)}</b> '
        f'<span class="lead-value">{_figure(lead.value, lead.percent)}</span>{ci_html}'
    )
    if lead.tied:
        names = ", ".join(lead.tied_names) + (", …" if lead.tied > len(lead.tied_names) else "")
        ties = f'<span title="{esc(names)}">tied with {lead.tied} of {lead.systems - 1} others</span>'
    else:
        ties = f"ahead of all {lead.systems - 1} others" if lead.systems > 1 else "the only system"
    ties_html = f'<span class="lead-ties">{ties} <i>({esc(lead.criterion)})</i></span>'
    paired = ""
    if lead.paired_p is not None:
        verdict = "significant" if lead.paired_significant else "not significant"
        paired = (
            f'<span class="lead-paired" title="paired bootstrap over the units both answered, against {esc(lead.runner_up)}">'
            f"vs #2: paired p {p_text(lead.paired_p)}, {verdict}</span>"
        )
    line = " · ".join(part for part in (ties_html, paired) if part)
    return (
        f'<div class="lead-card{" ranks" if lead.ranks else ""}" data-metric="{esc(lead.key)}">'
        f'<div class="lead-line">{head} {top}</div><div class="lead-line">{line}</div>{last}</div>'
    )


def leaders_strip(strip) -> str:
    """The leaders strip above a track's table (a views.Strip): one card per metric; names are escaped."""
    if not strip.leaders:
        return ""
    scope = f'<span class="lead-scope">{esc(strip.scope)}</span>' if strip.scope else ""
    official = '<span class="lead-scope">official script</span>' if strip.protocol == OFFICIAL else ""
    cards = "".join(_lead_card(lead, strip.with_reported) for lead in strip.leaders)
    return f'<div class="lead-strip" role="region" aria-label="Who leads">{scope}{official}{cards}</div>'


def leaders_placeholder(labels: list[str], with_reported: bool) -> str:
    """The strip's cards before their figures are in: the metrics' labels, the cards' height kept."""
    rest = '<div class="lead-line">…</div>' * (2 if with_reported else 1)  # as many lines as a card has
    cards = "".join(
        f'<div class="lead-card pending"><div class="lead-line"><span class="lead-metric">{esc(label)}</span></div>{rest}</div>'
        for label in labels
    )
    return f'<div class="lead-strip" role="region" aria-label="Who leads">{cards}</div>'


def compare_summary(text: str) -> str:
    """`text` is views.compare_view's summary: already escaped."""
    return f'<p class="compare-summary">{text}</p>'


def error(text: str) -> str:
    return f'<div class="errors">{esc(text)}</div>'


def banner(text: str) -> str:
    return f'<div class="banner">{esc(text)}</div>'


def status_html(board: Board) -> str:
    st = board.status()
    gold = " · ".join(f"{name}: {label}" for name, label in (st.get("gold") or {}).items())
    parts = [f'<span class="asof">{esc(st["data_as_of"])} · judge: {esc(st["judge"])}</span>']
    parts += [f'<span class="gold"> · gold: {esc(gold)}</span>'] if gold else []
    if st["banner"]:
        parts.append(f'<div class="banner" role="alert">{esc(st["banner"])}</div>')
    parts += [f'<div class="banner notice" role="status">{esc(st["notice"])}</div>'] if st.get("notice") else []
    for entry_id, p in list(board.judge_progress.items()):
        e = board.entry(entry_id)
        if e is not None and p.batch_id and p.lines_total:  # batch mode: the batch being polled, its lines, its wait
            batch = batch_status(p.batch_id, p.lines_done, p.lines_total, p.batch_since, p.batch_waiting, time.time())
            parts.append(
                f'<div class="judging">Answers of {esc(e.name)}: judging: {esc(batch)} '
                f'<progress value="{int(p.lines_done)}" max="{int(p.lines_total)}"></progress></div>'
            )
        elif e is not None and p.total:
            parts.append(
                f'<div class="judging">Judging answers of {esc(e.name)}: '
                f'<progress value="{int(p.done)}" max="{int(p.total)}"></progress> {int(p.done)}/{int(p.total)}</div>'
            )
    return "".join(parts)


def submission_status(status, entry, track: Track | None) -> str:
    """What a submitter sees: the outcome, every problem, and the scores when the file was scored at once."""
    head = f'<p class="submit-{esc(status.state)}"><b>{esc(status.state.replace("_", " "))}</b>: {esc(status.message)}</p>'
    if status.errors:
        items = "".join(f"<li><code>{esc(e)}</code></li>" for e in status.errors)
        head += f'<div class="errors"><ul>{items}</ul></div>'
    if status.ok and status.file is not None:
        if entry is not None and entry.status == "scored" and track is not None:
            cells = "".join(
                f"<tr><th>{esc(m.label)}</th><td>{num(entry.summary.overall.get(m.key))}</td></tr>"
                for m in track.metrics
                if m.key in entry.summary.overall
            )
            head += (
                f"<p>Scored: submission <code>{esc(entry.id)}</code>"
                f"{' (answers are being judged)' if entry.judging else ''}.</p><table class='meta'>{cells}</table>"
            )
        elif entry is not None:
            head += f"<p>Status: {esc(entry.status)}.</p>"
    return head
