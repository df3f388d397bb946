"""How the store's Hub traffic behaves on the wire: quiet, and never waiting forever.

huggingface_hub's shared HTTP client has no timeout, and several of its calls
(tree listing, preupload, commit) pass `timeout=None` explicitly. A Hub that
accepts connections but never answers would then freeze the refresher thread
for good, and the board would never say the Hub is unreachable. We add a
request hook to huggingface_hub's client factory that fills in a timeout when
a request has none; requests that set their own timeout are left alone.
"""

from __future__ import annotations

import logging
import threading

import httpx2  # huggingface_hub's own HTTP library
from huggingface_hub.utils import _http as hf_http

log = logging.getLogger(__name__)

_lock = threading.Lock()
_timeout_seconds: float = 30.0
_installed = False


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
    hooks["request"] = [*hooks.get("request", []), _fill_missing_timeout]
    client.event_hooks = hooks
    return client


def install_request_timeout(seconds: float) -> None:
    """Give every huggingface_hub request without a timeout this one (process-wide, idempotent)."""
    global _timeout_seconds, _installed
    with _lock:
        _timeout_seconds = float(seconds)
        if _installed:
            return
        current = getattr(
            hf_http, "_GLOBAL_CLIENT_FACTORY", hf_http.default_client_factory
        )
        if current is not hf_http.default_client_factory:
            # Someone configured their own client (proxy, certificates): respect it.
            log.debug(
                "huggingface_hub has a custom client factory; request timeout hook not installed"
            )
            return
        hf_http.set_client_factory(_client_factory)
        _installed = True
