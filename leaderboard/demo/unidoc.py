"""Unidoc demo data: per-domain question files in the published UniDoc-Bench schema, and RAG runs on them.

Every question, answer, fact and path is built from the templates below and the
vocabularies of assets/demo/vocab/unidoc.json (the domains' entities, metrics and
wording, the demo systems); the domains, answer types, question-type groups and
paradigms are the track's own (leaderboard.tracks.unidoc), not copies.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

from ..tracks.unidoc import ANSWER_TYPES, DOMAINS, PARADIGMS, QUESTION_TYPE_GROUP
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

TRACK = "unidoc"
_VOCAB = vocab(TRACK)


# --------------------------------------------------------------------------- gold

_PUBLISHED_QUESTIONS = {  # domain -> number of questions in the published files (bench size)
    "commerce_manufacturing": 184,
    "construction": 295,
    "crm": 255,
    "education": 224,
    "energy": 120,
    "finance": 208,
    "healthcare": 232,
    "legal": 224,
}
# The track's domains, in its order (the order decides which domains get temporal
# comparisons); a domain the demo has no question count for fails here, at import.
UNIDOC_DOMAINS = {domain: _PUBLISHED_QUESTIONS[domain] for domain in DOMAINS}
# The track's answer types as the gold files spell them (the track folds
# "image_plus_text_as_answer" into "text_plus_image"), in the track's order.
_GOLD_SPELLING = {"text_plus_image": "image_plus_text_as_answer"}
UNIDOC_ANSWER_TYPES = tuple(_GOLD_SPELLING.get(name, name) for name in ANSWER_TYPES)
_QTYPE_WEIGHTS = {  # published question-type counts (QUESTION_TYPE_GROUP keys), used as sampling weights
    "factual_retrieval": 790,
    "comparison": 398,
    "causal_reasoning": 269,
    "summarization": 258,
    "temporal_comparison": 26,
    "comparative_analysis": 1,
}


def _group_representatives() -> list[str]:
    """The most frequent published type of each of the track's question-type groups, most frequent first."""
    first: dict[str, str] = {}
    for qtype in sorted(_QTYPE_WEIGHTS, key=_QTYPE_WEIGHTS.__getitem__, reverse=True):
        first.setdefault(QUESTION_TYPE_GROUP[qtype], qtype)
    return list(first.values())


_DEMO_QUESTIONS_PER_DOMAIN = 12
# Questions whose complete_answer is a JSON object, not text: in bench-size gold at the
# positions of the two published ones, in the demo one.
_BENCH_DICT_ANSWERS = {"education": 104, "healthcare": 60}
_DEMO_DICT_ANSWERS = {"healthcare": 4}
_SOURCE_ROOT = "/data/synthetic/final_database"
_CHARTS = ("bar chart", "line chart", "stacked bar chart", "scatter plot")


@dataclass(frozen=True)
class _Metric:
    name: str
    unit: str  # appended to the number: "%", " MW", ...
    low: float
    high: float
    decimals: int

    def draw(self, rng: random.Random) -> float:
        return round(rng.uniform(self.low, self.high), self.decimals)

    def text(self, value: float) -> str:
        return f"{value:,.{self.decimals}f}{self.unit}"


@dataclass(frozen=True)
class _Domain:
    entities: tuple[str, ...]
    metrics: tuple[_Metric, ...]
    causes: tuple[str, ...]
    topics: tuple[str, ...]
    doc_kinds: tuple[str, ...]


def _m(*rows) -> tuple[_Metric, ...]:
    return tuple(_Metric(*row) for row in rows)


_DOMAINS = {domain: _Domain(**{**d, "metrics": _m(*d["metrics"])}) for domain, d in _VOCAB["domains"].items()}


@dataclass
class _Draft:
    """A question before its evidence is laid out on pages."""

    question: str
    answer: str | dict
    facts: list[dict[str, str]]  # one evidence fact each, worded per item kind (chunk / img / tab)
    entity: str
    metric: str
    year: int
    doc_kind: str
    topic: str


def _a(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def _value_fact(entity: str, metric: str, year: int, value: str) -> dict[str, str]:
    return {
        "chunk": f"{cap(entity)} recorded {_a(metric)} of {value} in {year}.",
        "img": f"The chart shows {_a(metric)} of {value} for {entity} in {year}.",
        "tab": f"{cap(metric)} for {entity} in {year}: {value}.",
    }


def _cause_fact(metric: str, cause: str) -> dict[str, str]:
    return {
        "chunk": f"The report attributes the change in {metric} to {cause}.",
        "img": f"A note under the chart attributes the change in {metric} to {cause}.",
        "tab": f"A table footnote attributes the change in {metric} to {cause}.",
    }


def _context_fact(kind: str, d: _Draft, rng: random.Random) -> str:
    """A fact about the evidence item itself, not needed for the answer."""
    if kind == "chunk":
        return rng.choice(
            (
                f"The {d.doc_kind} discusses {d.topic} at {d.entity}.",
                f"This section reviews {d.topic} for {d.entity} in {d.year}.",
                f"The text explains how the {d.metric} of {d.entity} is measured.",
                f"The {d.doc_kind} compares {d.entity} with its peers on {d.topic}.",
            )
        )
    if kind == "img":
        chart = rng.choice(_CHARTS)
        return rng.choice(
            (
                f"The figure is a {chart} of the {d.metric} of {d.entity} from {d.year - 4} to {d.year}.",
                f"The chart's vertical axis shows the {d.metric}.",
                f"The figure caption names {d.entity} as the subject.",
            )
        )
    return rng.choice(
        (
            f"The table reports the {d.metric} of {d.entity} for each year from {d.year - 4} to {d.year}.",
            f"The table's last column gives the {d.metric}.",
            f"The table header names {d.entity} and the years covered.",
        )
    )


def _two_values(rng: random.Random, metric: _Metric) -> tuple[float, float, str]:
    """Two values that differ once formatted, and their difference as text."""
    a = metric.draw(rng)
    b = a
    while metric.text(b) == metric.text(a):
        b = metric.draw(rng)
    return a, b, metric.text(abs(a - b))


def _draft(rng: random.Random, dom: _Domain, qtype: str, as_dict: bool) -> _Draft:
    entity, other, third = rng.sample(dom.entities, 3)
    metric = rng.choice(dom.metrics)
    m = metric.name
    year = rng.randint(2014, 2023)
    doc_kind, topic, cause = rng.choice(dom.doc_kinds), rng.choice(dom.topics), rng.choice(dom.causes)
    d = _Draft("", "", [], entity, m, year, doc_kind, topic)

    if as_dict:  # a table question whose published answer is a JSON object, not text
        m2 = rng.choice([x for x in dom.metrics if x is not metric])
        names = [entity, other] + [third] * (rng.random() < 0.5)
        d.question = f"What {m} and {m2.name} does the {doc_kind} report for {', '.join(names[:-1])} and {names[-1]} in {year}?"
        d.answer = {}
        for name in names:
            values = {m: metric.text(metric.draw(rng)), m2.name: m2.text(m2.draw(rng))}
            d.answer[cap(name)] = values
            d.facts += [_value_fact(name, key, year, value) for key, value in values.items()]
    elif qtype == "factual_retrieval":
        v, v0, _ = _two_values(rng, metric)
        d.question = rng.choice(
            (
                f"What {m} did {entity} report for {year} in the {doc_kind}?",
                f"According to the {doc_kind}, what was the {m} of {entity} in {year}?",
            )
        )
        d.answer = f"The {m} of {entity} was {metric.text(v)} in {year}."
        d.facts = [_value_fact(entity, m, year, metric.text(v))]
        if rng.random() < 0.5:
            d.answer += f" This compares with {metric.text(v0)} in {year - 1}."
            d.facts.append(_value_fact(entity, m, year - 1, metric.text(v0)))
    elif qtype in ("comparison", "comparative_analysis"):
        v1, v2, diff = _two_values(rng, metric)
        d.question = (
            f"How did the {m} of {entity} compare with that of {other} in {year}?"
            if qtype == "comparison"
            else f"Which of {entity} and {other} had the higher {m} in {year}, and by how much?"
        )
        higher = entity if v1 > v2 else other
        d.answer = (
            f"In {year}, the {m} of {entity} was {metric.text(v1)}, while {other} reported "
            f"{metric.text(v2)}. {cap(higher)} was higher by {diff}."
        )
        d.facts = [_value_fact(entity, m, year, metric.text(v1)), _value_fact(other, m, year, metric.text(v2))]
    elif qtype == "temporal_comparison":
        v1, v2, diff = _two_values(rng, metric)
        y1 = year - rng.randint(2, 6)
        verb, noun = ("rose", "a rise") if v2 > v1 else ("fell", "a fall")
        d.question = f"How did the {m} of {entity} change between {y1} and {year}?"
        d.answer = (
            f"The {m} of {entity} {verb} from {metric.text(v1)} in {y1} to {metric.text(v2)} in {year}. "
            f"This is {noun} of {diff} over {year - y1} years."
        )
        d.facts = [_value_fact(entity, m, y1, metric.text(v1)), _value_fact(entity, m, year, metric.text(v2))]
    elif qtype == "causal_reasoning":
        v0, v1, _ = _two_values(rng, metric)
        verb, noun = ("rose", "increase") if v1 > v0 else ("fell", "decrease")
        d.question = f"What explains the {noun} in the {m} of {entity} in {year}?"
        d.answer = (
            f"The {m} of {entity} {verb} from {metric.text(v0)} in {year - 1} to {metric.text(v1)} "
            f"in {year}. The {doc_kind} attributes this change mainly to {cause}."
        )
        d.facts = [
            _value_fact(entity, m, year - 1, metric.text(v0)),
            _value_fact(entity, m, year, metric.text(v1)),
            _cause_fact(m, cause),
        ]
    elif qtype == "summarization":
        metrics = rng.sample(dom.metrics, 3)
        texts = [x.text(x.draw(rng)) for x in metrics]
        d.question = f"Summarize the key figures on {topic} that the {doc_kind} reports for {entity} in {year}."
        d.answer = (
            f"In {year}, the {metrics[0].name} of {entity} was {texts[0]}. "
            f"Its {metrics[1].name} stood at {texts[1]}, and its {metrics[2].name} reached {texts[2]}."
        )
        d.facts = [_value_fact(entity, x.name, year, t) for x, t in zip(metrics, texts)]
    else:
        raise ValueError(f"unknown question type {qtype!r}")
    return d


def _layout(rng: random.Random, atype: str) -> tuple[list[str], list[str]]:
    """Kinds of the used and unused evidence items (chunk / img / tab) for an answer type."""
    if atype == "text_only":
        used = ["chunk"] * rng.choice((1, 1, 2, 2, 3))
    elif atype == "image_only":
        used = ["img"] * rng.choice((1, 1, 1, 2, 2, 3))
    elif atype == "image_plus_text_as_answer":
        used = ["img"] * rng.choice((1, 1, 2, 3)) + ["tab"] * (rng.random() < 0.05) + ["chunk"] * rng.choice((1, 1, 2))
    else:
        used = ["tab"] * rng.choice((1, 1, 2)) + ["chunk"] * rng.choice((0, 1, 1, 1, 1))
    unused = []
    # As in the published files, image-only questions always come with an unused text chunk.
    if atype == "image_only" or rng.random() < 0.4:
        unused.append("chunk")
    if rng.random() < (0.1 if atype == "text_only" else 0.25):
        unused.append(rng.choice(("img", "tab")))
    return used, unused


@dataclass
class _DocState:
    """Page count and running figure/table counter of one synthetic document."""

    pages: int
    figures: int


def _unidoc_question(rng: random.Random, domain: str, qtype: str, atype: str, doc: str, state: _DocState, as_dict: bool) -> dict:
    d = _draft(rng, _DOMAINS[domain], qtype, as_dict)
    used, unused = _layout(rng, atype)
    # Round-robin: figures and tables come first in `used`, so with a single
    # answer fact an image-plus-text question still has it on the image.
    facts: list[list[str]] = [[] for _ in used]
    for i, fact in enumerate(d.facts):
        facts[i % len(used)].append(fact[used[i % len(used)]])
    for kind, item_facts in zip(used, facts):
        if not item_facts or rng.random() < 0.25:
            item_facts.append(_context_fact(kind, d, rng))

    anchor = rng.randint(1, max(1, state.pages - 4))
    items: dict[str, list[dict]] = {"chunk": [], "img": [], "tab": []}
    spans: set[tuple[int, int]] = set()  # text chunks already in this question
    for kind, item_facts in [*zip(used, facts), *((k, None) for k in unused)]:
        page = anchor + rng.randint(0, 3)
        if kind == "chunk":
            end = min(state.pages, page + (rng.random() < 0.35) + (rng.random() < 0.05))
            while (page, end) in spans:
                page = anchor + rng.randint(0, 3)
                end = min(state.pages, page + (rng.random() < 0.35))
            spans.add((page, end))
            span = f"pg{page}" if end == page else f"pg{page}_pg{end}"
            chunk_id = 3 * (page - 1) + end - page  # one id per page range, so a reused chunk keeps its path
            item = {
                "used": item_facts is not None,
                "metadata": {"source": f"{_SOURCE_ROOT}/{domain}_database/{doc}_id_{chunk_id}_{span}.txt"},
            }
            if item_facts is not None:  # unused text chunks carry no facts key at all
                item["facts"] = item_facts
        else:
            state.figures += rng.randint(1, 3)
            name = "figure" if kind == "img" else "table"
            item = {
                "used": item_facts is not None,
                "metadata": f"{_SOURCE_ROOT}/{domain}_figures/{doc}/{name}-{page}-{state.figures}.jpg",
                "facts": item_facts or [],
            }
        items[kind].append(item)
    rng.shuffle(items["chunk"])
    chunk_used = {f"{kind}_{i}": item for kind in ("chunk", "img", "tab") for i, item in enumerate(items[kind])}
    return {
        "rewritten_question_obscured": d.question,
        "complete_answer": d.answer,
        "chunk_used": chunk_used,
        "question_type": qtype,
        "answer_type": atype,
    }


def _unidoc_domain(seed: int, domain: str, n: int, dict_at: int | None) -> list[dict]:
    rng = rng_for(seed, "unidoc", domain)
    atypes = [UNIDOC_ANSWER_TYPES[i % len(UNIDOC_ANSWER_TYPES)] for i in range(n)]
    rng.shuffle(atypes)
    # Every group appears in every domain; temporal comparisons in every other
    # domain and the single published comparative_analysis kind in finance.
    qtypes = _group_representatives()
    if list(UNIDOC_DOMAINS).index(domain) % 2 == 0:
        qtypes.append("temporal_comparison")
    if domain == "finance":
        qtypes.append("comparative_analysis")
    qtypes += rng.choices(list(_QTYPE_WEIGHTS), list(_QTYPE_WEIGHTS.values()), k=max(0, n - len(qtypes)))
    rng.shuffle(qtypes)
    # About 1.5 questions per document, as in the published files.
    docs = [str(x) for x in rng.sample(range(1_000_000, 10_000_000), max(2, round(n / 1.5)))]
    states = {doc: _DocState(rng.randint(10, 90), rng.randint(0, 20)) for doc in docs}
    out = []
    for i in range(n):
        doc = rng.choice(docs)
        out.append(_unidoc_question(rng, domain, qtypes[i], atypes[i], doc, states[doc], i == dict_at))
    return out


def make_gold(out_dir: Path, seed: int, size: str) -> Path:
    for domain, bench_n in UNIDOC_DOMAINS.items():
        if size == "bench":
            n, dict_at = bench_n, _BENCH_DICT_ANSWERS.get(domain)
        else:
            n, dict_at = _DEMO_QUESTIONS_PER_DOMAIN, _DEMO_DICT_ANSWERS.get(domain)
        write(out_dir / f"{domain}.json", gold_json(_unidoc_domain(seed, domain, n, dict_at)))
    return out_dir


# --------------------------------------------------------------------------- gold reader, submissions

# The reader below (_read_unidoc) parses the gold files with its own code, not with
# leaderboard.tracks.unidoc: a submission built by a reader that shared the scorer's
# parsing would hide the scorer's parsing bugs (both would misread a path alike and
# agree). Kept apart, a misread shows as a demo score that does not add up. The
# patterns match the same paths as the scorer's: `[^/]+` cannot cross a slash, so
# the match starts after one or at the start of the path.
_TEXT_SOURCE = re.compile(r"([^/]+)_id_\d+_pg(\d+)(?:_pg(\d+))?\.txt$")
_FIGURE_SOURCE = re.compile(r"([^/]+)/(?:figure|table)-(\d+)-\d+\.\w+$")
_MODALITY = {"chunk": "text", "img": "image", "tab": "table"}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])")
_WORD = re.compile(r"\w+")
_FUNCTION_WORDS = frozenset(_VOCAB["function_words"])
_UNSUPPORTED = _VOCAB["unsupported"]


@dataclass(frozen=True)
class _Evidence:
    doc: str
    start: int
    end: int
    modality: str
    words: frozenset[str]  # content words of its facts


@dataclass
class _UnidocQuestion:
    id: str
    domain: str
    question: str
    sentences: list[str]  # the gold answer, one fact-bearing sentence each
    contexts: list[_Evidence]  # used items, identical (doc, range) once
    max_page: int


def _words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in _FUNCTION_WORDS)


def _flatten(answer, path: tuple[str, ...] = ()) -> list[str]:
    if isinstance(answer, dict):
        return [line for key, value in answer.items() for line in _flatten(value, (*path, str(key)))]
    return [f"{' '.join(path)}: {answer}" if path else str(answer)]


def _read_unidoc(gold_dir: Path) -> list[_UnidocQuestion]:
    out = []
    for domain in UNIDOC_DOMAINS:
        path = gold_dir / f"{domain}.json"
        if not path.exists():
            continue
        for i, q in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            contexts, seen, max_page = [], set(), 1
            for key, item in q["chunk_used"].items():
                meta = item["metadata"]
                source = meta["source"] if isinstance(meta, dict) else meta
                text = _TEXT_SOURCE.search(source)
                match = text or _FIGURE_SOURCE.search(source)
                doc, start = match.group(1), int(match.group(2))
                end = int(text.group(3)) if text and text.group(3) else start
                max_page = max(max_page, end)
                if item["used"] and (doc, start, end) not in seen:
                    seen.add((doc, start, end))
                    contexts.append(
                        _Evidence(doc, start, end, _MODALITY[key.rsplit("_", 1)[0]], _words(" ".join(item.get("facts", []))))
                    )
            answer = q["complete_answer"]
            sentences = _flatten(answer) if isinstance(answer, dict) else [s for s in _SENTENCE_END.split(answer.strip()) if s]
            out.append(
                _UnidocQuestion(f"{domain}-{i:04d}", domain, q["rewritten_question_obscured"], sentences, contexts, max_page)
            )
    return out


@dataclass(frozen=True)
class _UnidocProfile:
    name: str
    slug: str
    organization: str
    paradigm: str
    retriever: str
    generator: str | None  # None: retrieval-only, no `answer`
    description: str
    modalities: tuple[str, ...]  # what the retriever returns
    hit: dict[str, float]  # chance to retrieve a gold context, by its modality
    sharpness: float  # how far hits score above misses (rank of the hits)
    extra: float  # chance of a second candidate on a retrieved context
    state_hit: float  # chance to state a gold sentence whose evidence was retrieved
    state_miss: float  # ... whose evidence was not
    unsupported: float  # chance, twice per answer, of adding an unsupported sentence
    coverage: float = 1.0
    with_question: bool = False
    ext: str = ".jsonl"

    def system(self) -> dict:
        out = {"name": self.name, "organization": self.organization, "paradigm": self.paradigm, "retriever": self.retriever}
        if self.generator:
            out["generator"] = self.generator
        out.update(link=link(self.slug), description=self.description, top_k=10)
        return out


_UNIDOC_SYSTEMS = tuple(_UnidocProfile(**p) for p in _VOCAB["systems"])


def _pages(rng: random.Random, page: int, modality: str) -> list[int]:
    """A candidate's page range around `page`: text chunks may span two pages."""
    if modality != "text":
        return [page]
    return rng.choice([[page], [page, page + 1]] + [[page - 1, page]] * (page > 1))


def _overlaps(doc: str, pages: list[int], contexts: list[_Evidence]) -> bool:
    return any(c.doc == doc and pages[0] <= c.end and c.start <= pages[-1] for c in contexts)


def _unidoc_record(p: _UnidocProfile, q: _UnidocQuestion, docs: list[str], rng: random.Random) -> dict:
    cands: dict[tuple, float] = {}  # (doc, pages, modality) -> score; the key makes repeats impossible
    for ctx in q.contexts:
        if rng.random() >= p.hit.get(ctx.modality, 0.5):
            continue
        for _ in range(1 + (rng.random() < p.extra)):
            modality = ctx.modality if ctx.modality in p.modalities else rng.choice(p.modalities)
            pages = _pages(rng, rng.randint(ctx.start, ctx.end), modality)
            cands.setdefault((ctx.doc, tuple(pages), modality), rng.gauss(p.sharpness, 1))
    misses = 0
    while misses < 10:  # enough non-overlapping candidates to fill the list whatever the hits
        doc = q.contexts[0].doc if rng.random() < 0.5 or len(docs) < 2 else rng.choice(docs)
        modality = rng.choice(p.modalities)
        pages = _pages(rng, rng.randint(1, q.max_page + 10), modality)
        key = (doc, tuple(pages), modality)
        if key not in cands and not _overlaps(doc, pages, q.contexts):
            cands[key] = rng.gauss(0, 1)
            misses += 1
    top = sorted(cands, key=cands.get, reverse=True)[:10]
    record = {"id": q.id}
    if p.with_question:
        record["question"] = q.question
    record["retrieved"] = [{"doc": d, "pages": list(pages), "modality": m} for d, pages, m in top]
    if p.generator:
        found = [c for c in q.contexts if any(d == c.doc and pg[0] <= c.end and c.start <= pg[-1] for d, pg, _ in top)]
        record["answer"] = _unidoc_answer(p, q, found, rng)
    return record


def _unidoc_answer(p: _UnidocProfile, q: _UnidocQuestion, found: list[_Evidence], rng: random.Random) -> str:
    """Gold sentences stated with a chance that depends on whether their evidence was retrieved, plus noise."""
    stated = []
    for sentence in q.sentences:
        # The sentence's evidence is the context whose facts share the most words with it.
        words = _words(sentence)
        best = max(q.contexts, key=lambda c: len(words & c.words), default=None)
        supported = best is not None and words & best.words and best in found
        chance = p.state_hit if supported else p.state_miss
        if rng.random() < chance:
            stated.append(sentence if sentence.endswith((".", "!", "?")) else sentence + ".")
    for _ in range(2):
        if rng.random() < p.unsupported:
            stated.insert(rng.randint(0, len(stated)), _unsupported(rng, q.sentences))
    return " ".join(stated) or "The retrieved pages do not contain the requested information."


def _unsupported(rng: random.Random, sentences: list[str]) -> str:
    """A claim the gold does not support: a gold sentence with its numbers changed, or a stock sentence."""
    numbered = [s for s in sentences if re.search(r"\d", s)]
    if numbered and rng.random() < 0.5:

        def change(match: re.Match) -> str:
            text = match.group(0)
            if re.fullmatch(r"(?:19|20)\d\d", text):  # keep years: the claim stays on topic
                return text
            decimals = len(text.split(".")[1]) if "." in text else 0
            return f"{float(text.replace(',', '')) * rng.choice((0.6, 0.75, 1.3, 1.5)):,.{decimals}f}"

        return re.sub(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?", change, rng.choice(numbered))
    return rng.choice(_UNSUPPORTED)


def _unidoc_submission(p: _UnidocProfile, questions: list[_UnidocQuestion], seed: int) -> bytes:
    rng = rng_for(seed, "unidoc-run", p.slug)
    docs_by_domain: dict[str, list[str]] = {}
    for q in questions:
        docs_by_domain.setdefault(q.domain, []).extend(c.doc for c in q.contexts)
    docs_by_domain = {k: sorted(set(v)) for k, v in docs_by_domain.items()}
    records = [
        _unidoc_record(p, q, docs_by_domain[q.domain], rng) for q in questions if p.coverage >= 1 or rng.random() < p.coverage
    ]
    return submission_bytes(TRACK, p.system(), records, p.ext)


_PARADIGM_TRAITS = {  # paradigm -> (returned modalities, hit chances) for benchmark submissions
    "text": (("text",), {"text": 0.82, "image": 0.15, "table": 0.5}),
    "image": (("image",), {"text": 0.5, "image": 0.82, "table": 0.68}),
    "mm-joint": (("text", "image"), {"text": 0.72, "image": 0.72, "table": 0.65}),
    "mm-fusion": (("text", "image", "table"), {"text": 0.85, "image": 0.82, "table": 0.8}),
    "other": (("text", "image"), {"text": 0.6, "image": 0.6, "table": 0.6}),
}
# The track's paradigms in its order (the draw depends on it); one without traits fails at import.
_PARADIGM_BASES = {paradigm: _PARADIGM_TRAITS[paradigm] for paradigm in PARADIGMS}


def _random_unidoc_profile(rng: random.Random, i: int, ext: str) -> _UnidocProfile:
    paradigm = rng.choice(list(_PARADIGM_BASES))
    modalities, hit = _PARADIGM_BASES[paradigm]
    retriever, generator = rng.choice(RETRIEVERS), rng.choice(GENERATORS)
    answers = rng.random() < 0.85
    return _UnidocProfile(
        f"{retriever} + {generator if answers else 'no generator'} (run {i:04d})",
        f"bench-unidoc-{i:04d}",
        f"Benchmark Org {i % 37:02d}",
        paradigm,
        retriever,
        generator if answers else None,
        "Synthetic benchmark submission.",
        modalities,
        {k: min(0.98, max(0.02, v + rng.uniform(-0.15, 0.1))) for k, v in hit.items()},
        rng.uniform(0.6, 2.4),
        rng.uniform(0, 0.4),
        rng.uniform(0.6, 0.95),
        rng.uniform(0.05, 0.3),
        rng.uniform(0.05, 0.5),
        coverage=0.8 if rng.random() < 0.1 else 1.0,
        ext=ext,
    )


# --------------------------------------------------------------------------- the generator


def demo_submissions(gold: Path, seed: int) -> list[Submission]:
    questions = _read_unidoc(gold)
    return [(p.slug + p.ext, _unidoc_submission(p, questions, seed)) for p in _UNIDOC_SYSTEMS]


def bench_submissions(
    gold: Path, exts: list[str], rng: random.Random, seed: int, *, questions_per_domain: int | None = None
) -> list[Submission]:
    """One submission per entry of `exts`; `questions_per_domain`: answer only the first k of each domain."""
    questions = _read_unidoc(gold)
    if questions_per_domain is not None:
        questions = [q for q in questions if int(q.id.rsplit("-", 1)[1]) < questions_per_domain]
    out = []
    for i, ext in enumerate(exts):
        p = _random_unidoc_profile(rng, i, ext)
        out.append((p.slug + ext, _unidoc_submission(p, questions, seed)))
    return out


GENERATOR = DemoGenerator(
    TRACK,
    make_gold,
    demo_submissions,
    bench_submissions,
    benchmark="UniDoc-Bench",
    gold_layout="`gold/unidoc/<domain>.json`: per-domain question files (published schema)",
    options=frozenset({"questions_per_domain"}),
)
