"""Refresher: pulls the store on a timer in a background thread and keeps the last good snapshot.

The app never restarts to refresh: it reads `refresher.snapshot` (the last
successful pull or, until the first one, what an earlier run left on disk: see
`seed`), `data_as_of()` and `banner()` (None while healthy, otherwise "Hub
unreachable since ..., showing data as of ...", or "Configuration problem ..."
when the Hub refuses the token). A failed pull changes nothing but the error; the
next successful pull clears it. Open pages poll these (STATUS_POLL_SECONDS), so a
banner appears and clears without a reload.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from .base import Store
from .errors import StoreError, StoreMisconfigured, redact
from .model import Snapshot

log = logging.getLogger(__name__)


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _fmt(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


@dataclass(frozen=True)
class RefreshError:
    message: str  # safe to show: never contains a token
    since: datetime  # first failure of the current outage
    last_attempt: datetime
    failures: int  # consecutive failed pulls
    config: bool = False  # the Hub refused the token: a setting to fix, not an outage


class Refresher:
    def __init__(
        self,
        store: Store,
        interval: float = 300.0,
        on_snapshot: Callable[[Snapshot], None] | None = None,
        clock: Callable[[], datetime] = _utcnow,
        after_pull: Callable[[Snapshot], None] | None = None,
    ):
        self.store = store
        self.interval = interval
        self.on_snapshot = on_snapshot
        # Called after every successful pull, changed or not (pull requests can change while main does not).
        self.after_pull = after_pull
        self._clock = clock
        self._snapshot: Snapshot | None = None
        self._error: RefreshError | None = None
        # One pull at a time (timer and admin button).
        self._refresh_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # Set from start(pull_first=True) until the first pull ends: what "loading" means.
        self._first_pull_pending = False

    # ---- what the page shows ---------------------------------------------------------------

    @property
    def snapshot(self) -> Snapshot | None:
        """The last good snapshot (None until the first successful pull)."""
        return self._snapshot

    @property
    def last_error(self) -> RefreshError | None:
        """The current outage, None when the last pull succeeded."""
        return self._error

    @property
    def loading(self) -> bool:
        """The first pull is under way and there is nothing (cached) to show meanwhile."""
        return self._snapshot is None and self._error is None and self._first_pull_pending

    def data_as_of(self) -> str:
        snap = self._snapshot
        if snap is None:
            return f"loading: first pull from {self.store.source} in progress" if self.loading else "no data yet"
        return f"data as of {snap.commit[:12]}, {_fmt(snap.fetched_at)}"

    def banner(self) -> str | None:
        err = self._error
        if err is None:
            return None
        what = "Hub unreachable" if self.store.source.startswith("hub:") else "Submissions unavailable"
        if err.config:
            what = "Configuration problem"
        showing = f"showing {self.data_as_of()}" if self._snapshot else "no data loaded yet"
        return f"{what} since {_fmt(err.since)} ({err.message}); {showing}."

    # ---- pulling ---------------------------------------------------------------------------

    def seed(self, snapshot: Snapshot, notify: bool = True) -> bool:
        """Serve a snapshot from disk until the first successful pull (a restart, the Hub slow or down).

        Returns whether it was taken (not when a pull got there first). `notify=False`: the
        caller applies it itself, not through `on_snapshot` (which may also reach the network).
        """
        with self._refresh_lock:
            if self._snapshot is not None:
                return False
            self._snapshot = snapshot
        if notify and self.on_snapshot:
            self.on_snapshot(snapshot)
        return True

    def refresh_now(self) -> Snapshot | None:
        """Pull once, synchronously (startup, admin button). Returns the last good snapshot."""
        with self._refresh_lock:
            previous = self._snapshot
            try:
                snap = self.store.pull()
            except StoreError as exc:
                self._record_failure(str(exc), config=isinstance(exc, StoreMisconfigured))
                return previous
            except Exception:  # a bug must not kill the timer: report it like an outage, by log reference
                ref = secrets.token_hex(3)
                log.exception("unexpected error while pulling %s (ref %s)", self.store.source, ref)
                self._record_failure(f"unexpected error, ref {ref} in the logs")
                return previous
            if self._error is not None:
                log.info(
                    "store %s reachable again after %d failed pull(s)",
                    self.store.source,
                    self._error.failures,
                )
            self._error = None
            self._snapshot = snap
            if self.on_snapshot and (previous is None or snap.changed or snap.removed or snap.commit != previous.commit):
                try:
                    self.on_snapshot(snap)
                except Exception:
                    log.exception("on_snapshot callback failed for commit %s", snap.commit)
            if self.after_pull:
                try:
                    self.after_pull(snap)
                except Exception:
                    log.exception("after_pull callback failed for commit %s", snap.commit)
            return snap

    def _record_failure(self, message: str, config: bool = False) -> None:
        message = redact(message)
        now = self._clock()
        prev = self._error
        self._error = RefreshError(
            message=message,
            since=prev.since if prev else now,
            last_attempt=now,
            failures=(prev.failures if prev else 0) + 1,
            config=config,
        )
        (log.error if config else log.warning)(
            "pull of %s failed (%d in a row): %s",
            self.store.source,
            self._error.failures,
            message,
        )

    # ---- timer -----------------------------------------------------------------------------

    def start(self, pull_first: bool = True) -> Refresher:
        """Start the background timer (daemon thread). With pull_first, pull right away."""
        if self._thread and self._thread.is_alive():
            return self
        self._stop.clear()
        self._first_pull_pending = pull_first
        self._thread = threading.Thread(target=self._run, args=(pull_first,), name="store-refresher", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float | None = 5.0) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout)
            self._thread = None

    def _run(self, pull_first: bool) -> None:
        if pull_first:
            try:
                self.refresh_now()
            finally:
                self._first_pull_pending = False
        while not self._stop.wait(self.interval):
            self.refresh_now()
