"""Vdr demo data: TREC qrels for ViDoRe datasets, and compressed multi-vector retrieval runs on them.

Queries, pages and grades are synthetic; the dataset names, families and
compression methods are the track's (leaderboard.tracks.vdr), not copies.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..tracks.vdr import FAMILIES, METHODS
from .common import DemoGenerator, Submission, link, np_rng_for, rng_for, submission_bytes, vocab, write

TRACK = "vdr"
_VOCAB = vocab(TRACK)


# --------------------------------------------------------------------------- gold

# The track's dataset families: V1 has binary qrels, V2 graded ones.
VIDORE_V1 = FAMILIES["ViDoRe-V1"]
VIDORE_V2 = FAMILIES["ViDoRe-V2"]
# The demo holds all of ViDoRe-V2 (so its family mean shows) and part of V1; the bench all of V1.
_DEMO_DATASETS = VIDORE_V1[:4] + VIDORE_V2
_DEMO_CORPUS, _BENCH_CORPUS = 200, 1000
_BENCH_QUERIES = 500


def qrels_filename(dataset: str) -> str:
    return dataset.replace("/", "__") + ".qrels"


def _qrels_lines(rng: random.Random, n_queries: int, corpus: int, graded: bool) -> list[str]:
    lines = []
    # Binary sets (ViDoRe-V1 style) give most queries one page of their own; graded
    # sets (V2 style) several pages graded 1 or 2, sometimes with an explicit 0.
    own_pages = rng.sample(range(corpus), min(corpus, n_queries))
    for q in range(n_queries):
        if graded:
            docs = rng.sample(range(corpus), rng.randint(1, 4) + (rng.random() < 0.15))
            grades = [rng.choice((1, 2, 2)) for _ in docs]
            if len(docs) > 1 and rng.random() < 0.15:
                grades[-1] = 0  # the first document keeps the query relevant
        else:
            docs = [own_pages[q % len(own_pages)]] + ([rng.randrange(corpus)] if rng.random() < 0.12 else [])
            docs = list(dict.fromkeys(docs))
            grades = [1] * len(docs)
        lines += [f"q{q} 0 d{doc} {grade}" for doc, grade in sorted(zip(docs, grades))]
    return lines


def make_gold(out_dir: Path, seed: int, size: str) -> Path:
    bench = size == "bench"
    for dataset in VIDORE_V1 if bench else _DEMO_DATASETS:
        rng = rng_for(seed, "vdr-gold", dataset)
        n_queries = _BENCH_QUERIES if bench else rng.randint(30, 36)
        lines = _qrels_lines(rng, n_queries, _BENCH_CORPUS if bench else _DEMO_CORPUS, dataset in VIDORE_V2)
        write(out_dir / qrels_filename(dataset), ("\n".join(lines) + "\n").encode())
    return out_dir


# --------------------------------------------------------------------------- gold reader, submissions

_VDR_MODELS = {  # model -> (retrieval strength, average vectors per page range, index dimension)
    "colqwen2-v1.0": (3.7, (640.0, 780.0), 128),
    "colpali-v1.3": (3.3, (1030.0, 1030.0), 128),  # fixed 1024 patches + prompt tokens
    "colsmol-256M": (2.7, (820.0, 1100.0), 128),
}
_VDR_METHODS = tuple(m for m in METHODS if m != "other")  # the track's methods; "other" has no demo model


@dataclass(frozen=True)
class _VdrProfile:
    name: str
    slug: str
    organization: str
    model: str
    method: str
    ratio: float  # target share of vectors removed
    description: str
    depth: int = 20  # demo rankings stay short to keep assets/demo small
    datasets: tuple[str, ...] | None = None  # None: every dataset of the gold
    drop: float = 0.0  # share of one dataset's queries left without a ranking
    with_bytes: bool = True
    ext: str = ".jsonl"


def _profile_vdr(
    model: str, method: str, ratio: float, organization: str, description: str, family: str | None = None, **kw
) -> _VdrProfile:
    """A demo system from its vocabulary entry; `family`: it ran on that dataset family of the track only."""
    label = "uncompressed" if method == "none" else f"{method} {ratio:.0%}"
    slug = f"{model}-{method}" + ("" if method == "none" else f"-{round(ratio * 100)}")
    if family is not None:
        kw["datasets"] = FAMILIES[family]
    return _VdrProfile(
        f"{model} ({label})", slug.lower().replace(".", "-"), organization, model, method, ratio, description, **kw
    )


# The demo systems (assets/demo/vocab/vdr.json). One runs on the easier ViDoRe-V1 datasets only: averaged over
# its own datasets it would outrank complete runs of its model; over every dataset of the gold (the missing ones
# at 0) it falls below them.
_VDR_SYSTEMS = tuple(_profile_vdr(**p) for p in _VOCAB["systems"])


def _read_qrels(gold_dir: Path) -> dict[str, dict[str, dict[str, int]]]:
    # Its own qrels parser, not leaderboard.tracks.vdr's: rankings built from the scorer's
    # reading of the files (file name to dataset, grades, .tsv headers) would agree with
    # the scorer even where it misreads them.
    out: dict[str, dict[str, dict[str, int]]] = {}
    for path in sorted(gold_dir.glob("*.qrels")):
        qrels: dict[str, dict[str, int]] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                qid, _, doc, grade = line.split()
                qrels.setdefault(qid, {})[doc] = int(grade)
        out[path.name[: -len(".qrels")].replace("__", "/")] = qrels
    return out


def _retained(method: str, ratio: float) -> float:
    """Share of the relevance signal kept: merging degrades gracefully, pruning fast at high ratios."""
    return {"none": 1.0, "prune": 1 - 0.5 * ratio**2, "merge": 1 - 0.2 * ratio**3, "prune-then-merge": 1 - 0.3 * ratio**2.5}[
        method
    ]


def _ease(seed: int, dataset: str) -> float:
    low, high = (0.72, 0.88) if dataset in VIDORE_V2 else (0.95, 1.2) if dataset in VIDORE_V1 else (0.8, 1.1)
    return rng_for(seed, "vdr-ease", dataset).uniform(low, high)


def _vdr_pool(qrels: dict[str, dict[str, int]], depth: int) -> list[str]:
    """The corpus a run ranks: the judged pages plus enough `d<i>` pages to fill every ranking."""
    return sorted({d for docs in qrels.values() for d in docs} | {f"d{i}" for i in range(max(200, 2 * depth))})


def _vdr_records(p: _VdrProfile, dataset: str, qrels: dict[str, dict[str, int]], seed: int) -> list[dict]:
    queries = [q for q, docs in qrels.items() if any(g > 0 for g in docs.values())]
    pool = _vdr_pool(qrels, p.depth)
    column = {d: i for i, d in enumerate(pool)}
    strength = _VDR_MODELS[p.model][0] * _ease(seed, dataset) * _retained(p.method, p.ratio)
    # Noise shared by every run of one model, so compressed runs differ from the
    # uncompressed one by the compression, not by a fresh draw.
    scores = np_rng_for(seed, "vdr-noise", p.model, dataset).standard_normal((len(queries), len(pool)))
    if p.method != "none":
        own = np_rng_for(seed, "vdr-run", p.slug, dataset).standard_normal(scores.shape)
        scores += (0.1 + 0.6 * p.ratio) * own
    for row, q in enumerate(queries):
        for doc, grade in qrels[q].items():
            if grade > 0:
                scores[row, column[doc]] += strength * (1 + 0.3 * (grade - 1))
    rng = rng_for(seed, "vdr-ties", p.slug, dataset)
    dropped = set(rng.sample(queries, round(p.drop * len(queries))))
    depth = min(p.depth, len(pool))
    order = np.argsort(-scores, axis=1, kind="stable")[:, :depth]
    values = np.round(15.0 + 1.5 * np.take_along_axis(scores, order, axis=1), 2).tolist()
    records = []
    for q, docs, row in zip(queries, order.tolist(), values):
        if q in dropped:
            continue
        if rng.random() < 0.2:  # an exact tie near the top, to exercise the tie-breaking rule
            k = rng.randrange(min(5, depth - 1))
            row[k + 1] = row[k]
        ranking = [{"doc": pool[j], "score": v} for j, v in zip(docs, row)]
        records.append({"dataset": dataset, "query_id": q, "ranking": ranking})
    return records


def _vdr_storage(p: _VdrProfile, dataset: str, corpus: int, seed: int) -> dict:
    low, high = _VDR_MODELS[p.model][1]
    full = round(rng_for(seed, "vdr-vectors", p.model, dataset).uniform(low, high), 1)
    ratio = p.ratio
    if p.method in ("prune", "prune-then-merge") and ratio > 0:  # adaptive: the achieved ratio varies
        ratio = min(0.99, max(0.0, ratio + rng_for(seed, "vdr-ratio", p.slug, dataset).uniform(-0.03, 0.03)))
    kept = round(full * (1 - ratio), 2)
    entry = {"vectors": kept, "vectors_uncompressed": full}
    if p.with_bytes:
        entry["bytes"] = round(kept * _VDR_MODELS[p.model][2] * 2 * corpus)  # fp16 vectors
    return entry


def _vdr_submission(p: _VdrProfile, gold: dict[str, dict[str, dict[str, int]]], seed: int) -> bytes:
    datasets = [d for d in gold if p.datasets is None or d in p.datasets]
    records, storage = [], {}
    for i, dataset in enumerate(datasets):
        # Only the first dataset loses queries, so the other datasets stay complete.
        run = p if i == 0 else replace(p, drop=0.0)
        records += _vdr_records(run, dataset, gold[dataset], seed)
        storage[dataset] = _vdr_storage(p, dataset, len(_vdr_pool(gold[dataset], p.depth)), seed)
    system = {
        "name": p.name,
        "organization": p.organization,
        "model": p.model,
        "method": p.method,
        "storage": storage,
        "compression_target": p.ratio,
        "link": link(p.slug),
        "description": p.description,
        "top_k": p.depth,
    }
    return submission_bytes(TRACK, system, records, p.ext)


def _random_vdr_profile(rng: random.Random, i: int, ext: str, datasets: list[str]) -> _VdrProfile:
    method = rng.choice(_VDR_METHODS)
    ratio = 0.0 if method == "none" else rng.choice((0.25, 0.5, 0.6, 0.75, 0.8, 0.9, 0.95))
    base = _profile_vdr(
        rng.choice(list(_VDR_MODELS)),
        method,
        ratio,
        f"Benchmark Org {i % 37:02d}",
        "Synthetic benchmark submission.",
        depth=100,
        ext=ext,
        with_bytes=rng.random() < 0.5,
        drop=0.05 if rng.random() < 0.1 else 0.0,
        datasets=None if rng.random() < 0.9 else tuple(rng.sample(datasets, max(1, len(datasets) // 2))),
    )
    return replace(base, name=f"{base.name} (run {i:04d})", slug=f"bench-vdr-{i:04d}")


# --------------------------------------------------------------------------- the generator


def demo_submissions(gold: Path, seed: int) -> list[Submission]:
    qrels = _read_qrels(gold)
    return [(p.slug + p.ext, _vdr_submission(p, qrels, seed)) for p in _VDR_SYSTEMS]


def bench_submissions(gold: Path, exts: list[str], rng: random.Random, seed: int) -> list[Submission]:
    """One submission per entry of `exts`; rankings hold 100 documents."""
    qrels = _read_qrels(gold)
    out = []
    for i, ext in enumerate(exts):
        p = _random_vdr_profile(rng, i, ext, list(qrels))
        out.append((p.slug + ext, _vdr_submission(p, qrels, seed)))
    return out


GENERATOR = DemoGenerator(
    TRACK,
    make_gold,
    demo_submissions,
    bench_submissions,
    benchmark="ViDoRe",
    gold_layout='`gold/vdr/<dataset, "/" as "__">.qrels`: TREC qrels `query_id 0 doc_id grade`',
)
