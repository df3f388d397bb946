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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec

from .jsonscan import scan
from .problems import Problem, Problems, SubmissionError

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


# ---- limits (spec "Limits"): checked on the bytes, before a decoder builds anything ----------
MAX_DEPTH = 64
# Objects a file may decode into: generous per allowed record (a 100-document vdr ranking is ~400),
# plus the header. Keeps memory proportional to the gold, not to what 128 MiB of `{}` can hold.
VALUES_PER_RECORD = 512
HEADER_VALUES = 10_000


@dataclass(frozen=True)
class Limits:
    records: int  # prediction records
    values: int  # JSON values (containers, scalars, object keys) in the whole file
    depth: int = MAX_DEPTH

    @classmethod
    def for_gold_units(cls, units: int) -> Limits:
        records = 2 * units + 100
        return cls(records, records * VALUES_PER_RECORD + HEADER_VALUES)


# When the track cannot be read from the file (it is rejected anyway), memory is still bounded.
FALLBACK_LIMITS = Limits(100_000, 4_000_000)


def rough_values(data: bytes) -> int:
    """An upper bound on the values `data` decodes into, at C speed (string contents are counted too)."""
    return data.count(b",") + data.count(b":") + data.count(b"{") + data.count(b"[") + data.count(b"\n") + 1


def structure_depth(value, limit: int = MAX_DEPTH) -> int:
    """Nesting depth of a decoded value, looking no deeper than limit + 1 (no recursion)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            if depth <= limit:
                stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def parse_envelope(data: bytes, name: str, max_bytes: int = DEFAULT_MAX_BYTES,
                   limits_of: Callable[[object], Limits] | None = None) -> Envelope:
    """The envelope of a (compressed) submission; raises SubmissionError at the first problem."""
    problems = Problems()
    env = parse_raw(read_bytes(data, name, max_bytes), name, limits_of, problems)
    if not problems.ok:
        raise SubmissionError(problems.errors[0])
    return env


def parse_raw(raw: bytes, name: str, limits_of: Callable[[object], Limits] | None = None,
              problems: Problems | None = None) -> Envelope:
    """The envelope of already decompressed bytes, read within the limits of its track.

    `limits_of(track)` gives the limits for the header's track value (None:
    FALLBACK_LIMITS). Problems that leave the rest of the file readable (a bad
    JSONL line, a line nested too deep) go to `problems` and reading goes on;
    a file that cannot be read at all raises SubmissionError.
    """
    problems = Problems() if problems is None else problems
    limits_of = limits_of or (lambda track: FALLBACK_LIMITS)
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if not raw.strip():
        raise SubmissionError(Problem("file", "file is empty"))
    if submission_extension(name).startswith(".jsonl"):
        decode(raw)  # bytes that are not UTF-8: one precise message (line, offset) before reading lines
        return _parse_jsonl(raw, limits_of, problems)
    return _parse_json(raw, limits_of, problems)


_TRACK_FIELD = re.compile(rb'"track"\s*:\s*"((?:[^"\\]|\\.){0,200})"')


def _json_track(raw: bytes) -> object:
    """The track named by a JSON envelope, read without building its predictions."""
    try:
        doc = msgspec.json.decode(raw, type=dict[str, msgspec.Raw])
        return msgspec.json.decode(doc["track"]) if "track" in doc else None
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        m = _TRACK_FIELD.search(raw)  # broken elsewhere: the first "track" key tells which limits apply
        return m.group(1).decode("utf-8", "replace") if m else None


def _parse_json(raw: bytes, limits_of: Callable[[object], Limits], problems: Problems) -> Envelope:
    limits = limits_of(_json_track(raw))
    if rough_values(raw) > limits.values:  # only then is a precise (slower) measure needed
        shape = scan(raw, lines=False, depth_limit=limits.depth)
        if shape.max_depth > limits.depth:
            raise SubmissionError(Problem("file", depth_message(limits.depth, shape.max_depth)))
        if shape.top_items > limits.records:
            raise SubmissionError(Problem("file", records_message(limits.records), field="predictions"))
        if shape.values > limits.values:
            raise SubmissionError(Problem("file", values_message(limits.values)))
    try:
        doc = _loads(decode(raw))
    except RecursionError:
        raise SubmissionError(Problem("file", depth_message(limits.depth))) from None
    except ValueError as exc:
        raise SubmissionError(Problem("file", _json_error(exc))) from None
    if structure_depth(doc, limits.depth) > limits.depth:
        raise SubmissionError(Problem("file", depth_message(limits.depth)))
    if not isinstance(doc, dict):
        raise SubmissionError(Problem("file", f"expected a JSON object with track, system and predictions, got {type(doc).__name__}"))
    preds = doc.get("predictions")
    if not isinstance(preds, list):
        raise SubmissionError(Problem("file", "field predictions: expected a list of prediction records", field="predictions"))
    if len(preds) > limits.records:
        raise SubmissionError(Problem("file", records_message(limits.records), field="predictions"))
    return Envelope(doc.get("track"), doc.get("system"), preds,
                    [f"predictions[{i}]" for i in range(len(preds))], "header")


def depth_message(limit: int, found: int | None = None) -> str:
    return f"JSON nested deeper than {limit} levels" + (f" ({found:,} levels)" if found else "")


def records_message(limit: int) -> str:
    return f"more than {limit:,} prediction records (the limit for this track: twice its gold units plus 100)"


def values_message(limit: int) -> str:
    return (f"more than {limit:,} JSON values (objects, lists, strings, numbers) in the file, "
            f"far beyond what this track's predictions need")


def _nonblank_lines(raw: bytes, start: int = 0):
    """(1-based line number, bytes) of each non-blank line from offset `start`, one at a time."""
    number, pos, n = 1 + raw.count(b"\n", 0, start), start, len(raw)
    while pos < n:
        end = raw.find(b"\n", pos)
        end = n if end < 0 else end
        line = raw[pos:end]
        if line.strip():
            yield number, line, pos
        number, pos = number + 1, end + 1


def _parse_jsonl(raw: bytes, limits_of: Callable[[object], Limits], problems: Problems) -> Envelope:
    number, line, pos = next(_nonblank_lines(raw))
    header = _header(line, number)
    limits = limits_of(header.get("track"))
    header_end = raw.find(b"\n", pos)
    body = raw[header_end + 1:] if header_end >= 0 else b""
    body = _within_record_limit(body, number, limits, problems)
    deep: set[int] = set()
    if rough_values(body) > limits.values:
        shape = scan(body, lines=True, depth_limit=limits.depth, keep_lines=limits.records + 1)
        if shape.values > limits.values:
            raise SubmissionError(Problem("file", values_message(limits.values)))
        deep = {n + number for n in shape.deep_lines}
    records, locations = [], []
    for n, text, _ in _nonblank_lines(body):
        where = f"line {n + number}"
        if n + number in deep:
            problems.error(where, depth_message(limits.depth))
            continue
        try:
            obj = _loads(text.decode("utf-8"))
        except RecursionError:
            problems.error(where, depth_message(limits.depth))
            continue
        except ValueError as exc:
            problems.error(where, _json_error(exc, n + number - 1))
            continue
        if (text.count(b"[") + text.count(b"{") > limits.depth
                and structure_depth(obj, limits.depth) > limits.depth):
            problems.error(where, depth_message(limits.depth))
            continue
        records.append(obj)
        locations.append(where)
    return Envelope(header.get("track"), header.get("system"), records, locations, f"line {number}")


def _header(line: bytes, number: int) -> dict:
    where = f"line {number}"
    if rough_values(line) > HEADER_VALUES:
        shape = scan(line, lines=False, depth_limit=MAX_DEPTH)
        if shape.max_depth > MAX_DEPTH:
            raise SubmissionError(Problem(where, depth_message(MAX_DEPTH, shape.max_depth)))
        if shape.values > HEADER_VALUES:
            raise SubmissionError(Problem(where, f"the header holds more than {HEADER_VALUES:,} JSON values"))
    try:
        obj = _loads(line.decode("utf-8"))
    except RecursionError:
        raise SubmissionError(Problem(where, depth_message(MAX_DEPTH))) from None
    except ValueError as exc:
        raise SubmissionError(Problem(where, _json_error(exc, number - 1))) from None
    if not isinstance(obj, dict) or "track" not in obj:
        raise SubmissionError(Problem(where, 'the first line must be the header {"track": ..., "system": {...}}'))
    if structure_depth(obj) > MAX_DEPTH:
        raise SubmissionError(Problem(where, depth_message(MAX_DEPTH)))
    return obj


def _within_record_limit(body: bytes, header_line: int, limits: Limits, problems: Problems) -> bytes:
    """The body up to its last allowed record; one problem at the first record past the limit."""
    if body.count(b"\n") < limits.records:  # cannot hold more lines than allowed: no need to look
        return body
    for count, (n, _, pos) in enumerate(_nonblank_lines(body), start=1):
        if count > limits.records:
            problems.error(f"line {n + header_line}", records_message(limits.records) + "; reading stopped here")
            return body[:pos]
    return body


_FIRST_VISIBLE = re.compile(rb"\S")


def with_system(data: bytes, name: str, updates: dict, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The same submission with `updates` merged into its header's system (the submit form's fields).

    Only the header changes; the predictions are kept byte for byte and never decoded into objects (this
    runs before validation, so a bomb must not blow up here). Raises ValueError with a readable message
    when the header cannot be read.
    """
    try:
        raw = read_bytes(data, name, max_bytes)
    except SubmissionError as exc:
        raise ValueError(str(exc.problem)) from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    ext = submission_extension(name)
    out = _jsonl_with_system(raw, updates) if ext.startswith(".jsonl") else _json_with_system(raw, updates)
    return gzip.compress(out, mtime=0) if ext.endswith(".gz") else out


def _merged(header: dict, updates: dict) -> dict:
    system = header.get("system") if isinstance(header.get("system"), dict) else {}
    return {**system, **updates}


def _jsonl_with_system(raw: bytes, updates: dict) -> bytes:
    # Only the header line is decoded: a flood of millions of lines is never split into millions of strings.
    first = _FIRST_VISIBLE.search(raw)
    start = raw.rfind(b"\n", 0, first.start()) + 1 if first else 0
    end = raw.find(b"\n", start) if first else -1
    end = len(raw) if end < 0 else end
    try:
        header = _loads(decode(raw[start:end])) if first else None
    except SubmissionError as exc:
        raise ValueError(str(exc.problem)) from None
    except (ValueError, RecursionError) as exc:
        line = raw.count(b"\n", 0, start) + 1
        raise ValueError(f"line {line}: {_json_error(exc)}") from None
    if not isinstance(header, dict):
        raise ValueError("the first line must be the header {\"track\": ..., \"system\": {...}}")
    header["system"] = _merged(header, updates)
    return raw[:start] + json.dumps(header, ensure_ascii=False).encode("utf-8") + raw[end:]


def _json_with_system(raw: bytes, updates: dict) -> bytes:
    # The top level only: every other value stays raw JSON text (msgspec.Raw), written back unchanged.
    try:
        doc = msgspec.json.decode(raw, type=dict[str, msgspec.Raw])
        header = {"system": msgspec.json.decode(doc["system"])} if "system" in doc else {}
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        raise ValueError("expected a JSON object with track, system and predictions") from None
    doc["system"] = msgspec.Raw(json.dumps(_merged(header, updates), ensure_ascii=False).encode("utf-8"))
    return msgspec.json.encode(doc)
