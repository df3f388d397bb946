"""Reading a submission file: size cap, gzip, UTF-8, JSON / JSONL envelope, within limits.

Track-independent: it yields the header (track, system) and the raw records
with their location; the track validates the records. The caller says which
Limits apply to the header's track (records, JSON values, depth): they are
checked on the bytes before a decoder builds anything, so every path (CLI,
Submit, Hub pull) reads a file into at most what its track's gold justifies.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path

import msgspec
import numpy as np

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
                    raise SubmissionError(Problem("file", f"decompressed content exceeds the size cap of {max_bytes:,} bytes"))
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
        raise SubmissionError(Problem(f"line {line}", f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}")) from None


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


_VALUE_MARKS = (b",", b":", b"{", b"[", b"\n")  # each value but the first of a text follows one of these
_MARKS = b"".join(_VALUE_MARKS)
_MARK_BYTES = np.frombuffer(_MARKS, dtype=np.uint8)
_QUOTE, _BACKSLASH, _NEWLINE = ord('"'), ord("\\"), ord("\n")
CHUNK = 1 << 20  # bytes measured per numpy pass: temporary arrays stay a few MB whatever the file


def rough_values(data: bytes) -> int:
    """An upper bound on the values `data` decodes into, at C speed (string contents are counted too).

    Every value a decoder builds is a container, a scalar, a string or an
    object key; after the first of a text each follows a comma, a colon, an
    opener or (JSONL) a newline. The marks are counted as the bytes one C pass deletes (a third of the time
    of one count pass per mark), a chunk at a time: the copy stays CHUNK bytes whatever the file.
    """
    kept = sum(len(data[at : at + CHUNK].translate(None, _MARKS)) for at in range(0, len(data), CHUNK))
    return len(data) - kept + 1


def values_over(data: bytes, limit: int, lines: bool = False) -> bool | str:
    """Whether `data` decodes into more than `limit` values; exact about strings, never decodes.

    True, or "depth" when the excess comes with a run of openers deeper than
    MAX_DEPTH (a deep nesting is better told as such than as a count). `lines`:
    JSONL, where a string never runs past the end of its line.
    """
    if len(data) < limit:  # every value but the first follows a byte of its own: a short text cannot hold more
        return False
    if rough_values(data) <= limit:
        return False
    if _marks_outside_strings(data, lines, limit) + 1 <= limit:
        return False
    return "depth" if _has_deep_run(data) else True


_DEEP_RUN = re.compile(rb"[\[{](?:\s*(?:\"\"\s*:\s*)?[\[{]){%d}" % MAX_DEPTH)
_DEEP_CHUNK, _DEEP_OVERLAP = 1 << 18, 1 << 12


def _has_deep_run(data: bytes) -> bool:
    """Whether `data` holds a run of openers deeper than MAX_DEPTH, searched a chunk at a time.

    One regex search over a 57 MB file holds the GIL for seconds and stalls every other
    request of the app; a chunk's search takes milliseconds. Chunks overlap by more than
    a deep run's usual length; a run padded wider than that is still refused, by the value
    count, only with the count's message.
    """
    view = memoryview(data)
    for start in range(0, len(data), _DEEP_CHUNK):
        if _DEEP_RUN.search(view[start : start + _DEEP_CHUNK + _DEEP_OVERLAP]):
            return True
    return False


def _marks_outside_strings(data: bytes, lines: bool, limit: int) -> int:
    """Commas, colons, openers and newlines that are structure, not text; stops counting past `limit`.

    Chunk by chunk with numpy (nothing is built per value): quotes pair up in
    order as a decoder pairs them (an escaped quote is text), per line in JSONL.
    """
    total, in_string, start, n = 0, False, 0, len(data)
    while start < n and total <= limit:
        end = _chunk_end(data, start)
        b = np.frombuffer(data, dtype=np.uint8, count=end - start, offset=start)
        quote = _string_quotes(b)
        if not in_string and not quote.any():  # no string here: every mark is structure
            total += sum(map(data.count, _VALUE_MARKS, repeat(start), repeat(end)))
            start = end
            continue
        before = np.cumsum(quote, dtype=np.int64) - quote  # string quotes strictly before each byte
        carried = np.full(len(b), in_string)  # a string left open by the previous chunk
        if lines:  # parity restarts at each line
            last_nl = np.maximum.accumulate(np.where(b == _NEWLINE, np.arange(len(b)), -1))
            before -= np.where(last_nl >= 0, (before + quote)[np.maximum(last_nl, 0)], 0)
            carried &= last_nl < 0
        inside = ((before + carried) & 1).astype(bool)
        total += int(np.count_nonzero(np.isin(b, _MARK_BYTES) & ~inside))
        in_string = bool(inside[-1]) != bool(quote[-1])  # open after the chunk's last byte
        start = end
    return total


def _chunk_end(data: bytes, start: int) -> int:
    """The end of the chunk from `start`, never right after a backslash (an escape stays whole)."""
    end = start + CHUNK
    while end < len(data) and data[end - 1] == _BACKSLASH:
        end += 1
    return min(end, len(data))


def _string_quotes(b: np.ndarray) -> np.ndarray:
    """Mask of the quotes that open or close a string (a quote after an odd run of backslashes is text)."""
    quote = b == _QUOTE
    pos = np.flatnonzero(quote[1:] & (b[:-1] == _BACKSLASH)) + 1  # quotes right after a backslash
    if len(pos):
        bs = np.flatnonzero(b == _BACKSLASH)
        run_start = bs[np.r_[True, np.diff(bs) != 1]]
        first = run_start[np.searchsorted(run_start, pos - 1, side="right") - 1]
        quote[pos[(pos - first) % 2 == 1]] = False  # odd run of backslashes: escaped
    return quote


def too_big_message(over: bool | str, limits: Limits) -> str:
    return depth_message(limits.depth) if over == "depth" else values_message(limits)


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


def parse_envelope(
    data: bytes, name: str, max_bytes: int = DEFAULT_MAX_BYTES, limits_of: Callable[[object], Limits] | None = None
) -> Envelope:
    """The envelope of a (compressed) submission; raises SubmissionError at the first problem."""
    problems = Problems()
    env = parse_raw(read_bytes(data, name, max_bytes), name, limits_of, problems)
    if not problems.ok:
        raise SubmissionError(problems.errors[0])
    return env


def parse_raw(
    raw: bytes, name: str, limits_of: Callable[[object], Limits] | None = None, problems: Problems | None = None
) -> Envelope:
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


class _RawEnvelope(msgspec.Struct, omit_defaults=True):
    """A JSON envelope's fields as raw byte slices: decoding it builds three objects whatever the file
    holds (other top-level keys are skimmed, not built)."""

    track: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    system: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    predictions: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


def _json_track(raw: bytes) -> object:
    """The track named by a JSON envelope, read without building its predictions."""
    try:
        track = msgspec.json.decode(raw, type=_RawEnvelope).track
        return msgspec.json.decode(track) if track and len(track) <= 1000 else None
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        m = _TRACK_FIELD.search(raw)  # broken elsewhere: the first "track" key tells which limits apply
        return m.group(1).decode("utf-8", "replace") if m else None


def _parse_json(raw: bytes, limits_of: Callable[[object], Limits], problems: Problems) -> Envelope:
    limits = limits_of(_json_track(raw))
    if over := values_over(raw, limits.values):
        raise SubmissionError(Problem("file", too_big_message(over, limits)))
    # Now at most limits.values objects can be built: decoding is safe; the record count and depth
    # are read from the result (a nesting too deep for the decoder itself raises RecursionError).
    try:
        doc = _loads(decode(raw))
    except RecursionError:
        raise SubmissionError(Problem("file", depth_message(limits.depth))) from None
    except ValueError as exc:
        raise SubmissionError(Problem("file", _json_error(exc))) from None
    if structure_depth(doc, limits.depth) > limits.depth:
        raise SubmissionError(Problem("file", depth_message(limits.depth)))
    if not isinstance(doc, dict):
        raise SubmissionError(
            Problem("file", f"expected a JSON object with track, system and predictions, got {type(doc).__name__}")
        )
    preds = doc.get("predictions")
    if not isinstance(preds, list):
        raise SubmissionError(Problem("file", "field predictions: expected a list of prediction records", field="predictions"))
    if len(preds) > limits.records:
        raise SubmissionError(Problem("file", records_message(limits.records), field="predictions"))
    return Envelope(doc.get("track"), doc.get("system"), preds, [f"predictions[{i}]" for i in range(len(preds))], "header")


def depth_message(limit: int) -> str:
    return f"JSON nested deeper than {limit} levels"


def records_message(limit: int) -> str:
    return f"more than {limit:,} prediction records (the limit for this track: twice its gold units plus 100)"


def values_message(limits: Limits) -> str:
    return (
        f"more than {limits.values:,} JSON values (objects, lists, strings, numbers) in the file: "
        f"far more than {limits.records:,} prediction records need (at most {VALUES_PER_RECORD} values each)"
    )


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
    body = raw[header_end + 1 :] if header_end >= 0 else b""
    body = _within_record_limit(body, number, limits, problems)
    if over := values_over(body, limits.values, lines=True):
        raise SubmissionError(Problem("file", too_big_message(over, limits)))
    records, locations = [], []
    for n, text, _ in _nonblank_lines(body):
        where = f"line {n + number}"
        try:
            obj = _loads(text.decode("utf-8"))
        except RecursionError:
            problems.error(where, depth_message(limits.depth))
            continue
        except ValueError as exc:
            problems.error(where, _json_error(exc, n + number - 1))
            continue
        if text.count(b"[") + text.count(b"{") > limits.depth and structure_depth(obj, limits.depth) > limits.depth:
            problems.error(where, depth_message(limits.depth))
            continue
        records.append(obj)
        locations.append(where)
    return Envelope(header.get("track"), header.get("system"), records, locations, f"line {number}")


def _header(line: bytes, number: int) -> dict:
    where = f"line {number}"
    if over := values_over(line, HEADER_VALUES):
        raise SubmissionError(
            Problem(
                where,
                depth_message(MAX_DEPTH) if over == "depth" else f"the header holds more than {HEADER_VALUES:,} JSON values",
            )
        )
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


def with_system(data: bytes, name: str, updates: dict, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The same submission with `updates` merged into its header's system (the submit form's fields).

    Only the header changes; the predictions are kept byte for byte and never
    decoded (so this is safe on any file the size cap lets through). Raises
    ValueError with a readable message when the header cannot be read.
    """
    try:
        raw = read_bytes(data, name, max_bytes)
        decode(raw)
    except SubmissionError as exc:
        raise ValueError(str(exc.problem)) from None
    raw = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
    ext = submission_extension(name)
    if ext.startswith(".jsonl"):
        lines = _nonblank_lines(raw)
        number, line, pos = next(lines, (1, b"", 0))
        try:
            header = _header(line, number)
        except SubmissionError as exc:
            raise ValueError(str(exc.problem)) from None
        system = header.get("system") if isinstance(header.get("system"), dict) else {}
        header["system"] = {**system, **updates}
        out = raw[:pos] + json.dumps(header, ensure_ascii=False).encode("utf-8") + raw[pos + len(line) :]
    else:
        try:  # the predictions stay one slice of the bytes, never decoded
            doc = msgspec.json.decode(raw, type=_RawEnvelope)
            system = doc.system
            system = {} if system is msgspec.UNSET else _header(b'{"track": 0, "system": ' + bytes(system) + b"}", 1)["system"]
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, SubmissionError):
            raise ValueError("the file is not a JSON object with track, system and predictions") from None
        doc.system = msgspec.Raw(
            json.dumps({**(system if isinstance(system, dict) else {}), **updates}, ensure_ascii=False).encode("utf-8")
        )
        out = msgspec.json.encode(doc)
    return gzip.compress(out, mtime=0) if ext.endswith(".gz") else out
