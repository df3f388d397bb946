"""Gradio's answer to a queue stream for an unknown session, logged as one line a minute instead of a traceback each.

GET .../gradio_api/queue/data?session_hash=<unknown> makes Gradio send a "session not found" event, then raise a
404 HTTPException inside the stream it has already started; Starlette turns that into "Caught handled exception, but
response already started" and uvicorn logs a ~75-line traceback per request (200 requests: 15,000 lines) and cuts the
stream. Nothing is wrong on the server: a page left open over a restart, or a stranger, asks for a session that is
not there. `UnknownSessionQuiet` wraps the app: for that route only, that exception (a 404 raised after the response
started) ends the stream cleanly and is counted; the count is logged once per `interval` seconds as one line. Any other
exception passes through untouched.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from starlette.exceptions import HTTPException

log = logging.getLogger(__name__)

QUEUE_DATA_PATH = "/gradio_api/queue/data"


def _is_unknown_session(exc: BaseException) -> bool:
    """A 404 HTTPException anywhere in the exception's chain or group."""
    todo, seen = [exc], 0
    while todo and seen < 20:
        e = todo.pop()
        seen += 1
        if isinstance(e, HTTPException) and e.status_code == 404:
            return True
        if isinstance(e, BaseExceptionGroup):
            todo.extend(e.exceptions)
        todo.extend(x for x in (e.__cause__, e.__context__) if x is not None)
    return False


class UnknownSessionQuiet:
    def __init__(self, app, interval: float = 60.0, clock: Callable[[], float] = time.monotonic):
        self.app = app
        self.interval = interval
        self.clock = clock
        self._lock = threading.Lock()
        self._count = 0
        self._logged_at: float | None = None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope.get("path", "").rstrip("/").endswith(QUEUE_DATA_PATH):
            await self.app(scope, receive, send)
            return
        started = ended = False

        async def watched(message):
            nonlocal started, ended
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                ended = True
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception as exc:
            if not started or not _is_unknown_session(exc):
                raise
            self.counted()
            if not ended:  # the stream's "session not found" event is out: close it as a finished response
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    def counted(self) -> None:
        with self._lock:
            self._count += 1
            now = self.clock()
            if self._logged_at is not None and now - self._logged_at < self.interval:
                return
            count, self._count, since, self._logged_at = self._count, 0, self._logged_at, now
        window = "" if since is None else f" in the last {now - since:.0f} s"
        log.warning(
            "gradio: %d queue stream request(s) for an unknown session%s (answered 'session not found'; "
            "counted, logged at most once per %g s)",
            count,
            window,
            self.interval,
        )
