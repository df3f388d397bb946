"""The rescoring pipeline: raw submission bytes -> validated -> scored -> cached result.

One bad file yields an "invalid" result listing its errors; it never raises
into the caller, so it cannot stop the others. Results are cached by the
content hash of the submission, the gold's hash, the metric version and the
judge, so an unchanged submission is never rescored.
"""

from __future__ import annotations

import collections
import functools
import gc
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
import zipfile
import zlib
from collections.abc import Callable, Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from . import protocols, results_index
from .fastpath import fast_parse
from .judge.base import verdicts_of
from .judge.verdict import Verdicts
from .problems import Problem, Problems, SubmissionError
from .submission import DEFAULT_MAX_BYTES, FALLBACK_LIMITS, Limits, parse_raw, read_bytes, read_file
from .tracks import TRACKS, Track

# Bump whenever a metric definition, a validation rule or the result layout
# changes: every cached result is then recomputed.
METRIC_VERSION = "4"
_VERSION_TAG = f"v{METRIC_VERSION}"  # as it stands in a results-cache key
NO_JUDGE = "none"

log = logging.getLogger(__name__)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Checked:
    """A validated submission: the report, and what scoring needs when it is valid."""

    ok: bool
    track_name: str | None  # the header's track, when it names a known one
    system: dict
    errors: list[str]
    warnings: list[str]
    records: int = 0
    parsed: Any = None
    gold: Any = None
    # sha256 of the parsed predictions in canonical form (Track.fingerprint): equal for duplicates
    fingerprint: str | None = None
    # every problem found; `errors` lists the first MAX_REPORTED and a "... and N more" line
    error_count: int = 0

    @property
    def track(self) -> Track | None:
        return TRACKS.get(self.track_name) if self.track_name else None


@contextmanager
def gc_paused():
    """Pause the cyclic garbage collector for one file's work.

    Decoding and validating a submission allocates hundreds of thousands of
    acyclic objects; each allocation burst triggers collections that walk every
    live object (gold included) and cost as much as the work itself. Reference
    counting frees them all the same; the pause ends with the file.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def check(data: bytes, filename: str, gold_sources: dict[str, Any] | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> Checked:
    with gc_paused():
        return _check(data, filename, gold_sources, max_bytes)


def _check(data: bytes, filename: str, gold_sources: dict[str, Any] | None, max_bytes: int) -> Checked:
    """Validate a submission's bytes against its track's gold; never raises for bad input.

    A clean file goes through the typed fast path (fastpath.py); any other is
    read by the generic path, which reports every problem precisely. Both read
    within the limits of the header's track (submission.Limits), so no file
    decodes into more objects than its track's gold justifies.
    """
    problems = Problems()
    golds: dict[str, Any] = {}

    def gold_of(t: Track):  # the track's gold asked for once per file, whichever path reads it
        if t.name not in golds:
            golds[t.name] = t.load_gold((gold_sources or {}).get(t.name))
        return golds[t.name]

    def limits_of(track) -> Limits:
        t = TRACKS.get(track) if isinstance(track, str) else None
        return t.limits(gold_of(t)) if t else FALLBACK_LIMITS

    try:
        raw = read_bytes(data, filename, max_bytes)
        fast = fast_parse(raw, filename, gold_sources, gold_of)
        if fast is not None:
            return Checked(
                True,
                fast.track.name,
                fast.system,
                [],
                [],
                fast.records,
                fast.parsed,
                fast.gold,
                fast.track.fingerprint(fast.parsed),
            )
        env = parse_raw(raw, filename, limits_of, problems)
    except SubmissionError as exc:
        problems.add(exc.problem)
        return Checked(False, None, {}, problems.lines(), [], error_count=problems.error_count)
    track = env.track
    if not isinstance(track, str) or track not in TRACKS:
        problems.error(env.header_where, f"unknown track {track!r}: expected one of {', '.join(TRACKS)}"[:300], field="track")
        return Checked(False, None, {}, problems.lines(), [], error_count=problems.error_count)
    t = TRACKS[track]
    gold = gold_of(t)
    system = t.validate_system(env.system, env.header_where, problems)
    parsed = t.validate(env, gold, problems)
    if not problems.ok:
        return Checked(
            False,
            track,
            system,
            problems.lines(),
            problems.lines("warnings"),
            len(env.records),
            None,
            gold,
            error_count=problems.error_count,
        )
    return Checked(True, track, system, [], problems.lines("warnings"), len(env.records), parsed, gold, t.fingerprint(parsed))


@dataclass
class Result:
    """A scored (or invalid) submission: `summary` is JSON, `units` per-unit arrays, `record` the verdicts
    an LLM judge made for it (judge/record.py: what RESULTS_REPO shares)."""

    summary: dict
    units: dict[str, np.ndarray] = field(default_factory=dict)
    record: Any = None


def score_checked(checked: Checked, sha256: str, verdicts: Verdicts | None = None) -> Result:
    """A validated submission's result, judged metrics from `verdicts` (data: whoever judged, live, in a batch
    run or in a verdict record, is the caller's business); none given, or none for this file: not judged."""
    base = {
        "sha256": sha256,
        "track": checked.track_name,
        "system": _plain_system(checked.system),
        "errors": checked.errors,
        "error_count": checked.error_count,
        "warnings": checked.warnings,
        "records": checked.records,
        "metric_version": METRIC_VERSION,
        "scored_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "judge": NO_JUDGE,
    }
    if not checked.ok:
        return Result({**base, "status": "invalid"})
    t = checked.track
    judged = verdicts if verdicts is not None and verdicts.by_qid else None  # a file with no answers is not judged
    if judged is not None:
        base["judge"] = judged.judge
    with gc_paused():
        scores = t.score(checked.parsed, checked.gold, judged.by_qid if judged is not None else None)
    summary = {
        **base,
        "status": "scored",
        "gold_sha256": checked.gold.sha256,
        "fingerprint": checked.fingerprint,
        "n": scores.n,
        "missing": scores.missing,
        "overall": scores.overall,
        "ci": scores.ci,
        "breakdowns": scores.breakdowns,
        "extra": scores.extra,
    }
    if t.deviations:
        # The official script's protocol beside the board's, with the board's judged values (judged metrics have
        # one protocol), and each deviation's stepwise effect: cached together, so neither the board's "Scores"
        # choice nor the detail view ever rescores a file.
        with gc_paused():
            official, effects = protocols.official_report(t, checked.parsed, checked.gold, summary)
        summary["official"] = protocol_part(official)
        summary["deviations"] = effects
    record = None
    if judged is not None and judged.ledger is not None:
        summary["judge_ledger"] = judged.ledger
    if judged is not None and judged.shared:
        from .judge.record import Record  # lazily: only an LLM judge's results have one

        kept = tuple(v for v in judged.by_qid.values() if v.failure is None)
        if kept:
            record = Record(sha256, judged.judge, judged.prompt_version, summary.get("judge_ledger") or {}, kept)
    return Result(summary, scores.units, record)


def judge_checked(judge, checked: Checked, progress: Callable | None = None) -> Verdicts | None:
    """A valid submission's verdicts from `judge` asked now; None without a judge or answers to judge."""
    if judge is None or not checked.ok or checked.track is None:
        return None
    items = checked.track.judge_items(checked.parsed, checked.gold)
    return verdicts_of(judge, items, progress) if items else None


OFFICIAL_KEYS = ("overall", "ci", "breakdowns", "n", "missing")  # summary["official"]: the board's keys, scored officially


def protocol_part(scores) -> dict:
    """The summary's "official" part: what the table, charts and detail view read of the official protocol
    (the per-unit arrays stay the board's: compare and detail read those)."""
    part = {"overall": scores.overall, "ci": scores.ci, "breakdowns": scores.breakdowns, "n": scores.n, "missing": scores.missing}
    if scores.extra.get("notes"):  # what the official protocol left out or could not read in this file
        part["notes"] = scores.extra["notes"]
    return part


def _plain_system(system) -> dict:
    return system if isinstance(system, dict) else {}


def score_bytes(
    data: bytes,
    filename: str,
    gold_sources: dict | None = None,
    judge=None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    progress: Callable | None = None,
) -> Result:
    checked = check(data, filename, gold_sources, max_bytes)
    return score_checked(checked, content_hash(data), judge_checked(judge, checked, progress))


class ResultsCache:
    """A folder of `<key>.json` summaries and `<key>.npz` per-unit scores.

    The key names the submission hash, track, gold hash, metric version and
    judge, so the folder can be published as is (the Hub store syncs it).

    Every entry is checked when read: an unreadable, truncated or mismatched
    file (a summary whose content does not produce its own key, say) is logged
    once, removed and reported as missing, so the caller rescores instead of
    serving it or failing.
    """

    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._index: dict[str, list[str]] | None = None
        self._listed = False  # the folder listed (the marked start reads the marked index files only)
        self._read_marked: set[str] = set()  # index files served from their marks without a listing
        self._reported: set[str] = set()  # bad files already logged: once per process, not per request
        # The results index (results_index.py): key -> row of every summary known sound, by index file;
        # summaries served from it are not read from their files. Index files to rewrite in `_dirty`.
        self._rows: dict[str, dict[str, results_index.IndexRow]] = {}
        self._summaries: dict[str, dict] = {}
        self._dirty: set[str] = set()
        self._index_lock = threading.RLock()  # the refresher and the judge threads both store results
        self._written: set[str] = set()  # files written since `take_written` (what a push must send)

    @staticmethod
    def key(sha256: str, track: str | None, gold_sha: str | None, judge: str) -> str:
        return f"{sha256}.{track or '-'}.{(gold_sha or '-')[:12]}.{_VERSION_TAG}.{_safe(judge)}"

    def _keys_for(self, sha256: str) -> list[str]:
        if self._index is None:  # the marked index files, else one directory listing; then in memory
            self._index = {}
            if not self._load_marked():
                self._list()
        if sha256 not in self._index and not self._listed:
            # Not in a marked index (a submission never scored, or a summary its index lacks): list the folder
            # once, as a start without marks does, and read the index files not read yet.
            self._list()
        return self._index.get(sha256, [])

    def _list(self) -> None:
        # The time, then the folder's signature, then its listing: a change after the stat shows in the next one.
        now_ns = time.time_ns()
        folder = os.stat(self.root)
        names = os.listdir(self.root)  # names only: 10,000s of them at scale, no DirEntry object each
        listed = [n[:-5] for n in names if n.endswith(".json")]
        units_files = {n[:-4] for n in names if n.endswith(".npz")}
        known = {k for keys in self._index.values() for k in keys}
        for key in listed:
            if key not in known:
                self._index.setdefault(key.partition(".")[0], []).append(key)
        self._listed = True
        self._load_index(listed, units_files, folder, now_ns)

    def _load_marked(self) -> bool:
        """Serve the marked index files without listing the folder, when it is unchanged since they were marked.

        A mark's folder signature was taken from a listing (its counts of summaries and per-unit files) once the
        folder had stood unchanged for SETTLE_NS; any file added, removed or renamed over since changes the folder's
        mtime and ctime (results_index.py), so while its inode, mtime and ctime are the marked ones, the listing
        is the marked one too. Every marked file must still match its own signature, else nothing is served from
        here (the listing start checks what changed). A key none of them holds makes `_keys_for` list the folder.
        """
        marks = results_index.read_marks(self.root)
        folders = {mark[0] for mark in marks.values()}
        if len(folders) != 1:  # none, or marks of different listings: not one state of the folder
            return False
        folder = os.stat(self.root)
        if tuple(next(iter(folders))[:3]) != (folder.st_ino, folder.st_mtime_ns, folder.st_ctime_ns):
            return False
        loaded = {}
        for name, (_, file_sig) in sorted(marks.items()):
            index = results_index.read_marked(self.root, name, METRIC_VERSION, file_sig, self._load_file)
            if index is None:
                return False
            loaded[name] = index
        with self._index_lock:
            for name, index in loaded.items():
                rows = self._rows.setdefault(name, {})
                for row in index.rows:
                    if row.key not in rows:  # stored by this process before the index was read: newer
                        rows[row.key] = row
                        self._summaries[row.key] = results_index.summary_of(row)
                        self._index.setdefault(row.key.partition(".")[0], []).append(row.key)
        self._read_marked = set(loaded)
        return True

    def _load_index(self, keys: list[str], units_files: set[str], folder: os.stat_result, now_ns: int) -> None:
        """Rows of the index files that still stand for their summaries (see results_index.py); the rest dropped.

        An index file whose mark holds (nothing in the folder changed since this disk checked its rows) is served
        without the per-row checks; one whose rows all pass them is marked for the next start.
        """
        listed = set(keys)
        names = collections.Counter(map(results_index.index_name, listed))
        signature = results_index.folder_signature(folder, len(listed), len(units_files))
        folder_settled = results_index.settled(folder, now_ns)
        marks = results_index.read_marks(self.root)
        new_marks: dict[str, results_index.Mark] = {}
        for name, summaries in sorted(names.items()):
            if name in self._read_marked:  # read already (_load_marked): its mark stands while the folder is as marked
                if name in marks and marks[name][0] == signature:
                    new_marks[name] = marks[name]
                continue
            held = marks[name][1] if name in marks and marks[name][0] == signature else None
            index, st, problem = results_index.read(self.root, name, METRIC_VERSION, summaries, held, self._load_file)
            if problem is not None and f"{results_index.INDEX_DIR}/{name}.json" not in self._reported:
                self._reported.add(f"{results_index.INDEX_DIR}/{name}.json")
                log.warning("results cache: %s/%s.json %s; rebuilt from the summaries", results_index.INDEX_DIR, name, problem)
            mark = (signature, results_index.file_signature(st)) if st is not None else None
            marked = mark is not None and marks.get(name) == mark
            rows = self._rows.setdefault(name, {})
            for row in index.rows if index is not None else ():
                if row.key in rows:  # stored by this process before the index was read: newer
                    continue
                if marked:  # checked at an earlier start, and neither the folder nor this file changed since
                    summary = results_index.summary_of(row) if row.key in listed else None
                else:
                    summary = self._row_summary(row, st.st_mtime_ns, listed, units_files)
                if summary is not None:
                    rows[row.key] = row
                    self._summaries[row.key] = summary
            sound = index is not None and len(rows) == len(index.rows)
            if sound and folder_settled and results_index.settled(st, now_ns):
                new_marks[name] = mark
            if index is None or len(rows) != len(index.rows):
                self._dirty.add(name)
            if index is not None and len(rows) != len(index.rows):
                log.info(
                    "results index %s: %d of %d rows stale or unsound, read from their summaries",
                    name,
                    len(index.rows) - len(rows),
                    len(index.rows),
                )
        if new_marks != {name: marks[name] for name in names if name in marks}:
            try:
                results_index.write_marks(self.root, new_marks, _atomic_write)
            except OSError:  # a read-only disk: every row is checked again next start, nothing wrong
                pass

    def _row_summary(self, row, index_mtime_ns: int, listed: set[str], units_files: set[str]) -> dict | None:
        """The summary an index row stands for, when its file is there, unchanged since the index, and sound."""
        if row.key not in listed:
            return None
        try:
            st = os.stat(f"{self.root}/{row.key}.json")  # a str path: pathlib costs more than the stat
        except OSError:
            return None
        # Written after the index (same clock tick included): the file may differ from the row; read it instead.
        if st.st_size != row.size or st.st_mtime_ns >= index_mtime_ns:
            return None
        summary = results_index.summary_of(row)
        if summary_problem(row.key, summary) is not None:
            return None
        if expected_unit_keys(summary) and row.key not in units_files:
            return None
        return summary

    def _remember(self, key: str, size: int, summary: dict) -> None:
        name = results_index.index_name(key)
        row = results_index.as_row(key, size, summary)
        with self._index_lock:
            self._rows.setdefault(name, {})[key] = row
            self._summaries[key] = summary
            self._dirty.add(name)

    def _forget(self, key: str) -> None:
        name = results_index.index_name(key)
        with self._index_lock:
            if self._rows.get(name, {}).pop(key, None) is not None:
                self._dirty.add(name)
            self._summaries.pop(key, None)

    def write_index(self) -> list[str]:
        """Rewrite the index files whose rows changed since they were read or written; their names."""
        written = []
        with self._index_lock:
            for name in sorted(self._dirty):
                rows = list(self._rows.get(name, {}).values())
                results_index.write(self.root, name, METRIC_VERSION, rows, _atomic_write)
                written.append(f"{results_index.INDEX_DIR}/{name}.json")
            self._dirty.clear()
            self._written.update(written)
        return written

    def take_written(self) -> set[str]:
        """Files (relative to the folder) written since the last call: what RESULTS_REPO has not been sent."""
        with self._index_lock:
            written, self._written = self._written, set()
        return written

    def find(self, sha256: str, gold_shas: dict[str, str], judge: str) -> str | None:
        """A cached key valid for the current gold, metric version and judge."""
        found = self.find_first(sha256, gold_shas, (judge,))
        return found[0] if found else None

    def find_first(self, sha256: str, gold_shas: dict[str, str], judges: tuple[str, ...]) -> tuple[str, int] | None:
        """(key, i): the key `find(..., judges[i])` gives for the first i that has one (one pass over the hash's keys:
        the board asks for every submission, judged or not, at each start)."""
        wanted = _wanted(judges)
        best: tuple[str, int] | None = None
        for key in self._keys_for(sha256):
            _, track, gold, version, j = key.split(".")[:5]
            if version != _VERSION_TAG or j not in wanted:
                continue
            i = wanted.index(j)
            if (best is None or i < best[1]) and (track == "-" or gold == gold_shas.get(track, "")[:12]):
                best = (key, i)
                if i == 0:
                    break
        return best

    def get(self, sha256: str, gold_shas: dict[str, str], judge: str) -> tuple[str, dict] | None:
        """(key, summary) of a sound cached result; a bad one is discarded and the next candidate tried."""
        found = self.get_first(sha256, gold_shas, (judge,))
        return found[:2] if found else None

    def get_first(self, sha256: str, gold_shas: dict[str, str], judges: tuple[str, ...]) -> tuple[str, dict, int] | None:
        """(key, summary, i) of the sound cached result under judges[i], the first i that has one."""
        while (found := self.find_first(sha256, gold_shas, judges)) is not None:
            summary = self.load(found[0])
            if summary is not None:
                return found[0], summary, found[1]
        return None

    def load(self, key: str) -> dict | None:
        """The summary stored under `key`, or None (discarded, logged once) when it is unsound."""
        if key in self._summaries:  # from the index, checked when it was read
            return self._summaries[key]
        return self._load_file(key)

    def _load_file(self, key: str) -> dict | None:
        """`load` from the summary's own file (also what stands in for an index row whose file can no longer be
        read as it was marked: results_index._Rest)."""
        path = self.root / f"{key}.json"
        try:
            data = path.read_bytes()
            summary = json.loads(data)
        except FileNotFoundError:
            problem = "file missing"
        except (OSError, ValueError, RecursionError) as exc:
            problem = f"unreadable ({type(exc).__name__})"
        else:
            problem = summary_problem(key, summary) or self._units_file_problem(key, summary)
        if problem is None:
            self._remember(key, len(data), summary)
            return summary
        self.discard(key, problem)
        return None

    def _units_file_problem(self, key: str, summary: dict) -> str | None:
        wanted = expected_unit_keys(summary)
        if wanted and not (self.root / f"{key}.npz").is_file():
            return "its per-unit file is missing"
        return None

    def load_units(self, key: str) -> dict[str, np.ndarray]:
        """Per-unit arrays as stored; {} when the file is absent or unreadable (see `units` for checked ones)."""
        units, _ = self._read_units(key)
        return units if units is not None else {}

    def _read_units(self, key: str) -> tuple[dict[str, np.ndarray] | None, str | None]:
        path = self.root / f"{key}.npz"
        if not path.exists():
            return {}, None
        try:
            return read_npz(path), None
        except _NPZ_ERRORS as exc:
            return None, f"unreadable ({type(exc).__name__})"

    def units(self, key: str, summary: dict, unit_count: Callable[[str], int]) -> dict[str, np.ndarray] | None:
        """Per-unit arrays checked against the summary and the gold (`unit_count(metric)` units each).

        None (discarded, logged once) when they are unsound.
        """
        units, problem = self._read_units(key)
        problem = problem or units_problem(summary, units, unit_count)
        if problem is None:
            return units
        self.discard(key, f"has per-unit scores that are {problem}")
        return None

    def discard(self, key: str, problem: str) -> None:
        """Forget a bad entry: logged once, its files removed so it is rescored and rewritten."""
        self._report(f"{key}.json", problem)
        self._forget(key)
        for suffix in (".json", ".npz"):
            (self.root / f"{key}{suffix}").unlink(missing_ok=True)
        if self._index is not None:
            keys = self._index.get(key.split(".", 1)[0], [])
            if key in keys:
                keys.remove(key)

    @staticmethod
    def record_path(sha256: str, judge: str) -> str:
        """Where a judged submission's verdict record lives, relative to the folder."""
        from .judge import record

        return f"{record.RECORDS_DIR}/{record.file_name(sha256, judge)}"

    def record(self, sha256: str, judge: str):
        """The verdict record of this submission under this judge (judge/record.py), None when there is none or
        it is unsound (then logged once and removed: the judge makes it again)."""
        from .judge import record

        rel = self.record_path(sha256, judge)
        path = self.root / rel
        if not path.is_file():
            return None
        found = record.read(path)
        if isinstance(found, str):
            self._report(rel, found)
            path.unlink(missing_ok=True)
            return None
        return found

    def _report(self, name: str, problem: str) -> None:
        if name not in self._reported:
            self._reported.add(name)
            log.warning("results cache: %s %s; treated as missing and rescored", name, problem)

    def store(self, result: Result) -> str:
        s = result.summary
        key = self.key(s["sha256"], s.get("track"), s.get("gold_sha256"), s.get("judge", NO_JUDGE))
        if result.units:
            _atomic_write(self.root / f"{key}.npz", lambda fh: np.savez(fh, **{_escape(k): v for k, v in result.units.items()}))
        if result.record is not None:
            rel = self.record_path(result.record.sha256, result.record.judge)
            (self.root / rel).parent.mkdir(exist_ok=True)
            record_bytes = result.record.to_bytes()
            _atomic_write(self.root / rel, lambda fh: fh.write(record_bytes))
            with self._index_lock:
                self._written.add(rel)
        data = json.dumps(s, ensure_ascii=False).encode()
        _atomic_write(self.root / f"{key}.json", lambda fh: fh.write(data))
        with self._index_lock:
            self._written.update([f"{key}.json", f"{key}.npz"] if result.units else [f"{key}.json"])
        self._reported.discard(f"{key}.json")
        self._forget(key)
        self._remember(key, len(data), s)
        if self._index is not None and key not in (keys := self._index.setdefault(s["sha256"], [])):
            keys.append(key)
        return key


# What np.load raises on a truncated or otherwise broken .npz (zipfile and format errors).
_NPZ_ERRORS = (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error)


def read_npz(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as z:
        return {_unescape(k): z[k] for k in z.files}


def expected_unit_keys(summary: dict) -> set[str]:
    """The metrics a scored summary must have per-unit arrays for: those with a CI (the CI is computed from them)."""
    track = TRACKS.get(summary.get("track") or "")
    if summary.get("status") != "scored" or track is None:
        return set()
    overall = summary.get("overall") or {}
    return {m.key for m in track.metrics if m.has_ci and m.key in overall}


_STR_OR_NONE = (str, type(None))  # a tuple: `str | None` would build a union object on every call


def summary_problem(key: str, summary: Any) -> str | None:
    """Why a stored summary cannot be served under `key` (None when it can)."""
    if not isinstance(summary, dict):
        return "is not a JSON object"
    if summary.get("metric_version") != METRIC_VERSION:
        return f"has metric version {str(summary.get('metric_version'))[:20]!r}, not {METRIC_VERSION!r}"
    sha, track, gold, judge = (summary.get(k) for k in ("sha256", "track", "gold_sha256", "judge"))
    if not all(isinstance(v, _STR_OR_NONE) for v in (sha, track, gold, judge)) or not sha:
        return "lacks its identity (sha256, track, gold, judge)"
    if ResultsCache.key(sha, track, gold, judge or NO_JUDGE) != key:
        return "belongs to another key (its sha256, track, gold or judge differ from the file name)"
    status = summary.get("status")
    if status not in ("scored", "invalid"):
        return f"has status {str(status)[:20]!r}"
    if not isinstance(summary.get("system"), dict) or not isinstance(summary.get("errors"), list):
        return "lacks system or errors"
    if status == "scored" and not all(isinstance(summary.get(k), Mapping) for k in ("overall", "ci", "breakdowns")):
        return "lacks overall, ci or breakdowns"
    if status == "scored" and (t := TRACKS.get(track or "")) is not None and t.deviations:
        official = summary.get("official")  # both protocols are stored together (score_checked)
        if not isinstance(official, Mapping) or not all(isinstance(official.get(k), Mapping) for k in OFFICIAL_KEYS[:3]):
            return "lacks the official protocol's overall, ci or breakdowns"
    return None


def units_problem(summary: dict, units: dict[str, np.ndarray], unit_count: Callable[[str], int]) -> str | None:
    """Why per-unit arrays do not fit their summary and the gold (None when they do)."""
    wanted = expected_unit_keys(summary)
    if set(units) != wanted:
        return f"for {sorted(units)}, expected {sorted(wanted)}"
    for k, values in units.items():
        if values.ndim != 1 or values.dtype.kind != "f" or len(values) != unit_count(k):
            return f"not aligned with the gold units of {k!r}"
    return None


@functools.lru_cache(maxsize=64)  # a handful of judge names, asked for once per cached key at start-up
def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


@functools.lru_cache(maxsize=64)  # the judges a lookup prefers, in order: one or two names, each submission's lookup
def _wanted(judges: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(_safe(j) for j in judges)


def _escape(key: str) -> str:  # npz member names cannot hold "@" portably
    return key.replace("@", "_at_")


def _unescape(key: str) -> str:
    return key.replace("_at_", "@")


def _atomic_write(path: Path, write: Callable) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass
class Scored:
    """One submission file's outcome as the board needs it."""

    path: str
    key: str
    summary: dict
    cached: bool


# Validations handed from the unjudged score to the judge (`hand_over`), at most this many records in all: a
# submission validated on upload or pull is judged soon after by the judge thread, and validating it again would
# cost as much as the first time; the bound keeps a fresh board's thousands of queued files from staying in memory.
HANDOFF_RECORDS = 16_384


class Rescorer:
    """Scores many files, each independently, reusing cached results."""

    def __init__(self, cache_dir: Path, gold_sources: dict[str, Any] | None = None, max_bytes: int = DEFAULT_MAX_BYTES):
        self.cache = ResultsCache(cache_dir)
        self.gold_sources = gold_sources or {}
        self.max_bytes = max_bytes
        self._gold_shas: dict[str, str] | None = None
        self._unit_counts: dict[tuple[str, str, str], int] = {}
        self._handoff: collections.OrderedDict[str, Checked] = collections.OrderedDict()  # by content hash, oldest first
        self._handoff_records = 0
        self._handoff_lock = threading.Lock()  # the refresher, the Submit tab and the judge thread all use it

    def hand_over(self, sha256: str, checked: Checked) -> None:
        """Keep a valid submission's validation for the judge (judged metrics to come), the oldest dropped beyond
        HANDOFF_RECORDS; the judge takes it (`_validation`) instead of validating the file again."""
        if not checked.ok or checked.track is None or not checked.track.judged_metrics or checked.records > HANDOFF_RECORDS:
            return
        with self._handoff_lock:
            old = self._handoff.pop(sha256, None)
            self._handoff_records += checked.records - (old.records if old is not None else 0)
            self._handoff[sha256] = checked
            while self._handoff_records > HANDOFF_RECORDS:
                self._handoff_records -= self._handoff.popitem(last=False)[1].records

    def _validation(self, data: bytes, name: str, sha256: str) -> Checked:
        """The file's validation: the one handed over (its gold still the track's), else made now."""
        with self._handoff_lock:
            kept = self._handoff.pop(sha256, None)
            self._handoff_records -= kept.records if kept is not None else 0
        if kept is not None and kept.gold.sha256 == self.gold_shas.get(kept.track_name or ""):
            return kept
        return check(data, name, self.gold_sources, self.max_bytes)

    @property
    def gold_shas(self) -> dict[str, str]:
        if self._gold_shas is None:
            self._gold_shas = {name: self._gold_sha(t) for name, t in TRACKS.items()}
        return self._gold_shas

    def _gold_sha(self, track) -> str:
        """The gold's hash; "" when it cannot be read (no cached result matches it): then that track's files
        fail as they are scored, with its reason on the status line, and the other tracks stand."""
        try:
            return track.load_gold(self.gold_sources.get(track.name)).sha256
        except (ValueError, OSError):
            return ""

    def cached(self, sha256: str, judge=None) -> Scored | None:
        """The cached result for this content hash, without reading the submission file."""
        found = self.cache.get(sha256, self.gold_shas, judge.name if judge is not None else NO_JUDGE)
        return Scored("", *found, True) if found else None

    def cached_judged_or_not(self, sha256: str, judge=None) -> tuple[Scored | None, bool]:
        """(`cached(sha256, judge) or cached(sha256)`, whether it is the judged one), in one lookup; without a
        judge, (`cached(sha256)`, False)."""
        judges = (judge.name, NO_JUDGE) if judge is not None else (NO_JUDGE,)
        found = self.cache.get_first(sha256, self.gold_shas, judges)
        return (Scored("", found[0], found[1], True), judge is not None and found[2] == 0) if found else (None, False)

    def units(self, key: str, summary: dict) -> dict[str, np.ndarray] | None:
        """Checked per-unit scores of a cached result; None when they are unsound (the result is then rescored)."""
        track = TRACKS.get(summary.get("track") or "")
        if not key or track is None:
            return {}
        gold = track.load_gold(self.gold_sources.get(track.name))

        def unit_count(metric: str) -> int:  # listing a track's units can take milliseconds: once per gold
            memo = (track.name, gold.sha256, metric)
            if memo not in self._unit_counts:
                self._unit_counts[memo] = len(track.units(gold, metric).ids)
            return self._unit_counts[memo]

        return self.cache.units(key, summary, unit_count)

    def score_file(
        self, path: str | Path, judge=None, data: bytes | None = None, progress: Callable | None = None, *, live: bool = True
    ) -> Scored:
        """The file's result: the cached one for its content, else validated and scored here, once.

        With `judge`, judged: the verdicts from the submission's verdict record when it answers every item, else
        from `judge` asked now; not `live`, the record's or none (scored unjudged: the judge's turn comes later).
        """
        path = Path(path)
        judges = (NO_JUDGE,) if judge is None else (judge.name,) if live else (judge.name, NO_JUDGE)
        try:
            data = read_file(path, self.max_bytes) if data is None else data
        except SubmissionError as exc:
            return Scored(str(path), "", self._invalid(content_hash(path.name.encode()), [str(exc.problem)]), False)
        except OSError as exc:
            return Scored(
                str(path), "", self._invalid(content_hash(path.name.encode()), [f"file: cannot read: {exc.strerror}"]), False
            )
        sha = content_hash(data)
        found = self.cache.get_first(sha, self.gold_shas, judges)
        if found is not None:
            return Scored(str(path), found[0], found[1], True)
        try:
            checked = self._validation(data, path.name, sha)
            return self.keep(checked, sha, self.verdicts(sha, checked, judge, progress, live), path)
        except Exception:  # a scorer bug must not take the board down; say so on the submission, details in the log
            ref = sha[:12]
            log.exception("scoring %s failed (log ref %s)", path, ref)
            result = Result(self._invalid(sha, [str(Problem("file", f"internal error while scoring (log ref {ref})"))]))
            return Scored(str(path), "", result.summary, False)

    def validated(self, path: str | Path) -> tuple[str, Checked] | None:
        """(content hash, validation) of a file, for a caller that judges it before scoring it (batch judging) and
        so reads and validates it once; None when it cannot be read (`score_file` then says why)."""
        try:
            data = read_file(Path(path), self.max_bytes)
        except (SubmissionError, OSError):
            return None
        sha = content_hash(data)
        return sha, self._validation(data, Path(path).name, sha)

    def keep(self, checked: Checked, sha256: str, verdicts: Verdicts | None = None, path: str | Path = "") -> Scored:
        """Score a validated submission and store its result, which every later lookup of its content hash finds
        (an upload validated by the Submit tab, a batch run's verdicts): nothing validates it again."""
        result = score_checked(checked, sha256, verdicts)
        return Scored(str(path), self.cache.store(result), result.summary, False)

    def verdicts(
        self, sha256: str, checked: Checked, judge, progress: Callable | None = None, live: bool = True
    ) -> Verdicts | None:
        """The verdicts to score a valid submission with: its verdict record's when that answers every item, else
        `judge`'s asked now (`live`) or none."""
        if judge is None or not checked.ok or checked.track is None:
            return None
        items = checked.track.judge_items(checked.parsed, checked.gold)
        if not items:
            return None
        recorded = self.recorded_verdicts(sha256, judge, items)
        if recorded is None and not live:  # scored unjudged now: the judge thread takes this validation later
            self.hand_over(sha256, checked)
        if recorded is not None or not live:
            return recorded
        return verdicts_of(judge, items, progress)

    def recorded_verdicts(self, sha256: str, judge, items: list) -> Verdicts | None:
        """The verdicts of `items` from this submission's verdict record (judge/record.py) when it answers every item;
        None otherwise, the record's verdicts then lent to the judge's own cache, so it pays for the rest only."""
        if getattr(judge, "approximate", True):  # only an LLM judge keeps records
            return None
        found = self.cache.record(sha256, judge.name)
        if found is None:
            return None
        recorded = found.verdicts_for(judge, items)
        if recorded is not None or (found.judge, found.prompt_version) != (judge.name, judge.prompt_version):
            return recorded
        cache = getattr(judge, "cache", None)
        if cache is not None:
            for v in found.verdicts:
                if cache.get_verdict(v.qid, v.response_sha256, v.gold_sha256) is None:
                    cache.put_verdict(v)
        return None

    def score_many(self, paths: Iterable[Path], judge=None) -> list[Scored]:
        return [self.score_file(p, judge) for p in paths]

    @staticmethod
    def _invalid(sha: str, errors: list[str]) -> dict:
        return score_checked(Checked(False, None, {}, errors, [], error_count=len(errors)), sha).summary
