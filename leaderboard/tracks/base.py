"""What a track declares once (metrics, breakdown axes, charts, system fields) and what it must do:
read its gold, validate a submission, score it, and say how its units are resampled (a `summarise.UnitIndex`).

The UI, the CLI and the rescoring pipeline build their tables, charts, checks and
the About tab from these declarations.
"""

from __future__ import annotations

import hashlib
import math
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from ..problems import Problems
from ..submission import Envelope, Limits
from ..summarise import UnitIndex
from ..text import normalize_text, text_problem

ASSETS = Path(__file__).resolve().parents[2] / "assets"
DEMO_GOLD = ASSETS / "demo" / "gold"
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    description: str
    higher_is_better: bool = True
    has_ci: bool = True  # has a bootstrap CI (compression, say, has no sampling error)
    needs_judge: bool = False
    percent: bool = False  # shown as a share


@dataclass(frozen=True)
class Axis:
    key: str
    label: str
    values: tuple[str, ...] = ()  # display order; empty = as found
    metrics: tuple[str, ...] = ()  # metric keys shown for this axis (empty = all)
    kind: str = "mean"  # "mean": metric means per value; "share": shares that sum to 1


@dataclass(frozen=True)
class Chart:
    """A chart the board draws for a track; ui/figures.py knows each kind.

    by_axis: the chosen metric per value of `axis`, one bar group per system;
    scatter: `x` against `y`, one point per system; avg_var: each metric's
    mean across languages against its variance; shares: stacked shares per
    value of `axis`; pair_heatmap: one system's `axis` values as a matrix;
    tradeoff: `y` against `x`, one curve per combination of the `group` system fields (a base model and its
    compression method: one method's runs form a curve), Pareto front marked.
    """

    kind: str
    title: str
    axis: str = ""
    x: str = ""
    y: str = ""
    group: tuple[str, ...] = ()
    # The chart's own wording (empty: a generic default built from the metric and axis labels).
    empty: str = ""  # the message drawn while no system has data for it
    x_title: str = ""
    y_title: str = ""


@dataclass(frozen=True)
class TableColumn:
    """A column a track adds to its table beyond its metrics and system fields (vdr retention, futurepedia VAR).

    Its value is `summary.overall[key]` when the scorer reports it there, else what `Track.derive_columns`
    computes from the table's rows.
    """

    key: str
    label: str
    description: str = ""
    percent: bool = False  # shown as a share
    digits: int = 3
    shown: bool = True  # among the default columns


@dataclass(frozen=True)
class SystemField:
    key: str
    label: str
    required: bool = False
    choices: tuple[str, ...] = ()
    filter: bool = False  # offered as a filter on the board
    kind: str = "text"  # text | url | int
    shown: bool = True  # a table column shown by default (links and long text are never table columns)


@dataclass(frozen=True)
class ReportedSource:
    """Where a reported row's figures come from, as the board cites it (hover, detail view, About)."""

    title: str  # the paper or repository, as cited
    where: str  # the table(s) or file(s) the figures were copied from
    licence: str
    measured_on: str  # what the figures were measured on (questions, datasets, judge), in words
    url: str = ""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Deviation:
    """A deliberate difference between the board's scoring and the benchmark's own script
    (SCORING.md, "Official scripts"). A track declares its deviations once, in the order their effects
    are measured (stepwise from the official protocol to the board's); About, docs/SCORING.md,
    `score --json` and the detail view render them from the declaration."""

    name: str  # e.g. "repeats-count-once"
    script: str  # what the official script does
    board: str  # what the board does instead
    why: str  # why the board differs


@dataclass
class ReportedRow:
    """One system's published figures, mapped by its track onto the track's metric and axis keys.

    Shown beside rescored systems, never ranked, never in a paired test, without CI (leaderboard/reported.py).
    """

    key: str  # unique within its track
    name: str
    system: dict[str, Any]  # the track's system fields
    overall: dict[str, float]  # metric key -> figure (the table's cells)
    breakdowns: dict[str, dict[str, dict[str, float]]]  # axis key -> value -> metric key -> figure
    source: ReportedSource
    # Figures computed here from published ones (never published themselves): metric key (or
    # "axis:value:metric") -> how, e.g. "mean of the reported per-dataset values over 8 datasets".
    computed: dict[str, str] = field(default_factory=dict)
    note: str = ""  # what to know about this row's figures (e.g. which query language), shown on hover
    judge: str = ""  # who judged its judged metrics, in words
    # Figures of the source with no board equivalent: the detail view only. (label, value, unit)
    detail_overall: tuple[tuple[str, float, str], ...] = ()
    detail_breakdowns: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)  # axis -> value -> label
    # Charts: where the row sits on a curve chart when that differs from its table cells (a curve measured on other
    # datasets than the board's gold), the series it belongs to, and what its point is.
    chart_overall: dict[str, float] | None = None
    series: str = ""
    chart_note: str = ""


@dataclass
class Scores:
    """What a scorer returns for one submission."""

    n: int
    missing: int
    overall: dict[str, float]
    ci: dict[str, list[float]]
    breakdowns: dict[str, dict[str, dict[str, float]]]
    # Per-unit scores, {KEY: array aligned with Track.units(gold, KEY)}, NaN
    # where the system gave nothing usable (missing, or a judge failure).
    units: dict[str, np.ndarray]
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Gold:
    """Base of every track's gold: where it came from and a hash of its bytes (part of cache keys)."""

    source: str
    sha256: str


def hash_files(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(p.name.encode() + b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()


def prediction_records(env: Envelope, problems: Problems):
    """(record, location) of every record that is an object; anything else, and a file without records, is an error."""
    if not env.records:
        problems.error("file", "the submission has no prediction")
    for rec, where in zip(env.records, env.locations):
        if type(rec) is not dict:
            problems.error(where, f"expected a prediction object, got {type(rec).__name__}")
            continue
        yield rec, where


FINGERPRINT_VERSION = "2"  # part of every fingerprint: a change of canonical form never matches old ones


def fingerprint_of(track: str, *parts: bytes) -> str:
    """sha256 hex over a track's canonical parts, each length-prefixed so no two splits collide."""
    h = hashlib.sha256(f"{track}/{FINGERPRINT_VERSION}".encode())
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def canonical_json(value) -> bytes:
    """Compact JSON of plain values (lists, tuples, str, int, finite float, None), encoded in C.

    Deterministic for the same values (a fingerprint only meets fingerprints made by this function); the
    stdlib encoder took a third of a clean unidoc file's validation. Values are validated finite before.
    """
    return _CANONICAL.encode(value)


_CANONICAL = msgspec.json.Encoder(order="sorted")  # dict keys sorted, should a canonical form ever hold one


def finite_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# Character limits of the header's text fields (spec "Limits"); a field not listed gets SHORT_TEXT.
SHORT_TEXT = 120
TEXT_LIMITS = {"name": 80, "description": 2_000, "judge_note": 2_000}
MAX_LINK = 500
MAX_ID = 200  # ids: unidoc `id`, vdr `dataset`, `query_id`, `doc`; unidoc candidate `doc`
MAX_ANSWER = 32_768  # unidoc `answer`, futurepedia `prediction`


def too_long(value: str, limit: int) -> str | None:
    """The problem with a string over `limit` characters, or None."""
    return f"expected at most {limit:,} characters, got {len(value):,}" if len(value) > limit else None


def checked_text(value: str, key: str, where: str, problems: Problems) -> str:
    """`value` normalised (NFKC, whitespace collapsed), with its length and characters checked."""
    text = normalize_text(value)
    fname = f"system.{key}"
    limit = TEXT_LIMITS.get(key, SHORT_TEXT)
    if key == "name" and not text:
        problems.error(where, "expected a name of 1 to 80 characters, got only blanks", field=fname)
    if len(text) > limit:
        problems.error(where, f"expected at most {limit:,} characters, got {len(text):,}", field=fname)
    problem = text_problem(text)
    if problem:
        problems.error(where, problem, field=fname)
    return text


def check_link(value, where: str, problems: Problems, field_name: str) -> None:
    if not isinstance(value, str):
        problems.error(where, f"expected an http:// or https:// URL, got {type(value).__name__}", field=field_name)
    elif len(value) > MAX_LINK:
        problems.error(where, f"expected at most {MAX_LINK} characters, got {len(value):,}", field=field_name)
    elif not re.match(r"^https?://[^\s]+$", value, re.IGNORECASE):
        problems.error(where, f"expected an http:// or https:// URL, got {value!r}"[:200], field=field_name)
    elif problem := text_problem(value):
        problems.error(where, problem, field=field_name)


class Track(ABC):
    name: str
    title: str
    description: str
    metrics: tuple[Metric, ...]
    rank_by: str
    # Metrics the leaders strip above the table shows beside the ranking one (who leads on each, and who ties).
    headline: tuple[str, ...] = ()
    axes: tuple[Axis, ...]
    system_fields: tuple[SystemField, ...]
    unit_label: str = "question"
    charts: tuple[Chart, ...] = ()
    # A msgspec Struct of one prediction record, for the typed fast path (fastpath.py); None: generic path only.
    record_type: Any = None
    # The same record with the values most files share narrowed to literals (one object each, not one string per
    # record: less to build, hash and free), tried first; a file it refuses is decoded with record_type.
    common_record_type: Any = None
    # Axes whose values can replace the overall numbers in the table (a language, a family...).
    slice_axes: tuple[str, ...] = ()
    gold_patterns: tuple[str, ...] = ("*",)
    # Table columns beyond metrics and system fields, in display order.
    extra_columns: tuple[TableColumn, ...] = ()
    # The extra columns computed across systems (`derive_columns`), not of one result (results.columns skips them).
    derived_columns: tuple[str, ...] = ()
    # A system may report only some of the metrics (a task left out): the board offers "Has results for".
    # Judged tracks always offer it (answers not judged yet).
    partial_metrics: bool = False
    # How the bootstrap resamples this track's units, in words, for the About tab.
    resampling: str = "units resampled independently"
    # Run formats `python -m leaderboard convert` turns into this track's records (readers in convert.py):
    # "trec" and "beir" give {dataset: {query: {doc: score}}}; the row formats "jsonl" and "baseline" (one
    # JSON object of columns, e.g. UniDoc-Bench's baseline outputs) give {file: [(where in it, row object)]}.
    run_formats: tuple[str, ...] = ()
    run_row_keys: tuple[str, ...] = ()  # the keys of a row the converter reads (others are dropped when parsed)
    run_line_bytes: int = 0  # the longest line a row format may have by default (0: convert.py's default)
    # convert's options the track's run formats read beyond the common ones: (flag, help), e.g. ("task", "...")
    run_options: tuple[tuple[str, str], ...] = ()
    run_tasks: tuple[str, ...] = ()  # the choices of --task, when the track reads it

    def records_from_run(self, fmt: str, run, problems: list[str], options: dict | None = None) -> list[dict]:
        """This track's prediction records from a run read by convert.py; every problem appended, precisely.
        `options`: "gold" (a function giving the gold), "languages" ({file: --language}), "task" (--task)."""
        raise NotImplementedError(f"{self.name} has no run converter")

    # Files under assets/reported/ whose published figures this track shows as reported rows (leaderboard/reported.py
    # reads them and calls `reported_rows`); the mapping of a file's keys to the track's keys lives in the track.
    reported_files: tuple[str, ...] = ()
    # What About says of this track's reported figures: how they were measured, how the board shows them.
    reported_notes: str = ""

    def reported_rows(self, files: dict[str, Any], gold: Gold) -> list[ReportedRow]:
        """The reported rows of `files` ({file name: parsed JSON}) against this gold; a ValueError names a bad figure."""
        return []

    # ---- declarations helpers -------------------------------------------------
    def metric(self, key: str) -> Metric:
        return next(m for m in self.metrics if m.key == key)

    @property
    def demo_gold(self) -> Path:
        return DEMO_GOLD / self.name

    @property
    def gold_env(self) -> str:
        """The environment variable naming this track's gold (a local path or a dataset id)."""
        return f"{self.name.upper()}_GOLD"

    @cached_property  # asked for each submission at every start (service._judgeable)
    def judged_metrics(self) -> tuple[Metric, ...]:
        return tuple(m for m in self.metrics if m.needs_judge)

    def wants_judge(self, summary: dict) -> bool:
        """Whether a scored submission has anything for the judge (the service queues only those)."""
        return bool(self.judged_metrics)

    def derive_columns(self, rows) -> dict:
        """{extra column key: values aligned with `rows`} for extra columns computed across systems (a DataFrame)."""
        return {}

    # ---- gold -------------------------------------------------------------------
    def resolve_gold(self, source: str | Path | None) -> Path:
        """A local path, or a Hugging Face dataset id downloaded through the Hub client."""
        if source is None:
            return self.demo_gold
        path = Path(source)
        if path.exists():
            return path
        if isinstance(source, str) and _REPO_ID.match(source):
            from huggingface_hub import snapshot_download

            return Path(snapshot_download(source, repo_type="dataset", allow_patterns=list(self.gold_patterns)))
        raise FileNotFoundError(f"gold not found: {source} is neither a local path nor a dataset id")

    def load_gold(self, source: str | Path | None = None) -> Gold:
        return _load_gold_cached(self, str(self.resolve_gold(source)))

    def gold_label(self, source: str) -> str:
        """What the status line calls a gold given as a dataset id (not a local path); no network."""
        return source[:80]

    def gold_note(self, source: str) -> str:
        """What the status line adds after a gold's name once it was read (its form, or why it cannot be read);
        "" when there is nothing to add. Never loads anything."""
        return ""

    @abstractmethod
    def read_gold(self, path: Path) -> Gold: ...

    # ---- submissions --------------------------------------------------------------
    def validate_system(self, system, where: str, problems: Problems) -> dict:
        """The header's system with its text fields normalised; every problem recorded.

        Returns a new dict (keys the track does not declare are kept as given):
        what the board shows and the duplicate-name check compares.
        """
        if not isinstance(system, dict):
            problems.error(where, f"expected an object with the system's metadata, got {type(system).__name__}", field="system")
            return {}
        out = dict(system)
        for f in self.system_fields:
            value = system.get(f.key)
            fname = f"system.{f.key}"
            if value is None:
                if f.required:
                    problems.error(where, "required field is missing", field=fname)
                continue
            if f.kind == "int":
                if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                    problems.error(where, f"expected a positive integer, got {value!r}"[:200], field=fname)
            elif not isinstance(value, str):
                problems.error(where, f"expected a string, got {type(value).__name__}", field=fname)
            elif f.kind == "url":
                check_link(value, where, problems, fname)
            elif f.choices:
                if value not in f.choices:
                    problems.error(where, f"expected one of {', '.join(f.choices)}, got {value!r}"[:200], field=fname)
            else:
                out[f.key] = checked_text(value, f.key, where, problems)
        return out

    @abstractmethod
    def gold_units(self, gold: Gold) -> int:
        """How many units a submission can answer: the record limit is twice this plus 100."""

    def limits(self, gold: Gold) -> Limits:
        return Limits.for_gold_units(self.gold_units(gold))

    @abstractmethod
    def validate(self, env: Envelope, gold: Gold, problems: Problems) -> Any:
        """Check every record; return the parsed predictions (meaningful only when problems.ok)."""

    def fast_validate(self, records: list, system: dict, gold: Gold, env: Envelope) -> Any:
        """Parsed predictions from typed records when every check passes, else None (the generic path explains)."""
        return None

    @abstractmethod
    def fingerprint(self, parsed: Any) -> str:
        """sha256 hex of the parsed predictions in a canonical, record-order-independent form.

        Two files with equal parsed predictions (whatever their compression,
        whitespace, key order, line order, header or path) get the same
        fingerprint: the spec's duplicate rule.
        """

    @abstractmethod
    def score(self, parsed: Any, gold: Gold, verdicts: dict | None = None) -> Scores: ...

    # The track's deviations from its benchmark's own script, in measuring order (empty: none declared).
    deviations: tuple[Deviation, ...] = ()
    # How the board's judge differs from the benchmark's own judge script: listed in About, never measured
    # (the judged metrics have one protocol; running the script's judge too would pay for every answer twice).
    judge_deviations: tuple[Deviation, ...] = ()

    def score_with(
        self,
        parsed: Any,
        gold: Gold,
        fixes: frozenset[str],
        verdicts: dict | None = None,
        *,
        headline_only: bool = False,
        work: Any = None,
    ) -> Scores:
        """Score with only the deviations named in `fixes` applied: every declared one is the board's
        protocol (what `score` computes), none is the official script's. A track that declares
        deviations overrides this; without any, both protocols are the board's.

        headline_only: only `overall` is read (a deviation's step): a track may leave out the CIs, never
        change an overall value. work: what `protocol_work` built for this file, shared by its steps."""
        if self.deviations:
            raise NotImplementedError(f"{self.name}: deviations declared but score_with not implemented")
        return self.score(parsed, gold, verdicts)

    def protocol_work(self, parsed: Any, gold: Gold) -> Any:
        """What every protocol step of one file has in common (normalised predictions, per-unit values...),
        built once by protocols.official_report and handed to each `score_with` of the file as `work`,
        computed lazily as the steps ask; None: nothing shared."""
        return None

    @abstractmethod
    def units(self, gold: Gold, key: str) -> UnitIndex:
        """The gold units of metric `key`, in the order of Scores.units[key]."""

    def unit_info(self, gold: Gold) -> dict[str, dict[str, Any]]:
        """Per gold unit: its categories and text, for detail and compare views."""
        return {}

    @abstractmethod
    def unit_of(self, record: dict) -> str | None:
        """The unit id a (valid) prediction record answers, to show raw records per unit."""

    def record_summary(self, record: dict) -> str:
        """One line of what a prediction says (an answer, the top of a ranking), for side-by-side views."""
        return ""

    def judge_items(self, parsed: Any, gold: Gold) -> list:
        """What an LLM judge must look at; tracks without judged metrics have nothing."""
        return []


_GOLD_CACHE: dict[tuple[str, str, float], Gold] = {}


def _load_gold_cached(track: Track, path: str) -> Gold:
    # Gold is read once per process per version of the files (mtime in the key).
    p = Path(path)
    if not (p.is_dir() or p.is_file()):  # a device or a pipe (--gold /dev/zero) would be read without end
        raise FileNotFoundError(f"{path} is neither a file nor a folder")
    stamp = max((f.stat().st_mtime for f in p.rglob("*") if f.is_file()), default=0.0) if p.is_dir() else p.stat().st_mtime
    key = (track.name, path, stamp)
    if key not in _GOLD_CACHE:
        _GOLD_CACHE[key] = track.read_gold(p)
    return _GOLD_CACHE[key]


def category_codes(labels: list[str], order: tuple[str, ...] = ()) -> tuple[np.ndarray, list[str]]:
    """Integer code per unit and the category names, declared order first."""
    found = list(dict.fromkeys(labels))
    names = [v for v in order if v in found] + [v for v in found if v not in order]
    pos = {v: i for i, v in enumerate(names)}
    return np.fromiter((pos[v] for v in labels), dtype=np.int64, count=len(labels)), names
