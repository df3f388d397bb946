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
- an upload no submit has claimed (`claim`) within `claim_seconds` is deleted by a sweeper thread, and so are
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

import contextlib
import ipaddress
import itertools
import json
import logging
import os
import threading
import time
import weakref
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..environment import read

log = logging.getLogger(__name__)

UPLOAD_PATH = "/gradio_api/upload"
MULTIPART_SLACK = 64 * 1024  # boundaries and part headers around one file
ANONYMOUS_SHARE = 0.5
HOUR = 3600.0
MIB = 1024 * 1024
REPORT_SECONDS = 60.0  # refusals are logged as one line at most this often


@dataclass(frozen=True)
class UploadLimits:
    request_bytes: int  # one upload request's body
    client_bytes: int  # held by one client at once (uploaded or arriving, not yet claimed or swept)
    client_files: int
    hour_bytes: int  # uploaded by one client in the last hour
    hour_files: int
    folder_bytes: int  # held by everyone at once
    folder_files: int
    claim_seconds: float  # an upload no submit has claimed by then is deleted
    login_reserve: bool = False  # uploads without a login may fill only ANONYMOUS_SHARE of the folder

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, file_bytes: int, login_reserve: bool = False) -> UploadLimits:
        env = os.environ if env is None else env
        return cls(
            request_bytes=file_bytes + MULTIPART_SLACK,
            client_bytes=read(env, "UPLOAD_CLIENT_MIB") * MIB,
            client_files=read(env, "UPLOAD_CLIENT_FILES"),
            hour_bytes=read(env, "UPLOAD_CLIENT_MIB_PER_HOUR") * MIB,
            hour_files=read(env, "UPLOAD_CLIENT_FILES_PER_HOUR"),
            folder_bytes=read(env, "UPLOAD_FOLDER_MIB") * MIB,
            folder_files=read(env, "UPLOAD_FOLDER_FILES"),
            claim_seconds=read(env, "UPLOAD_CLAIM_SECONDS"),
            login_reserve=login_reserve,
        )


@dataclass(frozen=True)
class Refusal:
    status: int  # 413: too large or the folder is full; 429: this client's allowance
    message: str
    retry_after: int | None = None
    reason: str = ""  # "large", "held", "hour" or "folder"


def _mib(n: float) -> str:
    return f"{n / MIB:,.0f} MiB" if n >= MIB else f"{n:,.0f} bytes"


@dataclass
class _Held:
    """What one client has in the folder: an upload (path set) or the remains of one cut short (path None)."""

    key: str
    size: int
    files: int
    at: float
    path: str | None


@dataclass(eq=False)
class Ticket:
    """One upload request being received: what it has reserved so far."""

    key: str
    anonymous: bool
    bytes: int
    files: int = 1
    read: int = 0


class UploadLedger:
    """Who holds what in the upload folder, and what each client uploaded in the last hour. Thread-safe: the
    event loop admits and finishes requests, the sweeper thread deletes what expired."""

    def __init__(self, limits: UploadLimits, folder: Path, clock: Callable[[], float] = time.monotonic):
        self.limits = limits
        self.folder = Path(folder)
        self.clock = clock
        self._lock = threading.Lock()
        self._held: dict[str, _Held] = {}  # by path, or a made-up name for remains
        self._tickets: set[Ticket] = set()
        self._hour: dict[str, deque[tuple[float, int, int]]] = {}
        self._remains = itertools.count()
        self._folder_checked = -1e18
        self.refused: Counter[str] = Counter()  # refusals by reason since the last report
        self._reported_at = clock()
        _LEDGERS.add(self)

    # ---- what is used
    def _held_by(self, key: str | None) -> tuple[int, int]:
        held = [h for h in self._held.values() if key is None or h.key == key]
        flight = [t for t in self._tickets if key is None or t.key == key]
        return sum(h.size for h in held) + sum(t.bytes for t in flight), sum(h.files for h in held) + sum(t.files for t in flight)

    def _last_hour(self, key: str, now: float) -> tuple[int, int, float]:
        """Bytes and files the client uploaded in the last hour (arriving ones included), and when the oldest
        of them leaves the hour."""
        events = self._hour.get(key, deque())
        while events and events[0][0] <= now - HOUR:
            events.popleft()
        flight = [t for t in self._tickets if t.key == key]
        expires = events[0][0] + HOUR - now if events else HOUR
        return (
            sum(e[1] for e in events) + sum(t.bytes for t in flight),
            sum(e[2] for e in events) + sum(t.files for t in flight),
            expires,
        )

    def _forget_claimed(self, key: str | None) -> None:
        """Drop uploads whose file is gone (a submit read and deleted it). Paid only when a cap is reached, and
        for the whole folder at most once a second: a flood of refused requests must not become a flood of stats."""
        if key is None:
            now = self.clock()
            if now - self._folder_checked < 1.0:
                return
            self._folder_checked = now
        for name, h in list(self._held.items()):
            if (key is None or h.key == key) and h.path is not None and not os.path.exists(h.path):
                del self._held[name]

    def _refusal(self, t: Ticket, add_bytes: int, add_files: int) -> Refusal | None:
        now = self.clock()
        refusal = self._over(t, add_bytes, add_files, now)
        if refusal is not None and refusal.reason in ("held", "folder"):
            self._forget_claimed(t.key if refusal.reason == "held" else None)
            refusal = self._over(t, add_bytes, add_files, now)
        if refusal is not None:  # a flood is refused by the thousand: counted, logged by the sweeper once a minute
            self.refused[refusal.reason] += 1
            log.debug("upload refused (%s): %s", t.key, refusal.message)
        return refusal

    def _over(self, t: Ticket, add_bytes: int, add_files: int, now: float) -> Refusal | None:
        lim = self.limits
        claim = int(lim.claim_seconds) + 1
        held_bytes, held_files = self._held_by(t.key)
        if held_bytes + add_bytes > lim.client_bytes or held_files + add_files > lim.client_files:
            return Refusal(
                429,
                f"Upload refused: with it this client would hold {_mib(held_bytes + add_bytes)} in "
                f"{held_files + add_files} uploaded file(s) not yet submitted (at most {_mib(lim.client_bytes)} "
                f"in {lim.client_files} at once). Submit them, or wait: an upload not submitted within "
                f"{lim.claim_seconds:g} s is deleted.",
                claim,
                "held",
            )
        hour_bytes, hour_files, expires = self._last_hour(t.key, now)
        if hour_bytes + add_bytes > lim.hour_bytes or hour_files + add_files > lim.hour_files:
            return Refusal(
                429,
                f"Upload refused: with it this client would have uploaded {_mib(hour_bytes + add_bytes)} in "
                f"{hour_files + add_files} file(s) in the last hour (at most {_mib(lim.hour_bytes)} in "
                f"{lim.hour_files} per hour). Try again later.",
                int(expires) + 1,
                "hour",
            )
        share = ANONYMOUS_SHARE if lim.login_reserve and t.anonymous else 1.0
        all_bytes, all_files = self._held_by(None)
        if all_bytes + add_bytes > lim.folder_bytes * share or all_files + add_files > lim.folder_files * share:
            whose = " for uploads without a login (log in to use the rest)" if share < 1 else ""
            return Refusal(
                413, f"Upload refused: the server's upload folder is full{whose}. Try again in a few minutes.", claim, "folder"
            )
        return None

    # ---- one request's life: admit, grow while its body arrives, then finish or abort
    def admit(self, key: str, anonymous: bool, declared: int | None) -> tuple[Ticket | None, Refusal | None]:
        if declared is not None and declared > self.limits.request_bytes:
            return None, self.too_large()
        t = Ticket(key, anonymous, bytes=declared or 0)
        with self._lock:
            refusal = self._refusal(t, t.bytes, t.files)
            if refusal is None:
                self._tickets.add(t)
                return t, None
        return None, refusal

    def too_large(self) -> Refusal:
        with self._lock:
            self.refused["large"] += 1
        most = self.limits.request_bytes - MULTIPART_SLACK
        return Refusal(413, f"Upload refused: larger than a submission may be ({most:,} bytes).", reason="large")

    def grow(self, t: Ticket, read: int, parts: int) -> Refusal | None:
        """`read` bytes and `parts` multipart parts have arrived so far."""
        t.read = read
        if read > self.limits.request_bytes:
            return self.too_large()
        add_bytes, add_files = max(0, read - t.bytes), max(0, parts - t.files)
        if not add_bytes and not add_files:
            return None
        with self._lock:
            refusal = self._refusal(t, add_bytes, add_files)
            if refusal is None:
                t.bytes += add_bytes
                t.files += add_files
            return refusal

    def finish(self, t: Ticket, paths: list[str]) -> Refusal | None:
        """The request stored `paths`: each is held by the client until claimed or swept. More files than the parts
        counted while the body arrived (a boundary the count misread) are refused here and deleted."""
        now = self.clock()
        sizes = {}
        for p in paths:
            with contextlib.suppress(OSError):
                sizes[str(Path(p).resolve())] = os.stat(p).st_size
        with self._lock:
            if t not in self._tickets:
                return None
            self._tickets.discard(t)
            self._hour.setdefault(t.key, deque()).append((now, t.read, max(len(paths), 1)))
            new = [p for p in sizes if p not in self._held]
            refusal = self._over(t, 0, len(new), now) if len(new) > t.files else None
            if refusal is None:
                for path, size in sizes.items():
                    self._held[path] = _Held(t.key, size, 1, now, path)  # the same bytes again: the latest holder
                return None
        for p in new:
            _remove_upload(self.folder, Path(p))
        return refusal

    def abort(self, t: Ticket) -> None:
        """The request ended without storing anything: what it read may lie in the folder as Gradio's temp files
        (cut short) until the sweeper removes them, so it stays counted until then."""
        now = self.clock()
        with self._lock:
            if t not in self._tickets:
                return
            self._tickets.discard(t)
            if t.read:
                self._held[f"<remains {next(self._remains)}>"] = _Held(t.key, t.read, t.files, now, None)
                self._hour.setdefault(t.key, deque()).append((now, t.read, t.files))

    def claim(self, path: str | Path) -> bool:
        """A submit took this upload: the sweeper leaves it to the submit (which deletes it when done)."""
        with self._lock:
            return self._held.pop(str(Path(path).resolve()), None) is not None

    # ---- the sweeper's pass
    def sweep(self) -> int:
        """Delete unclaimed uploads and cut-short temp files older than the claim window; the files deleted."""
        now, window = self.clock(), self.limits.claim_seconds
        with self._lock:
            expired = [name for name, h in self._held.items() if now - h.at >= window]
            paths = [self._held.pop(name).path for name in expired]
            for key in [k for k, events in self._hour.items() if not events or events[-1][0] <= now - HOUR]:
                del self._hour[key]
        deleted = sum(_remove_upload(self.folder, Path(p)) for p in paths if p is not None)
        wall = time.time()
        with contextlib.suppress(OSError), os.scandir(self.folder) as entries:
            for entry in entries:  # the folder's own files are Gradio's temp files of parts still arriving or cut short
                with contextlib.suppress(OSError):
                    if entry.is_file(follow_symlinks=False) and wall - entry.stat().st_mtime >= window:
                        os.unlink(entry.path)
                        deleted += 1
        if deleted:
            log.info("upload sweep: %d unclaimed upload file(s) deleted", deleted)
        if self.refused and now - self._reported_at >= REPORT_SECONDS:
            with self._lock:
                refused, self.refused = self.refused, Counter()
            since, self._reported_at = now - self._reported_at, now
            log.warning(
                "uploads refused in the last %.0f s: %s", since, ", ".join(f"{n} {why}" for why, n in sorted(refused.items()))
            )
        return deleted


def _remove_upload(folder: Path, path: Path) -> bool:
    """Delete an upload (and its now empty folder); only inside the upload folder."""
    try:
        path = path.resolve()
        if folder.resolve() not in path.parents or not path.is_file():
            return False
        path.unlink()
        if path.parent != folder.resolve() and not any(path.parent.iterdir()):
            path.parent.rmdir()
        return True
    except OSError as exc:
        log.debug("upload %s not removed: %s", path, exc)
        return False


_LEDGERS: weakref.WeakSet[UploadLedger] = weakref.WeakSet()


def claim(path: str | Path) -> None:
    """A submit has taken this upload (every running guard's ledger is told; there is one per served app)."""
    for ledger in list(_LEDGERS):
        ledger.claim(path)


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
