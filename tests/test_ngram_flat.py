"""The flat forms futurepedia scores with agree with the plain 3-gram recall and normalisation."""

from __future__ import annotations

from itertools import compress

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboard.metrics.ngram import (
    AnswerTable,
    answer_row,
    multi_part_recall,
    normalise,
    normalise_many,
    prepare_answer,
    split_parts,
)

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
WORDY = st.text(alphabet="abcé 字符ab\u0301\t", max_size=25)  # repeats, short answers, a combining mark, whitespace


@settings(max_examples=500, deadline=None)
@given(st.lists(TEXT, max_size=6))
def test_normalise_many_is_normalise_one_by_one(texts):
    assert normalise_many(texts) == [normalise(t) for t in texts]


def test_a_text_holding_nul_takes_the_one_by_one_path():
    texts = ["a\0b", "  C  "]
    assert normalise_many(texts) == [normalise(t) for t in texts] == ["a\0b", "c"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(WORDY, min_size=1, max_size=3), min_size=1, max_size=4), WORDY)
def test_answer_rows_give_multi_part_recall(answers, prediction):
    prepared = [prepare_answer(split_parts(parts, split=False)) for parts in answers]
    want = [multi_part_recall(split_parts(parts, split=False), prediction) for parts in answers]
    pred = normalise(prediction)
    rows = [sum(compress(w, map(pred.__contains__, n))) for n, w in map(answer_row, prepared)]
    assert np.allclose(rows, want)


GROUPED = st.lists(  # groups of answers, each answer a list of parts
    st.lists(st.lists(WORDY, min_size=1, max_size=3), min_size=1, max_size=3), min_size=1, max_size=3
)
ANY_TEXT = st.one_of(WORDY, TEXT, st.text(alphabet="ab字", max_size=8))  # characters outside the gold's, too


@settings(max_examples=300, deadline=None)
@given(GROUPED, st.lists(st.tuples(st.integers(0, 2), ANY_TEXT), max_size=5), st.randoms(use_true_random=False))
def test_answer_table_gives_multi_part_recall_for_any_pairing(groups, predictions, rnd):
    """Every (prediction, answer of its group) pair, in shuffled order, scores as multi_part_recall does."""
    answers, group_of_row = [], []
    for g, group in enumerate(groups):
        for parts in group:
            answers.append(split_parts(parts, split=False))
            group_of_row.append(g)
    table = AnswerTable([prepare_answer(a) for a in answers], group_of_row)
    predictions = [(g % len(groups), text) for g, text in predictions]
    pairs = [(i, r) for i, (g, _) in enumerate(predictions) for r, gr in enumerate(group_of_row) if gr == g]
    rnd.shuffle(pairs)
    got = table.recall(
        normalise_many([t for _, t in predictions]),
        np.array([g for g, _ in predictions], dtype=np.int64),
        np.array([i for i, _ in pairs], dtype=np.int64),
        np.array([r for _, r in pairs], dtype=np.int64),
    )
    want = [multi_part_recall(answers[r], predictions[i][1]) for i, r in pairs]
    assert np.allclose(got, want)


def test_answer_table_refuses_a_pair_across_groups():
    table = AnswerTable([prepare_answer(["abc"]), prepare_answer(["xyz"])], [0, 1])
    with pytest.raises(ValueError):
        table.recall(["abc"], np.array([0]), np.array([0]), np.array([1]))


def test_answer_table_short_answers_and_a_large_alphabet():
    """Short answers (1-2 characters) match as substrings; a gold of many distinct characters still fits the keys."""
    many = "".join(map(chr, range(0x4E00, 0x4E00 + 3000)))  # 3,000 CJK characters: 12 bits a character
    answers = [prepare_answer(["准将"]), prepare_answer(["罗"]), prepare_answer([many[:50]]), prepare_answer(["x", "abc"])]
    table = AnswerTable(answers, [0, 0, 0, 0])
    preds = ["他的军衔是准将。", "罗马", many[10:60], "xab"]
    got = table.recall(preds, np.zeros(4, dtype=np.int64), np.arange(4), np.arange(4))
    assert got.tolist() == [1.0, 1.0, pytest.approx(38 / 48), 0.5]
