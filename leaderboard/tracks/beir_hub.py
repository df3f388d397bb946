"""Qrels of BEIR-layout dataset repos on the Hugging Face Hub, read through `datasets`.

A gold given as dataset ids (`org/name[@revision]`, comma separated) or as a suite file
(JSON: `{"families": {family: [ids]}}`) names repos in the layout ViDoRe publishes:
configs `qrels`, `queries` and `corpus`, split `test`. Only `qrels` is read, with
`datasets.load_dataset(id, "qrels", split="test", revision=...)`; the corpus (page images,
gigabytes) and the queries are never downloaded. Integer ids become their decimal strings.

Each repo is fetched once: its qrels are kept as JSON under
`<LEADERBOARD_DATA_DIR>/gold-hub/` (`HubAccess`, handed over by the board or the CLI) by the commit they were read at, so a revision pinned to a
commit loads with no network at all, and an unpinned one costs one API call (which commit is
current) before the local copy is used. `datasets` keeps its own cache under HF_HOME too.
Every failure is a `HubGoldError` naming the dataset: never a traceback.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..environment import REPO_ROOT, default, default_data_dir

SUITES_DIR = REPO_ROOT / "assets" / "suites"
BEIR_SUFFIX = "_beir"
MAX_DATASETS = 200  # a suite names a benchmark's datasets, not a registry
MAX_SUITE_BYTES = 1 << 20
MAX_FAMILY_NAME = 80
_REPO = r"[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96}"
_ID = re.compile(rf"^(?P<repo>{_REPO})(?:@(?P<revision>[\w./-]{{1,200}}))?$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_CACHE_VERSION = 1


class HubGoldError(ValueError):
    """Gold that cannot be read from the Hub: the message names the dataset and what went wrong."""


@dataclass(frozen=True)
class HubAccess:
    """How gold is read from the Hub: the Settings' HF_ENDPOINT, HUB_TIMEOUT_SECONDS and data folder."""

    endpoint: str | None = None  # None: huggingface_hub's own (its HF_ENDPOINT, read when it is imported)
    timeout: float = default("HUB_TIMEOUT_SECONDS")
    data_dir: Path = field(default_factory=default_data_dir)

    @property
    def cache_dir(self) -> Path:
        return self.data_dir / "gold-hub"


# Gold is loaded once per process and source (the tracks' caches), so how it is fetched is the process's too:
# set by whoever holds the Settings (the board, the CLI) before gold is loaded.
_access = HubAccess()


def use(access: HubAccess) -> None:
    global _access
    _access = access


def access() -> HubAccess:
    return _access


@dataclass(frozen=True)
class HubDataset:
    repo_id: str
    revision: str | None = None  # a branch, tag or commit; None: the default branch
    family: str | None = None  # from a suite file

    @property
    def name(self) -> str:
        """The board's name of the dataset: the repo id without a `_beir` suffix."""
        return self.repo_id[: -len(BEIR_SUFFIX)] if self.repo_id.endswith(BEIR_SUFFIX) else self.repo_id

    @property
    def spec(self) -> str:
        return f"{self.repo_id}@{self.revision}" if self.revision else self.repo_id


@dataclass(frozen=True)
class HubQrels:
    dataset: HubDataset
    commit: str  # the commit read ("" when datasets could not say)
    qrels: dict[str, dict[str, float]]  # query -> doc -> grade


@dataclass(frozen=True)
class HubGoldSpec:
    """What a gold setting names: the datasets, and the suite file they come from (if any)."""

    datasets: tuple[HubDataset, ...]
    suite: str | None = None  # the suite file's name

    @property
    def families(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = {}
        for d in self.datasets:
            if d.family:
                out.setdefault(d.family, []).append(d.name)
        return {f: tuple(members) for f, members in out.items()}


def parse_gold_setting(source) -> HubGoldSpec | None:
    """The Hub datasets a gold setting names; None when it is a local folder or file of qrels (or unset).

    A suite file is a `.json` path, or the name of a suite shipped in assets/suites (`vidore-v1-v2`).
    """
    if source is None:
        return None
    if isinstance(source, Path):
        return read_suite(source) if source.suffix == ".json" and source.is_file() else None
    text = str(source).strip()
    path = Path(text)
    if path.exists():
        return read_suite(path) if path.suffix == ".json" and path.is_file() else None
    shipped = SUITES_DIR / (text if text.endswith(".json") else f"{text}.json")
    if "/" not in text and shipped.is_file():
        return read_suite(shipped)
    if text.endswith(".json"):
        raise HubGoldError(f"suite file not found: {text}")
    parts = [p.strip() for p in text.split(",")]
    if not all(parts):
        raise HubGoldError(f"expected dataset ids separated by commas, got an empty one in {text[:200]!r}")
    return HubGoldSpec(_checked([parse_id(p) for p in parts]))


def parse_id(text: str, family: str | None = None) -> HubDataset:
    m = _ID.match(text)
    if not m:
        raise HubGoldError(
            f"{text[:200]!r} is neither a local path nor a Hugging Face dataset id (org/name, optionally @revision)"
        )
    return HubDataset(m["repo"], m["revision"], family)


def read_suite(path: Path) -> HubGoldSpec:
    """A suite file: {"families": {family: ["org/name[@revision]", ...]}, "description": "..."}."""
    where = f"suite {path.name}"
    try:
        if path.stat().st_size > MAX_SUITE_BYTES:
            raise HubGoldError(f"{where}: larger than {MAX_SUITE_BYTES:,} bytes")
        suite = json.loads(path.read_bytes())
    except OSError as exc:
        raise HubGoldError(f"{where}: cannot be read ({exc.strerror})") from None
    except (ValueError, RecursionError) as exc:
        raise HubGoldError(f"{where}: not valid JSON ({str(exc)[:120]})") from None
    if not isinstance(suite, dict) or not isinstance(suite.get("families"), dict) or not suite["families"]:
        raise HubGoldError(f'{where}: expected {{"families": {{family: [dataset ids]}}}}')
    unknown = set(suite) - {"families", "description"}
    if unknown:
        raise HubGoldError(f"{where}: unknown keys {sorted(unknown)[:5]} (expected families, description)")
    datasets = []
    for family, ids in suite["families"].items():
        if not family.strip() or len(family) > MAX_FAMILY_NAME:
            raise HubGoldError(f"{where}: a family name must have 1 to {MAX_FAMILY_NAME} characters, got {family[:100]!r}")
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
            raise HubGoldError(f"{where}: family {family!r} must list dataset ids (strings)")
        datasets += [parse_id(i.strip(), family) for i in ids]
    return HubGoldSpec(_checked(datasets), path.name)


def _checked(datasets: list[HubDataset]) -> tuple[HubDataset, ...]:
    if len(datasets) > MAX_DATASETS:
        raise HubGoldError(f"at most {MAX_DATASETS} datasets, got {len(datasets):,}")
    seen: dict[str, str] = {}
    for d in datasets:
        if d.name in seen:
            raise HubGoldError(f"{d.repo_id} and {seen[d.name]} are both dataset {d.name} (listed twice?)")
        seen[d.name] = d.repo_id
    return tuple(datasets)


# ---- loading ------------------------------------------------------------------------------------------


def load_spec(spec: HubGoldSpec) -> list[HubQrels]:
    return [load_qrels(d) for d in spec.datasets]


def load_qrels(dataset: HubDataset) -> HubQrels:
    """One dataset's qrels: from the local copy of its commit, else through `datasets` (then kept)."""
    if dataset.revision and _COMMIT.match(dataset.revision):  # pinned: the local copy needs no network
        cached = _read_cache(dataset, dataset.revision)
        if cached is not None:
            return HubQrels(dataset, dataset.revision, cached)
    commit = _current_commit(dataset)
    cached = _read_cache(dataset, commit) if commit else None
    if cached is not None:
        return HubQrels(dataset, commit, cached)
    qrels, read_at = _read_through_datasets(dataset, commit or dataset.revision)
    commit = commit or read_at
    if commit:
        _write_cache(dataset, commit, qrels)
    return HubQrels(dataset, commit, qrels)


def _current_commit(dataset: HubDataset) -> str | None:
    """The commit `dataset.revision` points to, asked of the Hub (None offline: `datasets` then uses its cache)."""
    info = dataset_info(dataset)
    return None if info is None else info.sha


def dataset_info(dataset: HubDataset):
    """The Hub's DatasetInfo of `dataset` at its revision (commit, files); None when the Hub client is offline.
    Every failure is one HubGoldError line naming the dataset."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import OfflineModeIsEnabled, RepositoryNotFoundError, RevisionNotFoundError

    try:
        return HfApi(endpoint=_access.endpoint).dataset_info(dataset.repo_id, revision=dataset.revision, timeout=_access.timeout)
    except OfflineModeIsEnabled:
        return None
    except RevisionNotFoundError:
        raise HubGoldError(f"{dataset.repo_id}: no revision {dataset.revision!r} on the Hub") from None
    except RepositoryNotFoundError:
        raise HubGoldError(
            f"{dataset.repo_id}: no such dataset on the Hub (or it is private and HF_TOKEN cannot read it)"
        ) from None
    except Exception as exc:  # network errors of every kind (httpx, OSError, HTTP 5xx): the Hub did not answer
        raise HubGoldError(f"{dataset.repo_id}: the Hub cannot be reached ({_short(exc)})") from None


def _read_through_datasets(dataset: HubDataset, revision: str | None) -> tuple[dict[str, dict[str, float]], str]:
    import datasets
    from datasets.exceptions import DatasetNotFoundError

    try:
        table = datasets.load_dataset(dataset.repo_id, "qrels", split="test", revision=revision)
    except DatasetNotFoundError:
        raise HubGoldError(f"{dataset.repo_id}: no such dataset on the Hub (or it is not cached for offline use)") from None
    except ConnectionError as exc:
        raise HubGoldError(f"{dataset.repo_id}: the Hub cannot be reached ({_short(exc)})") from None
    except ValueError as exc:
        if "BuilderConfig" in str(exc) or "config" in str(exc).lower():
            raise HubGoldError(
                f"{dataset.repo_id}: has no `qrels` config with a `test` split (expected the BEIR layout: "
                "configs qrels, queries, corpus)"
            ) from None
        raise HubGoldError(f"{dataset.repo_id}: cannot be read ({_short(exc)})") from None
    except Exception as exc:  # anything else `datasets` raises about this repo
        raise HubGoldError(f"{dataset.repo_id}: cannot be read as a BEIR `qrels` config ({_short(exc)})") from None
    qrels = _qrels_of(dataset, table)
    files = getattr(table, "cache_files", None) or [{}]
    folder = Path(files[0].get("filename", "")).parent.name  # datasets files its cache by the commit it read
    return qrels, folder if _COMMIT.match(folder) else ""


def _qrels_of(dataset: HubDataset, table) -> dict[str, dict[str, float]]:
    columns = ("query-id", "corpus-id", "score")
    if not set(columns) <= set(table.column_names):
        raise HubGoldError(
            f"{dataset.repo_id}: the qrels config has columns {table.column_names[:10]}, expected {', '.join(columns)}"
        )
    data = table.select_columns(list(columns)).to_dict()
    qrels: dict[str, dict[str, float]] = {}
    for row, (q, d, g) in enumerate(zip(data["query-id"], data["corpus-id"], data["score"])):
        q, d = _id_text(q), _id_text(d)
        if q is None or d is None or not _finite(g):
            raise HubGoldError(
                f"{dataset.repo_id}: qrels row {row}: expected integer or string ids and a numeric score, "
                f"got {str(data['query-id'][row])[:40]!r}, {str(data['corpus-id'][row])[:40]!r}, {str(g)[:40]!r}"
            )
        qrels.setdefault(q, {})[d] = float(g)
    if not qrels:
        raise HubGoldError(f"{dataset.repo_id}: the qrels config is empty")
    return qrels


def _id_text(value) -> str | None:
    """Integer ids compare as their decimal strings (the spec); strings stay as they are."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    return value if isinstance(value, str) and 0 < len(value) <= 200 else None


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _short(exc: Exception) -> str:
    return (str(exc).splitlines() or [""])[0][:200] or "no detail"


# ---- the local copy ------------------------------------------------------------------------------------


def cache_dir() -> Path:
    return _access.cache_dir


def _cache_file(dataset: HubDataset, commit: str) -> Path:
    return cache_dir() / f"{dataset.repo_id.replace('/', '__')}@{commit}.json"


def _read_cache(dataset: HubDataset, commit: str) -> dict[str, dict[str, float]] | None:
    path = _cache_file(dataset, commit)
    try:
        stored = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError):
        path.unlink(missing_ok=True)  # unreadable: fetched again
        return None
    qrels = stored.get("qrels") if isinstance(stored, dict) and stored.get("version") == _CACHE_VERSION else None
    ok = isinstance(qrels, dict) and all(
        isinstance(docs, dict) and all(_finite(g) for g in docs.values()) for docs in qrels.values()
    )
    if not ok or stored.get("repo_id") != dataset.repo_id:
        path.unlink(missing_ok=True)
        return None
    return {q: {d: float(g) for d, g in docs.items()} for q, docs in qrels.items()}


def _write_cache(dataset: HubDataset, commit: str, qrels: dict) -> None:
    path = _cache_file(dataset, commit)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(
                json.dumps({"version": _CACHE_VERSION, "repo_id": dataset.repo_id, "commit": commit, "qrels": qrels}).encode()
            )
        os.replace(tmp, path)
    except OSError:  # a read-only data folder: the gold still loads, from the Hub next time too
        pass


def qrels_hash(parts: list[HubQrels], families: dict[str, tuple[str, ...]]) -> str:
    """sha256 of the qrels as read (and the families, which shape the breakdowns): the gold's cache key."""
    body = {
        "qrels": {p.dataset.name: p.qrels for p in parts},
        "families": {f: list(m) for f, m in sorted(families.items())},
    }
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def label(spec: HubGoldSpec, parts: list[HubQrels] | None = None) -> str:
    """A short description for the status line: `org/name@1234abc` (the commit read, once loaded), or the suite."""
    if spec.suite:
        return f"suite {spec.suite} ({len(spec.datasets)} Hub datasets)"
    commits = [p.commit for p in parts] if parts else [d.revision or "" for d in spec.datasets]
    shown = [f"{d.repo_id}@{c[:7]}" if c else d.repo_id for d, c in zip(spec.datasets[:2], commits)]
    more = f" and {len(spec.datasets) - 2} more" if len(spec.datasets) > 2 else ""
    return ", ".join(shown) + more
