"""A scored submission's result, typed, and the table of a track's results.

`Summary` is what the board knows of one scored (or invalid) submission: its
identity (content hash, track, gold hash, metric version, judge), the system,
its status, both protocols' numbers (the board's overall / ci / breakdowns / n
/ missing, and the official script's in `official` for a track that declares
deviations, with each deviation's effect), the judge's ledger, the
fingerprint and the problems found. It is stored once, as
`results/<key>.json` beside the per-unit arrays (`<key>.npz`).

A track's results are also one table, `results/tables/<track>.parquet`: a row
per result, its identity as typed columns, the rest as one JSON column per
part, so a start-up reads the identity and `head` columns of every row, a
track's `breakdowns` when that track is first drawn, and `official` /
`deviations` only when the official protocol or a system's detail asks. Until
then those fields are `UNSET` (never seen by a page: `ResultsCache.complete`
fills them before the board hands an entry out). A table is rewritten whole
(temp file + rename) when one of its results changes; it is a copy of the
per-result files, trusted only row by row (`scoring.ResultsCache`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec
import pyarrow as pa

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

_SUMMARY = msgspec.json.Decoder(Summary)
_SUMMARIES = msgspec.json.Decoder(list[Summary])
_PART_DECODERS = {
    "breakdowns": msgspec.json.Decoder(list[dict[str, dict[str, dict[str, Any]]]]),
    "official": msgspec.json.Decoder(list[Protocol | None]),
    "deviations": msgspec.json.Decoder(list[list[Any] | None]),
}
_ENCODER = msgspec.json.Encoder()


def encode(summary: Summary) -> bytes:
    return _ENCODER.encode(summary)


def decode(data: bytes) -> Summary:
    """A per-result file's summary; raises msgspec.DecodeError (with where) when it is not one."""
    return _SUMMARY.decode(data)


def complete(summary: Summary) -> bool:
    return all(getattr(summary, part) is not UNSET for part in PARTS)


# ---- the table of a track's results --------------------------------------------------------------------

TABLES_DIR = "tables"
TABLE_FORMAT = "1"  # the layout below; a table of another format (or metric version) is rebuilt
UNTRACKED = "_untracked"  # the table of invalid files whose track is unknown
IDENTITY = ("sha256", "track", "gold_sha256", "judge", "status", "fingerprint")
SCHEMA = pa.schema(
    [
        ("key", pa.string()),
        ("size", pa.int64()),  # of results/<key>.json when the row was taken from it
        ("mtime_ns", pa.int64()),  # its modification time then: a file rewritten since is read again
        ("units", pa.bool_()),  # whether results/<key>.npz stood beside it
        *((name, pa.string()) for name in IDENTITY),
        ("head", pa.binary()),  # the summary's JSON without its PARTS
        *((part, pa.binary()) for part in PARTS),  # each part's JSON (null: none)
    ]
)


def table_name(track: str | None) -> str:
    return track if track else UNTRACKED


def table_path(root: Path, name: str) -> Path:
    return Path(root) / TABLES_DIR / f"{name}.parquet"


class Row(msgspec.Struct):
    """A table row as the cache holds it: where its file stood, and its summary (parts decoded or UNSET)."""

    key: str
    size: int
    mtime_ns: int
    units: bool
    summary: Summary


def write_table(path: Path, metric_version: str, rows: Iterable[Row], atomic_write) -> bytes:
    """The table of `rows` (complete summaries), written atomically; its bytes."""
    import pyarrow.parquet as pq  # here: a start that finds its tables sound never writes one

    rows = sorted(rows, key=lambda r: r.key)
    heads, parts = [], {p: [] for p in PARTS}
    for r in rows:
        s = r.summary
        heads.append(_ENCODER.encode(msgspec.structs.replace(s, breakdowns=UNSET, official=UNSET, deviations=UNSET)))
        for p in PARTS:
            value = getattr(s, p)
            parts[p].append(None if value is None else _ENCODER.encode(value))
    columns = {
        "key": [r.key for r in rows],
        "size": [r.size for r in rows],
        "mtime_ns": [r.mtime_ns for r in rows],
        "units": [r.units for r in rows],
        **{name: [getattr(r.summary, name) for r in rows] for name in IDENTITY},
        "head": heads,
        **parts,
    }
    table = pa.table(columns, schema=SCHEMA.with_metadata({"format": TABLE_FORMAT, "metric_version": metric_version}))
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd", compression_level=1)
    data = sink.getvalue().to_pybytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda fh: fh.write(data))
    return data


class TableProblem(ValueError):
    """Why a table cannot be served (it is rebuilt from the per-result files)."""


def read_table(path: Path, metric_version: str) -> pa.Table | None:
    """The table at `path` (all columns but the PARTS, read later), None when there is none; TableProblem when it
    is not one of this format and metric version."""
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
    if not file.schema_arrow.remove_metadata().equals(SCHEMA):
        raise TableProblem("does not have the results table's columns")
    try:
        return file.read(use_threads=False)
    except (OSError, pa.ArrowException) as exc:
        raise TableProblem(f"cannot be read ({str(exc)[:120]})") from exc


def joined(values: list[bytes | None]) -> bytes:
    """A JSON array of the JSON values `values` (null for None): decoded in one call, not one per row."""
    return b"[" + b",".join(b"null" if v is None else v for v in values) + b"]"


def decode_heads(heads: list[bytes]) -> list[Summary]:
    """The summaries of a table's head column (their PARTS UNSET); raises msgspec.DecodeError."""
    summaries = _SUMMARIES.decode(joined(heads))
    for s in summaries:
        s.breakdowns = s.official = s.deviations = UNSET
    return summaries


def decode_part(part: str, values: list[bytes | None]) -> list[Any]:
    return _PART_DECODERS[part].decode(joined(values))


def file_stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None
