"""What the Futurepedia scripts compute, one unit at a time, written from reading them (not copied).

The scripts are `eval/eval_mono.py`, `eval/eval_cross.py` and, for the selection task, `eval/eval_multi.py`
of niane030422-cmd/NALE (commit 6b0330f for the first two). Each scores one JSONL file of predictions (one
query language, and for cross-lingual one document language) and prints its mean. This module keeps their
arithmetic and nothing else (no model, no retrieval), deliberately plain and slow: the leaderboard's own
implementation (leaderboard/metrics/nale.py) is compared with it.

What the scripts do, as read:
- The gold answer string is split on ", " when it holds one (no part dropped); a JSON list is its parts.
- The prediction is lowercased; then gold part and prediction go through the same normalisation: remove
  ASCII punctuation (string.punctuation), replace a double space by one, strip; keep that only when the
  result is one alphabetic or one numeric token (str.isalpha / str.isdigit), else go back; then NFKD, kept
  under the same condition; then lowercase and strip.
- Recall of a part: 0 when the normalised part or the normalised prediction has fewer than 3 characters;
  else the part's bracket artefacts (['  ']  ["  "]  ', '  ", ") are removed, its character 3-grams taken
  as a list (repeats kept) without those holding a space, and the recall is the share of that list found as
  substrings of the prediction (0 for an empty list).
- A raw prediction (before lowercasing) holding one of the ten "insufficient information" phrases scores
  [-1] (monolingual, cross-lingual) or is left out (selection) instead.
- A file's number: the sum of every part's value over the number of parts (cross-lingual loose: the sum of
  the code-switch values over the number of query-language parts).
"""

from __future__ import annotations

import string
import unicodedata

REFUSALS = (
    "信息不足",
    "insufficient information",
    "十分な情報がないため",
    "informations insuffisantes",
    "المستند يحتوي على معلومات غير كافية",
    "insuficiente en los documentos",
    "문서 정보가 부족하여",
    "insuficientes no documento",
    "información insuficiente",
    "informações insuficientes",
)
LANGS = ("en", "fr", "es", "pt", "zh", "ja", "ko", "ar")
_NO_PUNCT = str.maketrans("", "", string.punctuation)


def refused(prediction: str) -> bool:
    return any(phrase in prediction for phrase in REFUSALS)


def _one_token(text: str) -> bool:
    return text != "" and not text.isspace() and (text.isalpha() or text.isdigit())


def normalise(text: str) -> str:
    step = text.translate(_NO_PUNCT).replace("  ", " ").strip()
    if _one_token(step):
        text = step
    step = unicodedata.normalize("NFKD", text)
    if _one_token(step):
        text = step
    return text.lower().strip()


def part_recall(part: str, prediction_lowered: str) -> float:
    a, b = normalise(part), normalise(prediction_lowered)
    if len(a) < 3 or len(b) < 3:
        return 0.0
    for old, new in (("['", ""), ("']", ""), ('["', ""), ('"]', ""), ("', '", " "), ('", "', " ")):
        a = a.replace(old, new)
    grams = [a[i : i + 3] for i in range(len(a) - 2)]
    grams = [g for g in grams if " " not in g]
    if not grams:
        return 0.0
    return sum(1 for g in grams if g in b) / len(grams)


def parts_of(answer) -> list[str]:
    if isinstance(answer, list):
        return list(answer)
    return answer.split(", ") if ", " in answer else [answer]


def mono_labels(prediction: str, answer) -> list[float]:
    """eval_mono.py's `ngram_labels` of one record."""
    if refused(prediction):
        return [-1]
    lowered = prediction.lower()
    return [part_recall(p, lowered) for p in parts_of(answer)]


def cross_labels(prediction: str, query_answer, doc_answer) -> tuple[list[float], list[float]]:
    """eval_cross.py's (`ngram`, `code_switch_ngram`) of one record, loosen mode: the code-switch list is,
    position by position, the larger of the two languages' part recalls (the shorter list padded with 0)."""
    if refused(prediction):
        return [-1], [-1]
    lowered = prediction.lower()
    strict = [part_recall(p, lowered) for p in parts_of(query_answer)]
    other = [part_recall(p, lowered) for p in parts_of(doc_answer)]
    n = max(len(strict), len(other))
    padded = strict + [0.0] * (n - len(strict)), other + [0.0] * (n - len(other))
    return strict, [max(x, y) for x, y in zip(*padded)]


def multi_labels(prediction: str, replaced: dict, doc_langs) -> dict[str, list[float]]:
    """eval_multi.py's `lang_ngram` of one record over the offered document languages: per document
    language, per part position the best recall over the answer languages of its replaced answer
    (positions of the first answer language); {} for a refusal."""
    if refused(prediction):
        return {}
    lowered = prediction.lower()
    out = {}
    for d in doc_langs:
        best: list[float] = []
        for a, answer in replaced.get(d, {}).items():
            if a not in LANGS:
                continue
            values = [part_recall(p, lowered) for p in (answer if isinstance(answer, list) else [answer])]
            best = values if not best else [max(x, y) for x, y in zip(best, values)] + best[len(values) :]
        out[d] = best or [0.0]
    return out


def file_mean(labels: list[list[float]]) -> float | None:
    """A script's printed number: every part's value summed over the number of parts."""
    count = sum(len(x) for x in labels)
    return sum(sum(x) for x in labels) / count if count else None


def scores(records: list[dict], gold: list[dict]) -> dict:
    """The official numbers of a board submission's records, as running the scripts file by file gives them:
    one file per (task, query language[, document language]) holding the records the submission has.

    Returns {"monolingual": headline, "crosslingual_strict", "crosslingual_loose": headline,
    "language": {q: {key: value}}, "language_pair": {"q-d": {...}}, "doc_language": {d: mean}}; a headline
    is the mean of the language values present, a cross-lingual language value the mean of its pairs present.
    """
    by_id = {g["id"]: g for g in gold}
    mono: dict[str, list] = {}
    strict: dict[tuple, list] = {}
    loose: dict[tuple, list] = {}
    multi: dict[str, list] = {}
    multi_count: dict[str, int] = {}
    for r in records:
        g = by_id[r["id"]]
        q = r["query_lang"]
        if r["task"] == "monolingual":
            mono.setdefault(q, []).append(mono_labels(r["prediction"], g["ori_ans"][q]))
        elif r["task"] == "crosslingual":
            d = r["doc_lang"]
            s, c = cross_labels(r["prediction"], g["ori_ans"][q], g["ori_ans"][d])
            strict.setdefault((q, d), []).append(s)
            loose.setdefault((q, d), []).append((c, len(s)))
        else:
            for d, values in multi_labels(r["prediction"], g["new_ans"], r["doc_langs"]).items():
                multi.setdefault(d, []).append(sum(values))
                multi_count[d] = multi_count.get(d, 0) + len(values)
    out: dict = {"language": {}, "language_pair": {}, "doc_language": {}}
    if mono:
        per = {q: file_mean(mono[q]) for q in LANGS if q in mono}
        for q, v in per.items():
            out["language"].setdefault(q, {})["monolingual"] = v
        out["monolingual"] = sum(per.values()) / len(per)
    if strict:
        pair_s = {k: file_mean(v) for k, v in strict.items()}
        pair_l = {k: sum(sum(c) for c, _ in v) / sum(n for _, n in v) for k, v in loose.items()}
        for key, pair in (("crosslingual_strict", pair_s), ("crosslingual_loose", pair_l)):
            per = {}
            for q in LANGS:
                vals = [pair[q, d] for d in LANGS if (q, d) in pair]
                if vals:
                    per[q] = sum(vals) / len(vals)
                    out["language"].setdefault(q, {})[key] = per[q]
            out[key] = sum(per.values()) / len(per)
            for (q, d), v in pair.items():
                out["language_pair"].setdefault(f"{q}-{d}", {})[key] = v
    for d in LANGS:
        if d in multi:
            out["doc_language"][d] = sum(multi[d]) / multi_count[d]
    return out
