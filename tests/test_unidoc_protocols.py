"""UniDoc-Bench retrieval, both protocols, on runs generated over the real gold (../shared/benchmarks/unidoc).

The official protocol is checked against tests/reference/unidoc_retrieval_eval.py (what the benchmark's own
script computes, written from reading it), the board's against the revised spec's rules written out here;
every quirk of the script is in the runs: leading-zero doc ids, repeats, short, empty and two-item lists,
questions without a record, names the script cannot read.
"""

from __future__ import annotations

import json
import math
import random
import re
from statistics import mean

import numpy as np
import pytest
from reference import unidoc_retrieval_eval as ref

from leaderboard import protocols
from leaderboard.scoring import check
from leaderboard.tracks import TRACKS
from leaderboard.tracks.unidoc import BOARD, DOMAINS, gold_pages, script_gold_pages, script_reading

from conftest import UNIDOC_GOLD, needs_unidoc

TRACK = TRACKS["unidoc"]


def raw_gold() -> list[tuple[str, str, dict]]:
    """(question id, domain, published question) of every question, in the gold's order."""
    out = []
    for domain in DOMAINS:
        for i, q in enumerate(json.loads((UNIDOC_GOLD / f"{domain}.json").read_text(encoding="utf-8"))):
            out.append((f"{domain}-{i:04d}", domain, q))
    return out


def used_sources(q: dict) -> list[tuple[str, bool]]:
    """(source path, is a text chunk) of the used evidence items."""
    out = []
    for item in q["chunk_used"].values():
        if item["used"]:
            meta = item["metadata"]
            out.append((meta["source"], True) if isinstance(meta, dict) else (meta, False))
    return out


def spec_gold_pages(q: dict) -> set[tuple[str, int]]:
    """The spec's gold pages, doc ids as published: a chunk's pages a..b, a figure's or table's page."""
    pages = set()
    for source, text in used_sources(q):
        name = source.split("/")[-1]
        if text:
            doc, rest = name.split("_id_")
            numbers = [int(x) for x in re.findall(r"pg(\d+)", rest)]
            pages.update((doc, p) for p in range(numbers[0], numbers[-1] + 1))
        else:
            pages.add((source.split("/")[-2], int(name.split("-")[1])))
    return pages


# ---- generated runs ---------------------------------------------------------------------------
def _chunk(doc: str, a: int, b: int | None, k: int) -> str:
    return f"{doc}_id_{k}_pg{a}" + (f"_pg{b}" if b is not None else "") + ".txt"


def _candidate(rng: random.Random, q: dict, docs: list[str], earlier: list[dict]) -> tuple[dict, str]:
    """One candidate (the record's) and the name the script would be given for it."""
    sources = used_sources(q)
    pages = sorted(spec_gold_pages(q))
    doc = pages[0][0]
    kind = rng.choices(
        ["gold_text", "gold_page", "near", "other_doc", "repeat", "twin", "figure", "page_png", "three_pg", "no_id"],
        [4, 4, 3, 2, 2, 2, 1, 1, 1, 2],
    )[0]
    if kind == "repeat" and earlier:
        c = dict(rng.choice(earlier))
        return c, c.get("id") or _chunk(c["doc"], c["pages"][0], c["pages"][-1], 0)
    if kind == "twin" and any(c.get("modality") == "text" and "id" in c for c in earlier):
        c = dict(rng.choice([c for c in earlier if c.get("modality") == "text" and "id" in c]))
        c["id"] = c["id"].replace("_id_", f"_id_{rng.randint(100, 999)}")  # another chunk of the same pages
        return c, c["id"]
    texts = [s for s, text in sources if text]
    if kind == "gold_text" and texts:
        name = rng.choice(texts).split("/")[-1]
        numbers = [int(x) for x in re.findall(r"pg(\d+)", name)]
        return {"doc": name.split("_")[0], "pages": [numbers[0], numbers[-1]], "modality": "text", "id": name}, name
    if kind in ("gold_page", "gold_text"):
        d, p = rng.choice(pages)
        name = f"{d}_{p}.jpg"
        return {"doc": d, "pages": [p], "modality": "image", "id": name}, name
    if kind == "other_doc":
        doc = rng.choice(docs)
    p = rng.randint(1, 30)
    if kind == "figure":
        name = f"{doc}/figure-{p}-{rng.randint(1, 4)}.jpg"
        return {"doc": doc, "pages": [p], "modality": "image", "id": name}, name
    if kind == "page_png":
        name = f"{doc}_page_{p:04d}.png"
        return {"doc": doc, "pages": [p], "modality": "image", "id": name}, name
    if kind == "three_pg":
        name = f"{doc}_id_{rng.randint(0, 50)}_pg{p}_pg{p + 1}_pg{p + 2}.txt"
        return {"doc": doc, "pages": [p, p + 2], "modality": "text", "id": name}, name
    b = p + rng.choice([0, 0, 1, 2])
    if kind == "no_id":  # the script would be given the chunk's name, which says the same doc and pages
        return {"doc": doc, "pages": [p, b], "modality": "text"}, _chunk(doc, p, b, 0)
    name = _chunk(doc, p, b if b != p else None, rng.randint(0, 50))
    return {"doc": doc, "pages": [p, b], "modality": "text", "id": name}, name


def generated_run(seed: int, questions) -> tuple[bytes, dict[str, list]]:
    """(a JSONL submission, {question id: what the script's input holds for it}); absent questions absent."""
    rng = random.Random(seed)
    docs = sorted({d for _, _, q in questions for d, _ in spec_gold_pages(q)})
    lines = [json.dumps({"track": "unidoc", "system": {"name": f"run {seed}", "paradigm": "mm-fusion"}})]
    script_input = {}
    for qid, _, q in questions:
        if rng.random() < 0.08:
            continue
        length = rng.choice([0, 0, 1, 2, 2, 3, 5, 9, 10, 10, 10, 10, 12, 14])
        cands, names = [], []
        for _ in range(length):
            c, name = _candidate(rng, q, docs, cands)
            cands.append(c)
            names.append(name)
        if length >= 2 and rng.random() < 0.3:  # a fusion system's [texts, images]: the script joins the two
            cut = rng.randint(0, length)
            names = [names[:cut], names[cut:]]
        script_input[qid] = names
        lines.append(json.dumps({"id": qid, "retrieved": cands}))
    return "\n".join(lines).encode() + b"\n", script_input


def _board_question(cands: list[dict], pages: set, k: int = 10) -> tuple[float, float]:
    """The revised spec's rules, written out: walk the first 10; a candidate the same as an earlier one is a
    miss; any other is a hit when it shares a gold page of its doc and covers those not covered yet."""

    def same(a: dict, b: dict) -> bool:
        if "id" in a and "id" in b:
            return a["id"] == b["id"]
        return (a["doc"], a["pages"][0], a["pages"][-1], a.get("modality")) == (
            b["doc"],
            b["pages"][0],
            b["pages"][-1],
            b.get("modality"),
        )

    top = cands[:k]
    hits, covered = 0, set()
    for i, c in enumerate(top):
        if any(same(c, e) for e in top[:i]):
            continue
        shared = {(d, p) for d, p in pages if d == c["doc"] and c["pages"][0] <= p <= c["pages"][-1]}
        hits += bool(shared)
        covered |= shared
    return hits / k, len(covered) / len(pages)


@pytest.fixture(scope="module")
def real():
    if not UNIDOC_GOLD.is_dir():
        pytest.skip(f"real UniDoc-Bench gold not found at {UNIDOC_GOLD} (see ../shared/benchmarks/README.md)")
    return raw_gold(), TRACK.load_gold(UNIDOC_GOLD)


def _scored(data: bytes):
    checked = check(data, "run.jsonl", {"unidoc": str(UNIDOC_GOLD)})
    assert checked.ok, checked.errors[:5]
    return checked


SEEDS = range(6)


@needs_unidoc
@pytest.mark.parametrize("seed", SEEDS)
def test_official_protocol_is_what_the_script_computes(seed, real):
    questions, gold = real
    data, script_input = generated_run(seed, questions)
    checked = _scored(data)
    official = TRACK.score_with(checked.parsed, checked.gold, frozenset())
    by_domain: dict[str, list] = {d: [] for d in DOMAINS}
    for qid, domain, q in questions:
        i = gold.index[qid]
        want = (
            ref.question_scores(script_input[qid], ref.gold_keys(q["chunk_used"]), unreadable="miss")
            if qid in script_input
            else None
        )
        got = (official.units["precision@10"][i], official.units["recall@10"][i])
        if want is None:
            assert math.isnan(got[0]) and math.isnan(got[1]), qid
        else:
            assert got == pytest.approx(want, abs=1e-12), qid
        if qid in script_input:
            by_domain[domain].append((script_input[qid], q["chunk_used"]))
    expected = ref.evaluate(by_domain, unreadable="miss")
    for domain in DOMAINS:
        cell = official.breakdowns["domain"][domain]
        assert cell["precision@10"] == pytest.approx(expected[domain]["precision"], abs=1e-12)
        assert cell["recall@10"] == pytest.approx(expected[domain]["recall"], abs=1e-12)
    assert official.overall["precision@10"] == pytest.approx(expected["avg"]["precision"], abs=1e-12)
    assert official.overall["recall@10"] == pytest.approx(expected["avg"]["recall"], abs=1e-12)
    assert official.n == sum(v["length"] for d, v in expected.items() if d != "avg")
    notes = " ".join(official.extra["notes"])
    assert "cannot read" in notes and "left out" in notes and "exactly two" in notes


@needs_unidoc
@pytest.mark.parametrize("seed", SEEDS)
def test_board_protocol_follows_the_revised_spec(seed, real):
    questions, gold = real
    data, _ = generated_run(seed, questions)
    checked = _scored(data)
    assert any("repeated candidate" in w for w in checked.warnings)  # warned, accepted
    board = TRACK.score(checked.parsed, checked.gold)
    records = {json.loads(line)["id"]: json.loads(line)["retrieved"] for line in data.splitlines()[1:]}
    per_domain: dict[str, list] = {d: [] for d in DOMAINS}
    for qid, domain, q in questions:
        want = _board_question(records[qid], spec_gold_pages(q)) if qid in records else (0.0, 0.0)
        i = gold.index[qid]
        got = (board.units["precision@10"][i], board.units["recall@10"][i])
        if qid in records:
            assert got == pytest.approx(want, abs=1e-12), qid
        else:
            assert math.isnan(got[0])  # no record: scored 0 in the means, NaN in the per-unit view
        per_domain[domain].append(want)
    assert board.overall["precision@10"] == pytest.approx(mean(mean(p for p, _ in v) for v in per_domain.values()))
    assert board.overall["recall@10"] == pytest.approx(mean(mean(r for _, r in v) for v in per_domain.values()))
    assert board.missing == len(questions) - len(records) and board.n == len(questions)


@needs_unidoc
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_deviation_effects_add_up_to_board_minus_official(seed, real):
    questions, _ = real
    checked = _scored(generated_run(seed, questions)[0])
    board = TRACK.score(checked.parsed, checked.gold)
    assert TRACK.score_with(checked.parsed, checked.gold, BOARD).overall == board.overall
    official, deviations = protocols.official_report(TRACK, checked.parsed, checked.gold, board)
    assert (
        [d["name"] for d in deviations]
        == [d.name for d in TRACK.deviations]
        == [
            "doc-ids-as-published",
            "repeats-count-once",
            "precision-over-10",
            "unanswered-count",
        ]
    )
    for key in ("precision@10", "recall@10"):
        total = sum(d["effect"][key] for d in deviations)
        assert total == pytest.approx(board.overall[key] - official.overall[key], abs=1e-12)
    # each step is the headline with that fix and the ones before it, minus the one without it
    applied: list[str] = []
    before = official.overall
    for dev in deviations:
        applied.append(dev["name"])
        after = TRACK.score_with(checked.parsed, checked.gold, frozenset(applied)).overall
        assert dev["effect"]["precision@10"] == pytest.approx(after["precision@10"] - before["precision@10"], abs=1e-12)
        before = after
    effects = {d["name"]: d["effect"] for d in deviations}
    assert effects["repeats-count-once"]["precision@10"] < 0  # the runs repeat candidates
    assert effects["precision-over-10"]["precision@10"] < 0  # and have short lists
    assert effects["unanswered-count"]["recall@10"] < 0  # and skip questions


@needs_unidoc
def test_leading_zero_documents_never_match_text_candidates_in_the_script(real):
    questions, gold = real
    zero_docs = {
        d
        for _, _, q in questions
        for s, _ in used_sources(q)
        for d in [s.split("/")[-1].split("_")[0] if s.endswith(".txt") else s.split("/")[-2]]
        if d.startswith("0")
    }
    assert len(zero_docs) == 125
    affected = [q for q in gold.questions if gold_pages(q) != script_gold_pages(q)]
    assert len(affected) == 142
    # a run that returns exactly each affected question's gold text chunks
    lines = [json.dumps({"track": "unidoc", "system": {"name": "chunks", "paradigm": "text"}})]
    for qid, _, q in questions:
        if gold.questions[gold.index[qid]] in affected:
            names = [s.split("/")[-1] for s, text in used_sources(q) if text]
            retrieved = []
            for name in names:
                n = [int(x) for x in re.findall(r"pg(\d+)", name)]
                retrieved.append({"doc": name.split("_")[0], "pages": [n[0], n[-1]], "modality": "text", "id": name})
            lines.append(json.dumps({"id": qid, "retrieved": retrieved}))
    checked = _scored("\n".join(lines).encode() + b"\n")
    official = TRACK.score_with(checked.parsed, checked.gold, frozenset())
    fixed = TRACK.score_with(checked.parsed, checked.gold, frozenset({"doc-ids-as-published"}))
    rows = [gold.index[q.qid] for q in affected]
    assert np.all(fixed.units["precision@10"][rows] == 1)  # every one is a gold chunk
    # in the script, a text chunk of such a document matches only a page that a figure or table also gives
    text_only = [gold.index[q.qid] for q in affected if all(s.endswith(".txt") for s in q.used_sources)]
    assert len(text_only) > 20 and np.all(official.units["precision@10"][text_only] == 0)
    assert np.nanmean(official.units["precision@10"][rows]) < 0.7


@needs_unidoc
def test_two_chunks_of_one_page_are_two_hits_with_ids_and_a_repeat_without(real):
    _, gold = real
    q = gold.questions[gold.index["finance-0000"]]
    (doc, page), *_ = sorted(gold_pages(q))
    two = [{"doc": doc, "pages": [page], "modality": "text", "id": f"{doc}_id_{k}_pg{page}.txt"} for k in (3, 4)]
    for cands, hits in ((two, 2), ([{k: v for k, v in c.items() if k != "id"} for c in two], 1)):
        head = json.dumps({"track": "unidoc", "system": {"name": "two", "paradigm": "text"}})
        checked = _scored(f"{head}\n{json.dumps({'id': q.qid, 'retrieved': cands})}\n".encode())
        i = gold.index[q.qid]
        assert TRACK.score(checked.parsed, checked.gold).units["precision@10"][i] == pytest.approx(hits / 10)
        assert TRACK.score_with(checked.parsed, checked.gold, frozenset()).units["precision@10"][i] == 1.0  # copies count
        assert any("repeated" in w for w in checked.warnings) == (hits == 1)


def test_the_script_reference_stops_where_the_script_does():
    keys = ref.gold_keys({"c": {"used": True, "metadata": {"source": "/x/0123_id_1_pg5_pg6.txt"}}})
    assert keys == {"123_5", "123_6"}  # leading zero dropped
    for name in ("0123/figure-5-1.jpg", "0123_page_0005.png", "0123_id_1_pg5_pg6_pg7.txt", "nothing"):
        with pytest.raises(ref.Unreadable):
            ref.question_scores([name], keys)
        assert script_reading(name) is None
    assert ref.question_scores(["0123_id_1_pg5.txt", "123_5.jpg", "123_5.jpg"], keys) == (2 / 3, 0.5)
    assert script_reading("123_5.jpg") == ("123", 5, 5)
    assert script_reading("/a/0123_id_1_pg5_pg6.txt") == ("0123", 5, 6)
    assert script_reading("x_id_1_pg7_pg5.txt") == ("x", 7, 5)  # a range that runs backwards: no page
    assert ref.question_scores([], keys) is None
    assert ref.question_scores([["123_5.jpg"], ["123_6.jpg"]], keys) == (1.0, 1.0)  # a fusion pair, joined
