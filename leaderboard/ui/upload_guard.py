"""Bounds on Gradio's upload route: what a stranger can leave in the upload folder, and how long.

Gradio answers any POST .../gradio_api/upload with 200 and keeps the files in its upload folder until
`delete_cache` sweeps them (30 minutes here): no login needed, no total. `UploadGuard` is a pure ASGI middleware
around the Gradio app that intercepts that route only:

- a body larger than one submission (plus its multipart framing) is refused from its Content-Length before a byte
  is read (413); a body without one is counted while it streams and cut at the same size;
- per client, the bytes and files held (uploaded, neither submitted nor swept yet, or being received) and those
  uploaded in the last hour are capped (429 with Retry-After);
- the folder's total is capped (413); where the board asks for a login, uploads without one may fill only
  ANONYMOUS_SHARE of it, so logged-in submitters keep room under an anonymous flood from many addresses;
- an upload no submit has claimed (`upload_ledger.claim`) within `claim_seconds` is deleted by a sweeper thread, and so are
  Gradio's temp files of uploads cut short (a disconnect or a refusal mid-body leaves them in the folder's root);
- any other request's body is capped at the same size (Gradio reads JSON bodies whole, and its component_server
  parses multipart ones into memory).

A client is the logged-in Hugging Face user when the request carries Gradio's OAuth session (a login is the stronger
name: moving address does not escape it, a shared address does not block it), else its IP address (an IPv6
address's /64: one host holds a whole /64). The address is the connection's peer as uvicorn reports it (uvicorn
itself replaces it with X-Forwarded-For's for the proxies FORWARDED_ALLOW_IPS names, by default the local host). On a
Space every connection comes from Hugging Face's proxy, so there it is the last address of X-Forwarded-For, the one
that proxy added (addresses a client writes into the header itself end up to its left).
"""

from __future__ import annotations

import ipaddress
import json
import logging
import threading
import time
from collections.abc import Mapping

from .upload_ledger import Refusal, UploadLedger

log = logging.getLogger(__name__)

UPLOAD_PATH = "/gradio_api/upload"


# ---- who the client is ---------------------------------------------------------------------------------------
def session_user(scope: Mapping) -> str | None:
    """The Hugging Face user of Gradio's OAuth session cookie (SessionMiddleware has decoded it into the scope)."""
    session = scope.get("session")
    info = session.get("oauth_info") if isinstance(session, Mapping) else None
    if not isinstance(info, Mapping):
        return None
    expires = info.get("expires_at")
    if isinstance(expires, int | float) and expires < time.time():
        return None
    user = info.get("userinfo")
    name = user.get("preferred_username") if isinstance(user, Mapping) else None
    return name if isinstance(name, str) and name else None


def client_address(scope: Mapping, on_space: bool) -> str:
    peer = (scope.get("client") or ("unknown", 0))[0]
    if on_space:
        for name, value in scope.get("headers") or ():
            if name == b"x-forwarded-for":
                last = value.decode("latin-1").split(",")[-1].strip()
                peer = last or peer  # the last of several such headers wins: the proxy's is the last added
    try:
        address = ipaddress.ip_address(peer)
    except ValueError:
        return peer[:64]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


def client_key(scope: Mapping, on_space: bool) -> tuple[str, bool]:
    """(the name a client's allowance is kept under, whether it is anonymous)."""
    user = session_user(scope)
    if user is not None:
        return f"user:{user}", False
    return f"ip:{client_address(scope, on_space)}", True


# ---- the middleware -------------------------------------------------------------------------------------------
class _Refused(Exception):
    def __init__(self, refusal: Refusal):
        super().__init__(refusal.message)
        self.refusal = refusal


class _PartCounter:
    """Counts multipart parts as the body streams (a boundary may straddle two chunks)."""

    def __init__(self, content_type: str):
        boundary = ""
        for param in content_type.split(";")[1:]:
            name, _, value = param.strip().partition("=")
            if name.lower() == "boundary":
                boundary = value.strip('"')
        self.marker = b"--" + boundary.encode("latin-1") if boundary else b""
        self.markers = 0
        self.closed = False
        self._tail = b""

    def feed(self, chunk: bytes) -> int:
        """Parts begun so far (at least one)."""
        if not self.marker:
            return 1
        data = self._tail + chunk
        self.markers += data.count(self.marker) - self._tail.count(self.marker)  # the tail's were counted before
        self.closed = self.closed or self.marker + b"--" in data  # the closing marker begins no part
        self._tail = data[-(len(self.marker) + 1) :]
        return max(self.markers - self.closed, 1)


async def _reply(send, refusal: Refusal) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8")]
    if refusal.retry_after is not None:
        headers.append((b"retry-after", str(refusal.retry_after).encode()))
    body = refusal.message.encode()
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class UploadGuard:
    """ASGI middleware: `ledger` bounds POST .../gradio_api/upload; any other request's body is capped at one upload."""

    def __init__(self, app, ledger: UploadLedger, on_space: bool = False, sweep_seconds: float | None = None):
        self.app = app
        self.ledger = ledger
        self.on_space = on_space
        self.sweep_seconds = sweep_seconds or min(max(ledger.limits.claim_seconds / 4, 0.05), 30.0)
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None
        self._start_lock = threading.Lock()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            self._start_sweeper()
            await self.app(scope, self._watch_shutdown(receive), send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
        elif scope.get("method") == "POST" and scope.get("path", "").rstrip("/").endswith(UPLOAD_PATH):
            self._start_sweeper()
            await self._upload(scope, receive, send)
        else:
            await self._capped(scope, receive, send)

    async def _capped(self, scope, receive, send):
        """Any other request's body is at most one upload's: Gradio reads JSON bodies whole, and its
        component_server parses multipart ones into memory, each file up to the size cap."""
        declared = _content_length(scope)
        if declared is not None and declared > self.ledger.limits.request_bytes:
            await _reply(send, self.ledger.too_large())
            return
        read = 0
        started = False

        async def counted_receive():
            nonlocal read
            message = await receive()
            if message.get("type") == "http.request":
                read += len(message.get("body", b""))
                if read > self.ledger.limits.request_bytes:
                    raise _Refused(self.ledger.too_large())
            return message

        async def watched_send(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted_receive, watched_send)
        except Exception as exc:
            refused = _refused_in(exc)
            if refused is None or started:
                raise
            await _reply(send, refused.refusal)

    def _watch_shutdown(self, receive):
        async def watched():
            message = await receive()
            if message.get("type") == "lifespan.shutdown":
                self._stop.set()
            return message

        return watched

    def _start_sweeper(self) -> None:
        with self._start_lock:
            if self._sweeper is None and not self._stop.is_set():
                self._sweeper = threading.Thread(target=self._sweep_loop, name="upload-sweeper", daemon=True)
                self._sweeper.start()

    def _sweep_loop(self) -> None:
        while not self._stop.wait(self.sweep_seconds):
            try:
                self.ledger.sweep()
            except Exception:  # the next pass tries again; a sweeper that died would leave the folder unbounded
                log.exception("upload sweep failed")

    def stop(self) -> None:
        self._stop.set()

    async def _upload(self, scope, receive, send):
        headers = {name.lower(): value for name, value in scope.get("headers") or ()}
        declared = _content_length(scope)
        if declared is not None and declared < 0:  # uvicorn refuses these itself; a count must never be lowered by one
            await _reply(send, Refusal(400, "Upload refused: the Content-Length is not a byte count."))
            return
        key, anonymous = client_key(scope, self.on_space)
        ticket, refusal = self.ledger.admit(key, anonymous, declared)
        if refusal is not None:
            await _reply(send, refusal)
            return
        parts = _PartCounter(headers.get(b"content-type", b"").decode("latin-1"))
        read = 0
        response: dict = {"start": None, "body": []}

        async def counted_receive():
            nonlocal read
            message = await receive()
            if message.get("type") == "http.request":
                chunk = message.get("body", b"")
                read += len(chunk)
                refused = self.ledger.grow(ticket, read, parts.feed(chunk))
                if refused is not None:
                    raise _Refused(refused)
            return message

        async def held_send(message):
            # The route's answer (a short JSON list of stored paths) is held until complete: the paths become the
            # client's before it can use them.
            if message["type"] == "http.response.start":
                response["start"] = message
            elif message["type"] == "http.response.body":
                response["body"].append(message.get("body", b""))
                if not message.get("more_body", False):
                    stored = _stored_paths(response["start"], b"".join(response["body"]))
                    refused = self.ledger.abort(ticket) if stored is None else self.ledger.finish(ticket, stored)
                    if refused is not None:
                        response["start"] = None
                        await _reply(send, refused)
                        return
                    await send(response["start"])
                    await send({"type": "http.response.body", "body": b"".join(response["body"])})
                    response["start"] = None
            else:
                await send(message)

        try:
            await self.app(scope, counted_receive, held_send)
        except _Refused as exc:
            self.ledger.abort(ticket)
            await _reply(send, exc.refusal)
            return
        except BaseException as exc:  # a disconnect mid-body: Gradio's temp file stays, counted until swept
            self.ledger.abort(ticket)
            if _refused_in(exc) is not None:
                await _reply(send, _refused_in(exc).refusal)
                return
            raise
        self.ledger.abort(ticket)  # the app ended without completing its answer (else a no-op: it finished)


def _content_length(scope) -> int | None:
    """The declared body size; -1 for one that is not a count."""
    for name, value in scope.get("headers") or ():
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return -1
    return None


def _refused_in(exc: BaseException) -> _Refused | None:
    """Our refusal, however the app wrapped it (an exception group, a chain)."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, _Refused):
            return exc
        if isinstance(exc, BaseExceptionGroup):
            for inner in exc.exceptions:
                found = _refused_in(inner)
                if found is not None:
                    return found
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def _stored_paths(start: dict | None, body: bytes) -> list[str] | None:
    if start is None or start.get("status") != 200:
        return None
    try:
        paths = json.loads(body)
    except ValueError:
        return None
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        return None
    return paths
