"""The board's exchange with RESULTS_REPO: the judge's verdict records pulled in, the results cache pushed out.

Pulled once per process (retried with every new pull of the submissions until it succeeds): only the verdict
records of the snapshot's submissions under the board's LLM judge, the one thing the repo is trusted with
(scoring answers from them). Pushed after every change, at most one commit per refresh interval while the
board runs in the background (later changes wait on a timer and go in one commit); at once otherwise (CLI,
tests), and on stop for a push still waiting.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from .scoring import ResultsCache
from .store import StoreError
from .store.base import Store

log = logging.getLogger(__name__)


class ResultsSync:
    def __init__(
        self,
        store: Store,
        results_dir: Path,
        cache: ResultsCache,
        *,
        enabled: bool,
        interval: float,
        deferring: Callable[[], bool],
        extra: Callable[[Iterable[str] | None], dict],
    ):
        """`enabled`: a RESULTS_REPO is configured; `interval`: seconds between pushes; `deferring()`: whether a push
        may wait for a timer (the board runs in the background); `extra(remote paths)`: the dataset view's files."""
        self.store, self.results_dir, self.cache = store, results_dir, cache
        self.enabled, self.interval, self.deferring, self.extra = enabled, interval, deferring, extra
        self.pulled = False  # fetched once this process
        self._state_lock, self._push_lock = threading.Lock(), threading.Lock()
        self._timer: threading.Timer | None = None
        self._last_push = float("-inf")
        self._pushed_once = False

    def pull(self, snap, judge) -> None:
        """Fetch the verdict records of this snapshot's submissions under `judge`; nothing when the judge keeps none."""
        keeps = judge is not None and not getattr(judge, "approximate", True)
        wanted = {self.cache.record_path(f.sha256, judge.name) for f in snap.files} if keeps else set()
        try:
            self.store.pull_results(self.results_dir, wanted)
            self.pulled = True
        except StoreError as exc:
            log.warning("results cache not pulled: %s", exc)

    def push(self) -> None:
        """Push what changed: now, or by a timer when the last push is less than `interval` ago and deferring is on."""
        if not self.enabled:
            return
        with self._state_lock:
            wait = self._last_push + self.interval - time.monotonic()
            if self.deferring() and wait > 0:
                if self._timer is None:
                    self._timer = threading.Timer(wait, self._push_deferred)
                    self._timer.daemon = True
                    self._timer.start()
                return
            self._last_push = time.monotonic()
        self._push_now()

    def flush(self) -> None:
        """A deferred push, sent now rather than lost (the board stops)."""
        with self._state_lock:
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
            self._push_now()

    def _push_deferred(self) -> None:
        with self._state_lock:
            self._timer, self._last_push = None, time.monotonic()
        self._push_now()

    def _push_now(self) -> None:
        with self._push_lock:  # one push at a time: the timer's and the refresher's
            try:
                remote = getattr(self.store, "results_repo_paths", lambda: None)()
                extra = self.extra(remote)
                # The first push of a process compares every local file (changed=None): a previous run may have
                # stopped before pushing; later ones send only what was written since (the store keeps what
                # a failed push did not send).
                written = self.cache.take_written()
                self.store.push_results(self.results_dir, changed=written if self._pushed_once else None, extra=extra)
                self._pushed_once = True
            except StoreError as exc:
                log.warning("results not pushed: %s", exc)
            except Exception:  # a bug building the dataset view must not stop the judge or the refresher
                log.exception("results not pushed")
