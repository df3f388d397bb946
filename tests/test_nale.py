"""leaderboard/metrics/nale.py: the Futurepedia scripts' normalisation and listed 3-grams, against the
reference rewrite of the scripts (tests/reference/nale_eval.py); no gold needed."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import nale_eval as ref

from leaderboard.metrics import nale, ngram_kernel
from leaderboard.metrics.nale import (
    Recipe,
    part_row,
    refusals,
    refused,
    script_normalise,
    script_points,
    script_predictions,
)

ALPHABET = "aZé\u0301ß İΣΣς\u00ad 리스본准将ガⅫ①²  ,.-'\"[]!?\u3000\u00a0\u00a8\0x9"
OFFICIAL = Recipe(distinct=False, board_normalisation=False, short_rule=False)


def _texts(seed: int, n: int = 400) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 8))) for _ in range(n)]


@pytest.mark.parametrize("seed", range(5))
def test_normalisation_is_the_scripts(seed):
    texts = _texts(seed)
    assert [script_normalise(t) for t in texts] == [ref.normalise(t) for t in texts]
    clean = [t.replace("\0", "") for t in texts]  # the joined path (no NUL), then the one-by-one path
    assert script_predictions(clean) == [ref.normalise(t.lower()) for t in clean]  # final sigmas included
    assert script_predictions(texts) == [ref.normalise(t.lower()) for t in texts]
    _assert_points_are_the_texts(clean)
    _assert_points_are_the_texts(texts)


def _assert_points_are_the_texts(texts):
    """script_points is the code points of script_predictions' texts, in text_points' layout."""
    points, starts = script_points(texts)
    want_points, want_starts = ngram_kernel.text_points(script_predictions(texts))
    assert points.dtype == want_points.dtype and points.tolist() == want_points.tolist()
    assert starts.tolist() == want_starts.tolist()


@pytest.mark.parametrize("seed", range(3))
def test_predictions_in_runs_are_normalised_as_in_one(seed, monkeypatch):
    """A few characters at a time (how a file of long predictions stays within its memory bound), the same
    texts as one pass and as the scripts' steps."""
    clean = [t.replace("\0", "") for t in _texts(seed)]
    whole = script_predictions(clean)
    monkeypatch.setattr(nale, "CHUNK_CHARS", 7)
    assert script_predictions(clean) == whole == [ref.normalise(t.lower()) for t in clean]
    _assert_points_are_the_texts(clean)


def test_single_tokens_only_lose_punctuation_and_decompose():
    assert script_normalise("Pays-Bas") == "paysbas"
    assert script_normalise("Pays-Bas, Norvège") == "pays-bas, norvège"
    assert script_normalise("리스본") != "리스본" and len(script_normalise("리스본")) == 7  # 7 jamo
    assert script_normalise("Zürich") == "zürich"  # NFKD leaves a combining mark: not alphabetic, reverted
    assert script_normalise("3.14") == "314"


@pytest.mark.parametrize("seed", range(5))
def test_a_part_row_scores_as_the_script(seed):
    rng = random.Random(seed)
    words = ["Florence", "Turin", "준장", "准将", "U.S.", "Pays-Bas", "aaaa", "a b c", "北极 蛇", "['x', 'y']"]
    for _ in range(300):
        part = " ".join(rng.sample(words, rng.randint(1, 2)))
        prediction = " ".join(rng.sample(words, rng.randint(0, 3)))
        needles, counts, size = part_row(part, OFFICIAL)
        text = script_normalise(prediction.lower())
        got = sum(c for n, c in zip(needles, counts) if n in text) / size
        assert got == ref.part_recall(part, prediction), (part, prediction)


def test_refusals_are_matched_as_written():
    assert all(refused(f"x {phrase} y") for phrase in ref.REFUSALS)
    assert not refused("Insufficient information.")  # case-sensitive, as the scripts
    rng = random.Random(0)
    texts = [
        rng.choice(["", "x", "Insufficient information", *ref.REFUSALS]) + rng.choice(["", " a", "信息"]) for _ in range(300)
    ]
    assert refusals(texts) == [ref.refused(t) for t in texts]
    assert refusals([*texts, "a\0信息不足"]) == [ref.refused(t) for t in [*texts, "a\0信息不足"]]


# Sentences (a space between words, or a blocker such as '。'), single words, compatibility characters whose
# NFKD is a word ('㎏'), combining marks, edge whitespace, final sigmas and refusal phrases: every branch of the
# bulk normalisation, against the scripts' own steps one prediction at a time.
_WORDS = st.sampled_from(
    ["Paris", "ΣΑΣ", "리스본", "准将", "㎏", "Zu\u0308rich", "3.14", "①", "U.S.", "-", "。", "，", "ﬁ", "İ", ""]
)
_GLUE = st.sampled_from([" ", "", "  ", "\t", "\u3000", ", ", "。", "-", "\u00a0"])


@st.composite
def _prediction(draw) -> str:
    words = draw(st.lists(_WORDS, max_size=5))
    glue = draw(st.lists(_GLUE, min_size=len(words), max_size=len(words)))
    text = "".join(w + g for w, g in zip(words, glue))
    if draw(st.booleans()):
        text = draw(st.sampled_from(ref.REFUSALS + ("", " "))) + text
    return draw(st.sampled_from(["", " ", "\n"])) + text + draw(st.sampled_from(["", " ", "。"]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_prediction(), st.text(alphabet=ALPHABET.replace("\0", ""), max_size=12)), min_size=1, max_size=40))
def test_bulk_normalisation_and_refusals_are_the_scripts_on_generated_predictions(texts):
    assert script_predictions(texts) == [script_normalise(t.lower()) for t in texts] == [ref.normalise(t.lower()) for t in texts]
    _assert_points_are_the_texts(texts)
    assert refusals(texts) == [ref.refused(t) for t in texts]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_prediction(), st.text(alphabet=ALPHABET.replace("\0", ""), max_size=12)), min_size=1, max_size=20))
def test_the_shapes_loop_interpreted_gives_what_it_gives_compiled(texts):
    """Where numba is missing the shapes loop runs as plain Python: the same flags and spans."""
    lowered = "\0".join(texts).lower()
    fast = nale._shapes(lowered, len(texts))
    try:
        nale.compiled, compiled = (lambda f, *a: f), nale.compiled
        slow = nale._shapes(lowered, len(texts))
    finally:
        nale.compiled = compiled
    for a, b in zip(fast, slow):
        assert a.tolist() == b.tolist()
    parts = lowered.split("\0")
    assert fast[3].tolist() == [len("\0".join(parts[:i])) + (i > 0) for i in range(len(parts))]
    assert (fast[4] - fast[3] + 1).tolist() == [len(p) for p in parts]
