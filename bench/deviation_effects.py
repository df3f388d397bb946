"""Each declared fix's effect on the headline, stepwise from the official protocol to the board's, as the
Markdown tables of docs/SCORING.md ("Official scripts").

    python bench/deviation_effects.py [futurepedia|vdr ...]

Per bundled demo run, and for futurepedia two runs made from the real gold in ../shared/benchmarks/ when it
is there (`real_gold_run`: an oracle, and a seeded run with refusals and missing units): the official value, each
fix's effect (the value with the fix and those before it minus the value with only those before it, in the
declared order) and the board's value. The effects add up to board minus official by construction.
"""

from __future__ import annotations

import json
import random
import sys
from itertools import permutations
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from leaderboard.scoring import check
from leaderboard.submission import read_file
from leaderboard.tracks import TRACKS

DEMO = ROOT / "assets" / "demo" / "submissions"
FUTUREPEDIA_GOLD = ROOT.parent / "shared" / "benchmarks" / "futurepedia" / "mul_ans_all.json"
KEYS = {"futurepedia": ("monolingual", "crosslingual_strict", "crosslingual_loose"), "vdr": ("ndcg@5",)}


LANGS = ("en", "fr", "es", "pt", "zh", "ja", "ko", "ar")
# The scripts' refusal wording in each language (eval_mono.py; es and pt have two, the first is used).
REFUSAL = {
    "zh": "信息不足",
    "en": "insufficient information",
    "ja": "十分な情報がないため",
    "fr": "informations insuffisantes",
    "ar": "المستند يحتوي على معلومات غير كافية",
    "es": "información insuficiente",
    "ko": "문서 정보가 부족하여",
    "pt": "informações insuficientes",
}


def real_gold_run(gold_file: Path, generated: bool) -> bytes:
    """The oracle (`generated` False): every prediction is the gold answer in the query's language. Else,
    seeded: per unit the answer in a sentence (70 %), a refusal in the query's language (10 %), another
    record's answer (10 %), or no record (10 %)."""
    raw = json.loads(gold_file.read_text(encoding="utf-8"))
    rng = random.Random(0)
    name = "generated (seed 0)" if generated else "oracle"
    lines = [{"track": "futurepedia", "system": {"name": name}}]

    def prediction(answer: str, q: str) -> str | None:
        if not generated:
            return answer
        draw = rng.random()
        if draw < 0.7:
            return f"According to the documents: {answer}."
        if draw < 0.8:
            return f"The documents give {REFUSAL[q]}."
        return None if draw >= 0.9 else rng.choice(raw)["ori_ans"][q]

    for g in raw:
        for q in LANGS:
            if (p := prediction(g["ori_ans"][q], q)) is not None:
                lines.append({"task": "monolingual", "id": g["id"], "query_lang": q, "prediction": p})
            answer = g["new_ans"]["en"][q]
            answer = ", ".join(answer) if isinstance(answer, list) else answer
            if (p := prediction(answer, q)) is not None:
                lines.append({"task": "selection", "id": g["id"], "query_lang": q, "doc_langs": list(LANGS), "prediction": p})
        for q, d in permutations(LANGS, 2):
            if (p := prediction(g["ori_ans"][q], q)) is not None:
                lines.append({"task": "crosslingual", "id": g["id"], "query_lang": q, "doc_lang": d, "prediction": p})
    return "\n".join(json.dumps(x, ensure_ascii=False) for x in lines).encode()


def effects(track, data: bytes, name: str, gold_source=None) -> tuple[str, dict]:
    """(system name, {key: (official, [effect per fix], board)}) for the keys the run has."""
    checked = check(data, name, {track.name: gold_source} if gold_source else None)
    if not checked.ok:
        raise SystemExit(f"{name}: {checked.errors[:3]}")
    names = [d.name for d in track.deviations]
    steps = [track.score_with(checked.parsed, checked.gold, frozenset(names[:i])) for i in range(len(names) + 1)]
    out = {}
    for key in KEYS[track.name]:
        values = [s.overall.get(key) for s in steps]
        if all(v is not None for v in values):
            out[key] = (values[0], [b - a for a, b in zip(values, values[1:])], values[-1])
    return checked.system.get("name", name), out


def table(track, rows: list[tuple[str, dict]]) -> str:
    names = [d.name for d in track.deviations]
    head = "| run | metric | official | " + " | ".join(f"`{n}`" for n in names) + " | board |"
    lines = [head, "|" + "---|" * (len(names) + 4)]
    for system, per_key in rows:
        for key, (official, steps, board) in per_key.items():
            cells = " | ".join(f"{round(e, 4) + 0.0:+.4f}" for e in steps)  # + 0.0: no "-0.0000"
            lines.append(f"| {system} | {key} | {official:.4f} | {cells} | {board:.4f} |")
    return "\n".join(lines)


def main(tracks: list[str]) -> None:
    for name in tracks:
        track = TRACKS[name]
        demo = [effects(track, read_file(p), p.name) for p in sorted((DEMO / name).iterdir())]
        print(f"### {name}: the bundled demo runs (demo gold)\n\n{table(track, demo)}\n")
        if name == "futurepedia" and FUTUREPEDIA_GOLD.exists():
            real = [effects(track, real_gold_run(FUTUREPEDIA_GOLD, g), "run.jsonl", FUTUREPEDIA_GOLD) for g in (False, True)]
            print(f"### {name}: runs made from the real gold\n\n{table(track, real)}\n")


if __name__ == "__main__":
    main(sys.argv[1:] or ["futurepedia", "vdr"])
