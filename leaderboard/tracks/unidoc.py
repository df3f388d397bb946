"""Track `unidoc`: UniDoc-Bench, multimodal RAG over real PDFs."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import chain, repeat
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Annotated

import msgspec
import numpy as np

from ..metrics import page_overlap_batch
from ..metrics.judged import judged_units
from ..problems import Problems
from ..submission import Envelope
from ..summarise import summarise
from . import unidoc_gold
from .base import (
    MAX_ANSWER,
    MAX_ID,
    Axis,
    Chart,
    Deviation,
    Gold,
    Metric,
    ReportedRow,
    ReportedSource,
    Scores,
    SystemField,
    Track,
    UnitIndex,
    canonical_json,
    category_codes,
    fingerprint_of,
    prediction_records,
    too_long,
)
from .unidoc_gold import ANSWER_TYPE_NAME, DOMAINS, QUESTION_TYPE_GROUP, Question, context_of, flatten_answer

# The gold's published names stay importable from here (the demo generator and tests read them from the track).
__all__ = ["ANSWER_TYPE_NAME", "DOMAINS", "QUESTION_TYPE_GROUP", "Question", "UnidocTrack", "context_of", "flatten_answer"]

QUESTION_TYPES = ("factual_retrieval", "comparison", "summarization", "logical_reasoning")
ANSWER_TYPES = ("text_only", "image_only", "text_plus_image", "table_required")
PARADIGMS = ("text", "image", "mm-joint", "mm-fusion", "other")
K = 10
MAX_PAGE = 1_000_000  # beyond any real document; keeps page numbers inside int64 arithmetic
_FIRST = itemgetter(0)
_ID, _RETRIEVED, _ANSWER = attrgetter("id"), attrgetter("retrieved"), attrgetter("answer")
_DOC, _PAGES, _MODALITY = attrgetter("doc"), attrgetter("pages"), attrgetter("modality")


@dataclass
class UnidocGold(Gold):
    questions: list[Question]
    index: dict[str, int]
    form: str = "json"  # the published form read: "json" (the repository's files) or "parquet" (the HF dataset)
    commit: str = ""  # the Hub commit read; "" for local files

    @cached_property
    def doc_codes(self) -> dict[str, int]:
        return {d: c for c, d in enumerate(sorted({ctx[0] for q in self.questions for ctx in q.contexts}))}

    @cached_property
    def context_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(doc code, first page, last page) per question, padded with doc -2; and the counts."""
        width = max(len(q.contexts) for q in self.questions)
        doc = np.full((len(self.questions), width), -2)
        start = np.zeros((len(self.questions), width), dtype=np.int64)
        end = np.zeros_like(start)
        for i, q in enumerate(self.questions):
            for j, (d, a, b) in enumerate(q.contexts):
                doc[i, j], start[i, j], end[i, j] = self.doc_codes[d], a, b
        return doc, start, end, np.array([len(q.contexts) for q in self.questions])

    @cached_property
    def spaced_questions(self) -> list[str]:
        """Each question with its whitespace runs as single spaces (what a record's `question` is compared to)."""
        return [_spaced(q.question) for q in self.questions]

    @cached_property
    def unit_index(self) -> UnitIndex:
        """Questions resampled one by one, one stratum."""
        ids = [q.qid for q in self.questions]
        return UnitIndex(ids=ids, clusters=ids, strata=[""] * len(ids))

    @cached_property
    def categories(self) -> dict[str, tuple[np.ndarray, list[str]]]:
        return {
            axis: category_codes([getattr(q, axis) for q in self.questions], order)
            for axis, order in (("domain", DOMAINS), ("question_type", QUESTION_TYPES), ("answer_type", ANSWER_TYPES))
        }


@dataclass
class UnidocRun:
    """A validated submission: per answered question its candidates and answer."""

    rows: list[int]  # gold row of each answered question, in file order
    candidates: list[list[tuple]]  # (doc, start, end, modality), aligned with rows
    answers: dict[int, str | None]
    columns: tuple | None = None  # (docs, starts, ends, list lengths) of all candidates, for scoring
    repeats: dict[int, list[bool]] | None = None  # per list with a repeat among its first K: which are repeats
    ids: list[str] | None = None  # question id of each answered question, aligned with rows


_Page = Annotated[int, msgspec.Meta(ge=1)]


# Unknown keys are refused here (the generic path accepts them): a skipped value could hide nesting
# deeper than the limit, which the generic path reports; such files simply take the generic path.
class _Candidate(msgspec.Struct, forbid_unknown_fields=True):
    doc: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_ID)]
    pages: Annotated[list[_Page], msgspec.Meta(min_length=1, max_length=2)]
    modality: str | None = None


class _Record(msgspec.Struct, forbid_unknown_fields=True):
    """One prediction, as the typed fast path decodes it (a file with unknown keys takes the generic path)."""

    id: Annotated[str, msgspec.Meta(max_length=MAX_ID)]
    retrieved: list[_Candidate]
    answer: Annotated[str, msgspec.Meta(max_length=MAX_ANSWER)] | None = None
    question: str | None = None


class UnidocTrack(Track):
    name = "unidoc"
    title = "UniDoc-Bench"
    description = "Multimodal RAG over real PDFs: page-level retrieval and LLM-judged answers, 8 domains."
    metrics = (
        Metric(
            "recall@10", "Recall@10", "Share of gold contexts (doc, page range) overlapped by one of the first 10 candidates."
        ),
        Metric(
            "precision@10",
            "Precision@10",
            "Share of the first 10 candidates that overlap a gold context; repeats count as misses.",
        ),
        Metric(
            "completeness",
            "Completeness",
            "Share of the gold answer's claims (those that answer the question) the answer states (LLM judge).",
            needs_judge=True,
        ),
        Metric(
            "faithfulness",
            "Faithfulness",
            "Share of the answer's claims (those that answer the question) supported by the gold answer and evidence (LLM judge).",
            needs_judge=True,
        ),
    )
    rank_by = "recall@10"
    axes = (
        Axis("domain", "Domain", DOMAINS),
        Axis("question_type", "Question type", QUESTION_TYPES),
        Axis("answer_type", "Answer type", ANSWER_TYPES),
    )
    system_fields = (
        SystemField("name", "System", required=True),
        SystemField("organization", "Organisation"),
        SystemField("paradigm", "Paradigm", required=True, choices=PARADIGMS, filter=True),
        SystemField("retriever", "Retriever", shown=False),
        SystemField("generator", "Generator", shown=False),
        SystemField("judge_note", "Judge note"),
        SystemField("link", "Link", kind="url"),
        SystemField("description", "Description"),
        SystemField("top_k", "top-k", kind="int", shown=False),
    )
    charts = (
        Chart("by_axis", "Per domain", axis="domain"),
        Chart("by_axis", "Per answer type", axis="answer_type"),
        Chart("by_axis", "Per question type", axis="question_type"),
        Chart("scatter", "Retrieval vs end-to-end", x="recall@10", y="completeness"),
    )
    slice_axes = ("domain", "question_type", "answer_type")
    resampling = "questions"
    # The judge asks what src/evaluation/correctness.py asks (SCORING.md, "Official scripts"); these it does not copy.
    judge_deviations = (
        Deviation(
            "temperature-0",
            "`src/evaluation/correctness.py` samples GPT-4o at temperature 0.85",
            "asks its judge model at temperature 0",
            "the same answer then gets the same verdict, which can be cached and checked",
        ),
        Deviation(
            "gold-claims-cached",
            "extracts the gold answer's claims again on every run, for every response",
            "extracts them once per question and judge, cached with the judge's name and prompt version",
            "every response to a question is judged against the same claims, paid for once",
        ),
        Deviation(
            "reference-without-chunk-text",
            "checks faithfulness against the gold answer plus the raw text of the question's chunks",
            "checks it against the gold answer plus the used evidence items' facts",
            "the published question files do not contain the chunks' text",
        ),
        Deviation(
            "failures-left-out",
            "scores an answer 0 when the judge gives no usable reply in 3 tries",
            "leaves a judge failure out of the mean and counts it in the judge-failure figure",
            "a fault of the judge is not the system's; the count shows how many answers it concerns",
        ),
    )
    run_formats = ("jsonl",)

    def records_from_run(self, fmt: str, run: list, problems: list[str]) -> list[dict]:
        """`{id, retrieved, answer}` lines whose `retrieved` holds UniDoc context file names (`<doc>_id_<k>_pg<a>[_pg<b>].txt`,
        `<doc>/figure-<page>-<n>.jpg`, `<doc>/table-<page>-<n>.jpg`) or ready `{doc, pages}` candidates."""
        records = []
        for line, obj in run:
            if not isinstance(obj, dict) or "id" not in obj:
                problems.append(f"line {line}: expected an object with an id")
                continue
            retrieved = obj.get("retrieved", [])
            if not isinstance(retrieved, list):
                problems.append(f"line {line}: retrieved: expected a list of context file names")
                continue
            candidates = []
            for i, item in enumerate(retrieved):
                if isinstance(item, dict):
                    candidates.append(item)
                    continue
                try:
                    doc, first, last = context_of(str(item))
                except ValueError:
                    problems.append(f"line {line}: retrieved[{i}]: {str(item)[:200]!r} is not a UniDoc context file name")
                    continue
                kind = "text" if str(item).endswith(".txt") else "table" if "/table-" in str(item) else "image"
                candidates.append({"doc": doc, "pages": [first] if first == last else [first, last], "modality": kind})
            record = {"id": obj["id"], "retrieved": candidates}
            if obj.get("answer") is not None:
                record["answer"] = obj["answer"]
            records.append(record)
        return records

    def wants_judge(self, summary: dict) -> bool:
        """Only a submission with answers has anything to judge (a retrieval-only run has none)."""
        return summary.get("extra", {}).get("answered", 0) > 0

    # ---- gold ---------------------------------------------------------------------
    def load_gold(self, source: str | Path | None = None) -> UnidocGold:
        """Either published form, from a local path or a Hub dataset id; what was read (or why it could not be)
        is kept for the status line."""
        try:
            dataset = unidoc_gold.hub_dataset(source)
            if dataset is None:
                gold = super().load_gold(source)
            else:  # once per process: the gold is fixed at the commit read
                if dataset not in _HUB_GOLD:
                    _HUB_GOLD[dataset] = _gold_of(unidoc_gold.read_hub(dataset))
                gold = _HUB_GOLD[dataset]
        except (ValueError, OSError) as exc:
            if source is not None:
                unidoc_gold.remember(source, error=exc)
            raise
        if source is not None:
            unidoc_gold.remember(source, gold)
        return gold

    def read_gold(self, path: Path) -> UnidocGold:
        return _gold_of(unidoc_gold.read_local(path))

    def gold_label(self, source: str) -> str:
        return unidoc_gold.label(source)

    def gold_note(self, source: str) -> str:
        return unidoc_gold.note(source)

    def gold_units(self, gold: UnidocGold) -> int:
        return len(gold.questions)

    def unit_of(self, record: dict) -> str | None:
        return record.get("id") if isinstance(record.get("id"), str) else None

    def record_summary(self, record: dict) -> str:
        answer = record.get("answer")
        top = [
            f"{c.get('doc')} p{'-'.join(map(str, c.get('pages') or []))}"
            for c in (record.get("retrieved") or [])[:3]
            if isinstance(c, dict)
        ]
        head = f"[{'; '.join(top)}]" if top else "[nothing retrieved]"
        return f"{head} {answer}" if isinstance(answer, str) else head

    def unit_info(self, gold: UnidocGold) -> dict[str, dict]:
        return {
            q.qid: {
                "domain": q.domain,
                "question_type": q.question_type,
                "answer_type": q.answer_type,
                "question": q.question,
                "gold": q.answer,
            }
            for q in gold.questions
        }

    # ---- reported results (the paper's systems) ------------------------------------------
    reported_files = ("unidoc-bench-paper.json",)
    reported_notes = (
        "The paper's figures were measured on its 1,600 questions (the published files, the board's gold, hold "
        '1,742); its "Avg." rows average over the eight domains, not over questions; its judge (GPT-4o claim '
        "verification) is not the board's. Its top-20 completeness, its Table 5 completeness (top-k not stated), "
        "cost and latency per query appear in the detail view only."
    )

    def reported_rows(self, files: dict, gold: Gold) -> list[ReportedRow]:
        """The paper's six systems: its keys are this track's metric and axis keys, except the two extra columns
        (`_top20`, `_table5`) that have no board equivalent and go to the detail view."""
        paper = files["unidoc-bench-paper.json"]
        tables = paper["source"]["tables"]
        measured = f"{paper['evaluated_on']}; {paper['averaging']}; judge: {paper['judge']}"
        notes = tuple(paper.get("notes", ()))
        rows = []
        for system in paper["systems"]:
            overall, detail = _reported_split(system["overall"], "overall")
            breakdowns: dict = {}
            detail_breakdowns: dict = {}
            for axis, cells in system.get("breakdowns", {}).items():
                if axis not in {a.key for a in self.axes}:
                    raise ValueError(f"{system['key']}: unknown breakdown {axis!r}")
                declared = next(a.values for a in self.axes if a.key == axis)
                for value, figures in cells.items():
                    if value not in declared:
                        raise ValueError(f"{system['key']}: unknown {axis} {value!r}")
                    shown, extra = _reported_split(figures, f"{axis}.{value}")
                    breakdowns.setdefault(axis, {})[value] = shown
                    if extra:
                        detail_breakdowns.setdefault(axis, {})[value] = {_REPORTED_EXTRA[k]: v for k, v in extra.items()}
            cited = [t.strip() for t in system["tables"].split(",")]
            detail_overall = tuple((_REPORTED_EXTRA[k], v, "") for k, v in detail.items())
            if "cost_usd_per_query" in system:
                detail_overall += (("Cost per query (Table 10)", system["cost_usd_per_query"], "USD"),)
            if "latency_s_per_query" in system:
                detail_overall += (("Latency per query (Table 10)", system["latency_s_per_query"], "s"),)
            rows.append(
                ReportedRow(
                    key=system["key"],
                    name=system["name"],
                    system={
                        "name": system["name"],
                        "organization": "UniDoc-Bench paper",
                        "paradigm": system["paradigm"],
                        "link": "https://arxiv.org/abs/2510.03663",
                    },
                    overall=overall,
                    breakdowns=breakdowns,
                    source=ReportedSource(
                        title=paper["source"]["paper"],
                        where="; ".join(f"{t} ({tables[t]})" for t in cited),
                        licence="figures cited from a paper",
                        measured_on=measured,
                        url="https://arxiv.org/abs/2510.03663",
                        notes=notes,
                    ),
                    note="the paper's 1,600 questions (the board's gold: the published 1,742), Avg. over 8 domains, "
                    "the paper's GPT-4o judge",
                    judge="the paper's judge (GPT-4o claim verification)",
                    detail_overall=detail_overall,
                    detail_breakdowns=detail_breakdowns,
                )
            )
        return rows

    # ---- submissions ----------------------------------------------------------------
    def validate(self, env: Envelope, gold: UnidocGold, problems: Problems) -> UnidocRun:
        rows: list[int] = []
        lists: list[tuple[str, str, list]] = []
        answers: dict[int, str | None] = {}
        ids: list[str] = []
        index = gold.index
        for rec, where in prediction_records(env, problems):
            qid = rec.get("id")
            if type(qid) is not str:
                problems.error(where, f"expected a string id like 'finance-0007', got {qid!r}"[:200], field="id")
                continue
            if problem := too_long(qid, MAX_ID):
                problems.error(where, problem, field="id")
                continue
            i = index.get(qid)
            if i is None:
                problems.error(where, "unknown question id", record=qid, field="id")
                continue
            if i in answers:
                problems.error(where, "repeated question id", record=qid, field="id")
                continue
            question = rec.get("question")
            if question is not None and (type(question) is not str or _spaced(question) != gold.spaced_questions[i]):
                problems.error(
                    where,
                    "question text does not match the gold question of this id (misaligned ids?)",
                    record=qid,
                    field="question",
                )
            answer = rec.get("answer")
            if answer is not None and type(answer) is not str:
                problems.error(where, f"expected a string, got {type(answer).__name__}", record=qid, field="answer")
                answer = None
            elif answer is not None and (problem := too_long(answer, MAX_ANSWER)):
                problems.error(where, problem, record=qid, field="answer")
                answer = None
            answers[i] = answer
            retrieved = rec.get("retrieved")
            if type(retrieved) is not list:
                problems.error(
                    where,
                    "expected a ranked list of candidates"
                    if retrieved is None
                    else f"expected a list, got {type(retrieved).__name__}",
                    record=qid,
                    field="retrieved",
                )
                continue
            rows.append(i)
            ids.append(qid)
            lists.append((where, qid, retrieved))
        bulk = _bulk_candidates([r for _, _, r in lists])
        if bulk is None:  # something is malformed: the slow path says precisely what
            candidates = [_checked_list(where, qid, r, problems) for where, qid, r in lists]
            columns = None
        else:
            candidates, columns = bulk
        repeats = {}
        for j, ((where, qid, _), cands) in enumerate(zip(lists, candidates)):
            top = cands[:K]
            if len(set(top)) < len(top):
                problems.warn(where, "repeated candidate among the first 10 (counts as a miss)", record=qid, field="retrieved")
                seen: set = set()
                repeats[j] = [c in seen or seen.add(c) for c in top]
        return UnidocRun(rows, candidates, answers, columns, repeats, ids)

    record_type = _Record

    def fast_validate(self, records: list[_Record], system: dict, gold: UnidocGold, env: Envelope) -> UnidocRun | None:
        ids = list(map(_ID, records))
        rows = list(map(gold.index.get, ids))
        if None in rows or len(set(rows)) != len(rows):
            return None
        spaced, questions = gold.spaced_questions, gold.questions
        for r, i in zip(records, rows):
            # the exact text (most records) needs no respacing: equal texts are equal once respaced too
            if r.question is not None and r.question != questions[i].question and _spaced(r.question) != spaced[i]:
                return None
        lists = list(map(_RETRIEVED, records))
        flat = list(chain.from_iterable(lists))
        cols = _columns(list(map(len, lists)), list(map(_DOC, flat)), list(map(_PAGES, flat)), list(map(_MODALITY, flat)))
        if cols is None:
            return None
        candidates, columns = cols
        if any(len(set(c[:K])) < len(c[:K]) for c in candidates):
            return None  # a repeat is worth a warning with its line: the generic path gives it
        return UnidocRun(rows, candidates, dict(zip(rows, map(_ANSWER, records))), columns, {}, ids)

    def fingerprint(self, run: UnidocRun) -> str:
        # Per question: its id, answer and ranked candidates (list order is a value: it ranks).
        records = sorted(zip(run.ids, map(run.answers.get, run.rows), run.candidates), key=_FIRST)
        return fingerprint_of(self.name, canonical_json(records))

    def judge_items(self, parsed: UnidocRun, gold: UnidocGold) -> list:
        from ..judge import JudgeItem

        return [
            JudgeItem(q.qid, q.question, q.answer, q.evidence_facts, answer)
            for i, answer in sorted(parsed.answers.items())
            if answer is not None
            for q in (gold.questions[i],)
        ]

    def score(self, run: UnidocRun, gold: UnidocGold, verdicts: dict | None = None) -> Scores:
        n = len(gold.questions)
        precision, recall = _precision_recall(run, gold)
        values = {"precision@10": precision, "recall@10": recall}
        extra = {"answered": sum(1 for a in run.answers.values() if a is not None)}
        if verdicts is not None and extra["answered"]:
            judged, extra["judge_failures"] = judged_units(
                n, ((i, gold.questions[i].qid) for i, a in run.answers.items() if a is not None), verdicts
            )
            values.update(judged)
        answered = np.zeros(n, dtype=bool)
        answered[list(run.answers)] = True
        s = summarise(gold.unit_index, values, answered, axes=gold.categories)
        return Scores(
            n=n, missing=n - len(run.answers), overall=s.overall, ci=s.ci, breakdowns=s.breakdowns, units=s.units, extra=extra
        )

    def units(self, gold: UnidocGold, key: str) -> UnitIndex:
        return gold.unit_index


_HUB_GOLD: dict = {}  # HubDataset -> UnidocGold


def _gold_of(read: unidoc_gold.GoldRead) -> UnidocGold:
    qs = read.questions
    return UnidocGold(
        source=read.source,
        sha256=read.sha256,
        questions=qs,
        index={q.qid: i for i, q in enumerate(qs)},
        form=read.form,
        commit=read.commit,
    )


# The paper's extra columns, with no board equivalent: shown in the detail view under these labels.
_REPORTED_EXTRA = {
    "completeness_top20": "Completeness at top-20 (Table 4)",
    "completeness_table5": "Completeness (Table 5, top-k not stated)",
}
_REPORTED_METRICS = ("precision@10", "recall@10", "completeness", "faithfulness")  # the paper's keys = the metric keys


def _reported_split(figures: dict, where: str) -> tuple[dict, dict]:
    """(board metric figures, detail-only figures) of one cell of the paper; any other key is an error."""
    shown, extra = {}, {}
    for key, value in figures.items():
        if key in _REPORTED_METRICS:
            shown[key] = value
        elif key in _REPORTED_EXTRA:
            extra[key] = value
        else:
            raise ValueError(f"{where}: unknown figure {key!r}")
    return shown, extra


def _candidate(c) -> tuple | str:
    """(doc, start, end, modality), or the reason the candidate is malformed."""
    if type(c) is not dict:
        return f"expected an object {{doc, pages, modality}}, got {type(c).__name__}"
    doc, pages, modality = c.get("doc"), c.get("pages"), c.get("modality")
    if type(doc) is not str or not doc:
        return f"doc: expected a non-empty string, got {doc!r}"[:200]
    if len(doc) > MAX_ID:
        return f"doc: expected at most {MAX_ID} characters, got {len(doc):,}"
    if modality is not None and type(modality) is not str:
        return f"modality: expected a string, got {type(modality).__name__}"
    if type(pages) is not list or not 1 <= len(pages) <= 2 or any(type(p) is not int or p < 1 for p in pages):
        return f"pages: expected [start, end] or [page] of integers >= 1, got {pages!r}"[:200]
    if max(pages) > MAX_PAGE:
        return f"pages: page numbers above {MAX_PAGE:,} are not real pages, got {pages!r}"[:200]
    start, end = pages[0], pages[-1]
    if start > end:
        return f"pages: start {start} is after end {end} (pages out of order)"
    return doc, start, end, modality


def _checked_list(where: str, qid: str, retrieved: list, problems: Problems) -> list[tuple]:
    out = []
    for j, c in enumerate(retrieved):
        cand = _candidate(c)
        if isinstance(cand, str):
            problems.error(where, cand, record=qid, field=f"retrieved[{j}]")
        else:
            out.append(cand)
    return out


_NONE = type(None)


def _bulk_candidates(lists: list[list]) -> tuple[list[list[tuple]], tuple] | None:
    """All candidates of a well-formed file (dicts), checked with whole-list passes.

    Each check is one C-level pass over every candidate of the file, several
    times faster than checking candidate by candidate; None when any check
    fails, so the caller falls back to the precise per-candidate path.
    """
    flat = list(chain.from_iterable(lists))
    try:  # dict.get refuses anything but a dict: no separate type pass needed
        docs = list(map(dict.get, flat, repeat("doc")))
        pages = list(map(dict.get, flat, repeat("pages")))
        mods = list(map(dict.get, flat, repeat("modality")))
    except TypeError:
        return None
    if flat and (
        set(map(type, docs)) != {str}
        or "" in docs
        or max(map(len, docs)) > MAX_ID
        or set(map(type, pages)) != {list}
        or not set(map(type, mods)) <= {str, _NONE}
    ):
        return None
    if flat and set(map(type, chain.from_iterable(pages))) != {int}:
        return None
    return _columns(list(map(len, lists)), docs, pages, mods)


def _spaced(text: str) -> str:
    return " ".join(text.split())


def _columns(lens: list[int], docs: list[str], pages: list[list[int]], mods: list) -> tuple[list[list[tuple]], tuple] | None:
    """Tuples per list and the flat columns scoring needs, once types are known good; None if a range is bad."""
    if not docs:
        return [[] for _ in lens], ([], np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), lens)
    plens = np.fromiter(map(len, pages), dtype=np.int64, count=len(pages))
    if plens.min() < 1 or plens.max() > 2:
        return None
    flat_pages = list(chain.from_iterable(pages))
    if min(flat_pages) < 1 or max(flat_pages) > MAX_PAGE:
        return None
    values = np.array(flat_pages, dtype=np.int64)
    last = np.cumsum(plens) - 1
    starts, ends = values[last - plens + 1], values[last]
    if (starts > ends).any():
        return None
    tuples = list(zip(docs, starts.tolist(), ends.tolist(), mods))
    out, pos = [], 0
    for n in lens:
        out.append(tuples[pos : pos + n])
        pos += n
    return out, (docs, starts, ends, lens)


def _precision_recall(run: UnidocRun, gold: UnidocGold) -> tuple[np.ndarray, np.ndarray]:
    """P@10 and R@10 per gold question (0 where unanswered), all questions in one pass."""
    n = len(gold.questions)
    docs, starts, ends, lens = run.columns
    if not docs:
        return np.zeros(n), np.zeros(n)
    lens = np.asarray(lens, dtype=np.int64)
    # position of each candidate in its list: only the first K count
    offsets = np.repeat(np.cumsum(lens) - lens, lens)
    keep = (np.arange(len(docs)) - offsets) < K
    cand_q = np.repeat(np.asarray(run.rows, dtype=np.int64), lens)[keep]
    cand_doc = np.fromiter(map(gold.doc_codes.get, docs, repeat(-1)), dtype=np.int64, count=len(docs))[keep]
    # A candidate repeating an earlier one of its list is a miss (found by validate).
    repeat_flags = np.zeros(int(keep.sum()), dtype=bool)
    if run.repeats:
        first = np.cumsum(np.minimum(lens, K)) - np.minimum(lens, K)
        for j, flags in run.repeats.items():
            repeat_flags[first[j] : first[j] + len(flags)] = flags
    gdoc, gstart, gend, ngold = gold.context_arrays
    return page_overlap_batch(cand_q, cand_doc, starts[keep], ends[keep], repeat_flags, gdoc, gstart, gend, ngold, K)
