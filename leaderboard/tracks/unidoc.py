"""Track `unidoc`: UniDoc-Bench, multimodal RAG over real PDFs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate, chain, repeat
from operator import attrgetter, gt, itemgetter
from pathlib import Path
from typing import Annotated, Literal

import msgspec
import numpy as np

from ..metrics import page_hits_batch, repeat_flags
from ..metrics.judged import judged_units
from ..problems import Problems
from ..submission import Envelope
from ..summarise import UnitIndex, summarise
from . import unidoc_gold, unidoc_runs
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
_FIRST, _LAST = itemgetter(0), itemgetter(-1)
_TOP = itemgetter(slice(0, K))  # a list's first K
_ID, _RETRIEVED, _ANSWER = attrgetter("id"), attrgetter("retrieved"), attrgetter("answer")
_DOC, _PAGES, _MODALITY, _CID = attrgetter("doc"), attrgetter("pages"), attrgetter("modality"), attrgetter("id")


def gold_pages(question: Question) -> frozenset[tuple[str, int]]:
    """The question's gold pages, (doc, page) with doc ids as published: every page of every used evidence item."""
    return frozenset(question.pages)


def script_gold_pages(question: Question) -> frozenset[tuple[str, int]]:
    """The gold pages as retrieval_eval.py reads them from the same source paths: a text chunk's doc id as an
    integer (`0123_id_...` gives "123"), its pages from the last two `pg<n>` of the name (the first alone when
    they run backwards); a figure's or table's doc id (its folder) as published. A gold without source paths
    (the parquet form: page images only) has no text chunk: its pages are read as published."""
    if not question.used_sources:
        return gold_pages(question)
    out = set()
    for source in question.used_sources:
        base = source.rsplit("/", 1)[-1]
        if base.endswith(".txt"):
            m = re.match(r"(\d+)_id", base)
            doc = str(int(m.group(1))) if m else "None"
            found = [int(p) for p in re.findall(r"pg(\d+)", base)]
            if len(found) >= 2:
                first, last = found[-2:]
                out.update((doc, p) for p in (range(first, last + 1) if first <= last else [first]))
            else:
                out.update((doc, p) for p in found)
        else:
            out.update(gold_pages_of_source(source))
    return frozenset(out)


def gold_pages_of_source(source: str) -> list[tuple[str, int]]:
    doc, first, last = context_of(source)
    return [(doc, p) for p in range(first, last + 1)]


def _page_arrays(pages: list[frozenset], codes: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """(doc code, page) per question and gold page, padded with doc -2."""
    width = max(map(len, pages))
    doc = np.full((len(pages), width), -2)
    page = np.zeros((len(pages), width), dtype=np.int64)
    for i, ps in enumerate(pages):
        for j, (d, p) in enumerate(sorted(ps)):
            doc[i, j], page[i, j] = codes[d], p
    return doc, page


@dataclass
class UnidocGold(Gold):
    questions: list[Question]
    index: dict[str, int]
    form: str = "json"  # the published form read: "json" (the repository's files) or "parquet" (the HF dataset)
    commit: str = ""  # the Hub commit read; "" for local files

    @cached_property
    def pages(self) -> list[frozenset[tuple[str, int]]]:
        return [gold_pages(q) for q in self.questions]

    @cached_property
    def script_pages(self) -> list[frozenset[tuple[str, int]]]:
        return [script_gold_pages(q) for q in self.questions]

    @cached_property
    def doc_codes(self) -> dict[str, int]:
        docs = {d for ps in (*self.pages, *self.script_pages) for d, _ in ps}
        return {d: c for c, d in enumerate(sorted(docs))}

    @cached_property
    def page_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(doc code, page) per question and gold page (padded with doc -2), and the number of gold pages."""
        return (*_page_arrays(self.pages, self.doc_codes), np.array(list(map(len, self.pages))))

    @cached_property
    def script_page_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The same for the gold pages as the official script reads them."""
        return (*_page_arrays(self.script_pages, self.doc_codes), np.array(list(map(len, self.script_pages))))

    @cached_property
    def spaced_questions(self) -> list[str]:
        """Each question with its whitespace runs as single spaces (what a record's `question` is compared to)."""
        return [_spaced(q.question) for q in self.questions]

    @cached_property
    def unit_index(self) -> UnitIndex:
        """Questions resampled one by one within their domain; a headline is the mean of the domain means."""
        ids = [q.qid for q in self.questions]
        return UnitIndex(ids=ids, clusters=ids, strata=[q.domain for q in self.questions])

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
    candidates: list[list[tuple]]  # (doc, start, end, modality) or (doc, start, end, modality, id), aligned with rows
    answers: dict[int, str | None]
    # (docs, starts, ends, list lengths, ids or None when no candidate has one) of all candidates, for scoring
    columns: tuple | None = None
    repeats: dict[int, list[bool]] | None = None  # per list with a repeat among its first K: which are repeats
    ids: list[str] | None = None  # question id of each answered question, aligned with rows
    # What every protocol's scoring shares, computed once per gold (both protocols and each deviation's step)
    flat: dict = field(default_factory=dict, repr=False, compare=False)


_Page = Annotated[int, msgspec.Meta(ge=1, le=MAX_PAGE)]


# Unknown keys are refused here (the generic path accepts them): a skipped value could hide nesting
# deeper than the limit, which the generic path reports; such files simply take the generic path.
# gc=False: a decoded record holds strings, numbers and lists of records, never a cycle, so the collector
# need not track the hundreds of thousands a file decodes into.
class _Candidate(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    doc: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_ID)]
    # a tuple: allocated and freed faster than a list, and this file's 17,000 of them are read once
    pages: Annotated[tuple[_Page, ...], msgspec.Meta(min_length=1, max_length=2)]
    modality: str | None = None
    id: Annotated[str, msgspec.Meta(max_length=MAX_ID)] | None = None


class _Record(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """One prediction, as the typed fast path decodes it (a file with unknown keys takes the generic path)."""

    id: Annotated[str, msgspec.Meta(max_length=MAX_ID)]
    retrieved: list[_Candidate]
    answer: Annotated[str, msgspec.Meta(max_length=MAX_ANSWER)] | None = None
    question: str | None = None


class _CommonCandidate(_Candidate, forbid_unknown_fields=True, gc=False):
    # the benchmark's modalities as literals: one shared string each instead of one per candidate
    modality: Literal["text", "image", "table"] | None = None


class _CommonRecord(_Record, forbid_unknown_fields=True, gc=False):
    retrieved: list[_CommonCandidate]


BOARD = frozenset({"doc-ids-as-published", "repeats-count-once", "precision-over-10", "unanswered-count"})
DEVIATIONS = (
    Deviation(
        "doc-ids-as-published",
        "reads a gold text chunk's doc id as an integer (leading zeros dropped) while image doc ids and candidates' "
        "doc ids stay strings; reads each candidate from its file name",
        "compares doc ids exactly as published, and a candidate by its doc and pages",
        "a text candidate can never match a gold text chunk of the 125 documents whose ids start with 0 (142 "
        "questions of the repository's files); names the script cannot parse (figure paths, page images "
        "`<doc>_page_<n>.png`) stop it",
    ),
    Deviation(
        "repeats-count-once",
        "counts every copy of a candidate as a hit",
        "a candidate that is the same as an earlier one in the list (same id, or same doc, pages and modality when "
        "either has no id) is a miss",
        "padding a list with one correct page would score P@10 = 1",
    ),
    Deviation(
        "precision-over-10",
        "divides hits by the number of candidates among the first 10 (the list length when shorter)",
        "divides hits by 10",
        "returning one sure candidate would score P@10 = 1",
    ),
    Deviation(
        "unanswered-count",
        "leaves out questions with an empty list and questions the file has no record for",
        "both score 0 and count (a question without record is counted as missing)",
        "skipping hard questions would raise the mean",
    ),
)


class UnidocTrack(Track):
    name = "unidoc"
    title = "UniDoc-Bench"
    description = "Multimodal RAG over real PDFs: page-level retrieval and LLM-judged answers, 8 domains."
    metrics = (
        Metric("recall@10", "Recall@10", "Share of the gold pages that one of the first 10 candidates shares."),
        Metric(
            "precision@10",
            "Precision@10",
            "Candidates among the first 10 that share a gold page, over 10; a repeated candidate is a miss.",
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
    headline = ("recall@10", "completeness")
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
    # "jsonl": one row per line; "baseline": the column-oriented JSON the benchmark's baselines write (its
    # JSONL variant is read line by line either way). Rows of both shapes may mix (unidoc_runs.py).
    run_formats = ("jsonl", "baseline")
    run_row_keys = unidoc_runs.ROW_KEYS
    # A baseline line carries its retrieved and gold contexts: far more than a prediction's 64 KiB.
    run_line_bytes = 64 << 20

    def records_from_run(self, fmt: str, run: dict, problems: list[str], options: dict | None = None) -> list[dict]:
        """`{id, retrieved, answer}` rows (candidate names or ready candidates) and the baselines' rows
        `{question, baseline, retrieved_metadata}`, matched to the gold by question text (options["gold"]())."""
        return unidoc_runs.records_from_rows(run, problems, (options or {}).get("gold") or _no_gold)

    def wants_judge(self, summary: dict) -> bool:
        """Only a submission with answers has anything to judge (a retrieval-only run has none)."""
        return summary.extra.get("answered", 0) > 0

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
        with_ids = columns is None or columns[4] is not None
        for j, ((where, qid, _), cands) in enumerate(zip(lists, candidates)):
            flags = _repeats(cands[:K], with_ids)
            if flags is not None:
                problems.warn(where, "repeated candidate among the first 10 (counts as a miss)", record=qid, field="retrieved")
                repeats[j] = flags
        return UnidocRun(rows, candidates, answers, columns, repeats, ids)

    record_type = _Record
    common_record_type = _CommonRecord

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
        pages = list(map(_PAGES, flat))  # one or two pages in 1..MAX_PAGE each: the decoder checked
        starts, ends = list(map(_FIRST, pages)), list(map(_LAST, pages))
        if any(map(gt, starts, ends)):
            return None
        lens = list(map(len, lists))
        candidates, columns = _tuples_and_columns(
            lens, list(map(_DOC, flat)), starts, ends, list(map(_MODALITY, flat)), list(map(_CID, flat))
        )
        # a repeat is worth a warning with its line: the generic path gives it
        if columns[4] is None:  # without ids the same candidate is the same tuple: a list repeats one when its
            # first K hold fewer distinct tuples than they hold tuples (whole-list passes, no loop per list)
            tops = candidates if not lens or max(lens) <= K else list(map(_TOP, candidates))
            if sum(map(len, map(set, tops))) < sum(map(len, tops)):
                return None
        elif any(_repeats(c[:K], True) is not None for c in candidates):
            return None
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

    deviations = DEVIATIONS

    def score(self, run: UnidocRun, gold: UnidocGold, verdicts: dict | None = None) -> Scores:
        return self.score_with(run, gold, BOARD, verdicts)

    def score_with(
        self,
        run: UnidocRun,
        gold: UnidocGold,
        fixes: frozenset[str],
        verdicts: dict | None = None,
        *,
        headline_only: bool = False,
        work=None,
    ) -> Scores:
        unknown = set(fixes) - BOARD
        if unknown:
            raise ValueError(f"unidoc: unknown fixes {', '.join(sorted(unknown))}")
        n = len(gold.questions)
        precision, recall, notes = _precision_recall(run, gold, fixes)
        values = {"precision@10": precision, "recall@10": recall}
        count, answered = _answered(run, gold)
        extra = {"answered": count}
        if notes:
            extra["notes"] = notes
        if verdicts is not None and extra["answered"]:
            judged, extra["judge_failures"] = judged_units(
                n, ((i, gold.questions[i].qid) for i, a in run.answers.items() if a is not None), verdicts
            )
            values.update(judged)
        # a deviation's step needs the overall values only: no CI, no breakdowns
        axes = None if headline_only else gold.categories
        s = summarise(gold.unit_index, values, answered, axes=axes, with_ci=not headline_only)
        # n: the questions the retrieval means are over (the official protocol leaves some out)
        scored = int((~np.isnan(precision)).sum())
        return Scores(
            n=scored,
            missing=n - len(run.answers),
            overall=s.overall,
            ci=s.ci,
            breakdowns=s.breakdowns,
            units=s.units,
            extra=extra,
        )

    def units(self, gold: UnidocGold, key: str) -> UnitIndex:
        return gold.unit_index


def _no_gold():
    raise ValueError("no gold given to match questions against (give --gold)")


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
    cid = c.get("id")
    if cid is not None and type(cid) is not str:
        return f"id: expected a string (the candidate's own name), got {type(cid).__name__}"
    if cid is not None and len(cid) > MAX_ID:
        return f"id: expected at most {MAX_ID} characters, got {len(cid):,}"
    if type(pages) is not list or not 1 <= len(pages) <= 2 or any(type(p) is not int or p < 1 for p in pages):
        return f"pages: expected [start, end] or [page] of integers >= 1, got {pages!r}"[:200]
    if max(pages) > MAX_PAGE:
        return f"pages: page numbers above {MAX_PAGE:,} are not real pages, got {pages!r}"[:200]
    start, end = pages[0], pages[-1]
    if start > end:
        return f"pages: start {start} is after end {end} (pages out of order)"
    return (doc, start, end, modality) if cid is None else (doc, start, end, modality, cid)


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
        cids = list(map(dict.get, flat, repeat("id")))
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
    if flat and cids.count(None) != len(cids):
        named = [c for c in cids if c is not None]
        if set(map(type, named)) != {str} or max(map(len, named)) > MAX_ID:
            return None
    return _columns(list(map(len, lists)), docs, pages, mods, cids)


def _spaced(text: str) -> str:
    return " ".join(text.split())


def _columns(
    lens: list[int], docs: list[str], pages: list[list[int]], mods: list, cids: list
) -> tuple[list[list[tuple]], tuple] | None:
    """Tuples per list and the flat columns scoring needs, once types are known good; None if a range is bad.

    A candidate's tuple carries its id only when it has one, so a file without ids keeps its fingerprint."""
    if not docs:
        return [[] for _ in lens], ([], np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), lens, None)
    plens = np.fromiter(map(len, pages), dtype=np.int64, count=len(pages))
    if plens.min() < 1 or plens.max() > 2:
        return None
    try:  # a page number past int64 is past MAX_PAGE too
        values = np.fromiter(chain.from_iterable(pages), dtype=np.int64, count=int(plens.sum()))
    except OverflowError:
        return None
    if values.min() < 1 or values.max() > MAX_PAGE:
        return None
    last = np.cumsum(plens) - 1
    starts, ends = values[last - plens + 1], values[last]
    if (starts > ends).any():
        return None
    return _tuples_and_columns(lens, docs, starts.tolist(), ends.tolist(), mods, cids)


def _tuples_and_columns(lens: list[int], docs: list[str], starts: list[int], ends: list[int], mods: list, cids: list):
    """_columns' result from checked columns (starts <= ends, pages in range)."""
    tuples = list(zip(docs, starts, ends, mods))
    if cids.count(None) == len(cids):
        cids = None
    else:
        tuples = [t if i is None else (*t, i) for t, i in zip(tuples, cids)]
    bounds = list(accumulate(lens, initial=0))
    columns = (docs, np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64), lens, cids)
    return list(map(tuples.__getitem__, map(slice, bounds[:-1], bounds[1:]))), columns


def _repeats(top: list[tuple], with_ids: bool) -> list[bool] | None:
    """Which of a list's first K candidates repeat an earlier one, or None when none does."""
    if not with_ids:  # without ids the same candidate is the same tuple
        if len(set(top)) == len(top):
            return None
        seen: set = set()
        return [c in seen or seen.add(c) for c in top]
    flags = repeat_flags(top)
    return flags if any(flags) else None


def _precision_recall(run: UnidocRun, gold: UnidocGold, fixes: frozenset[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """P@10 and R@10 per gold question with the named fixes applied (all: the board's protocol; none: the
    script's), all questions in one pass; NaN where the protocol leaves a question out; and notes."""
    n = len(gold.questions)
    docs, starts, ends, lens, cids = run.columns
    lens, rows, top, keep, cand_q, cand_doc = _flat(run, gold)
    published = "doc-ids-as-published" in fixes
    repeats_miss = bool(run.repeats) and "repeats-count-once" in fixes
    # The hits depend on these two fixes only (the others change the aggregation): once per run and pair
    key = (gold.sha256, id(gold), "hits", published, repeats_miss)
    if key not in run.flat:
        read_notes: list[str] = []
        if published:
            gdoc, gpage, _ = gold.page_arrays
            cand_start, cand_end = starts, ends
        else:
            gdoc, gpage, _ = gold.script_page_arrays
            cand_docs, cand_start, cand_end = _as_script_reads(docs, starts, ends, cids, keep, read_notes)
            if cand_docs is not docs:
                cand_doc = _codes(gold, cand_docs)[keep]
        miss = np.zeros(len(cand_q), dtype=bool)
        if repeats_miss:
            first = np.cumsum(top) - top
            for j, flags in run.repeats.items():
                miss[first[j] : first[j] + len(flags)] = flags
        run.flat[key] = (*page_hits_batch(cand_q, cand_doc, cand_start[keep], cand_end[keep], miss, gdoc, gpage), read_notes)
    hits, covered, read_notes = run.flat[key]
    notes = list(read_notes)
    ngold = (gold.page_arrays if published else gold.script_page_arrays)[2]
    recall = covered / np.maximum(ngold, 1)
    if "precision-over-10" in fixes:
        precision = hits / K
    else:
        shown = np.zeros(n, dtype=np.int64)
        shown[rows] = top
        precision = hits / np.maximum(shown, 1)
    if "unanswered-count" not in fixes:
        left_out = np.ones(n, dtype=bool)
        left_out[rows[lens > 0]] = False
        precision[left_out] = recall[left_out] = np.nan
        empty = int((lens == 0).sum())
        if left_out.any() and not fixes:
            notes.append(
                f"{int(left_out.sum()):,} questions left out of the means, as the script leaves them out: "
                f"{empty:,} with an empty list, {n - len(rows):,} without a record"
            )
    if (lens == 2).any() and not fixes:
        notes.append(
            f"{int((lens == 2).sum()):,} lists of exactly two candidates read as two candidates "
            "(the script joins a two-item list into one, expecting the [texts, images] pair of a fusion system)"
        )
    return precision, recall, notes


def _flat(run: UnidocRun, gold: UnidocGold) -> tuple:
    """(list lengths, gold rows, candidates counted per list, which candidates count, the question row and doc
    code of each counted one), computed once per run and gold."""
    key = (gold.sha256, id(gold))
    if key not in run.flat:
        docs, _, _, lens, _ = run.columns
        lens = np.asarray(lens, dtype=np.int64)
        rows = np.asarray(run.rows, dtype=np.int64)
        # position of each candidate in its list: only the first K count
        offsets = np.repeat(np.cumsum(lens) - lens, lens)
        keep = (np.arange(len(docs)) - offsets) < K
        run.flat.clear()
        run.flat[key] = (lens, rows, np.minimum(lens, K), keep, np.repeat(rows, lens)[keep], _codes(gold, docs)[keep])
    return run.flat[key]


def _answered(run: UnidocRun, gold: UnidocGold) -> tuple[int, np.ndarray]:
    """(how many questions have an answer, which gold questions have a record), once per run and gold (every
    protocol step reads them; _flat, called first, keeps run.flat to this gold)."""
    key = (gold.sha256, id(gold), "answered")
    if key not in run.flat:
        answered = np.zeros(len(gold.questions), dtype=bool)
        answered[list(run.answers)] = True
        answers = list(run.answers.values())
        run.flat[key] = (len(answers) - answers.count(None), answered)
    return run.flat[key]


def _codes(gold: UnidocGold, docs: list[str]) -> np.ndarray:
    return np.fromiter(map(gold.doc_codes.get, docs, repeat(-1)), dtype=np.int64, count=len(docs))


_SCRIPT_NAME = (".txt", ".jpg", ".jpeg", ".png")


def script_reading(name: str) -> tuple[str, int, int] | None:
    """(doc, first page, last page) that retrieval_eval.py reads from a retrieved file name, or None where the
    script stops with an error. The doc is the name up to its first `_`, kept as a string; the page is the
    number after that `_` (`4751111_5.jpg`), else the `pg<n>` numbers (one: that page; two: the range, empty
    when it runs backwards; none or more than two: an error). Pages above MAX_PAGE become MAX_PAGE + 1 (no
    gold page is there), as int64 needs."""
    base = name.rsplit("/", 1)[-1]
    parts = base.split("_")
    try:
        page = int(parts[1].split(".")[0])
        first = last = page
    except (IndexError, ValueError):
        found = re.findall(r"pg(\d+)", base)
        if len(found) == 1:
            found *= 2
        if len(found) != 2:
            return None
        first, last = int(found[0]), int(found[1])
    return parts[0], min(first, MAX_PAGE + 1), min(last, MAX_PAGE + 1)


def _as_script_reads(docs, starts, ends, cids, keep, notes: list[str]):
    """The candidates as the script sees them: a candidate whose id is a file name (.txt, .jpg, .jpeg, .png)
    is what the script reads from that name; an unreadable name is a miss (the script stops there); any
    other candidate is its doc and pages."""
    if cids is None:
        return docs, starts, ends
    docs, starts, ends = list(docs), starts.copy(), ends.copy()
    bad: list[str] = []
    for i in np.flatnonzero(keep & np.array([c is not None and c.lower().endswith(_SCRIPT_NAME) for c in cids])):
        read = script_reading(cids[i])
        if read is None:
            bad.append(cids[i])
            docs[i] = "\0unreadable"  # in no gold: a miss
        else:
            docs[i], starts[i], ends[i] = read
    if bad:  # only the script's own reading of names gets here (no fix 1)
        notes.append(
            f"{len(bad):,} candidates named in a way the script cannot read (e.g. {bad[0][:80]!r}): the script stops "
            "with an error on them; the official protocol counts them as misses"
        )
    return docs, starts, ends
