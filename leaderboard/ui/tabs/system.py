"""The System tab: one submission's metadata, scores per category, per-unit scores and raw records."""

from __future__ import annotations

import gradio as gr

from ... import reported
from ...service import Board
from ...tracks import TRACKS
from .. import urlstate, views
from .common import IN_ORDER, Page, on_screen, record_box, record_download


def all_systems(board: Board, limit: int | None = None, search: str = "", keep: tuple | list = ()) -> list[tuple[str, str]]:
    """(label, id) of every visible submission and reported row, by track.

    `limit`: at most that many submissions per track (a picker of 10,000 choices is heavy in a browser);
    `search`: only those whose label contains it, searched before the cut; `keep`: ids listed anyway (the pick).
    """
    needle = search.casefold()
    out = []
    for name, t in TRACKS.items():
        listed = 0
        for e in views.track_entries(board, name):
            if e.hidden:  # maintainers hid it: no view lists or opens it
                continue
            if limit is not None and listed >= limit and e.id not in keep:
                continue
            status = f"duplicate of {e.duplicate_of[:7]}" if e.duplicate_of else e.status
            label = f"{t.title} · {e.name[:60]} · {e.id[:7]} ({status})"
            if needle and needle not in label.casefold() and e.id not in keep:
                continue
            listed += 1
            out.append((label, e.id))
    for t in TRACKS.values():  # published figures, each with its source in the detail view
        rows = [(f"{t.title} · {r.name[:60]} (reported)", reported.row_id(t, r)) for r in views.reported_rows(board, t)]
        out += [(label, i) for label, i in rows if not needle or needle in label.casefold() or i in keep]
    return out


def _opens(board: Board, entry_id) -> bool:
    """Whether the System tab can show this id: a visible submission or a reported row."""
    return isinstance(entry_id, str) and (
        views.visible_entry(board, entry_id) is not None or views.reported_row(board, entry_id) is not None
    )


class SystemTab:
    id = "system"
    title = "System"

    def __init__(self, board: Board):
        self.board = board
        with gr.Row():
            # Built without choices: the page's load sends them (`restore`, for every visitor, with the board as it
            # is then). Listing them here read a page of every track's summaries at start-up, the tracks not on
            # screen included: a third of the index read for a picker no visitor sees as built.
            self.system = gr.Dropdown(
                [],
                value=None,
                label="Submission",
                elem_id="system-pick",
                scale=4,
                allow_custom_value=True,
            )
            self.pick = gr.Button("Show", scale=0, elem_id="system-show")
        meta = gr.HTML(elem_id="system-meta")
        # The tables and the unit controls are shown once a system has them: an empty table reads as headers
        # "1 2 3", and a reported row (published figures) has no units to filter, search or open.
        self.breakdown = gr.Dataframe(
            interactive=False, label="Scores per category", datatype="str", elem_id="system-breakdown", visible=False
        )
        with gr.Column(visible=False, elem_id="system-unit-views") as self.unit_views:
            with gr.Row():
                self.category = gr.Dropdown(
                    [], label="Filter units by category", elem_id="system-category", allow_custom_value=True
                )
                self.search = gr.Textbox(label="Search units", elem_id="system-search")
            self.units_out = gr.Dataframe(
                interactive=False,
                label="Per-unit scores (first 500 that match)",
                datatype="str",
                elem_id="system-units",
                max_height=420,
            )
            self.unit = gr.Textbox(
                label="Raw prediction for unit (click a row above, or type a unit id and press Enter)", elem_id="system-unit"
            )
            self.record_out = record_box("Raw prediction record", "system-record")
            self.download_out = gr.DownloadButton(
                "Download the whole record", size="sm", visible=False, elem_id="system-record-file"
            )
        self.outputs = [meta, self.breakdown, self.category, self.units_out]  # the /detail API's

    # ---- handlers -----------------------------------------------------------------------------
    def detail_api(self, entry_id):
        """(metadata HTML, scores per category, the category filter's update, per-unit scores): /detail."""
        html, bd, uf = views.detail(self.board, entry_id)
        e = views.visible_entry(self.board, entry_id)
        cats = views.unit_categories(self.board, e) if e is not None and len(uf) else []
        return html, bd, gr.update(choices=[""] + cats, value=""), uf

    def show(self, entry_id):
        """The page's view: /detail's outputs, each table shown where it has rows, then the URL query."""
        html, bd, category, uf = self.detail_api(entry_id)
        query = urlstate.encode({"tab": self.id, "sys": entry_id})
        return html, gr.update(value=bd, visible=len(bd) > 0), category, uf, gr.update(visible=len(uf) > 0), query

    def units(self, entry_id, cat, text):
        e = views.visible_entry(self.board, entry_id)
        return views.unit_frame(self.board, e, cat or None, text or "") if e else None

    def record_api(self, entry_id, unit_id):
        return views.unit_record(self.board, entry_id, (unit_id or "").strip())

    def download(self, entry_id, unit_id):
        return record_download(self.board, entry_id, (unit_id or "").strip())

    def pick_unit(self, entry_id, evt: gr.SelectData):
        """A click on a per-unit row shows that unit's raw record."""
        unit_id = str((evt.row_value or [""])[0])
        return unit_id, views.unit_record(self.board, entry_id, unit_id)

    def repick(self, entry_id):
        """New data: fresh choices, the pick left alone (a value read before a permalink's restore would undo it)."""
        return gr.update(choices=all_systems(self.board, views.page_rows(self.board), keep=[entry_id]))

    def find(self, entry_id, evt: gr.KeyUpData):
        """Typing in the picker: the submissions that match what is typed, searched among all of them."""
        text = str(evt.input_value or "")[:200]
        return gr.update(choices=all_systems(self.board, views.page_rows(self.board), search=text, keep=[entry_id]))

    # ---- permalink ----------------------------------------------------------------------------
    @property
    def restore_outputs(self) -> list:
        return [self.system]

    def leader(self, track_name) -> str | None:
        """The leader of a track's table (of the first track when `track_name` is not one): what the tab opens on."""
        return views.leader_id(self.board, track_name if track_name in TRACKS else next(iter(TRACKS)))

    def enter(self, previous, entry_id):
        """(the active tab, the pick): the tab opens on the leader of the track the visitor comes from while nothing
        is picked, not on an empty picker; a pick made before is kept, and so is a permalink's (the page selects the
        tab it opens on again after its load, which restored the link's pick or its wrong id left unpicked)."""
        if entry_id or previous == self.id:
            return self.id, gr.update()
        return self.id, gr.update(value=self.leader(previous))

    def restore(self, params: dict[str, list[str]], tab: str) -> dict:
        asked = urlstate.first(params, "sys")
        want = asked if _opens(self.board, asked) else None  # any system: a link may name the 9,000th
        # A link to the tab naming no system opens on a leader too; a wrong id stays unpicked (another system in
        # its place would pass for the one the link names).
        if asked is None and tab == self.id:
            want = self.leader(None)
        return {self.system: gr.update(choices=all_systems(self.board, views.page_rows(self.board), keep=[want]), value=want)}

    # ---- events -------------------------------------------------------------------------------
    def wire(self, page: Page, tab: gr.Tab) -> None:
        shown = [*self.outputs, self.unit_views, page.url]
        tab.select(self.enter, [page.active_tab, self.system], [page.active_tab, self.system], api_name=False).then(
            on_screen(self.id, self.show), [page.active_tab, self.system], shown, api_name=False
        )
        self.system.change(on_screen(self.id, self.show), [page.active_tab, self.system], shown, api_name=False)
        self.system.key_up(self.find, self.system, self.system, api_name=False, show_progress="hidden", **IN_ORDER)
        # Show redraws the pick whose change has already shown or hidden each part (`show`): /detail's outputs only
        self.pick.click(self.detail_api, self.system, self.outputs, api_name="detail")
        for control in (self.category, self.search):
            control.change(self.units, [self.system, self.category, self.search], self.units_out, api_name=False)
        self.unit.submit(self.record_api, [self.system, self.unit], self.record_out, api_name="record").then(
            self.download, [self.system, self.unit], self.download_out, api_name=False
        )
        self.units_out.select(self.pick_unit, self.system, [self.unit, self.record_out], api_name=False).then(
            self.download, [self.system, self.unit], self.download_out, api_name=False
        )
        page.data_version.change(self.repick, self.system, self.system, api_name=False, show_progress="hidden")
