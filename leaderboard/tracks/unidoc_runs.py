"""UniDoc runs people already have -> the board's prediction records (`python -m leaderboard convert unidoc`).

Two row shapes, in any mix, from JSONL lines or from the rows of a column-oriented JSON file:

- `{id, retrieved, answer}`: `retrieved` lists candidate names or ready `{doc, pages}` candidates;
- a row of the benchmark's own baselines (`src/baselines/*.py` of UniDoc-Bench): `question`, `baseline`
  (the response) and `retrieved_metadata` (ranked names; `[text names, image names]` for fusion systems,
  joined as its scorer `retrieval_eval.py` joins a two-list pair; or llama-index metadata dicts with
  `file_name` / `file_path`). It has no question id: the question is matched to the gold by its text,
  whitespace runs collapsed; no match or several is a problem, never a guess.

A candidate name becomes `{doc, pages, modality, id}`. The id is the name without the folders a machine put
in front (they differ between runs of one system), keeping the document folder of a figure or table
(`<doc>/figure-<page>-<n>.jpg`: its file name alone is the same in every document). Equal names are then
equal ids, i.e. repeats, wherever the files were stored.
"""

from __future__ import annotations

import re

from .unidoc_gold import context_of

NAME_KINDS = (
    "text chunk `<doc>_id_<k>_pg<a>[_pg<b>].txt`, page image `<doc>_<page>.jpg|png` or `<doc>_page_<n>.png`, "
    "figure `<doc>/figure-<page>-<n>.jpg`, table `<doc>/table-<page>-<n>.jpg`"
)
_IMAGE = r"\.(?:png|jpe?g)$"
_PAGE_NAMED = re.compile(r"^(?P<doc>[^/]+?)_page_(?P<page>\d+)" + _IMAGE, re.IGNORECASE)
_PAGE_IMAGE = re.compile(r"^(?P<doc>[^/_]+)_(?P<page>\d+)" + _IMAGE, re.IGNORECASE)
_FIGURE = re.compile(r"(?:^|/)(?P<id>[^/]+/(?:figure|table)-\d+-\d+\.\w+)$")
BASELINE_KEYS = ("question", "baseline", "retrieved_metadata")
# What a row may carry that the converter reads; everything else of a line (a baseline's `contexts`,
# `retrieved_contexts`, `chunk_used`, costs) is dropped as soon as the line is parsed.
ROW_KEYS = ("id", "retrieved", "answer", *BASELINE_KEYS)


def candidate_of_name(name: str) -> dict:
    """`{doc, pages, modality, id}` of a candidate name (folders in front allowed); a ValueError otherwise."""
    path = name.replace("\\", "/")
    base = path.rsplit("/", 1)[-1]
    try:
        doc, first, last = context_of(path)
    except ValueError as exc:
        if not str(exc).startswith("unrecognised"):
            raise  # a chunk or figure name whose pages are not a range of a document
    else:
        if base.endswith(".txt"):
            return _candidate(doc, first, last, "text", base)
        kind = "table" if base.startswith("table-") else "image"
        return _candidate(doc, first, last, kind, _FIGURE.search(path)["id"])
    m = _PAGE_NAMED.match(base) or _PAGE_IMAGE.match(base)
    if not m:
        raise ValueError(f"{name[:200]!r} is not a UniDoc-Bench candidate name ({NAME_KINDS})")
    page = int(m["page"])
    if page < 1:
        raise ValueError(f"{name[:200]!r}: page {page}, but pages are numbered from 1")
    return _candidate(m["doc"], page, page, "image", base)


def _candidate(doc: str, first: int, last: int, modality: str, cid: str) -> dict:
    return {"doc": doc, "pages": [first] if first == last else [first, last], "modality": modality, "id": cid}


def ranked_names(value) -> tuple[list[str], list[str]]:
    """(names in rank order, problems) of a `retrieved_metadata` value. A pair of two lists is a fusion
    system's `[texts, images]`, joined texts first as the benchmark's scorer joins it."""
    if not isinstance(value, list):
        return [], [f"retrieved_metadata: expected a ranked list of candidate names, got {type(value).__name__}"]
    items = list(enumerate(value))
    labels = [f"[{i}]" for i, _ in items]
    if len(value) == 2 and all(isinstance(v, list) for v in value):
        items = list(enumerate([*value[0], *value[1]]))
        labels = [f"[0][{i}]" for i in range(len(value[0]))] + [f"[1][{i}]" for i in range(len(value[1]))]
    names, problems = [], []
    for (_, item), label in zip(items, labels):
        name = item
        if isinstance(item, dict):
            name = item.get("file_name") if isinstance(item.get("file_name"), str) else item.get("file_path")
        if isinstance(name, str):
            names.append(name)
        else:
            problems.append(
                f"retrieved_metadata{label}: expected a file name or an object with a file_name or file_path, "
                f"got {str(item)[:80] if isinstance(item, dict) else type(item).__name__}"
            )
    return names, problems


def candidates(names: list[str], field: str) -> tuple[list[dict], list[str]]:
    out, problems = [], []
    for i, name in enumerate(names):
        try:
            out.append(candidate_of_name(name))
        except ValueError as exc:
            problems.append(f"{field}[{i}]: {exc}")
    return out, problems


class _QuestionIndex:
    """The gold's questions by their text, whitespace runs collapsed: text -> gold ids."""

    def __init__(self, gold):
        self.source = gold.source
        self.quiet = False  # True: no row matches, which is said once, not per row
        self.ids: dict[str, list[str]] = {}
        for q, text in zip(gold.questions, gold.spaced_questions):
            self.ids.setdefault(text, []).append(q.qid)

    def match(self, question) -> tuple[str | None, str | None]:
        """(gold id, None) or (None, why not)."""
        if isinstance(question, list):
            return None, "question: a list, not one question's text: a column-oriented file is read with --format baseline"
        if not isinstance(question, str) or not question.strip():
            return None, f"question: expected the question's text, got {str(question)[:80]!r}"
        found = self.ids.get(" ".join(question.split()), [])
        if len(found) == 1:
            return found[0], None
        shown = repr(" ".join(question.split())[:80])
        if not found:
            return (
                None,
                "" if self.quiet else f"question {shown} is not a question of the gold (matched by text, whitespace collapsed)",
            )
        return None, f"question {shown} matches {len(found)} gold questions ({', '.join(found[:5])}): not guessed"


def _is_baseline(obj) -> bool:
    return isinstance(obj, dict) and "id" not in obj and ("retrieved_metadata" in obj or "question" in obj)


def records_from_rows(run: dict[str, list[tuple[str, object]]], problems, gold_of) -> list[dict]:
    """Records of every row of every file ({file: [(where in the file, row)]}); `gold_of()` gives the gold,
    asked for only when a row has no id."""
    baseline = [obj for rows in run.values() for _, obj in rows if _is_baseline(obj)]
    index = None
    if baseline:
        try:
            index = _QuestionIndex(gold_of())
        except ValueError as exc:
            problems.append(f"{len(baseline):,} baseline rows are matched to the gold by their question: {exc}")
            return []
        # Not one match: the wrong gold (or the wrong files), said once rather than once per row.
        index.quiet = not any(index.match(obj.get("question"))[0] for obj in baseline)
        if index.quiet:
            problems.append(
                f"none of the {len(baseline):,} baseline rows has a question of the gold read ({index.source}): "
                "is it the gold the run was made on? (--gold names it)"
            )
    records: list[dict] = []
    seen: dict[str, str] = {}  # gold id -> where its baseline row was
    for file, rows in run.items():
        for label, obj in rows:
            where = f"{file} {label}"
            if not isinstance(obj, dict) or not ("id" in obj or _is_baseline(obj)):
                problems.append(
                    f"{where}: expected an object {{id, retrieved, answer}} or a baseline row "
                    "{question, baseline, retrieved_metadata}"
                )
                continue
            record = _id_row(obj, where, problems) if "id" in obj else _baseline_row(obj, where, index, seen, problems)
            if record is not None:
                records.append(record)
    return records


def _id_row(obj: dict, where: str, problems) -> dict | None:
    retrieved = obj.get("retrieved", [])
    if not isinstance(retrieved, list):
        problems.append(f"{where}: retrieved: expected a list of candidate names or candidates")
        return None
    out: list[dict] = []
    bad = False
    for i, item in enumerate(retrieved):
        if isinstance(item, dict):
            out.append(item)
            continue
        try:
            out.append(candidate_of_name(str(item)))
        except ValueError as exc:
            problems.append(f"{where}: retrieved[{i}]: {exc}")
            bad = True
    if bad:
        return None
    record = {"id": obj["id"], "retrieved": out}
    if obj.get("question") is not None:  # kept: the validator checks it against the gold text of the id
        record["question"] = obj["question"]
    if obj.get("answer") is not None:
        record["answer"] = obj["answer"]
    return record


def _baseline_row(obj: dict, where: str, index: _QuestionIndex, seen: dict[str, str], problems) -> dict | None:
    found = []
    qid, why = index.match(obj.get("question"))
    if why:
        found.append(why)
    if "retrieved_metadata" not in obj:
        found.append("no retrieved_metadata (the ranked candidate names)")
        names = []
    else:
        names, more = ranked_names(obj["retrieved_metadata"])
        found += more
    cands, more = candidates(
        names, "retrieved_metadata (joined)" if _is_pair(obj.get("retrieved_metadata")) else "retrieved_metadata"
    )
    found += more
    answer = obj.get("baseline")
    if answer is not None and not isinstance(answer, str):
        found.append(f"baseline: expected the response text, got {type(answer).__name__}")
    if qid is not None and qid in seen:
        found.append(f"the same gold question ({qid}) as {seen[qid]}")
    if found:
        for p in found:
            problems.append(f"{where}: {p}")
        return None
    if qid is None:  # no row of the run matches the gold: said once, above
        return None
    seen[qid] = where
    record = {"id": qid, "question": obj["question"], "retrieved": cands}
    if answer is not None:
        record["answer"] = answer
    return record


def _is_pair(value) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(isinstance(v, list) for v in value)
