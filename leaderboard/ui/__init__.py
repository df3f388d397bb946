"""The Gradio UI: generated from the track registry, reading everything through the board service."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..scoring import gc_paused
from ..submission import DEFAULT_MAX_BYTES
from .layout import CSS, JS, build
from .quiet_sessions import UnknownSessionQuiet
from .upload_guard import UploadGuard
from .upload_ledger import UploadLedger, UploadLimits

if TYPE_CHECKING:
    from ..settings import Settings


def build_app(board):
    # Building ranks every system of every track once (tables, pickers, who leads): many allocations, and the
    # cyclic collector would walk every live object (the board's included) again and again meanwhile.
    with gc_paused():
        return build(board)


def launch_kwargs(settings: Settings) -> dict:
    """Server settings from the Settings' page section (a Space sets GRADIO_SERVER_NAME / PORT itself)."""
    return {
        "server_name": settings.page.server_name,
        "server_port": settings.page.server_port,
        "css": CSS,
        "js": JS,  # the Plotly bundle imported as the page is built (layout.py)
        "footer_links": ["api"],
        "show_error": False,  # internal failures reach people as a short message and a log reference (layout.guarded)
        # The submission size cap (a .gz upload can't exceed it either): bigger uploads stop at the server's door.
        "max_file_size": DEFAULT_MAX_BYTES,
        "app_kwargs": {"middleware": server_middleware(settings)},
    }


def server_middleware(settings: Settings) -> list:
    """ASGI middleware around the Gradio app: the upload route's bounds (upload_guard.py), the queue stream's
    unknown-session traceback as one line a minute (quiet_sessions.py). Limits from the Settings' page section."""
    from gradio.utils import get_upload_folder
    from starlette.middleware import Middleware

    page = settings.page
    limits = UploadLimits.of(page, file_bytes=DEFAULT_MAX_BYTES, login_reserve=page.login_required)
    ledger = UploadLedger(limits, Path(get_upload_folder()))
    return [Middleware(UnknownSessionQuiet), Middleware(UploadGuard, ledger=ledger, on_space=page.on_space)]
