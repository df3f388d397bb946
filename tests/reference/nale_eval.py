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


def board_normalise(text: str) -> str:
    """The board's normalisation (SCORING.md): NFKC, casefold, whitespace runs as one space, stripped."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


# ---- the scripts' arithmetic; `fixes` switches on the board's fixes (SCORING.md, "Official scripts") ----


def part_recall(part: str, prediction: str, fixes=frozenset()) -> float:
    """One part's recall against the raw prediction."""
    if "normalise-both-sides" in fixes:
        a, b = board_normalise(part), board_normalise(prediction)
    else:
        a, b = normalise(part), normalise(prediction.lower())
    if len(a) < 3:
        if "short-answers-score" in fixes:
            return 1.0 if a and a in b else 0.0
        return 0.0
    if len(b) < 3 and "short-answers-score" not in fixes:
        return 0.0
    if "normalise-both-sides" not in fixes:
        for old, new in (("['", ""), ("']", ""), ('["', ""), ('"]', ""), ("', '", " "), ('", "', " ")):
            a = a.replace(old, new)
    grams = [a[i : i + 3] for i in range(len(a) - 2)]
    if "distinct-3grams" in fixes:
        grams = sorted(set(grams))
    else:
        grams = [g for g in grams if " " not in g]
    if not grams:
        return 0.0
    return sum(1 for g in grams if g in b) / len(grams)


def parts_of(answer, fixes=frozenset(), split=True) -> list[str]:
    if isinstance(answer, list):
        parts = list(answer)
    else:
        parts = answer.split(", ") if split and ", " in answer else [answer]
    if "normalise-both-sides" in fixes:
        parts = [p for p in parts if board_normalise(p)]
    return parts


def mono_labels(prediction: str, answer, fixes=frozenset()) -> list[float]:
    """eval_mono.py's `ngram_labels` of one record."""
    if "refusals-are-text" not in fixes and refused(prediction):
        return [-1]
    return [part_recall(p, prediction, fixes) for p in parts_of(answer, fixes)]


def cross_labels(prediction: str, query_answer, doc_answer, fixes=frozenset()) -> tuple[list[float], list[float]]:
    """eval_cross.py's (`ngram`, `code_switch_ngram`) of one record, loosen mode: the code-switch list is,
    position by position, the larger of the two languages' part recalls (the shorter list padded with 0)."""
    if "refusals-are-text" not in fixes and refused(prediction):
        return [-1], [-1]
    strict = [part_recall(p, prediction, fixes) for p in parts_of(query_answer, fixes)]
    other = [part_recall(p, prediction, fixes) for p in parts_of(doc_answer, fixes)]
    n = max(len(strict), len(other))
    padded = strict + [0.0] * (n - len(strict)), other + [0.0] * (n - len(other))
    return strict, [max(x, y) for x, y in zip(*padded)]


def multi_labels(prediction: str, replaced: dict, doc_langs, fixes=frozenset()) -> dict[str, list[float]]:
    """eval_multi.py's `lang_ngram` of one record over the offered document languages: per document
    language, per part position the best recall over the answer languages of its replaced answer
    (positions of the first answer language); {} for a refusal. A document language without an answer: [0]."""
    if "refusals-are-text" not in fixes and refused(prediction):
        return {}
    out = {}
    for d in doc_langs:
        best: list[float] = []
        for a, answer in replaced.get(d, {}).items():
            if a not in LANGS:
                continue
            values = [part_recall(p, prediction, fixes) for p in parts_of(answer, fixes, split=False)]
            best = values if not best else [max(x, y) for x, y in zip(best, values)] + best[len(values) :]
        out[d] = best or [0.0]
    return out


def mean(values):
    return sum(values) / len(values) if values else 0.0


def scores(records: list[dict], gold: list[dict], fixes=frozenset()) -> dict:
    """The official numbers of a board submission's records, as running the scripts file by file gives them:
    one file per (task, query language[, document language]) holding the records the submission has.

    A unit adds (numerator, denominator) to its file: the script's (sum of its part values, number of parts);
    with mean-per-unit (mean of its parts, 1) and loose = the better of the two languages' means; with
    missing-units-count, every gold unit of a task the submission has, a missing one (0, its parts or 1).

    Returns {"monolingual": headline, "crosslingual_strict", "crosslingual_loose": headline,
    "language": {q: {key: value}}, "language_pair": {"q-d": {...}}, "doc_language": {d: mean}}; a headline
    is the mean of the language values present, a cross-lingual language value the mean of its pairs present.
    """
    per_unit = "mean-per-unit" in fixes
    by_id = {g["id"]: g for g in gold}
    cells: dict[tuple, list[float]] = {}  # (key, file) -> [numerator, denominator]

    def add(key, file, num, den):
        cell = cells.setdefault((key, file), [0.0, 0.0])
        cell[0] += num
        cell[1] += den

    seen: dict[str, set] = {"monolingual": set(), "crosslingual": set()}
    for r in records:
        g = by_id[r["id"]]
        q = r["query_lang"]
        if r["task"] == "monolingual":
            seen["monolingual"].add((r["id"], q))
            labels = mono_labels(r["prediction"], g["ori_ans"][q], fixes)
            add("monolingual", q, *((mean(labels), 1) if per_unit else (sum(labels), len(labels))))
        elif r["task"] == "crosslingual":
            d = r["doc_lang"]
            seen["crosslingual"].add((r["id"], q, d))
            s, c = cross_labels(r["prediction"], g["ori_ans"][q], g["ori_ans"][d], fixes)
            if per_unit:
                if _refusal(r, fixes):
                    strict, loose = -1.0, -1.0
                else:
                    other = [part_recall(p, r["prediction"], fixes) for p in parts_of(g["ori_ans"][d], fixes)]
                    strict, loose = mean(s), max(mean(s), mean(other))
                add("crosslingual_strict", (q, d), strict, 1)
                add("crosslingual_loose", (q, d), loose, 1)
            else:
                add("crosslingual_strict", (q, d), sum(s), len(s))
                add("crosslingual_loose", (q, d), sum(c), len(s))
        else:
            for d, values in multi_labels(r["prediction"], g["new_ans"], r["doc_langs"], fixes).items():
                if per_unit:
                    best = max(
                        mean([part_recall(p, r["prediction"], fixes) for p in parts_of(v, fixes, split=False)])
                        for a, v in g["new_ans"][d].items()
                        if a in LANGS
                    )
                    add("selection", d, best, 1)
                else:
                    add("selection", d, sum(values), len(values))
    if "missing-units-count" in fixes:
        for g in gold:
            for q in LANGS:
                parts = 1 if per_unit else len(parts_of(g["ori_ans"][q], fixes))
                if seen["monolingual"] and (g["id"], q) not in seen["monolingual"]:
                    add("monolingual", q, 0.0, parts)
                for d in LANGS:
                    if d != q and seen["crosslingual"] and (g["id"], q, d) not in seen["crosslingual"]:
                        add("crosslingual_strict", (q, d), 0.0, parts)
                        add("crosslingual_loose", (q, d), 0.0, parts)
    out: dict = {"language": {}, "language_pair": {}, "doc_language": {}}
    for key in ("monolingual", "crosslingual_strict", "crosslingual_loose"):
        files = {f: num / den for (k, f), (num, den) in cells.items() if k == key and den > 0}
        if not files:
            continue
        per = {}
        for q in LANGS:
            if key == "monolingual":
                vals = [files[q]] if q in files else []
            else:
                vals = [files[q, d] for d in LANGS if (q, d) in files]
                for d in LANGS:
                    if (q, d) in files:
                        out["language_pair"].setdefault(f"{q}-{d}", {})[key] = files[q, d]
            if vals:
                per[q] = sum(vals) / len(vals)
                out["language"].setdefault(q, {})[key] = per[q]
        out[key] = sum(per.values()) / len(per)
    for d in LANGS:
        if ("selection", d) in cells:
            num, den = cells["selection", d]
            out["doc_language"][d] = num / den
    return out


def _refusal(record: dict, fixes) -> bool:
    return "refusals-are-text" not in fixes and refused(record["prediction"])
