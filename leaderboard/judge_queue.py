"""Background judging: the submissions waiting for the judge, judged one at a time (live) or together (batch).

The board queues a scored submission whose end-to-end metrics are not judged yet (by path); the worker
thread judges it and scores it again from the verdicts, then tells the board (`changed`), which re-renders,
writes the results tables and pushes. A batch judge takes every waiting submission in one run (at most
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

from .problems import SubmissionError
from .ranking import Entry
from .scoring import Rescorer, check
from .submission import read_file

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


class JudgeQueue:
    def __init__(
        self,
        judge,
        rescorer: Rescorer,
        target: Callable[[str], tuple[Entry, Path] | None],
        changed: Callable[[], None],
    ):
        """`target(path)`: the board's entry at `path` and its local file (None when gone); `changed()`: after every
        judged submission."""
        self.judge, self.rescorer = judge, rescorer
        self._target, self._changed = target, changed
        self.progress: dict[str, JudgeProgress] = {}  # by entry id, while it is being judged (the status line)
        self._queue: queue.Queue[str] = queue.Queue()
        self._thread: threading.Thread | None = None
        self.stopping = False

    def put(self, path: str) -> None:
        """Queue a submission by path; the empty path stops the worker."""
        self._queue.put(path)

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

    def run(self) -> None:
        """The worker's loop, until the stop sentinel: the thread's, or the caller's (after `put("")`, to drain)."""
        while True:
            path = self._queue.get()
            if not path:
                return
            if hasattr(self.judge, "judge_groups"):  # batch mode: every waiting submission in one batch run
                more, stopping = self._drain()
                self._together([path, *more])
                if stopping:
                    return
                continue
            self._one(path)

    def _drain(self) -> tuple[list[str], bool]:
        """The paths waiting now (in queue order, once each), and whether the stop sentinel was among them."""
        paths: list[str] = []
        stopping = False
        while True:
            try:
                path = self._queue.get_nowait()
            except queue.Empty:
                return paths, stopping
            if not path:
                stopping = True
            elif path not in paths:
                paths.append(path)

    def _together(self, paths: list[str]) -> None:
        """Batch mode: the waiting submissions' answers judged as one run, then each scored from its verdicts.

        At most `judge.max_items` answers per run (at least one submission); submissions holding answers of a
        run a restart left unfinished always join (that run is resumed first), the rest wait for the next run.
        """
        from .judge import BatchError, BatchPending

        inflight = self.judge.inflight_members()
        group: list[tuple[Entry, Path, list]] = []
        size = 0
        for path in paths:
            found = self._target(path)
            if found is None:
                continue
            entry, local_path = found
            try:
                items = self._items(local_path)
            except Exception:  # a validator bug: this file goes the ordinary way, which records it
                log.exception("reading the answers of %s failed", path)
                items = None
            if items is None:  # unreadable or invalid now: scored the ordinary way, which says why
                self._one(path)
                continue
            if self.rescorer.score_recorded(local_path, entry.sha256, self.judge) is not None:
                self._one(path)  # its verdicts are recorded: scored from them, nothing sent
                continue
            resumes = any(ukey in inflight for ukey in _ukeys(items))
            if group and not resumes and size + len(items) > self.judge.max_items:
                self._queue.put(path)  # the next run
                continue
            group.append((entry, local_path, items))
            size += len(items)
        if not group:
            return
        progresses = [self.progress.setdefault(entry.id, JudgeProgress()) for entry, _, _ in group]
        pending = False
        try:
            settled = self.judge.judge_groups([items for _, _, items in group], progresses)
        except BatchPending as exc:  # still running, or the service unreachable: the run's state is on disk
            log.warning("batch judging of %d submissions paused: %s; polling again later", len(group), exc)
            settled, pending = [None] * len(group), True
        except BatchError as exc:  # refused: a restart tries again
            log.warning("batch judging of %d submissions stopped: %s", len(group), exc)
            settled = [None] * len(group)
        except Exception:  # the judge failing must leave the retrieval metrics standing
            log.exception("batch judging of %d submissions failed", len(group))
            settled = [None] * len(group)
        for (entry, local_path, _), judge in zip(group, settled, strict=True):
            if judge is not None:
                try:  # every verdict comes from the run: nothing is sent here
                    scored = self.rescorer.score_file(local_path, judge=judge)
                    if scored.summary.status == "scored":
                        entry.summary, entry.key = scored.summary, scored.key
                except Exception:
                    log.exception("scoring %s with its verdicts failed", entry.path)
            entry.judging = pending
            self.progress.pop(entry.id, None)
        if pending and not self.stopping:  # queued again after a poll interval: the same run is resumed then
            again = threading.Timer(self.judge.poll_seconds, lambda: [self._queue.put(e.path) for e, _, _ in group])
            again.daemon = True
            again.start()
        self._changed()

    def _items(self, local_path: Path) -> list | None:
        """The answers the judge would be asked about for this file (Track.judge_items), None when it is not valid."""
        try:
            data = read_file(local_path, self.rescorer.max_bytes)
        except (SubmissionError, OSError):
            return None
        checked = check(data, local_path.name, self.rescorer.gold_sources, self.rescorer.max_bytes)
        if not checked.ok or checked.track is None:
            return None
        return checked.track.judge_items(checked.parsed, checked.gold)

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


def _ukeys(items: list):
    from .judge.batch import ukey

    return (ukey(it) for it in items)
