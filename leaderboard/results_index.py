"""The results index: a few files per track holding every cached summary, so start-up reads 48 files, not 10,000.

    results/index/<track>/<h>.json   two JSON documents, one line each:
        {"format", "metric_version", "name",
         "rows": [{"key", "size", "head", "breakdowns": true|false, "sha256", "track", "status", "fingerprint"}]}
        [<row 1's breakdowns>, <row 2's breakdowns>, ...]          (null for a row without)

sixteen files per track (`h`: the first hex digit of the submission hash), so a
change rewrites and pushes a sixteenth of a track's rows.

A row is the summary stored under `results/<key>.json`, split in two: `head`
(identity, system, status, headline metrics with CIs, errors...) and
`breakdowns`, two thirds of the bytes, which a start-up does not even scan:
they follow every head, on the file's second line, which is decoded (into one
raw JSON value per row) when a slice table, a chart or a detail view first asks
for a row's breakdowns, and each row's one axis at a time (`LazyBreakdowns`).
Beside its head, a row repeats the head's IDENTITY fields (sha256, track,
status, fingerprint: absent where the head lacks them), which are all a
start-up reads of every summary; from a marked file (below) a head is kept as
raw JSON and decoded when something else of it is first read (`LazySummary`:
a track's heads when it is first drawn).

The index is a cache like the summaries it copies (it is pushed to and pulled
from RESULTS_REPO too), so nothing in it is trusted blindly. On load:

- the file is read only when its size is within a bound derived from the
  summaries it may index (`max_index_bytes`), and must decode to the schema
  of this format and metric version (msgspec, typed), every head an object
  whose IDENTITY fields are the row's, else it is ignored;
- a row is served only when its summary file is in the cache folder with the
  size the row recorded and was last written before the index (a summary
  rewritten since, truncated, or replaced by another entry's content is read
  from its file instead, which checks and heals it as before), when its head
  passes `scoring.summary_problem` under its key, and when the per-unit file
  its metrics need is there.

Rows failing a check are dropped and reported once; the summaries they stood
for are read from their files when the board asks, and the index is rewritten
(`ResultsCache.write_index`) with what was read. Per-unit arrays (.npz) and
raw records are never in the index: detail and compare load them on demand.

Those per-row checks cost a stat and a check per row (most of a start-up at
10,000 rows). An index file this board has already checked row by row is
then marked (`results/index/.marks.json`, never pushed, and never installed
by a pull: its name is not an index file's), and while its mark holds, its
rows are served without the per-row checks. A mark is the signature of the
results folder (inode, mtime_ns, ctime_ns, and its counts of summaries and
per-unit files) and of the index file (inode, size, mtime_ns, ctime_ns) as
they were when every row was checked. It still notices what the per-row
checks notice in practice:

- a summary or per-unit file added, removed or replaced: every writer of the
  folder (ResultsCache.store, the RESULTS_REPO pull) writes a temp file and
  renames it over the target, and removals unlink, so the folder's mtime and
  ctime change (no writer edits a file in place);
- the index file replaced (a pull installs it by rename, a rewrite by this
  board too: a new inode) or edited, truncated or damaged in place (its size,
  mtime or ctime change; ctime cannot be set back by any tool);
- another metric version or format: the file says so (`decode`), as before.

A signature is taken only once the folder and the file have not changed for
SETTLE_NS: a timestamp has the file system's granularity (a clock tick, or a
second), and a change made in the tick a mark was taken in could keep the
same one. So a board marks what it checked at its previous start, and the
first start after results change checks every row again.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec

log = logging.getLogger(__name__)

INDEX_DIR = "index"
INDEX_FORMAT = 3  # 1: each row's breakdowns inside its row (a start-up scanned them all); 2: no identity fields
# The largest row read: a summary is a few KB (its error list is capped at MAX_REPORTED lines);
# a larger index than its summaries can justify is not read at all.
MAX_ROW_BYTES = 256 * 1024
INDEX_HEADER_BYTES = 4096
OBSOLETE = "is for another format or metric version"
MARKS_FILE = ".marks.json"  # in INDEX_DIR: local to this disk (see the module docstring)
# How long the folder and an index file must have stood unchanged before their signature is a mark: more than a
# file system's timestamp granularity (a clock tick on ext4, xfs, btrfs, tmpfs; a second on the coarsest).
SETTLE_NS = 2_000_000_000
UNTRACKED = "_untracked"  # the index of invalid files whose track is unknown (key track "-")


# The head's fields a start-up reads of every summary (which track, duplicates, the judge queue, a refresh's
# "same file?"): each row carries them beside its head, so a head is decoded only when something else is read.
IDENTITY = ("sha256", "track", "status", "fingerprint")
UNSET = msgspec.UNSET  # a field the head does not have (not the same as null)


class IndexRow(msgspec.Struct):
    """A row in memory: its head a dict, or the raw JSON of a marked file's row (decoded when first read beyond
    its IDENTITY fields); its breakdowns the summary's (None when it has none), decoded when first read."""

    key: str
    size: int  # bytes of results/<key>.json when the row was taken from it
    head: dict[str, Any] | msgspec.Raw
    breakdowns: LazyBreakdowns | None = None
    # the head's IDENTITY fields, as the head has them (UNSET: absent); required beside a raw head
    sha256: Any = UNSET
    track: Any = UNSET
    status: Any = UNSET
    fingerprint: Any = UNSET


class IndexFile(msgspec.Struct):
    format: int
    metric_version: str
    name: str  # "<track>/<shard>": which rows it may hold (index_name)
    rows: list[IndexRow]


class _DiskRow(msgspec.Struct, forbid_unknown_fields=True):  # a row as the first line holds it
    key: str
    size: int
    head: msgspec.Raw  # decoded and checked when the file is not marked; else when the summary is first read
    breakdowns: bool  # whether the second line holds an object for this row (else null)
    sha256: Any = UNSET  # IDENTITY: the head's own values (checked against it), absent where the head lacks them
    track: Any = UNSET
    status: Any = UNSET
    fingerprint: Any = UNSET


class _DiskHeads(msgspec.Struct, forbid_unknown_fields=True):  # the first line
    format: int
    metric_version: str
    name: str
    rows: list[_DiskRow]


class _Version(msgspec.Struct):  # what any format's file says of itself (an older one is obsolete, not broken)
    format: int
    metric_version: str


_HEADS = msgspec.json.Decoder(_DiskHeads)
_HEAD = msgspec.json.Decoder(dict[str, Any])
_VERSION = msgspec.json.Decoder(_Version)
_RAWS = msgspec.json.Decoder(list[msgspec.Raw])
_AXES = msgspec.json.Decoder(dict[str, msgspec.Raw])
_CELLS = msgspec.json.Decoder(dict[str, dict[str, Any]])  # numbers stay as written (counts are ints)


class _Breakdowns:
    """An index file's second line: every row's breakdowns, decoded (one raw JSON value per row) on first use."""

    __slots__ = ("data", "count", "_raws")

    def __init__(self, data: memoryview, count: int):
        self.data, self.count = data, count
        self._raws: list[msgspec.Raw] | None = None

    def raws(self) -> list[msgspec.Raw]:
        if self._raws is None:
            raws = _RAWS.decode(self.data)
            if len(raws) != self.count:  # a file checked when marked cannot change unseen (see "marks")
                raise ValueError(f"index breakdowns: {len(raws)} values for {self.count} rows")
            self._raws = raws
        return self._raws


class LazyBreakdowns(Mapping):
    """A summary's breakdowns {axis: {value: {metric: number}}}, decoded one axis at a time on first use.

    Reads like the dict it stands for (get, [], in, items, len); `raw` is the
    JSON it came from, written back to the index as is.
    """

    __slots__ = ("_raw", "_file", "_row", "_axes", "_decoded")

    def __init__(self, raw: msgspec.Raw | None = None, file: _Breakdowns | None = None, row: int = 0):
        """From its raw JSON, or from row `row` of an index file's breakdowns (not decoded until asked for)."""
        self._raw, self._file, self._row = raw, file, row
        self._axes: dict[str, msgspec.Raw] | None = None
        self._decoded: dict[str, dict] = {}

    @property
    def raw(self) -> msgspec.Raw:
        if self._raw is None:
            self._raw = self._file.raws()[self._row]
        return self._raw

    def _index(self) -> dict[str, msgspec.Raw]:
        if self._axes is None:
            self._axes = _AXES.decode(self.raw)
        return self._axes

    def __getitem__(self, axis: str) -> dict:
        if axis not in self._decoded:
            self._decoded[axis] = _CELLS.decode(self._index()[axis])
        return self._decoded[axis]

    def values_of(self, axis: str) -> Iterable[str]:
        """The values of `axis` (self[axis]'s keys; empty when absent), without decoding their cells."""
        if axis in self._decoded:
            return self._decoded[axis].keys()
        raw = self._index().get(axis)
        return _AXES.decode(raw).keys() if raw is not None else ()

    def metric_of(self, axis: str, metric: str) -> dict[str, Any]:
        """{value: self[axis][value].get(metric)}, decoding only that metric of each cell (a chart or the leaders
        read one metric of every system; a cell holds a dozen)."""
        if axis in self._decoded:
            return {value: cells.get(metric) for value, cells in self._decoded[axis].items()}
        raw = self._index().get(axis)
        if raw is None:
            return {}
        return {value: cell.value for value, cell in _metric_decoder(metric).decode(raw).items()}

    def __iter__(self) -> Iterator[str]:
        return iter(self._index())

    def __len__(self) -> int:
        return len(self._index())

    def __contains__(self, axis: object) -> bool:
        return axis in self._index()

    def __repr__(self) -> str:
        return f"LazyBreakdowns({bytes(self.raw)[:60]!r}...)" if self._raw is not None else "LazyBreakdowns(<not read>)"


@functools.lru_cache(maxsize=64)  # metric keys are a track's declared ones: a few dozen at most
def _metric_decoder(metric: str) -> msgspec.json.Decoder:
    """Decodes an axis's cells {value: {metric: number, ...}} keeping only `metric` (None where a cell lacks it)."""
    cell = msgspec.defstruct("Cell", [("value", Any, None)], rename={"value": metric})
    return msgspec.json.Decoder(dict[str, cell])


def _enc_hook(value: Any) -> Any:
    if isinstance(value, LazyBreakdowns):
        return value.raw
    if isinstance(value, Mapping):
        return dict(value)
    raise NotImplementedError(f"cannot encode {type(value).__name__}")


_ENCODER = msgspec.json.Encoder(enc_hook=_enc_hook)


def index_path(root: Path, name: str) -> Path:
    return Path(root) / INDEX_DIR / f"{name}.json"


def index_name(key: str) -> str:
    """Which index file holds the row of results-cache key `key`: "<track (or UNTRACKED)>/<first hex digit of its hash>".

    Sixteen files per track: a change rewrites (and pushes) a sixteenth of a track's rows, not all of them.
    """
    track = key.split(".")[1] if key.count(".") >= 4 else "-"
    shard = key[:1] if key[:1] in _HEX else "_"
    return f"{UNTRACKED if track == '-' else track}/{shard}"


_HEX = frozenset("0123456789abcdef")


def max_index_bytes(summaries: int) -> int:
    """The largest index file worth reading when the cache folder holds `summaries` summary files."""
    return INDEX_HEADER_BYTES + MAX_ROW_BYTES * summaries


def as_row(key: str, size: int, summary: Mapping) -> IndexRow:
    breakdowns = summary.get("breakdowns")
    head = {k: v for k, v in summary.items() if k != "breakdowns"}
    if breakdowns is not None and not isinstance(breakdowns, LazyBreakdowns):
        breakdowns = LazyBreakdowns(msgspec.Raw(_ENCODER.encode(breakdowns)))
    # None: the summary has none (an invalid submission's)
    return IndexRow(key, size, head, breakdowns, **{k: head.get(k, UNSET) for k in IDENTITY})


def summary_of(row: IndexRow) -> Mapping:
    """The summary a row stands for, its breakdowns decoded lazily (its head too, when the row holds it raw)."""
    if isinstance(row.head, msgspec.Raw):
        return LazySummary(row)
    summary = dict(row.head)
    if row.breakdowns is not None:
        summary["breakdowns"] = row.breakdowns
    return summary


class LazySummary(Mapping):
    """A summary from a marked index file's row: its IDENTITY fields read from the row, the rest of its head
    decoded when first read (a start-up reads the identity of every summary, and the rest of a track's only
    when that track is drawn). Reads like the dict it stands for; read-only, as every cached summary is."""

    # No __slots__: once decoded, `get` is the dict's own (an instance attribute shadows the method below), as
    # fast as a plain summary's: a table reads a dozen fields of each of 1,000s of summaries.

    def __init__(self, row: IndexRow):
        self._row = row
        self._summary: dict | None = None

    def _decoded(self) -> dict:
        if self._summary is None:
            summary = _HEAD.decode(self._row.head)  # checked when its file was marked (see "marks")
            if self._row.breakdowns is not None:
                summary["breakdowns"] = self._row.breakdowns
            self._summary, self.get = summary, summary.get
        return self._summary

    def get(self, key, default=None):
        if self._summary is None and key in IDENTITY:
            value = getattr(self._row, key)
            return default if value is UNSET else value
        return self._decoded().get(key, default)

    def __getitem__(self, key):
        if self._summary is None and key in IDENTITY:
            value = getattr(self._row, key)
            if value is UNSET:
                raise KeyError(key)
            return value
        return self._decoded()[key]

    def __contains__(self, key: object) -> bool:
        if self._summary is None and key in IDENTITY:
            return getattr(self._row, key) is not UNSET
        return key in self._decoded()

    def __bool__(self) -> bool:
        return True  # a row's head always has fields (a summary is never empty)

    def __iter__(self) -> Iterator[str]:
        return iter(self._decoded())

    def __len__(self) -> int:
        return len(self._decoded())

    def __repr__(self) -> str:
        return f"LazySummary({self._row.key!r}, {'decoded' if self._summary is not None else 'not decoded'})"


def _first_byte(raw: msgspec.Raw) -> bytes:
    return bytes(memoryview(raw)[:1])


def plain(summary: Mapping) -> dict:
    """A summary as a plain dict, its breakdowns too (what `json.dumps` needs; LazySummary and LazyBreakdowns are
    read-only Mappings)."""
    out = dict(summary)
    if isinstance(out.get("breakdowns"), LazyBreakdowns):
        out["breakdowns"] = {axis: dict(cells) for axis, cells in out["breakdowns"].items()}
    return out


def encode(name: str, metric_version: str, rows: list[IndexRow]) -> bytes:
    heads = _DiskHeads(INDEX_FORMAT, metric_version, name, [_disk_row(r) for r in rows])
    breakdowns = [r.breakdowns.raw if r.breakdowns is not None else _NULL for r in rows]
    return _ENCODER.encode(heads) + b"\n" + _ENCODER.encode(breakdowns)  # JSON as msgspec writes it holds no newline


_NULL = msgspec.Raw(b"null")


def _disk_row(r: IndexRow) -> _DiskRow:
    head = r.head if isinstance(r.head, msgspec.Raw) else msgspec.Raw(_ENCODER.encode(r.head))
    return _DiskRow(r.key, r.size, head, r.breakdowns is not None, r.sha256, r.track, r.status, r.fingerprint)


def decode(data: bytes, name: str, metric_version: str, rows_checked: bool = False) -> tuple[IndexFile | None, str | None]:
    """(index, None) when `data` is the index file `name` of this format and metric version; else (None, why).

    `rows_checked`: the file is one this disk checked row by row and marked (see "marks" below), so its rows'
    shapes are not checked again, and its breakdowns line is decoded only when a row's breakdowns are first read.
    """
    end = data.find(b"\n")
    if end < 0:  # one line: an older format's file (obsolete), or not an index file
        try:
            version = _VERSION.decode(data)
        except (msgspec.DecodeError, RecursionError) as exc:
            return None, f"does not match the index schema ({str(exc)[:120]})"
        if version.format != INDEX_FORMAT or version.metric_version != metric_version:
            return None, OBSOLETE
        return None, "does not match the index schema (no breakdowns line)"
    view = memoryview(data)
    try:
        heads = _HEADS.decode(view[:end])
    except (msgspec.DecodeError, RecursionError) as exc:
        return None, f"does not match the index schema ({str(exc)[:120]})"
    if heads.format != INDEX_FORMAT or heads.metric_version != metric_version:
        return None, OBSOLETE
    if heads.name != name:
        return None, f"is the index {heads.name[:40]!r}"
    breakdowns = _Breakdowns(view[end + 1 :], len(heads.rows))
    decoded: list = [r.head for r in heads.rows]  # a marked file's heads stay raw
    if not rows_checked:
        try:
            raws = breakdowns.raws()
        except (msgspec.DecodeError, RecursionError, ValueError) as exc:
            return None, f"has breakdowns that do not match its rows ({str(exc)[:120]})"
        for i, (row, raw) in enumerate(zip(heads.rows, raws)):
            if index_name(row.key) != name:
                return None, f"holds a row of another index ({row.key[:80]!r})"
            try:
                head = decoded[i] = _HEAD.decode(row.head)
            except (msgspec.DecodeError, RecursionError) as exc:
                return None, f"has a head that is not an object (row {row.key[:80]!r}: {str(exc)[:80]})"
            if _first_byte(raw) != (b"{" if row.breakdowns else b"n") or "breakdowns" in head:
                return None, f"has breakdowns that are not an object (row {row.key[:80]!r})"
            if any(head.get(k, UNSET) != getattr(row, k) for k in IDENTITY):
                return None, f"has identity fields that are not its head's (row {row.key[:80]!r})"
    rows = [
        IndexRow(
            r.key,
            r.size,
            head,
            LazyBreakdowns(file=breakdowns, row=i) if r.breakdowns else None,
            r.sha256,
            r.track,
            r.status,
            r.fingerprint,
        )
        for i, (r, head) in enumerate(zip(heads.rows, decoded))
    ]
    return IndexFile(heads.format, heads.metric_version, heads.name, rows), None


def read(
    root: Path, name: str, metric_version: str, summaries: int, marked: tuple | None = None
) -> tuple[IndexFile | None, os.stat_result | None, str | None]:
    """(index, its stat, problem) of index file `name`; (None, None, None) when there is none (or an obsolete one).

    A file over `max_index_bytes(summaries)` (`summaries`: the summary files it may index) is not read at all.
    `marked`: the file signature this disk checked it with, if any (its rows' shapes are then not checked again).
    """
    path = index_path(root, name)
    try:
        st = path.stat()
    except FileNotFoundError:
        return None, None, None
    except OSError as exc:
        return None, None, f"cannot be read ({type(exc).__name__})"
    limit = max_index_bytes(summaries)
    if st.st_size > limit:
        return None, None, f"is {st.st_size:,} bytes, over the {limit:,} its summaries can justify"
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, None, f"cannot be read ({type(exc).__name__})"
    index, problem = decode(data, name, metric_version, rows_checked=marked is not None and file_signature(st) == marked)
    if problem == OBSOLETE:  # written before a metric version bump (or by an older layout): nothing wrong
        return None, None, None
    return index, st, problem


def read_marked(root: Path, name: str, metric_version: str, marked: tuple) -> IndexFile | None:
    """Index file `name` when it still has the signature `marked` (so its size is the one read within bound when it
    was marked, and its rows the ones checked then); None otherwise, or when it no longer decodes as this version's."""
    path = index_path(root, name)
    try:
        if file_signature(path.stat()) != tuple(marked):
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) != marked[1]:  # changed between the stat and the read
        return None
    index, problem = decode(data, name, metric_version, rows_checked=True)
    return index if problem is None else None


def file_problem(rel: str, path: Path, metric_version: str) -> str | None:
    """Why a pulled index file (`rel`: its path under index/, "<track>/<shard>.json") must not be installed."""
    name = rel[:-5] if rel.endswith(".json") else ""
    if name.count("/") != 1:
        return "is not an index file"
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return f"unreadable ({type(exc).__name__})"
    return decode(data, name, metric_version)[1]


def write(root: Path, name: str, metric_version: str, rows: list[IndexRow], atomic_write) -> None:
    path = index_path(root, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = encode(name, metric_version, sorted(rows, key=lambda r: r.key))
    atomic_write(path, lambda fh: fh.write(data))


# ---- marks: index files checked row by row, served without the per-row checks while nothing changed ----------

Mark = tuple[tuple[int, int, int, int, int], tuple[int, int, int, int]]  # (folder signature, index file signature)
_MARKS = msgspec.json.Decoder(dict[str, tuple[tuple[int, int, int, int, int], tuple[int, int, int, int]]])


def folder_signature(st: os.stat_result, summaries: int, units_files: int) -> tuple[int, int, int, int, int]:
    """What changes whenever a file of the results folder is added, removed or renamed over (see the docstring)."""
    return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, summaries, units_files)


def file_signature(st: os.stat_result) -> tuple[int, int, int, int]:
    """What changes when an index file is replaced or written to in place."""
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def settled(st: os.stat_result, now_ns: int) -> bool:
    """Unchanged for SETTLE_NS before `now_ns` (taken before `st`): any later change gets a later timestamp."""
    return max(st.st_mtime_ns, st.st_ctime_ns) < now_ns - SETTLE_NS


def read_marks(root: Path) -> dict[str, Mark]:
    """The marks of this disk's index files; {} when there are none or the file is unreadable (every row is checked)."""
    path = Path(root) / INDEX_DIR / MARKS_FILE
    try:
        if path.stat().st_size > INDEX_HEADER_BYTES * 64:  # a few hundred index files at most: no bigger file is ours
            return {}
        return _MARKS.decode(path.read_bytes())
    except (OSError, msgspec.DecodeError, RecursionError):
        return {}


def write_marks(root: Path, marks: dict[str, Mark], atomic_write) -> None:
    path = Path(root) / INDEX_DIR / MARKS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    data = msgspec.json.encode(dict(sorted(marks.items())))
    atomic_write(path, lambda fh: fh.write(data))
