"""A toy fourth track defined entirely in tests/: exact-match QA with one judged metric (lexical judge).

It is what docs/ADDING_A_TRACK.md walks through: the declarations, a gold reader, validate / fingerprint /
score / units, and `judge_items` for the judged metric. Nothing outside this file knows it exists.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from leaderboard.judge import JudgeItem
from leaderboard.metrics.judged import completeness
from leaderboard.summarise import UnitIndex, summarise
from leaderboard.text import normalize_text
from leaderboard.tracks.base import (
    Axis,
    Chart,
    Deviation,
    Gold,
    Metric,
    Scores,
    SystemField,
    Track,
    canonical_json,
    category_codes,
    fingerprint_of,
    hash_files,
    prediction_records,
)

TOPICS = ("science", "history")
QUESTIONS = [  # (id, topic, question, answer)
    ("q1", "science", "What gas do plants take in?", "carbon dioxide"),
    ("q2", "science", "What is the boiling point of water at sea level in Celsius?", "100"),
    ("q3", "history", "Which year did the Berlin Wall fall?", "1989"),
    ("q4", "history", "Who was the first emperor of Rome?", "Augustus"),
]


def write_gold(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"id": i, "topic": t, "question": q, "answer": a} for i, t, q, a in QUESTIONS]
    (folder / "toyqa.json").write_text(json.dumps(rows), encoding="utf-8")
    return folder


def submission(name: str, answers: dict[str, str], org: str = "Toy Lab") -> bytes:
    lines = [{"track": "toyqa", "system": {"name": name, "organization": org}}]
    lines += [{"id": i, "answer": a} for i, a in answers.items()]
    return "\n".join(json.dumps(x) for x in lines).encode()


@dataclass
class ToyGold(Gold):
    rows: list[dict]


class ToyQATrack(Track):
    name = "toyqa"
    title = "Toy QA"
    description = "Exact-match question answering over four questions (a test fixture)."
    metrics = (
        Metric("exact", "Exact match", "Share of questions whose normalised answer equals the gold answer."),
        Metric("judged", "Judged completeness", "Share of the gold answer the answer states (judge).", needs_judge=True),
    )
    rank_by = "exact"
    axes = (Axis("topic", "Topic", TOPICS),)
    system_fields = (SystemField("name", "System", required=True), SystemField("organization", "Organisation"))
    charts = (Chart("by_axis", "Per topic", axis="topic"),)
    slice_axes = ("topic",)
    resampling = "questions"
    gold_folder: Path | None = None  # set by the test: where it wrote the gold

    @property
    def demo_gold(self) -> Path:
        return self.gold_folder

    def read_gold(self, path: Path) -> ToyGold:
        file = path / "toyqa.json" if path.is_dir() else path
        return ToyGold(str(path), hash_files([file]), json.loads(file.read_text(encoding="utf-8")))

    def gold_units(self, gold: ToyGold) -> int:
        return len(gold.rows)

    def validate(self, env, gold: ToyGold, problems) -> dict[str, str]:
        known = {r["id"] for r in gold.rows}
        out: dict[str, str] = {}
        for rec, where in prediction_records(env, problems):
            if rec.get("id") not in known:
                problems.error(where, f"expected a gold question id, got {rec.get('id')!r}"[:200], field="id")
            elif not isinstance(rec.get("answer"), str):
                problems.error(where, "expected a string", field="answer")
            else:
                out[rec["id"]] = rec["answer"]
        return out

    def fingerprint(self, parsed: dict[str, str]) -> str:
        return fingerprint_of(self.name, canonical_json(sorted(parsed.items())))

    def judge_items(self, parsed: dict[str, str], gold: ToyGold) -> list:
        return [
            JudgeItem(r["id"], r["question"], r["answer"], [r["answer"]], parsed[r["id"]]) for r in gold.rows if r["id"] in parsed
        ]

    # What the toy benchmark's "own script" does differently (SCORING.md, "Official scripts"), in measuring order.
    deviations = (
        Deviation(
            "casefold-answers",
            "compares the answer with the gold answer as written (only surrounding blanks stripped)",
            "compares them after NFKC, collapsing blanks and casefolding",
            "'Augustus' and 'augustus' give the same answer",
        ),
        Deviation(
            "unanswered-count",
            "leaves questions without an answer out of the mean",
            "scores them 0 and counts them",
            "skipping hard questions must not raise the score",
        ),
    )

    def score(self, parsed: dict[str, str], gold: ToyGold, verdicts: dict | None = None) -> Scores:
        return self.score_with(parsed, gold, frozenset(d.name for d in self.deviations), verdicts)

    def score_with(
        self,
        parsed: dict[str, str],
        gold: ToyGold,
        fixes: frozenset[str],
        verdicts: dict | None = None,
        *,
        headline_only: bool = False,
        work=None,
    ) -> Scores:
        if "casefold-answers" in fixes:
            exact = [float(normalize_text(parsed.get(r["id"], "")).casefold() == r["answer"].casefold()) for r in gold.rows]
        else:
            exact = [float(parsed.get(r["id"], "").strip() == r["answer"]) for r in gold.rows]
        answered = np.array([r["id"] in parsed for r in gold.rows])
        exact = np.array(exact)
        if "unanswered-count" not in fixes:  # left out of the mean (NaN: not scored)
            exact[~answered] = np.nan
        values = {"exact": exact}
        if verdicts is not None:
            judged = [completeness(verdicts[r["id"]]) if r["id"] in verdicts else 0.0 for r in gold.rows]
            values["judged"] = np.array([0.0 if v is None else v for v in judged], dtype=float)  # one protocol
        # the shared summariser: overall values, CIs, the topic breakdown and per-unit arrays from the unit index
        summary = summarise(
            self.units(gold, "exact"), values, answered, axes={"topic": category_codes([r["topic"] for r in gold.rows], TOPICS)}
        )
        return Scores(
            n=len(gold.rows),
            missing=int((~answered).sum()),
            overall=summary.overall,
            ci=summary.ci,
            breakdowns=summary.breakdowns,
            units=summary.units,
        )

    def units(self, gold: ToyGold, key: str) -> UnitIndex:
        ids = [r["id"] for r in gold.rows]
        return UnitIndex(ids, ids, [""] * len(ids))

    def unit_info(self, gold: ToyGold) -> dict:
        return {r["id"]: {"topic": r["topic"], "question": r["question"], "gold": r["answer"]} for r in gold.rows}

    def unit_of(self, record: dict) -> str | None:
        return record.get("id")

    def record_summary(self, record: dict) -> str:
        return str(record.get("answer", ""))
