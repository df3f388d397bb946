"""python -m leaderboard convert: runs people already have -> a submission file of the board's format.

Readers (bounded: file size, line count and line length are checked while reading; every problem is
reported with its file and line, the first MAX_REPORTED of them kept and the rest counted, as validate does):

- "trec": a TREC run, `qid Q0 docid rank score tag` per line, one file per dataset (the dataset is
  the file's stem, or given with --dataset); the score orders the documents, as in trec_eval;
- "beir": MTEB / BEIR prediction JSON, `{qid: {docid: score}}`, one file per dataset likewise;
- "jsonl": one JSON object per line;
- "baseline": one JSON object of equal-length columns (UniDoc-Bench's baseline outputs: `question`, `baseline`,
  `retrieved_metadata`, ...), a row per index; a file that is JSONL after all (the benchmark's scorer accepts
  both under one name) is read line by line. Only the columns the track reads are decoded.

Limits, each named in its error with the option that raises it: --max-bytes (per input file, decompressed)
and --max-line-bytes (per line of a line format; a track whose lines are known to be large, as the
benchmarks' own outputs with their retrieved contexts, sets a larger default). A column-oriented file is
one JSON document, never cut into lines.

What a run becomes is the track's business (`Track.run_formats`, `Track.records_from_run`); the system
metadata comes from flags. The written file is validated against the gold like any submission
(`--no-check` skips that, e.g. without the gold at hand).

Exit codes: 1 for a problem of the runs (each one line), 2 for a problem of the command's own arguments
(`--system-json` unreadable, too large, not UTF-8 JSON; `--out` not writable), as argparse exits 2 for a
usage error; either way one line per problem, never a traceback.
"""

from __future__ import annotations

import gzip
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from .problems import ProblemLines, SubmissionError
from .submission import read_file
from .tracks import TRACKS

MAX_INPUT_BYTES = 512 * 1024 * 1024  # per input file, decompressed
MAX_LINES = 10_000_000  # per input file (lines, or rows of a column-oriented file)
MAX_LINE_CHARS = 64 * 1024
MAX_SYSTEM_JSON_BYTES = 1024 * 1024  # a system object is a few KB; the header allows 10,000 values
ROW_FORMATS = ("jsonl", "baseline")  # read into {file: [(where, row)]}; several may mix in one conversion


class ConvertError(Exception):
    """The problems found, one line each: `problems` the first MAX_REPORTED, `count` all of them."""

    def __init__(self, problems: list[str] | ProblemLines):
        found = problems if isinstance(problems, ProblemLines) else ProblemLines(problems)
        super().__init__("\n".join(found.lines()))
        self.problems = found.kept
        self.count = found.count
        self.lines = found.lines()


class UsageError(ConvertError):
    """A problem of the command's own arguments (--system-json, --out), not of the runs: exit 2."""


@dataclass(frozen=True)
class Caps:
    """The bounds of one conversion; 0 means the default (module constants, read when used)."""

    max_bytes: int = 0
    max_line_bytes: int = 0

    @property
    def bytes(self) -> int:
        return self.max_bytes or MAX_INPUT_BYTES

    @property
    def line(self) -> int:
        return self.max_line_bytes or MAX_LINE_CHARS


def _opened(path: Path):
    return gzip.open(path, "rb") if path.name.endswith(".gz") else open(path, "rb")


def _too_big(path: Path, caps: Caps) -> str:
    return f"{path.name}: larger than {caps.bytes:,} bytes, the limit per input file (--max-bytes raises it)"


def read_lines(path: Path, caps: Caps | None = None):
    """(line number, text) of every non-blank line; a bound passed or undecodable text raises ConvertError at once."""
    caps = caps or Caps()
    total, cap, line_cap = 0, caps.bytes, caps.line
    try:
        with _opened(path) as fh:
            for number, raw in enumerate(iter(lambda: fh.readline(line_cap + 1), b""), start=1):
                total += len(raw)
                if total > cap:
                    raise ConvertError([_too_big(path, caps)])
                if number > MAX_LINES:
                    raise ConvertError([f"{path.name}: more than {MAX_LINES:,} lines"])
                if len(raw) > line_cap and not raw.endswith(b"\n"):
                    raise ConvertError(
                        [
                            f"{path.name} line {number}: longer than {line_cap:,} bytes, the limit per line "
                            "(--max-line-bytes raises it)"
                        ]
                    )
                try:
                    text = raw.decode("utf-8").strip()
                except UnicodeDecodeError:
                    raise ConvertError([f"{path.name} line {number}: not UTF-8 text"]) from None
                if text:
                    yield number, text
    except (OSError, EOFError) as exc:  # missing file, a broken gzip stream
        raise ConvertError([f"{path.name}: cannot be read ({getattr(exc, 'strerror', None) or exc})"]) from None


def read_whole(path: Path, caps: Caps) -> bytes:
    """The file's decompressed bytes, reading one byte past the cap at most."""
    try:
        if not path.name.endswith(".gz") and path.stat().st_size > caps.bytes:
            raise ConvertError([_too_big(path, caps)])
        with _opened(path) as fh:
            raw = fh.read(caps.bytes + 1)
    except (OSError, EOFError) as exc:
        raise ConvertError([f"{path.name}: cannot be read ({getattr(exc, 'strerror', None) or exc})"]) from None
    if len(raw) > caps.bytes:
        raise ConvertError([_too_big(path, caps)])
    return raw


def _score(value, where: str, problems: ProblemLines) -> float | None:
    try:
        score = float(value)
    except (TypeError, ValueError):
        score = math.nan
    if isinstance(value, bool) or not math.isfinite(score):
        problems.append(f"{where}: score {str(value)[:40]!r} is not a finite number")
        return None
    return score


def read_trec(path: Path, problems: ProblemLines, caps: Caps | None = None) -> dict[str, dict[str, float]]:
    """{qid: {docid: score}} of a TREC run; a repeated (qid, docid) is a problem, as trec_eval refuses it."""
    run: dict[str, dict[str, float]] = {}
    for number, line in read_lines(path, caps):
        where = f"{path.name} line {number}"
        parts = line.split()
        if len(parts) != 6:
            problems.append(f"{where}: expected 6 fields `qid Q0 docid rank score tag`, got {len(parts)}")
            continue
        qid, _, doc, rank, value, _ = parts
        if not rank.lstrip("-").isdigit():
            problems.append(f"{where}: rank {rank[:40]!r} is not an integer")
        score = _score(value, where, problems)
        if score is None:
            continue
        docs = run.setdefault(qid, {})
        if doc in docs:
            problems.append(f"{where}: document {doc[:80]!r} repeated for query {qid[:80]!r}")
            continue
        docs[doc] = score
    return run


def read_beir(path: Path, problems: ProblemLines, caps: Caps | None = None) -> dict[str, dict[str, float]]:
    """{qid: {docid: score}} of an MTEB / BEIR prediction file."""
    raw = read_whole(path, caps or Caps())
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConvertError([f"{path.name} line {exc.lineno} column {exc.colno}: not valid JSON ({exc.msg})"]) from None
    except (UnicodeDecodeError, RecursionError):
        raise ConvertError([f"{path.name}: not UTF-8 JSON, or nested too deeply"]) from None
    if not isinstance(data, dict):
        raise ConvertError([f"{path.name}: expected an object {{query id: {{document id: score}}}}"])
    run: dict[str, dict[str, float]] = {}
    for qid, docs in data.items():
        where = f"{path.name} query {qid[:80]!r}"
        if not isinstance(docs, dict):
            problems.append(f"{where}: expected {{document id: score}}, got {type(docs).__name__}")
            continue
        scores = {}
        for doc, value in docs.items():
            score = _score(value, f"{where} document {doc[:80]!r}", problems)
            if score is not None:
                scores[doc] = score
        run[qid] = scores
    return run


def read_jsonl(path: Path, problems: ProblemLines, caps: Caps | None = None, keys: tuple = ()) -> list[tuple[str, object]]:
    """("line N", object) per line; with `keys`, an object keeps only those (a baseline line's contexts go)."""
    rows = []
    for number, line in read_lines(path, caps):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path.name} line {number}: not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        except RecursionError:
            problems.append(f"{path.name} line {number}: nested too deeply")
            continue
        if keys and isinstance(obj, dict):
            obj = {k: obj[k] for k in keys if k in obj}
        rows.append((f"line {number}", obj))
    return rows


def read_columns(path: Path, problems: ProblemLines, caps: Caps, keys: tuple) -> list[tuple[str, object]]:
    """("row i", {column: value}) per index of a column-oriented JSON object (`{column: [value per row]}`),
    only the columns in `keys` decoded (the others are skipped unread: a baseline's contexts cost nothing).
    A file that is JSONL after all is read line by line, as the benchmark's scorer falls back to."""
    raw = read_whole(path, caps).removeprefix(b"\xef\xbb\xbf")
    columns_type = msgspec.defstruct(
        "Columns", [(k, list[Any] | msgspec.UnsetType, msgspec.UNSET) for k in keys], forbid_unknown_fields=False
    )
    if _is_jsonl(raw):
        return read_jsonl(path, problems, caps, keys)
    try:
        data = msgspec.json.decode(raw, type=columns_type)
    except msgspec.ValidationError as exc:
        raise ConvertError([f"{path.name}: expected one JSON object of columns ({', '.join(keys)}): {exc}"]) from None
    except msgspec.DecodeError as exc:
        raise ConvertError([f"{path.name}{_position(raw, str(exc))}: not valid JSON ({str(exc).split(' (byte')[0]})"]) from None
    except RecursionError:
        raise ConvertError([f"{path.name}: nested too deeply"]) from None
    present = {k: getattr(data, k) for k in keys if getattr(data, k) is not msgspec.UNSET}
    if not present:
        raise ConvertError([f"{path.name}: none of the columns {', '.join(keys)}"])
    lengths = {k: len(v) for k, v in present.items()}
    if len(set(lengths.values())) > 1:
        raise ConvertError(
            [f"{path.name}: the columns have different lengths ({', '.join(f'{k} {n:,}' for k, n in lengths.items())})"]
        )
    n = next(iter(lengths.values()))
    if n > MAX_LINES:
        raise ConvertError([f"{path.name}: more than {MAX_LINES:,} rows"])
    return [(f"row {i}", {k: v[i] for k, v in present.items()}) for i in range(n)]


def _is_jsonl(raw: bytes) -> bool:
    """One JSON object per line: the first line is a whole object and more follows (a column-oriented file
    is one line, or starts with a line that is not a whole object when indented)."""
    end = raw.find(b"\n")
    if end < 0 or not raw[end:].strip():
        return False
    try:
        return isinstance(msgspec.json.decode(raw[:end]), dict)
    except (msgspec.DecodeError, RecursionError):
        return False


def _position(raw: bytes, message: str) -> str:
    """' line L column C' of msgspec's `(byte N)`, else ''."""
    at = message.rpartition("(byte ")[2].rstrip(")")
    if not at.isdigit():
        return ""
    offset = int(at)
    line = raw.count(b"\n", 0, offset) + 1
    column = offset - raw.rfind(b"\n", 0, offset)
    return f" line {line} column {column}"


# The extensions that tell a format, in the order tried (a track reads only some formats).
_EXTENSIONS = {"jsonl": (".jsonl",), "baseline": (".json",), "beir": (".json",), "trec": ()}


def guess_format(track, path: Path) -> str:
    """The run format of a file: the track's only one, else the first of the track's formats whose extension
    it has (.jsonl: jsonl; .json: baseline or beir), else the track's first format (trec for vdr)."""
    if len(track.run_formats) == 1:
        return track.run_formats[0]
    name = path.name.removesuffix(".gz")
    return next((f for f in track.run_formats if name.endswith(_EXTENSIONS.get(f, ()))), track.run_formats[0])


def convert(
    track_name: str,
    inputs: list[Path],
    system: dict,
    *,
    fmt: str | None = None,
    datasets: list[str] | None = None,
    gold=None,
    languages: list[str] | None = None,
    task: str | None = None,
    caps: Caps | None = None,
) -> bytes:
    """The submission (JSONL bytes: header, then one record per line) for the runs in `inputs`; ConvertError lists problems.

    `gold`: the track's gold, or a function giving it (asked for only when a row must be matched to it by
    text); `languages`: futurepedia's --language per input; `task`: its --task."""
    track = TRACKS.get(track_name)
    if track is None:
        raise ConvertError([f"track: unknown track {track_name!r} (known: {', '.join(TRACKS)})"])
    if not track.run_formats:
        raise ConvertError([f"track: no run converter for {track_name}"])
    if fmt is not None and fmt not in track.run_formats:
        raise ConvertError([f"format: {fmt!r} is not read for {track_name} (one of: {', '.join(track.run_formats)})"])
    if datasets and len(datasets) != len(inputs):
        raise ConvertError([f"--dataset: {len(datasets)} name(s) for {len(inputs)} input file(s); give one per file"])
    if languages and len(languages) != len(inputs):
        raise ConvertError([f"--language: {len(languages)} value(s) for {len(inputs)} input file(s); give one per file"])
    caps = caps or Caps()
    if not caps.max_line_bytes and track.run_line_bytes:
        caps = Caps(caps.max_bytes, track.run_line_bytes)
    problems = ProblemLines()
    runs: dict[str, Any] = {}
    formats = {fmt or guess_format(track, p) for p in inputs}
    if len(formats) > 1 and not formats <= set(ROW_FORMATS):
        raise ConvertError([f"format: the inputs mix {', '.join(sorted(formats))}; convert one format at a time"])
    chosen = "baseline" if "baseline" in formats else formats.pop()
    options = {"gold": gold if callable(gold) or gold is None else (lambda: gold), "task": task, "languages": {}}
    for i, path in enumerate(inputs):
        if chosen in ROW_FORMATS:
            label = path.name if path.name not in runs else str(path)
            if label in runs:
                problems.append(f"{path}: given twice")
                continue
            kind = fmt or guess_format(track, path)
            read = read_columns if kind == "baseline" else read_jsonl
            runs[label] = read(path, problems, caps, track.run_row_keys)
            if languages:
                options["languages"][label] = languages[i]
            continue
        name = datasets[i] if datasets else path.name.removesuffix(".gz").rsplit(".", 1)[0]
        if name in runs:
            problems.append(f"{path.name}: dataset {name!r} given twice")
            continue
        runs[name] = (read_trec if chosen == "trec" else read_beir)(path, problems, caps)
    records = track.records_from_run(chosen, runs, problems, options) if not problems else []
    if not problems and not records:
        problems.append("no prediction found in the inputs")
    if problems:
        raise ConvertError(problems)
    lines = [json.dumps({"track": track.name, "system": system}, ensure_ascii=False)]
    lines += [json.dumps(r, ensure_ascii=False) for r in records]
    return ("\n".join(lines) + "\n").encode("utf-8")


def system_from_flags(name: str | None, fields: list[str], system_json: str | None) -> dict:
    """The header's system: --system-json (inline or a file) first, then --name and --field key=value over it."""
    system: dict = {}
    if system_json:
        text = system_json if system_json.lstrip().startswith("{") else _system_file(system_json)
        try:
            system = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise UsageError([f"--system-json: not valid JSON ({str(exc)[:200]})"]) from None
        if not isinstance(system, dict):
            raise UsageError(["--system-json: expected a JSON object"])
    for item in fields:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConvertError([f"--field {item!r}: expected KEY=VALUE"])
        system[key.strip()] = int(value) if value.strip().isdigit() and key.strip() == "top_k" else value
    if name:
        system["name"] = name
    return system


def _system_file(path: str) -> str:
    """The text of a --system-json file, read through the bounded reader (a device or a huge file stops at the cap)."""
    try:
        raw = read_file(Path(path), MAX_SYSTEM_JSON_BYTES)
    except SubmissionError:
        raise UsageError(
            [f"--system-json: {path} is larger than {MAX_SYSTEM_JSON_BYTES:,} bytes (a system object is a few KB)"]
        ) from None
    except OSError as exc:
        raise UsageError([f"--system-json: cannot read {path}: {exc.strerror or exc}"]) from None
    try:
        return raw.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise UsageError(
            [
                f"--system-json: {path} line {line}: not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); save it as UTF-8"
            ]
        ) from None


def check_out(out: Path) -> None:
    """Refuse an --out that cannot be written before any work: a folder, or a folder that does not exist."""
    if out.is_dir():
        raise UsageError([f"--out: {out} is a folder; give a file name (.jsonl, .json, optionally .gz)"])
    if not out.parent.is_dir():
        raise UsageError([f"--out: the folder {out.parent} does not exist"])


def write(out: Path, data: bytes) -> None:
    """JSONL as converted, gzipped for a .gz name, one JSON document for a .json name; UsageError when it cannot be written."""
    name = out.name.removesuffix(".gz")
    if name.endswith(".json"):
        lines = data.decode("utf-8").splitlines()
        doc = {**json.loads(lines[0]), "predictions": [json.loads(line) for line in lines[1:]]}
        data = (json.dumps(doc, ensure_ascii=False) + "\n").encode("utf-8")
    try:
        out.write_bytes(gzip.compress(data, mtime=0) if out.name.endswith(".gz") else data)
    except OSError as exc:  # a full disk (/dev/full), no permission, a folder made meanwhile
        raise UsageError([f"--out: cannot write {out}: {exc.strerror or exc}"]) from None


def cmd_convert(args) -> None:
    from .scoring import check

    out = Path(args.out)
    settings = args.settings()  # also where gold from the Hub is kept, with or without --gold
    gold = {name: args.gold for name in TRACKS} if args.gold else settings.gold
    try:
        check_out(out)
        system = system_from_flags(args.name, args.field or [], args.system_json)
        caps = Caps(_positive(args.max_bytes, "--max-bytes"), _positive(args.max_line_bytes, "--max-line-bytes"))
        data = convert(
            args.track,
            [Path(p) for p in args.inputs],
            system,
            fmt=args.format,
            datasets=args.dataset,
            gold=lambda: _load_gold(args.track, gold.get(args.track)),
            languages=args.language,
            task=args.task,
            caps=caps,
        )
    except ConvertError as exc:
        _fail(exc)
    if not args.no_check:
        try:
            checked = check(data, "converted.jsonl", gold)
        except (FileNotFoundError, KeyError, ValueError) as exc:
            print(f"gold: {exc}", file=sys.stderr)
            sys.exit(2)
        if not checked.ok:
            print(f"the converted run is not a valid {args.track} submission (nothing written):", file=sys.stderr)
            for line in checked.errors:
                print(line, file=sys.stderr)
            sys.exit(1)
    try:
        write(out, data)
    except ConvertError as exc:
        _fail(exc)
    predictions = data.count(b"\n") - 1
    print(f"written {out} ({predictions} predictions); next: python -m leaderboard submit {out}")


def _load_gold(track: str, source):
    """The track's gold for matching rows by text; a ValueError saying why it cannot be read."""
    try:
        return TRACKS[track].load_gold(source)
    except (OSError, KeyError, ValueError) as exc:
        raise ValueError(f"the gold cannot be read ({str(exc)[:300]})") from None


def _positive(value: int | None, flag: str) -> int:
    if value is not None and value < 1:
        raise UsageError([f"{flag}: expected a positive number of bytes, got {value}"])
    return value or 0


def _fail(exc: ConvertError) -> None:
    for line in exc.lines:
        print(line, file=sys.stderr)
    sys.exit(2 if isinstance(exc, UsageError) else 1)


def add_parser(sub) -> None:
    formats = sorted({f for t in TRACKS.values() for f in t.run_formats})
    p = sub.add_parser(
        "convert",
        help="turn existing runs (TREC, MTEB/BEIR JSON, JSONL, the benchmarks' own outputs) into a submission file",
    )
    p.add_argument("track", help=f"the track: {', '.join(t.name for t in TRACKS.values() if t.run_formats)}")
    p.add_argument("inputs", nargs="+", help="run files (one per dataset for trec / beir)")
    p.add_argument("--out", required=True, help="the submission to write (.jsonl, .json, optionally .gz)")
    p.add_argument("--format", choices=formats, help="input format (default: from the track and the file extension)")
    p.add_argument("--dataset", action="append", help="dataset of each input, in order (default: the file stem)")
    helps: dict[str, list[str]] = {}
    for t in TRACKS.values():
        for flag, text in t.run_options:
            helps.setdefault(flag, []).append(f"{t.name}: {text}")
    p.add_argument("--language", action="append", help="; ".join(helps.get("language", [])))
    tasks = [x for t in TRACKS.values() for x in t.run_tasks]
    p.add_argument("--task", choices=tasks or None, help="; ".join(helps.get("task", [])))
    p.add_argument("--max-bytes", type=int, help=f"largest input file, decompressed (default {MAX_INPUT_BYTES:,})")
    larger = ", ".join(f"{t.name} {t.run_line_bytes >> 20} MiB" for t in TRACKS.values() if t.run_line_bytes)
    p.add_argument("--max-line-bytes", type=int, help=f"longest line of a line format (default: 64 KiB; {larger})")
    p.add_argument("--name", help="system.name")
    p.add_argument("--field", action="append", metavar="KEY=VALUE", help="another system field (repeatable)")
    p.add_argument("--system-json", help="the whole system object, inline JSON or a file (flags override its keys)")
    p.add_argument("--gold", help="gold for the check (default: as for validate)")
    p.add_argument("--no-check", action="store_true", help="write without validating against the gold")
    p.set_defaults(fn=cmd_convert)
