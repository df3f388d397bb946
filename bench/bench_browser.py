"""What a visitor waits for in a real browser: this board beside Gradio's own floor, in chromium.

    python bench/bench_browser.py                        # the demo board, 3 loads each (median)
    python bench/bench_browser.py --loads 5
    python bench/bench_browser.py --submissions 10000    # a generated board of 10,000 submissions

Three servers, each in its own process: the board as `python app.py` serves it (`app.start`, offline, the
lexical judge, its results cached by a first start that is not timed) and a no-op Gradio app holding the same
components (three tabs named as the tracks, each a 27 x 12 `gr.Dataframe` and a 12-trace `gr.Plot` with the
board's element ids, their values built in-process: no event, no server call), the floor any Gradio page
stands on; and a third, "content": the board's own content (each track's first table page and first chart as
the board draws them) in a bare Gradio page, no other component and no event, which splits the board's excess
over the floor into what its content costs Gradio and Plotly to draw and what is its own. Debian's chromium
(Playwright, never `playwright install`) loads each page in turn, interleaved (board, floor, content, content,
floor, board, ...: all see the same machine load), after one uncounted load of each (a returning visitor's warm
HTTP cache), at 1440 x 1000.

Figures, from the page's own clock (navigation start for the first three, the click for the others), each taken
at the first frame painted with it (checked once a frame, see MARKS_JS):
  first table row visible   the first track's table shows a row
  first chart drawn         its first chart is a Plotly SVG with traces
  leaders strip filled      the board's only (the other pages have none): the strip above its table has its
                            figures, which come with the page as served (drawn by a load at the board version
                            before: the uncounted one) and with its load
  tab switch to a chart     a click on the second (third) track's tab until its first chart is drawn and the tab
                            has settled: nothing in the tabs changed for QUIET_MS (a table or chart drawn
                            again, a late answer from the server, counts up to its last change)
  back to a drawn tab       a click back on the first track's tab, until it has settled the same way
  ...: main-thread work     for each switch, the renderer's main-thread time from the click until it settled (and
                            the script part of it), as Chrome's Performance domain counts it: the wall clock's
                            figure less the waits, steadier under load
The board mounts the other tracks' tabs hidden once its first chart is drawn (ui/layout.py PREMOUNT_JS); a click
comes after the page has been quiet for QUIET_MS, so the board's switch shows a mounted tab, its chart drawn
already at its size (the hidden tab is laid out unseen: assets/style.css), where the floor and content pages
mount theirs on the click, Gradio's default: what a visitor who reads the first screen before switching waits for.
Each is the median over the loads, then the board / floor ratio (the target) and board / content.
`--submissions N`: N generated submissions (bench/bench_scale.py's `templates_of` / `generate`, results cached)
instead of the demo's. Not a test: read the figures (the machine's load is printed with them: timings on a
shared machine are noisy).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

VIEWPORT = {"width": 1440, "height": 1000}
QUIET_MS = 500  # a tab has settled when nothing in the tabs changed for this long
TIMEOUT_MS = 60_000
ROWS, COLS, TRACES = 27, 12, 12

# In the page before any of its scripts: marks (ms since navigation start) when the first track's first row is
# visible, its leaders strip has its figures (the board's only) and its first chart is drawn, and the time of the
# last change anywhere in the tabs. What a mark waits for is checked once a frame, as the frame begins (a layout
# read on every batch of changes would slow the page measured), and the mark is taken once that frame is laid out
# and painted (a task queued from it runs after them): an element inserted is not yet on the screen.
MARKS_JS = """
(() => {
  const b = window.__bench = {marks: {}, last_change: 0, first: null};
  const shown = (el) => !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  b.row = (t) => shown(document.querySelector('#' + t + '-table [role=row][data-index]'));
  b.chart = (t) => shown(document.querySelector('#' + t + '-plot-0 .main-svg g.trace'));
  b.strip = (t) => shown(document.querySelector('#' + t + '-strip .lead-card:not(.pending)'));
  const seen = new Set();
  const check = () => {
    const t = b.first;
    if (!t) return;
    for (const what of ['row', 'chart', 'strip']) {
      if (!seen.has(what) && b[what](t)) {
        seen.add(what);
        setTimeout(() => { b.marks[what] = performance.now(); }, 0);  // runs once this frame is laid out and painted
      }
    }
  };
  new MutationObserver((records) => {
    if (records.some((r) => r.target.closest && r.target.closest('#main-tabs')
                        || r.target.parentElement && r.target.parentElement.closest('#main-tabs'))) {
      b.last_change = performance.now();
    }
  }).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  const frame = () => {
    check();
    const strip_done = seen.has('strip') || !document.querySelector('#' + b.first + '-strip');  // floor, content: none
    if (!(seen.has('row') && seen.has('chart') && strip_done)) requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
})();
"""

# Click a main tab and resolve when `done(track)` holds and the tabs have been quiet for `quiet` ms: the ms from
# the click until it held, and until the last change before the quiet.
SWITCH_JS = """
async ([title, track, quiet, what]) => {
  const b = window.__bench;
  const button = [...document.querySelectorAll('#main-tabs [role=tab]')].find((e) => e.innerText.trim() === title);
  const t0 = performance.now();
  b.last_change = t0;
  button.click();
  const done = () => what === 'chart' ? b.chart(track) : b.row(track) && b.chart(track);
  let held = null;
  for (;;) {
    await new Promise((r) => requestAnimationFrame(r));
    const now = performance.now();
    if (held === null && done()) held = now;
    if (held !== null && now - b.last_change >= quiet && now - held >= quiet) {
      return {held: held - t0, settled: Math.max(held, b.last_change) - t0};
    }
    if (now - t0 > 60000) return {held: null, settled: null};  // printed as "> 60 s"
  }
}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- the two servers (each a child process: `--serve board|floor`) -------------------------------------------
def serve_board(data_dir: Path, port: int) -> None:
    """The board as `python app.py` starts it, on `data_dir`, served on `port`."""
    import app
    from leaderboard.service import Board
    from leaderboard.settings import Settings
    from leaderboard.store import StoreSettings
    from leaderboard.ui import launch_kwargs

    board = Board(Settings(data_dir=data_dir, judge="lexical"), StoreSettings(data_dir=data_dir))
    board, demo = app.start(board)
    while any(e.judging for e in board.entries()):  # a warm results cache: judged already (the first start did)
        time.sleep(0.1)
    demo.queue(default_concurrency_limit=4).launch(
        **{**launch_kwargs(board.settings), "server_name": "127.0.0.1", "server_port": port, "quiet": True}
    )


def floor_app():
    """Three tabs as the board's tracks, each a 27 x 12 table and a 12-trace chart: values built here, no events."""
    import gradio as gr
    import numpy as np
    import pandas as pd
    import plotly.graph_objects as go

    from leaderboard.tracks import TRACKS

    rng = np.random.default_rng(0)
    with gr.Blocks(title="floor", analytics_enabled=False) as demo:
        with gr.Tabs(elem_id="main-tabs"):
            for name, track in list(TRACKS.items())[:3]:
                with gr.Tab(track.title, id=name):
                    frame = pd.DataFrame(
                        {
                            f"col {j}": (rng.random(ROWS).round(3) if j else [f"system {i}" for i in range(ROWS)])
                            for j in range(COLS)
                        }
                    )
                    gr.Dataframe(frame, interactive=False, wrap=True, max_height=640, elem_id=f"{name}-table")
                    fig = go.Figure(
                        [go.Bar(name=f"system {i}", x=[f"cat {k}" for k in range(6)], y=rng.random(6)) for i in range(TRACES)]
                    )
                    gr.Plot(fig, elem_id=f"{name}-plot-0")
    return demo


def serve_floor(port: int) -> None:
    floor_app().launch(server_name="127.0.0.1", server_port=port, quiet=True)


def content_app(data_dir: Path):
    """Three tabs as the board's tracks, each holding the board's own first table page and first chart, as the
    board's tab class builds and draws them (its table's values, cell types, widths and pinned columns), built
    with the page: no other component, no event. What a bare Gradio page pays for this board's content; the
    board's excess over it is its own (controls, values sent after the page, events)."""
    import gradio as gr
    import plotly.io as pio

    from leaderboard.service import Board
    from leaderboard.settings import Settings
    from leaderboard.store import StoreSettings
    from leaderboard.tracks import TRACKS
    from leaderboard.ui.tabs.track import TrackTab

    board = Board(Settings(data_dir=data_dir, judge="lexical"), StoreSettings(data_dir=data_dir)).start()
    tracks = list(TRACKS.items())[:3]
    with gr.Blocks():  # the board's tabs, each built as the tab a page opens on (that page is not served)
        tabs = {name: TrackTab(board, track, on_screen=True) for name, track in tracks}
    with gr.Blocks(title="content", analytics_enabled=False) as demo:
        with gr.Tabs(elem_id="main-tabs"):
            for name, track in tracks:
                tab, table = tabs[name], tabs[name].table
                chart = tab.plot(0, tab.chart_metric.value, tab.chart_system.value, *(c.value for c in tab.controls))
                with gr.Tab(track.title, id=name):
                    gr.Dataframe(
                        table.value,
                        datatype=table.datatype,
                        column_widths=table.column_widths,
                        pinned_columns=table.pinned_columns,
                        interactive=False,
                        wrap=False,
                        show_search="none",
                        max_height=640,
                        elem_id=f"{name}-table",
                    )
                    gr.Plot(pio.from_json(chart.plot), elem_id=f"{name}-plot-0")
    return demo


def serve_content(data_dir: Path, port: int) -> None:
    content_app(data_dir).launch(server_name="127.0.0.1", server_port=port, quiet=True)


def start_server(kind: str, port: int, data_dir: Path | None) -> subprocess.Popen:
    return start_child(__file__, ["--serve", kind] + (["--data-dir", str(data_dir)] if data_dir else []), port, kind)


def start_child(script: str, args: list[str], port: int, kind: str) -> subprocess.Popen:
    """`python script *args --port port` (a server), once it listens on `port`."""
    env = {**os.environ, "LOG_LEVEL": "WARNING", "STORE_REFRESH_SECONDS": "3600"}
    proc = subprocess.Popen([sys.executable, script, *args, "--port", str(port)], cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the {kind} server stopped (exit {proc.returncode})")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit(f"the {kind} server did not listen within 600 s")


# The board's first screen answers "who leads" above its table: the strip comes with the page as served (else
# with the page's load, where anything that competes with that answer for the main thread shows here).
STRIP = "leaders strip filled (board only)"


# The renderer's main-thread work during a switch (Chrome's Performance domain, seconds): steadier than the wall
# clock on a shared machine, and split into script and layout, which says where a switch's time goes.
MAIN_THREAD = {"TaskDuration": "main-thread work", "ScriptDuration": "of it script"}


def main_thread(cdp) -> dict[str, float]:
    return {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"] if m["name"] in MAIN_THREAD}


# ---- one load, measured ---------------------------------------------------------------------------------------
def first_screen(page, url: str, track: str) -> dict[str, float]:
    """`url` opened in `page`: its marks once the first row and chart are drawn and the page has finished loading
    (its load's answers drawn, the tabs quiet for QUIET_MS)."""
    page.add_init_script(MARKS_JS + f"\nwindow.__bench.first = {track!r};")
    page.goto(url)
    page.wait_for_function("() => 'row' in window.__bench.marks && 'chart' in window.__bench.marks", timeout=TIMEOUT_MS)
    marks = page.evaluate("window.__bench.marks")
    page.wait_for_function(f"() => performance.now() - window.__bench.last_change > {QUIET_MS}", timeout=TIMEOUT_MS)
    return marks


def one_load(context, url: str, tracks: list[tuple[str, str]]) -> dict[str, float]:
    """First row, first chart, a switch to each other track's chart, back to the first: ms (see the module doc)."""
    page = context.new_page()
    try:
        marks = first_screen(page, url, tracks[0][0])
        out = {"first table row visible": marks["row"], "first chart drawn": marks["chart"]}
        strip = page.evaluate("window.__bench.marks.strip")  # by now: the page has been quiet
        if strip is not None:
            out[STRIP] = strip
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable")
        switches = [(f"tab switch to a drawn chart ({title})", title, name, "chart") for name, title in tracks[1:]]
        switches.append(("back to a drawn tab", tracks[0][1], tracks[0][0], "all"))
        for key, title, name, what in switches:
            before = main_thread(cdp)
            out[key] = page.evaluate(SWITCH_JS, [title, name, QUIET_MS, what])["settled"]
            after = main_thread(cdp)
            for metric in MAIN_THREAD:
                out[f"{key}: {MAIN_THREAD[metric]}"] = (after[metric] - before[metric]) * 1000
        return out
    finally:
        page.close()


def interleaved_loads(urls: dict[str, str], loads: int, measure) -> dict[str, list]:
    """`measure(context, url)` of each page, `loads` times, in chromium: after one uncounted load of each (a
    returning visitor's warm HTTP cache), interleaved (a, b, c, c, b, a, ...: all see the same machine load)."""
    from playwright.sync_api import sync_playwright

    from appserver import CHROMIUM, CHROMIUM_ARGS  # the browser tests' chromium and flags

    order = list(urls)
    runs: dict[str, list] = {k: [] for k in order}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        contexts = {k: browser.new_context(viewport=VIEWPORT) for k in order}
        for k in order:
            measure(contexts[k], urls[k])
        for i in range(loads):
            for k in order if i % 2 == 0 else order[::-1]:
                runs[k].append(measure(contexts[k], urls[k]))
        browser.close()
    return runs


def board_data(submissions: int, work: Path) -> Path:
    """The board's data folder: the demo's (results cached by a first start), or `submissions` generated ones."""
    from bench_scale import generate, templates

    data_dir = work / "board"
    if submissions:
        generate(data_dir, submissions, templates(work / "demo"))
    return data_dir


def warm(data_dir: Path) -> None:
    """A first start that scores, judges and caches (and indexes) every result: not timed."""
    from leaderboard.service import Board
    from leaderboard.settings import Settings
    from leaderboard.store import StoreSettings

    board = Board(Settings(data_dir=data_dir, judge="lexical"), StoreSettings(data_dir=data_dir)).start()
    while any(e.judging for e in board.entries()):
        time.sleep(0.2)
    board.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=3, help="loads of each page (median printed)")
    parser.add_argument("--submissions", type=int, default=0, help="a generated board of this many submissions")
    parser.add_argument("--serve", choices=["board", "floor", "content", "warm"], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve == "board":
        return serve_board(args.data_dir, args.port)
    if args.serve == "floor":
        return serve_floor(args.port)
    if args.serve == "content":
        return serve_content(args.data_dir, args.port)
    if args.serve == "warm":
        return warm(args.data_dir)

    from leaderboard.tracks import TRACKS

    tracks = [(name, t.title) for name, t in list(TRACKS.items())[:3]]
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = board_data(args.submissions, Path(tmp))
        env = {**os.environ, "LOG_LEVEL": "WARNING"}
        subprocess.run([sys.executable, __file__, "--serve", "warm", "--data-dir", str(data_dir)], cwd=ROOT, env=env, check=True)
        kinds = ("board", "floor", "content")
        ports = {k: free_port() for k in kinds}
        servers = {k: start_server(k, ports[k], None if k == "floor" else data_dir) for k in kinds}
        load_before = os.getloadavg()
        try:
            urls = {k: f"http://127.0.0.1:{ports[k]}/" for k in kinds}
            runs = interleaved_loads(urls, args.loads, lambda context, url: one_load(context, url, tracks))
        finally:
            for proc in servers.values():
                proc.terminate()
                proc.wait(timeout=30)
            shutil.rmtree(data_dir, ignore_errors=True)
        load_after = os.getloadavg()

    size = f"{args.submissions} generated submissions" if args.submissions else "the demo board"
    print(
        f"{size}, {args.loads} loads each (median, ms), chromium {VIEWPORT['width']}x{VIEWPORT['height']}; "
        f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after ({os.cpu_count()} cores)"
    )
    width = max(map(len, runs["board"][0]))
    print(
        f"{'':{width}s} {'board':>8s} {'floor':>8s} {'ratio':>6s} {'content':>8s} {'ratio':>6s}   "
        "board loads / floor loads / content loads"
    )

    def ms(x: float) -> str:
        return f"{x:.0f}" if x != float("inf") else ">60000"

    for key in runs["board"][0]:
        # a figure that did not come within a minute counts as infinitely long
        b, f, c = ([float("inf") if r.get(key) is None else r[key] for r in runs[k]] for k in kinds)
        mb, mf, mc = statistics.median(b), statistics.median(f), statistics.median(c)
        if key == STRIP:  # the board's own: the other pages have no strip
            print(f"{key:{width}s} {ms(mb):>8s}   " + " ".join(ms(x) for x in b))
            continue
        print(
            f"{key:{width}s} {ms(mb):>8s} {ms(mf):>8s} {mb / mf:6.2f} {ms(mc):>8s} {mb / mc:6.2f}   "
            + " / ".join(" ".join(ms(x) for x in xs) for xs in (b, f, c))
        )
    print(json.dumps({k: runs[k] for k in runs}), file=sys.stderr)


if __name__ == "__main__":
    main()
