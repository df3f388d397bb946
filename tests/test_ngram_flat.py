"""The flat forms futurepedia scores with agree with the plain 3-gram recall and normalisation."""

from __future__ import annotations

from itertools import compress

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboard.metrics.ngram import (
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
