"""The Gradio UI: generated from the track registry, reading everything through the board service."""

from __future__ import annotations

import os

from ..submission import DEFAULT_MAX_BYTES
from .layout import CSS, build


def build_app(board):
    return build(board)


def launch_kwargs() -> dict:
    """Server settings from the environment (a Space sets GRADIO_SERVER_NAME / PORT itself)."""
    return {
        "server_name": os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        "server_port": int(os.environ.get("GRADIO_SERVER_PORT", os.environ.get("PORT", "7860"))),
        "css": CSS,
        "footer_links": ["api"],
        "show_error": False,  # internal failures reach people as a short message and a log reference (layout.guarded)
        # The submission size cap (a .gz upload can't exceed it either): bigger uploads stop at the server's door.
        "max_file_size": DEFAULT_MAX_BYTES,
    }
