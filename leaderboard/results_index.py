"""The results index: a few files per track holding every cached summary, so start-up reads 48 files, not 10,000.

    results/index/<track>/<h>.json   three JSON documents, one line each:
        {"format", "metric_version", "name",
         "rows": [{"key", "size", "breakdowns": true|false, "sha256", "track", "status", "fingerprint"}]}
        [<row 1's head>, <row 2's head>, ...]
        [<row 1's breakdowns>, <row 2's breakdowns>, ...]          (null for a row without)

sixteen files per track (`h`: the first hex digit of the submission hash), so a
change rewrites and pushes a sixteenth of a track's rows.

A row is the summary stored under `results/<key>.json`, split in two: `head`
(identity, system, status, headline metrics with CIs, errors...) and
`breakdowns` (by language, dataset...), each on a line of its own, and the
head's IDENTITY fields (sha256, track, status, fingerprint: absent where the
head lacks them) repeated on the first line, which are all a start-up reads
of every summary. From a marked file (below) a start reads the first line
alone (a twentieth of the bytes); the rest of the file is read when one of
its heads or breakdowns is first asked for (`_Rest`: a track's files when it
is first drawn), a head decoded when something beyond its identity is first
read (`LazySummary`), breakdowns one axis at a time (`LazyBreakdowns`).

The index is a cache like the summaries it copies (it is pushed to RESULTS_REPO
too, never pulled back), and nothing in it is trusted blindly. On load:

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
# 1: each row's breakdowns inside its row (a start-up scanned them all); 2: no identity fields; 3: each head
# inside its row (a start-up read them all)
INDEX_FORMAT = 4
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
    """A row in memory: its head a dict, or None for a marked file's row (its head is row `at` of `rest`, decoded
    when first read beyond its IDENTITY fields); its breakdowns the summary's (None when it has none), decoded
    when first read."""

    key: str
    size: int  # bytes of results/<key>.json when the row was taken from it
    head: dict[str, Any] | None
    breakdowns: LazyBreakdowns | None = None
    # the head's IDENTITY fields, as the head has them (UNSET: absent); required beside a head left in `rest`
    sha256: Any = UNSET
    track: Any = UNSET
    status: Any = UNSET
    fingerprint: Any = UNSET
    rest: _Rest | None = None
    at: int = 0


class IndexFile(msgspec.Struct):
    format: int
    metric_version: str
    name: str  # "<track>/<shard>": which rows it may hold (index_name)
    rows: list[IndexRow]


class _DiskRow(msgspec.Struct, forbid_unknown_fields=True):  # a row as the first line holds it
    key: str
    size: int
    breakdowns: bool  # whether the third line holds an object for this row (else null)
    sha256: Any = UNSET  # IDENTITY: the head's own values (checked against it), absent where the head lacks them
    track: Any = UNSET
    status: Any = UNSET
    fingerprint: Any = UNSET


class _DiskFirst(msgspec.Struct, forbid_unknown_fields=True):  # the first line
    format: int
    metric_version: str
    name: str
    rows: list[_DiskRow]


class _Version(msgspec.Struct):  # what any format's file says of itself (an older one is obsolete, not broken)
    format: int
    metric_version: str


_FIRST = msgspec.json.Decoder(_DiskFirst)
_HEAD = msgspec.json.Decoder(dict[str, Any])
_VERSION = msgspec.json.Decoder(_Version)
_RAWS = msgspec.json.Decoder(list[msgspec.Raw])
_AXES = msgspec.json.Decoder(dict[str, msgspec.Raw])
_CELLS = msgspec.json.Decoder(dict[str, dict[str, Any]])  # numbers stay as written (counts are ints)


class _Rest:
    """An index file's second and third lines: every row's head, then every row's breakdowns (one raw JSON value
    per row, each line decoded so when first used).

    From the file's bytes when it was read whole; else (a marked file, of which a start read the first line) read
    from the file when a head or a breakdowns is first asked for, if the file is still the one marked. A file
    changed since (by hand: every writer of the folder replaces files, which leaves the marked inode as it was
    only for a reader holding it, so this one checks), or unreadable, gives no head and no breakdowns: `recover`
    (key -> the summary read from its own file, or None) then stands in, and the rows are left out of the
    index when it is next written.
    """

    __slots__ = ("count", "recover", "path", "signature", "offset", "_heads", "_breakdowns", "_raws", "_failed")

    def __init__(self, count: int, recover=None, *, data: bytes | None = None, path=None, signature=None, offset=0):
        """From `data[offset:]` (the whole file's bytes), or from file `path` at `offset` when first needed, if it
        still has `signature` (`recover`: see the class docstring)."""
        self.count, self.recover = count, recover or (lambda key: None)
        self.path, self.signature, self.offset = path, signature, offset
        self._heads: list[msgspec.Raw] | None = None
        self._breakdowns: memoryview | None = None
        self._raws: list[msgspec.Raw] | None = None
        self._failed = False
        if data is not None:
            self._split(data, offset)  # raises when the lines do not match the rows (decode says why)

    def _split(self, data: bytes, start: int) -> None:
        end = data.find(b"\n", start)
        if end < 0:
            raise ValueError("no breakdowns line")
        view = memoryview(data)
        heads = _RAWS.decode(view[start:end])
        if len(heads) != self.count:
            raise ValueError(f"{len(heads)} heads for {self.count} rows")
        # `_heads` last: it says the rest is read (another thread may be asking at the same time)
        self._breakdowns = view[end + 1 :]
        self._heads = heads

    def _loaded(self) -> bool:
        if self._heads is None and not self._failed:
            try:
                with open(self.path, "rb") as fh:
                    if file_signature(os.fstat(fh.fileno())) != self.signature:
                        raise ValueError("changed since it was marked")
                    fh.seek(self.offset)
                    self._split(fh.read(self.signature[1] - self.offset), 0)
            except (OSError, ValueError, msgspec.DecodeError, RecursionError) as exc:
                self._fail(f"cannot be read back ({str(exc)[:120]})")
        return self._heads is not None

    def _fail(self, problem: str) -> None:
        if not self._failed:
            self._failed = True
            name = "/".join(Path(self.path).parts[-2:]) if self.path else "(in memory)"
            log.warning("results index %s %s; its summaries are read from their own files", name, problem)

    def head(self, i: int) -> msgspec.Raw | None:
        """Row i's head as raw JSON; None when the file can no longer be read as marked."""
        return self._heads[i] if self._loaded() else None

    def breakdowns(self, i: int) -> msgspec.Raw | None:
        """Row i's breakdowns as raw JSON; None when the file can no longer be read as marked."""
        if self._raws is None and self._loaded():
            try:
                raws = _RAWS.decode(self._breakdowns)
                if len(raws) != self.count:
                    raise ValueError(f"{len(raws)} breakdowns for {self.count} rows")
                self._raws = raws
            except (ValueError, msgspec.DecodeError, RecursionError) as exc:
                self._fail(f"has breakdowns that do not match its rows ({str(exc)[:120]})")
        return self._raws[i] if self._raws is not None else None


class LazyBreakdowns(Mapping):
    """A summary's breakdowns {axis: {value: {metric: number}}}, decoded one axis at a time on first use.

    Reads like the dict it stands for (get, [], in, items, len); `raw` is the
    JSON it came from, written back to the index as is.
    """

    __slots__ = ("_raw", "_file", "_row", "_key", "_axes", "_decoded")

    def __init__(self, raw: msgspec.Raw | None = None, file: _Rest | None = None, row: int = 0, key: str = ""):
        """From its raw JSON, or from row `row` (results-cache key `key`) of an index file's breakdowns (not read
        until asked for)."""
        self._raw, self._file, self._row, self._key = raw, file, row, key
        self._axes: dict[str, msgspec.Raw] | None = None
        self._decoded: dict[str, dict] = {}

    @property
    def raw(self) -> msgspec.Raw:
        if self._raw is None:
            raw = self._file.breakdowns(self._row)
            if raw is None:  # its index file can no longer be read as marked: the summary's own file
                summary = self._file.recover(self._key) or {}
                raw = msgspec.Raw(_ENCODER.encode(summary.get("breakdowns") or {}))
            self._raw = raw
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
    """The summary a row stands for, its breakdowns decoded lazily (its head too, when the row does not hold it)."""
    if row.head is None:
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
            row = self._row
            raw = row.rest.head(row.at)
            if raw is not None:
                summary = _HEAD.decode(raw)  # checked when its file was marked (see "marks")
                if row.breakdowns is not None:
                    summary["breakdowns"] = row.breakdowns
            else:  # its index file can no longer be read as marked: the summary's own file, else what is known
                summary = row.rest.recover(row.key) or _unreadable(row)
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


def _unreadable(row: IndexRow) -> dict:
    """What stands for a summary neither its index file nor its own file can give back: its identity, and why
    nothing else (the next start rescores it: it is no longer in the cache)."""
    identity = {k: v for k in IDENTITY if (v := getattr(row, k)) is not UNSET}
    errors = ["results cache: this result could not be read back; it is rescored at the next start"]
    return {**identity, "errors": errors, "error_count": len(errors)}


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
    first = _DiskFirst(INDEX_FORMAT, metric_version, name, [_disk_row(r) for r in rows])
    heads = [_head_raw(r) for r in rows]
    breakdowns = [r.breakdowns.raw if r.breakdowns is not None else _NULL for r in rows]
    # JSON as msgspec writes it holds no newline
    return b"\n".join((_ENCODER.encode(first), _ENCODER.encode(heads), _ENCODER.encode(breakdowns)))


_NULL = msgspec.Raw(b"null")


def _disk_row(r: IndexRow) -> _DiskRow:
    return _DiskRow(r.key, r.size, r.breakdowns is not None, r.sha256, r.track, r.status, r.fingerprint)


def _head_raw(r: IndexRow) -> msgspec.Raw | None:
    """A row's head as JSON: from its file when the row does not hold it (None when that file can no longer be
    read as marked)."""
    return msgspec.Raw(_ENCODER.encode(r.head)) if r.head is not None else r.rest.head(r.at)


def _first_line(line, name: str, metric_version: str) -> tuple[_DiskFirst | None, str | None]:
    """An index file's first line, checked to be index `name` of this format and metric version; else (None, why)."""
    try:
        first = _FIRST.decode(line)
    except (msgspec.DecodeError, RecursionError) as exc:
        try:  # an older format's file (its rows have other fields): obsolete, not damaged
            version = _VERSION.decode(line)
        except (msgspec.DecodeError, RecursionError):
            return None, f"does not match the index schema ({str(exc)[:120]})"
        if version.format != INDEX_FORMAT or version.metric_version != metric_version:
            return None, OBSOLETE
        return None, f"does not match the index schema ({str(exc)[:120]})"
    if first.format != INDEX_FORMAT or first.metric_version != metric_version:
        return None, OBSOLETE
    if first.name != name:
        return None, f"is the index {first.name[:40]!r}"
    return first, None


def _rows(first: _DiskFirst, rest: _Rest, heads: list | None = None) -> list[IndexRow]:
    """The rows of a file's first line; their heads `heads` (decoded), else left in `rest` until first read."""
    return [
        IndexRow(
            r.key,
            r.size,
            heads[i] if heads is not None else None,
            LazyBreakdowns(file=rest, row=i, key=r.key) if r.breakdowns else None,
            r.sha256,
            r.track,
            r.status,
            r.fingerprint,
            rest,
            i,
        )
        for i, r in enumerate(first.rows)
    ]


def decode(
    data: bytes, name: str, metric_version: str, rows_checked: bool = False, recover=None
) -> tuple[IndexFile | None, str | None]:
    """(index, None) when `data` is the index file `name` of this format and metric version; else (None, why).

    `rows_checked`: the file is one this disk checked row by row and marked (see "marks" below), so its rows'
    shapes are not checked again, its heads are decoded when first read and its breakdowns line when a row's
    breakdowns are first read. `recover`: see `_Rest`.
    """
    end = data.find(b"\n")
    first, problem = _first_line(memoryview(data)[: end if end >= 0 else len(data)], name, metric_version)
    if first is None:
        return None, problem
    try:
        rest = _Rest(len(first.rows), recover, data=data, offset=end + 1) if end >= 0 else None
    except (msgspec.DecodeError, RecursionError, ValueError) as exc:
        return None, f"has heads that do not match its rows ({str(exc)[:120]})"
    if rest is None:
        return None, "does not match the index schema (one line)"
    if rows_checked:
        return IndexFile(first.format, first.metric_version, first.name, _rows(first, rest)), None
    try:  # decoded here, not through rest.breakdowns: a line that does not decode is this file's problem
        raws = _RAWS.decode(rest._breakdowns)
    except (msgspec.DecodeError, RecursionError) as exc:
        return None, f"has breakdowns that do not match its rows ({str(exc)[:120]})"
    if len(raws) != len(first.rows):
        return None, f"has breakdowns that do not match its rows ({len(raws)} for {len(first.rows)} rows)"
    rest._raws = raws
    heads = []
    for row, raw_head, raw in zip(first.rows, rest._heads, raws):
        if index_name(row.key) != name:
            return None, f"holds a row of another index ({row.key[:80]!r})"
        try:
            head = _HEAD.decode(raw_head)
        except (msgspec.DecodeError, RecursionError) as exc:
            return None, f"has a head that is not an object (row {row.key[:80]!r}: {str(exc)[:80]})"
        if _first_byte(raw) != (b"{" if row.breakdowns else b"n") or "breakdowns" in head:
            return None, f"has breakdowns that are not an object (row {row.key[:80]!r})"
        if any(head.get(k, UNSET) != getattr(row, k) for k in IDENTITY):
            return None, f"has identity fields that are not its head's (row {row.key[:80]!r})"
        heads.append(head)
    return IndexFile(first.format, first.metric_version, first.name, _rows(first, rest, heads)), None


def read(
    root: Path, name: str, metric_version: str, summaries: int, marked: tuple | None = None, recover=None
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
    checked = marked is not None and file_signature(st) == marked
    index, problem = decode(data, name, metric_version, rows_checked=checked, recover=recover)
    if problem == OBSOLETE:  # written before a metric version bump (or by an older layout): nothing wrong
        return None, None, None
    return index, st, problem


def read_marked(root: Path, name: str, metric_version: str, marked: tuple, recover=None) -> IndexFile | None:
    """Index file `name`'s first line (its rest read when first needed: `_Rest`), when the file still has the
    signature `marked` (so its size is the one read within bound when it was marked, and its rows the ones
    checked then); None otherwise, or when it no longer decodes as this version's."""
    path = index_path(root, name)
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if file_signature(st) != tuple(marked):
                return None
            line = fh.readline(st.st_size)
    except OSError:
        return None
    first, problem = _first_line(line, name, metric_version) if line.endswith(b"\n") else (None, "one line")
    if first is None:
        return None
    rest = _Rest(len(first.rows), recover, path=path, signature=file_signature(st), offset=len(line))
    return IndexFile(first.format, first.metric_version, first.name, _rows(first, rest))


def write(root: Path, name: str, metric_version: str, rows: list[IndexRow], atomic_write) -> None:
    """Index file `name` with `rows`, but those whose head is in a file that can no longer be read as marked (their
    summaries are read from their own files when next asked for)."""
    path = index_path(root, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = [r for r in rows if r.head is not None or r.rest.head(r.at) is not None]
    data = encode(name, metric_version, sorted(kept, key=lambda r: r.key))
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
