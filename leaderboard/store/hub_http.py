"""How the store's Hub traffic behaves on the wire: quiet, and never waiting forever.

huggingface_hub's shared HTTP client has no timeout, and several of its calls
(tree listing, preupload, commit) pass `timeout=None` explicitly. A Hub that
accepts connections but never answers would then freeze the refresher thread
for good, and the board would never say the Hub is unreachable. We add a
request hook to huggingface_hub's client factory that fills in a timeout when
a request has none; requests that set their own timeout are left alone.

It also resends listings and downloads up to five times, with backoff, after a
timeout: six timeouts and ~23 s of sleeps before the store could say the Hub
is unreachable. Inside `single_attempt()` (every store operation) a request
that got no answer is not resent: one slow Hub costs one timeout, and the
board's timer tries again at its next round.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import httpx2  # huggingface_hub's own HTTP library
from huggingface_hub.utils import _http as hf_http

log = logging.getLogger(__name__)

_lock = threading.Lock()
_timeout_seconds: float = 30.0
_installed = False
_local = threading.local()  # per thread: the request sent and not answered yet, inside single_attempt()


class NotResent(Exception):
    """A request that got no answer was about to be sent again; deliberately not among the exceptions
    huggingface_hub retries on, so it ends the attempt at once."""


@contextmanager
def single_attempt() -> Iterator[None]:
    """Within: a request of this thread that got no answer (timeout, dropped connection) is not resent."""
    outer = getattr(_local, "pending", None)
    _local.pending = ""  # inside, nothing unanswered
    try:
        yield
    finally:
        _local.pending = outer


def _refuse_resend(request: httpx2.Request) -> None:
    pending = getattr(_local, "pending", None)
    if pending is None:  # outside any store operation (gold downloads, ...): huggingface_hub's own retries
        return
    key = f"{request.method} {request.url}"
    if pending == key:
        _local.pending = ""
        raise NotResent(f"{request.method} {request.url.path} got no answer; not sent again")
    _local.pending = key


def _answered(response: httpx2.Response) -> None:
    if getattr(_local, "pending", None):
        _local.pending = ""


def _fill_missing_timeout(request: httpx2.Request) -> None:
    current = request.extensions.get("timeout") or {}
    if all(value is None for value in current.values()):
        request.extensions = {
            **request.extensions,
            "timeout": httpx2.Timeout(_timeout_seconds).as_dict(),
        }


def _client_factory() -> httpx2.Client:
    client = hf_http.default_client_factory()
    hooks = client.event_hooks
    hooks["request"] = [*hooks.get("request", []), _fill_missing_timeout, _refuse_resend]
    hooks["response"] = [*hooks.get("response", []), _answered]
    client.event_hooks = hooks
    return client


def install_request_timeout(seconds: float) -> None:
    """Give every huggingface_hub request without a timeout this one (process-wide, idempotent)."""
    global _timeout_seconds, _installed
    with _lock:
        _timeout_seconds = float(seconds)
        if _installed:
            return
        current = getattr(hf_http, "_GLOBAL_CLIENT_FACTORY", hf_http.default_client_factory)
        if current is not hf_http.default_client_factory:
            # Someone configured their own client (proxy, certificates): respect it.
            log.debug("huggingface_hub has a custom client factory; request timeout hook not installed")
            return
        hf_http.set_client_factory(_client_factory)
        _installed = True
