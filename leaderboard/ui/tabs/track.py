"""One track's tab: controls, the ranked table, CSV export and lazily drawn charts, all from the declarations."""

from __future__ import annotations

import gradio as gr
from gradio.components.plot import PlotData

from ...ranking import BOARD, OFFICIAL, protocol_of
from ...reported import ChartSummary
from ...service import Board
from ...tracks import Track
from .. import columns as cols
from .. import figures, html, urlstate, views
from .common import IN_ORDER, Drawn, Page, accepts_labels, by_label, current_choices, export_dir, frozen, keyed, serve

# API parameter names of the filter controls where the key alone would say too little
_API_FILTER_NAMES = {"has": "has_results_for"}
# A chip's key: its filter's key and its value (a value is a system's field: any text but this control character)
_CHIP = "\x1f"
# The "Scores" choice: (label, value); the value is the API's `protocol` and the permalink's.
PROTOCOL_CHOICES = [("board", BOARD), ("official script", OFFICIAL)]
SAME_PROTOCOL = "this track's board protocol is its script's"


class TrackTab:
    """Controls, table, CSV export and lazily built charts of one track; its events and its permalink."""

    def __init__(self, board: Board, track: Track, on_screen: bool = True):
        """`on_screen`: the tab a page opens on, its table built with the page. The others are drawn by the page's
        load, after the tab it opens on (`prefetch`, `restore`), or when they open (`wire`): ranking a track is a
        pass over all of its systems (a third of the start-up at 10,000 submissions), paid by a visitor, not by
        every start."""
        self.id = track.name
        self.board, self.track = board, track
        self.drawn_at_build = on_screen
        self.built_version = board.version
        # The page served with this tab's opening view as last drawn (`serve`): set for the tab a page opens on
        self.served: gr.Blocks | None = None
        self.served_version = -1
        self.data_version: gr.Number | None = None  # the page's (`wire`), served with the view
        # What `draw` and `plot` gave for a board version and inputs: every visitor's load asks for the same ones
        self._draws, self._plots = Drawn(), Drawn()
        t = track
        metric_choices = [(m.label, m.key) for m in t.metrics]
        with gr.Row(equal_height=True):
            self.search = gr.Textbox(
                "", label="Search systems", placeholder="name or organisation", scale=2, elem_id=f"{t.name}-search"
            )
            self.rank_by = accepts_labels(
                gr.Dropdown(metric_choices, value=t.rank_by, label="Rank by", scale=1, elem_id=f"{t.name}-rank-by")
            )
            # Slice and filter values are checked against the board's values when a request comes (a value first
            # seen after the start is taken at once): a track drawn when it opens is built with the declared ones
            # only, and every page load sends each tab its current choices (`restore`).
            self.slice = current_choices(
                gr.Dropdown(
                    views.slice_choices(board, t) if on_screen else [views.ALL],
                    value=views.ALL,
                    label="Scores on",
                    scale=1,
                    elem_id=f"{t.name}-slice",
                ),
                lambda: keyed(views.slice_choices(self.board, t)),
                "Scores on",
            )
            # The official scripts' protocol (SCORING.md, "Official scripts"): shown disabled, with why, on a track
            # that declares no deviation (both would show the same numbers).
            self.protocol = accepts_labels(
                gr.Radio(
                    PROTOCOL_CHOICES,
                    value=BOARD,
                    label="Scores",
                    info="as the benchmark's own script scores them, or the board's fixes (About lists them)"
                    if t.deviations
                    else SAME_PROTOCOL,
                    interactive=bool(t.deviations),
                    scale=1,
                    elem_id=f"{t.name}-protocol",
                )
            )
        choices = views.filter_choices(board, t) if on_screen else views.declared_filter_choices(t)
        self.filter_fields = views.filter_fields(t)
        # Folded: the first screen is for the table; the active filters show as chips beside the folded groups.
        with gr.Row(equal_height=False, elem_classes=["fold-row"]):
            with gr.Accordion("Filters", open=False, elem_id=f"{t.name}-filters"):
                with gr.Row():
                    self.filters = [
                        current_choices(
                            gr.Dropdown(
                                keyed(choices.get(f.key, [])),
                                value=[],
                                multiselect=True,
                                label=f.label,
                                elem_id=f"{t.name}-filter-{f.key}",
                            ),
                            lambda key=f.key: keyed(views.filter_choices(self.board, t).get(key, [])),
                            f.label,
                        )
                        for f in self.filter_fields
                    ]
            with gr.Accordion("Columns", open=False):
                self.columns = accepts_labels(
                    gr.CheckboxGroup(
                        views.optional_columns(t),
                        value=views.default_columns(t),
                        label="Shown columns",
                        elem_id=f"{t.name}-columns",
                    )
                )
            # one chip per chosen value, all ticked: unticking one removes that value from its filter
            self.chips = gr.CheckboxGroup(
                [],
                value=[],
                show_label=False,
                container=False,
                visible=False,
                elem_id=f"{t.name}-chips",
                elem_classes=["filter-chips"],
            )
        page_rows = views.page_rows(self.board)
        if on_screen:
            # the initial page only: formatting cost stays that of one page however many systems the board has
            view = views.TableView(show_reported=True, rows=page_rows)
            disp, raw, every = views.table_page(board, t.name, view)
            note = views.page_note(raw, every)
            value, datatype = views.table_value(disp, raw, t), views.datatypes(disp, t)
            widths = views.column_widths(disp, t)
            # Its leaders come with the page's load, which selects the tab and so re-renders its table and leaders
            # (a pass over every system's breakdowns, once per board version): not computed by every start.
            leaders = ""
            systems = views.system_choices(board, t.name, limit=page_rows)
        else:  # drawn when it opens
            value, datatype, note, leaders, systems, widths = None, "str", "", "", [], None
        # The strip's figures come with the table's render (the load's, as the leaders': ranking by each headline
        # metric is a pass over every system); until then its cards hold their place, so the table does not move.
        strip = html.leaders_placeholder([t.metric(k).label for k in views.strip_metrics(t, t.rank_by)], bool(t.reported_files))
        # Who leads on the ranking metric and the headline ones, and who is tied with them: above the table
        self.strip = gr.HTML(strip, elem_id=f"{t.name}-strip")
        self.table = gr.Dataframe(
            value,
            datatype=datatype,
            # declared here too: the page's load does not redraw a table already current, so its widths stay these
            column_widths=widths,
            interactive=False,
            wrap=False,  # one line per row: the CI beside its value in smaller type
            pinned_columns=sum(1 for c in cols.columns(t) if c.kind == "rank" and (c.shown or not c.optional)) + 1,
            show_search="none",
            max_height=640,
            elem_id=f"{t.name}-table",
            label=f"{t.title}: ranked by {t.metric(t.rank_by).label}" + (f" · {note}" if note else ""),
        )
        # Published figures beside the rescored rows (leaderboard/reported.py): on by default, kept in the permalink.
        with gr.Row(equal_height=True, visible=bool(t.reported_files)):
            self.show_reported = gr.Checkbox(
                value=True, label="show reported results", scale=0, min_width=220, elem_id=f"{t.name}-show-reported"
            )
            self.legend = gr.HTML(html.reported_legend(t), elem_id=f"{t.name}-reported-legend")
        # Who leads per category among rescored and among reported rows (tracks with reported figures)
        self.leaders = gr.HTML(leaders, elem_id=f"{t.name}-leaders")
        with gr.Row():
            # "show more": the rows shown grow by a page; the number is a control (permalink, API `rows`)
            self.more = gr.Button("Show more", size="sm", visible=bool(note), elem_id=f"{t.name}-more")
            self.rows = gr.Number(
                value=page_rows, precision=0, label="Systems shown", visible=bool(note), elem_id=f"{t.name}-rows"
            )
            self.csv = gr.DownloadButton("Download table as CSV", size="sm", elem_id=f"{t.name}-csv")
            gr.HTML(html.track_hint(t))
        with gr.Accordion("Charts", open=True):
            with gr.Row():
                self.chart_metric = gr.Dropdown(
                    metric_choices, value=t.rank_by, label="Chart metric", scale=1, elem_id=f"{t.name}-chart-metric"
                )
                self.chart_system = gr.Dropdown(
                    systems,
                    value=systems[0][1] if systems else None,
                    label="System (for per-system charts)",
                    scale=1,
                    allow_custom_value=True,
                    visible=any(c.kind == "pair_heatmap" for c in t.charts),
                    elem_id=f"{t.name}-chart-system",
                )
            self.chart_tabs, self.plots = [], []
            with gr.Tabs(elem_id=f"{t.name}-charts"):
                for i, c in enumerate(t.charts):
                    with gr.Tab(c.title, id=f"{t.name}-chart-{i}") as tab:
                        self.plots.append(gr.Plot(label=c.title, elem_id=f"{t.name}-plot-{i}"))
                    self.chart_tabs.append(tab)
        self.active_chart = gr.Number(0, precision=0, visible=False)  # in the page: see `wire`
        # What this page holds of the tab, in the page itself: coming back to a tab drawn for the board version
        # the page knows asks the server nothing (`wire`). `drawn`: the board version its table and chart on
        # screen were drawn for (the build's until the page's load says otherwise, -1: not drawn); `wanted`:
        # bumped by the page to ask for a draw; `query`: its view as a query string, the URL while it is on screen.
        self.drawn = gr.Number(board.version, precision=0, visible=False)
        self.wanted = gr.Number(0, precision=0, visible=False)
        self.searched = gr.Number(0, precision=0, visible=False)  # bumped by the page: a search to render
        self.query = gr.Textbox(self.query_of(self.view([c.value for c in self.controls])), visible=False)

    @property
    def controls(self) -> list:
        """In API order: a control added later goes last (an API caller that leaves it out gets its default)."""
        return [self.rank_by, self.slice, self.search, *self.filters, self.columns, self.show_reported, self.rows, self.protocol]

    @property
    def api_inputs(self) -> dict:
        """The controls by the parameter names API callers see (in `controls` order; not param_0, param_1...)."""
        names = [
            "rank_by",
            "scores_on",
            "search",
            *[_API_FILTER_NAMES.get(f.key, f.key) for f in self.filter_fields],
            "columns",
            "show_reported",
            "rows",
            "protocol",
        ]
        return dict(zip(names, self.controls))

    @property
    def export_inputs(self) -> dict:
        """The CSV export's parameters: those of the table without `rows` (the CSV has every row)."""
        return {k: v for k, v in self.api_inputs.items() if k != "rows"}

    def table_by_name(self, **controls):
        return self.table_api(*(controls[n] for n in self.api_inputs))

    def export_by_name(self, **controls):
        return self.export(*(controls[n] for n in self.export_inputs))

    def view(self, controls, rows: bool = True) -> views.TableView:
        """The controls' values as Gradio passes them (`controls` order; `rows` False: `export_inputs` order)."""
        return views.TableView.from_controls(self.track, controls, views.page_rows(self.board), rows)

    def render(self, *controls, leaders: bool = True):
        """(table update, query string, leaders, ...) for the current controls. `leaders`: False leaves them out
        (the table API returns the table alone: on a track's first request at 10,000 systems, the leaders are a
        quarter of its cost)."""
        return self.render_view(self.view(controls), leaders)

    def query_of(self, view: views.TableView) -> str:
        """The view as the permalink's query string."""
        t = self.track
        keys = cols.keys_of(t, view.columns)
        return urlstate.encode(
            {
                "tab": t.name,
                "rank": cols.metric_key(t, view.rank_by),
                "slice": None if view.scores_on == views.ALL else view.scores_on,
                "q": view.search,
                **{f"f.{k}": v for k, v in view.filters.items()},
                "cols": None if set(keys) == set(views.default_columns(t)) else keys or ["-"],
                "reported": None if view.show_reported or not t.reported_files else "0",
                "rows": None if view.rows == views.page_rows(self.board) else str(view.rows),
                "protocol": None if view.protocol == BOARD else view.protocol,
            }
        )

    def render_view(self, view: views.TableView, leaders: bool = True):
        t = self.track
        disp, raw, every = views.table_page(self.board, t.name, view)
        cut = views.page_note(raw, every)
        note = " · ".join(n for n in (views.protocol_note(t, view.protocol, view.show_reported), cut) if n)
        pinned = sum(1 for c in views.shown_columns(disp, t) if c.kind == "rank") + 1  # ranks and System
        rank_key = cols.metric_key(t, view.rank_by)
        rank_label = t.metric(rank_key).label
        scope = "" if view.scores_on in (None, views.ALL) else f", scores on {view.scores_on}"
        shown = views.leaders_html(self.board, t, every, rank_key, view.protocol) if scope == "" and leaders else ""
        strip = html.leaders_strip(views.leaders(self.board, t.name, view)) if leaders else gr.update()
        return (
            gr.update(
                value=views.table_value(disp, raw, t),
                datatype=views.datatypes(disp, t),
                pinned_columns=pinned,
                column_widths=views.column_widths(disp, t),
                label=f"{t.title}: ranked by {rank_label}{scope}" + (f" · {note}" if note else ""),
            ),
            self.query_of(view),
            shown,
            gr.update(visible=bool(cut)),
            gr.update(visible=bool(cut) or view.rows != views.page_rows(self.board)),
            strip,
            self.chips_update(view),
        )

    def chips_update(self, view: views.TableView):
        """The chips of the values chosen in the folded filters: "Paradigm: text" ("Has results for" by metric label),
        each keyed by its filter and value; hidden while no filter is set."""
        labels = {m.key: m.label for m in self.track.metrics}
        chips = [
            (f"{f.label}: {labels.get(v, v) if f.key == 'has' else v}", _CHIP.join((f.key, v)))
            for f in self.filter_fields
            for v in view.filters.get(f.key) or []
        ]
        return gr.update(choices=chips, value=[key for _, key in chips], visible=bool(chips))

    def remove_chip(self, kept, *filters):
        """A chip unticked: its value leaves its filter (the filters' change re-renders the table and the chips)."""
        kept = set(kept or [])
        return [[v for v in (values or []) if _CHIP.join((f.key, v)) in kept] for f, values in zip(self.filter_fields, filters)]

    def table_api(self, *controls):
        """The table for a view, as an API endpoint (no URL side effect)."""
        return self.render(*controls, leaders=False)[0]

    def export(self, *controls):
        """The view's every row as CSV; `controls` in `export_inputs` order (no rows: the CSV has every row)."""
        view = self.view(controls, rows=False)
        raw = views.view_rows(self.board, self.track.name, view)
        keep = [c for c in raw.columns if c not in ("judging", "errors", "flag_reason")]
        suffix = "" if view.protocol == BOARD else f"-{view.protocol}"  # the file says which scores it holds
        path = export_dir() / f"{self.track.name}-leaderboard{suffix}.csv"
        views.csv_safe(raw[keep]).to_csv(path, index=False)
        return str(path)

    def chart(self, index, metric_label, system_id, *controls):
        view = self.view(controls)
        raw = views.view_rows(self.board, self.track.name, view)
        raw, note = views.chart_rows(raw, system_id)  # the top systems and the pick, not 10,000 series
        systems = views.chart_systems(self.board, self.track.name, raw, view.protocol)
        fig = views.chart(self.track, index, systems, metric_label, system_id)
        if self.track.deviations:  # which scores these are, and what the reported ones are beside them
            fig = figures.with_protocol(fig, view.protocol == OFFICIAL, any(isinstance(s, ChartSummary) for _, s in systems))
        one_system = self.track.charts[index].kind == "pair_heatmap"  # draws the picked system alone: nothing left out
        return fig if one_system else figures.with_note(fig, note)

    def plot(self, index, metric_label, system_id, *controls) -> PlotData:
        """`chart` as the page gets it (its JSON, which Gradio passes on as it is), once per board version and inputs."""
        key = (self.board.version, index, metric_label, system_id, frozen(controls))
        return self._plots.get(
            key, lambda: PlotData(type="plotly", plot=self.chart(index, metric_label, system_id, *controls).to_json())
        )

    def repick_system(self, current):
        """Fresh choices for the per-system charts, keeping the current pick while it exists."""
        choices = views.system_choices(self.board, self.track.name, limit=views.page_rows(self.board), keep=[current])
        ids = [i for _, i in choices]
        if current in ids:  # left alone: writing back a value read earlier could undo a newer pick
            return gr.update(choices=choices)
        return gr.update(choices=choices, value=ids[0] if ids else None)

    def find_system(self, current, evt: gr.KeyUpData):
        """Typing in the per-system picker: the top systems that match what is typed, searched among all."""
        text = str(evt.input_value or "")[:200]
        return gr.update(
            choices=views.system_choices(
                self.board, self.track.name, limit=views.page_rows(self.board), search=text, keep=[current]
            )
        )

    def show_more(self, rows):
        page = views.page_rows(self.board)
        return views.rows_wanted(views.rows_wanted(rows, page) + page, page)

    def redraw_active(self, active, *args):
        """Redraw only the chart on screen; the others are drawn when their tab opens."""
        return [self.plot(i, *args) if i == active else gr.update() for i in range(len(self.plots))]

    def draw(self, active_chart, metric, system_id, *controls, charts: bool = True) -> tuple:
        """The tab whole, for the board as it is: `render`'s outputs, the per-system pick (kept while it exists),
        the board version drawn, then the chart on screen drawn with that pick (`draw_outputs` order; `charts`
        False: left as they are)."""
        version = self.board.version  # read first: data arriving meanwhile leaves the tab marked behind, not ahead
        key = (version, charts, active_chart, metric, system_id, frozen(controls))
        return self._draws.get(key, lambda: self._draw(version, active_chart, metric, system_id, *controls, charts=charts))

    def _draw(self, version, active_chart, metric, system_id, *controls, charts: bool = True) -> tuple:
        pick = self.repick_system(system_id)
        if charts:
            plots = self.redraw_active(active_chart, metric, pick.get("value", system_id), *controls)
        else:
            plots = [gr.update() for _ in self.plots]
        return (*self.render(*controls), pick, version, *plots)

    @property
    def draw_inputs(self) -> list:
        return [self.active_chart, self.chart_metric, self.chart_system, *self.controls]

    @property
    def draw_outputs(self) -> list:
        return [*self.render_outputs, self.chart_system, self.drawn, *self.plots]

    # ---- permalink ----------------------------------------------------------------------------
    @property
    def restore_outputs(self) -> list:
        # the view drawn before the controls: a restored search box finds its table drawn (`wire`)
        return list(dict.fromkeys([*self.draw_outputs, *self.controls]))

    def linked_controls(self, params: dict[str, list[str]], tab: str) -> list:
        """The controls' values a permalink names, in `controls` order (unknown values fall back to defaults);
        defaults unless this tab is named."""
        params = params if tab == self.id else {}
        t = self.track
        slice_choice = urlstate.first(params, "slice", views.ALL)
        shown_cols = params.get("cols")
        rank_key = cols.metric_key(t, urlstate.first(params, "rank"))  # key, or an older link's label
        slice_choice = slice_choice if slice_choice in views.slice_choices(self.board, t) else views.ALL
        search = urlstate.first(params, "q", "")
        choices = views.filter_choices(self.board, t)
        wanted = []
        for f in self.filter_fields:
            pairs = keyed(choices.get(f.key, []))
            wanted.append([v for v in by_label(pairs, params.get(f"f.{f.key}", [])) if v in {k for _, k in pairs}])
        optional = {k for _, k in views.optional_columns(t)}
        columns = [k for k in cols.keys_of(t, shown_cols) if k in optional] if shown_cols else views.default_columns(t)
        show = urlstate.first(params, "reported", "1") != "0"
        rows = views.rows_wanted(urlstate.first(params, "rows"), views.page_rows(self.board))
        protocol = protocol_of(t, urlstate.first(params, "protocol", BOARD))  # the board's on a track without deviations
        return [rank_key, slice_choice, search, *wanted, columns, show, rows, protocol]

    def restore(self, params: dict[str, list[str]], tab: str, held: float | None = None) -> dict:
        """Control values from a permalink (`linked_controls`) with their current choices; the tab drawn if the page
        opens on it (its chart apart: `opening_chart`). `held`: the board version of the table the page opened
        with (its `drawn` as served: built, or `serve`)."""
        t = self.track
        controls = self.linked_controls(params, tab)
        out: dict = {}
        restored = []  # controls given another value than the page was built with
        filter_choices = views.filter_choices(self.board, t)
        for control, value in zip(self.controls, controls):
            more = {}
            if control is self.slice:
                more["choices"] = views.slice_choices(self.board, t)
            elif control in self.filters:
                more["choices"] = keyed(filter_choices.get(self.filter_fields[self.filters.index(control)].key, []))
            # A value is sent only where it differs from the control's value as built, which the page starts from
            # (a value sent again fires the control's change); a control restored to another value is a view
            # other than the table built with the page.
            if value == control.value:
                out[control] = gr.update(**more)
            else:
                out[control] = gr.update(value=value, **more)
                restored.append(control)
        if tab != self.id:  # drawn after the tab the page opens on (`prefetch`) or when it opens
            out.update({c: gr.update() for c in self.draw_outputs if c not in out})
            out[self.drawn] = -1
            return out
        # The tab the page opens on, drawn by the page's load: its table (unless the page holds it as it is) and
        # its leaders; its chart comes apart, at once (`opening_chart`), after the table the page shows as it opens.
        drawn = dict(
            zip(self.draw_outputs, self.draw(0, self.chart_metric.value, self.chart_system.value, *controls, charts=False))
        )
        if self.served is not None and not restored:
            self.serve(drawn)
            if held == drawn[self.drawn]:  # the page opened with the table of this version: not sent again
                drawn[self.table] = gr.update()
            if self.holds_served(held, drawn[self.drawn]):  # and with its strip
                drawn[self.strip] = gr.update()
        drawn[self.rows] = {**drawn[self.rows], **out[self.rows]}  # shown or not, and the restored number
        out.update(drawn)
        return out

    def serve(self, drawn: dict) -> None:
        """The page's opening view as a load drew it (`draw_outputs` -> updates) into the page as served from now
        on: its table, leaders strip and first chart, with the board version they are for (the tab's `drawn` and
        the page's `data_version`). The next visitors see the table as it is now and who leads with the page
        itself, not after their load's answer (which waits behind the page's other work: a second and more), their
        chart as soon as Plotly is ready, and their load sends none of them again (`restore`, `opening_chart`).
        Newer versions only; the versions go last, so a page served meanwhile holds them behind and is sent the
        view again."""
        version = drawn[self.drawn]
        if version <= self.served_version:
            return
        self.served_version = version
        view = {c: drawn[c] for c in (self.table, self.strip, self.more, self.rows)}
        view[self.plots[0]] = self.opening_chart({})[0]  # the same figure as the load's (drawn once per version)
        versions = [self.drawn] + ([self.data_version] if self.data_version is not None else [])
        serve(self.served, {**view, **dict.fromkeys(versions, version)})

    def holds_served(self, held: float | None, version: int) -> bool:
        """Whether a page that opened with `drawn` = `held` holds the view `serve` wrote for board `version` (its
        strip and chart). The build's version is no proof: a page served before any load has it too, with the
        build's placeholder strip and no chart."""
        return held == version == self.served_version and version != self.built_version

    def opening_chart(self, params: dict[str, list[str]], held: float | None = None) -> list:
        """The first chart of the tab a page opens on (updates of `plots`), for the view its permalink names: a
        request of its own beside the page's load, which restores every tab (its answer comes later). None when
        the page holds it (`holds_served` for the board as it is; `held`: the page's `drawn`) and the view is the
        default one."""
        controls = self.linked_controls(params, self.id)
        if self.holds_served(held, self.board.version) and controls == [c.value for c in self.controls]:
            return [gr.update() for _ in self.plots]
        pick = self.repick_system(self.chart_system.value)
        system = pick.get("value", self.chart_system.value)
        return self.redraw_active(0, self.chart_metric.value, system, *controls)

    def prefetch(self, *inputs) -> tuple:
        """`draw` for the track (`draw_inputs`), unless the page holds it drawn for the board as it is."""
        drawn, *inputs = inputs
        if drawn == self.board.version:
            return tuple(gr.update() for _ in self.draw_outputs)
        return self.draw(*inputs)

    # ---- events -------------------------------------------------------------------------------
    def wire(self, page: Page, tab: gr.Tab) -> None:
        """Every control re-renders the table and the URL; the tab is drawn once per board version (when it opens,
        or when new data comes while it is on screen); a row click opens the submission."""
        name = self.id
        self.data_version = page.data_version
        # A visitor's input re-renders the table (`input`, not `change`: the page's load draws a permalink's view
        # with the tab, `restore`, and a multiselect dropdown announces a change each time its tab is first shown,
        # Gradio 6). The search box answers its change (typed or pasted), unless the table shown is for that text
        # already (a permalink's). One listener for all, always_last: typing, the last render is the one that stays.
        self.search.change(
            None,
            [self.search, self.query, self.searched],
            self.searched,
            js="(text, query, n) => (new URLSearchParams(query).get('q') ?? '') === text ? n : n + 1",
        )
        gr.on(
            [c.input for c in self.controls if c is not self.search] + [self.searched.change],
            self.render,
            self.controls,
            self.render_outputs,
            api_name=False,
            show_progress="hidden",
            trigger_mode="always_last",
        )
        self.search.submit(self.table_by_name, None, self.table, api_name=f"table_{name}", inputs_kwargs=self.api_inputs)
        # In the page, no request: the tab on screen and its URL (not when the tab on screen is selected again, as
        # the page does when it starts: the URL is then the permalink its load reads); a draw asked for only when
        # the tab the page holds is behind the board version the page knows (coming back to a current tab redraws
        # nothing).
        # A chart drawn while its tab was hidden (mounted before it opened: layout.PREMOUNT_JS) is drawn at its size
        # (the hidden tab is laid out unseen: assets/style.css); if its width still differs once the tab shows (a
        # page whose stylesheet did not apply), a window resize lays it out again (Gradio's charts are responsive).
        tab.select(
            None,
            [self.drawn, page.data_version, self.wanted, self.query, page.active_tab, page.url],
            [page.active_tab, page.url, self.wanted],
            js=f"""(drawn, version, wanted, query, active, url) => {{
                requestAnimationFrame(() => {{
                  const plots = [...document.querySelectorAll('#{name}-charts .js-plotly-plot')];
                  if (plots.some((gd) => gd.offsetWidth && gd._fullLayout && Math.abs(gd._fullLayout.width - gd.offsetWidth) > 1))
                    window.dispatchEvent(new Event('resize'));
                }});
                return [{name!r}, active === {name!r} ? url : query, drawn === version ? wanted : wanted + 1];
            }}""",
        )
        page.data_version.change(
            None,
            [page.active_tab, self.drawn, page.data_version, self.wanted],
            self.wanted,
            js=f"(active, drawn, version, wanted) => active === {name!r} && drawn !== version ? wanted + 1 : wanted",
        )
        self.query.change(
            None,
            [self.query, page.active_tab, page.url],
            page.url,
            js=f"(query, active, url) => active === {name!r} ? query : url",
        )
        self.wanted.change(self.draw, self.draw_inputs, self.draw_outputs, api_name=False, show_progress="hidden")
        self.csv.click(self.export_by_name, None, self.csv, api_name=f"export_csv_{name}", inputs_kwargs=self.export_inputs)
        self.more.click(self.show_more, self.rows, self.rows, api_name=False, show_progress="hidden").then(
            self.render, self.controls, self.render_outputs, api_name=False, show_progress="hidden"
        )
        # `input`: a visitor's untick only (the render's own update of the chips fires no event); the filters it
        # updates announce no `input`, so the table re-renders from here
        self.chips.input(
            self.remove_chip, [self.chips, *self.filters], self.filters, api_name=False, show_progress="hidden"
        ).then(self.render, self.controls, self.render_outputs, api_name=False, show_progress="hidden")
        chart_inputs = [self.chart_metric, self.chart_system, *self.controls]
        # A chart tab selected (a visitor's click, or its tab shown the first time) draws its chart, unless it is the
        # one on screen already: the draws keep that one current.
        for i, ctab in enumerate(self.chart_tabs):
            ctab.select(None, None, self.active_chart, js=f"() => {i}")
        # Charts follow the "Scores" choice and the chart controls when a visitor changes them (a draw sets the
        # per-system pick and the chart drawn with it at once, a permalink's choice is drawn by the page's load).
        for event in (self.active_chart.change, self.chart_metric.input, self.chart_system.input, self.protocol.input):
            event(self.redraw_active, [self.active_chart, *chart_inputs], self.plots, api_name=False)
        self.protocol.change(
            lambda protocol: html.reported_legend(self.track, protocol), self.protocol, self.legend, api_name=False
        )
        self.chart_system.key_up(
            self.find_system,
            self.chart_system,
            self.chart_system,
            api_name=False,
            show_progress="hidden",
            **IN_ORDER,
        )
        self.table.select(self.open_row, None, [page.main_tabs, page.active_tab, page.open_system], api_name=False)

    @property
    def render_outputs(self) -> list:
        return [self.table, self.query, self.leaders, self.more, self.rows, self.strip, self.chips]

    def open_row(self, evt: gr.SelectData):
        """A click on a table row opens that submission in the System tab (when the Id column is shown)."""
        row = evt.row_value or []
        entry_id = next(
            (
                v
                for v in reversed(row)
                if isinstance(v, str) and (views.visible_entry(self.board, v) is not None or views.reported_row(self.board, v))
            ),
            None,
        )
        if entry_id is None:  # the Id column is hidden: nothing to open
            return gr.update(), gr.update(), gr.update()
        return gr.Tabs(selected="system"), "system", gr.update(value=entry_id)
