"""The board service: the one object the UI talks to.

Data flows one way: the store's snapshot -> the rescoring pipeline (cached by
content hash) -> entries -> tables, comparisons and details. Judging runs in
the background (judge_queue.py), RESULTS_REPO is synced by results_sync.py,
pull requests are reviewed by pr_review.py under the rules of admission.py;
the UI reads whatever is ready and shows pending / judging states for the rest.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pandas as pd

from . import pr_review, ranking, results_dataset
from .admission import Admission
from .compare import compare
from .gold import demo_tracks, gold_labels
from .judge_queue import JudgeQueue
from .limits import InvalidLedger
from .problems import SubmissionError
from .ranking import Entry
from .results_sync import ResultsSync
from .scoring import NO_JUDGE, Rescorer, check, content_hash, gc_paused
from .settings import Settings
from .store import Refresher, StoreError, StoreSettings, SubmitStatus, open_store, submit_checked
from .submission import parse_envelope, read_file, with_system
from .tracks import TRACKS, beir_hub

log = logging.getLogger(__name__)
_STAMP = re.compile(r"(\d{8}T\d{6}Z)")
# Validations running at once. Validating a file at the size cap takes a core and hundreds of MB for
# seconds: one at a time keeps the page answering and the memory bounded, whatever the visitors upload.
VALIDATIONS_AT_ONCE = 1
# Submit outcomes that cost a validation and stored nothing: they count against INVALID_SUBMISSIONS_PER_DAY.
_REJECTED = ("invalid", "duplicate")


class BeingRescored(LookupError):
    """A comparison asked for systems whose per-unit scores are being rescored (queued): try again shortly."""

    def __init__(self, names: list[str]):
        super().__init__(f"the per-unit scores of {' and '.join(names)} are being rescored; try again in a moment")
        self.names = names


class Board:
    def __init__(self, settings: Settings, store_settings: StoreSettings | None = None, judge=None):
        self.settings = settings
        self.store_settings = store_settings or settings.store  # a test's own store settings win
        beir_hub.use(settings.hub_access(self.store_settings))  # before any gold is loaded
        # the demo submissions only on tracks scored against the demo gold they were made for
        self.store = open_store(self.store_settings, demo_tracks=demo_tracks(self.settings.gold))
        self.rescorer = Rescorer(self.settings.results_dir, self.settings.gold)
        self.judge_error: str | None = None
        self.judge = judge if judge is not None else self._make_judge()
        self._lock = threading.RLock()
        self._entries: dict[str, Entry] = {}
        self._pending: dict[str, Entry] = {}  # files of open pull requests, valid and scored: "pending review"
        self._records: OrderedDict[tuple[str, str], dict] = OrderedDict()  # parsed files, most recent last
        self.version = 0  # bumped on every change, so the UI can tell when to re-render
        self.judge_queue = JudgeQueue(self.judge, self.rescorer, self._judge_target, self._judged)
        self.judge_progress = self.judge_queue.progress  # what the status line shows
        # With a background start, pull requests are reviewed in their own thread (set: a pull asked for a review).
        self._review_thread: threading.Thread | None = None
        self._review_wanted = threading.Event()
        self._stopping = False
        self.refresher = Refresher(
            self.store, self.store_settings.refresh_seconds, on_snapshot=self._on_pull, after_pull=self._review_pull_requests
        )
        self.invalid_ledger = InvalidLedger(
            self.store_settings.invalid_ledger_path, self.store_settings.invalid_submissions_per_day
        )
        self._validations = threading.BoundedSemaphore(VALIDATIONS_AT_ONCE)
        self.results_sync = ResultsSync(
            self.store,
            self.settings.results_dir,
            self.rescorer.cache,
            enabled=bool(self.store_settings.results_repo),
            interval=self.store_settings.refresh_seconds,
            deferring=self.judge_queue.alive,
            extra=lambda remote: results_dataset.files(self, remote),
        )

    def _make_judge(self):
        if self.settings.judge == "none":
            return None
        from .judge import JudgeConfigError, make_judge

        try:
            return make_judge(self.settings.judge, **self.settings.judge_kwargs())
        except JudgeConfigError as exc:  # a misconfigured judge must not keep the board down: E2E shows "not judged"
            log.warning("no judge: %s", exc)
            self.judge_error = str(exc)
            return None

    # ---- lifecycle ---------------------------------------------------------------------
    def start(self, background: bool = True) -> Board:
        """Serve what the last run left on disk at once, then the timer and the judge.

        The network never holds up the start: with `background`, the first pull from a Hub
        (and the results pull and push it brings) runs in the refresher's thread, each request
        bounded by HUB_TIMEOUT_SECONDS, and reaches open pages through their timer. Without
        `background` (CLI, tests, benchmarks) the first pull happens here.
        """
        # Loading allocates a few long-lived objects per submission (10,000s of them): the cyclic collector would
        # walk every live object again and again meanwhile (a third of the start at 10,000 submissions).
        with gc_paused():
            cached = self.store.cached_snapshot()
            if cached is not None and self.refresher.seed(cached, notify=False):
                self._apply(cached, push=False)  # no network here: results come from the local cache
            if self.store.pull_requests is not None:  # pending pull requests as last reviewed, also without network
                self._apply_pending(self.store.pull_requests.pending())
            if not background or not self.store.remote:  # a local folder has no network to wait for
                self.refresher.refresh_now()
        if background:
            self.refresher.start(pull_first=self.store.remote)
            self.judge_queue.start()
            if self.store.pull_requests is not None:
                self._review_thread = threading.Thread(target=self._review_worker, name="pull-requests", daemon=True)
                self._review_thread.start()
        return self

    def stop(self) -> None:
        self.refresher.stop()
        self.results_sync.flush()
        self.judge_queue.stop()
        self._stopping = True
        self._review_wanted.set()
        if self._review_thread:
            self._review_thread.join(5)

    # ---- applying a snapshot -------------------------------------------------------------
    def _on_pull(self, snap) -> None:
        """A pull brought new data: the Hub answers, so fetch the judge's verdict records first (scoring answers from them)."""
        if not self.results_sync.pulled:
            self.results_sync.pull(snap, self.judge)
        self._apply(snap)

    # ---- pull-request submissions (store/hub_prs.py finds them, pr_review.py reviews them) ----------
    def _review_pull_requests(self, snap) -> None:
        """After every pull: review pull requests with a new head, then show the valid open ones as pending review.

        In the app this only wakes the review thread: validating a pull request's files never holds up the
        pull, nor the refresh a Submit-tab upload waits for.
        """
        if self.store.pull_requests is None:
            return
        if self._review_thread is not None:
            self._review_wanted.set()
            return
        self._review_now()

    def _review_worker(self) -> None:
        while True:
            self._review_wanted.wait()
            self._review_wanted.clear()
            if self._stopping:
                return
            try:
                self._review_now()
            except Exception:  # a bug must not end the thread: the next pull asks again
                log.exception("reviewing pull requests failed")

    def _review_now(self) -> None:
        reviewer = self.store.pull_requests
        tools = pr_review.ReviewTools(
            validate=self._validate,
            admission=lambda track, num: self.admission(track, without_pull_request=num),
            ledger=self.invalid_ledger,
            cache=self.rescorer.cache,
            max_bytes=self.rescorer.max_bytes,
            board_url=self.settings.board_url,
        )
        try:
            reviewer.review(lambda pr, files: pr_review.review_files(tools, pr, files), self.rescorer.max_bytes)
        except StoreError as exc:  # the main board stands; pull requests wait for the next refresh
            log.warning("pull requests not reviewed: %s", exc)
        self._apply_pending(reviewer.pending())

    def _apply_pending(self, pending) -> None:
        fresh: dict[str, Entry] = {}
        for pr, files in pending:
            for f in files:
                key = f"{pr.num}:{f.path}"
                old = self._pending.get(key)
                if old is not None and old.sha256 == f.sha256:
                    fresh[key] = old
                    continue
                entry = Entry(
                    id=f.sha256[:12],
                    path=f.path,
                    user=pr.author,
                    submitted_at=pr.created_at,
                    metadata=f.metadata,
                    sha256=f.sha256,
                    pull_request=pr.num,
                )
                scored = self.rescorer.cached(f.sha256) or self.rescorer.score_file(Path(f.local_path))
                entry.summary, entry.key = scored.summary, scored.key
                entry.status = scored.summary.status
                fresh[key] = entry
        with self._lock:
            changed = fresh.keys() != self._pending.keys() or any(fresh[k] is not self._pending[k] for k in fresh)
            self._pending = fresh
        if changed:
            self._bump()

    def _apply(self, snap, push: bool = True) -> None:
        changed = False
        seen = set()
        for f in snap.files:
            seen.add(f.path)
            flag = snap.flags.get(f.path)
            with self._lock:
                old = self._entries.get(f.path)
            if old is not None and old.summary.sha256 == f.sha256:
                if old.flag != flag:
                    old.flag = flag
                    changed = True
                continue
            entry = Entry(
                id=f.sha256[:12],
                path=f.path,
                user=f.user,
                flag=flag,
                submitted_at=_submitted(f),
                metadata=f.metadata,
                status="pending",
                sha256=f.sha256,
            )
            with self._lock:
                self._entries[f.path] = entry
            self._score_isolated(entry, f.local, f.sha256)  # a str from the local store: a Path only if scored
            changed = True
        with self._lock:
            for path in set(self._entries) - seen:
                del self._entries[path]
                changed = True
        if changed:
            self._mark_duplicates()
            self._bump()
            self.rescorer.cache.write_tables()
            if push:
                self.results_sync.push()

    def _score_isolated(self, entry: Entry, local_path: str | Path, sha256: str) -> None:
        """Score one file; whatever goes wrong stays on this entry, so one bad file never hides the others."""
        try:
            self._score(entry, local_path, sha256)
        except Exception:
            log.exception("scoring %s failed (log ref %s)", entry.path, entry.id)
            entry.summary = Rescorer._invalid(sha256, [f"file: internal error while scoring (log ref {entry.id})"])
            entry.key, entry.status, entry.judging = "", "invalid", False

    def _mark_duplicates(self) -> None:
        with self._lock:
            ranking.mark_duplicates(list(self._entries.values()), self._track_of)

    @staticmethod
    def _track_of(e: Entry) -> str | None:
        return e.summary.track or e.metadata.get("track") or (e.path.split("/")[1:2] or [None])[0]

    def _score(self, entry: Entry, local_path: str | Path, sha256: str) -> None:
        scored, judged = self.rescorer.cached_judged_or_not(sha256, self.judge)
        if scored is None:  # validated and scored once; judged at once from verdicts recorded (a pull brought them)
            scored = self.rescorer.score_file(local_path, judge=self.judge, live=False)
            judged = self.judge is not None and scored.summary.judge != NO_JUDGE
        entry.summary, entry.key = scored.summary, scored.key
        entry.status = scored.summary.status
        if self.judge is not None and not judged and entry.status == "scored" and _judgeable(entry, self.rescorer.cache):
            entry.judging = True
            self.judge_queue.put(entry.path)

    def _judge_target(self, path: str) -> tuple[Entry, Path] | None:
        with self._lock:
            entry = self._entries.get(path)
        snap = self.refresher.snapshot
        file = snap.by_path().get(path) if snap else None
        return None if entry is None or file is None else (entry, file.local_path)

    def _judged(self) -> None:
        """A submission judged (or its batch run paused): re-rendered, its results table rewritten, pushed."""
        self._bump()
        self.rescorer.cache.write_tables()
        self.results_sync.push()

    def _bump(self) -> None:
        with self._lock:
            self.version += 1

    # ---- reading -------------------------------------------------------------------------
    def entries(self, track: str | None = None, parts: tuple[str, ...] = ("breakdowns",)) -> list[Entry]:
        """The board's entries (a track's), their summaries whole but for the PARTS not in `parts` (results.py:
        read from the results tables when first asked for)."""
        for name in (track,) if track is not None else (*TRACKS, None):
            self.rescorer.cache.complete(name, parts)
        items = self._listing()
        # one rule for "which track is this entry on", shared with duplicate marking
        return items if track is None else [e for e in items if self._track_of(e) == track]

    def _listing(self) -> list[Entry]:
        with self._lock:
            items = list(self._entries.values())
            merged = {e.sha256 for e in items}  # a merged pull request's file is on the board itself
            items += [e for e in self._pending.values() if e.sha256 not in merged]
        return items

    def entry(self, entry_id: str) -> Entry | None:
        """One entry, its summary whole (what its detail and a comparison read)."""
        found = next((e for e in self._listing() if e.id == entry_id), None)
        if found is not None:
            self.rescorer.cache.complete(self._track_of(found))
        return found

    def table(
        self, track: str, include_hidden: bool = False, rank_by: str | None = None, slice_: tuple[str, str] | None = None
    ) -> pd.DataFrame:
        return ranking.table(TRACKS[track], self.entries(track), include_hidden=include_hidden, rank_by=rank_by, slice_=slice_)

    def units(self, entry: Entry) -> dict[str, np.ndarray]:
        """The per-unit scores of a scored system. A page view never scores: arrays found unsound (a truncated
        .npz, say) are queued for rescoring in the background and {} returned meanwhile (`rescoring` says so)."""
        units = self.rescorer.units(entry.key, entry.summary)
        if units is not None:
            return units
        self.judge_queue.heal(entry.path)
        return {}

    def rescoring(self, entry: Entry) -> bool:
        """Whether this system's per-unit scores are being rescored (queued by a view that found them unsound)."""
        return self.judge_queue.healing(entry.path)

    def gold(self, track: str):
        return TRACKS[track].load_gold(self.settings.gold.get(track))

    def unit_info(self, track: str) -> dict[str, dict]:
        return _unit_info(TRACKS[track], self.gold(track))

    def records(self, entry: Entry) -> dict[str, dict]:
        """The raw prediction records of a submission, by unit id (for detail and compare).

        The last few parsed files are kept: compare and detail views ask for the same two again and again.
        """
        snap = self.refresher.snapshot
        file = snap.by_path().get(entry.path) if snap else None
        if file is None or entry.status != "scored":
            return {}
        key = (file.path, file.sha256)
        with self._lock:
            if key in self._records:
                self._records.move_to_end(key)
                return self._records[key]
        env = parse_envelope(read_file(file.local_path), file.local_path.name)
        track = TRACKS[entry.summary.track]
        records = {u: r for r in env.records if isinstance(r, dict) and (u := track.unit_of(r)) is not None}
        with self._lock:
            self._records[key] = records
            while len(self._records) > 4:
                self._records.popitem(last=False)
        return records

    def compare(self, a_id: str, b_id: str, top: int = 20) -> dict:
        a, b = self.entry(a_id), self.entry(b_id)
        if a is None or b is None:
            raise KeyError("unknown system")
        if a.summary.track != b.summary.track:
            raise ValueError("the two systems are on different tracks")
        track = TRACKS[a.summary.track]
        units_a, units_b = self.units(a), self.units(b)
        waiting = [e.name for e in (a, b) if self.rescoring(e)]
        if waiting:
            raise BeingRescored(waiting)
        result = compare(track, self.gold(track.name), units_a, units_b, self.unit_info(track.name), top)
        result["a"], result["b"] = a, b
        rec_a, rec_b = self.records(a), self.records(b)
        for row in result["top_units"]:  # what each system actually said, side by side
            row["a_says"] = track.record_summary(rec_a[row["unit"]]) if row["unit"] in rec_a else ""
            row["b_says"] = track.record_summary(rec_b[row["unit"]]) if row["unit"] in rec_b else ""
        return result

    def status(self) -> dict:
        judge = getattr(self.judge, "name", "none")
        if self.judge_error:
            judge += f" ({self.settings.judge} judge not configured: {self.judge_error})"
        return {
            "data_as_of": self.refresher.data_as_of(),
            "banner": self.refresher.banner(),
            "loading": self.refresher.loading,
            "source": self.store.source,
            "judge": judge,
            "notice": self.store.notice(),
            "gold": gold_labels(self.settings.gold),  # per track: "demo", a local path, Hub datasets at commits
        }

    # ---- writing -------------------------------------------------------------------------
    def submit(self, *, user: str, track: str, filename: str, data: bytes, metadata: dict) -> SubmitStatus:
        if self.invalid_ledger.exhausted(track, user):  # refused before validating: the allowance bounds the work
            return SubmitStatus("rate_limited", self.invalid_ledger.refusal(track, user))
        validated: list = []  # the one validation of this file: kept, scored, so the pull that brings it reuses it

        def validate(data: bytes, name: str):
            validated.append(self._validate(data, name))
            return validated[-1]

        status = submit_checked(
            self.store,
            validate,
            user=user,
            filename=filename,
            data=data,
            metadata=metadata,
            track=track,
            admit=lambda report: self._admit(report, user),
        )
        if status.state in _REJECTED:
            self.invalid_ledger.add(track, user)
        if status.ok:
            self._keep(validated[-1], data)
            self.refresher.refresh_now()  # the new file is on the board when this returns
        return status

    def _keep(self, checked, data: bytes) -> None:
        """The stored upload's result, scored from its validation: the pull finds it by content hash."""
        sha = content_hash(data)
        try:
            self.rescorer.keep(checked, sha)
            if self.judge is not None:  # judged next, by the judge thread: from this same validation
                self.rescorer.hand_over(sha, checked)
        except Exception:  # the pull then scores the file the ordinary way, which says what went wrong
            log.exception("scoring the upload %s failed", sha[:12])

    def submit_upload(self, *, user: str, track: str, path: Path, overrides: dict) -> SubmitStatus:
        """An uploaded file: at most the size cap read, the form's fields merged into its header, then `submit`."""
        if self.invalid_ledger.exhausted(track, user):
            return SubmitStatus("rate_limited", self.invalid_ledger.refusal(track, user))
        try:
            data = read_file(path, self.rescorer.max_bytes)  # a 300 MB upload is refused after cap + 1 bytes
        except SubmissionError as exc:
            return self._refuse_unreadable(track, user, str(exc.problem))
        except OSError:
            return self._refuse_unreadable(track, user, "file: the upload could not be read")
        if overrides:
            try:
                with self._validations:  # decompresses the file: counted as a validation
                    data = with_system(data, path.name, overrides, self.rescorer.max_bytes)
            except ValueError:
                pass  # a header that cannot be read: the validator below lists every problem of the file as sent
        return self.submit(user=user, track=track, filename=path.name, data=data, metadata={"form": overrides})

    def _refuse_unreadable(self, track: str, user: str, problem: str) -> SubmitStatus:
        self.invalid_ledger.add(track, user)
        return SubmitStatus("invalid", "The file is invalid (1 problem(s)); nothing was uploaded.", [problem])

    def _validate(self, data: bytes, name: str):
        with self._validations:
            return check(data, name, self.settings.gold)

    def admission(self, track: str, without_pull_request: int | None = None) -> Admission:
        """The rules a new file on `track` meets, over the track's entries (pending pull requests included; those of
        the pull request under review left out, as its files are being weighed)."""
        entries = [e for e in self.entries(track) if without_pull_request is None or e.pull_request != without_pull_request]
        return Admission(track, entries, self.store_settings.submissions_per_day)

    def _admit(self, report, user: str) -> SubmitStatus | None:
        """Refuse a valid file that repeats predictions on the board, or whose name is another submitter's."""
        track = report.track_name
        rules = self.admission(track)
        earliest = rules.duplicate_of(report.fingerprint)
        if earliest is not None:
            return SubmitStatus(
                "duplicate",
                f"These predictions were already submitted to the {track} track as submission "
                f"{earliest.id} ({earliest.name}); the same predictions are ranked once, so nothing was "
                "uploaded.",
                existing=earliest.id,
            )
        name = (report.system or {}).get("name")
        holder = rules.name_holder(user, name)
        if holder is not None:
            problem = (
                f"system.name: {str(name)!r} is already used on the {track} track by {holder.user or 'another submitter'} "
                f"(submission {holder.id}); choose another name"
            )
            return SubmitStatus("invalid", "The system name is taken; nothing was uploaded.", [problem])
        return None

    def refresh(self):
        return self.refresher.refresh_now()


_UNIT_INFO: dict[tuple[str, str], dict] = {}


def _unit_info(track, gold) -> dict[str, dict]:
    key = (track.name, gold.sha256)
    if key not in _UNIT_INFO:
        _UNIT_INFO[key] = track.unit_info(gold)
    return _UNIT_INFO[key]


def _judgeable(entry: Entry, cache) -> bool:
    track = TRACKS.get(entry.summary.track or "")
    if track is None or not track.judged_metrics:
        return False
    cache.complete(track.name, ())  # what the track asks of a summary to judge it (its head)
    return track.wants_judge(entry.summary)


def _submitted(f) -> str | None:
    when = f.metadata.get("submitted_at")
    if when:
        return str(when)
    # the app names a file "<stamp>-<hash>.<ext>": its name first (most paths hold other digits before it)
    m = _STAMP.match(f.path, f.path.rfind("/") + 1) or _STAMP.search(f.path)
    if m:
        s = m.group(1)
        return f"{s[0:4]}-{s[4:6]}-{s[6:8]}T{s[9:11]}:{s[11:13]}:{s[13:15]}+00:00"
    return None
