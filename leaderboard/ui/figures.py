"""Plotly figure builders, one per chart kind a track can declare (tracks/base.py Chart).

Builders take plain data (rows of the board table, result summaries) and
return figures; `safe` turns any failure into a figure that says so, so one
broken chart never breaks the page. Every label from a submission goes
through `esc`: Plotly reads a subset of HTML in labels.
"""

from __future__ import annotations

import functools
import logging
import secrets
import threading
from collections.abc import Callable

import plotly.graph_objects as go
import plotly.io as pio

from ..reported import ChartSummary
from ..tracks import Track
from ..tracks.base import Chart
from .format import PALETTE, esc

log = logging.getLogger(__name__)
MAX_SERIES = 8  # more bars per group stop being readable; the best-ranked systems are drawn
MAX_LABELS = 12  # scatter points beyond the best-ranked few get a hover label only, not a printed one


_TEMPLATE_LOCK = threading.Lock()


def template() -> go.layout.Template:
    """plotly_white with the defaults of the trace types drawn here only. The named template brings 24 trace types'
    defaults, copied into every figure and sent with it: half of a figure's build (~7 of 14 ms) and of its JSON.
    Built at the first chart, not at import (~0.1 s: start-up draws no chart). Built once under a lock: the page's
    first charts are drawn in several threads at once, and plotly's lazily loaded named templates are not safe to
    build concurrently (a chart failed with "Invalid value" when two did)."""
    with _TEMPLATE_LOCK:
        return _template()


@functools.cache
def _template() -> go.layout.Template:
    white = pio.templates["plotly_white"]
    return go.layout.Template(layout=white.layout, data={kind: white.data[kind] for kind in ("bar", "scatter", "heatmap")})


HEIGHT = 420
# What the height of a chart is reckoned from (`_height`): the plot area keeps PLOT_MIN_PX, and below it go the x
# labels and the legend, which wraps into rows at the width a desktop page gives a chart (a narrower screen wraps
# it into more rows, which plotly then fits by shrinking the plot area).
PLOT_MIN_PX, CHART_WIDTH_PX, CHAR_PX, LEGEND_ROW_PX = 260, 1000, 6.5, 20


def _height(fig: go.Figure) -> int:
    """The chart's height: HEIGHT, or more when its legend rows and its category labels need it.

    Plotly tilts category labels that do not fit side by side (by 30 degrees: about half their length in height),
    and places the legend below them: a fixed height squeezed the plot area to a strip (16 systems' bars over 8
    dataset names)."""
    names = [str(t.name) for t in fig.data if t.name and t.showlegend is not False]
    cats = {str(x) for t in fig.data if t.type == "bar" and t.x is not None for x in t.x if isinstance(x, str)}
    longest = max(map(len, cats), default=0)
    labels = 20 if longest * CHAR_PX * len(cats) <= CHART_WIDTH_PX else int(longest * CHAR_PX / 2) + 14
    per_row = max(1, int(CHART_WIDTH_PX // (40 + CHAR_PX * max(map(len, names), default=0))))
    rows = -(-len(names) // per_row) if len(names) > 1 else 0
    return max(HEIGHT, 50 + PLOT_MIN_PX + labels + rows * LEGEND_ROW_PX + 30)


def _layout(fig: go.Figure, title: str, **kw) -> go.Figure:
    layout = {
        "title": {"text": esc(title), "font": {"size": 15}},
        "template": template(),
        "colorway": list(PALETTE),
        "margin": {"l": 50, "r": 20, "t": 50, "b": 50},
        "height": _height(fig),
        # At the foot of the figure, not at a fraction of the plot area under it: plotly then keeps the x labels
        # (tilted when long) clear of it (at y=-0.25 of the plot, long dataset names ran under the legend).
        "legend": {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom"},
        "font": {"family": "system-ui, sans-serif", "size": 12},
    }
    fig.update_layout(**{**layout, **kw})
    return fig


def message_figure(text: str) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text=esc(text), showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper", font={"size": 14})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return _layout(fig, "", height=240)


def with_note(fig: go.Figure, note: str) -> go.Figure:
    """`fig` with a note in its top right corner (e.g. "top 15 of 9,873 shown" when a chart draws the top systems only)."""
    if note:
        fig.add_annotation(
            text=esc(note), showarrow=False, x=1, y=1.08, xref="paper", yref="paper", xanchor="right", font={"size": 11}
        )
    return fig


OFFICIAL_SUBTITLE = "Scores: official script"
LIKE_FOR_LIKE = "rescored and reported rows compare like for like"
BOARD_SUBTITLE = "Scores: board · reported rows are official-script figures"


def with_protocol(fig: go.Figure, official: bool, reported: bool) -> go.Figure:
    """`fig` with a subtitle saying which scores it draws (a track whose board differs from its script): under the
    official script's, that its reported rows (the scripts' own figures) compare like for like."""
    if official:
        text = OFFICIAL_SUBTITLE + (f": {LIKE_FOR_LIKE}" if reported else "")
    elif reported:
        text = BOARD_SUBTITLE
    else:
        return fig
    top = max(fig.layout.margin.t or 0, 72)
    fig.update_layout(title_subtitle_text=esc(text), title_subtitle_font_size=11, margin_t=top)
    return fig


def safe(builder: Callable[..., go.Figure], *args, **kwargs) -> go.Figure:
    try:
        return builder(*args, **kwargs)
    except Exception:  # one failing chart shows a message, never breaks the page (nor names the exception)
        ref = secrets.token_hex(3)
        log.exception("chart %s failed (ref %s)", getattr(builder, "__name__", builder), ref)
        return message_figure(f"This chart could not be drawn (ref {ref}); the maintainers can find it in the logs.")


def _label(track: Track, key: str) -> str:
    return next((m.label for m in track.metrics if m.key == key), key)


def _axis_label(track: Track, axis: str) -> str:
    return next((a.label for a in track.axes if a.key == axis), axis).lower()


NO_CHART = Chart("", "")  # a builder called without its declaration: generic wording only
REPORTED_MARK = " (reported)"  # after a reported system's name in legends and hovers


def _reported(summary) -> dict | None:
    """A reported row's chart info (series, note, source), or None for a rescored system (a results.Summary)."""
    return summary.reported if isinstance(summary, ChartSummary) else None


def _rescored_only(systems: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    return [(n, s) for n, s in systems if not _reported(s)]


def _reported_hover(summary: dict) -> str:
    info = _reported(summary) or {}
    note = f"<br>{esc(info['note'])}" if info.get("note") else ""
    return f"<br>reported, not rescored (official-script figures): {esc(info.get('source', ''))}{note}"


def by_axis(track: Track, systems: list[tuple[str, dict]], axis: str, metric: str) -> go.Figure:
    """Grouped bars: `metric` per value of `axis`, one bar per system."""
    decl = next(a for a in track.axes if a.key == axis)
    fig = go.Figure()
    values: list[str] = list(decl.values)
    for _, s in systems:
        for v in s.breakdowns.get(axis, {}):
            if v not in values:
                values.append(v)
    drawn = {False: 0, True: 0}  # rescored and reported systems each get MAX_SERIES bars
    for name, s in systems:
        cells = s.breakdowns.get(axis, {})
        ys = [cells.get(v, {}).get(metric) for v in values]
        is_reported = bool(_reported(s))
        if all(y is None for y in ys) or drawn[is_reported] == MAX_SERIES:
            continue
        # Colours counted apart for each kind (the colourway would count the traces: with reported bars among
        # them, the 9th trace took the 1st system's colour): each rescored system its own colour, each reported
        # one its own hatched one.
        color = PALETTE[drawn[is_reported] % len(PALETTE)]
        if is_reported:  # hatched, named as reported, the source in the hover
            fig.add_bar(
                name=esc(name) + REPORTED_MARK,
                x=[esc(v) for v in values],
                y=ys,
                marker={"color": color, "pattern": {"shape": "/", "solidity": 0.4}},
                hovertemplate="%{x}: %{y:.3f}" + _reported_hover(s) + "<extra>" + esc(name) + REPORTED_MARK + "</extra>",
            )
        else:
            fig.add_bar(
                name=esc(name),
                x=[esc(v) for v in values],
                y=ys,
                marker={"color": color},
                hovertemplate="%{x}: %{y:.3f}<extra>" + esc(name) + "</extra>",
            )
        drawn[is_reported] += 1
    if not any(drawn.values()):
        return message_figure(f"No system has {_label(track, metric)} per {decl.label.lower()} yet.")
    fig.update_yaxes(title=esc(_label(track, metric)), rangemode="tozero")
    return _layout(fig, f"{_label(track, metric)} per {decl.label.lower()}", barmode="group")


def scatter(track: Track, systems: list[tuple[str, dict]], x: str, y: str, chart: Chart = NO_CHART) -> go.Figure:
    pts = [(n, s.overall.get(x), s.overall.get(y)) for n, s in systems]
    pts = [p for p in pts if p[1] is not None and p[2] is not None]
    if not pts:
        judged = any(track.metric(k).needs_judge for k in (x, y) if k in {m.key for m in track.metrics})
        return message_figure(
            chart.empty
            or f"No system has both {_label(track, x)} and {_label(track, y)}" + (" (not judged yet?)." if judged else ".")
        )
    fig = go.Figure()
    kinds = {n: _reported(s) is not None for n, s in systems}
    hovers = {n: _reported_hover(s) for n, s in systems if _reported(s)}
    for i, (n, px, py) in enumerate(pts):
        marker = {"size": 12, "color": PALETTE[i % len(PALETTE)]}
        if kinds.get(n):  # reported: an open diamond, marked in its label
            marker.update(symbol="diamond-open", line={"width": 2})
        fig.add_scatter(
            x=[px],
            y=[py],
            mode="markers+text" if i < MAX_LABELS else "markers",
            name=esc(n) + (REPORTED_MARK if kinds.get(n) else ""),
            text=[esc(n) + (REPORTED_MARK if kinds.get(n) else "")],
            textposition="top center",
            marker=marker,
            showlegend=False,
            hovertemplate=f"{esc(n)}<br>{esc(_label(track, x))} %{{x:.3f}}<br>{esc(_label(track, y))} %{{y:.3f}}"
            + hovers.get(n, "")
            + "<extra></extra>",
        )
    fig.update_xaxes(title=esc(chart.x_title or _label(track, x)))
    fig.update_yaxes(title=esc(chart.y_title or _label(track, y)))
    return _layout(fig, f"{_label(track, x)} vs {_label(track, y)}")


def avg_var(track: Track, systems: list[tuple[str, dict]], metric: str, chart: Chart = NO_CHART) -> go.Figure:
    """Mean over the values of the chart's axis (x) against the variance across them (y): low-right is best.

    The variance is the scorer's overall["<metric>_var"].
    """
    over = _axis_label(track, chart.axis) if chart.axis else "categories"
    systems = _rescored_only(systems)
    pts = [(n, s.overall.get(metric), s.overall.get(f"{metric}_var")) for n, s in systems]
    pts = [p for p in pts if p[1] is not None and p[2] is not None]
    if not pts:
        return message_figure(chart.empty or f"No system has {_label(track, metric)} yet.")
    fig = go.Figure()
    for i, (n, a, v) in enumerate(pts):
        fig.add_scatter(
            x=[a],
            y=[v],
            mode="markers+text" if i < MAX_LABELS else "markers",
            text=[esc(n)],
            textposition="top center",
            showlegend=False,
            marker={"size": 12, "color": PALETTE[i % len(PALETTE)]},
            hovertemplate=f"{esc(n)}<br>AVG %{{x:.3f}}<br>VAR %{{y:.4f}}<extra></extra>",
        )
    fig.update_xaxes(title=esc(chart.x_title or f"AVG of {_label(track, metric)} over {over}"))
    fig.update_yaxes(title=esc(chart.y_title or f"VAR across {over} (lower = more even)"), rangemode="tozero")
    return _layout(
        fig, f"{_label(track, metric)}: {chart.title[:1].lower() + chart.title[1:] if chart.title else 'average vs variance'}"
    )


def shares(track: Track, systems: list[tuple[str, dict]], axis: str, chart: Chart = NO_CHART) -> go.Figure:
    """Stacked horizontal bars: each system's mean share per value of `axis` (e.g. document language)."""
    rows = [(n, s.breakdowns.get(axis)) for n, s in _rescored_only(systems)]
    rows = [(n, c) for n, c in rows if c]
    if not rows:
        return message_figure(chart.empty or f"No system has shares per {_axis_label(track, axis)} yet.")
    decl = next(a for a in track.axes if a.key == axis)
    values = [v for v in decl.values if any(v in c for _, c in rows)]
    fig = go.Figure()
    names = [esc(n) for n, _ in rows]
    for v in values:
        fig.add_bar(
            name=esc(v),
            y=names,
            x=[c.get(v, {}).get("share", 0) for _, c in rows],
            orientation="h",
            hovertemplate="%{y}: " + esc(v) + " %{x:.2f}<extra></extra>",
        )
    fig.update_xaxes(title=esc(chart.x_title or f"mean share per {_axis_label(track, axis)}"))
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, decl.label, barmode="stack", height=max(300, 60 + 40 * len(rows)))


def pair_heatmap(track: Track, name: str, summary: dict, axis: str, metric: str, chart: Chart = NO_CHART) -> go.Figure:
    """One system's `axis` values ("row-column" pairs) as a matrix: rows the first part, columns the second."""
    cells = summary.breakdowns.get(axis)
    if not cells:
        return message_figure(f"{name} has no results per {_axis_label(track, axis)}.")
    langs = list(dict.fromkeys([p.split("-")[0] for p in cells] + [p.split("-")[1] for p in cells]))
    z = [[cells.get(f"{q}-{d}", {}).get(metric) for d in langs] for q in langs]
    rows_title, cols_title = chart.y_title or "row", chart.x_title or "column"
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=langs,
            y=langs,
            colorscale="Cividis",
            zmin=0,
            zmax=1,
            hovertemplate=esc(rows_title) + " %{y}, " + esc(cols_title) + " %{x}: %{z:.3f}<extra></extra>",
        )
    )
    fig.update_xaxes(title=esc(cols_title))
    fig.update_yaxes(title=esc(rows_title), autorange="reversed")
    return _layout(fig, f"{name}: {_label(track, metric)} per {_axis_label(track, axis)}")


def pareto_front(points: list[tuple[float, float]], x_higher: bool = True, y_higher: bool = True) -> list[tuple[float, float]]:
    """Points no other point beats on both axes, by x; an axis is better higher unless its metric says otherwise."""
    sx, sy = (1 if x_higher else -1), (1 if y_higher else -1)  # flip a lower-is-better axis, find, flip back
    best = []
    for x, y in sorted(((sx * x, sy * y) for x, y in points), key=lambda p: (-p[0], -p[1])):
        if not best or y > best[-1][1]:
            best.append((x, y))
    return sorted((sx * x, sy * y) for x, y in best)


def _higher_is_better(track: Track, key: str) -> bool:
    return next((m.higher_is_better for m in track.metrics if m.key == key), True)


def tradeoff(
    track: Track, systems: list[tuple[str, dict]], x: str, y: str, group: tuple[str, ...], chart: Chart = NO_CHART
) -> go.Figure:
    """One curve per combination of the `group` fields of rescored systems (model and method: a method's runs of a
    model, in order of `x`), the Pareto front of all of them; reported rows as their own dotted series (one per
    source: a published curve, uncompressed models), never on the front. A curve's colour is its first field's
    value (one model, one colour), its dash the rest's; the legend and the hover name every field."""
    published = [
        (n, s.overall.get(x), s.overall.get(y), s.reported["series"], _reported_hover(s))
        for n, s in systems
        if _reported(s) and s.overall.get(x) is not None and s.overall.get(y) is not None
    ]
    systems = _rescored_only(systems)
    pts = [(n, s.overall.get(x), s.overall.get(y), tuple(str(s.system.get(g, "?")) for g in group)) for n, s in systems]
    pts = [p for p in pts if p[1] is not None and p[2] is not None]
    if not pts and published:
        fig = go.Figure()
        x_format = ".0%" if x in {m.key for m in track.metrics} and track.metric(x).percent else ".3f"
        _reported_curves(fig, track, published, x, y, x_format)
        fig.update_xaxes(title=esc(chart.x_title or _label(track, x)), tickformat=".0%" if x_format == ".0%" else None)
        fig.update_yaxes(title=esc(chart.y_title or _label(track, y)))
        return _layout(fig, f"{_label(track, y)} against {_label(track, x).lower()}: reported curves only")
    if not pts:
        return message_figure(chart.empty or f"No system reports {_label(track, x)} yet.")
    x_format = ".0%" if x in {m.key for m in track.metrics} and track.metric(x).percent else ".3f"
    field_labels = {f.key: f.label for f in track.system_fields}
    colours = {first: PALETTE[i % len(PALETTE)] for i, first in enumerate(sorted({p[3][0] for p in pts if p[3]}))}
    dashes = ("solid", "dot", "dash", "dashdot", "longdash", "longdashdot")
    rest = {r: dashes[i % len(dashes)] for i, r in enumerate(sorted({p[3][1:] for p in pts}))}
    fig = go.Figure()
    for g in sorted({p[3] for p in pts}):
        mine = sorted((p for p in pts if p[3] == g), key=lambda p: p[1])
        named = "<br>".join(f"{esc(field_labels.get(k, k))}: {esc(v)}" for k, v in zip(group, g))
        fig.add_scatter(
            x=[p[1] for p in mine],
            y=[p[2] for p in mine],
            mode="lines+markers",
            name=esc(" · ".join(g)),
            legendgroup=esc(g[0]) if g else None,
            text=[esc(p[0]) for p in mine],
            line={"color": colours.get(g[0], PALETTE[0]) if g else PALETTE[0], "dash": rest[g[1:]]},
            hovertemplate="%{text}<br>"
            + named
            + ("<br>" if named else "")
            + esc(_label(track, x).lower())
            + " %{x:"
            + x_format
            + "}<br>"
            + esc(_label(track, y))
            + " %{y:.3f}<extra></extra>",
        )
    _reported_curves(fig, track, published, x, y, x_format)
    front = pareto_front([(p[1], p[2]) for p in pts], *(_higher_is_better(track, k) for k in (x, y)))
    fig.add_scatter(
        x=[p[0] for p in front],
        y=[p[1] for p in front],
        mode="lines+markers",
        name="Pareto front",
        line={"color": "#000000", "dash": "dash", "width": 1.5},
        marker={"symbol": "star", "size": 12, "color": "rgba(0,0,0,0)", "line": {"color": "#000000", "width": 1.5}},
        hovertemplate="Pareto front<br>" + esc(_label(track, x).lower()) + " %{x:" + x_format + "}<br>%{y:.3f}<extra></extra>",
    )
    fig.update_xaxes(title=esc(chart.x_title or _label(track, x)), tickformat=".0%" if x_format == ".0%" else None)
    fig.update_yaxes(title=esc(chart.y_title or _label(track, y)))
    per = " and ".join(field_labels.get(g, g).lower() for g in group)
    return _layout(fig, f"{_label(track, y)} against {_label(track, x).lower()}, one curve per {per}")


def diff_by_category(comparison: dict, name_a: str, name_b: str) -> go.Figure:
    cats = comparison.get("categories") or {}
    if not cats:
        return message_figure("No category breakdown for the shared units.")
    fig = go.Figure()
    for i, (axis, cells) in enumerate(cats.items()):
        fig.add_bar(
            name=esc(axis.replace("_", " ")),
            x=[esc(v) for v in cells],
            y=[c["diff"] for c in cells.values()],
            marker={"color": PALETTE[i % len(PALETTE)]},
            customdata=[[c["a"], c["b"], c["n"]] for c in cells.values()],
            hovertemplate="%{x}: A−B %{y:+.3f}<br>A %{customdata[0]:.3f}, B %{customdata[1]:.3f}, n=%{customdata[2]}<extra></extra>",
        )
    fig.add_hline(y=0, line={"color": "#666", "width": 1})
    fig.update_yaxes(title=f"A − B ({esc(comparison.get('focus') or '')})")
    return _layout(fig, f"{name_a} − {name_b} per category")


def _reported_curves(fig: go.Figure, track: Track, points: list, x: str, y: str, x_format: str) -> None:
    """Reported points, one dotted series per source, in grey shades: on the chart, apart from the rescored ones."""
    shades = ("#6b5413", "#8c8c8c", "#b07aa1", "#4d4d4d")
    for i, series in enumerate(dict.fromkeys(p[3] for p in points)):
        mine = sorted((p for p in points if p[3] == series), key=lambda p: p[1])
        fig.add_scatter(
            x=[p[1] for p in mine],
            y=[p[2] for p in mine],
            mode="lines+markers" if len({p[1] for p in mine}) > 1 else "markers",  # a curve; points at one x stay points
            name=esc(series),
            text=[esc(p[0]) for p in mine],
            customdata=[p[4] for p in mine],
            line={"color": shades[i % len(shades)], "dash": "dot"},
            marker={"symbol": "diamond-open", "size": 10, "line": {"width": 2}},
            hovertemplate="%{text}"
            + REPORTED_MARK
            + "<br>"
            + esc(_label(track, x).lower())
            + " %{x:"
            + x_format
            + "}<br>"
            + esc(_label(track, y))
            + " %{y:.3f}%{customdata}<extra></extra>",
        )


def reported_diff_by_category(track: Track, cats: dict, name_a: str, name_b: str) -> go.Figure:
    """A − B per category from published figures (no test, no unit counts): one bar group per axis."""
    if not cats:
        return message_figure("The two have no category breakdown in common.")
    fig = go.Figure()
    for i, (axis, cells) in enumerate(cats.items()):
        fig.add_bar(
            name=esc(_axis_label(track, axis)),
            x=[esc(v) for v in cells],
            y=[c["diff"] for c in cells.values()],
            marker={"color": PALETTE[i % len(PALETTE)], "pattern": {"shape": "/", "solidity": 0.3}},
            customdata=[[c["a"], c["b"], esc(c["metric"])] for c in cells.values()],
            hovertemplate="%{x}: A−B %{y:+.3f} (%{customdata[2]})<br>A %{customdata[0]:.3f}, B %{customdata[1]:.3f}"
            "<br>no significance test: reported figures<extra></extra>",
        )
    fig.add_hline(y=0, line={"color": "#666", "width": 1})
    fig.update_yaxes(title="A − B (no significance test: reported figures)")
    return _layout(fig, f"{name_a} − {name_b} per category")
