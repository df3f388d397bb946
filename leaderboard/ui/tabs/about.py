"""The About tab: how the board works and every track's declarations, generated (ui/about.py)."""

from __future__ import annotations

import gradio as gr

from ...service import Board
from ..about import about_markdown
from .common import Page


class AboutTab:
    id = "about"
    title = "About"
    restore_outputs: list = []

    def __init__(self, board: Board):
        gr.Markdown(about_markdown(), elem_id="about")

    def restore(self, params: dict[str, list[str]], tab: str) -> dict:
        return {}

    def wire(self, page: Page, tab: gr.Tab) -> None:
        pass  # static text: nothing to wire
