"""UniDoc-Bench gold in its two published forms, read into one list of questions.

- **json**: the repository's per-domain question files (`<domain>.json`: `rewritten_question_obscured`,
  `complete_answer`, `question_type`, `answer_type`, `chunk_used` evidence items with `used`, a source path and
  `facts`). A local folder, or a Hub dataset repo holding them (fetched with `hf_hub_download`).
- **parquet**: the Hugging Face dataset `Salesforce/UniDoc-Bench` (`question`, `answer`, `gt_image_paths`,
  `question_type`, `answer_type`, `domain`, `longdoc_image_paths`), with splits named by domain or one split
  (`test`) and the `domain` column. From the Hub through `datasets.load_dataset` at the revision given; local
  files with pyarrow. It has no evidence facts: faithfulness is then judged against the gold answer alone.

A question id is `<domain>-<index>`, the index its 0-based position in its domain's file or split. Each question
carries its gold pages, the distinct (doc, page) pairs of its evidence, doc ids as published (leading zeros kept).
A shape the reader does not know is a `GoldShapeError`: one line naming the file or split, the row and the column.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from . import beir_hub
from .base import hash_files
from .beir_hub import HubDataset, HubGoldError, parse_id

DOMAINS = ("commerce_manufacturing", "construction", "crm", "education", "energy", "finance", "healthcare", "legal")
# Published names folded into the paper's four groups.
QUESTION_TYPE_GROUP = {
    "factual_retrieval": "factual_retrieval",
    "comparison": "comparison",
    "temporal_comparison": "comparison",
    "comparative_analysis": "comparison",
    "summarization": "summarization",
    "causal_reasoning": "logical_reasoning",
    "logical_reasoning": "logical_reasoning",
}
ANSWER_TYPE_NAME = {
    "text_only": "text_only",
    "image_only": "image_only",
    "image_plus_text_as_answer": "text_plus_image",
    "text_plus_image": "text_plus_image",
    "table_required": "table_required",
}
PARQUET_COLUMNS = ("question", "answer", "gt_image_paths", "question_type", "answer_type", "domain")
NO_FACTS = "no evidence facts: faithfulness against the answer alone"
MAX_FILE_BYTES = 256 << 20  # the published files are under 1 MB each
MAX_QUESTIONS = 100_000
MAX_CHUNK_PAGES = 1_000  # a chunk spans a few pages; more is a misread name, not a chunk
_TEXT_SOURCE = re.compile(r"(?:^|/)([^/]+)_id_\d+_pg(\d+)(?:_pg(\d+))?\.txt$")
_FIGURE_SOURCE = re.compile(r"(?:^|/)([^/]+)/(?:figure|table)-(\d+)-\d+\.\w+$")
_PAGE_IMAGE = re.compile(r"(?:^|/)([^/]+)/([^/]+)_page_(\d{4,})\.\w+$")
_SHARD = re.compile(r"^(?P<split>.+?)(?:-\d{5}-of-\d{5})?$")  # `<split>-00000-of-00001.parquet`, as the Hub writes


class GoldShapeError(ValueError):
    """Gold the reader does not understand: the message names the file or split, row and column."""


@dataclass
class Question:
    qid: str
    domain: str
    question: str  # as published
    answer: str  # a JSON-object answer flattened to "key: value" lines
    question_type: str  # one of the four groups
    answer_type: str
    contexts: list[tuple[str, int, int]]  # distinct (doc, first page, last page) of the used evidence
    evidence_facts: list[str]  # empty in the parquet form
    pages: tuple[tuple[str, int], ...]  # gold pages: distinct (doc, page), sorted
    # The used evidence items' published source paths (the JSON form; empty in the parquet form): the official
    # protocol reads its gold pages from them as the benchmark's script does.
    used_sources: tuple[str, ...] = ()


@dataclass
class GoldRead:
    questions: list[Question]
    sha256: str
    form: str  # "json" | "parquet"
    source: str  # the path or the dataset id as given
    commit: str = ""  # the Hub commit read ("" for local files, or when it could not be told)


# ---- names of evidence and page images ------------------------------------------------------------------


def flatten_answer(value) -> str:
    """Two published answers are JSON objects: one "key: value" line per leaf."""
    if isinstance(value, str):
        return value
    lines: list[str] = []

    def walk(node, prefix: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{prefix}.{k}" if prefix else str(k))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{prefix}[{i}]")
        else:
            lines.append(f"{prefix}: {node}")

    walk(value, "")
    return "\n".join(lines)


def context_of(source: str) -> tuple[str, int, int]:
    """(doc, first page, last page) of a text chunk `<doc>_id_<k>_pg<a>[_pg<b>].txt` or a figure / table
    `<doc>/figure-<page>-<n>.jpg`; a ValueError for any other name or a page range that is not one."""
    m = _TEXT_SOURCE.search(source)
    if m:
        first = int(m.group(2))
        last = int(m.group(3) or first)
    else:
        m = _FIGURE_SOURCE.search(source)
        if not m:
            raise ValueError(f"unrecognised evidence source path: {source[:200]}")
        first = last = int(m.group(2))
    if not 1 <= first <= last or last - first >= MAX_CHUNK_PAGES:
        raise ValueError(f"page range {first}-{last} is not one of a document: {source[:200]}")
    return m.group(1), first, last


def page_of_image(path: str) -> tuple[str, int]:
    """(doc, page) of a page image `.../<doc>/<doc>_page_<n>.<ext>`, n the 1-based page zero-padded to 4 digits."""
    m = _PAGE_IMAGE.search(path)
    if not m or m.group(1) != m.group(2) or int(m.group(3)) < 1:
        raise ValueError(f"{path[:200]!r} is not a page image .../<doc>/<doc>_page_<n>.<ext> (n from 0001)")
    return m.group(1), int(m.group(3))


def _pages(contexts) -> tuple[tuple[str, int], ...]:
    return tuple(sorted({(doc, p) for doc, a, b in contexts for p in range(a, b + 1)}))


# ---- the JSON form ---------------------------------------------------------------------------------------


def _json_question(name: str, i: int, q, domain: str) -> Question:
    where = f"{name}: question {i}"
    if not isinstance(q, dict):
        raise GoldShapeError(f"{where}: expected an object, got {type(q).__name__}")
    for key in ("rewritten_question_obscured", "complete_answer", "question_type", "answer_type", "chunk_used"):
        if key not in q:
            raise GoldShapeError(f"{where}: no {key}")
    text = q["rewritten_question_obscured"]
    if not isinstance(text, str) or not text.strip():
        raise GoldShapeError(f"{where}: rewritten_question_obscured: expected a question, got {str(text)[:80]!r}")
    if not isinstance(q["complete_answer"], (str, dict)):
        raise GoldShapeError(f"{where}: complete_answer: expected text or an object, got {type(q['complete_answer']).__name__}")
    items = q["chunk_used"]
    if not isinstance(items, dict):
        raise GoldShapeError(f"{where}: chunk_used: expected an object of evidence items, got {type(items).__name__}")
    contexts: dict[tuple[str, int, int], None] = {}
    facts: list[str] = []
    sources: list[str] = []
    for key, item in items.items():
        if not isinstance(item, dict) or not item.get("used"):
            continue
        meta = item.get("metadata")
        source = meta.get("source") if isinstance(meta, dict) else meta
        if not isinstance(source, str):
            raise GoldShapeError(f"{where}: chunk_used.{key}: no source path")
        try:
            contexts[context_of(source)] = None
        except ValueError as exc:
            raise GoldShapeError(f"{where}: chunk_used.{key}: {exc}") from None
        sources.append(source)
        item_facts = item.get("facts", [])
        if not isinstance(item_facts, list) or not all(isinstance(f, str) for f in item_facts):
            raise GoldShapeError(f"{where}: chunk_used.{key}.facts: expected a list of strings")
        facts += item_facts
    if not contexts:
        raise GoldShapeError(f"{where}: chunk_used: no used evidence item (a question without gold pages)")
    return Question(
        qid=f"{domain}-{i:04d}",
        domain=domain,
        question=text,
        answer=flatten_answer(q["complete_answer"]),
        question_type=_group(where, "question_type", q["question_type"]),
        answer_type=_answer_type(where, "answer_type", q["answer_type"]),
        contexts=list(contexts),
        evidence_facts=facts,
        pages=_pages(contexts),
        used_sources=tuple(sources),
    )


def read_json_files(files: dict[str, Path], source: str, commit: str = "") -> GoldRead:
    """The 8 per-domain question files ({domain: path})."""
    questions: list[Question] = []
    for domain, path in files.items():
        data = _json_of(path, f"{domain}.json")
        if not isinstance(data, list):
            raise GoldShapeError(f"{domain}.json: expected a list of questions, got {type(data).__name__}")
        questions += [_json_question(f"{domain}.json", i, q, domain) for i, q in enumerate(data)]
        _check_count(len(questions), f"{domain}.json")
    return GoldRead(questions, hash_files(list(files.values())), "json", source, commit)


def _json_of(path: Path, name: str):
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise GoldShapeError(f"{name}: larger than {MAX_FILE_BYTES:,} bytes")
        return json.loads(path.read_bytes())
    except OSError as exc:
        raise GoldShapeError(f"{name}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    except (ValueError, RecursionError) as exc:
        raise GoldShapeError(f"{name}: not valid JSON ({str(exc)[:120]})") from None


def _pick(paths: list[str], name: str) -> str | None:
    """The one path whose file name is `name`: the shallowest; two as shallow are an error, never a guess."""
    found = sorted((p for p in paths if p.rsplit("/", 1)[-1] == name), key=lambda p: (p.count("/"), p))
    if len(found) > 1 and found[0].count("/") == found[1].count("/"):
        raise GoldShapeError(f"two files {name} ({found[0]}, {found[1]}): which one is the gold?")
    return found[0] if found else None


# ---- the parquet form ------------------------------------------------------------------------------------


def questions_from_splits(splits: dict[str, dict[str, list]], where_of) -> list[Question]:
    """Questions from column dicts per split, in split order. Splits named by domain give each row its domain
    (a `domain` column, when present, must agree); any other split names take the `domain` column.
    `where_of(split)` names a split in messages (a file, or `split X of org/name`)."""
    by_split = set(splits) <= set(DOMAINS)
    counts = dict.fromkeys(DOMAINS, 0)
    questions: list[Question] = []
    for split, columns in splits.items():
        where = where_of(split)
        missing = [c for c in PARQUET_COLUMNS if c not in columns and not (c == "domain" and by_split)]
        if missing:
            raise GoldShapeError(f"{where}: no column {missing[0]} (columns: {', '.join(list(columns)[:12])})")
        n = len(columns["question"])
        _check_count(len(questions) + n, where)
        domains = columns.get("domain") or [split] * n
        for row in range(n):
            at = f"{where}, row {row}"
            domain = domains[row]
            if by_split and domain != split:
                raise GoldShapeError(f"{at}: domain {str(domain)[:80]!r} in split {split}")
            if not isinstance(domain, str) or domain not in counts:
                raise GoldShapeError(f"{at}: domain {str(domain)[:80]!r} is not a UniDoc-Bench domain ({', '.join(DOMAINS)})")
            questions.append(_parquet_question(at, columns, row, f"{domain}-{counts[domain]:04d}", domain))
            counts[domain] += 1
    empty = [d for d, c in counts.items() if not c]
    if empty:
        raise GoldShapeError(f"{where_of(None)}: no questions of the domains {', '.join(empty)}")
    return questions


def _parquet_question(at: str, columns: dict[str, list], row: int, qid: str, domain: str) -> Question:
    text, answer, images = columns["question"][row], columns["answer"][row], columns["gt_image_paths"][row]
    if not isinstance(text, str) or not text.strip():
        raise GoldShapeError(f"{at}: question: expected a question, got {str(text)[:80]!r}")
    if not isinstance(answer, str):
        raise GoldShapeError(f"{at}: answer: expected text, got {type(answer).__name__}")
    if not isinstance(images, list) or not images or not all(isinstance(p, str) for p in images):
        raise GoldShapeError(f"{at}: gt_image_paths: expected a non-empty list of page image paths, got {str(images)[:80]}")
    pages: dict[tuple[str, int], None] = {}
    for j, path in enumerate(images):
        try:
            pages[page_of_image(path)] = None
        except ValueError as exc:
            raise GoldShapeError(f"{at}: gt_image_paths[{j}]: {exc}") from None
    return Question(
        qid=qid,
        domain=domain,
        question=text,
        answer=flatten_answer(_object_answer(answer)),
        question_type=_group(at, "question_type", columns["question_type"][row]),
        answer_type=_answer_type(at, "answer_type", columns["answer_type"][row]),
        contexts=[(doc, p, p) for doc, p in pages],
        evidence_facts=[],
        pages=tuple(sorted(pages)),
    )


def _object_answer(answer: str):
    """The dataset stores every answer as text; the two published JSON-object answers come as their JSON."""
    text = answer.strip()
    if text.startswith("{") and text.endswith("}"):
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return answer
        return value if isinstance(value, dict) else answer
    return answer


def content_sha(form: str, questions: list[Question]) -> str:
    """sha256 of the gold as read (ids, texts, types, pages): its cache key when it is not a set of files."""
    body = [[q.qid, q.question, q.answer, q.question_type, q.answer_type, q.pages, q.evidence_facts] for q in questions]
    return hashlib.sha256(json.dumps([form, body], separators=(",", ":")).encode()).hexdigest()


def read_parquet_files(files: list[Path], root: Path, source: str) -> GoldRead:
    """Local parquet files: the split of `<split>-00000-of-00001.parquet` is `<split>`, shards in name order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    splits: dict[str, dict[str, list]] = {}
    names: dict[str, list[str]] = {}
    for path in sorted(files, key=lambda p: p.name):
        name = path.relative_to(root).as_posix() if path != root else path.name
        split = _SHARD.match(path.name[: -len(".parquet")])["split"]
        try:
            size = path.stat().st_size
            table = pq.read_table(path) if size <= MAX_FILE_BYTES else None
        except (OSError, pa.ArrowException) as exc:
            reason = (str(exc).splitlines() or [""])[0].split("': ")[-1]  # pyarrow's words, without the server's path
            raise GoldShapeError(f"{name}: cannot be read as parquet ({reason[:200] or type(exc).__name__})") from None
        if table is None:
            raise GoldShapeError(f"{name}: larger than {MAX_FILE_BYTES:,} bytes")
        names.setdefault(split, []).append(name)
        part = table.to_pydict()
        known = splits.setdefault(split, {c: [] for c in part})
        if set(known) != set(part):
            raise GoldShapeError(f"{name}: columns differ from {names[split][0]}'s")
        for c, values in part.items():
            known[c] += values

    def where(split: str | None) -> str:  # a row number counts across the shards of its split
        if split is None:
            return root.name
        shards = names[split]
        return shards[0] if len(shards) == 1 else f"split {split} ({', '.join(shards)})"

    questions = questions_from_splits(splits, where)
    return GoldRead(questions, content_sha("parquet", questions), "parquet", source)


# ---- local paths -----------------------------------------------------------------------------------------


def read_local(path: Path) -> GoldRead:
    """A local folder (parquet files, else the 8 domain files) or one parquet file."""
    if path.is_file() and path.suffix == ".parquet":
        return read_parquet_files([path], path, str(path))
    root = path.parent if path.is_file() else path
    parquet = sorted(root.rglob("*.parquet"))
    if parquet:
        return read_parquet_files(parquet, root, str(path))
    paths = [p.relative_to(root).as_posix() for p in root.rglob("*.json")]
    files = {d: _pick(paths, f"{d}.json") for d in DOMAINS}
    absent = [d for d, f in files.items() if f is None]
    if absent:
        raise GoldShapeError(
            f"unidoc gold at {root.name}: no parquet files, and no domain files {', '.join(f'{d}.json' for d in absent)}"
        )
    return read_json_files({d: root / f for d, f in files.items()}, str(path))


# ---- Hub dataset ids -------------------------------------------------------------------------------------


def hub_dataset(source) -> HubDataset | None:
    """The Hub dataset a gold setting names; None when unset or an existing local path. A HubGoldError for
    a setting that is neither."""
    if source is None or not str(source).strip() or isinstance(source, Path) or Path(str(source).strip()).exists():
        return None
    return parse_id(str(source).strip())


def read_hub(dataset: HubDataset) -> GoldRead:
    """The repo's parquet through `datasets` when it has parquet files, else its 8 domain files."""
    listing = _listing(dataset)
    if listing is None:  # offline: what the caches hold
        return _read_offline(dataset)
    commit, files = listing
    if any(f.endswith(".parquet") for f in files):
        return _read_hub_parquet(dataset, commit)
    try:
        wanted = {d: _pick(files, f"{d}.json") for d in DOMAINS}
    except GoldShapeError as exc:
        raise GoldShapeError(f"{dataset.repo_id}@{commit[:7]}: {exc}") from None
    absent = [d for d, f in wanted.items() if f is None]
    if absent:
        raise GoldShapeError(
            f"{dataset.repo_id}@{commit[:7]}: holds no parquet files and not the domain files "
            f"{', '.join(f'{d}.json' for d in absent)}"
        )
    return read_json_files({d: _download(dataset, commit, f) for d, f in wanted.items()}, dataset.spec, commit)


def _listing(dataset: HubDataset) -> tuple[str, list[str]] | None:
    """(commit, file paths) of the revision asked for; None when the Hub client is offline."""
    info = beir_hub.dataset_info(dataset)
    if info is None:
        return None
    return info.sha or "", [s.rfilename for s in info.siblings or []]


def _download(dataset: HubDataset, commit: str, path: str) -> Path:
    from huggingface_hub import hf_hub_download

    try:
        return Path(hf_hub_download(dataset.repo_id, path, repo_type="dataset", revision=commit or dataset.revision))
    except Exception as exc:
        raise HubGoldError(f"{dataset.repo_id}: {path} cannot be downloaded ({_short(exc)})") from None


def _read_hub_parquet(dataset: HubDataset, commit: str) -> GoldRead:
    """Through `datasets` at `commit` (listed on the Hub), or offline ("") from its cache."""
    import datasets
    from datasets.exceptions import DatasetNotFoundError

    listed = bool(commit)
    name = f"{dataset.repo_id}@{commit[:7]}" if commit else dataset.spec
    datasets.disable_progress_bars()  # a gold error is one line on stderr, not under a screen of bars and notes
    datasets.logging.set_verbosity_error()
    try:
        loaded = datasets.load_dataset(dataset.repo_id, revision=commit or dataset.revision)
    except (DatasetNotFoundError, ConnectionError) as exc:
        if not listed:  # offline: nothing cached
            raise HubGoldError(f"{dataset.repo_id}: not cached for offline use (HF_HUB_OFFLINE is set)") from None
        if isinstance(exc, DatasetNotFoundError):
            raise HubGoldError(f"{dataset.repo_id}: no such dataset on the Hub") from None
        raise HubGoldError(f"{dataset.repo_id}: the Hub cannot be reached ({_short(exc)})") from None
    except Exception as exc:  # anything else `datasets` raises about this repo
        raise GoldShapeError(f"{name}: cannot be read as a parquet dataset ({_short(exc)})") from None
    splits = {}
    for split, table in loaded.items():
        # every column named (a missing one is reported with the others), only those read are converted
        wanted = [c for c in PARQUET_COLUMNS if c in table.column_names]
        splits[split] = {**dict.fromkeys(table.column_names), **table.select_columns(wanted).to_dict()}
        commit = commit or _cache_commit(table)
    if not listed and dataset.revision and re.fullmatch(r"[0-9a-f]{40}", dataset.revision) and commit != dataset.revision:
        # offline, `datasets` reads the latest version it cached, whatever the revision asked for
        raise HubGoldError(f"{dataset.repo_id}: commit {dataset.revision[:7]} is not cached for offline use")
    name = f"{dataset.repo_id}@{commit[:7]}" if commit else dataset.spec
    questions = questions_from_splits(splits, lambda split: f"{name}: split {split}" if split else name)
    return GoldRead(questions, content_sha("parquet", questions), "parquet", dataset.spec, commit)


def _cache_commit(table) -> str:
    files = getattr(table, "cache_files", None) or [{}]
    folder = Path(files[0].get("filename", "")).parent.name  # datasets files its cache by the commit it read
    return folder if re.fullmatch(r"[0-9a-f]{40}", folder) else ""


def _read_offline(dataset: HubDataset) -> GoldRead:
    """Offline: the domain files the Hub client cached (fetched only from a repo without parquet), else the
    parquet `datasets` cached."""
    from huggingface_hub import snapshot_download

    patterns = [f"**{d}.json" for d in DOMAINS] + [f"{d}.json" for d in DOMAINS]
    try:
        folder = Path(snapshot_download(dataset.repo_id, repo_type="dataset", revision=dataset.revision, allow_patterns=patterns))
    except Exception:  # nothing cached for this revision
        folder = None
    if folder is not None and all(any(folder.rglob(f"{d}.json")) for d in DOMAINS):
        got = read_local(folder)
        return GoldRead(got.questions, got.sha256, got.form, dataset.spec, folder.name if len(folder.name) == 40 else "")
    return _read_hub_parquet(dataset, "")


# ---- the status line -------------------------------------------------------------------------------------

_STATE: dict[str, tuple[str, str]] = {}  # setting -> (label, note) once loaded or refused


def key_of(source) -> str:
    return str(source).strip()


def describe(gold) -> str:
    """What the status line says of a gold read (a GoldRead or the track's gold: form, commit, questions)."""
    n = f"{len(gold.questions):,} questions"
    return f"parquet, {n}; {NO_FACTS}" if gold.form == "parquet" else f"JSON question files, {n}"


def remember(source, gold=None, error: Exception | None = None) -> None:
    """What the status line says of a setting once read: its form and commit, or why it cannot be read."""
    if error is not None:
        _STATE[key_of(source)] = ("", f"cannot be read: {error}")
    elif gold is not None:
        dataset = hub_dataset(source)
        shown = f"{dataset.repo_id}@{gold.commit[:7]}" if dataset and gold.commit else ""
        _STATE[key_of(source)] = (shown, describe(gold))


def label(source: str) -> str:
    """A dataset id as the status line shows it: at the commit read once loaded, else as given."""
    dataset = parse_id(key_of(source))
    loaded = _STATE.get(key_of(source), ("", ""))[0]
    revision = dataset.revision or ""
    return loaded or (f"{dataset.repo_id}@{revision[:7]}" if re.fullmatch(r"[0-9a-f]{40}", revision) else dataset.spec)


def note(source: str) -> str:
    return _STATE.get(key_of(source), ("", ""))[1]


def agreement(a: list[Question], b: list[Question]) -> dict[str, int]:
    """How many questions of `a` have a question of `b` with the same text (whitespace collapsed), and of those
    how many have the same gold pages: the two forms compared (their ids differ)."""
    by_text: dict[str, list[Question]] = {}
    for q in b:
        by_text.setdefault(" ".join(q.question.split()), []).append(q)
    matched = same = ambiguous = 0
    for q in a:
        found = by_text.get(" ".join(q.question.split()), [])
        if len(found) > 1:
            ambiguous += 1
        elif found:
            matched += 1
            same += found[0].pages == q.pages
    return {"questions": len(a), "matched": matched, "same_pages": same, "ambiguous": ambiguous}


def _check_count(n: int, where: str) -> None:
    if n > MAX_QUESTIONS:
        raise GoldShapeError(f"{where}: more than {MAX_QUESTIONS:,} questions: not the UniDoc-Bench gold")


def _group(where: str, column: str, value) -> str:
    if not isinstance(value, str) or value not in QUESTION_TYPE_GROUP:
        raise GoldShapeError(
            f"{where}: {column} {str(value)[:80]!r} is not a UniDoc-Bench question type ({', '.join(QUESTION_TYPE_GROUP)})"
        )
    return QUESTION_TYPE_GROUP[value]


def _answer_type(where: str, column: str, value) -> str:
    if not isinstance(value, str) or value not in ANSWER_TYPE_NAME:
        raise GoldShapeError(
            f"{where}: {column} {str(value)[:80]!r} is not a UniDoc-Bench answer type ({', '.join(ANSWER_TYPE_NAME)})"
        )
    return ANSWER_TYPE_NAME[value]


def _short(exc: Exception) -> str:
    return (str(exc).splitlines() or [""])[0][:200] or type(exc).__name__
