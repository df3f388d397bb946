"""The Gradio UI: generated from the track registry, reading everything through the board service."""

from __future__ import annotations

import os
from pathlib import Path

from ..scoring import gc_paused
from ..submission import DEFAULT_MAX_BYTES
from .layout import CSS, build
from .quiet_sessions import UnknownSessionQuiet
from .tabs.submit import login_required, on_space
from .upload_guard import UploadGuard
from .upload_ledger import UploadLedger, UploadLimits


def build_app(board):
    # Building ranks every system of every track once (tables, pickers, who leads): many allocations, and the
    # cyclic collector would walk every live object (the board's included) again and again meanwhile.
    with gc_paused():
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
        "app_kwargs": {"middleware": server_middleware()},
    }


def server_middleware() -> list:
    """ASGI middleware around the Gradio app: the upload route's bounds (upload_guard.py), the queue stream's
    unknown-session traceback as one line a minute (quiet_sessions.py). Settings from the environment."""
    from gradio.utils import get_upload_folder
    from starlette.middleware import Middleware

    limits = UploadLimits.from_env(file_bytes=DEFAULT_MAX_BYTES, login_reserve=login_required(None))
    ledger = UploadLedger(limits, Path(get_upload_folder()))
    return [Middleware(UnknownSessionQuiet), Middleware(UploadGuard, ledger=ledger, on_space=on_space())]
