"""The Compare tab: two systems of one track, every metric's difference with its CI, where they differ most."""

from __future__ import annotations

import gradio as gr

from ...service import Board
from ...tracks import TRACKS
from .. import html, urlstate, views
from .common import IN_ORDER, Page, on_screen, record_box, record_download

# Resolves a task later: the browser applies an answer's updates in promise callbacks, all run before it.
SETTLED_JS = "() => new Promise((resolve) => setTimeout(resolve, 0))"


class CompareTab:
    id = "compare"
    title = "Compare"

    def __init__(self, board: Board):
        self.board = board
        self.first_track = next(iter(TRACKS))
        choices = self.choices(self.first_track)
        gr.HTML(html.COMPARE_HINT)
        with gr.Row():
            self.track = gr.Dropdown(
                [(t.title, n) for n, t in TRACKS.items()], value=self.first_track, label="Track", elem_id="compare-track"
            )
            self.a = gr.Dropdown(
                choices, value=choices[0][1] if choices else None, label="System A", elem_id="compare-a", allow_custom_value=True
            )
            self.b = gr.Dropdown(
                choices,
                value=choices[1][1] if len(choices) > 1 else None,
                label="System B",
                elem_id="compare-b",
                allow_custom_value=True,
            )
            self.go = gr.Button("Compare", variant="primary", scale=0, elem_id="compare-go")
        summary = gr.HTML(elem_id="compare-summary")
        metrics = gr.Dataframe(interactive=False, label="Metrics", elem_id="compare-metrics", datatype="str")
        plot = gr.Plot(label="Difference per category", elem_id="compare-plot")
        top = gr.Dataframe(
            interactive=False, label="Where they differ most", wrap=True, datatype="str", elem_id="compare-top", max_height=420
        )
        self.unit = gr.Dropdown([], label="Show both raw predictions for", elem_id="compare-unit", allow_custom_value=True)
        self.outputs = [summary, metrics, plot, top, self.unit]
        with gr.Row():
            self.record_outputs = [
                record_box("A's prediction", "compare-rec-a"),
                record_box("B's prediction", "compare-rec-b"),
            ]
        with gr.Row():
            self.download_outputs = [
                gr.DownloadButton("Download A's whole record", size="sm", visible=False, elem_id="compare-rec-a-file"),
                gr.DownloadButton("Download B's whole record", size="sm", visible=False, elem_id="compare-rec-b-file"),
            ]

    # ---- handlers -----------------------------------------------------------------------------
    def run(self, track_name, a_id, b_id):
        text, mframe, fig, topf = views.compare_view(self.board, a_id, b_id, track_name)
        units = topf["Unit"].tolist() if "Unit" in topf else []
        query = urlstate.encode({"tab": self.id, "track": track_name, "a": a_id, "b": b_id})
        return (html.compare_summary(text), mframe, fig, topf, gr.update(choices=units, value=units[0] if units else None), query)

    def compare_api(self, track, system_a, system_b):
        return self.run(track, system_a, system_b)[:-1]

    def choices(self, track_name, *keep, search: str = "") -> list[tuple[str, str]]:
        """The pickers' choices: the top systems of the track (a page), those matching `search`, the current picks."""
        return views.system_choices(
            self.board, track_name, reported_too=True, limit=views.page_rows(self.board), search=search, keep=keep
        )

    def find(self, track_name, current, evt: gr.KeyUpData):
        """Typing in a picker: the top systems that match what is typed, searched among every system of the track."""
        if track_name not in TRACKS:
            return gr.update()
        return gr.update(choices=self.choices(track_name, current, search=str(evt.input_value or "")[:200]))

    def pick_track(self, track_name, a_id=None, b_id=None):
        """New choices for the track; picks already on this track stay (a permalink sets track, A and B at once)."""
        valid = views.system_ids(self.board, track_name, reported_too=True) if track_name in TRACKS else set()
        a_id, b_id = (a_id if a_id in valid else None), (b_id if b_id in valid else None)
        ch = self.choices(track_name, a_id, b_id) if track_name in TRACKS else []
        ids = [i for _, i in ch]
        a_id = a_id if a_id in ids else (ids[0] if ids else None)
        b_id = b_id if b_id in ids and b_id != a_id else next((i for i in ids if i != a_id), None)
        return gr.update(choices=ch, value=a_id), gr.update(choices=ch, value=b_id)

    def refresh_choices(self, track_name, a_id=None, b_id=None):
        """New data: fresh choices; a pick is rewritten only when it no longer exists.

        The values this handler reads may be older than a permalink's restore that lands just before its
        answer (both are queued at page load): writing them back would undo the restore.
        """
        valid = views.system_ids(self.board, track_name, reported_too=True) if track_name in TRACKS else set()
        ch = self.choices(track_name, *(i for i in (a_id, b_id) if i in valid)) if track_name in TRACKS else []
        ids = [i for _, i in ch]
        new_a, new_b = self.pick_track(track_name, a_id, b_id)
        return (gr.update(choices=ch) if a_id in ids else new_a, gr.update(choices=ch) if b_id in ids and b_id != a_id else new_b)

    def records(self, a_id, b_id, unit_id):
        return views.both_records(self.board, a_id, b_id, unit_id)

    def downloads(self, a_id, b_id, unit_id):
        return record_download(self.board, a_id, unit_id), record_download(self.board, b_id, unit_id)

    # ---- permalink ----------------------------------------------------------------------------
    @property
    def restore_outputs(self) -> list:
        return [self.track, self.a, self.b]

    def restore(self, params: dict[str, list[str]], tab: str) -> dict:
        track_name = urlstate.first(params, "track", self.first_track)
        if track_name not in TRACKS:
            track_name = self.first_track
        want_a, want_b = urlstate.first(params, "a"), urlstate.first(params, "b")
        valid = views.system_ids(self.board, track_name, reported_too=True)  # any system: a link may name the 9,000th
        ch = self.choices(track_name, *(i for i in (want_a, want_b) if i in valid))
        ids = [i for _, i in ch]
        return {
            self.track: gr.update(value=track_name),
            self.a: gr.update(choices=ch, value=want_a if want_a in ids else (ids[0] if ids else None)),
            self.b: gr.update(choices=ch, value=want_b if want_b in ids else (ids[1] if len(ids) > 1 else None)),
        }

    # ---- events -------------------------------------------------------------------------------
    def wire(self, page: Page, tab: gr.Tab) -> None:
        """The API endpoint returns the comparison; the page also writes the URL while on screen."""
        picks = [self.track, self.a, self.b]
        # Both paths that draw the comparison share one queue slot: one run at a time, answered in the order they
        # reach the server (which need not be the order the page sent them in: see SETTLED_JS below).
        in_order = {"concurrency_limit": 1, "concurrency_id": "compare-view"}
        tab.select(lambda: self.id, None, page.active_tab, api_name=False).then(
            on_screen(self.id, self.run), [page.active_tab, *picks], self.outputs + [page.url], api_name=False, **in_order
        )
        # A and B set by one answer (a permalink's restore, another track's picks, new data) are written one at a
        # time, and A's change fires before B is written: a run sent from there would carry a pair nobody picked,
        # and two runs sent at once can reach the server in either order (both pass the browser's always_last
        # check before either is registered), so that run could land last. The run is sent once the answer is
        # applied (SETTLED_JS): every run carries the pair as it ends up.
        gr.on([self.a.change, self.b.change], None, None, None, js=SETTLED_JS, api_name=False, show_progress="hidden").then(
            on_screen(self.id, self.run),
            [page.active_tab, *picks],
            self.outputs + [page.url],
            api_name=False,
            trigger_mode="always_last",
            **in_order,
        )
        # .input: only a user's pick of another track resets A and B; a permalink sets all three itself
        self.track.input(self.pick_track, picks, [self.a, self.b], api_name=False)
        for pick in (self.a, self.b):
            pick.key_up(self.find, [self.track, pick], pick, api_name=False, show_progress="hidden", **IN_ORDER)
        self.go.click(self.compare_api, picks, self.outputs, api_name="compare")
        self.unit.change(self.records, [self.a, self.b, self.unit], self.record_outputs, api_name=False).then(
            self.downloads, [self.a, self.b, self.unit], self.download_outputs, api_name=False
        )
        page.data_version.change(self.refresh_choices, picks, [self.a, self.b], api_name=False, show_progress="hidden")
