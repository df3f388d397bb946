"""What each client holds in Gradio's upload folder and uploaded in the last hour: the upload guard's ledger.

`UploadLedger` admits an upload request (a `Ticket`) against the limits (`UploadLimits`, from the UPLOAD_* settings),
grows its reservation while the body arrives, and records what it stored (`finish`) or what a cut-short one may have
left (`abort`). A submit `claim`s the upload it reads; `sweep` deletes the unclaimed ones older than the claim window,
and Gradio's temp files of uploads cut short. The middleware that feeds it is upload_guard.py.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import threading
import time
import weakref
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..settings import PageSettings

log = logging.getLogger(__name__)

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
    def of(cls, page: PageSettings, *, file_bytes: int, login_reserve: bool = False) -> UploadLimits:
        """The limits of the Settings' page section (the UPLOAD_* variables)."""
        return cls(
            request_bytes=file_bytes + MULTIPART_SLACK,
            client_bytes=page.upload_client_mib * MIB,
            client_files=page.upload_client_files,
            hour_bytes=page.upload_client_mib_per_hour * MIB,
            hour_files=page.upload_client_files_per_hour,
            folder_bytes=page.upload_folder_mib * MIB,
            folder_files=page.upload_folder_files,
            claim_seconds=page.upload_claim_seconds,
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
