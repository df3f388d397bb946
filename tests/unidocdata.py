"""The UniDoc-Bench parquet dataset as Hugging Face publishes it, made from the repository's JSON question files.

`Salesforce/UniDoc-Bench` has the features question, answer, gt_image_paths (list), question_type, answer_type,
domain, longdoc_image_paths (list). Its current layout: one split per domain (`data/<domain>-00000-of-00001.parquet`,
named in the README's `configs:` block); an earlier revision: one split `test` of every question, with the domain
column. The rows are made here from the JSON form (the real files in ../shared/benchmarks/unidoc when present,
else the bundled demo gold, which has the same shape), with gold pages read by this module's own reading of the
evidence names, not the loader's. The order differs from the JSON files' (reversed per domain; shuffled in the
`test` layout), so a question's id differs between the forms, as between the published ones.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from beirdata import parquet

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "benchmarks" / "unidoc"
DEMO = ROOT / "assets" / "demo" / "gold" / "unidoc"
DOMAINS = ("commerce_manufacturing", "construction", "crm", "education", "energy", "finance", "healthcare", "legal")
FEATURES = ("question", "answer", "gt_image_paths", "question_type", "answer_type", "domain", "longdoc_image_paths")
PER_DOMAIN = 200  # the current layout: 200 questions per domain (fewer where the JSON file has fewer)


def json_gold() -> Path:
    return REAL if REAL.exists() else DEMO


def evidence_pages(question: dict) -> list[tuple[str, int]]:
    """(doc, page) of each used evidence item, in order, each once."""
    pages: dict[tuple[str, int], None] = {}
    for item in question["chunk_used"].values():
        if not item.get("used"):
            continue
        meta = item["metadata"]
        name = meta["source"] if isinstance(meta, dict) else meta
        base = name.rsplit("/", 1)[-1]
        if base.endswith(".txt"):  # <doc>_id_<k>_pg<a>[_pg<b>].txt
            doc, rest = base[: -len(".txt")].split("_id_")
            numbers = [int(n) for n in re.findall(r"pg(\d+)", rest)]
            span = range(numbers[0], numbers[-1] + 1)
        else:  # <doc>/figure-<page>-<n>.jpg, <doc>/table-<page>-<n>.jpg
            doc = name.rsplit("/", 2)[-2]
            span = range(int(base.split("-")[1]), int(base.split("-")[1]) + 1)
        for p in span:
            pages[(doc, p)] = None
    return list(pages)


def image_path(domain: str, doc: str, page: int) -> str:
    return f"/export/mm_rag/data/final_database/{domain}_images/{doc}/{doc}_page_{page:04d}.png"


def row(domain: str, question: dict) -> dict:
    pages = evidence_pages(question)
    answer = question["complete_answer"]
    last = max(p for _, p in pages)
    return {
        "question": question["rewritten_question_obscured"],
        "answer": answer if isinstance(answer, str) else json.dumps(answer),  # the dataset's answers are all text
        "gt_image_paths": [image_path(domain, d, p) for d, p in pages],
        "question_type": question["question_type"],
        "answer_type": question["answer_type"],
        "domain": domain,
        "longdoc_image_paths": [image_path(domain, pages[0][0], p) for p in range(1, last + 2)],
    }


def rows_by_domain(folder: Path | None = None) -> dict[str, list[dict]]:
    folder = folder or json_gold()
    return {d: [row(d, q) for q in json.loads((folder / f"{d}.json").read_text(encoding="utf-8"))] for d in DOMAINS}


def columns(rows: list[dict], drop: str | None = None) -> dict[str, list]:
    return {f: [r[f] for r in rows] for f in FEATURES if f != drop}


def _readme(splits: list[str], drop: str | None = None) -> bytes:
    lines = ["---", "license: cc-by-nc-4.0", "dataset_info:", "  features:"]
    for f in (f for f in FEATURES if f != drop):
        lines += [f"  - name: {f}", "    list: string" if f.endswith("_paths") else "    dtype: string"]
    lines += ["configs:", "- config_name: default", "  data_files:"]
    for s in splits:
        lines += [f"  - split: {s}", f"    path: data/{s}-*"]
    return ("\n".join([*lines, "---", "# UNIDOC-BENCH Dataset", ""])).encode()


def domain_splits(by_domain: dict[str, list[dict]], drop: str | None = None) -> dict[str, bytes]:
    """The current layout: a split per domain, each the domain's questions in reverse order, at most 200."""
    files = {"README.md": _readme(list(DOMAINS), drop)}
    for d in DOMAINS:
        files[f"data/{d}-00000-of-00001.parquet"] = parquet(columns(by_domain[d][::-1][:PER_DOMAIN], drop))
    return files


def single_split(by_domain: dict[str, list[dict]], drop: str | None = None) -> dict[str, bytes]:
    """The earlier layout: one split `test` with every question, shuffled, and the domain column."""
    rows = [r for d in DOMAINS for r in by_domain[d]]
    random.Random(7).shuffle(rows)
    return {"README.md": _readme(["test"], drop), "data/test-00000-of-00001.parquet": parquet(columns(rows, drop))}


def write(folder: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder
