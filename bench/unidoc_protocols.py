"""UniDoc-Bench: the official script's numbers, each of the board's fixes and the board's, on the bundled demo runs
and on two runs made from the real gold (the table in docs/SCORING.md, "unidoc: the fixes measured").

    python bench/unidoc_protocols.py [--gold ../shared/benchmarks/unidoc]

Real-gold runs (built here, seeded, with candidate ids = the benchmark's own file names):
- evidence: each question's used evidence items and nothing else (text chunks by their file names, figures
  and tables as the page images `<doc>_<page>.jpg`), a perfect retriever with short lists;
- noisy: ten candidates per question, each gold item kept with chance 0.6, the rest other chunks of the
  same document, one list in 20 with a repeated candidate, 3% empty lists and 5% questions skipped.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from leaderboard import protocols
from leaderboard.scoring import check, content_hash, score_checked
from leaderboard.tracks import TRACKS
from leaderboard.tracks.unidoc import context_of

TRACK = TRACKS["unidoc"]
KEYS = ("precision@10", "recall@10")


def _name_of(source: str) -> tuple[dict, str]:
    doc, first, last = context_of(source)
    if source.endswith(".txt"):
        name = source.rsplit("/", 1)[-1]
        return {"doc": name.split("_id_")[0], "pages": [first, last], "modality": "text", "id": name}, name
    name = f"{doc}_{first}.jpg"
    return {"doc": doc, "pages": [first], "modality": "image", "id": name}, name


def evidence_run(gold) -> bytes:
    lines = [json.dumps({"track": "unidoc", "system": {"name": "gold evidence", "paradigm": "mm-fusion"}})]
    for q in gold.questions:
        lines.append(json.dumps({"id": q.qid, "retrieved": [_name_of(s)[0] for s in q.used_sources]}))
    return "\n".join(lines).encode() + b"\n"


def noisy_run(gold, seed: int = 0) -> bytes:
    rng = random.Random(seed)
    lines = [json.dumps({"track": "unidoc", "system": {"name": "noisy", "paradigm": "mm-fusion"}})]
    for q in gold.questions:
        if rng.random() < 0.05:
            continue
        if rng.random() < 0.03:
            lines.append(json.dumps({"id": q.qid, "retrieved": []}))
            continue
        cands = [_name_of(s)[0] for s in q.used_sources if rng.random() < 0.6]
        doc = q.contexts[0][0]
        while len(cands) < 10:
            p = rng.randint(1, 40)
            name = f"{doc}_id_{rng.randint(0, 99)}_pg{p}.txt"
            cands.append({"doc": doc, "pages": [p], "modality": "text", "id": name})
        rng.shuffle(cands)
        if rng.random() < 0.05:
            cands.insert(1, dict(cands[0]))
        lines.append(json.dumps({"id": q.qid, "retrieved": cands[:10]}))
    return "\n".join(lines).encode() + b"\n"


def row(name: str, data: bytes, gold_source, filename: str = "run.jsonl") -> str:
    checked = check(data, filename, {"unidoc": gold_source} if gold_source else None)
    assert checked.ok, checked.errors[:3]
    board = score_checked(checked, content_hash(data)).summary
    official, devs = protocols.official_report(TRACK, checked.parsed, checked.gold, board)
    cells = [" / ".join(f"{official.overall[k]:.3f}" for k in KEYS)]
    cells += [" / ".join(f"{d['effect'][k]:+.3f}" for k in KEYS) for d in devs]
    cells.append(" / ".join(f"{board.overall[k]:.3f}" for k in KEYS))
    return f"| {name} | " + " | ".join(cells) + " |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gold", default=str(ROOT.parent / "shared" / "benchmarks" / "unidoc"))
    args = ap.parse_args()
    head = ["run (P@10 / R@10)", "official script", *(f"`{d.name}`" for d in TRACK.deviations), "board"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for path in sorted((ROOT / "assets" / "demo" / "submissions" / "unidoc").glob("*.json*")):
        if ".meta" not in path.name:
            print(row(f"demo `{path.name}`", path.read_bytes(), None, path.name))
    if Path(args.gold).is_dir():
        gold = TRACK.load_gold(args.gold)
        print(row("real gold: evidence", evidence_run(gold), args.gold))
        print(row("real gold: noisy", noisy_run(gold), args.gold))
    else:
        print(f"(no real gold at {args.gold}: the real-gold runs are left out)")


if __name__ == "__main__":
    main()
