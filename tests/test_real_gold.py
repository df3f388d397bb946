"""Loaders on the real published gold files, with the counts of ../shared/benchmarks/README.md."""

from __future__ import annotations

import json
from collections import Counter
from itertools import permutations

import pytest

from leaderboard.scoring import score_bytes
from leaderboard.tracks import TRACKS
from leaderboard.tracks.futurepedia import LANGS
from leaderboard.tracks.unidoc import context_of, flatten_answer

from conftest import FUTUREPEDIA_GOLD, UNIDOC_GOLD, needs_futurepedia, needs_unidoc


@needs_unidoc
def test_unidoc_gold_counts():
    gold = TRACKS["unidoc"].load_gold(UNIDOC_GOLD)
    qs = gold.questions
    assert len(qs) == 1742
    assert Counter(q.domain for q in qs) == {
        "commerce_manufacturing": 184,
        "construction": 295,
        "crm": 255,
        "education": 224,
        "energy": 120,
        "finance": 208,
        "healthcare": 232,
        "legal": 224,
    }
    assert Counter(q.answer_type for q in qs) == {
        "text_only": 436,
        "image_only": 435,
        "text_plus_image": 436,
        "table_required": 435,
    }
    # published types folded into four groups: comparison = 398 + 26 + 1, causal -> logical
    assert Counter(q.question_type for q in qs) == {
        "factual_retrieval": 790,
        "comparison": 425,
        "logical_reasoning": 269,
        "summarization": 258,
    }
    assert all(1 <= len(q.contexts) <= 6 and q.evidence_facts for q in qs)
    assert all(len({c[0] for c in q.contexts}) == 1 for q in qs)  # one document per question
    assert qs[gold.index["finance-0000"]].contexts == [("4751111", 5, 5)]
    raw_questions = {q.qid: q for q in qs}
    for qid in ("education-0104", "healthcare-0060"):  # the two JSON-object answers
        assert ": " in raw_questions[qid].answer and not raw_questions[qid].answer.startswith("{")


def test_context_paths():
    assert context_of("/x/finance_database/4751111_id_4_pg5.txt") == ("4751111", 5, 5)
    assert context_of("/x/crm_database/2676341_id_6_pg12_pg14.txt") == ("2676341", 12, 14)
    assert context_of("/x/healthcare_figures/6546916/table-13-2.jpg") == ("6546916", 13, 13)
    assert context_of("/x/finance_figures/4751111/figure-5-5.jpg") == ("4751111", 5, 5)
    assert flatten_answer({"a": {"b": 1}, "c": [2, "x"]}) == "a.b: 1\nc[0]: 2\nc[1]: x"


@needs_unidoc
def test_perfect_unidoc_submission_from_gold_contexts_has_recall_one():
    gold = TRACKS["unidoc"].load_gold(UNIDOC_GOLD)
    lines = [json.dumps({"track": "unidoc", "system": {"name": "oracle", "paradigm": "mm-fusion"}})]
    lines += [
        json.dumps({"id": q.qid, "question": q.question, "retrieved": [{"doc": d, "pages": [a, b]} for d, a, b in q.contexts]})
        for q in gold.questions
    ]
    result = score_bytes("\n".join(lines).encode(), "oracle.jsonl", {"unidoc": UNIDOC_GOLD}).summary
    assert result.status == "scored", result.errors
    assert result.overall["recall@10"] == 1.0 and result.missing == 0 and result.n == 1742
    assert "completeness" not in result.overall  # not judged, never a made-up number
    assert set(result.breakdowns) == {"domain", "question_type", "answer_type"}
    assert all(v["recall@10"] == 1.0 for v in result.breakdowns["domain"].values())
    # precision of the oracle: contexts per question / 10, the headline the mean of the 8 domain means
    per_domain = {}
    for q in gold.questions:
        per_domain.setdefault(q.domain, []).append(len(q.contexts) / 10)
    expected_p = sum(sum(v) / len(v) for v in per_domain.values()) / 8
    assert result.overall["precision@10"] == pytest.approx(expected_p)


@needs_futurepedia
def test_futurepedia_gold_counts_and_oracle():
    gold = TRACKS["futurepedia"].load_gold(FUTUREPEDIA_GOLD)
    assert len(gold.records) == 197
    assert all(set(r.ori) == set(LANGS) for r in gold.records)
    raw = json.loads(FUTUREPEDIA_GOLD.read_text(encoding="utf-8"))
    multi = sum(1 for r in raw for q in LANGS if ", " in r["ori_ans"][q])
    assert multi == 320
    assert sum(1 for r in raw if any(isinstance(v, list) for d in r["new_ans"].values() for v in d.values())) == 40
    lines = [json.dumps({"track": "futurepedia", "system": {"name": "oracle"}})]
    for r in raw:
        for q in LANGS:
            lines.append(
                json.dumps(
                    {"task": "monolingual", "id": r["id"], "query_lang": q, "prediction": r["ori_ans"][q]}, ensure_ascii=False
                )
            )
        for q, d in permutations(LANGS, 2):
            lines.append(
                json.dumps(
                    {"task": "crosslingual", "id": r["id"], "query_lang": q, "doc_lang": d, "prediction": r["ori_ans"][d]},
                    ensure_ascii=False,
                )
            )
    result = score_bytes("\n".join(lines).encode(), "o.jsonl", {"futurepedia": FUTUREPEDIA_GOLD}).summary
    assert result.status == "scored", result.errors
    assert result.overall["monolingual"] == 1.0  # short CJK answers included, thanks to the short rule
    assert result.overall["crosslingual_loose"] == 1.0 > result.overall["crosslingual_strict"]
    assert result.n == 197 * 8 + 197 * 56 and result.missing == 0
    assert len(result.breakdowns["language_pair"]) == 56
    assert result.overall["monolingual_var"] == 0.0
