"""Futurepedia's official protocol (SCORING.md, "Official scripts") against tests/reference/nale_eval.py, a
plain rewrite of what eval_mono.py / eval_cross.py / eval_multi.py compute, on generated runs over the real
gold: refusals in each wording, short answers, Hangul, punctuation, multi-part answers, missing units, the
loose per-part maximum. Each of the board's six fixes switches on alone; all six are `score` exactly."""

from __future__ import annotations

import json
import random
from itertools import combinations, permutations

import numpy as np
import pytest
from reference import nale_eval as ref

from leaderboard.scoring import check
from leaderboard.tracks import TRACKS
from leaderboard.tracks.futurepedia import FIXES, LANGS
from leaderboard.tracks.futurepedia_official import score_official

from conftest import FUTUREPEDIA_GOLD, needs_futurepedia

TRACK = TRACKS["futurepedia"]
KEYS = ("monolingual", "crosslingual_strict", "crosslingual_loose")
pytestmark = needs_futurepedia


@pytest.fixture(scope="module")
def raw() -> list[dict]:
    return json.loads(FUTUREPEDIA_GOLD.read_text(encoding="utf-8"))


def _checked(records: list[dict]):
    lines = [json.dumps({"track": "futurepedia", "system": {"name": "generated"}})]
    lines += [json.dumps(r, ensure_ascii=False) for r in records]
    checked = check("\n".join(lines).encode(), "run.jsonl", {"futurepedia": FUTUREPEDIA_GOLD})
    assert checked.ok, checked.errors[:5]
    return checked.parsed, checked.gold


def _prediction(rng: random.Random, answer: str, other: str) -> str:
    """A prediction exercising one of the scripts' quirks."""
    kind = rng.randrange(14)
    parts = answer.split(", ")
    if kind == 0:
        return answer
    if kind == 1:
        return f"The answer is {answer}."
    if kind == 2:
        return rng.choice(ref.REFUSALS) + "."  # each wording, scored -1 officially
    if kind == 3:
        return f"Based on the documents, {rng.choice(ref.REFUSALS)}: {answer}"  # a refusal naming the answer
    if kind == 4:
        return "Insufficient information in the documents."  # capitalised: escapes the script's check
    if kind == 5:
        return parts[0]  # one part of a multi-part answer, alone (single tokens get the script's normalisation)
    if kind == 6:
        return other  # the other language's answer (loose)
    if kind == 7:
        return f"{parts[-1]}; {other}"  # the last part, then the other language's answer
    if kind == 8:
        return answer.upper().replace(", ", " ,  ")  # case, spacing and punctuation
    if kind == 9:
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in answer)  # full-width (NFKC/NFKD)
    if kind == 10:
        return answer[:2]  # a prediction under 3 characters
    if kind == 11:
        return ""
    if kind == 12:
        return f"{answer} {answer}"
    return "no idea"


def _run(raw: list[dict], seed: int, records: int, drop: float) -> list[dict]:
    """Monolingual, cross-lingual and selection records over the first `records` gold records; each unit
    left out with probability `drop`, and one whole language (monolingual) and language pair left out."""
    rng = random.Random(seed)
    out = []
    for g in raw[:records]:
        ori = g["ori_ans"]
        for q in LANGS:
            if q != "pt" and rng.random() >= drop:
                other = ori[rng.choice([x for x in LANGS if x != q])]
                out.append({"task": "monolingual", "id": g["id"], "query_lang": q, "prediction": _prediction(rng, ori[q], other)})
        for q, d in permutations(LANGS, 2):
            if (q, d) != ("ko", "en") and rng.random() >= drop:
                pred = _prediction(rng, ori[q], ori[d])
                out.append({"task": "crosslingual", "id": g["id"], "query_lang": q, "doc_lang": d, "prediction": pred})
        for q in LANGS:
            if rng.random() >= drop:
                docs = rng.sample(LANGS, rng.randint(2, 8))
                chosen = g["new_ans"][rng.choice(docs)][rng.choice(LANGS)]
                chosen = ", ".join(chosen) if isinstance(chosen, list) else chosen
                kind = rng.randrange(4)
                pred = (chosen, f"It is {chosen}.", rng.choice(ref.REFUSALS), ori[q])[kind]
                out.append({"task": "selection", "id": g["id"], "query_lang": q, "doc_langs": docs, "prediction": pred})
    return out


def _assert_matches(scores, expected: dict) -> None:
    for key in KEYS:
        assert scores.overall[key] == pytest.approx(expected[key], abs=1e-12), key
        for q, cell in expected["language"].items():
            assert (key in cell) == (key in scores.breakdowns["language"][q]), (key, q)
            if key in cell:
                assert scores.breakdowns["language"][q][key] == pytest.approx(cell[key], abs=1e-12), (key, q)
        for pair, cell in expected["language_pair"].items() if key != "monolingual" else ():
            assert scores.breakdowns["language_pair"][pair][key] == pytest.approx(cell[key], abs=1e-12), (key, pair)
    assert set(scores.breakdowns["language"]) == set(expected["language"])
    assert set(scores.breakdowns["language_pair"]) == set(expected["language_pair"])
    cells = scores.breakdowns["doc_language"]
    assert {d: c["selection_recall"] for d, c in cells.items()} == pytest.approx(expected["doc_language"], abs=1e-12)


def test_official_protocol_equals_the_scripts_on_generated_runs(raw):
    for seed in range(3):
        records = _run(raw, seed, len(raw), drop=0.1)
        parsed, gold = _checked(records)
        scores = TRACK.score_with(parsed, gold, frozenset())
        _assert_matches(scores, ref.scores(records, raw))
        assert "selection_entropy" not in scores.overall  # the scripts compute no entropy
        assert set(scores.ci) == set(KEYS)
        assert "pt" not in scores.breakdowns["language"] or "monolingual" not in scores.breakdowns["language"]["pt"]
        assert "ko-en" not in scores.breakdowns["language_pair"]  # a pair without records is left out


def test_every_combination_of_fixes_equals_the_reference(raw):
    """Each fix alone and with any others (64 combinations), on a smaller run; all six are the board's."""
    records = _run(raw, 7, 40, drop=0.15)
    parsed, gold = _checked(records)
    board = TRACK.score(parsed, gold)
    for size in range(len(FIXES) + 1):
        for fixes in combinations(FIXES, size):
            expected = ref.scores(records, raw, frozenset(fixes))
            if size == len(FIXES):
                for key in KEYS:
                    assert board.overall[key] == pytest.approx(expected[key], abs=1e-12)
                    for q in LANGS:
                        assert board.breakdowns["language"][q][key] == pytest.approx(expected["language"][q][key], abs=1e-12)
                continue
            _assert_matches(TRACK.score_with(parsed, gold, frozenset(fixes)), expected)


def test_all_fixes_are_the_board_exactly(raw):
    records = _run(raw, 3, len(raw), drop=0.05)
    parsed, gold = _checked(records)
    board = TRACK.score(parsed, gold)
    again = TRACK.score_with(parsed, gold, frozenset(FIXES))
    assert (again.n, again.missing, again.overall, again.ci, again.breakdowns, again.extra) == (
        board.n,
        board.missing,
        board.overall,
        board.ci,
        board.breakdowns,
        board.extra,
    )
    assert again.units.keys() == board.units.keys()
    assert all(np.array_equal(again.units[k], board.units[k], equal_nan=True) for k in board.units)
    # the general path with every fix gives the board's numbers too (only the rounding differs)
    general = score_official(parsed, gold, frozenset(FIXES))
    for key in KEYS:
        assert general.overall[key] == pytest.approx(board.overall[key], abs=1e-12)
        assert general.ci[key] == pytest.approx(board.ci[key], abs=1e-12)
        assert general.overall[f"{key}_var"] == pytest.approx(board.overall[f"{key}_var"], abs=1e-12)
        assert np.allclose(general.units[key], board.units[key], atol=1e-12, equal_nan=True)
    assert (general.n, general.missing) == (board.n, board.missing)


def test_stepwise_effects_add_up_to_board_minus_official(raw):
    records = _run(raw, 11, len(raw), drop=0.1)
    parsed, gold = _checked(records)
    steps = [TRACK.score_with(parsed, gold, frozenset(FIXES[:i])) for i in range(len(FIXES) + 1)]
    assert steps[-1].overall == TRACK.score(parsed, gold).overall
    for key in KEYS:
        effects = [b.overall[key] - a.overall[key] for a, b in zip(steps, steps[1:])]
        assert sum(effects) == pytest.approx(steps[-1].overall[key] - steps[0].overall[key], abs=1e-12)
        assert sum(1 for e in effects if abs(e) > 1e-9) >= 4, (key, effects)  # the quirks above move most fixes


def _one(task: str, gid: int, q: str, prediction: str, d: str | None = None) -> dict:
    record = {"task": task, "id": gid, "query_lang": q, "prediction": prediction}
    if d:
        record["doc_lang"] = d
    return record


def _mono(records: list[dict], fixes=()) -> float:
    parsed, gold = _checked(records)
    return TRACK.score_with(parsed, gold, frozenset(fixes)).overall["monolingual"]


def _find(raw, q: str, test) -> dict:
    return next(g for g in raw if test(g["ori_ans"][q]))


@pytest.mark.parametrize("phrase", ref.REFUSALS)
def test_each_refusal_wording_scores_minus_one(raw, phrase):
    g = raw[0]
    records = [_one("monolingual", g["id"], "en", f"{g['ori_ans']['en']}? {phrase}")]
    assert _mono(records) == -1.0
    assert _mono(records, ["refusals-are-text"]) == 1.0  # the answer is named: scored as text
    capital = phrase[0].upper() + phrase[1:]
    if capital != phrase:  # the check is case-sensitive: a capital letter escapes it
        assert _mono([_one("monolingual", g["id"], "en", capital)]) >= 0.0


def test_short_answers_score_only_with_the_fix(raw):
    g = _find(raw, "zh", lambda a: a == "准将")
    records = [_one("monolingual", g["id"], "zh", "他的军衔是准将。")]
    assert _mono(records) == 0.0
    assert _mono(records, ["short-answers-score"]) == 1.0


def test_hangul_single_words_decompose_in_the_script(raw):
    g = _find(raw, "ko", lambda a: a == "리스본, 뉴올리언스, 멜버른")
    records = [_one("monolingual", g["id"], "ko", g["ori_ans"]["ko"])]
    assert _mono(records) == 0.0  # each part one token: split into jamo; the sentence is not
    assert _mono(records, ["normalise-both-sides"]) == 1.0
    alone = [_one("monolingual", g["id"], "ko", "리스본")]  # a one-token prediction is decomposed too
    assert _mono(alone) == pytest.approx(1 / 3)


def test_two_word_hangul_has_no_listed_3gram(raw):
    g = _find(raw, "ko", lambda a: a == "북극 뱀")
    records = [_one("monolingual", g["id"], "ko", "북극 뱀")]
    assert _mono(records) == 0.0  # every 3-gram holds the space
    assert _mono(records, ["distinct-3grams"]) == 1.0


def test_punctuation_is_removed_from_single_tokens_only(raw):
    g = _find(raw, "fr", lambda a: a == "Pays-Bas, Norvège")
    records = [_one("monolingual", g["id"], "fr", "Pays-Bas, Norvège")]
    # gold "Pays-Bas" -> "paysbas" (one token), the prediction keeps its hyphen: 3 of 5 3-grams
    assert _mono(records) == pytest.approx((0.6 + 1.0) / 2)
    assert _mono(records, ["normalise-both-sides"]) == 1.0


def test_parts_weigh_by_count_and_units_by_one_with_the_fix(raw):
    four = _find(raw, "en", lambda a: a.count(", ") == 3)
    single = _find(raw, "en", lambda a: ", " not in a and len(a) > 5)
    records = [
        _one("monolingual", four["id"], "en", four["ori_ans"]["en"]),  # 4 parts, all named
        _one("monolingual", single["id"], "en", "nothing"),  # 1 part, missed
    ]
    parsed, gold = _checked(records)
    scores = TRACK.score_with(parsed, gold, frozenset())
    assert list(scores.breakdowns["language"]) == ["en"]  # only the languages with records count
    assert scores.overall["monolingual"] == pytest.approx(4 / 5)  # (4 + 0) / 5 parts
    assert TRACK.score_with(parsed, gold, frozenset(["mean-per-unit"])).overall["monolingual"] == pytest.approx(1 / 2)


def test_missing_units_are_left_out_then_count(raw):
    g = raw[0]
    records = [_one("monolingual", g["id"], q, g["ori_ans"][q]) for q in ("en", "fr")]
    parsed, gold = _checked(records)
    official = TRACK.score_with(parsed, gold, frozenset())
    assert official.overall["monolingual"] == 1.0
    assert (official.n, official.missing) == (2, 197 * 8 - 2)
    counted = TRACK.score_with(parsed, gold, frozenset(["missing-units-count"]))
    parts = {q: sum(len(ref.parts_of(r["ori_ans"][q])) for r in raw) for q in LANGS}
    own = {q: len(ref.parts_of(g["ori_ans"][q])) for q in ("en", "fr")}
    # every part of the missing units counts: en and fr are their own parts over all parts, the others 0
    assert counted.overall["monolingual"] == pytest.approx(sum(own[q] / parts[q] for q in own) / 8)
    assert (counted.n, counted.missing) == (197 * 8, 197 * 8 - 2)


def test_loose_takes_the_best_part_by_position(raw):
    g = _find(raw, "en", lambda a: a.count(", ") == 1)
    q_parts, d_answer = g["ori_ans"]["en"].split(", "), g["ori_ans"]["fr"]
    prediction = f"{q_parts[0]} / {d_answer}"
    records = [_one("crosslingual", g["id"], "en", prediction, d="fr")]
    parsed, gold = _checked(records)
    scores = TRACK.score_with(parsed, gold, frozenset())
    strict, code_switch = ref.cross_labels(prediction, g["ori_ans"]["en"], d_answer)
    assert scores.overall["crosslingual_strict"] == pytest.approx(sum(strict) / len(strict))
    assert scores.overall["crosslingual_loose"] == pytest.approx(sum(code_switch) / len(strict))


def test_the_answer_as_its_own_prediction(raw):
    """The issue's figure: 73 of the 1,576 gold answers score below 1 officially, none on the board."""
    records = [_one("monolingual", g["id"], q, g["ori_ans"][q]) for g in raw for q in LANGS]
    parsed, gold = _checked(records)
    official = TRACK.score_with(parsed, gold, frozenset()).units["monolingual"]
    assert int(np.sum(official < 1)) == 73
    assert sum(1 for g in raw for q in LANGS if ref.mean(ref.mono_labels(g["ori_ans"][q], g["ori_ans"][q])) < 1) == 73
    assert np.allclose(TRACK.score(parsed, gold).units["monolingual"], 1.0, rtol=0, atol=1e-12)  # float weights: 1 - 1e-16


def test_selection_reports_per_document_language_recall(raw):
    g = raw[0]
    records = [
        {
            "task": "selection",
            "id": g["id"],
            "query_lang": "en",
            "doc_langs": ["en", "zh"],
            "prediction": g["new_ans"]["zh"]["en"],
        },
        {"task": "selection", "id": g["id"], "query_lang": "fr", "doc_langs": ["zh", "ar"], "prediction": ref.REFUSALS[0]},
    ]
    parsed, gold = _checked(records)
    scores = TRACK.score_with(parsed, gold, frozenset())
    assert "selection_entropy" not in scores.overall
    cells = scores.breakdowns["doc_language"]
    assert cells["zh"] == {"selection_recall": 1.0, "offered": 1}  # the refusal is left out
    assert set(cells) == {"en", "zh"} and cells["en"]["selection_recall"] < 0.5
    texts = TRACK.score_with(parsed, gold, frozenset(["refusals-are-text"])).breakdowns["doc_language"]
    assert texts["zh"]["offered"] == 2 and texts["ar"]["selection_recall"] == 0.0
    board = TRACK.score_with(parsed, gold, frozenset(FIXES))
    assert "selection_entropy" in board.overall and "share" in board.breakdowns["doc_language"]["zh"]


def test_unknown_fix_is_refused(raw):
    parsed, gold = _checked([_one("monolingual", raw[0]["id"], "en", "x")])
    with pytest.raises(ValueError, match="unknown fix no-such-fix"):
        TRACK.score_with(parsed, gold, frozenset(["no-such-fix"]))


def test_gold_has_one_part_count_per_record_for_selection(raw):
    """eval_multi.py divides every document language's sum by the first language's part count; the gold's
    replaced answers have one part count per record, so a language's own count (ours) is the same."""
    for g in raw:
        counts = {len(v) if isinstance(v, list) else 1 for d in LANGS for a, v in g["new_ans"][d].items() if a in LANGS}
        assert len(counts) == 1, g["id"]
