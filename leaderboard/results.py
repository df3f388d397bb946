"""A scored submission's result, typed, and the table of a track's results.

`Summary` is what the board knows of one scored (or invalid) submission: its
identity (content hash, track, gold hash, metric version, judge), the system,
its status, both protocols' numbers (the board's overall / ci / breakdowns / n
/ missing, and the official script's in `official` for a track that declares
deviations, with each deviation's effect), the judge's ledger, the
fingerprint and the problems found. It is stored once, as
`results/<key>.json` beside the per-unit arrays (`<key>.npz`).

A track's results are also one table, `results/tables/<track>.parquet`: a row
per result, its identity and what a `datasets` user reads of it (the system, each
metric with its CI under both protocols, n, missing, errors) as typed columns
(`columns`), the rest as one msgpack column per part. A start reads the
identity columns of every row (duplicates, the judge queue and "is it cached?"
need no more), a track's `head` (system, headline numbers, problems) and
`breakdowns` when that track is first drawn, and `official` / `deviations`
only when the official protocol or a system's detail asks. Until then a
summary holds its identity only, its PARTS `UNSET`; the board completes a
track's summaries (`ResultsCache.complete`) before it hands its entries out,
so a page never sees one that is not whole. A table is rewritten whole (temp
file + rename) when one of its results changes; it is a copy of the
per-result files, trusted only row by row (`scoring.ResultsCache`).
RESULTS_REPO publishes the same table's rows (results_dataset.py), without
the columns only the board reads (PRIVATE).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec
import pyarrow as pa

from .tracks import TRACKS, Track

UNSET = msgspec.UNSET
NO_JUDGE = "none"


class Protocol(msgspec.Struct, kw_only=True):
    """One protocol's numbers of a file: what the table, charts and detail view read."""

    overall: dict[str, Any] = {}
    ci: dict[str, Any] = {}
    breakdowns: dict[str, dict[str, dict[str, Any]]] = {}
    n: int | None = None
    missing: int | None = None
    notes: Any | msgspec.UnsetType = UNSET  # what the official protocol left out or could not read in this file


class Summary(msgspec.Struct, kw_only=True):
    """One submission's result (status "pending" before it is scored: no numbers yet)."""

    sha256: str = ""
    track: str | None = None
    system: dict[str, Any] = {}
    status: str = "pending"  # scored | invalid | pending
    errors: list[str] = []
    error_count: int = 0
    warnings: list[str] = []
    records: int = 0
    metric_version: str = ""
    scored_at: str = ""
    judge: str = NO_JUDGE
    gold_sha256: str | None = None
    fingerprint: str | None = None  # of the parsed predictions: equal for duplicates
    n: int | None = None
    missing: int | None = None
    overall: dict[str, Any] = {}
    ci: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    judge_ledger: dict[str, Any] | None = None
    # The parts a table reads only when asked (see the module docstring): UNSET until then.
    breakdowns: dict[str, dict[str, dict[str, Any]]] | msgspec.UnsetType = {}
    official: Protocol | None | msgspec.UnsetType = None  # the official script's numbers (tracks with deviations)
    deviations: list[Any] | None | msgspec.UnsetType = None  # each deviation's stepwise effect on this file


PENDING = Summary()
PARTS = ("breakdowns", "official", "deviations")  # decoded on demand from a table
IDENTITY = ("sha256", "track", "gold_sha256", "judge", "status", "fingerprint")
# What a table's head column holds: every field but the identity and the PARTS.
HEAD = tuple(f for f in Summary.__struct_fields__ if f not in IDENTITY and f not in PARTS)

_SUMMARY = msgspec.json.Decoder(Summary)
_HEADS = msgspec.msgpack.Decoder(list[Summary])
_PART_DECODERS = {
    "breakdowns": msgspec.msgpack.Decoder(list[dict[str, dict[str, dict[str, Any]]]]),
    "official": msgspec.msgpack.Decoder(list[Protocol | None]),
    "deviations": msgspec.msgpack.Decoder(list[list[Any] | None]),
}
_ENCODER = msgspec.json.Encoder()
_PACK = msgspec.msgpack.Encoder()


def encode(summary: Summary) -> bytes:
    return _ENCODER.encode(summary)


def decode(data: bytes) -> Summary:
    """A per-result file's summary; raises msgspec.DecodeError (with where) when it is not one."""
    return _SUMMARY.decode(data)


def complete(summary: Summary) -> bool:
    return summary.metric_version is not UNSET and all(getattr(summary, part) is not UNSET for part in PARTS)


_UNREAD = Summary(**dict.fromkeys((*HEAD, *PARTS), UNSET))  # msgspec checks no types on construction


def identity_only(sha256, track, gold_sha256, judge, status, fingerprint) -> Summary:
    """A summary from a table's identity columns: its head and PARTS UNSET until `ResultsCache.complete`."""
    return msgspec.structs.replace(
        _UNREAD, sha256=sha256, track=track, gold_sha256=gold_sha256, judge=judge, status=status, fingerprint=fingerprint
    )


# ---- the table of a track's results --------------------------------------------------------------------

TABLES_DIR = "tables"
TABLE_FORMAT = "2"  # the layout below; a table of another format (or metric version) is rebuilt
UNTRACKED = "_untracked"  # the table of invalid files whose track is unknown
BOOKKEEPING = (
    ("key", pa.string()),
    ("size", pa.int64()),  # of results/<key>.json when the row was taken from it
    ("mtime_ns", pa.int64()),  # its modification time then: a file rewritten since is read again
    ("units", pa.bool_()),  # whether results/<key>.npz stood beside it
)
BLOBS = ("head", *PARTS)  # the summary's HEAD fields and each part (msgpack; a part's null: none)
PRIVATE = tuple(name for name, _ in BOOKKEEPING[1:]) + BLOBS  # what only the board reads: never published


def _int(v):
    return v if type(v) is int and -(2**63) <= v < 2**63 else None  # an invalid file's header may hold anything


def _float(v):
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def columns(track: Track | None) -> list[tuple[str, pa.DataType, Any]]:
    """The typed columns of a track's results, each with how it is read from a summary: the system's fields, then
    every metric and its 95% CI bounds, under the official script's protocol too where the track deviates from
    it, the scorer's extra columns (not those computed across systems), n, missing, the problems' counts."""
    out = []
    for f in track.system_fields if track else ():
        kind = pa.int64() if f.kind == "int" else pa.string()
        read = _int if f.kind == "int" else (lambda v: None if v is None else str(v))
        out.append((f.key, kind, lambda s, k=f.key, read=read: read(s.system.get(k))))
    protocols = [("", lambda s: s)]
    if track is not None and track.deviations:
        protocols.append(("official:", lambda s: s.official or Protocol()))
    for prefix, part in protocols:
        for m in track.metrics if track else ():
            out += [
                (f"{prefix}{m.key}", pa.float64(), lambda s, k=m.key, part=part: _float(part(s).overall.get(k))),
                (f"{prefix}{m.key}:low", pa.float64(), lambda s, k=m.key, part=part: _float(_bound(part(s).ci, k, 0))),
                (f"{prefix}{m.key}:high", pa.float64(), lambda s, k=m.key, part=part: _float(_bound(part(s).ci, k, 1))),
            ]
    for c in track.extra_columns if track else ():
        if c.key not in track.derived_columns:
            out.append((c.key, pa.float64(), lambda s, k=c.key: _float(s.overall.get(k))))
    out += [
        ("n", pa.int64(), lambda s: _int(s.n)),
        ("missing", pa.int64(), lambda s: _int(s.missing)),
        ("errors", pa.int64(), lambda s: s.error_count),
        ("warnings", pa.int64(), lambda s: len(s.warnings)),
        ("records", pa.int64(), lambda s: s.records),
        ("scored_at", pa.string(), lambda s: s.scored_at),
    ]
    return out


def _bound(ci: dict, key: str, i: int):
    pair = ci.get(key)
    return pair[i] if isinstance(pair, list | tuple) and len(pair) == 2 else None


def schema(track: Track | None) -> pa.Schema:
    return pa.schema(
        [
            *BOOKKEEPING,
            *((name, pa.string()) for name in IDENTITY),
            *((name, kind) for name, kind, _ in columns(track)),
            *((blob, pa.binary()) for blob in BLOBS),
        ]
    )


def table_name(track: str | None) -> str:
    return track if track else UNTRACKED


def table_path(root: Path, name: str) -> Path:
    return Path(root) / TABLES_DIR / f"{name}.parquet"


def _schema_of(path: Path) -> pa.Schema:
    return schema(TRACKS.get(Path(path).stem))


class Row(msgspec.Struct):
    """A table row as the cache holds it: where its file stood, and its summary (parts decoded or UNSET)."""

    key: str
    size: int
    mtime_ns: int
    units: bool
    summary: Summary


def write_table(path: Path, metric_version: str, rows: Iterable[Row], atomic_write) -> bytes:
    """The table of `rows` (complete summaries of the track the path names), written atomically; its bytes."""
    import pyarrow.parquet as pq  # here: a start that finds its tables sound never writes one

    rows = sorted(rows, key=lambda r: r.key)
    heads, parts = [], {p: [] for p in PARTS}
    for r in rows:
        s = r.summary
        heads.append(_PACK.encode({f: getattr(s, f) for f in HEAD}))
        for p in PARTS:
            value = getattr(s, p)
            parts[p].append(None if value is None else _PACK.encode(value))
    data = {
        "key": [r.key for r in rows],
        "size": [r.size for r in rows],
        "mtime_ns": [r.mtime_ns for r in rows],
        "units": [r.units for r in rows],
        **{name: [getattr(r.summary, name) for r in rows] for name in IDENTITY},
        **{name: [read(r.summary) for r in rows] for name, _, read in columns(TRACKS.get(path.stem))},
        "head": heads,
        **parts,
    }
    table = pa.table(data, schema=_schema_of(path).with_metadata({"format": TABLE_FORMAT, "metric_version": metric_version}))
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd", compression_level=1)
    data = sink.getvalue().to_pybytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda fh: fh.write(data))
    return data


class TableProblem(ValueError):
    """Why a table cannot be served (it is rebuilt from the per-result files)."""


def read_table(path: Path, metric_version: str) -> tuple[pa.Table, Any] | None:
    """(the table at `path`, its bookkeeping and identity columns; the open file to read those from when asked: as
    it was read, even if it is replaced since), None when there is none; TableProblem when it is not one of this
    format and metric version."""
    import pyarrow.parquet as pq

    try:
        file = pq.ParquetFile(path, memory_map=True)
    except FileNotFoundError:
        return None
    except (OSError, pa.ArrowException) as exc:
        raise TableProblem(f"is not a parquet file ({str(exc)[:120]})") from exc
    meta = file.schema_arrow.metadata or {}
    if meta.get(b"format") != TABLE_FORMAT.encode() or meta.get(b"metric_version") != metric_version.encode():
        raise TableProblem("is for another format or metric version")
    if not file.schema_arrow.remove_metadata().equals(_schema_of(path)):
        raise TableProblem("does not have the results table's columns")
    try:
        return file.read([name for name, _ in BOOKKEEPING] + list(IDENTITY), use_threads=False), file
    except (OSError, pa.ArrowException) as exc:
        raise TableProblem(f"cannot be read ({str(exc)[:120]})") from exc


def _packed_array(values: list[bytes | None]) -> bytes:
    """A msgpack array of the msgpack values `values` (nil for None): decoded in one call, not one per row."""
    n = len(values)
    header = bytes([0x90 | n]) if n < 16 else b"\xdc" + n.to_bytes(2, "big") if n < 65536 else b"\xdd" + n.to_bytes(4, "big")
    return header + b"".join(b"\xc0" if v is None else v for v in values)


def read_part(file, part: str, rows: list[int]) -> list[Any]:
    """Column `part` ("head" or one of PARTS) of rows `rows` of an open table file, decoded (a head as a Summary
    of its HEAD fields); raises OSError, ArrowException, msgspec.DecodeError."""
    column = file.read([part], use_threads=False).column(0).take(pa.array(rows, pa.int64())).to_pylist()
    return (_HEADS if part == "head" else _PART_DECODERS[part]).decode(_packed_array(column))
