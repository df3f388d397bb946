"""Track `futurepedia`: multilingual RAG in 8 languages (3-gram recall, transfer, selection entropy)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from itertools import permutations
from operator import itemgetter
from pathlib import Path

import numpy as np

from ..metrics import BootstrapPlan, selection_entropy
from ..metrics.ngram import normalise, prepare_answer, prepared_recall, split_parts
from ..problems import Problems
from ..submission import Envelope
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
    UnitIndex,
    canonical_json,
    fingerprint_of,
    hash_files,
    prediction_records,
    too_long,
)

LANGS = ("en", "fr", "es", "pt", "zh", "ja", "ko", "ar")
PAIRS = tuple(f"{q}-{d}" for q, d in permutations(LANGS, 2))
TASKS = ("monolingual", "crosslingual", "selection")
# Metric keys each task produces; the first one ranks the task.
TASK_KEYS = {
    "monolingual": ("monolingual",),
    "crosslingual": ("crosslingual_strict", "crosslingual_loose"),
    "selection": ("selection_entropy",),
}
_FIRST = itemgetter(0)
KEY_TASK = {k: t for t, keys in TASK_KEYS.items() for k in keys}


@dataclass
class Record:
    id: int
    ori: dict[str, list[str]]  # answer parts per language
    new: dict[str, dict[str, list[str]]]  # doc language -> answer language -> parts


@dataclass
class FuturepediaGold(Gold):
    records: list[Record]
    index: dict[int, int]

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
    def unit_pos(self) -> dict[str, dict[tuple, int]]:
        return {t: {u: k for k, u in enumerate(keys)} for t, keys in self.unit_keys.items()}

    @cached_property
    def prepared(self) -> dict[int, tuple[dict, dict]]:
        """Per record id: (ori {lang: answer}, new {doc lang: [answer per answer language]}), 3-grams computed once per gold load."""
        return {r.id: ({q: prepare_answer(parts) for q, parts in r.ori.items()},
                       {d: [prepare_answer(parts) for parts in by_lang.values()] for d, by_lang in r.new.items()})
                for r in self.records}

    @cached_property
    def unit_langs(self) -> dict[str, np.ndarray]:
        """Query language of every unit, per task, in canonical order (for the per-language breakdown)."""
        return {t: np.array([u[1] for u in keys]) for t, keys in self.unit_keys.items()}

    @cached_property
    def pair_labels(self) -> np.ndarray:
        return np.array([f"{u[1]}-{u[2]}" for u in self.unit_keys["crosslingual"]])


class FuturepediaTrack(Track):
    name = "futurepedia"
    title = "Futurepedia"
    description = "Multilingual RAG in 8 languages: answer recall, cross-lingual transfer and language bias."
    metrics = (
        Metric("monolingual", "Monolingual", "Character 3-gram recall of the answer in the query's language (documents in that language)."),
        Metric("crosslingual_strict", "Cross-lingual (strict)", "3-gram recall of the answer in the query's language when the documents are in another language."),
        Metric("crosslingual_loose", "Cross-lingual (loose)", "As strict, but an answer in the documents' language also counts."),
        Metric("selection_entropy", "Selection entropy", "Normalised entropy of which document language's (conflicting) answer is given: 1 = no language bias."),
    )
    rank_by = "monolingual"
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
        Chart("avg_var", "Average vs variance across languages", axis="language",
              y_title="VAR across languages (lower = more even)"),
        Chart("shares", "Whose answer is trusted: selection share per document language", axis="doc_language",
              empty="No system has submitted the selection task yet.",
              x_title="mean share of the answer taken from each document language"),
        Chart("pair_heatmap", "Cross-lingual: query language x document language", axis="language_pair",
              empty="No system has cross-lingual results yet.", x_title="document language", y_title="query language"),
    )
    slice_axes = ("language",)
    # The scorer reports each metric's variance across query languages as overall["<key>_var"].
    extra_columns = tuple(TableColumn(f"{m.key}_var", f"{m.label} VAR", f"Variance of {m.label} across query languages.",
                                      digits=4, shown=False) for m in metrics)
    partial_metrics = True  # the selection task and the cross-lingual runs are optional
    resampling = "record ids as clusters (all units of an id move together)"
    gold_patterns = ("mul_ans_all.json", "**/mul_ans_all.json")

    # ---- gold ---------------------------------------------------------------------
    def read_gold(self, path: Path) -> FuturepediaGold:
        file = path if path.is_file() else _answers_file(path)
        if file is None:
            raise FileNotFoundError(f"futurepedia gold: no mul_ans_all.json (or single answers .json) under {path}")
        records = []
        for raw in json.loads(file.read_text(encoding="utf-8")):
            records.append(Record(
                id=raw["id"],
                ori={q: split_parts(raw["ori_ans"][q], split=True) for q in LANGS},
                new={d: {a: split_parts(v, split=False) for a, v in raw["new_ans"][d].items() if a in LANGS}
                     for d in LANGS if d in raw["new_ans"]},
            ))
        return FuturepediaGold(source=str(file), sha256=hash_files([file]), records=records,
                               index={r.id: i for i, r in enumerate(records)})

    def units(self, gold: FuturepediaGold, key: str) -> UnitIndex:
        task = KEY_TASK[key]
        keys = gold.unit_keys[task]
        return UnitIndex(ids=[f"{task}/{u[0]}/" + "-".join(u[1:]) for u in keys],
                         clusters=[u[0] for u in keys], strata=[""] * len(keys))

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
        return {f"{t}/{u[0]}/" + "-".join(u[1:]): {"task": t, "language": u[1], "gold": ", ".join(gold.records[gold.index[u[0]]].ori[u[1]])}
                for t, keys in gold.unit_keys.items() for u in keys}

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
                if (type(docs) is not list or not 2 <= len(docs) <= len(LANGS) or any(d not in LANGS for d in docs)
                        or len(set(docs)) != len(docs)):
                    problems.error(where, f"expected 2 to 8 distinct languages among {' '.join(LANGS)}, got {docs!r}"[:200],
                                   record=rid, field="doc_langs")
                    continue
                unit, payload = (rid, q), (pred, tuple(docs))
            else:
                d = rec.get("doc_lang", q if task == "monolingual" else None)
                if d not in LANGS:
                    problems.error(where, f"expected one of {' '.join(LANGS)}, got {d!r}"[:200], record=rid, field="doc_lang")
                    continue
                if task == "monolingual" and d != q:
                    problems.error(where, f"monolingual doc_lang must equal query_lang ({q}), got {d}", record=rid, field="doc_lang")
                    continue
                if task == "crosslingual" and d == q:
                    problems.error(where, f"crosslingual doc_lang must differ from query_lang ({q})", record=rid, field="doc_lang")
                    continue
                unit, payload = ((rid, q) if task == "monolingual" else (rid, q, d)), pred
            if unit in parsed[task]:
                problems.error(where, f"repeated {task} unit {'/'.join(map(str, unit))}", record=rid, field="id")
                continue
            parsed[task][unit] = payload
        return {t: units for t, units in parsed.items() if units}

    def fingerprint(self, parsed: dict) -> str:
        # Per task, its units sorted (unit keys are unique, so the sort never compares payloads).
        canonical = [[task, sorted(units.items(), key=_FIRST)] for task, units in sorted(parsed.items())]
        return fingerprint_of(self.name, canonical_json(canonical))

    def score(self, parsed: dict, gold: FuturepediaGold, verdicts: dict | None = None) -> Scores:
        prepared = gold.prepared
        values: dict[str, np.ndarray] = {}
        answered: dict[str, np.ndarray] = {}
        langs_of: dict[str, np.ndarray] = {}
        shares = {d: [] for d in LANGS}
        for task, preds in parsed.items():
            pos = gold.unit_pos[task]
            cols = TASK_KEYS[task]
            arr = np.zeros((len(pos), len(cols)))
            mask = np.zeros(len(pos), dtype=bool)
            for unit, payload in preds.items():
                ori, new = prepared[unit[0]]
                k = pos[unit]
                mask[k] = True
                if task == "monolingual":
                    arr[k, 0] = prepared_recall(ori[unit[1]], normalise(payload))
                elif task == "crosslingual":
                    pred = normalise(payload)  # once per record, not once per gold answer
                    strict = prepared_recall(ori[unit[1]], pred)
                    arr[k] = strict, max(strict, prepared_recall(ori[unit[2]], pred))
                else:
                    pred, docs = normalise(payload[0]), payload[1]
                    support = [max((prepared_recall(a, pred) for a in new.get(d, ())), default=0.0) for d in docs]
                    _, norm, p = selection_entropy(support)
                    arr[k, 0] = norm
                    for d, share in zip(docs, p):
                        shares[d].append(share)
            for c, key in enumerate(cols):
                values[key] = arr[:, c]
                answered[key] = mask
                langs_of[key] = gold.unit_langs[task]

        overall, ci, breakdowns = {}, {}, {"language": {}, "language_pair": {}, "doc_language": {}}
        ids = [r.id for r in gold.records]
        for key, v in values.items():
            overall[key] = float(v.mean())
            per_lang = {q: float(v[langs_of[key] == q].mean()) for q in LANGS}
            overall[f"{key}_var"] = float(np.var(list(per_lang.values())))
            for q, m in per_lang.items():
                breakdowns["language"].setdefault(q, {})[key] = m
            # Every record has the same number of units in a task, so resampling
            # records and averaging their means is resampling clusters of units.
            per_record = v.reshape(len(ids), -1).mean(axis=1)
            low, high = BootstrapPlan.for_sizes((len(ids),)).ci([per_record])[0]
            ci[key] = [float(low), float(high)]
        if "crosslingual" in parsed:
            pairs = gold.pair_labels
            for pair in PAIRS:
                m = pairs == pair
                breakdowns["language_pair"][pair] = {k: float(values[k][m].mean()) for k in TASK_KEYS["crosslingual"]}
        if "selection" in parsed:
            breakdowns["doc_language"] = {d: {"share": float(np.mean(s)), "offered": len(s)} for d, s in shares.items() if s}
        n = sum(len(gold.unit_keys[t]) for t in parsed)
        missing = sum(len(gold.unit_keys[t]) - len(parsed[t]) for t in parsed)
        units = {k: np.where(answered[k], v, np.nan) for k, v in values.items()}
        return Scores(n=n, missing=missing, overall=overall, ci=ci,
                      breakdowns={a: b for a, b in breakdowns.items() if b}, units=units,
                      extra={"tasks": [t for t in TASKS if t in parsed]})


def _answers_file(folder: Path) -> Path | None:
    """The published mul_ans_all.json, else the folder's only .json file (the bundled demo's answers)."""
    published = sorted(folder.rglob("mul_ans_all.json"))
    if published:
        return published[0]
    candidates = sorted(folder.glob("*.json"))
    return candidates[0] if len(candidates) == 1 else None
