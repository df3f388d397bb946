"""Futurepedia demo data: a multilingual answers file in the published schema, and RAG runs on it.

Every name, answer and replacement is built from the tables of
assets/demo/vocab/futurepedia.json (with the demo systems), in the
track's languages and tasks (leaderboard.tracks.futurepedia), not copies of them.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from ..tracks.futurepedia import LANGS, TASKS
from .common import (
    GENERATORS,
    RETRIEVERS,
    DemoGenerator,
    Submission,
    cap,
    gold_json,
    link,
    rng_for,
    submission_bytes,
    vocab,
    write,
)

TRACK = "futurepedia"
_VOCAB = vocab(TRACK)


# --------------------------------------------------------------------------- gold

_DEMO_RECORDS, _BENCH_RECORDS = 40, 197

# Name parts in LANGS order (the track's languages: a ninth language needs a ninth column); fr/es/pt/ar put the type first, the adjective last.
_ADJECTIVES = _VOCAB["adjectives"]
_NOUNS = _VOCAB["nouns"]
_TYPES = _VOCAB["types"]
# Replaced answers naming an institute or academy get a campus: a new_ans string with
# ", " inside that must not be split (as "University of California, Berkeley" in the real file).
_CAMPUS = _VOCAB["campus"]
_CATEGORIES = _VOCAB["categories"]  # ten items each, so an answer and its eight replacements can all differ
_LATIN = frozenset(("en", "fr", "es", "pt"))


def _entity(adj: int, noun: int, type_: int) -> dict[str, str]:
    out = {}
    for i, lang in enumerate(LANGS):
        a, n, t = _ADJECTIVES[adj][i], _NOUNS[noun][i], _TYPES[type_][i]
        if lang == "en":
            out[lang] = f"{a} {n} {t}"
        elif lang in ("zh", "ja"):
            out[lang] = f"{a}{n}{t}"
        elif lang == "ko":
            out[lang] = f"{a} {n} {t}"
        else:
            out[lang] = f"{t} {n} {a}"
    return out


def _item(row: tuple[str, ...]) -> dict[str, str]:
    return {lang: cap(word) if lang in _LATIN else word for lang, word in zip(LANGS, row)}


def _year(year: int) -> dict[str, str]:
    return {lang: f"{year}年" if lang in ("zh", "ja") else f"{year}년" if lang == "ko" else str(year) for lang in LANGS}


def _futurepedia_record(rng: random.Random, rid: int, kind: str) -> dict:
    """One record: an answer in 8 languages and, per document language, a different replaced answer."""
    if kind == "entity":
        # No name part is shared by two answers of a record, so a prediction's
        # 3-grams point at one document's answer (selection entropy needs that).
        parts = zip(*(rng.sample(range(len(table)), 10) for table in (_ADJECTIVES, _NOUNS, _TYPES)))
        answers = []
        for i, (adj, noun, type_) in enumerate(parts):
            name = _entity(adj, noun, type_)
            if i and _TYPES[type_][0] in ("Institute", "Academy"):
                name = {lang: f"{name[lang]}, {_CAMPUS[j]}" for j, lang in enumerate(LANGS)}
            answers.append(name)
    elif kind == "year":
        answers = [_year(y) for y in rng.sample(range(1950, 2021), 10)]
    else:
        rows = list(rng.choice(list(_CATEGORIES.values())))
        rng.shuffle(rows)
        if kind == "single":
            answers = [_item(row) for row in rows]
        else:  # "list": the original answer is "A, B, C", each replacement a JSON list
            ori = [_item(row) for row in rows[:3]]
            answers = [{lang: ", ".join(x[lang] for x in ori) for lang in LANGS}]
            for _ in range(9):
                parts = [_item(row) for row in rng.sample(rows[3:], rng.choice((2, 2, 3)))]
                answers.append({lang: [x[lang] for x in parts] for lang in LANGS})
    new_ans = {doc_lang: answers[1 + i] for i, doc_lang in enumerate(LANGS)}
    if rid == 7:  # an extra document language, as in two published records: loaders must ignore it
        new_ans["de"] = answers[9]
    return {"id": rid, "ori_ans": answers[0], "new_ans": new_ans}


def make_gold(out_dir: Path, seed: int, size: str) -> Path:
    n = _BENCH_RECORDS if size == "bench" else _DEMO_RECORDS
    rng = rng_for(seed, "futurepedia")
    n_list, n_single, n_year = round(n * 0.2), round(n * 0.13), round(n * 0.13)
    kinds = ["list"] * n_list + ["single"] * n_single + ["year"] * n_year
    kinds += ["entity"] * (n - len(kinds))
    rng.shuffle(kinds)
    records = [_futurepedia_record(rng, i, kind) for i, kind in enumerate(kinds)]
    path = out_dir / "demo_answers.json"
    write(path, gold_json(records))
    return path


# --------------------------------------------------------------------------- gold reader, submissions

_ANSWER_TEMPLATES = _VOCAB["answer_templates"]


def _listing(lang: str, value: str | list[str]) -> str:
    """A list answer joined the way `lang` lists things; a string as is."""
    return value if isinstance(value, str) else ("、" if lang in ("zh", "ja") else ", ").join(value)


def _say(lang: str, value: str | list[str]) -> str:
    return _ANSWER_TEMPLATES[lang].format(_listing(lang, value))


@dataclass(frozen=True)
class _FuturepediaProfile:
    name: str
    slug: str
    organization: str
    retriever: str
    generator: str
    description: str
    accuracy: dict[str, float]  # chance of the full answer, by query language
    tasks: tuple[str, ...] = TASKS
    cross_factor: float = 0.85  # accuracy multiplier when the document is in another language
    copy_doc: float = 0.1  # chance of answering in the document's language (loose, not strict)
    english: float = 0.0  # chance of answering in English whatever the query language
    trust: dict[str, float] = field(default_factory=dict)  # selection weight by document language (default 1)
    trust_query: float = 1.0  # selection weight of the document in the query language
    breadth: float = 0.3  # chance of naming every document's answer in selection
    mono_doc_lang: bool = True  # write the optional monolingual doc_lang
    ext: str = ".jsonl"

    def system(self) -> dict:
        return {
            "name": self.name,
            "organization": self.organization,
            "retriever": self.retriever,
            "generator": self.generator,
            "link": link(self.slug),
            "description": self.description,
            "top_k": 5,
            "tasks": list(self.tasks),
        }


def _acc(en: float, latin: float, cjk: float, ar: float) -> dict[str, float]:
    return {"en": en, "fr": latin, "es": latin, "pt": latin - 0.02, "zh": cjk, "ja": cjk - 0.03, "ko": cjk - 0.05, "ar": ar}


def _accuracy(table: dict[str, float]) -> dict[str, float]:
    """A demo system's accuracy from its vocabulary entry: _acc of its en, latin, cjk and ar figures, then any
    language it sets apart."""
    return {**_acc(table["en"], table["latin"], table["cjk"], table["ar"]), **{k: v for k, v in table.items() if k in LANGS}}


_FUTUREPEDIA_SYSTEMS = tuple(_FuturepediaProfile(**{**p, "accuracy": _accuracy(p["accuracy"])}) for p in _VOCAB["systems"])


def _read_futurepedia(gold: Path) -> list[dict]:
    # Its own reading of the gold file, not leaderboard.tracks.futurepedia's: predictions
    # built from the scorer's parse (its answer splitting, its language filter) would
    # agree with the scorer even where the scorer misreads the published file.
    path = gold / "demo_answers.json" if gold.is_dir() else gold
    return json.loads(path.read_text(encoding="utf-8"))


def _doc_langs(seed: int, rid: int, query_lang: str) -> list[str]:
    """The selection documents for (id, query language); shared by every system of one seed."""
    rng = rng_for(seed, "futurepedia-doc-langs", rid, query_lang)
    chosen = {query_lang}
    if query_lang != "en" and rng.random() < 0.7:
        chosen.add("en")
    target = rng.choice((2, 3, 3, 4))
    while len(chosen) < target:
        chosen.add(rng.choice(LANGS))
    return [lang for lang in LANGS if lang in chosen]


def _guess(rng: random.Random, record: dict, lang: str, chance: float):
    """The original answer in `lang` with probability `chance`, else part of it or a replaced one."""
    gold = record["ori_ans"][lang]
    roll = rng.random()
    if roll < chance:
        return gold
    parts = gold.split(", ")
    if len(parts) > 1 and roll < chance + 0.15:
        return ", ".join(rng.sample(parts, rng.randint(1, len(parts) - 1)))
    return record["new_ans"][rng.choice(LANGS)][lang]


def _futurepedia_submission(p: _FuturepediaProfile, records: list[dict], seed: int) -> bytes:
    rng = rng_for(seed, "futurepedia-run", p.slug)
    out = []
    for rec in records:
        rid = rec["id"]
        if "monolingual" in p.tasks:
            for lang in LANGS:
                record = {"task": "monolingual", "id": rid, "query_lang": lang}
                if p.mono_doc_lang:
                    record["doc_lang"] = lang
                record["prediction"] = _say(lang, _guess(rng, rec, lang, p.accuracy[lang]))
                out.append(record)
        if "crosslingual" in p.tasks:
            for q in LANGS:
                for d in LANGS:
                    if q == d:
                        continue
                    roll = rng.random()
                    lang = "en" if roll < p.english else d if roll < p.english + p.copy_doc else q
                    pred = _say(lang, _guess(rng, rec, lang, p.accuracy[q] * p.cross_factor))
                    out.append({"task": "crosslingual", "id": rid, "query_lang": q, "doc_lang": d, "prediction": pred})
        if "selection" in p.tasks:
            for q in LANGS:
                docs = _doc_langs(seed, rid, q)
                lang = "en" if rng.random() < p.english else q
                if rng.random() < p.breadth:
                    named = docs
                else:
                    weights = {d: p.trust.get(d, p.trust_query if d == q else 1.0) for d in docs}
                    named = []
                    for _ in range(1 + (rng.random() < 0.3)):
                        pool = [d for d in docs if d not in named]
                        named.append(rng.choices(pool, [weights[d] for d in pool])[0])
                # A document the generator trusts but misreads falls back to the original answer.
                values = [rec["new_ans"][d][lang] if rng.random() < p.accuracy[lang] else rec["ori_ans"][lang] for d in named]
                text = _say(lang, " / ".join(_listing(lang, v) for v in values))
                out.append({"task": "selection", "id": rid, "query_lang": q, "doc_langs": docs, "prediction": text})
    return submission_bytes(TRACK, p.system(), out, p.ext)


def _random_futurepedia_profile(rng: random.Random, i: int, ext: str) -> _FuturepediaProfile:
    tasks = rng.choices((TASKS, ("monolingual",), ("monolingual", "crosslingual")), (7, 2, 1))[0]
    en = rng.uniform(0.6, 0.97)
    return _FuturepediaProfile(
        f"{rng.choice(RETRIEVERS)} + {rng.choice(GENERATORS)} (run {i:04d})",
        f"bench-futurepedia-{i:04d}",
        f"Benchmark Org {i % 37:02d}",
        rng.choice(RETRIEVERS),
        rng.choice(GENERATORS),
        "Synthetic benchmark submission.",
        _acc(en, en - rng.uniform(0, 0.2), en - rng.uniform(0.05, 0.45), en - rng.uniform(0.05, 0.5)),
        tasks=tasks,
        cross_factor=rng.uniform(0.5, 0.95),
        copy_doc=rng.uniform(0, 0.35),
        english=rng.choice((0.0, 0.0, 0.0, rng.uniform(0.3, 0.8))),
        trust={rng.choice(LANGS): rng.uniform(1, 8)},
        breadth=rng.uniform(0, 0.8),
        ext=ext,
    )


# --------------------------------------------------------------------------- the generator


def demo_submissions(gold: Path, seed: int) -> list[Submission]:
    records = _read_futurepedia(gold)
    return [(p.slug + p.ext, _futurepedia_submission(p, records, seed)) for p in _FUTUREPEDIA_SYSTEMS]


def bench_submissions(gold: Path, exts: list[str], rng: random.Random, seed: int) -> list[Submission]:
    records = _read_futurepedia(gold)
    out = []
    for i, ext in enumerate(exts):
        p = _random_futurepedia_profile(rng, i, ext)
        out.append((p.slug + ext, _futurepedia_submission(p, records, seed)))
    return out


GENERATOR = DemoGenerator(
    TRACK,
    make_gold,
    demo_submissions,
    bench_submissions,
    benchmark="Futurepedia",
    gold_layout="`gold/futurepedia/demo_answers.json`: multilingual answers (published schema)",
)
