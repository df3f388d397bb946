"""Track `vdr`: multi-vector visual document retrieval under compression (nDCG@5 vs vectors removed)."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain, compress, repeat
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Annotated

import msgspec
import numpy as np

from ..metrics.ranking import ideal_dcg, ndcg_at_k_many
from ..problems import Problems
from ..submission import Envelope
from ..summarise import UnitIndex, summarise
from . import beir_hub
from .base import (
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
    TableColumn,
    Track,
    canonical_json,
    fingerprint_of,
    finite_number,
    hash_files,
    prediction_records,
    too_long,
)

K = 5
MAX_RANKING = 100
_DATASET, _QUERY, _RANKING = attrgetter("dataset"), attrgetter("query_id"), attrgetter("ranking")
_DOC, _SCORE = attrgetter("doc"), attrgetter("score")
_V1 = (
    "arxivqa_test_subsampled",
    "docvqa_test_subsampled",
    "infovqa_test_subsampled",
    "tabfquad_test_subsampled",
    "tatdqa_test",
    "shiftproject_test",
    "syntheticDocQA_artificial_intelligence_test",
    "syntheticDocQA_energy_test",
    "syntheticDocQA_government_reports_test",
    "syntheticDocQA_healthcare_industry_test",
)
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
    # family -> its datasets: a suite file's, else the track's (ViDoRe V1 and V2)
    families: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(FAMILIES))
    label: str = ""  # what the status line calls this gold (Hub datasets at their commits); "" for local files

    def family_of(self, dataset: str) -> str:
        return next((f for f, members in self.families.items() if dataset in members), "other")

    @cached_property
    def scored_datasets(self) -> list[str]:
        """The datasets the headline averages over: every dataset of the gold with a judged query."""
        return [ds for ds in sorted(self.judged) if self.judged[ds]]

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

    @cached_property
    def unit_index(self) -> UnitIndex:
        """Queries resampled one by one within each dataset (the strata)."""
        ids = [f"{ds}/{q}" for ds, q in self.unit_keys]
        return UnitIndex(ids=ids, clusters=ids, strata=[ds for ds, _ in self.unit_keys])

    @cached_property
    def dataset_codes(self) -> tuple[np.ndarray, list[str]]:
        return self.unit_index.codes[0], list(dict.fromkeys(self.unit_index.strata))

    @cached_property
    def idcg(self) -> dict[tuple[str, str], float]:
        return {(ds, q): ideal_dcg(self.qrels[ds][q], K) for ds, q in self.unit_keys}


@dataclass
class VdrRun:
    """Validated rankings, flat: ranking i is docs / scores [starts[i], starts[i] + lens[i])."""

    keys: list[tuple[str, str]]  # (dataset, query) per ranking
    docs: list[str]
    scores: np.ndarray
    lens: np.ndarray
    storage: dict[str, dict]
    # What both protocols' scoring share, computed once per gold: the per-unit nDCG@5 (scoring.score_checked
    # scores the board's protocol, then the official one)
    shared: dict = field(default_factory=dict, repr=False, compare=False)


def dataset_from_filename(stem: str) -> str:
    return stem.replace("__", "/")


def family_of(dataset: str) -> str:
    return next((f for f, members in FAMILIES.items() if dataset in members), "other")


_HUB_GOLD: dict[beir_hub.HubGoldSpec, VdrGold] = {}


# Unknown keys are refused here (the generic path accepts them): a skipped value could hide nesting
# deeper than the limit, which the generic path reports; such files simply take the generic path.
# gc=False: a decoded record holds strings, numbers and lists of records, never a cycle, so the collector
# need not track the hundreds of thousands a file decodes into.
class _Entry(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    doc: Annotated[str, msgspec.Meta(max_length=MAX_ID)]
    score: float  # JSON integers are accepted; NaN / inf are not JSON numbers, 1e999 is out of range


class _Record(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """One ranking, as the typed fast path decodes it."""

    dataset: Annotated[str, msgspec.Meta(max_length=MAX_ID)]
    query_id: Annotated[str, msgspec.Meta(max_length=MAX_ID)]
    ranking: Annotated[list[_Entry], msgspec.Meta(min_length=1, max_length=MAX_RANKING)]


class VdrTrack(Track):
    name = "vdr"
    title = "VDR compression"
    description = "Multi-vector visual document retrieval: nDCG@5 per dataset against the share of patch vectors removed."
    metrics = (
        Metric(
            "ndcg@5",
            "nDCG@5",
            "nDCG@5 (trec_eval conventions, graded gains), mean over every dataset of the gold; "
            "a dataset without rankings scores 0 (see Coverage).",
        ),
        Metric(
            "compression",
            "Compression",
            "Share of vectors removed: 1 - kept / uncompressed, averaged over datasets.",
            has_ci=False,
            percent=True,
        ),
    )
    rank_by = "ndcg@5"
    headline = ("ndcg@5",)
    axes = (Axis("dataset", "Dataset"), Axis("family", "Dataset family", tuple(FAMILIES)))
    system_fields = (
        SystemField("name", "System", required=True),
        SystemField("organization", "Organisation"),
        SystemField("model", "Base model", required=True, filter=True),
        SystemField("method", "Method", required=True, filter=True),
        SystemField("retriever", "Retriever", shown=False),
        SystemField("link", "Link", kind="url"),
        SystemField("description", "Description"),
    )
    unit_label = "query"
    charts = (
        Chart(
            "tradeoff",
            "nDCG@5 against compression (Pareto front marked)",
            x="compression",
            y="ndcg@5",
            group=("model", "method"),  # a model's prune and merge runs are two curves, not one zig-zag
            empty="No system reports compression yet.",
            x_title="share of vectors removed",
        ),
        Chart("by_axis", "Per dataset", axis="dataset"),
        Chart("by_axis", "Per dataset family", axis="family"),
    )
    slice_axes = ("family", "dataset")
    extra_columns = (
        TableColumn(
            "coverage",
            "Coverage",
            "Datasets submitted over datasets in the gold; nDCG@5 counts a missing dataset as 0.",
            percent=True,
            digits=0,
        ),
        TableColumn(
            "retention",
            "Retention",
            "nDCG@5 of a compressed run over that of the same base model uncompressed (method `none`, its best such run).",
            percent=True,
            digits=1,
        ),
    )
    derived_columns = ("retention",)
    resampling = "queries within each dataset, then the mean over datasets"
    run_formats = ("trec", "beir")

    def records_from_run(self, fmt: str, run: dict, problems: list[str], options: dict | None = None) -> list[dict]:
        """One record per (dataset, query): its documents in trec_eval's order (score descending, then doc id
        descending), the first MAX_RANKING kept (nDCG@5 reads five). Datasets named by a file stem use the
        gold's file naming: `vidore__x` is `vidore/x`."""
        records = []
        for name, queries in run.items():
            dataset = dataset_from_filename(name)
            for qid, docs in queries.items():
                ranked = sorted(docs.items(), key=lambda d: (d[1], d[0]), reverse=True)[:MAX_RANKING]
                records.append({"dataset": dataset, "query_id": qid, "ranking": [{"doc": d, "score": s} for d, s in ranked]})
        return records

    def derive_columns(self, rows):
        """Retention: nDCG@5 over that of the same model with method `none` (best such run)."""
        if not {"model", "method", "ndcg@5"} <= set(rows.columns):
            return {}
        base = rows[rows["method"] == "none"].groupby("model")["ndcg@5"].max()
        return {"retention": rows["ndcg@5"] / rows["model"].map(base)}

    gold_patterns = ("*.qrels", "**/*.qrels", "*.tsv", "**/*.tsv")
    gold_help = (
        "the vdr track's gold: a local folder of TREC `.qrels` / BEIR `.tsv` files, one or more Hugging Face "
        "dataset ids in the BEIR layout (`org/name[@revision]`, comma separated; only their `qrels` config is "
        "read), or a suite file (`assets/suites/vidore-v1-v2.json`, or just `vidore-v1-v2`)"
    )

    # ---- reported results (MTEB results repository, ColPali paper, token-pooling curve) ------------------------
    reported_files = ("vidore-mteb-results.json", "vidore-token-pooling.json")
    reported_notes = (
        "nDCG@5 per dataset. A reported row shows the datasets of the board's gold that its source has; its headline "
        'is the mean of those reported values (marked *mean*: "mean of the reported per-dataset values"), and only '
        "when the source has every dataset of the gold, as a rescored run's headline averages over every gold "
        "dataset. A source missing a gold dataset gets no headline: counting it 0 would charge the source for what it "
        "did not measure. ViDoRe V2 synthetic sets show the English-query value (MTEB's own task score averages four "
        "query languages; all four are in the detail view). The token-pooling curve is its own series on the "
        "nDCG@5-against-compression chart: the mean of its reported values over its own six ViDoRe V1 datasets "
        "(not the board's gold) at the nominal compression 1 - 1/pool factor; uncompressed models sit at 0 %. "
        "Not shown: the colnomic model-card table (its column mapping is assumed, its revision unrecorded). "
        "The demo gold is synthetic but uses the real dataset names: the reported figures come from the real "
        "datasets and are shown against those names."
    )

    def reported_rows(self, files: dict, gold: Gold) -> list[ReportedRow]:
        """Published nDCG@5 per ViDoRe dataset, against this gold.

        Each row shows the figures of the gold's datasets that its source has (the file's dataset ids are this
        track's dataset names). The headline is the mean of those reported per-dataset values, and only when the
        source has every dataset of the gold: a rescored run's headline is the mean over every gold dataset, so
        the same mean is the one honest counterpart; a source missing a gold dataset gets no headline (missing
        datasets at 0 would charge a paper for what it did not measure). A family shows the same way when the
        gold and the source have all its datasets. Figures of datasets outside the gold stay in the detail view.
        """
        datasets = sorted(getattr(gold, "qrels", {}))
        families = getattr(gold, "families", FAMILIES)
        mteb, pooling = files["vidore-mteb-results.json"], files["vidore-token-pooling.json"]
        return _mteb_rows(mteb, datasets, families) + _pooling_rows(pooling, datasets, families)

    # ---- gold ---------------------------------------------------------------------
    def load_gold(self, source: str | Path | None = None) -> VdrGold:
        """A local folder or file of qrels (the base class), or Hub datasets read through `datasets`."""
        spec = beir_hub.parse_gold_setting(source)
        if spec is None:
            return super().load_gold(source)
        if spec not in _HUB_GOLD:  # once per process: the qrels are fixed at the commits read
            parts = beir_hub.load_spec(spec)
            families = spec.families or dict(FAMILIES)  # ids without a suite: the track's families
            _HUB_GOLD[spec] = VdrGold(
                source=", ".join(d.spec for d in spec.datasets),
                sha256=beir_hub.qrels_hash(parts, families),
                qrels={p.dataset.name: p.qrels for p in parts},
                families=families,
                label=beir_hub.label(spec, parts),
            )
        return _HUB_GOLD[spec]

    def gold_label(self, source: str) -> str:
        spec = beir_hub.parse_gold_setting(source)
        if spec is None:
            return super().gold_label(source)
        loaded = _HUB_GOLD.get(spec)
        return loaded.label if loaded is not None else beir_hub.label(spec)

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
        return gold.unit_index

    def gold_units(self, gold: VdrGold) -> int:
        return sum(map(len, gold.qrels.values()))  # every query a record may name, judged or not

    def unit_of(self, record: dict) -> str | None:
        return f"{record.get('dataset')}/{record.get('query_id')}"

    def record_summary(self, record: dict) -> str:
        ranking = [e for e in record.get("ranking") or [] if isinstance(e, dict)]
        top = sorted(ranking, key=lambda e: (e.get("score", 0), str(e.get("doc"))), reverse=True)[:K]
        return "top 5: " + ", ".join(str(e.get("doc")) for e in top)

    def unit_info(self, gold: VdrGold) -> dict[str, dict]:
        return {
            f"{ds}/{q}": {
                "dataset": ds,
                "family": gold.family_of(ds),
                "query": q,
                "relevant": sorted(d for d, g in gold.qrels[ds][q].items() if g > 0),
            }
            for ds, q in gold.unit_keys
        }

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
        keys: list[tuple[str, str]] = []
        rankings: list[list] = []
        wheres: list[str] = []
        seen: set[tuple[str, str]] = set()
        for rec, where in prediction_records(env, problems):
            ds, qid = rec.get("dataset"), rec.get("query_id")
            if type(ds) is str and (problem := too_long(ds, MAX_ID)):
                problems.error(where, problem, field="dataset")
                continue
            if type(qid) is str and (problem := too_long(qid, MAX_ID)):
                problems.error(where, problem, field="query_id")
                continue
            if type(ds) is not str or ds not in gold.qrels:
                problems.error(where, f"unknown dataset {ds!r}"[:200], field="dataset")
                continue
            if type(qid) is not str or qid not in gold.qrels[ds]:
                problems.error(
                    where, f"unknown query id in {ds}", record=qid if type(qid) is str else repr(qid), field="query_id"
                )
                continue
            if (ds, qid) in seen:
                problems.error(where, f"repeated query in {ds}", record=qid, field="query_id")
                continue
            seen.add((ds, qid))
            ranking = rec.get("ranking")
            if type(ranking) is not list or not 1 <= len(ranking) <= MAX_RANKING:
                problems.error(
                    where, f"expected a list of 1 to {MAX_RANKING} {{doc, score}} entries", record=qid, field="ranking"
                )
                continue
            keys.append((ds, qid))
            rankings.append(ranking)
            wheres.append(where)
        run = _bulk_rankings(keys, rankings)
        if run is None:  # something is malformed: check ranking by ranking to say precisely what
            for (_, qid), ranking, where in zip(keys, rankings, wheres):
                problem = _ranking_problem(ranking)
                if problem:
                    problems.error(where, problem, record=qid, field="ranking")
            run = VdrRun([], [], np.zeros(0), np.zeros(0, dtype=np.int64), {})
        storage = env.system.get("storage") if isinstance(env.system, dict) else None
        if isinstance(storage, dict):
            for ds in sorted({ds for ds, _ in keys}):
                if ds not in storage:
                    problems.error(env.header_where, f"dataset {ds} has predictions but no storage entry", field="system.storage")
        run.storage = storage if isinstance(storage, dict) else {}
        return run

    record_type = _Record

    def fast_validate(self, records: list[_Record], system: dict, gold: VdrGold, env: Envelope) -> VdrRun | None:
        keys = list(zip(map(_DATASET, records), map(_QUERY, records)))
        qrels = gold.qrels
        if any(ds not in qrels or q not in qrels[ds] for ds, q in keys) or len(set(keys)) != len(keys):
            return None
        storage = system.get("storage")
        if not isinstance(storage, dict) or not {ds for ds, _ in keys} <= storage.keys():
            return None
        rankings = list(map(_RANKING, records))
        flat = list(chain.from_iterable(rankings))
        docs = list(map(_DOC, flat))
        lens = np.fromiter(map(len, rankings), dtype=np.int64, count=len(rankings))
        pos = 0
        for n in lens.tolist():  # a doc twice in one ranking: the generic path says where
            if len(set(docs[pos : pos + n])) != n:
                return None
            pos += n
        return VdrRun(keys, docs, np.array(list(map(_SCORE, flat)), dtype=np.float64), lens, storage)

    def fingerprint(self, run: VdrRun) -> str:
        # Rankings sorted by (dataset, query); within one, entries in file order (a list is a value).
        # The header's storage is not a prediction: it is left out. Whole-array passes: no per-entry Python.
        order = sorted(range(len(run.keys)), key=run.keys.__getitem__)
        lens = run.lens[order] if order else np.zeros(0, dtype=np.int64)
        starts = (np.cumsum(run.lens) - run.lens)[order] if order else lens
        entry = np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(int(lens.sum()))
        docs = itemgetter(*entry.tolist())(run.docs) if len(entry) > 1 else [run.docs[i] for i in entry.tolist()]
        scores = run.scores[entry] + 0.0  # + 0.0 folds -0.0 into 0.0
        return fingerprint_of(
            self.name,
            canonical_json([run.keys[i] for i in order]),
            lens.astype("<i8").tobytes(),
            canonical_json(list(docs)),
            scores.astype("<f8").tobytes(),
        )

    # MTEB scores ViDoRe with pytrec_eval, each dataset its own task: the board's nDCG@5 per dataset is its number.
    deviations = (
        Deviation(
            "missing-datasets-score-0",
            "a run's figure is the mean over the datasets it was evaluated on (a results table of a paper, "
            "MTEB's mean over the tasks run)",
            "the mean over every dataset of the gold, a dataset without rankings scoring 0 (coverage shown beside)",
            "a run on a subset of the datasets must not outrank complete runs by skipping the hard ones",
        ),
    )

    def score_with(
        self,
        run: VdrRun,
        gold: VdrGold,
        fixes: frozenset[str],
        verdicts: dict | None = None,
        *,
        headline_only: bool = False,
        work=None,
    ) -> Scores:
        """With missing-datasets-score-0 the board (`score`); without it the mean over the covered datasets."""
        unknown = sorted(set(fixes) - {d.name for d in self.deviations})
        if unknown:
            raise ValueError(f"vdr: unknown fix {', '.join(unknown)} (known: missing-datasets-score-0)")
        if "missing-datasets-score-0" in fixes:
            return self.score(run, gold, verdicts)
        return self._score(run, gold, every_dataset=False)

    def score(self, run: VdrRun, gold: VdrGold, verdicts: dict | None = None) -> Scores:
        return self._score(run, gold, every_dataset=True)

    def _score(self, run: VdrRun, gold: VdrGold, every_dataset: bool) -> Scores:
        # the datasets the submission covers: those with predictions and at least one judged query
        datasets = sorted({ds for ds, _ in run.keys if gold.judged[ds]})
        units = _unit_ndcg(run, gold)
        # Every judged query of the gold counts, a query without a ranking as 0: the headline is the mean over
        # every dataset of the gold (queries resampled within each dataset, the index's strata), so a dataset
        # left out scores 0 and a run on a subset cannot outrank complete runs by skipping hard datasets.
        # Without that fix (the official protocol) only the covered datasets count: scope = their queries.
        index = gold.unit_index
        covered = set(datasets)
        scope = (
            None if every_dataset else np.fromiter((ds in covered for ds in index.strata), dtype=bool, count=len(index.strata))
        )
        summary = summarise(
            index, {"ndcg@5": np.nan_to_num(units)}, ~np.isnan(units), scope=scope, axes={"dataset": gold.dataset_codes}
        )
        # per-dataset (and family) slices list only the runs that cover them
        per_ds = {ds: cell for ds, cell in summary.breakdowns["dataset"].items() if ds in covered}
        summary.breakdowns["dataset"] = per_ds
        summary.overall["coverage"] = len(datasets) / len(gold.scored_datasets) if gold.scored_datasets else 0.0
        storage = run.storage
        compression = {ds: 1 - storage[ds]["vectors"] / storage[ds]["vectors_uncompressed"] for ds in datasets if ds in storage}
        if compression:
            summary.overall["compression"] = float(np.mean(list(compression.values())))
        for ds, value in compression.items():
            per_ds[ds]["compression"] = value
        families = {
            f: {"ndcg@5": float(np.mean([per_ds[d]["ndcg@5"] for d in members]))}
            for f, members in gold.families.items()
            if all(d in per_ds for d in members)
        }
        if families:
            summary.breakdowns["family"] = families
        n = len(gold.unit_keys) if scope is None else int(scope.sum())  # the queries the headline averages over
        answered = int(np.count_nonzero(~np.isnan(units)))
        return Scores(
            n=n,
            missing=n - answered,
            overall=summary.overall,
            ci=summary.ci,
            breakdowns=summary.breakdowns,
            units=summary.units,
            extra={"datasets": datasets},
        )


def _unit_ndcg(run: VdrRun, gold: VdrGold) -> np.ndarray:
    """nDCG@5 per gold unit (NaN where the run has no ranking), computed once per run and gold."""
    key = (gold.sha256, id(gold))
    if key not in run.shared:
        units = np.full(len(gold.unit_keys), np.nan)
        judged = np.fromiter((key in gold.unit_pos for key in run.keys), dtype=bool, count=len(run.keys))
        if judged.any():
            flat = np.repeat(judged, run.lens)
            docs = list(compress(run.docs, flat.tolist()))
            keys = list(compress(run.keys, judged.tolist()))
            values = ndcg_at_k_many(
                run.scores[flat],
                docs,
                run.lens[judged],
                [gold.qrels[ds][q] for ds, q in keys],
                np.array([gold.idcg[key] for key in keys]),
                K,
            )
            units[[gold.unit_pos[key] for key in keys]] = values
        units.flags.writeable = False  # shared by both protocols: neither may change it
        run.shared.clear()
        run.shared[key] = units
    return run.shared[key]


_NONE = type(None)


def _bulk_rankings(keys: list, rankings: list[list]) -> VdrRun | None:
    """All rankings of a well-formed file checked with whole-file passes; None when any check fails."""
    flat = list(chain.from_iterable(rankings))
    lens = np.fromiter(map(len, rankings), dtype=np.int64, count=len(rankings))
    if not flat:
        return VdrRun(keys, [], np.zeros(0), lens, {})
    try:  # dict.get refuses anything but a dict: no separate type pass needed
        docs = list(map(dict.get, flat, repeat("doc")))
        scores = list(map(dict.get, flat, repeat("score")))
    except TypeError:
        return None
    if set(map(type, docs)) != {str} or not set(map(type, scores)) <= {int, float} or max(map(len, docs)) > MAX_ID:
        return None
    values = np.array(scores, dtype=np.float64)
    if not np.isfinite(values).all():
        return None
    pos = 0
    for n in lens.tolist():  # a doc twice in one ranking
        if len(set(docs[pos : pos + n])) != n:
            return None
        pos += n
    return VdrRun(keys, docs, values, lens, {})


def _ranking_problem(ranking: list) -> str | None:
    """What is wrong with one ranking, or None."""
    if any(type(e) is not dict for e in ranking):
        return "every entry needs doc (string) and score (number)"
    docs, scores = [e.get("doc") for e in ranking], [e.get("score") for e in ranking]
    if any(type(d) is not str for d in docs):
        return "doc: expected strings"
    if any(len(d) > MAX_ID for d in docs):
        return f"doc: expected at most {MAX_ID} characters"
    if any(type(s) not in (int, float) or not math.isfinite(s) for s in scores):
        return "score: expected finite numbers (no NaN / inf)"
    if len(set(docs)) != len(docs):
        return "a doc appears twice in the ranking"
    return None


# ---- reported rows -------------------------------------------------------------------------------------------
_MEAN_NOTE = "mean of the reported per-dataset values over {n} datasets ({what}); not itself published"
_V2_SYNTHETIC = ("vidore/esg_reports_v2", "vidore/economics_reports_v2", "vidore/biomedical_lectures_v2")


def _mean(values: list[float]) -> float:
    return float(sum(values) / len(values))


def _against_gold(
    per_dataset: dict, datasets: list[str], what: str, families: dict[str, tuple[str, ...]]
) -> tuple[dict, dict, dict]:
    """(overall, breakdowns, computed) of one source's per-dataset nDCG@5 against the gold's datasets."""
    have = {d: float(per_dataset[d]) for d in datasets if per_dataset.get(d) is not None}
    overall, computed, breakdowns = {}, {}, {}
    if have:
        breakdowns["dataset"] = {d: {"ndcg@5": v} for d, v in have.items()}
    if datasets and len(have) == len(datasets):
        overall["ndcg@5"] = _mean(list(have.values()))
        computed["ndcg@5"] = _MEAN_NOTE.format(n=len(have), what=f"every dataset of the board's gold, {what}")
    by_family = {}
    for family, members in families.items():  # the gold's families (a suite file may name its own)
        if members and all(m in have for m in members):
            by_family[family] = {"ndcg@5": _mean([have[m] for m in members])}
            computed[f"family:{family}:ndcg@5"] = _MEAN_NOTE.format(n=len(members), what=family)
    if by_family:
        breakdowns["family"] = by_family
    return overall, breakdowns, computed


def _outside_gold(per_dataset: dict, datasets: list[str]) -> dict:
    return {
        d: {"nDCG@5 (dataset not in the board's gold)": float(v)}
        for d, v in per_dataset.items()
        if d not in datasets and v is not None
    }


def _mteb_rows(data: dict, datasets: list[str], families: dict) -> list[ReportedRow]:
    src = data["source"]
    paper = src["secondary_colpali_paper"]
    averages = data.get("paper_reported_averages_percent", {})
    derived = data.get("derived_not_reported", {}).get("values", {})
    languages = data.get("vidore_v2_per_query_language", {}).get("values", {})
    rows = []
    for model, per_dataset in data["models"].items():
        unknown = [d for d in per_dataset if family_of(d) == "other"]
        if unknown:
            raise ValueError(f"{model}: datasets outside ViDoRe V1 + V2: {', '.join(unknown)}")
        from_paper = model.startswith("baseline/") or "[ColPali paper" in model
        multi_vector = not model.startswith("baseline/")
        what = "ViDoRe V2 synthetic sets: English queries" if not from_paper else "the paper's Table 2"
        overall, breakdowns, computed = _against_gold(per_dataset, datasets, what, families)
        if multi_vector:
            overall["compression"] = 0.0
            computed["compression"] = "uncompressed: every patch vector kept (no compression method)"
        detail = _outside_gold(per_dataset, datasets)
        for ds, by_lang in languages.get(model, {}).items():
            for lang, value in by_lang.items():
                detail.setdefault(ds, {})[f"nDCG@5, {lang} queries (MTEB subset)"] = float(value)
        detail_overall: tuple = ()
        if model in averages:
            detail_overall += (("Average over ViDoRe V1 as printed in the paper (Table 2)", averages[model], "%"),)
        if model in derived:
            mean10 = derived[model]["vidore_v1_mean_of_10_ndcg5"]
            check = _mean([per_dataset[d] for d in FAMILIES["ViDoRe-V1"]])
            if abs(check - mean10) > 5e-6:
                raise ValueError(f"{model}: derived V1 mean {mean10} is not the mean of its V1 figures ({check:.5f})")
            detail_overall += (("ViDoRe V1: mean of the reported per-dataset values (10 datasets, computed)", mean10, ""),)
        name = model.split("/", 1)[1] if model.startswith("baseline/") else model
        if from_paper:
            source = ReportedSource(
                title=paper["paper"],
                where="Table 2 (nDCG@5 in %, /100 here)",
                licence="figures cited from a paper (arXiv 2407.01449)",
                measured_on="the 10 ViDoRe V1 test sets with the paper's parsing pipeline (Unstructured, +/- OCR or "
                "captioning); '-' cells (pages a text pipeline cannot index) left empty",
                url="https://arxiv.org/abs/2407.01449",
                notes=(paper["note"],),
            )
            note = "ColPali paper, Table 2: ViDoRe V1 only"
        else:
            files = src["per_model_files"].get(model, {})
            revision = next(iter(files.values()))["path"].split("/")[2] if files else "?"
            source = ReportedSource(
                title=f"{src['primary'].split(': ')[0]} (snapshot {src['snapshot_commit'][:10]}, {src['snapshot_commit_date']})",
                where=f"results/{model.replace('/', '__')}/{revision}/<task>.json, scores.test[*].ndcg_at_5",
                licence=data["licence"].split(". Baseline")[0],
                measured_on="ViDoRe V1 + V2 test splits at the dataset revisions recorded in each file; "
                "V2 synthetic sets: the English-query subset",
                url=src["primary"].split(": ", 1)[-1],
                notes=tuple(n for n in data.get("notes", ()) if model in n),
            )
            note = "MTEB results; ViDoRe V2 synthetic sets: English queries (MTEB's task score averages 4 languages)"
        rows.append(
            ReportedRow(
                key=model,
                name=name,
                system={
                    "name": name,
                    "organization": "ColPali paper" if from_paper else model.split("/")[0],
                    "model": name,
                    "method": "none" if multi_vector else "other",
                },
                overall=overall,
                breakdowns=breakdowns,
                source=source,
                computed=computed,
                note=note,
                detail_overall=detail_overall,
                detail_breakdowns={"dataset": detail} if detail else {},
                series="reported: uncompressed models",
                chart_note="uncompressed",
            )
        )
    return rows


def _pooling_rows(data: dict, datasets: list[str], families: dict) -> list[ReportedRow]:
    licence = next(iter(data["licence_notes"].values()))
    rows = []
    for row in data["rows"]:
        per_dataset = row["per_dataset"]
        factor = row["pool_factor"]
        if abs(row["compression"] - (1 - 1 / factor)) > 5e-5:
            raise ValueError(f"pool factor {factor}: compression {row['compression']} is not 1 - 1/{factor}")
        mean = row["ndcg@5_mean_of_6_datasets_computed_here"]
        if set(row["datasets_in_mean"]) != set(per_dataset) or abs(_mean(list(per_dataset.values())) - mean) > 5e-6:
            raise ValueError(f"pool factor {factor}: the stated mean is not the mean of its per-dataset figures")
        overall, breakdowns, computed = _against_gold(per_dataset, datasets, "vidore/colpali token pooling", families)
        overall["compression"] = float(row["compression"])
        computed["compression"] = "nominal share of vectors removed: 1 - 1/pool factor (exact per-page ratio not reported)"
        name = f"ColPali + token pooling, pool factor {factor}"
        commit = row["source_files"][0].split("@")[1].split(":")[0]
        rows.append(
            ReportedRow(
                key=f"colpali-token-pooling-{factor}",
                name=name,
                system={
                    "name": name,
                    "organization": "Illuin Technology (vidore-benchmark)",
                    "model": "vidore/colpali",
                    "method": "none" if factor == 1 else "pool",
                },
                overall=overall,
                breakdowns=breakdowns,
                source=ReportedSource(
                    title=row["paper"],
                    where=f"{row['table']}; illuin-tech/vidore-benchmark@{commit[:10]}",
                    licence=licence,
                    measured_on=f"{len(per_dataset)} ViDoRe V1 test sets; {row['model']}",
                    url="https://github.com/illuin-tech/vidore-benchmark",
                    notes=tuple(data.get("notes", ())),
                ),
                computed=computed,
                note=f"{row['method']}; compare only with this experiment's own pool factor 1",
                detail_breakdowns={"dataset": _outside_gold(per_dataset, datasets)}
                if _outside_gold(per_dataset, datasets)
                else {},
                chart_overall={"ndcg@5": float(mean), "compression": float(row["compression"])},
                series="reported: ColPali + token pooling (vidore-benchmark)",
                chart_note=f"mean of the reported per-dataset values over its {len(per_dataset)} ViDoRe V1 datasets "
                "(not the board's gold); compression nominal (1 - 1/pool factor)",
            )
        )
    return rows
