"""Futurepedia runs of the benchmark's own scripts -> the board's prediction records.

The NALE scripts (`eval/eval_mono.py`, `eval/eval_cross.py`, `eval/eval_multi.py` of niane030422-cmd/NALE)
write one JSONL file per task and language (named `.json`), one line per query: `{id, query, ans,
prediction, ...}` plus the script's own scores (`ngram_labels`; `ngram`, `code_switch_ngram`; `lang_ngram`),
which the board ignores: it scores `prediction` itself. What a file holds is in its name:

- monolingual `prediction_n_<dataset>_<retriever>_<lang>_<model>_noise<r>_chunk<k>.json`
  (retriever `mcontriever-msmarco`, `bm25` or `m3contriever`);
- crosslingual `prediction_n_<dataset>_<retriever>_ql<query lang>_dl<doc lang>_<model>_...json`;
- selection `prediction_n_<dataset>_ql<query lang>_multi_conflict_<model>_...json`: the documents of all
  8 languages are offered (eval_multi.py offers every language), so `doc_langs` is the 8 languages.

`--language` (`fr`, or `fr-zh` for a query and a document language) and `--task` override the name; without
either, the task is also told by the score field the lines carry. A crosslingual file whose query and
document languages are equal is the monolingual task (the same answer, the documents in its language).
"""

from __future__ import annotations

import re

from .futurepedia_official import LANGS, TASKS

_L = "|".join(LANGS)
_CROSS = re.compile(rf"_ql(?P<q>{_L})_dl(?P<d>{_L})_")
_MULTI = re.compile(rf"_ql(?P<q>{_L})_multi_")
_MONO = re.compile(rf"_(?:mcontriever-msmarco|bm25|m3contriever)_(?P<q>{_L})_")
# The score field each script writes: it tells a file's task when its name does not.
_FIELD_TASK = {"ngram_labels": "monolingual", "code_switch_ngram": "crosslingual", "lang_ngram": "selection"}


def file_task(name: str, language: str | None, task: str | None, rows: list) -> tuple[str, str, str | None] | str:
    """(task, query language, document language or None) of one file, or why it cannot be told."""
    named = _name_task(name)
    first = next((obj for _, obj in rows if isinstance(obj, dict)), {})
    by_field = next((t for f, t in _FIELD_TASK.items() if f in first), None)
    if language:
        q, _, d = language.partition("-")
        if q not in LANGS or (d and d not in LANGS):
            return f"--language {language!r}: expected a language ({' '.join(LANGS)}) or query-doc, e.g. fr-zh"
        d = d or None
    elif named:
        _, q, d = named
    else:
        return f"{name}: the file name does not say its language (NALE names it ..._<lang>_... or ..._ql<q>_dl<d>_...): give --language"
    chosen = task or ("crosslingual" if d else None) or (named[0] if named else None) or by_field
    if chosen is None:
        return f"{name}: the task cannot be told from the name or the lines: give --task ({', '.join(TASKS)})"
    if chosen == "crosslingual" and not d:
        return f"{name}: a crosslingual file needs a document language: give --language <query>-<doc>, e.g. fr-zh"
    if chosen != "crosslingual" and d and d != q:
        return f"{name}: the {chosen} task has no document language (got {q}-{d})"
    if chosen == "crosslingual" and d == q:
        chosen, d = "monolingual", None
    if by_field and task is None and by_field != chosen and not (by_field == "crosslingual" and chosen == "monolingual"):
        return f"{name}: the name says {chosen}, but its lines carry `{next(f for f, t in _FIELD_TASK.items() if t == by_field)}` ({by_field}): give --task"
    return chosen, q, d


def _name_task(name: str) -> tuple[str, str, str | None] | None:
    if m := _CROSS.search(name):
        return "crosslingual", m["q"], m["d"]
    if m := _MULTI.search(name):
        return "selection", m["q"], None
    if m := _MONO.search(name):
        return "monolingual", m["q"], None
    return None


def records_from_files(run: dict[str, list[tuple[str, object]]], problems, languages: dict, task: str | None) -> list[dict]:
    records: list[dict] = []
    for file, rows in run.items():
        told = file_task(file, languages.get(file), task, rows)
        if isinstance(told, str):
            problems.append(told)
            continue
        chosen, q, d = told
        for label, obj in rows:
            where = f"{file} {label}"
            if not isinstance(obj, dict):
                problems.append(f"{where}: expected an object {{id, query, ans, prediction, ...}}")
                continue
            rid, pred = obj.get("id"), obj.get("prediction")
            if type(rid) is not int:
                problems.append(f"{where}: id: expected the integer id of the gold record, got {str(rid)[:40]!r}")
                continue
            if not isinstance(pred, str):
                problems.append(f"{where}: prediction: expected text, got {type(pred).__name__}")
                continue
            answers = obj.get("ans")
            if chosen != "selection" and d and isinstance(answers, dict) and not set(answers) <= {q, d}:
                problems.append(f"{where}: ans holds the languages {', '.join(answers)}, not {q} and {d}: is the file misnamed?")
                continue
            record = {"task": chosen, "id": rid, "query_lang": q, "prediction": pred}
            if chosen == "crosslingual":
                record["doc_lang"] = d
            elif chosen == "selection":
                record["doc_langs"] = list(LANGS)
            records.append(record)
    return records
