"""Background judging: the submissions waiting for the judge, judged one at a time (live) or together (batch).

The board queues a scored submission whose end-to-end metrics are not judged yet (by path); the worker
thread judges it and scores it again from the verdicts, then tells the board (`changed`), which re-renders,
writes the results tables and pushes. The same thread rescores a submission whose cached per-unit scores a
page view found unsound (`heal`): a page only reads. A batch judge takes every waiting submission in one run (at most
`max_items` answers), a run still pending is polled again after `poll_seconds`.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .ranking import Entry
from .scoring import NO_JUDGE, Checked, Rescorer

log = logging.getLogger(__name__)


@dataclass
class JudgeProgress:
    done: int = 0
    total: int = 0
    # batch mode: the batch being polled, its lines answered of sent, when it was sent (epoch seconds) and
    # whether its output is still awaited (the status line shows them)
    batch_id: str = ""
    lines_done: int = 0
    lines_total: int = 0
    batch_since: float = 0.0
    batch_waiting: bool = False

    def __call__(self, done: int, total: int) -> None:
        self.done, self.total = done, total

    def on_batch(
        self, batch_id: str, lines_done: int, lines_total: int, since: float | None = None, waiting: bool = True
    ) -> None:
        self.batch_id, self.lines_done, self.lines_total = batch_id, lines_done, lines_total
        self.batch_since, self.batch_waiting = time.time() if since is None else since, waiting


@dataclass(frozen=True)
class _Heal:
    """A queued rescoring of a submission whose cached per-unit scores were found unsound by a page view."""

    path: str


class JudgeQueue:
    def __init__(
        self,
        judge,
        rescorer: Rescorer,
        target: Callable[[str], tuple[Entry, Path] | None],
        changed: Callable[[], None],
    ):
        """`target(path)`: the board's entry at `path` and its local file (None when gone); `changed()`: after every
        judged (or rescored) submission."""
        self.judge, self.rescorer = judge, rescorer
        self._target, self._changed = target, changed
        self.progress: dict[str, JudgeProgress] = {}  # by entry id, while it is being judged (the status line)
        self._queue: queue.Queue[str | _Heal] = queue.Queue()
        self._healing: set[str] = set()  # paths queued for rescoring, until rescored
        self._healing_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.stopping = False

    def put(self, path: str) -> None:
        """Queue a submission by path; the empty path stops the worker."""
        self._queue.put(path)

    def heal(self, path: str) -> None:
        """Queue the rescoring of a submission whose per-unit scores are unsound (once, however many views ask)."""
        with self._healing_lock:
            if path in self._healing:
                return
            self._healing.add(path)
        self._queue.put(_Heal(path))

    def healing(self, path: str) -> bool:
        with self._healing_lock:
            return path in self._healing

    def waiting(self) -> int:
        return self._queue.qsize()

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="judge", daemon=True)
        self._thread.start()

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        self._queue.put("")  # wakes the worker, which then exits
        if self._thread:
            self._thread.join(5)
        self.stopping = True

    @property
    def batch(self) -> bool:
        """Batch mode: every waiting submission judged in one run."""
        return self.judge is not None and self.judge.mode == "batch"

    def run(self) -> None:
        """The worker's loop, until the stop sentinel: the thread's, or the caller's (after `put("")`, to drain)."""
        while True:
            item = self._queue.get()
            if not item:
                return
            if isinstance(item, _Heal):
                self._heal(item.path)
                continue
            if self.batch:
                more, stopping = self._drain()
                self._together([item, *more])
                if stopping:
                    return
                continue
            self._one(item)

    def _drain(self) -> tuple[list[str], bool]:
        """The paths waiting now (in queue order, once each; rescorings done first), and whether the stop sentinel
        was among them."""
        paths: list[str] = []
        stopping = False
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return paths, stopping
            if isinstance(item, _Heal):
                self._heal(item.path)
            elif not item:
                stopping = True
            elif item not in paths:
                paths.append(item)

    def _together(self, paths: list[str]) -> None:
        """Batch mode: the waiting submissions' answers judged as one run, then each scored from its verdicts.

        Each file is read and validated once, its validation kept from its items to its score. At most
        `judge.max_items` answers per run (at least one submission); submissions holding answers of a run a
        restart left unfinished always join (that run is resumed first), the rest wait for the next run.
        """
        from .judge import BatchError, BatchPending

        inflight = self.judge.inflight_members()
        group: list[tuple[Entry, Path, str, Checked, list]] = []
        size = 0
        for path in paths:
            found = self._target(path)
            if found is None:
                continue
            entry, local_path = found
            try:
                loaded = self.rescorer.validated(local_path)
            except Exception:  # a validator bug: this file goes the ordinary way, which records it
                log.exception("reading the answers of %s failed", path)
                loaded = None
            if loaded is None:  # unreadable now: scored the ordinary way, which says why
                self._one(path)
                continue
            sha, checked = loaded
            if not checked.ok or checked.track is None:  # invalid now: its result says why
                self._settle(entry, self.rescorer.keep(checked, sha, path=local_path))
                continue
            items = checked.track.judge_items(checked.parsed, checked.gold)
            recorded = self.rescorer.recorded_verdicts(sha, self.judge, items)
            if recorded is not None:  # its verdicts are recorded: scored from them, nothing sent
                self._settle(entry, self.rescorer.keep(checked, sha, recorded, local_path))
                continue
            resumes = any(ukey in inflight for ukey in _ukeys(items))
            if group and not resumes and size + len(items) > self.judge.max_items:
                self.rescorer.hand_over(sha, checked)  # the next run takes this validation (while the bound has room)
                self._queue.put(path)
                continue
            group.append((entry, local_path, sha, checked, items))
            size += len(items)
        if not group:
            return
        progresses = [self.progress.setdefault(entry.id, JudgeProgress()) for entry, *_ in group]
        pending = False
        try:
            judged = self.judge.judge_groups([items for *_, items in group], progresses)
        except BatchPending as exc:  # still running, or the service unreachable: the run's state is on disk
            log.warning("batch judging of %d submissions paused: %s; polling again later", len(group), exc)
            judged, pending = [None] * len(group), True
        except BatchError as exc:  # refused: a restart tries again
            log.warning("batch judging of %d submissions stopped: %s", len(group), exc)
            judged = [None] * len(group)
        except Exception:  # the judge failing must leave the retrieval metrics standing
            log.exception("batch judging of %d submissions failed", len(group))
            judged = [None] * len(group)
        for (entry, local_path, sha, checked, _), verdicts in zip(group, judged, strict=True):
            if pending:  # polled again later: from this validation, while the bound has room
                self.rescorer.hand_over(sha, checked)
            if verdicts is not None:
                try:  # every verdict comes from the run: nothing is sent here
                    self._settle(entry, self.rescorer.keep(checked, sha, verdicts, local_path), changed=False)
                except Exception:
                    log.exception("scoring %s with its verdicts failed", entry.path)
            entry.judging = pending
            self.progress.pop(entry.id, None)
        if pending and not self.stopping:  # queued again after a poll interval: the same run is resumed then
            again = threading.Timer(self.judge.poll_seconds, lambda: [self._queue.put(e.path) for e, *_ in group])
            again.daemon = True
            again.start()
        self._changed()

    def _settle(self, entry: Entry, scored, changed: bool = True) -> None:
        """A judged result on the board (a scored one only: the retrieval metrics stand otherwise)."""
        if scored.summary.status == "scored":
            entry.summary, entry.key = scored.summary, scored.key
        if changed:
            entry.judging = False
            self._changed()

    def _one(self, path: str) -> None:
        """Live mode (and files batch mode cannot read): one submission judged and scored."""
        found = self._target(path)
        if found is None:
            return
        entry, local_path = found
        progress = self.progress.setdefault(entry.id, JudgeProgress())
        try:
            scored = self.rescorer.score_file(local_path, judge=self.judge, progress=progress)
            if scored.summary.status == "scored":
                entry.summary, entry.key = scored.summary, scored.key
        except Exception:  # the judge failing must leave the retrieval metrics standing
            log.exception("judging %s failed", path)
        entry.judging = False
        self.progress.pop(entry.id, None)
        self._changed()

    def _heal(self, path: str) -> None:
        """Rescore a submission whose per-unit scores were unsound, judged as it was (its verdicts are cached or
        recorded: nothing new to pay), and rewrite its results; what a page view asked for without waiting."""
        try:
            found = self._target(path)
            if found is None:
                return
            entry, local_path = found
            if self.rescorer.units(entry.key, entry.summary) is not None:  # sound again (rescored meanwhile)
                return
            judged = self.judge is not None and entry.summary.judge != NO_JUDGE
            scored = self.rescorer.score_file(local_path, judge=self.judge if judged else None)
            if scored.summary.status == entry.status:
                entry.summary, entry.key = scored.summary, scored.key
        except Exception:
            log.exception("rescoring %s failed", path)
        finally:
            with self._healing_lock:
                self._healing.discard(path)
        self._changed()


def _ukeys(items: list):
    from .judge.batch import ukey

    return (ukey(it) for it in items)
