"""The Gradio page, generated from the track registry: one tab per track, then compare, system, submit, about.

Handlers only call views.py / the board service; nothing here parses a
submission or computes a metric.
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import re
import secrets
import shutil
import tempfile
import time
from pathlib import Path

import gradio as gr
from gradio.utils import get_upload_folder

from ..service import Board
from ..tracks import TRACKS, Track
from . import urlstate, views
from .about import about_markdown
from .format import esc, num

log = logging.getLogger(__name__)
ASSETS = Path(__file__).resolve().parents[2] / "assets"
CSS = (ASSETS / "style.css").read_text(encoding="utf-8") if (ASSETS / "style.css").exists() else ""
log = logging.getLogger(__name__)
TITLE = "Open RAG Leaderboard"
TAGLINE = "Retrieval-augmented generation over real documents: every number recomputed from raw predictions."


# ---- status line ------------------------------------------------------------------------------
def status_html(board: Board) -> str:
    st = board.status()
    parts = [f'<span class="asof">{esc(st["data_as_of"])} · judge: {esc(st["judge"])}</span>']
    if st["banner"]:
        parts.append(f'<div class="banner" role="alert">{esc(st["banner"])}</div>')
    parts += [f'<div class="banner notice" role="status">{esc(st["notice"])}</div>'] if st.get("notice") else []
    for entry_id, p in list(board.judge_progress.items()):
        e = board.entry(entry_id)
        if e is not None and p.total:
            parts.append(f'<div class="judging">Judging answers of {esc(e.name)}: '
                         f'<progress value="{int(p.done)}" max="{int(p.total)}"></progress> {int(p.done)}/{int(p.total)}</div>')
    return "".join(parts)


# ---- CSV exports: one folder per download (the file name is the track's), pruned, removed at exit -----------------
_EXPORTS: Path | None = None
_EXPORT_MAX_AGE = 600  # seconds; Gradio has copied a download into its own cache long before


def _export_dir() -> Path:
    global _EXPORTS
    if _EXPORTS is None:
        _EXPORTS = Path(tempfile.mkdtemp(prefix="board-csv-"))
        atexit.register(shutil.rmtree, _EXPORTS, True)
    now = time.time()
    for old in _EXPORTS.iterdir():
        try:
            if now - old.stat().st_mtime > _EXPORT_MAX_AGE:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:
            pass
    return Path(tempfile.mkdtemp(dir=_EXPORTS))


def record_download(board: Board, entry_id: str | None, unit: str | None):
    """The download button for a unit's whole raw record (the page shows it cut): shown only when there is one."""
    text = views.full_record(board, entry_id, unit)
    if text is None:
        return gr.update(value=None, visible=False)
    safe_unit = re.sub(r"[^A-Za-z0-9._-]+", "_", unit or "")[:80]
    path = _export_dir() / f"{entry_id}-{safe_unit}.json"
    path.write_text(text, encoding="utf-8")
    return gr.update(value=str(path), visible=True)


# ---- internal failures: a short message and a log reference, never a traceback or a server path -------------
INTERNAL_ERROR = "Something went wrong (ref {ref}); the maintainers can find it in the logs."


def guarded(fn):
    """`fn` with any unexpected exception logged (with its traceback and a short reference) and shown as that reference.

    functools.wraps keeps the signature and type hints Gradio reads (API parameter names, gr.Request,
    gr.SelectData, gr.OAuthProfile). gr.Error is a message meant for people: it passes through.
    """
    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except Exception:
            ref = secrets.token_hex(3)
            log.exception("handler %s failed (ref %s)", getattr(fn, "__name__", "?"), ref)
            raise gr.Error(INTERNAL_ERROR.format(ref=ref), print_exception=False) from None
    return run


def _guard_all(demo: gr.Blocks) -> None:
    """Wrap every Python handler of the page (after wiring: Gradio has read their signatures already)."""
    for block_fn in demo.fns.values():
        if block_fn.fn is not None:
            block_fn.fn = guarded(block_fn.fn)


# API parameter names of the filter controls where the key alone would say too little
_API_FILTER_NAMES = {"has": "has_results_for"}


# ---- controls whose choices are (label, key) pairs --------------------------------------------------
def _by_label(choices, payload):
    labels = {label: key for label, key in choices}
    if isinstance(payload, list):
        return [labels.get(p, p) if isinstance(p, str) else p for p in payload]
    return labels.get(payload, payload) if isinstance(payload, str) else payload


def accepts_labels(component):
    """`component` (choices of (label, key) pairs, its value the key) also taking a label as input: API callers
    and links made before keys were used sent labels. The page itself always sends keys.

    An instance patch, not a subclass: Gradio writes a .pyi stub next to the module of every component class.
    A session whose control Gradio re-creates after an update (a restored permalink) gets a plain copy, which
    takes keys, which is all the page sends.
    """
    plain = component.preprocess
    component.preprocess = lambda payload: plain(_by_label(component.choices, payload))
    return component


def _keyed(choices) -> list[tuple[str, str]]:
    return [c if isinstance(c, tuple) else (c, c) for c in choices]


# ---- one track tab --------------------------------------------------------------------------------
class TrackTab:
    """Controls, table, CSV export and lazily built charts of one track."""

    def __init__(self, board: Board, track: Track):
        self.board, self.track = board, track
        t = track
        metric_choices = [(m.label, m.key) for m in t.metrics]
        with gr.Row(equal_height=True):
            self.search = gr.Textbox(label="Search systems", placeholder="name or organisation", scale=2,
                                     elem_id=f"{t.name}-search")
            self.rank_by = accepts_labels(gr.Dropdown(metric_choices, value=t.rank_by, label="Rank by", scale=1,
                                                      elem_id=f"{t.name}-rank-by"))
            self.slice = gr.Dropdown(views.slice_choices(board, t), value=views.ALL, label="Scores on", scale=1,
                                     elem_id=f"{t.name}-slice")
        choices = views.filter_choices(board, t)
        self.filter_fields = views.filter_fields(t)
        with gr.Row():
            self.filters = [accepts_labels(gr.Dropdown(_keyed(choices.get(f.key, [])), value=[], multiselect=True, label=f.label,
                                                       elem_id=f"{t.name}-filter-{f.key}")) for f in self.filter_fields]
        with gr.Accordion("Columns", open=False):
            self.columns = accepts_labels(gr.CheckboxGroup(views.optional_columns(t), value=views.default_columns(t),
                                                           label="Shown columns", elem_id=f"{t.name}-columns"))
        disp, raw = views.table_frames(board, t.name)
        self.table = gr.Dataframe(views.table_value(disp, raw, t), datatype=views.datatypes(disp, t), interactive=False, wrap=True,
                                  pinned_columns=3, show_search="none", max_height=640, elem_id=f"{t.name}-table",
                                  label=f"{t.title}: ranked by {t.metric(t.rank_by).label}")
        with gr.Row():
            self.csv = gr.DownloadButton("Download table as CSV", size="sm", elem_id=f"{t.name}-csv")
            gr.HTML(f'<p class="hint">{esc(t.description)} Sort any column from the ⋮ menu of its header; '
                    "“Rank (CI)” is the best rank the 95% intervals allow.</p>")
        with gr.Accordion("Charts", open=True):
            with gr.Row():
                self.chart_metric = gr.Dropdown(metric_choices, value=t.rank_by, label="Chart metric",
                                                scale=1, elem_id=f"{t.name}-chart-metric")
                systems = views.system_choices(board, t.name)
                self.chart_system = gr.Dropdown(systems, value=systems[0][1] if systems else None,
                                                label="System (for per-system charts)", scale=1, allow_custom_value=True,
                                                visible=any(c.kind == "pair_heatmap" for c in t.charts),
                                                elem_id=f"{t.name}-chart-system")
            self.chart_tabs, self.plots = [], []
            with gr.Tabs(elem_id=f"{t.name}-charts"):
                for i, c in enumerate(t.charts):
                    with gr.Tab(c.title, id=f"{t.name}-chart-{i}") as tab:
                        self.plots.append(gr.Plot(label=c.title, elem_id=f"{t.name}-plot-{i}"))
                    self.chart_tabs.append(tab)
        self.active_chart = gr.State(0)

    @property
    def controls(self) -> list:
        return [self.rank_by, self.slice, self.search, *self.filters, self.columns]

    @property
    def api_inputs(self) -> dict:
        """The controls by the parameter names API callers see (in `controls` order; not param_0, param_1...)."""
        names = ["rank_by", "scores_on", "search", *[_API_FILTER_NAMES.get(f.key, f.key) for f in self.filter_fields],
                 "columns"]
        return dict(zip(names, self.controls))

    def table_by_name(self, **controls):
        return self.table_api(*(controls[n] for n in self.api_inputs))

    def export_by_name(self, **controls):
        return self.export(*(controls[n] for n in self.api_inputs))

    def render(self, active, rank_by, slice_choice, search, *rest):
        """(table update, URL query) for the current controls; the URL only while this tab is on screen."""
        filters = dict(zip([f.key for f in self.filter_fields], rest[: len(self.filter_fields)]))
        columns = rest[len(self.filter_fields)]
        disp, raw = views.table_frames(self.board, self.track.name, rank_by, slice_choice, search or "", filters, columns)
        pinned = sum(1 for c in views.shown_columns(disp, self.track) if c.kind == "rank") + 1  # ranks and System
        rank_key = views.cols.metric_key(self.track, rank_by)
        keys = views.cols.keys_of(self.track, columns)
        query = urlstate.encode({"tab": self.track.name, "rank": rank_key, "slice": None if slice_choice == views.ALL else slice_choice,
                                 "q": search, **{f"f.{k}": v for k, v in filters.items()},
                                 "cols": None if set(keys) == set(views.default_columns(self.track)) else keys or ["-"]})
        rank_label = self.track.metric(rank_key).label
        scope = "" if slice_choice in (None, views.ALL) else f", scores on {slice_choice}"
        return (gr.update(value=views.table_value(disp, raw, self.track), datatype=views.datatypes(disp, self.track), pinned_columns=pinned,
                          column_widths=views.column_widths(disp, self.track), label=f"{self.track.title}: ranked by {rank_label}{scope}"),
                query if active == self.track.name else gr.update())

    def table_api(self, *controls):
        """The table for a view, as an API endpoint (no URL side effect)."""
        return self.render(None, *controls)[0]

    def export(self, rank_by, slice_choice, search, *rest):
        filters = dict(zip([f.key for f in self.filter_fields], rest[: len(self.filter_fields)]))
        raw = views.filtered_table(self.board, self.track.name, rank_by, slice_choice, search or "", filters)
        keep = [c for c in raw.columns if c not in ("judging", "errors", "flag_reason")]
        path = _export_dir() / f"{self.track.name}-leaderboard.csv"
        views.csv_safe(raw[keep]).to_csv(path, index=False)
        return str(path)

    def chart(self, index, metric_label, system_id, rank_by, slice_choice, search, *rest):
        filters = dict(zip([f.key for f in self.filter_fields], rest[: len(self.filter_fields)]))
        raw = views.filtered_table(self.board, self.track.name, rank_by, slice_choice, search or "", filters)
        systems = views.chart_systems(self.board, self.track.name, raw)
        return views.chart(self.track, index, systems, metric_label, system_id)

    def repick_system(self, current):
        """Fresh choices for the per-system charts, keeping the current pick while it exists."""
        choices = views.system_choices(self.board, self.track.name)
        ids = [i for _, i in choices]
        return gr.update(choices=choices, value=current if current in ids else (ids[0] if ids else None))

    def redraw_active(self, active, *args):
        """Redraw only the chart on screen; the others are drawn when their tab opens."""
        return [self.chart(i, *args) if i == active else gr.update() for i in range(len(self.plots))]

    def restore(self, params: dict[str, list[str]]) -> list:
        """Control values from a permalink (unknown values fall back to defaults)."""
        t = self.track
        slice_choice = urlstate.first(params, "slice", views.ALL)
        cols = params.get("cols")
        out = [gr.update(value=views.cols.metric_key(t, urlstate.first(params, "rank"))),  # a key, or an older link's label
               gr.update(choices=views.slice_choices(self.board, t),
                         value=slice_choice if slice_choice in views.slice_choices(self.board, t) else views.ALL),
               gr.update(value=urlstate.first(params, "q", ""))]
        choices = views.filter_choices(self.board, t)
        for f in self.filter_fields:
            keyed = _keyed(choices.get(f.key, []))
            wanted = [v for v in _by_label(keyed, params.get(f"f.{f.key}", [])) if v in {k for _, k in keyed}]
            out.append(gr.update(choices=keyed, value=wanted))
        optional = {k for _, k in views.optional_columns(t)}
        out.append(gr.update(value=[k for k in views.cols.keys_of(t, cols) if k in optional] if cols else views.default_columns(t)))
        return out


# ---- the page ------------------------------------------------------------------------------------
def build(board: Board) -> gr.Blocks:
    # delete_cache: every 10 minutes, uploads and cached outputs older than 30 minutes are swept, whatever no
    # handler removed (an upload to /gradio_api/upload needs no submit, so only this bounds the folder).
    with gr.Blocks(title=TITLE, analytics_enabled=False, delete_cache=(600, 1800)) as demo:
        gr.HTML(f'<header class="board-head"><h1>{esc(TITLE)}</h1><p>{esc(TAGLINE)}</p></header>')
        with gr.Row(equal_height=True):
            status = gr.HTML(status_html(board), elem_id="status")
            refresh = gr.Button("Refresh data", size="sm", scale=0, min_width=120, elem_id="refresh")
        data_version = gr.Number(board.version, visible=False)  # changes when the board's data does
        url = gr.Textbox(visible=False, elem_id="url-state")
        seen_version = gr.State(board.version)
        active_tab = gr.State(next(iter(TRACKS)))  # only the view on screen writes the URL
        tabs_by_track: dict[str, TrackTab] = {}
        with gr.Tabs(elem_id="main-tabs") as main_tabs:
            track_tabs = {}
            for name, track in TRACKS.items():
                with gr.Tab(track.title, id=name) as tab:
                    tabs_by_track[name] = TrackTab(board, track)
                track_tabs[name] = tab
            with gr.Tab("Compare", id="compare") as compare_tab:
                cmp = _compare_tab(board)
            with gr.Tab("System", id="system") as system_tab:
                det = _system_tab(board)
            with gr.Tab("Submit", id="submit"):
                _submit_tab(board)
            with gr.Tab("About", id="about"):
                gr.Markdown(about_markdown(), elem_id="about")

        url.change(None, inputs=url, outputs=None, js=urlstate.REPLACE_STATE_JS)

        # track tabs: every control re-renders the table and the URL; charts build when shown
        for name, tt in tabs_by_track.items():
            # One listener for all controls, always_last: a permalink sets several controls at once and their change
            # events fire one by one, some reading the others' old values; run in order, the last render (which
            # reads them all restored) is the one that stays on screen.
            gr.on([c.change for c in tt.controls], tt.render, [active_tab, *tt.controls], [tt.table, url], api_name=False,
                  show_progress="hidden", trigger_mode="always_last")
            tt.search.submit(tt.table_by_name, None, tt.table, api_name=f"table_{name}", inputs_kwargs=tt.api_inputs)
            track_tabs[name].select(lambda n=name: n, None, active_tab, api_name=False).then(
                tt.render, [active_tab, *tt.controls], [tt.table, url], api_name=False, show_progress="hidden")
            tt.csv.click(tt.export_by_name, None, tt.csv, api_name=f"export_csv_{name}", inputs_kwargs=tt.api_inputs)
            chart_inputs = [tt.chart_metric, tt.chart_system, *tt.controls]
            for i, (ctab, plot) in enumerate(zip(tt.chart_tabs, tt.plots)):
                index = gr.Number(i, visible=False)
                ctab.select(lambda i: i, index, tt.active_chart, api_name=False).then(
                    tt.chart, [index, *chart_inputs], plot, api_name=False)
            # the first chart of a track is drawn when the track tab opens
            first = gr.Number(0, visible=False)
            track_tabs[name].select(tt.chart, [first, *chart_inputs], tt.plots[0], api_name=False)
            for control in (tt.chart_metric, tt.chart_system):
                control.change(tt.redraw_active, [tt.active_chart, *chart_inputs], tt.plots, api_name=False)

        # a click on a table row opens that submission in the System tab
        def open_row(evt: gr.SelectData):
            row = evt.row_value or []
            entry_id = next((v for v in reversed(row) if isinstance(v, str) and views.visible_entry(board, v) is not None), None)
            if entry_id is None:  # the Id column is hidden: nothing to open
                return gr.update(), gr.update(), gr.update()
            return gr.Tabs(selected="system"), "system", gr.update(value=entry_id)

        for tt in tabs_by_track.values():
            tt.table.select(open_row, None, [main_tabs, active_tab, det["system"]], api_name=False)

        # compare: the API endpoint returns the comparison; the page also writes the URL while on screen
        def on_screen(view, fn):
            def run(active, *args):
                *outputs, query = fn(*args)
                return (*outputs, query if active == view else gr.update())
            return run

        compare_tab.select(lambda: "compare", None, active_tab, api_name=False).then(
            on_screen("compare", cmp["run"]), [active_tab, cmp["track"], cmp["a"], cmp["b"]], cmp["outputs"] + [url],
            api_name=False)
        gr.on([cmp["a"].change, cmp["b"].change], on_screen("compare", cmp["run"]),
              [active_tab, cmp["track"], cmp["a"], cmp["b"]], cmp["outputs"] + [url], api_name=False,
              trigger_mode="always_last")  # as for the track controls: A and B restored together, the last run wins
        # .input: only a user's pick of another track resets A and B; a permalink sets all three itself
        cmp["track"].input(cmp["pick_track"], [cmp["track"], cmp["a"], cmp["b"]], [cmp["a"], cmp["b"]], api_name=False)
        def compare_api(track, system_a, system_b):
            return cmp["run"](track, system_a, system_b)[:-1]

        cmp["go"].click(compare_api, [cmp["track"], cmp["a"], cmp["b"]], cmp["outputs"], api_name="compare")
        cmp["unit"].change(cmp["records"], [cmp["a"], cmp["b"], cmp["unit"]], cmp["record_outputs"], api_name=False).then(
            cmp["downloads"], [cmp["a"], cmp["b"], cmp["unit"]], cmp["download_outputs"], api_name=False)

        # system detail
        system_tab.select(lambda: "system", None, active_tab, api_name=False).then(
            on_screen("system", det["show"]), [active_tab, det["system"]], det["outputs"] + [url], api_name=False)
        det["system"].change(on_screen("system", det["show"]), [active_tab, det["system"]], det["outputs"] + [url],
                             api_name=False)
        def detail_api(entry_id):
            return det["show"](entry_id)[:-1]

        det["pick"].click(detail_api, det["system"], det["outputs"], api_name="detail")
        for control in (det["category"], det["search"]):
            control.change(det["units"], [det["system"], det["category"], det["search"]], det["units_out"], api_name=False)
        def record_api(entry_id, unit_id):
            return det["record"](entry_id, unit_id)

        det["unit"].submit(record_api, [det["system"], det["unit"]], det["record_out"], api_name="record").then(
            det["download"], [det["system"], det["unit"]], det["download_out"], api_name=False)

        def pick_unit(entry_id, evt: gr.SelectData):  # a click on a per-unit row shows that unit's raw record
            unit_id = str((evt.row_value or [""])[0])
            return unit_id, views.unit_record(board, entry_id, unit_id)

        det["units_out"].select(pick_unit, det["system"], [det["unit"], det["record_out"]], api_name=False).then(
            det["download"], [det["system"], det["unit"]], det["download_out"], api_name=False)

        # permalinks: restore the view named in the URL
        restore_outputs = [main_tabs, active_tab, seen_version, status]
        for tt in tabs_by_track.values():
            restore_outputs += tt.controls
        restore_outputs += [cmp["track"], cmp["a"], cmp["b"], det["system"]]

        def on_load(request: gr.Request):
            params = urlstate.decode(request.query_params if request else {})
            tab = urlstate.first(params, "tab", next(iter(TRACKS)))
            valid_tabs = list(TRACKS) + ["compare", "system", "submit", "about"]
            tab = tab if tab in valid_tabs else next(iter(TRACKS))
            # the page starts from the board as it is now: the timer re-renders only on later changes
            out = [gr.Tabs(selected=tab), tab, board.version, status_html(board)]
            for name, tt in tabs_by_track.items():
                out += tt.restore(params if tab == name else {})
            out += cmp["restore"](params)
            out += det["restore"](params)
            return out

        demo.load(on_load, None, restore_outputs, api_name=False)

        # new data (a pull, a submission, a finished judging run) and a changed status line (an outage starting or
        # ending, loading done, judging progress) reach open pages
        timer = gr.Timer(board.settings.status_poll_seconds)
        seen_status = gr.State("")  # the status line as this page's timer last wrote it ("": not yet, write it once)

        def poll(version, shown):
            html = status_html(board)  # a few short strings: cheap to build on every tick
            if version == board.version and html == shown:  # nothing new: no traffic beyond the tick itself
                return gr.update(), version, gr.update(), shown
            return html, board.version, board.version, html

        timer.tick(poll, [seen_version, seen_status], [status, seen_version, data_version, seen_status], api_name=False,
                   show_progress="hidden")

        def refresh_now(profile: gr.OAuthProfile | None = None):
            """Pull now (admins on a Space; anyone locally). New data reaches the page through the timer."""
            admins = board.settings.admin_users
            if _on_space() and (profile is None or profile.username not in admins):
                return status_html(board) + '<div class="banner">Only maintainers can force a refresh; the board pulls by itself every few minutes.</div>'
            board.refresh()
            return status_html(board)

        refresh.click(refresh_now, None, status, api_name="refresh")
        # new data: re-render the tables and refresh the system pickers, keeping every current choice
        for tt in tabs_by_track.values():
            data_version.change(tt.render, [active_tab, *tt.controls], [tt.table, url], api_name=False,
                                show_progress="hidden")
        data_version.change(det["repick"], det["system"], det["system"], api_name=False, show_progress="hidden")
        for tt in tabs_by_track.values():
            data_version.change(tt.repick_system, tt.chart_system, tt.chart_system, api_name=False, show_progress="hidden")
        data_version.change(cmp["repick"], [cmp["track"], cmp["a"], cmp["b"]], [cmp["a"], cmp["b"]], api_name=False,
                            show_progress="hidden")
    _guard_all(demo)
    return demo


# ---- compare tab ----------------------------------------------------------------------------------
def _compare_tab(board: Board) -> dict:
    first_track = next(iter(TRACKS))
    choices = views.system_choices(board, first_track)
    gr.HTML('<p class="hint">Pick two systems of one track: every metric with both values, the difference, its 95% CI '
            "and a paired significance test over the units both answered.</p>")
    with gr.Row():
        track = gr.Dropdown([(t.title, n) for n, t in TRACKS.items()], value=first_track, label="Track",
                            elem_id="compare-track")
        a = gr.Dropdown(choices, value=choices[0][1] if choices else None, label="System A", elem_id="compare-a", allow_custom_value=True)
        b = gr.Dropdown(choices, value=choices[1][1] if len(choices) > 1 else None, label="System B", elem_id="compare-b", allow_custom_value=True)
        go = gr.Button("Compare", variant="primary", scale=0, elem_id="compare-go")
    summary = gr.HTML(elem_id="compare-summary")
    metrics = gr.Dataframe(interactive=False, label="Metrics", elem_id="compare-metrics", datatype="str")
    plot = gr.Plot(label="Difference per category", elem_id="compare-plot")
    top = gr.Dataframe(interactive=False, label="Where they differ most", wrap=True, datatype="str",
                       elem_id="compare-top", max_height=420)
    unit = gr.Dropdown([], label="Show both raw predictions for", elem_id="compare-unit", allow_custom_value=True)
    with gr.Row():
        rec_a = gr.Code(language="json", label="A's prediction", elem_id="compare-rec-a")
        rec_b = gr.Code(language="json", label="B's prediction", elem_id="compare-rec-b")
    with gr.Row():
        get_a = gr.DownloadButton("Download A's whole record", size="sm", visible=False, elem_id="compare-rec-a-file")
        get_b = gr.DownloadButton("Download B's whole record", size="sm", visible=False, elem_id="compare-rec-b-file")

    def run(track_name, a_id, b_id):
        text, mframe, fig, topf = views.compare_view(board, a_id, b_id)
        units = topf["Unit"].tolist() if "Unit" in topf else []
        query = urlstate.encode({"tab": "compare", "track": track_name, "a": a_id, "b": b_id})
        return (f'<p class="compare-summary">{text}</p>', mframe, fig, topf,
                gr.update(choices=units, value=units[0] if units else None), query)

    def pick_track(track_name, a_id=None, b_id=None):
        """New choices for the track; picks already on this track stay (a permalink sets track, A and B at once)."""
        ch = views.system_choices(board, track_name)
        ids = [i for _, i in ch]
        a_id = a_id if a_id in ids else (ids[0] if ids else None)
        b_id = b_id if b_id in ids and b_id != a_id else next((i for i in ids if i != a_id), None)
        return gr.update(choices=ch, value=a_id), gr.update(choices=ch, value=b_id)

    def records(a_id, b_id, unit_id):
        return views.both_records(board, a_id, b_id, unit_id)

    def downloads(a_id, b_id, unit_id):
        return record_download(board, a_id, unit_id), record_download(board, b_id, unit_id)

    def restore(params):
        track_name = urlstate.first(params, "track", first_track)
        if track_name not in TRACKS:
            track_name = first_track
        ch = views.system_choices(board, track_name)
        ids = [i for _, i in ch]
        want_a, want_b = urlstate.first(params, "a"), urlstate.first(params, "b")
        return [gr.update(value=track_name),
                gr.update(choices=ch, value=want_a if want_a in ids else (ids[0] if ids else None)),
                gr.update(choices=ch, value=want_b if want_b in ids else (ids[1] if len(ids) > 1 else None))]

    return {"track": track, "a": a, "b": b, "go": go, "unit": unit, "run": run, "pick_track": pick_track,
            "records": records, "restore": restore, "repick": pick_track, "outputs": [summary, metrics, plot, top, unit],
            "record_outputs": [rec_a, rec_b], "downloads": downloads, "download_outputs": [get_a, get_b]}


# ---- system tab -------------------------------------------------------------------------------------
def _all_systems(board: Board) -> list[tuple[str, str]]:
    out = []
    for name, t in TRACKS.items():
        for e in board.entries(name):
            if e.hidden:  # maintainers hid it: no view lists or opens it
                continue
            status = f"duplicate of {e.duplicate_of[:7]}" if e.duplicate_of else e.status
            out.append((f"{t.title} · {e.name[:60]} · {e.id[:7]} ({status})", e.id))
    return out


def _system_tab(board: Board) -> dict:
    choices = _all_systems(board)
    with gr.Row():
        system = gr.Dropdown(choices, value=None, label="Submission", elem_id="system-pick", scale=4, allow_custom_value=True)
        pick = gr.Button("Show", scale=0, elem_id="system-show")
    meta = gr.HTML(elem_id="system-meta")
    breakdown = gr.Dataframe(interactive=False, label="Scores per category", datatype="str", elem_id="system-breakdown")
    with gr.Row():
        category = gr.Dropdown([], label="Filter units by category", elem_id="system-category", allow_custom_value=True)
        search = gr.Textbox(label="Search units", elem_id="system-search")
    units = gr.Dataframe(interactive=False, label="Per-unit scores (first 500 that match)", datatype="str",
                         elem_id="system-units", max_height=420)
    unit = gr.Textbox(label="Raw prediction for unit (click a row above, or type a unit id and press Enter)",
                      elem_id="system-unit")
    record = gr.Code(language="json", label="Raw prediction record", elem_id="system-record")
    download = gr.DownloadButton("Download the whole record", size="sm", visible=False, elem_id="system-record-file")

    def show(entry_id):
        html, bd, uf = views.detail(board, entry_id)
        e = views.visible_entry(board, entry_id)
        cats = views.unit_categories(board, e) if e is not None and len(uf) else []
        query = urlstate.encode({"tab": "system", "sys": entry_id})
        return html, bd, gr.update(choices=[""] + cats, value=""), uf, query

    def units_fn(entry_id, cat, text):
        e = views.visible_entry(board, entry_id)
        return views.unit_frame(board, e, cat or None, text or "") if e else None

    def restore(params):
        want = urlstate.first(params, "sys")
        ids = [i for _, i in _all_systems(board)]
        return [gr.update(choices=_all_systems(board), value=want if want in ids else None)]

    return {"system": system, "pick": pick, "category": category, "search": search, "unit": unit, "show": show, "units": units_fn,
            "record": lambda e, u: views.unit_record(board, e, (u or "").strip()), "restore": restore,
            "repick": lambda e: gr.update(choices=_all_systems(board), value=e),
            "outputs": [meta, breakdown, category, units], "units_out": units, "record_out": record,
            "download": lambda e, u: record_download(board, e, (u or "").strip()), "download_out": download}


# ---- submit tab -------------------------------------------------------------------------------------
def _on_space() -> bool:
    return bool(os.environ.get("SPACE_ID"))


def login_required(board: Board) -> bool:
    """Submit as a logged-in Hugging Face user on a Space, and wherever submissions go to a Hub repo with a token.

    Off a Space, Gradio mocks the login with the machine's own token (whoami on HF_ENDPOINT): a Hub-backed board
    run locally attributes submissions to that account, never to a typed-in name.
    """
    st = board.store_settings
    return _on_space() or bool(st.submissions_repo and st.hf_token)


def _submit_tab(board: Board) -> None:
    gr.HTML('<p class="hint">Upload one file (.json, .jsonl, optionally .gz). It is validated first: an invalid file is '
            "never stored, and you see every problem. A valid one is stored in the submissions repository and "
            "rescored from its raw predictions.</p>")
    if login_required(board):
        gr.LoginButton(elem_id="submit-login")
        user_box = None
    else:
        user_box = gr.Textbox(label="Your name (local mode: no login)", value="local-user", elem_id="submit-user")
    track = gr.Dropdown([(t.title, n) for n, t in TRACKS.items()], value=next(iter(TRACKS)), label="Track",
                        elem_id="submit-track")
    upload = gr.File(label="Submission file", file_types=[".json", ".jsonl", ".gz"], type="filepath", elem_id="submit-file")
    with gr.Row():
        name = gr.Textbox(label="System name (overrides the file's header)", elem_id="submit-name")
        org = gr.Textbox(label="Organisation", elem_id="submit-org")
        link = gr.Textbox(label="Link (http/https)", elem_id="submit-link")
    description = gr.Textbox(label="Description", lines=2, elem_id="submit-description")
    go = gr.Button("Validate and submit", variant="primary", elem_id="submit-go")
    result = gr.HTML(elem_id="submit-result")

    def submit(track_name, path, sys_name, organisation, url, desc, user_name=None, profile: gr.OAuthProfile | None = None):
        user = profile.username if profile is not None else (user_name or "").strip()
        if user_box is None and profile is None:
            return '<div class="errors">Log in with Hugging Face to submit.</div>'
        if not user:
            return '<div class="errors">Enter a name to submit under.</div>'
        if not path:
            return '<div class="errors">Choose a file to upload.</div>'
        overrides = {k: v.strip() for k, v in (("name", sys_name), ("organization", organisation), ("link", url),
                                               ("description", desc)) if v and v.strip()}
        try:
            return submission_result_html(board, track_name, user, Path(path), overrides)
        finally:
            discard_upload(Path(path))  # read (or refused) by now: it must not pile up in the upload folder

    inputs = [track, upload, name, org, link, description] + ([user_box] if user_box is not None else [])
    # Two submits at once per app: validation itself runs one at a time (service.VALIDATIONS_AT_ONCE), and the
    # queue keeps other submitters waiting rather than holding more uploads in memory.
    go.click(submit, inputs, result, api_name="submit", concurrency_limit=2)


def discard_upload(path: Path) -> None:
    """Delete an uploaded temp file (and its now empty folder); only inside Gradio's upload folder, never elsewhere."""
    folder = Path(get_upload_folder()).resolve()
    try:
        path = path.resolve()
        if folder not in path.parents:
            return
        path.unlink(missing_ok=True)
        if path.parent != folder and not any(path.parent.iterdir()):
            path.parent.rmdir()
    except OSError as exc:  # another request may share the folder (same content hash): leave it to delete_cache
        log.debug("upload %s not removed: %s", path, exc)


def submission_result_html(board: Board, track_name: str, user: str, path: Path, overrides: dict) -> str:
    status = board.submit_upload(user=user, track=track_name, path=path, overrides=overrides)
    head = f'<p class="submit-{esc(status.state)}"><b>{esc(status.state.replace("_", " "))}</b>: {esc(status.message)}</p>'
    if status.errors:
        items = "".join(f"<li><code>{esc(e)}</code></li>" for e in status.errors)
        head += f'<div class="errors"><ul>{items}</ul></div>'
    if status.ok and status.file is not None:
        e = next((x for x in board.entries() if x.path == status.file.path), None)
        if e is not None and e.status == "scored":
            track = TRACKS[e.summary["track"]]
            cells = "".join(f"<tr><th>{esc(m.label)}</th><td>{num(e.summary['overall'].get(m.key))}</td></tr>"
                            for m in track.metrics if m.key in e.summary.get("overall", {}))
            head += (f"<p>Scored: submission <code>{esc(e.id)}</code>"
                     f"{' (answers are being judged)' if e.judging else ''}.</p><table class='meta'>{cells}</table>")
        elif e is not None:
            head += f"<p>Status: {esc(e.status)}.</p>"
    return head
