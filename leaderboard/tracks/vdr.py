"""Track `vdr`: multi-vector visual document retrieval under compression (nDCG@5 vs vectors removed)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from ..metrics import BootstrapPlan, ndcg_at_k
from ..metrics.ranking import ideal_dcg
from ..problems import Problems
from ..submission import Envelope
from .base import Axis, Chart, Gold, Metric, Scores, SystemField, Track, UnitIndex, finite_number, hash_files

K = 5
MAX_RANKING = 100
_V1 = ("arxivqa_test_subsampled", "docvqa_test_subsampled", "infovqa_test_subsampled", "tabfquad_test_subsampled",
       "tatdqa_test", "shiftproject_test", "syntheticDocQA_artificial_intelligence_test", "syntheticDocQA_energy_test",
       "syntheticDocQA_government_reports_test", "syntheticDocQA_healthcare_industry_test")
_V2 = ("esg_reports_v2", "economics_reports_v2", "biomedical_lectures_v2", "esg_reports_human_labeled_v2")
# A family's score is shown only when a submission has all of its datasets.
FAMILIES: dict[str, tuple[str, ...]] = {
    "ViDoRe-V1": tuple(f"vidore/{d}" for d in _V1),
    "ViDoRe-V2": tuple(f"vidore/{d}" for d in _V2),
}
METHODS = ("none", "prune", "merge", "prune-then-merge", "other")


@dataclass
class VdrGold(Gold):
    qrels: dict[str, dict[str, dict[str, float]]]  # dataset -> query -> doc -> grade

    @cached_property
    def judged(self) -> dict[str, list[str]]:
        """Per dataset, the queries nDCG averages over (at least one grade > 0), sorted."""
        return {ds: sorted(q for q, g in qs.items() if ideal_dcg(g, K) > 0) for ds, qs in self.qrels.items()}

    @cached_property
    def unit_keys(self) -> list[tuple[str, str]]:
        return [(ds, q) for ds in sorted(self.judged) for q in self.judged[ds]]

    @cached_property
    def unit_pos(self) -> dict[tuple[str, str], int]:
        return {u: i for i, u in enumerate(self.unit_keys)}


@dataclass
class VdrRun:
    rankings: dict[tuple[str, str], tuple[list, list]]  # (dataset, query) -> (docs, scores)
    storage: dict[str, dict]


def dataset_from_filename(stem: str) -> str:
    return stem.replace("__", "/")


def family_of(dataset: str) -> str:
    return next((f for f, members in FAMILIES.items() if dataset in members), "other")


class VdrTrack(Track):
    name = "vdr"
    title = "VDR compression"
    description = "Multi-vector visual document retrieval: nDCG@5 per dataset against the share of patch vectors removed."
    metrics = (
        Metric("ndcg@5", "nDCG@5", "nDCG@5 (trec_eval conventions, graded gains), mean over the submission's datasets."),
        Metric("compression", "Compression", "Share of vectors removed: 1 - kept / uncompressed, averaged over datasets.",
               ci=False, percent=True),
    )
    rank_by = "ndcg@5"
    axes = (Axis("dataset", "Dataset"), Axis("family", "Dataset family", tuple(FAMILIES)))
    system_fields = (
        SystemField("name", "System", required=True),
        SystemField("organization", "Organisation"),
        SystemField("model", "Base model", required=True, filter=True),
        SystemField("method", "Method", required=True, filter=True),
        SystemField("retriever", "Retriever"),
        SystemField("link", "Link", kind="url"),
        SystemField("description", "Description"),
    )
    unit_label = "query"
    charts = (
        Chart("tradeoff", "nDCG@5 against compression (Pareto front marked)", x="compression", y="ndcg@5", group="model"),
        Chart("by_axis", "Per dataset", axis="dataset"),
        Chart("by_axis", "Per dataset family", axis="family"),
    )
    slice_axes = ("family", "dataset")
    gold_patterns = ("*.qrels", "**/*.qrels", "*.tsv", "**/*.tsv")

    # ---- gold ---------------------------------------------------------------------
    def read_gold(self, path: Path) -> VdrGold:
        files = sorted(path.glob("*.qrels")) + sorted(path.glob("*.tsv")) if path.is_dir() else [path]
        if not files:
            raise FileNotFoundError(f"vdr gold: no <dataset>.qrels or <dataset>.tsv files in {path}")
        qrels: dict[str, dict[str, dict[str, float]]] = {}
        for f in files:
            ds = qrels.setdefault(dataset_from_filename(f.stem), {})
            with open(f, encoding="utf-8", newline="") as fh:
                if f.suffix == ".tsv":  # BEIR: header "query-id corpus-id score"
                    rows = ((r[0], r[1], r[2]) for i, r in enumerate(csv.reader(fh, delimiter="\t")) if i and r)
                else:  # TREC: "query_id 0 doc_id grade"
                    rows = ((p[0], p[2], p[3]) for p in (line.split() for line in fh) if p)
                for q, d, g in rows:
                    ds.setdefault(q, {})[d] = float(g)
        return VdrGold(source=str(path), sha256=hash_files(files), qrels=qrels)

    def units(self, gold: VdrGold, key: str) -> UnitIndex:
        keys = gold.unit_keys
        return UnitIndex(ids=[f"{ds}/{q}" for ds, q in keys], clusters=[f"{ds}/{q}" for ds, q in keys],
                         strata=[ds for ds, _ in keys])

    def unit_of(self, record: dict) -> str | None:
        return f"{record.get('dataset')}/{record.get('query_id')}"

    def unit_info(self, gold: VdrGold) -> dict[str, dict]:
        return {f"{ds}/{q}": {"dataset": ds, "family": family_of(ds), "query": q,
                              "relevant": sorted(d for d, g in gold.qrels[ds][q].items() if g > 0)}
                for ds, q in gold.unit_keys}

    # ---- submissions ----------------------------------------------------------------
    def validate_system(self, system, where: str, problems: Problems) -> dict:
        system = super().validate_system(system, where, problems)
        storage = system.get("storage")
        if not isinstance(storage, dict) or not storage:
            problems.error(where, "required: {dataset: {vectors, vectors_uncompressed, bytes?}}", field="system.storage")
            return system
        for ds, entry in storage.items():
            f = f"system.storage[{ds!r}]"
            if not isinstance(entry, dict):
                problems.error(where, "expected {vectors, vectors_uncompressed, bytes?}", field=f)
                continue
            kept, full, size = entry.get("vectors"), entry.get("vectors_uncompressed"), entry.get("bytes")
            if not finite_number(kept) or not finite_number(full) or not 0 < kept <= full:
                problems.error(where, f"expected 0 < vectors <= vectors_uncompressed, got {kept!r} and {full!r}", field=f)
            if size is not None and (not finite_number(size) or size < 0):
                problems.error(where, f"bytes: expected a non-negative number, got {size!r}", field=f)
        return system

    def validate(self, env: Envelope, gold: VdrGold, problems: Problems) -> VdrRun:
        parsed: dict[tuple[str, str], tuple[list, list]] = {}
        for rec, where in zip(env.records, env.locations):
            if type(rec) is not dict:
                problems.error(where, f"expected a prediction object, got {type(rec).__name__}")
                continue
            ds, qid = rec.get("dataset"), rec.get("query_id")
            if type(ds) is not str or ds not in gold.qrels:
                problems.error(where, f"unknown dataset {ds!r}"[:200], field="dataset")
                continue
            if type(qid) is not str or qid not in gold.qrels[ds]:
                problems.error(where, f"unknown query id in {ds}", record=qid if type(qid) is str else repr(qid), field="query_id")
                continue
            if (ds, qid) in parsed:
                problems.error(where, f"repeated query in {ds}", record=qid, field="query_id")
                continue
            ranking = rec.get("ranking")
            if type(ranking) is not list or not 1 <= len(ranking) <= MAX_RANKING:
                problems.error(where, f"expected a list of 1 to {MAX_RANKING} {{doc, score}} entries", record=qid, field="ranking")
                continue
            try:
                docs = [e["doc"] for e in ranking]
                scores = [e["score"] for e in ranking]
            except (TypeError, KeyError):
                problems.error(where, "every entry needs doc (string) and score (number)", record=qid, field="ranking")
                continue
            # Type checks on whole lists keep this loop at C speed for 100-doc rankings.
            if set(map(type, docs)) != {str}:
                problems.error(where, "doc: expected strings", record=qid, field="ranking")
                continue
            if not set(map(type, scores)) <= {int, float} or not np.isfinite(scores).all():
                problems.error(where, "score: expected finite numbers (no NaN / inf)", record=qid, field="ranking")
                continue
            if len(set(docs)) != len(docs):
                problems.error(where, "a doc appears twice in the ranking", record=qid, field="ranking")
                continue
            parsed[(ds, qid)] = (docs, scores)
        if not env.records:
            problems.error("file", "the submission has no prediction")
        storage = env.system.get("storage") if isinstance(env.system, dict) else None
        if isinstance(storage, dict):
            for ds in sorted({ds for ds, _ in parsed}):
                if ds not in storage:
                    problems.error(env.header_where, f"dataset {ds} has predictions but no storage entry", field="system.storage")
        return VdrRun(parsed, storage if isinstance(storage, dict) else {})

    def score(self, run: VdrRun, gold: VdrGold, verdicts: dict | None = None) -> Scores:
        parsed = run.rankings
        datasets = sorted({ds for ds, _ in parsed})
        units = np.full(len(gold.unit_keys), np.nan)
        per_ds: dict[str, np.ndarray] = {}
        for ds in datasets:
            scores = []
            for q in gold.judged[ds]:
                got = parsed.get((ds, q))
                s = ndcg_at_k(got[0], got[1], gold.qrels[ds][q], K) if got else 0.0
                if got:
                    units[gold.unit_pos[(ds, q)]] = s
                scores.append(s)
            per_ds[ds] = np.asarray(scores)
        storage = run.storage
        compression = {ds: 1 - storage[ds]["vectors"] / storage[ds]["vectors_uncompressed"] for ds in datasets if ds in storage}
        overall = {"ndcg@5": float(np.mean([v.mean() for v in per_ds.values()]))}
        if compression:
            overall["compression"] = float(np.mean(list(compression.values())))
        # Queries resampled within each dataset, then the mean over datasets.
        plan = BootstrapPlan.for_sizes(tuple(len(per_ds[ds]) for ds in datasets))
        low, high = plan.ci([per_ds[ds] for ds in datasets])[0]
        breakdowns = {"dataset": {ds: {"ndcg@5": float(per_ds[ds].mean()), **({"compression": compression[ds]} if ds in compression else {})}
                                  for ds in datasets}}
        families = {f: {"ndcg@5": float(np.mean([per_ds[d].mean() for d in members]))}
                    for f, members in FAMILIES.items() if all(d in per_ds for d in members)}
        if families:
            breakdowns["family"] = families
        n = sum(len(gold.judged[ds]) for ds in datasets)
        answered = int(np.count_nonzero(~np.isnan(units)))
        return Scores(n=n, missing=n - answered, overall=overall, ci={"ndcg@5": [float(low), float(high)]},
                      breakdowns=breakdowns, units={"ndcg@5": units}, extra={"datasets": datasets})
