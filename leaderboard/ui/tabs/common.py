"""What the tabs share: the page's common components, downloads, and controls whose choices are (label, key) pairs."""

from __future__ import annotations

import atexit
import copy
import re
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from ...service import Board
from .. import views


@dataclass
class Page:
    """Components every tab may read or write, created by layout.build before the tabs."""

    board: Board
    url: gr.Textbox  # the query string of the view on screen (pushed to the address bar)
    active_tab: gr.Textbox  # the tab on screen (hidden, in the page): only the view on screen writes the URL
    data_version: gr.Number  # changes when the board's data does
    main_tabs: Any = None  # gr.Tabs, set once opened
    open_system: Any = None  # the System tab's picker: a table row click opens a submission there


def on_screen(view: str, fn):
    """`fn` returning (*outputs, query), with the query written only while `view` is the tab on screen."""

    def run(active, *args):
        *outputs, query = fn(*args)
        return (*outputs, query if active == view else gr.update())

    return run


def first_show(tab: gr.Tab) -> list:
    """The blocks Gradio 6 mounts when `tab` is first shown, the tab itself first: every block in it that is visible
    as built, but the contents of a closed accordion and of a nested tab not selected (mounted when they open)."""
    out = []

    def walk(block) -> None:
        if block.visible is not True:
            return
        out.append(block)
        if isinstance(block, gr.Accordion) and not block.open:
            return
        children = getattr(block, "children", [])
        if isinstance(block, gr.Tabs):
            children = children[:1] if block.selected is None else [c for c in children if c.id == block.selected]
        for child in children:
            walk(child)

    walk(tab)
    return out


# ---- what a handler drew for a board version, kept for the next visitor ------------------------------------
def serve(demo: gr.Blocks | None, updates: dict) -> None:
    """`updates` ({block: value or gr.update}, in order) as every page `demo` serves from now on shows them: in the
    config Gradio copies for each page it serves, each block's props replaced whole (a request copying them
    meanwhile never sees a dict change size)."""
    entries = {c.get("id"): c for c in (getattr(demo, "config", None) or {}).get("components", [])}
    for block, update in updates.items():
        if (entry := entries.get(block._id)) is None:
            continue
        is_update = isinstance(update, dict) and update.get("__type__") == "update"
        fields = {k: v for k, v in update.items() if k != "__type__"} if is_update else {"value": update}
        if "value" in fields:  # as Gradio holds the value a block is built with
            value = block.postprocess(fields["value"])
            fields["value"] = value.model_dump() if hasattr(value, "model_dump") else value
        entry["props"] = {**entry["props"], **fields}


def frozen(value):
    """`value` (controls as Gradio passes them: lists, numbers, text, None) as a hashable key."""
    if isinstance(value, (list, tuple)):
        return tuple(frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, frozen(v)) for k, v in value.items()))
    return value


class Drawn:
    """A handler's results per (board version, its inputs), the last `size` kept (least recently used goes).

    Every page load draws the tracks it does not show (layout.py `prefetch`) and the chart of the one it shows:
    at 10,000 submissions a few hundred ms of a core per visitor, the same for every visitor of a board version.
    `get` hands a copy: Gradio takes the update dicts it is given apart (it pops their values)."""

    def __init__(self, size: int = 8):
        self.size = size
        self._kept: OrderedDict = OrderedDict()
        self._lock = threading.Lock()  # handlers run in Gradio's worker threads

    def get(self, key, compute):
        with self._lock:
            found = self._kept.get(key, self)
            if found is not self:
                self._kept.move_to_end(key)
        if found is self:  # computed outside the lock: two first requests may both compute, the same result
            found = compute()
            with self._lock:
                self._kept[key] = found
                while len(self._kept) > self.size:
                    self._kept.popitem(last=False)
        return copy.deepcopy(found)


# ---- CSV exports and record downloads: one folder per download (the file name says what it is), pruned, removed at exit
_EXPORTS: Path | None = None
_EXPORT_MAX_AGE = 600  # seconds; Gradio has copied a download into its own cache long before


def export_dir() -> Path:
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


def record_box(label: str, elem_id: str) -> gr.Textbox:
    """Where a unit's raw prediction record shows (JSON text, `views.unit_record`), read-only, with a copy button.

    A Textbox, not a `gr.Code`: the page loads the module of every component it holds before it draws anything,
    and Code's (CodeMirror, ~390 KB of script) was the largest the first screen waited on for a panel deep in
    another tab. `/record` answers the same string the box shows."""
    return gr.Textbox(
        label=label,
        lines=12,
        max_lines=30,
        interactive=False,
        autoscroll=False,  # a new record opens at its top
        buttons=["copy"],
        elem_id=elem_id,
        elem_classes=["record-json"],
    )


def record_download(board: Board, entry_id: str | None, unit: str | None):
    """The download button for a unit's whole raw record (the page shows it cut): shown only when there is one."""
    text = views.full_record(board, entry_id, unit)
    if text is None:
        return gr.update(value=None, visible=False)
    safe_unit = re.sub(r"[^A-Za-z0-9._-]+", "_", unit or "")[:80]
    path = export_dir() / f"{entry_id}-{safe_unit}.json"
    path.write_text(text, encoding="utf-8")
    return gr.update(value=str(path), visible=True)


# Typing in a picker refreshes its choices on every key, each answered in turn (one at a time, in order), so the
# last keystroke's choices are the ones that stay. Not Gradio's default for key_up ("always_last"): its queued
# second run is sent with the first keystroke's text, not the last one's.
IN_ORDER = {"trigger_mode": "multiple", "concurrency_limit": 1}


# ---- controls whose choices are (label, key) pairs --------------------------------------------------
def by_label(choices, payload):
    """`payload` with every label of `choices` replaced by its key."""
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
    component.preprocess = lambda payload: plain(by_label(component.choices, payload))
    return component


def keyed(choices) -> list[tuple[str, str]]:
    """Choices as (label, key) pairs; a plain value is its own label."""
    return [c if isinstance(c, tuple) else (c, c) for c in choices]


# A refused value's message lists at most this many choices (an open axis or a filter can have thousands).
_CHOICES_SHOWN = 20


def current_choices(component, choices_now, label: str):
    """`component` (a Dropdown) taking what the board offers now: `choices_now()` ((label, key) pairs), not the
    choices it was built with, and a label as well as a key (as `accepts_labels`).

    Filter and slice values come from the systems on the board: a value first seen after the start (a new
    retriever in a new submission) is one the API must take at once, and a track drawn when it opens is built
    without them. Anything else is refused with what was wrong. The API description lists no fixed enum either,
    for the same reason. An instance patch, as `accepts_labels` (the page's own session copies, made when a load
    sends fresh choices, check against those).
    """

    def preprocess(payload):
        pairs = choices_now()
        payload = by_label(pairs, payload)
        keys = {key for _, key in pairs}
        for value in payload if isinstance(payload, list) else [] if payload is None else [payload]:
            if value not in keys:
                shown = ", ".join(repr(str(k)[:80]) for _, k in pairs[:_CHOICES_SHOWN])  # values are strangers' text
                more = f" and {len(pairs) - _CHOICES_SHOWN} more" if len(pairs) > _CHOICES_SHOWN else ""
                raise gr.Error(f"{label}: {str(value)[:80]!r} is not a choice on the board now ({shown}{more})")
        return payload

    def api_info() -> dict:
        one = {"type": "string"}
        return {"type": "array", "items": one} if component.multiselect else one

    component.preprocess, component.api_info = preprocess, api_info
    return component
