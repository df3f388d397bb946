"""One track's tab: controls, the ranked table, CSV export and lazily drawn charts, all from the declarations."""

from __future__ import annotations

import gradio as gr

from ...ranking import BOARD, OFFICIAL, protocol_of
from ...reported import ChartSummary
from ...service import Board
from ...tracks import Track
from .. import columns as cols
from .. import figures, html, urlstate, views
from .common import IN_ORDER, Page, accepts_labels, by_label, current_choices, export_dir, keyed

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
        """`on_screen`: the tab a page opens on. The others are drawn when they open (their tab's select renders
        the table, `wire`) or when a permalink opens on them (`restore`): ranking a track is a pass over all of
        its systems (a third of the start-up at 10,000 submissions), so a track nobody opens costs none of it."""
        self.id = track.name
        self.board, self.track = board, track
        self.drawn_at_build = on_screen
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
            # Its leaders come with the page's load, which selects the tab and so re-renders its table and leaders
            # (a pass over every system's breakdowns, once per board version): not computed by every start.
            leaders = ""
            systems = views.system_choices(board, t.name, limit=page_rows)
        else:  # drawn when it opens
            value, datatype, note, leaders, systems = None, "str", "", "", []
        # The strip's figures come with the table's render (the load's, as the leaders': ranking by each headline
        # metric is a pass over every system); until then its cards hold their place, so the table does not move.
        strip = html.leaders_placeholder([t.metric(k).label for k in views.strip_metrics(t, t.rank_by)], bool(t.reported_files))
        # Who leads on the ranking metric and the headline ones, and who is tied with them: above the table
        self.strip = gr.HTML(strip, elem_id=f"{t.name}-strip")
        self.table = gr.Dataframe(
            value,
            datatype=datatype,
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
        self.active_chart = gr.State(0)

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

    def render(self, active, *controls, leaders: bool = True):
        """(table update, URL query, leaders, ...) for the current controls; the URL only while this tab is on
        screen. `leaders`: False leaves them out (the table API returns the table alone: on a track's first
        request at 10,000 systems, the leaders are a quarter of its cost)."""
        return self.render_view(active, self.view(controls), leaders)

    def render_view(self, active, view: views.TableView, leaders: bool = True):
        t = self.track
        disp, raw, every = views.table_page(self.board, t.name, view)
        cut = views.page_note(raw, every)
        note = " · ".join(n for n in (views.protocol_note(t, view.protocol, view.show_reported), cut) if n)
        pinned = sum(1 for c in views.shown_columns(disp, t) if c.kind == "rank") + 1  # ranks and System
        rank_key = cols.metric_key(t, view.rank_by)
        keys = cols.keys_of(t, view.columns)
        query = urlstate.encode(
            {
                "tab": t.name,
                "rank": rank_key,
                "slice": None if view.scores_on == views.ALL else view.scores_on,
                "q": view.search,
                **{f"f.{k}": v for k, v in view.filters.items()},
                "cols": None if set(keys) == set(views.default_columns(t)) else keys or ["-"],
                "reported": None if view.show_reported or not t.reported_files else "0",
                "rows": None if view.rows == views.page_rows(self.board) else str(view.rows),
                "protocol": None if view.protocol == BOARD else view.protocol,
            }
        )
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
            query if active == t.name else gr.update(),
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
        return self.render(None, *controls, leaders=False)[0]

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
        return [self.chart(i, *args) if i == active else gr.update() for i in range(len(self.plots))]

    # ---- permalink ----------------------------------------------------------------------------
    @property
    def restore_outputs(self) -> list:
        return [*self.controls, self.table, self.leaders, self.more, self.chart_system, self.strip, self.chips]

    def restore(self, params: dict[str, list[str]], tab: str) -> dict:
        """Control values from a permalink (unknown values fall back to defaults); defaults unless this tab is named."""
        params = params if tab == self.id else {}
        t = self.track
        slice_choice = urlstate.first(params, "slice", views.ALL)
        shown_cols = params.get("cols")
        rank_key = cols.metric_key(t, urlstate.first(params, "rank"))  # key, or an older link's label
        slice_choice = slice_choice if slice_choice in views.slice_choices(self.board, t) else views.ALL
        search = urlstate.first(params, "q", "")
        out: dict = {}

        def put(control, value, **more):
            # A value is sent only where it differs from the control's value as built, which the page starts from:
            # a value sent again fires the control's change, and every track's table was re-rendered (the tracks
            # off screen ranked) at each page load.
            out[control] = gr.update(**more) if value == control.value else gr.update(value=value, **more)

        put(self.rank_by, rank_key)
        put(self.slice, slice_choice, choices=views.slice_choices(self.board, t))
        put(self.search, search)
        choices = views.filter_choices(self.board, t)
        wanted = []
        for f, control in zip(self.filter_fields, self.filters):
            pairs = keyed(choices.get(f.key, []))
            wanted.append([v for v in by_label(pairs, params.get(f"f.{f.key}", [])) if v in {k for _, k in pairs}])
            put(control, wanted[-1], choices=pairs)
        optional = {k for _, k in views.optional_columns(t)}
        columns = [k for k in cols.keys_of(t, shown_cols) if k in optional] if shown_cols else views.default_columns(t)
        show = urlstate.first(params, "reported", "1") != "0"
        rows = views.rows_wanted(urlstate.first(params, "rows"), views.page_rows(self.board))
        protocol = protocol_of(t, urlstate.first(params, "protocol", BOARD))  # the board's on a track without deviations
        put(self.columns, columns)
        put(self.show_reported, show)
        put(self.rows, rows)
        put(self.protocol, protocol)
        # A link opening on a track not drawn yet: draw it now. (The tab a page opens on is selected by the page's
        # load, and its select re-renders its table: with the board as it is then, its leaders included.)
        if tab == self.id and not self.drawn_at_build:
            view = self.view([rank_key, slice_choice, search, *wanted, columns, show, rows, protocol])
            table, _, leaders, more, rows_shown, strip, chips = self.render_view(None, view)
            out.update({self.table: table, self.leaders: leaders, self.more: more, self.rows: {**rows_shown, "value": rows}})
            out.update({self.strip: strip, self.chips: chips})
            out[self.chart_system] = self.repick_system(None)
        else:  # drawn already (or drawn when it opens): left as it is
            kept = (self.table, self.leaders, self.more, self.chart_system, self.strip, self.chips)
            out.update({c: gr.update() for c in kept})
        return out

    # ---- events -------------------------------------------------------------------------------
    def wire(self, page: Page, tab: gr.Tab) -> None:
        """Every control re-renders the table and the URL; charts build when shown; a row click opens the submission."""
        name = self.id
        # One listener for all controls, always_last: a permalink sets several controls at once and their change
        # events fire one by one, some reading the others' old values; run in order, the last render (which
        # reads them all restored) is the one that stays on screen.
        gr.on(
            [c.change for c in self.controls],
            self.render,
            [page.active_tab, *self.controls],
            self.render_outputs(page),
            api_name=False,
            show_progress="hidden",
            trigger_mode="always_last",
        )
        self.search.submit(self.table_by_name, None, self.table, api_name=f"table_{name}", inputs_kwargs=self.api_inputs)
        tab.select(lambda: name, None, page.active_tab, api_name=False).then(
            self.render,
            [page.active_tab, *self.controls],
            self.render_outputs(page),
            api_name=False,
            show_progress="hidden",
        )
        self.csv.click(self.export_by_name, None, self.csv, api_name=f"export_csv_{name}", inputs_kwargs=self.export_inputs)
        self.more.click(self.show_more, self.rows, self.rows, api_name=False, show_progress="hidden")
        # `input`: a visitor's untick only (the render's own update of the chips fires no event)
        self.chips.input(self.remove_chip, [self.chips, *self.filters], self.filters, api_name=False, show_progress="hidden")
        chart_inputs = [self.chart_metric, self.chart_system, *self.controls]
        for i, (ctab, plot) in enumerate(zip(self.chart_tabs, self.plots)):
            index = gr.Number(i, visible=False)
            ctab.select(lambda i: i, index, self.active_chart, api_name=False).then(
                self.chart, [index, *chart_inputs], plot, api_name=False
            )
        # the first chart of a track is drawn when the track tab opens
        first = gr.Number(0, visible=False)
        tab.select(self.chart, [first, *chart_inputs], self.plots[0], api_name=False)
        if not self.drawn_at_build:  # its per-system picker is filled when it opens too (the pick redraws the chart)
            tab.select(self.repick_system, self.chart_system, self.chart_system, api_name=False, show_progress="hidden")
        for control in (self.chart_metric, self.chart_system, self.protocol):  # charts follow the "Scores" choice
            control.change(self.redraw_active, [self.active_chart, *chart_inputs], self.plots, api_name=False)
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
        # new data: re-render the table and refresh the per-system chart picker, keeping every current choice
        page.data_version.change(
            self.render,
            [page.active_tab, *self.controls],
            self.render_outputs(page),
            api_name=False,
            show_progress="hidden",
        )
        page.data_version.change(self.repick_system, self.chart_system, self.chart_system, api_name=False, show_progress="hidden")

    def render_outputs(self, page: Page) -> list:
        return [self.table, page.url, self.leaders, self.more, self.rows, self.strip, self.chips]

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
