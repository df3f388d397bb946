"""Track `futurepedia`: multilingual RAG in 8 languages (3-gram recall, transfer, selection entropy)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from itertools import permutations
from operator import itemgetter
from pathlib import Path
from typing import Annotated, Literal

import msgspec
import numpy as np

from ..metrics import ngram_kernel
from ..metrics.ngram import answer_row, prepare_answer, split_parts
from ..problems import Problems
from ..submission import Envelope
from ..summarise import Summarised, UnitIndex, summarise
from .base import (
    MAX_ANSWER,
    Axis,
    Chart,
    Gold,
    Metric,
    Scores,
    SystemField,
    TableColumn,
    Track,
    canonical_json,
    category_codes,
    fingerprint_of,
    hash_files,
    prediction_records,
    too_long,
)
from .futurepedia_official import DEVIATIONS, FIXES, LANGS, PAIRS, TASKS, FileWork, score_official
from .futurepedia_runs import records_from_files

# Metric keys each task produces; the first one ranks the task.
TASK_KEYS = {
    "monolingual": ("monolingual",),
    "crosslingual": ("crosslingual_strict", "crosslingual_loose"),
    "selection": ("selection_entropy",),
}
_FIRST = itemgetter(0)
KEY_TASK = {k: t for t, keys in TASK_KEYS.items() for k in keys}


_Task = Literal[TASKS]
_Lang = Literal[LANGS]


# Unknown keys are refused here (the generic path accepts them): a skipped value could hide nesting
# deeper than the limit, which the generic path reports; such files simply take the generic path.
# gc=False: a decoded record holds strings, numbers and lists of records, never a cycle, so the collector
# need not track the hundreds of thousands a file decodes into.
class _Record(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """One prediction, as the typed fast path decodes it; a field the generic path ignores must still type-check."""

    # Tasks and languages as literals: anything else takes the generic path (which reports it), and each
    # value is one shared string, not one built (hashed, freed) per record.
    id: int
    task: _Task
    query_lang: _Lang
    prediction: Annotated[str, msgspec.Meta(max_length=MAX_ANSWER)]
    doc_lang: _Lang | msgspec.UnsetType = msgspec.UNSET  # absent and null differ: null is an error
    doc_langs: list[_Lang] | msgspec.UnsetType = msgspec.UNSET


@dataclass
class Record:
    id: int
    ori: dict[str, list[str]]  # answer parts per language
    new: dict[str, dict[str, list[str]]]  # doc language -> answer language -> parts
    # The answers as published (the official protocol splits them its own way), the 8 languages only.
    raw_ori: dict[str, str | list[str]] = field(default_factory=dict)
    raw_new: dict[str, dict[str, str | list[str]]] = field(default_factory=dict)


class Predictions(dict):
    """A validated file's predictions, {task: {unit: prediction}} (selection: (prediction, document
    languages)), carrying what scoring them computes once for every protocol (`FuturepediaTrack.protocol_work`)."""

    __slots__ = ("work",)


@dataclass(frozen=True)
class AnswerRows:
    """Every gold answer as an ngram_kernel row, and which rows each unit is scored against."""

    needles: ngram_kernel.NeedleRows
    monolingual: np.ndarray  # per monolingual unit (canonical order): the row of its answer
    crosslingual: np.ndarray  # per crosslingual unit, 2 columns: the rows of the answers in its query and document languages
    selection_record: np.ndarray  # per selection unit: its record's position
    conflicting_first: np.ndarray  # [record position, document language code]: the first row of its conflicting answers
    conflicting_count: np.ndarray  # ... and how many rows (0: that language has none)


@dataclass
class FuturepediaGold(Gold):
    records: list[Record]
    index: dict[int, int]
    # futurepedia_official's answer rows per recipe, built at its first use
    protocol_cache: dict = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def unit_keys(self) -> dict[str, list[tuple]]:
        """Canonical unit order per task."""
        ids = [r.id for r in self.records]
        return {
            "monolingual": [(i, q) for i in ids for q in LANGS],
            "crosslingual": [(i, q, d) for i in ids for q, d in permutations(LANGS, 2)],
            "selection": [(i, q) for i in ids for q in LANGS],
        }

    @cached_property
    def key_rank(self) -> dict[str, np.ndarray]:
        """Per task, per canonical position: its unit key's place among the task's keys sorted."""
        out = {}
        for t, keys in self.unit_keys.items():
            out[t] = np.empty(len(keys), dtype=np.int64)
            out[t][sorted(range(len(keys)), key=keys.__getitem__)] = np.arange(len(keys))
        return out

    @cached_property
    def key_order(self) -> dict[str, list[int]]:
        """Per task, the canonical positions in unit key order (a complete file's units sorted by key)."""
        return {t: np.argsort(rank).tolist() for t, rank in self.key_rank.items()}

    @cached_property
    def unit_pos(self) -> dict[str, dict[tuple, int]]:
        return {t: {u: k for k, u in enumerate(keys)} for t, keys in self.unit_keys.items()}

    @cached_property
    def prepared(self) -> dict[int, tuple[dict, dict]]:
        """Per record id: (ori {lang: answer}, new {doc lang: [answer per answer language]}), 3-grams computed once per gold load."""
        return {
            r.id: (
                {q: prepare_answer(parts) for q, parts in r.ori.items()},
                {d: [prepare_answer(parts) for parts in by_lang.values()] for d, by_lang in r.new.items()},
            )
            for r in self.records
        }

    @cached_property
    def answer_rows(self) -> AnswerRows:
        """Every answer as a row of needles and weights (ngram.answer_row), packed once per gold load for
        ngram_kernel.recall_pairs, and where each unit finds its rows (see AnswerRows)."""
        rows: list[tuple[tuple[str, ...], tuple[float, ...]]] = []
        original: dict[tuple[int, str], int] = {}
        first = np.zeros((len(self.records), len(LANGS)), dtype=np.int64)
        count = np.zeros_like(first)
        for i, record in enumerate(self.records):
            ori, new = self.prepared[record.id]
            for q, answer in ori.items():
                original[record.id, q] = len(rows)
                rows.append(answer_row(answer))
            for c, d in enumerate(LANGS):  # a document language without an answer supports nothing: (row, 0)
                answers = new.get(d, ())
                first[i, c], count[i, c] = len(rows), len(answers)
                rows.extend(map(answer_row, answers))
        keys = self.unit_keys
        return AnswerRows(
            needles=ngram_kernel.NeedleRows(rows),
            monolingual=np.array([original[u] for u in keys["monolingual"]], dtype=np.int64),
            crosslingual=np.array([(original[i, q], original[i, d]) for i, q, d in keys["crosslingual"]], dtype=np.int64),
            selection_record=np.array([self.index[i] for i, _ in keys["selection"]], dtype=np.int64),
            conflicting_first=first,
            conflicting_count=count,
        )

    @cached_property
    def unit_index(self) -> dict[str, UnitIndex]:
        """Per task: a record's units are resampled together (clusters = record ids), one stratum."""
        return {
            t: UnitIndex(
                ids=[f"{t}/{u[0]}/" + "-".join(u[1:]) for u in keys], clusters=[u[0] for u in keys], strata=[""] * len(keys)
            )
            for t, keys in self.unit_keys.items()
        }

    @cached_property
    def axes(self) -> dict[str, dict[str, tuple[np.ndarray, list[str]]]]:
        """Per task, the breakdown axes over its units: query language; language pair for crosslingual."""
        out = {t: {"language": category_codes([u[1] for u in keys], LANGS)} for t, keys in self.unit_keys.items()}
        out["crosslingual"]["language_pair"] = category_codes([f"{u[1]}-{u[2]}" for u in self.unit_keys["crosslingual"]], PAIRS)
        return out


def _in_key_order(units: dict, task: str, work: FileWork | None) -> list[tuple]:
    """sorted(units.items(), key=_FIRST): through the file's work, which holds the same units in canonical order,
    by the gold's rank of each one's position (an argsort of integers; comparing key tuples took ~2.5 ms a file)."""
    if work is None or len(work.parsed.get(task, ())) != len(units):
        return sorted(units.items(), key=_FIRST)
    items = list(work.parsed[task].items())
    if len(items) < 2:
        return items
    gold, positions = work.gold, work.positions(task)
    if len(positions) == len(gold.unit_keys[task]):  # every unit: positions are 0 .. n - 1 (ascending, distinct)
        order = gold.key_order[task]
    else:
        order = np.argsort(gold.key_rank[task][positions]).tolist()
    return list(itemgetter(*order)(items))  # picked at C level: ~3x a comprehension over ~11k items


class FuturepediaTrack(Track):
    name = "futurepedia"
    title = "Futurepedia"
    description = "Multilingual RAG in 8 languages: answer recall, cross-lingual transfer and language bias."
    metrics = (
        Metric(
            "monolingual",
            "Monolingual",
            "Character 3-gram recall of the answer in the query's language (documents in that language).",
        ),
        Metric(
            "crosslingual_strict",
            "Cross-lingual (strict)",
            "3-gram recall of the answer in the query's language when the documents are in another language.",
        ),
        Metric("crosslingual_loose", "Cross-lingual (loose)", "As strict, but an answer in the documents' language also counts."),
        Metric(
            "selection_entropy",
            "Selection entropy",
            "Normalised entropy of which document language's (conflicting) answer is given: 1 = no language bias.",
        ),
    )
    rank_by = "monolingual"
    headline = ("monolingual", "crosslingual_strict")
    axes = (
        Axis("language", "Query language", LANGS),
        Axis("language_pair", "Language pair (query-doc)", PAIRS, metrics=("crosslingual_strict", "crosslingual_loose")),
        Axis("doc_language", "Selection share per document language", LANGS, metrics=("share",), kind="share"),
    )
    system_fields = (
        SystemField("name", "System", required=True),
        SystemField("organization", "Organisation"),
        SystemField("retriever", "Retriever", shown=False),
        SystemField("generator", "Generator", filter=True, shown=False),
        SystemField("judge_note", "Judge note"),
        SystemField("link", "Link", kind="url"),
        SystemField("description", "Description"),
        SystemField("top_k", "top-k", kind="int", shown=False),
    )
    unit_label = "answer"
    charts = (
        Chart("by_axis", "Per query language", axis="language"),
        Chart(
            "avg_var", "Average vs variance across languages", axis="language", y_title="VAR across languages (lower = more even)"
        ),
        Chart(
            "shares",
            "Whose answer is trusted: selection share per document language",
            axis="doc_language",
            empty="No system has submitted the selection task yet.",
            x_title="mean share of the answer taken from each document language",
        ),
        Chart(
            "pair_heatmap",
            "Cross-lingual: query language x document language",
            axis="language_pair",
            empty="No system has cross-lingual results yet.",
            x_title="document language",
            y_title="query language",
        ),
    )
    slice_axes = ("language",)
    # The scorer reports each metric's variance across query languages as overall["<key>_var"].
    extra_columns = tuple(
        TableColumn(f"{m.key}_var", f"{m.label} VAR", f"Variance of {m.label} across query languages.", digits=4, shown=False)
        for m in metrics
    )
    partial_metrics = True  # the selection task and the cross-lingual runs are optional
    resampling = "record ids as clusters (all units of an id move together)"
    gold_patterns = ("mul_ans_all.json", "**/mul_ans_all.json")

    deviations = DEVIATIONS
    # The NALE scripts' prediction files: JSONL (named .json), one per task and language (futurepedia_runs.py).
    run_formats = ("jsonl",)
    run_line_bytes = 64 << 20  # a selection line carries the documents of all 8 languages
    run_options = (
        (
            "language",
            "the language of each input, in order: LANG, or QUERY-DOC for crosslingual (default: from the NALE file name)",
        ),
        ("task", "the task of every input (default: from the NALE file name or its lines)"),
    )
    run_tasks = TASKS

    # what the converter reads of a line: the score fields only tell the task (futurepedia_runs._FIELD_TASK)
    run_row_keys = ("id", "prediction", "ans", "ngram_labels", "code_switch_ngram", "lang_ngram")

    def records_from_run(self, fmt: str, run: dict, problems: list[str], options: dict | None = None) -> list[dict]:

        options = options or {}
        return records_from_files(run, problems, options.get("languages") or {}, options.get("task"))

    # ---- gold ---------------------------------------------------------------------
    def read_gold(self, path: Path) -> FuturepediaGold:
        file = path if path.is_file() else _answers_file(path)
        if file is None:
            raise FileNotFoundError(f"futurepedia gold: no mul_ans_all.json (or single answers .json) under {path}")
        records = []
        for raw in json.loads(file.read_text(encoding="utf-8")):
            raw_ori = {q: raw["ori_ans"][q] for q in LANGS}
            raw_new = {d: {a: v for a, v in raw["new_ans"][d].items() if a in LANGS} for d in LANGS if d in raw["new_ans"]}
            records.append(
                Record(
                    id=raw["id"],
                    ori={q: split_parts(a, split=True) for q, a in raw_ori.items()},
                    new={d: {a: split_parts(v, split=False) for a, v in by_lang.items()} for d, by_lang in raw_new.items()},
                    raw_ori=raw_ori,
                    raw_new=raw_new,
                )
            )
        # Not here: the app's start-up loads every track's gold (the results cache keys name its hash) and must not
        # pay numba's import and kernel load (~0.5 s; ~6 s to compile when the cache is cold): the first scoring
        # of a process does (metrics/compiled.py).
        return FuturepediaGold(
            source=str(file), sha256=hash_files([file]), records=records, index={r.id: i for i, r in enumerate(records)}
        )

    def units(self, gold: FuturepediaGold, key: str) -> UnitIndex:
        return gold.unit_index[KEY_TASK[key]]

    def gold_units(self, gold: FuturepediaGold) -> int:
        return sum(map(len, gold.unit_keys.values()))

    def unit_of(self, record: dict) -> str | None:
        task, rid, q = record.get("task"), record.get("id"), record.get("query_lang")
        if task == "crosslingual":
            return f"{task}/{rid}/{q}-{record.get('doc_lang')}"
        return f"{task}/{rid}/{q}" if task in TASKS else None

    def record_summary(self, record: dict) -> str:
        docs = record.get("doc_langs")
        pred = str(record.get("prediction", ""))
        return f"[docs {' '.join(map(str, docs))}] {pred}" if isinstance(docs, list) else pred

    def unit_info(self, gold: FuturepediaGold) -> dict[str, dict]:
        return {
            f"{t}/{u[0]}/" + "-".join(u[1:]): {
                "task": t,
                "language": u[1],
                "gold": ", ".join(gold.records[gold.index[u[0]]].ori[u[1]]),
            }
            for t, keys in gold.unit_keys.items()
            for u in keys
        }

    # ---- submissions ----------------------------------------------------------------
    def validate(self, env: Envelope, gold: FuturepediaGold, problems: Problems) -> dict:
        parsed: dict[str, dict[tuple, tuple]] = {t: {} for t in TASKS}
        for rec, where in prediction_records(env, problems):
            rid = rec.get("id")
            if type(rid) is not int:
                problems.error(where, f"expected an integer id, got {rid!r}"[:200], field="id")
                continue
            if rid not in gold.index:
                problems.error(where, "unknown id", record=rid, field="id")
                continue
            task = rec.get("task")
            if task not in TASKS:
                problems.error(where, f"expected one of {', '.join(TASKS)}, got {task!r}"[:200], record=rid, field="task")
                continue
            q = rec.get("query_lang")
            if q not in LANGS:
                problems.error(where, f"expected one of {' '.join(LANGS)}, got {q!r}"[:200], record=rid, field="query_lang")
                continue
            pred = rec.get("prediction")
            if type(pred) is not str:
                problems.error(where, f"expected a string, got {type(pred).__name__}", record=rid, field="prediction")
                continue
            if problem := too_long(pred, MAX_ANSWER):
                problems.error(where, problem, record=rid, field="prediction")
                continue
            if task == "selection":
                docs = rec.get("doc_langs")
                if (
                    type(docs) is not list
                    or not 2 <= len(docs) <= len(LANGS)
                    or any(d not in LANGS for d in docs)
                    or len(set(docs)) != len(docs)
                ):
                    problems.error(
                        where,
                        f"expected 2 to 8 distinct languages among {' '.join(LANGS)}, got {docs!r}"[:200],
                        record=rid,
                        field="doc_langs",
                    )
                    continue
                unit, payload = (rid, q), (pred, tuple(docs))
            else:
                d = rec.get("doc_lang", q if task == "monolingual" else None)
                if d not in LANGS:
                    problems.error(where, f"expected one of {' '.join(LANGS)}, got {d!r}"[:200], record=rid, field="doc_lang")
                    continue
                if task == "monolingual" and d != q:
                    problems.error(
                        where, f"monolingual doc_lang must equal query_lang ({q}), got {d}", record=rid, field="doc_lang"
                    )
                    continue
                if task == "crosslingual" and d == q:
                    problems.error(
                        where, f"crosslingual doc_lang must differ from query_lang ({q})", record=rid, field="doc_lang"
                    )
                    continue
                unit, payload = ((rid, q) if task == "monolingual" else (rid, q, d)), pred
            if unit in parsed[task]:
                problems.error(where, f"repeated {task} unit {'/'.join(map(str, unit))}", record=rid, field="id")
                continue
            parsed[task][unit] = payload
        return self._with_work(Predictions({t: units for t, units in parsed.items() if units}), gold)

    def fingerprint(self, parsed: dict) -> str:
        # Per task, its units sorted by key (unit keys are unique, so the sort never compares payloads).
        work = getattr(parsed, "work", None)
        canonical = [[task, _in_key_order(units, task, work)] for task, units in sorted(parsed.items())]
        return fingerprint_of(self.name, canonical_json(canonical))

    record_type = _Record

    def fast_validate(self, records: list[_Record], system: dict, gold: FuturepediaGold, env: Envelope) -> dict | None:
        # One pass, every name it reads a local (a global or module attribute per record is ~10% of the loop)
        index, unset, most = gold.index, msgspec.UNSET, len(LANGS)
        mono: dict[tuple, str] = {}
        cross: dict[tuple, str] = {}
        sel: dict[tuple, tuple] = {}
        for r in records:  # task and languages: the decoder checked them
            rid, task = r.id, r.task
            if rid not in index:
                return None
            if task == "crosslingual":
                q, d = r.query_lang, r.doc_lang
                if d is unset or d == q:
                    return None
                cross[rid, q, d] = r.prediction
            elif task == "monolingual":
                q, d = r.query_lang, r.doc_lang
                if d is not unset and d != q:
                    return None
                mono[rid, q] = r.prediction
            elif task == "selection":
                docs = r.doc_langs
                if docs is unset or not 2 <= len(docs) <= most or len(set(docs)) != len(docs):
                    return None
                sel[rid, r.query_lang] = (r.prediction, tuple(docs))
            else:
                return None
        if len(mono) + len(cross) + len(sel) != len(records):
            return None  # a unit repeated (its later record overwrote it): the generic path says where
        parsed = {"monolingual": mono, "crosslingual": cross, "selection": sel}
        return self._with_work(Predictions({t: parsed[t] for t in TASKS if parsed[t]}), gold)

    def score(self, parsed: dict, gold: FuturepediaGold, verdicts: dict | None = None) -> Scores:
        values, answered, shares = _unit_values(parsed, gold, self.protocol_work(parsed, gold))
        summary = Summarised()
        for task, task_values in values.items():
            summary.merge(summarise(gold.unit_index[task], task_values, answered[task], axes=gold.axes[task]))
        per_lang = summary.breakdowns.get("language", {})
        for key in [k for task in values for k in TASK_KEYS[task]]:
            summary.overall[f"{key}_var"] = float(np.var([per_lang[q][key] for q in LANGS]))
        if shares:
            summary.breakdowns["doc_language"] = shares
        n = sum(len(gold.unit_keys[t]) for t in parsed)
        missing = sum(len(gold.unit_keys[t]) - len(parsed[t]) for t in parsed)
        return Scores(
            n=n,
            missing=missing,
            overall=summary.overall,
            ci=summary.ci,
            breakdowns={
                a: summary.breakdowns[a] for a in ("language", "language_pair", "doc_language") if summary.breakdowns.get(a)
            },
            units=summary.units,
            extra={"tasks": [t for t in TASKS if t in parsed]},
        )

    def score_with(
        self,
        parsed: dict,
        gold: FuturepediaGold,
        fixes: frozenset[str],
        verdicts: dict | None = None,
        *,
        headline_only: bool = False,
        work=None,
    ) -> Scores:
        """All six fixes: the board (`score`); fewer: futurepedia_official (none: the scripts' protocol)."""
        if frozenset(fixes) == frozenset(FIXES):
            return self.score(parsed, gold, verdicts)
        return score_official(parsed, gold, frozenset(fixes), headline_only=headline_only, work=work)

    def _with_work(self, parsed: Predictions, gold: FuturepediaGold) -> Predictions:
        self.protocol_work(parsed, gold)  # made now: the fingerprint orders the units by its positions
        return parsed

    def protocol_work(self, parsed: dict, gold: FuturepediaGold) -> FileWork:
        """The file's FileWork, kept with its predictions (a `Predictions`) so that the board's scoring and
        every protocol step share one: each prediction is normalised once and its grams built once."""
        work = getattr(parsed, "work", None)
        if work is None or work.gold is not gold:  # `work` is parsed's own attribute: made for it
            work = FileWork(parsed, gold, _board_layout)
            if isinstance(parsed, Predictions):
                parsed.work = work
        return work


def _unit_values(parsed: dict, gold: FuturepediaGold, work: FileWork):
    """Per task, {metric: score per unit} (0 where unanswered) and the answered mask; the selection shares.

    Each prediction is normalised once, and every (prediction, answer) pair of a task is scored in one
    ngram_kernel.recall_pairs call, with the official protocol's steps' pairs (FileWork._recalls).
    """
    values: dict[str, dict[str, np.ndarray]] = {}
    answered: dict[str, np.ndarray] = {}
    shares: dict[str, dict] = {}
    for task in parsed:
        ks = work.positions(task)
        size = len(gold.unit_keys[task])
        answered[task] = np.zeros(size, dtype=bool)
        answered[task][ks] = True
        cols = values[task] = {key: np.zeros(size) for key in TASK_KEYS[task]}
        layout, recall = work.board(task)
        if task == "monolingual":
            cols["monolingual"][ks] = recall
        elif task == "crosslingual":
            strict, other = recall[0::2], recall[1::2]
            cols["crosslingual_strict"][ks] = strict
            cols["crosslingual_loose"][ks] = np.maximum(strict, other)
        else:
            cols["selection_entropy"][ks], shares = _selection(layout, recall)
    return values, answered, shares


def _board_layout(task: str, work: FileWork) -> tuple:
    """The board's (prediction, answer row) pairs of a task, in the order `_unit_values` reads their recalls:
    monolingual, its answer; crosslingual, (i, answer in the query language), (i, answer in the documents'
    language), i = 0, 1, ...; selection, per offered document language (a group) its conflicting answers,
    in unit order, with (the units' count; each group's unit, document language, rows' count and first pair)."""
    answers = work.gold.answer_rows
    ks = work.positions(task)
    if task == "monolingual":
        return np.arange(len(ks)), answers.monolingual[ks]
    if task == "crosslingual":
        return np.repeat(np.arange(len(ks)), 2), answers.crosslingual[ks].ravel()
    unit_of_group, doc_of_group, record_of_group = work.selection_groups()
    group_first = answers.conflicting_first[record_of_group, doc_of_group]
    group_rows = answers.conflicting_count[record_of_group, doc_of_group]
    begins = np.cumsum(group_rows) - group_rows
    pair_group = np.repeat(np.arange(len(group_rows)), group_rows)
    pair_row = group_first[pair_group] + np.arange(len(pair_group)) - begins[pair_group]
    return unit_of_group[pair_group], pair_row, len(ks), unit_of_group, doc_of_group, group_rows, begins


def _selection(layout: tuple, recall: np.ndarray) -> tuple[np.ndarray, dict]:
    """Normalised selection entropy per unit (in file order), and the mean share of each document language.

    Per offered document language (a group), its support is the best recall among its answers (0
    without one); the shares are the supports normalised per unit.
    """
    _, _, units, unit_of_group, doc_of_group, group_rows, begins = layout
    offered = np.bincount(unit_of_group, minlength=units)
    support = np.zeros(len(group_rows))
    has = group_rows > 0
    if len(recall):
        support[has] = np.maximum.reduceat(recall, begins[has])
    total = np.bincount(unit_of_group, weights=support, minlength=units)
    p = np.divide(support, total[unit_of_group], out=np.zeros_like(support), where=total[unit_of_group] > 0)
    plogp = np.zeros_like(p)
    np.multiply(p, np.log(p, out=np.zeros_like(p), where=p > 0), out=plogp, where=p > 0)
    entropy = -np.bincount(unit_of_group, weights=plogp, minlength=units) / np.log(offered)  # normalised SE
    share_sum = np.bincount(doc_of_group, weights=p, minlength=len(LANGS))
    count = np.bincount(doc_of_group, minlength=len(LANGS))
    shares = {d: {"share": float(share_sum[c] / count[c]), "offered": int(count[c])} for c, d in enumerate(LANGS) if count[c]}
    return entropy, shares


def _answers_file(folder: Path) -> Path | None:
    """The published mul_ans_all.json, else the folder's only .json file (the bundled demo's answers)."""
    published = sorted(folder.rglob("mul_ans_all.json"))
    if published:
        return published[0]
    candidates = sorted(folder.glob("*.json"))
    return candidates[0] if len(candidates) == 1 else None
