"""Reading a submission file: size cap, gzip, UTF-8, JSON / JSONL envelope.

Track-independent: it yields the header (track, system) and the raw records
with their location; the track validates the records.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from .problems import Problem, SubmissionError

DEFAULT_MAX_BYTES = 128 * 1024 * 1024
EXTENSIONS = (".json", ".jsonl", ".json.gz", ".jsonl.gz")


@dataclass
class Envelope:
    track: object
    system: object
    records: list  # raw parsed records, in file order
    locations: list[str]  # "line 7" or "predictions[5]", aligned with records
    header_where: str


def submission_extension(name: str) -> str | None:
    lower = name.lower()
    for ext in sorted(EXTENSIONS, key=len, reverse=True):
        if lower.endswith(ext):
            return ext
    return None


def read_bytes(data: bytes, name: str, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The decompressed bytes, refusing to go past `max_bytes` (so a gzip bomb stops at the cap)."""
    ext = submission_extension(name)
    if ext is None:
        raise SubmissionError(Problem("file", f"unsupported file name {name!r}: expected one of {', '.join(EXTENSIONS)}"))
    if not ext.endswith(".gz"):
        if len(data) > max_bytes:
            raise SubmissionError(Problem("file", f"file is {len(data):,} bytes, over the size cap of {max_bytes:,} bytes"))
        return data
    out = io.BytesIO()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
            while chunk := gz.read(1 << 20):
                out.write(chunk)
                if out.tell() > max_bytes:
                    raise SubmissionError(Problem(
                        "file", f"decompressed content exceeds the size cap of {max_bytes:,} bytes"))
    except (OSError, EOFError, zlib.error) as exc:
        raise SubmissionError(Problem("file", f"not a valid gzip file: {exc}")) from None
    return out.getvalue()


def read_file(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The file's bytes, reading at most one byte past the cap (a 200 MB file is never loaded whole)."""
    path = Path(path)
    with open(path, "rb") as fh:
        raw = fh.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise SubmissionError(Problem("file", f"file is over the size cap of {max_bytes:,} bytes"))
    return raw


def _reject_constant(name: str):
    raise ValueError(f"{name} is not allowed (numbers must be finite)")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)  # one decoder, not one per line


def loads_strict(text: str):
    """json.loads refusing NaN / Infinity literals."""
    return _DECODER.decode(text)


_loads = loads_strict


def _json_error(exc: Exception, line_offset: int = 0) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON at line {exc.lineno + line_offset}, column {exc.colno}: {exc.msg}"
    return f"invalid JSON: {exc}"


def decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SubmissionError(Problem(
            f"line {line}", f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}")) from None


def parse_envelope(data: bytes, name: str, max_bytes: int = DEFAULT_MAX_BYTES) -> Envelope:
    return parse_raw(read_bytes(data, name, max_bytes), name)


def parse_raw(raw: bytes, name: str) -> Envelope:
    """The envelope of already decompressed bytes."""
    text = decode(raw)
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise SubmissionError(Problem("file", "file is empty"))
    if submission_extension(name).startswith(".jsonl"):
        return _parse_jsonl(text)
    return _parse_json(text)


def _parse_json(text: str) -> Envelope:
    try:
        doc = _loads(text)
    except ValueError as exc:
        raise SubmissionError(Problem("file", _json_error(exc))) from None
    if not isinstance(doc, dict):
        raise SubmissionError(Problem("file", f"expected a JSON object with track, system and predictions, got {type(doc).__name__}"))
    preds = doc.get("predictions")
    if not isinstance(preds, list):
        raise SubmissionError(Problem("file", "field predictions: expected a list of prediction records", field="predictions"))
    return Envelope(doc.get("track"), doc.get("system"), preds,
                    [f"predictions[{i}]" for i in range(len(preds))], "header")


def _parse_jsonl(text: str) -> Envelope:
    lines = text.split("\n")
    records, locations = [], []
    header = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = _loads(line)
        except ValueError as exc:
            raise SubmissionError(Problem(f"line {number}", _json_error(exc, number - 1))) from None
        if header is None:
            if not isinstance(obj, dict) or "track" not in obj:
                raise SubmissionError(Problem(
                    f"line {number}", 'the first line must be the header {"track": ..., "system": {...}}'))
            header = (obj, number)
            continue
        records.append(obj)
        locations.append(f"line {number}")
    obj, number = header
    return Envelope(obj.get("track"), obj.get("system"), records, locations, f"line {number}")


_FIRST_VISIBLE = re.compile(r"\S")


def with_system(data: bytes, name: str, updates: dict, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The same submission with `updates` merged into its header's system (the submit form's fields).

    Only the header changes; prediction lines are kept byte for byte. Raises
    ValueError with a readable message when the file cannot be read.
    """
    try:
        raw = read_bytes(data, name, max_bytes)
        text = decode(raw)
    except SubmissionError as exc:
        raise ValueError(str(exc.problem)) from None
    ext = submission_extension(name)
    if ext.startswith(".jsonl"):
        # Only the header line is decoded: a flood of millions of lines is never split into millions of strings.
        first = _FIRST_VISIBLE.search(text)
        start = text.rfind("\n", 0, first.start()) + 1 if first else 0
        end = text.find("\n", start) if first else -1
        end = len(text) if end < 0 else end
        try:
            header = _loads(text[start:end]) if first else None
        except ValueError as exc:
            raise ValueError(f"line {text.count(chr(10), 0, start) + 1}: {_json_error(exc)}") from None
        if not isinstance(header, dict):
            raise ValueError("the first line must be the header {\"track\": ..., \"system\": {...}}")
        system = header.get("system") if isinstance(header.get("system"), dict) else {}
        header["system"] = {**system, **updates}
        out = (text[:start] + json.dumps(header, ensure_ascii=False) + text[end:]).encode("utf-8")
    else:
        try:
            doc = _loads(text)
        except ValueError as exc:
            raise ValueError(_json_error(exc)) from None
        if not isinstance(doc, dict):
            raise ValueError("expected a JSON object with track, system and predictions")
        system = doc.get("system") if isinstance(doc.get("system"), dict) else {}
        doc["system"] = {**system, **updates}
        out = json.dumps(doc, ensure_ascii=False).encode("utf-8")
    return gzip.compress(out, mtime=0) if ext.endswith(".gz") else out
