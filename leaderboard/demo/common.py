"""What every track's demo generator shares: seeding, file writing, the submission envelope, the vocabularies.

Nothing here knows a track. Seeds are strings hashed by `random.Random` (SHA-512)
or SHA-256 (numpy), so one seed gives byte-identical files on every machine and
whatever PYTHONHASHSEED is.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# The generators' vocabularies and demo systems, as data (one JSON file per track); changing one changes the demo.
VOCAB_DIR = Path(__file__).resolve().parents[2] / "assets" / "demo" / "vocab"


def vocab(name: str) -> dict:
    """The tables of one generator from VOCAB_DIR/<name>.json, every list as a tuple (the tables are constants,
    and the profiles' tuple fields compare and hash like the code's)."""
    return _tuples(json.loads((VOCAB_DIR / f"{name}.json").read_text(encoding="utf-8")))


def _tuples(value):
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value


# Made-up systems of the bench submissions (unidoc and futurepedia draw from the same names).
RETRIEVERS = (
    "BGE-M3",
    "E5-large-v2",
    "colpali-v1.3",
    "colqwen2-v1.0",
    "GME-Qwen2-VL-7B",
    "jina-clip-v2",
    "BM25",
    "VisRAG-Ret",
    "nomic-embed-multimodal",
)
GENERATORS = (
    "gpt-4o",
    "gpt-4o-mini",
    "Qwen2.5-VL-7B-Instruct",
    "Qwen2.5-7B-Instruct",
    "Llama-3.1-8B-Instruct",
    "MiniCPM-V-2.6",
    "InternVL2.5-8B",
    "Gemma-2-9B-it",
)

Submission = tuple[str, bytes]  # (file name, file bytes)


@dataclass(frozen=True)
class DemoGenerator:
    """One track's demo data: what `leaderboard.demo` looks up by track name.

    make_gold(out_dir, seed, size) writes gold of size "demo" (the bundled one) or
    "bench" (published sizes) and returns what `--gold` takes. demo_submissions(gold,
    seed) makes the bundled demo systems. bench_submissions(gold, exts, rng, seed,
    **options) makes one synthetic submission per entry of `exts` (the file
    extension of each), drawing the systems from `rng`; `options` names the keyword
    arguments of `make_submissions` this track accepts. `benchmark` (the published
    benchmark's name) and `gold_layout` (one line on the gold files) go into the
    demo's README.md.
    """

    track: str
    make_gold: Callable[[Path, int, str], Path]
    demo_submissions: Callable[[Path, int], list[Submission]]
    bench_submissions: Callable[..., list[Submission]]
    benchmark: str
    gold_layout: str
    options: frozenset[str] = frozenset()


def _key(seed: int, parts: tuple) -> str:
    return "/".join(map(str, (seed, *parts)))


def rng_for(seed: int, *parts) -> random.Random:
    # String seeds go through SHA-512, so they do not depend on PYTHONHASHSEED.
    return random.Random(_key(seed, parts))


def np_rng_for(seed: int, *parts) -> np.random.Generator:
    digest = hashlib.sha256(_key(seed, parts).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def gold_json(obj) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, indent=2) + "\n").encode()


def submission_bytes(track: str, system: dict, predictions: list[dict], ext: str) -> bytes:
    """The file in the envelope for `ext` (.json, .jsonl, .jsonl.gz); one prediction per line either way."""
    if ext == ".json":
        text = (
            f'{{"track":{_dumps(track)},"system":{_dumps(system)},"predictions":[\n'
            + ",\n".join(map(_dumps, predictions))
            + "\n]}\n"
        )
    else:
        text = "\n".join([_dumps({"track": track, "system": system}), *map(_dumps, predictions)]) + "\n"
    data = text.encode()
    # mtime=0 keeps the gzip header, hence the file, byte-identical across runs.
    return gzip.compress(data, compresslevel=9, mtime=0) if ext.endswith(".gz") else data


def write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def link(slug: str) -> str:
    return f"https://example.org/rag-systems/{slug}"
