"""What the component types a page holds cost its first screen in Gradio, before any value or event of the board.

    python bench/bench_component_types.py              # 8 loads of each page (median)
    python bench/bench_component_types.py --loads 12 --each

The floor of bench/bench_browser.py (three tabs, each a 27 x 12 table and a 12-trace chart, no event), served as
it is and with one more tab, never opened, holding one default instance of each component type named: nothing
of it is on screen. The types come from the board's own page (its served config, demo data):
  floor + first screen's types   the types under the first track's tab and in the page's header (the status
                                 line, the refresh button): what the first screen holds
  floor + all the board's types  every type the board's page holds, its other tabs' too
  floor + <type>                 each of them alone (`--each`)
Gradio imports every component type's module before it draws the page, hidden tabs' included (the board's
first row waits for them: bench/bench_browser.py's figures): one instance, shown or not, brings its type's module.
Each further instance adds its own smaller cost (the page's processing of its config), not measured here.
Figures are from the bench's own paint marks (MARKS_JS), for the first track's first row and first chart, loads
interleaved after one uncounted load of each page, and the ratio to the floor; compare bench/bench_browser.py's
targets (first row <= 1.2x, first chart <= 1.3x).
`--each` serves ~20 pages at once: every figure is then slower and noisier (a single type's cost, tens of ms, is
within the noise of 8 loads); the three first lines are the ones to read.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import urllib.request
from pathlib import Path

import bench_browser as bb  # beside this script; it sets the paths (the repository, tests/) and the quiet environment

FLOOR_TYPES = {"tabs", "tabitem", "dataframe", "plot"}  # what the floor holds already


def component_classes() -> dict[str, type]:
    """Gradio's component and layout classes by the type name the config gives them (Gradio's own
    `get_block_name`: the class name in lower case, but for those that say otherwise, as Tab's "tabitem")."""
    import gradio as gr

    found = {}
    for value in [*vars(gr.components).values(), *vars(gr.layouts).values()]:
        if isinstance(value, type) and issubclass(value, gr.blocks.Block):
            found.setdefault(value.__name__.lower(), value)
    found["tabitem"] = gr.Tab
    return found


def serve_floor_with(types: list[str], port: int) -> None:
    """The floor, and a tab never opened holding one default instance of each of `types`."""
    import gradio as gr

    classes = component_classes()
    demo = bb.floor_app()
    with demo:
        with gr.Tab("Types", id="types"):
            for name in types:
                if name == "form":  # made by Gradio around form components (a textbox makes one)
                    continue
                block = classes[name]()
                if isinstance(block, gr.blocks.BlockContext):
                    with block:
                        pass
    demo.launch(server_name="127.0.0.1", server_port=port, quiet=True)


def board_types(port: int) -> tuple[list[str], list[str]]:
    """(the first screen's types, all the page's types) from the board's served config, beyond the floor's."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/config", timeout=60) as response:
        config = json.load(response)
    kind = {c["id"]: c["type"] for c in config["components"]}
    every = sorted(set(kind.values()) - FLOOR_TYPES)

    def under(node) -> set[str]:
        return {kind[node["id"]]} | {t for child in node.get("children", []) for t in under(child)}

    def first_tab(node):
        if kind.get(node["id"]) == "tabitem":
            return node
        return next((t for child in node.get("children", []) if (t := first_tab(child))), None)

    root = config["layout"]
    tabs_node = next(child for child in root["children"] if kind[child["id"]] == "tabs")
    header = [child for child in root["children"] if child is not tabs_node]
    first = set().union(*(under(n) for n in header)) | under(first_tab(tabs_node))
    return sorted(first - FLOOR_TYPES), every


def first_screen(context, url: str, track: str) -> tuple[float, float]:
    page = context.new_page()
    try:
        marks = bb.first_screen(page, url, track)
        return marks["row"], marks["chart"]
    finally:
        page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=8, help="loads of each page (median printed)")
    parser.add_argument("--each", action="store_true", help="also the floor with each type alone")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        return serve_floor_with([t for t in args.serve.split(",") if t], args.port)

    from leaderboard.tracks import TRACKS

    with tempfile.TemporaryDirectory() as tmp:
        data_dir = bb.board_data(0, Path(tmp))
        port = bb.free_port()
        board = bb.start_server("board", port, data_dir)
        try:
            first, every = board_types(port)
        finally:
            board.terminate()
            board.wait(timeout=30)
            shutil.rmtree(data_dir, ignore_errors=True)
    pages = {"floor": [], "floor + first screen's types": first, "floor + all the board's types": every}
    if args.each:
        pages.update({f"floor + {t}": [t] for t in every})
    ports = {name: bb.free_port() for name in pages}
    servers = {}
    load_before = os.getloadavg()
    track = next(iter(TRACKS))
    try:
        for name, types in pages.items():
            servers[name] = bb.start_child(__file__, ["--serve", ",".join(types)], ports[name], "floor")
        urls = {name: f"http://127.0.0.1:{ports[name]}/" for name in pages}
        runs = bb.interleaved_loads(urls, args.loads, lambda context, url: first_screen(context, url, track))
    finally:
        for proc in servers.values():
            proc.terminate()
            proc.wait(timeout=30)
    load_after = os.getloadavg()

    print(
        f"{args.loads} loads of each page (median, ms), chromium {bb.VIEWPORT['width']}x{bb.VIEWPORT['height']}; "
        f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after ({os.cpu_count()} cores)"
    )
    print(f"first screen's types: {', '.join(first)}")
    print(f"all the board's types: {', '.join(every)}")
    width = max(map(len, pages))
    print(f"{'':{width}s} {'first row':>9s} {'ratio':>6s} {'first chart':>11s} {'ratio':>6s}   rows / charts")
    floor_row, floor_chart = (statistics.median(r[i] for r in runs["floor"]) for i in (0, 1))
    for name in pages:
        row, chart = (statistics.median(r[i] for r in runs[name]) for i in (0, 1))
        print(
            f"{name:{width}s} {row:9.0f} {row / floor_row:6.2f} {chart:11.0f} {chart / floor_chart:6.2f}   "
            + " ".join(f"{r[0]:.0f}" for r in runs[name])
            + " / "
            + " ".join(f"{r[1]:.0f}" for r in runs[name])
        )


if __name__ == "__main__":
    main()
