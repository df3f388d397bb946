"""The Gradio page, generated from the track registry: one tab per track, then compare, system, submit, about.

Each tab is a unit (ui/tabs/): it builds its components, wires its events and restores itself from a permalink.
Handlers only call the views (ui/views/) / the board service; nothing here parses a submission or computes a metric.
"""

from __future__ import annotations

import functools
import json
import logging
import reprlib
import secrets
from pathlib import Path

import gradio as gr

from ..service import Board
from ..tracks import TRACKS
from . import html, urlstate
from .html import TAGLINE, TITLE, status_html
from .tabs import AboutTab, CompareTab, Page, SubmitTab, SystemTab, TrackTab
from .tabs.common import first_show, record_download
from .tabs.submit import discard_upload, submission_result_html

log = logging.getLogger(__name__)
ASSETS = Path(__file__).resolve().parents[2] / "assets"
CSS = (ASSETS / "style.css").read_text(encoding="utf-8") if (ASSETS / "style.css").exists() else ""


def _plotly_chunk() -> str | None:
    """The file name of Gradio's Plotly bundle in its frontend (named by a hash of its build), None without it."""
    found = sorted((Path(gr.__file__).parent / "templates" / "frontend" / "assets").glob("PlotlyPlot-*.js"))
    return found[0].name if len(found) == 1 else None


# Run by the page once it is built: Gradio's Plotly bundle (4.6 MB) is imported when a chart first gets a figure,
# which on this page is the first chart's answer, after the page's load; evaluating it took most of the time to the
# first chart. Imported here, beside the load's requests, it is ready when the answer comes (the same module: the
# URL Gradio imports it from, next to its entry script). Nothing is shown; a failure leaves Gradio's own import.
_CHUNK = _plotly_chunk()
JS = (
    "() => { const entry = document.querySelector('script[src*=\"/assets/index-\"]'); "
    f"import(new URL({_CHUNK!r}, entry ? entry.src : location.href).href).catch(() => {{}}); }}"
    if _CHUNK
    else None
)

# What other modules and tests import from here (the page's public names before the tabs became units).
__all__ = [
    "CSS",
    "JS",
    "TAGLINE",
    "TITLE",
    "TrackTab",
    "build",
    "discard_upload",
    "guarded",
    "record_download",
    "status_html",
    "submission_result_html",
]


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


def _no_hidden_progress(demo: gr.Blocks) -> None:
    """Events whose progress is hidden, and those run in the page alone, tracked on no component.

    The browser keeps a loading status for every component an event it has run may show progress on (all its
    outputs, unless `show_progress_on` names fewer), and each request's start and end rewrites all of them: after
    the page's load, ~200 components (its load restores every tab), on every request from then on. Progress nobody
    sees needs none of it."""
    for block_fn in demo.fns.values():
        if block_fn.show_progress == "hidden" or block_fn.fn is None:
            block_fn.show_progress_on = []


def _precise_inputs(demo: gr.Blocks) -> None:
    """Every input's preprocessing answering a value of the wrong type (an API caller's null for a list, text for
    a number) with what was wrong, as gr.Error, not Gradio's generic "raised an exception" and a logged traceback.
    After wiring: the instance patches of tabs/common.py are wrapped too."""
    for block in demo.blocks.values():
        if isinstance(block, gr.components.Component):
            block.preprocess = _precise(block, block.preprocess)


# A refused value as the message quotes it: cut while it is written (reprlib), not written whole and then cut (a
# caller's payload can hold a million values).
_QUOTED = reprlib.Repr()  # Python 3.11's Repr takes no arguments: its limits are attributes
_QUOTED.maxstring = _QUOTED.maxother = 60
_QUOTED.maxlist = _QUOTED.maxtuple = _QUOTED.maxdict = _QUOTED.maxset = 4
_QUOTED.maxlevel = 2
# The longest refusal sent back: ours list at most 20 choices of 80 characters (tabs/common.py), well under it.
_MESSAGE_CHARS = 4000


def _precise(component, preprocess):
    multiple = isinstance(component, gr.CheckboxGroup) or getattr(component, "multiselect", False)
    kind = "a list of choices" if multiple else "a number" if isinstance(component, gr.Number) else "a value it takes"
    name = component.label or component.elem_id or type(component).__name__

    def checked(payload):
        try:
            return preprocess(payload)
        except gr.Error as exc:  # a ValueError too, with its own message (a file of a type not taken, a value not a choice)
            if len(exc.message) <= _MESSAGE_CHARS:
                raise
            # Gradio's "not in the list of choices" quotes the value whole: a megabyte sent is a megabyte sent back
            raise gr.Error(exc.message[:_MESSAGE_CHARS] + " … (cut)", print_exception=False) from exc
        except (TypeError, ValueError) as exc:
            raise gr.Error(f"{name}: {_QUOTED.repr(payload)} is not {kind}", print_exception=False) from exc

    return checked


# ---- the page ------------------------------------------------------------------------------------
def build(board: Board) -> gr.Blocks:
    # delete_cache: every 10 minutes, cached outputs (and anything else) older than 30 minutes are swept. Uploads
    # no submit took go sooner, and their total is bounded: upload_guard.py, around the server (launch_kwargs).
    with gr.Blocks(title=TITLE, analytics_enabled=False, delete_cache=(600, 1800)) as demo:
        gr.HTML(html.header())
        with gr.Row(equal_height=True):
            status = gr.HTML(status_html(board), elem_id="status")
            refresh = gr.Button("Refresh data", size="sm", scale=0, min_width=120, elem_id="refresh")
        page = Page(
            board,
            url=gr.Textbox(visible=False, elem_id="url-state"),
            # in the page (not a session State): a track's tab is opened without asking the server
            active_tab=gr.Textbox(next(iter(TRACKS)), visible=False),
            data_version=gr.Number(board.version, visible=False),
        )
        seen_version = gr.State(board.version)
        units: list[tuple[object, gr.Tab]] = []
        with gr.Tabs(elem_id="main-tabs") as page.main_tabs:
            for name, track in TRACKS.items():
                with gr.Tab(track.title, id=name, elem_classes="track-tab") as tab:
                    units.append((TrackTab(board, track, on_screen=not units), tab))  # the first tab is on screen
            for unit_class in (CompareTab, SystemTab, SubmitTab, AboutTab):
                with gr.Tab(unit_class.title, id=unit_class.id) as tab:
                    units.append((unit_class(board), tab))
        page.open_system = next(u for u, _ in units if isinstance(u, SystemTab)).system

        page.url.change(None, inputs=page.url, outputs=None, js=urlstate.REPLACE_STATE_JS)
        for unit, tab in units:
            unit.wire(page, tab)
        # The status timer starts only with the permalink's restore: a tick before it could announce new data
        # to handlers that read the pickers as they were before the restore and write defaults back over it.
        timer = gr.Timer(board.settings.status_poll_seconds, active=False)
        first_shows = [(u.id, first_show(tab)) for u, tab in units if isinstance(u, TrackTab)]
        _wire_permalinks(demo, page, [u for u, _ in units], seen_version, status, timer, first_shows)
        _wire_status(board, page, status, refresh, seen_version, timer)
    _guard_all(demo)
    _precise_inputs(demo)
    _no_hidden_progress(demo)
    return demo


def _wire_permalinks(
    demo: gr.Blocks, page: Page, units: list, seen_version: gr.State, status: gr.HTML, timer: gr.Timer, first_shows: list
) -> None:
    """Opening a URL restores the view it names: every unit restores its own components, by name."""
    first = next(iter(TRACKS))
    valid_tabs = [u.id for u in units]

    def opening(request: gr.Request | None) -> tuple[dict, str]:
        """(the permalink's parameters, the tab it opens on)."""
        params = urlstate.decode(request.query_params if request else {})
        tab = urlstate.first(params, "tab", first)
        return params, tab if tab in valid_tabs else first

    def at_load(unit, tab: str) -> bool:
        """Whether the page's load restores `unit` (the tracks and the tab it opens on); `restore_later` the rest."""
        return isinstance(unit, TrackTab) or unit.id == tab

    # The tab a page opens on by default: the page is served with its view as the last load drew it
    # (TrackTab.serve), and the page's load reads back which board version that was (its `drawn`, `data_version`)
    opens = next(u for u in units if isinstance(u, TrackTab) and u.drawn_at_build)
    opens.served = demo

    def on_load(held: float | None, held_version: float | None, request: gr.Request):
        params, tab = opening(request)
        # the page starts from the board as it is now: the timer re-renders only on later changes
        version = page.board.version
        out = {
            page.main_tabs: gr.Tabs(selected=tab),
            page.active_tab: tab,
            seen_version: version,
            page.data_version: gr.update() if version == held_version else version,
            status: status_html(page.board),
        }
        for unit in units:
            if unit is opens:
                out.update(unit.restore(params, tab, held))
            elif at_load(unit, tab):
                out.update(unit.restore(params, tab))
        shown = next(u for u in units if u.id == tab)
        if isinstance(shown, TrackTab):  # its view, as drawn, in the address bar
            out[page.url] = out[shown.query]
        return out

    outputs = [page.main_tabs, page.active_tab, page.url, seen_version, page.data_version, status]
    for unit in units:
        outputs += unit.restore_outputs
    # The other tabs (compare, system, ...) restored after the first chart's answer, unless the page opens on one:
    # their restore sets pickers whose change renders them (a system's detail, a comparison), in the browser's way
    # of the first table and chart (~2 s of 7 to the first chart, demo board). The status timer starts with it: a
    # tick before could write defaults back over pickers restored there.
    later = [u for u in units if not isinstance(u, TrackTab)]

    def restore_later(request: gr.Request):
        params, tab = opening(request)
        out = {timer: gr.Timer(active=True)}
        for unit in later:
            out.update({c: gr.update() for c in unit.restore_outputs} if at_load(unit, tab) else unit.restore(params, tab))
        return out

    # Then, the tab on screen drawn, the other tracks' tables and charts are sent while the visitor reads it:
    # opening one later draws what the page holds (no request). Each is drawn once per board version on the server.
    tracks = [u for u in units if isinstance(u, TrackTab)]

    def prefetch(active, *inputs):
        out = []
        for unit in tracks:
            mine, inputs = inputs[: 1 + len(unit.draw_inputs)], inputs[1 + len(unit.draw_inputs) :]
            out += [gr.update()] * len(unit.draw_outputs) if unit.id == active else unit.prefetch(*mine)
        return out

    def opening_chart(held: float | None, request: gr.Request):
        params, tab = opening(request)
        charts = {u: u.opening_chart(params, held if u is opens else None) for u in tracks if u.id == tab}
        return [p for u in tracks for p in charts.get(u, [gr.update() for _ in u.plots])]

    # The page's `drawn` as served: the chart served with it is not sent again (TrackTab.serve)
    demo.load(opening_chart, opens.drawn, [p for u in tracks for p in u.plots], api_name=False, show_progress="hidden").then(
        restore_later, None, [timer, *(c for u in later for c in u.restore_outputs)], api_name=False, show_progress="hidden"
    )
    # No progress shown: the tab it opens on is on screen already (a spinner over every one of its outputs, and the
    # browser's work of showing and clearing them, in the way of the first chart)
    event = demo.load(on_load, [opens.drawn, page.data_version], outputs, api_name=False, show_progress="hidden")
    # The other tracks' tables and charts come once the tab on screen has drawn its first chart: their answer (at
    # 10,000 systems two tables and charts) is not in the browser's way meanwhile
    event = event.then(None, page.active_tab, None, js=FIRST_CHART_JS).then(
        prefetch,
        [page.active_tab, *(c for u in tracks for c in (u.drawn, *u.draw_inputs))],
        [c for u in tracks for c in u.draw_outputs],
        api_name=False,
        show_progress="hidden",
    )
    for track, blocks in first_shows:  # one track at a time, each in an idle moment of its own
        event = event.then(None, page.active_tab, blocks, js=premount_js(track, blocks))


# The other tracks' tabs mounted while the visitor reads the first screen: Gradio 6 mounts a tab's components when
# it is first shown, and mounting a track's ~30 (its table, chart, controls and panels) was most of what a first
# switch to it cost (bench/bench_browser.py). Marked visible, they mount in their tab, hidden until it is selected;
# a switch then shows them, drawn already: a hidden track's tab is laid out at the width it shows at, unseen
# (assets/style.css, `.track-tab`), so its chart is drawn at its size and showing it draws nothing again. In
# the page, no request: after the tab on screen has drawn its first chart (FIRST_CHART_JS, before them in the
# chain), a track at a time when the browser is idle. The tab on screen is left as it is.
PREMOUNT_JS = """async (active) => {
  await new Promise((r) => (window.requestIdleCallback || setTimeout)(r, {timeout: 1000}));
  const show = active !== TRACK;
  return Array.from({length: COUNT}, () => (show ? {__type__: 'update', visible: true} : undefined));
}"""


# Resolves once the tab on screen has drawn its first chart: at once on a tab without charts, at most after 5 s.
FIRST_CHART_JS = """async (active) => {
  const box = () => document.querySelector('#' + CSS.escape(active) + '-plot-0');
  const t0 = performance.now();
  while (box() && !box().querySelector('.main-svg g.trace') && performance.now() - t0 < 5000) {
    await new Promise((r) => setTimeout(r, 50));
  }
}"""


def premount_js(track: str, blocks: list) -> str:
    """PREMOUNT_JS for one track's tab and the blocks its first show mounts (tabs.common.first_show)."""
    return PREMOUNT_JS.replace("TRACK", json.dumps(track)).replace("COUNT", str(len(blocks)))


def _wire_status(board: Board, page: Page, status: gr.HTML, refresh: gr.Button, seen_version: gr.State, timer: gr.Timer) -> None:
    """New data (a pull, a submission, a finished judging run) and a changed status line (an outage starting or
    ending, loading done, judging progress) reach open pages; maintainers can force a pull."""
    seen_status = gr.State("")  # the status line as this page's timer last wrote it ("": not yet, write it once)

    def poll(version, shown):
        text = status_html(board)  # a few short strings: cheap to build on every tick
        if version == board.version and text == shown:  # nothing new: no traffic beyond the tick itself
            return gr.update(), version, gr.update(), shown
        return text, board.version, board.version, text

    timer.tick(
        poll,
        [seen_version, seen_status],
        [status, seen_version, page.data_version, seen_status],
        api_name=False,
        show_progress="hidden",
    )

    def refresh_now(profile: gr.OAuthProfile | None = None):
        """Pull now (admins on a Space; anyone locally). New data reaches the page through the timer."""
        admins = board.settings.admin_users
        if board.settings.page.on_space and (profile is None or profile.username not in admins):
            return status_html(board) + html.banner(
                "Only maintainers can force a refresh; the board pulls by itself every few minutes."
            )
        board.refresh()
        return status_html(board)

    refresh.click(refresh_now, None, status, api_name="refresh")
