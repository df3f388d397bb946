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
import logging
import os
import tempfile
import threading
import zipfile
import zlib
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import protocols, results
from .fastpath import fast_parse
from .judge.base import verdicts_of
from .judge.verdict import Verdicts
from .problems import Problem, Problems, SubmissionError
from .results import NO_JUDGE, UNSET, Summary
from .submission import DEFAULT_MAX_BYTES, FALLBACK_LIMITS, Limits, parse_raw, read_bytes, read_file
from .tracks import TRACKS, Track

# Bump whenever a metric definition, a validation rule or the result layout
# changes: every cached result is then recomputed.
METRIC_VERSION = "4"
_VERSION_TAG = f"v{METRIC_VERSION}"  # as it stands in a results-cache key

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

    Validating and scoring a file in one pause, its validation dropped before the pause ends, frees its parsed
    predictions before any collection sees them: a futurepedia file's ~17k unit tuples would otherwise cost a
    ~3 ms gen-0 pass once the pause ends. Never across a live judge's calls: the pause is process-wide.
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
    """A scored (or invalid) submission: its summary, `units` per-unit arrays, `record` the verdicts an LLM judge
    made for it (judge/record.py: what RESULTS_REPO shares)."""

    summary: Summary
    units: dict[str, np.ndarray] = field(default_factory=dict)
    record: Any = None


def score_checked(checked: Checked, sha256: str, verdicts: Verdicts | None = None) -> Result:
    """A validated submission's result, judged metrics from `verdicts` (data: whoever judged, live, in a batch
    run or in a verdict record, is the caller's business); none given, or none for this file: not judged."""
    base = dict(
        sha256=sha256,
        track=checked.track_name,
        system=_plain_system(checked.system),
        errors=checked.errors,
        error_count=checked.error_count,
        warnings=checked.warnings,
        records=checked.records,
        metric_version=METRIC_VERSION,
        scored_at=datetime.now(UTC).isoformat(timespec="seconds"),
        judge=NO_JUDGE,
    )
    if not checked.ok:
        return Result(Summary(**base, status="invalid"))
    t = checked.track
    judged = verdicts if verdicts is not None and verdicts.by_qid else None  # a file with no answers is not judged
    if judged is not None:
        base["judge"] = judged.judge
    with gc_paused():
        scores = t.score(checked.parsed, checked.gold, judged.by_qid if judged is not None else None)
    official, deviations = None, None
    if t.deviations:
        # The official script's protocol beside the board's, with the board's judged values (judged metrics have
        # one protocol), and each deviation's stepwise effect: cached together, so neither the board's "Scores"
        # choice nor the detail view ever rescores a file.
        with gc_paused():
            official_scores, deviations = protocols.official_report(t, checked.parsed, checked.gold, scores)
        official = protocol_part(official_scores)
    summary = Summary(
        **base,
        status="scored",
        gold_sha256=checked.gold.sha256,
        fingerprint=checked.fingerprint,
        **{f: getattr(scores, f) for f in _SCORES_KEPT},
        official=official,
        deviations=deviations,
        judge_ledger=judged.ledger if judged is not None else None,
    )
    record = None
    if judged is not None and judged.shared:
        from .judge.record import Record  # lazily: only an LLM judge's results have one

        kept = tuple(v for v in judged.by_qid.values() if v.failure is None)
        if kept:
            record = Record(sha256, judged.judge, judged.prompt_version, summary.judge_ledger or {}, kept)
    return Result(summary, scores.units, record)


_SCORES_KEPT = ("n", "missing", "overall", "ci", "breakdowns", "extra")  # of a track's Scores: all but the arrays


def judge_checked(judge, checked: Checked, progress: Callable | None = None) -> Verdicts | None:
    """A valid submission's verdicts from `judge` asked now; None without a judge or answers to judge."""
    if judge is None or not checked.ok or checked.track is None:
        return None
    items = checked.track.judge_items(checked.parsed, checked.gold)
    return verdicts_of(judge, items, progress) if items else None


def protocol_part(scores) -> results.Protocol:
    """The official protocol's part of a summary: what the table, charts and detail view read of it (the
    per-unit arrays stay the board's: compare and detail read those)."""
    part = results.Protocol(
        overall=scores.overall, ci=scores.ci, breakdowns=scores.breakdowns, n=scores.n, missing=scores.missing
    )
    if scores.extra.get("notes"):  # what the official protocol left out or could not read in this file
        part.notes = scores.extra["notes"]
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
    """A file's result, validated and scored here (judged by `judge` asked now, if given)."""
    with gc_paused():
        checked = check(data, filename, gold_sources, max_bytes)
        if judge is None:
            result = score_checked(checked, content_hash(data))
            del checked  # in the pause (gc_paused)
            return result
    return score_checked(checked, content_hash(data), judge_checked(judge, checked, progress))


class ResultsCache:
    """A folder of `<key>.json` summaries and `<key>.npz` per-unit scores, and a results table per track.

    The key names the submission hash, track, gold hash, metric version and
    judge, so the folder can be published as is (the Hub store syncs it).

    A start reads the tables (results.py), not 10,000 summary files; a table is
    trusted row by row: a row stands for its summary while the summary's file is
    listed with the size and modification time the row recorded, its per-unit
    file too when it had one, and its identity makes its own key. A table that
    is not one (damaged, another schema, format or metric version) is ignored,
    and every row not served is read from its summary's file, which is checked
    as it is read; the table is then rewritten from what was read.

    Every entry is checked when read from its file: an unreadable, truncated or
    mismatched file (a summary whose content does not produce its own key, say)
    is logged once, removed and reported as missing, so the caller rescores
    instead of serving it or failing.
    """

    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._by_sha: dict[str, list[str]] | None = None  # every listed key, by submission hash
        self._rows: dict[str, results.Row] = {}  # key -> row of every summary known sound
        self._listed: set[str] = set()  # summary files listed at the start
        # Tables whose head or PARTS are not read yet: name -> (the open file, key -> its row there, parts read)
        self._unread: dict[str, tuple[Any, dict[str, int], set[str]]] = {}
        self._dirty: set[str] = set()  # tables to rewrite
        self._reported: set[str] = set()  # bad files already logged: once per process, not per request
        self._lock = threading.RLock()  # the refresher and the judge threads both store results
        self._written: set[str] = set()  # files written since `take_written` (what a push must send)

    @staticmethod
    def key(sha256: str, track: str | None, gold_sha: str | None, judge: str) -> str:
        return f"{sha256}.{track or '-'}.{(gold_sha or '-')[:12]}.{_VERSION_TAG}.{_safe(judge)}"

    def _keys_for(self, sha256: str) -> list[str]:
        if self._by_sha is None:
            with self._lock:
                if self._by_sha is None:
                    self._start()
        return self._by_sha.get(sha256, [])

    def _start(self) -> None:
        """List the folder once and serve the tables' rows that still stand for their files."""
        names = os.listdir(self.root)  # names only: 10,000s of them at scale, no DirEntry object each
        listed = {n[:-5] for n in names if n.endswith(".json")}
        units_files = {n[:-4] for n in names if n.endswith(".npz")}
        by_sha: dict[str, list[str]] = {}
        for key in listed:
            by_sha.setdefault(key.partition(".")[0], []).append(key)
        self._listed = listed
        tables = self.root / results.TABLES_DIR
        for path in sorted(tables.glob("*.parquet")) if tables.is_dir() else ():
            if not self._serve_table(path.stem, listed, units_files):  # rows dropped, or no table at all: rewritten
                self._dirty.add(path.stem)
        self._by_sha = by_sha

    def _serve_table(self, name: str, listed: set[str], units_files: set[str]) -> bool:
        """Serve the rows of table `name` that stand for their files (see the class docstring); whether all do.

        A row is served from its identity columns alone (its head and PARTS read by `complete`); a summary the
        table lacks is read from its file when asked for (which marks the table to rewrite)."""
        path = results.table_path(self.root, name)
        try:
            found = results.read_table(path, METRIC_VERSION)
        except results.TableProblem as exc:
            self._report(f"{results.TABLES_DIR}/{name}.parquet", str(exc), "rebuilt from the summaries")
            return False
        if found is None:
            return True
        table, file = found
        keys = table.column("key").to_pylist()
        # The checks every row passes or fails alike, a column at a time: listed, its per-unit file there if it
        # had one, a status that is a result's, and an identity that makes its own key.
        col = table.column
        judges = pa.array([_safe(j) if j is not None else "" for j in col("judge").to_pylist()], pa.string())
        made = pc.binary_join_element_wise(
            col("sha256"),
            pc.fill_null(col("track"), "-"),
            pc.utf8_slice_codeunits(pc.fill_null(col("gold_sha256"), "-"), 0, 12),
            pa.scalar(_VERSION_TAG),
            judges,
            ".",
        )
        track = TRACKS.get(name)
        needs_units = track is not None and any(m.has_ci for m in track.metrics)
        scored = pc.equal(col("status"), "scored")
        sound = pc.and_(
            pc.and_(pc.is_in(col("key"), pa.array(listed, pa.string())), pc.equal(made, col("key"))),
            pc.and_(pc.or_(scored, pc.equal(col("status"), "invalid")), pc.invert(pc.equal(col("sha256"), ""))),
        )
        units = pc.is_in(col("key"), pa.array(units_files, pa.string()))
        sound = pc.and_(sound, pc.or_(pc.invert(col("units")), units))
        if needs_units:
            sound = pc.and_(sound, pc.or_(pc.invert(scored), col("units")))
        sound = pc.fill_null(sound, False).to_pylist()
        sizes, mtimes, has_units = (col(c).to_pylist() for c in ("size", "mtime_ns", "units"))
        identities = zip(*(col(c).to_pylist() for c in results.IDENTITY))
        fd = os.open(self.root, os.O_RDONLY)
        try:
            where = {}
            for i, (key, identity) in enumerate(zip(keys, identities)):
                if not sound[i] or key in self._rows:
                    continue
                try:
                    st = os.stat(f"{key}.json", dir_fd=fd)
                except OSError:
                    continue
                if st.st_size != sizes[i] or st.st_mtime_ns != mtimes[i]:
                    continue  # rewritten (or replaced) since the row was taken: read from its file
                self._rows[key] = results.Row(key, sizes[i], mtimes[i], has_units[i], results.identity_only(*identity))
                where[key] = i
        finally:
            os.close(fd)
        if len(where) != len(keys):
            log.info(
                "results table %s: %d of %d rows stale or unsound, read from their summaries",
                name,
                len(keys) - len(where),
                len(keys),
            )
        if where:
            self._unread[name] = (file, where, set())
        return len(where) == len(keys)

    def complete(self, track: str | None, parts: tuple[str, ...] = results.PARTS) -> None:
        """Read the head and `parts` of every summary of `track` served from its table (a column at a time)."""
        name = results.table_name(track)
        with self._lock:
            unread = self._unread.get(name)
            if unread is None:
                return
            file, where, done = unread
            for part in ("head", *parts):
                if part in done:
                    continue
                done.add(part)
                fields = results.HEAD if part == "head" else (part,)
                rows = [r for k in where if (r := self._rows.get(k)) is not None and getattr(r.summary, fields[0]) is UNSET]
                if not rows:
                    continue
                try:
                    values = results.read_part(file, part, [where[r.key] for r in rows])
                    if part == "head" and any(v.metric_version != METRIC_VERSION for v in values):
                        raise ValueError("a head of another metric version")
                except (OSError, ValueError, pa.ArrowException, msgspec.DecodeError, RecursionError) as exc:
                    # the identity columns were sound, this one is not: those summaries from their own files
                    self._report(
                        f"{results.TABLES_DIR}/{name}.parquet", f"has a {part} column that cannot be read ({str(exc)[:120]})"
                    )
                    for r in rows:
                        del self._rows[r.key]
                        fresh = self.load(r.key) or Summary(errors=[UNREADABLE], error_count=1)
                        for f in (*results.HEAD, *results.PARTS):
                            setattr(r.summary, f, getattr(fresh, f))
                    continue
                if part == "head":
                    for r, value in zip(rows, values):
                        for f in fields:
                            setattr(r.summary, f, getattr(value, f))
                else:
                    for r, value in zip(rows, values):
                        setattr(r.summary, part, value)
            if len(done) == 1 + len(results.PARTS):
                del self._unread[name]  # every part read: the table file is no longer needed

    def write_tables(self) -> list[str]:
        """Rewrite the tables whose rows changed since they were read or written; their paths in the folder."""
        written = []
        with self._lock:
            for name in sorted(self._dirty):
                rows = [r for r in self._rows.values() if results.table_name(r.summary.track) == name]
                path = results.table_path(self.root, name)
                if not rows:
                    path.unlink(missing_ok=True)
                    continue
                self.complete(None if name == results.UNTRACKED else name)
                results.write_table(path, METRIC_VERSION, rows, _atomic_write)
                written.append(f"{results.TABLES_DIR}/{name}.parquet")
            self._dirty.clear()
            self._written.update(written)
        return written

    def take_written(self) -> set[str]:
        """Files (relative to the folder) written since the last call: what RESULTS_REPO has not been sent."""
        with self._lock:
            written, self._written = self._written, set()
        return written

    def find_first(self, sha256: str, gold_shas: dict[str, str], judges: tuple[str, ...]) -> tuple[str, int] | None:
        """(key, i): a cached key valid for the current gold, metric version and judges[i], the first i that has one
        (one pass over the hash's keys: the board asks for every submission, judged or not, at each start)."""
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

    def get_first(self, sha256: str, gold_shas: dict[str, str], judges: tuple[str, ...]) -> tuple[str, Summary, int] | None:
        """(key, summary, i) of the sound cached result under judges[i], the first i that has one; a bad one is
        discarded and the next candidate tried."""
        while (found := self.find_first(sha256, gold_shas, judges)) is not None:
            summary = self.load(found[0])
            if summary is not None:
                return found[0], summary, found[1]
        return None

    def load(self, key: str) -> Summary | None:
        """The summary stored under `key`, or None (discarded, logged once) when it is unsound."""
        row = self._rows.get(key)
        if row is not None:  # from a table, checked when it was read
            return row.summary
        path = self.root / f"{key}.json"
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                summary = results.decode(fh.read())
        except FileNotFoundError:
            problem = "file missing"
        except OSError as exc:
            problem = f"unreadable ({type(exc).__name__})"
        except (msgspec.DecodeError, RecursionError) as exc:
            problem = f"is not a summary ({str(exc)[:120]})"
        else:
            problem = summary_problem(key, summary) or self._units_file_problem(key, summary)
        if problem is None:
            self._remember(key, st, summary)
            return summary
        self.discard(key, problem)
        return None

    def _remember(self, key: str, st: os.stat_result, summary: Summary) -> None:
        units = (self.root / f"{key}.npz").is_file()
        with self._lock:
            self._rows[key] = results.Row(key, st.st_size, st.st_mtime_ns, units, summary)
            self._dirty.add(results.table_name(summary.track))
            if self._by_sha is not None and key not in (keys := self._by_sha.setdefault(summary.sha256, [])):
                keys.append(key)

    def _units_file_problem(self, key: str, summary: Summary) -> str | None:
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

    def units(self, key: str, summary: Summary, unit_count: Callable[[str], int]) -> dict[str, np.ndarray] | None:
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
        with self._lock:
            if self._rows.pop(key, None) is not None or key in self._listed:
                self._dirty.add(results.table_name(_key_track(key)))
            for suffix in (".json", ".npz"):
                (self.root / f"{key}{suffix}").unlink(missing_ok=True)
            if self._by_sha is not None:
                keys = self._by_sha.get(key.split(".", 1)[0], [])
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

    def _report(self, name: str, problem: str, then: str = "treated as missing and rescored") -> None:
        if name not in self._reported:
            self._reported.add(name)
            log.warning("results cache: %s %s; %s", name, problem, then)

    def store(self, result: Result) -> str:
        s = result.summary
        key = self.key(s.sha256, s.track, s.gold_sha256, s.judge)
        if result.units:
            _atomic_write(self.root / f"{key}.npz", lambda fh: np.savez(fh, **{_escape(k): v for k, v in result.units.items()}))
        if result.record is not None:
            rel = self.record_path(result.record.sha256, result.record.judge)
            (self.root / rel).parent.mkdir(exist_ok=True)
            record_bytes = result.record.to_bytes()
            _atomic_write(self.root / rel, lambda fh: fh.write(record_bytes))
            with self._lock:
                self._written.add(rel)
        data = results.encode(s)
        path = self.root / f"{key}.json"
        _atomic_write(path, lambda fh: fh.write(data))
        with self._lock:
            self._written.update([f"{key}.json", f"{key}.npz"] if result.units else [f"{key}.json"])
        self._reported.discard(f"{key}.json")
        self._remember(key, path.stat(), s)
        return key


# What stands for a summary neither its table nor its file can give back (it is rescored at the next start).
UNREADABLE = "results cache: this result could not be read back; it is rescored at the next start"


def _key_track(key: str) -> str | None:
    """The track a results-cache key names (None: an invalid file of no known track)."""
    parts = key.split(".")
    return parts[1] if len(parts) >= 5 and parts[1] != "-" else None


# What np.load raises on a truncated or otherwise broken .npz (zipfile and format errors).
_NPZ_ERRORS = (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error)


def read_npz(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as z:
        return {_unescape(k): z[k] for k in z.files}


def expected_unit_keys(summary: Summary) -> set[str]:
    """The metrics a scored summary must have per-unit arrays for: those with a CI (the CI is computed from them)."""
    track = TRACKS.get(summary.track or "")
    if summary.status != "scored" or track is None:
        return set()
    return {m.key for m in track.metrics if m.has_ci and m.key in summary.overall}


def head_problem(key: str, summary: Summary) -> str | None:
    """Why a summary (its type already checked by decoding it) cannot be served under `key` (None when it can)."""
    if summary.metric_version != METRIC_VERSION:
        return f"has metric version {summary.metric_version[:20]!r}, not {METRIC_VERSION!r}"
    if not summary.sha256:
        return "lacks its identity (sha256, track, gold, judge)"
    if ResultsCache.key(summary.sha256, summary.track, summary.gold_sha256, summary.judge) != key:
        return "belongs to another key (its sha256, track, gold or judge differ from the file name)"
    if summary.status not in ("scored", "invalid"):
        return f"has status {summary.status[:20]!r}"
    return None


def summary_problem(key: str, summary: Summary) -> str | None:
    """Why a summary read from its file cannot be served under `key` (None when it can)."""
    problem = head_problem(key, summary)
    if problem is None and summary.status == "scored" and (t := TRACKS.get(summary.track or "")) is not None:
        if t.deviations and summary.official is None:  # both protocols are stored together (score_checked)
            return "lacks the official protocol's overall, ci or breakdowns"
    return problem


def units_problem(summary: Summary, units: dict[str, np.ndarray], unit_count: Callable[[str], int]) -> str | None:
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
    summary: Summary
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

    def cached(self, sha256: str) -> Scored | None:
        """The cached unjudged result for this content hash, without reading the submission file."""
        return self.cached_judged_or_not(sha256)[0]

    def cached_judged_or_not(self, sha256: str, judge=None) -> tuple[Scored | None, bool]:
        """(`cached(sha256, judge) or cached(sha256)`, whether it is the judged one), in one lookup; without a
        judge, (`cached(sha256)`, False)."""
        judges = (judge.name, NO_JUDGE) if judge is not None else (NO_JUDGE,)
        found = self.cache.get_first(sha256, self.gold_shas, judges)
        return (Scored("", found[0], found[1], True), judge is not None and found[2] == 0) if found else (None, False)

    def units(self, key: str, summary: Summary) -> dict[str, np.ndarray] | None:
        """Checked per-unit scores of a cached result; None when they are unsound (the result is then rescored)."""
        track = TRACKS.get(summary.track or "")
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
            with gc_paused():
                checked = self._validation(data, path.name, sha)
                if judge is None or not live:  # verdicts, if any, from the submission's record on disk
                    scored = self.keep(checked, sha, self.verdicts(sha, checked, judge, progress, live), path)
                    del checked  # in the pause (gc_paused)
                    return scored
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
    def _invalid(sha: str, errors: list[str]) -> Summary:
        return score_checked(Checked(False, None, {}, errors, [], error_count=len(errors)), sha).summary
