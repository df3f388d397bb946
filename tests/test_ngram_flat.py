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
    prepare_answer,
    split_parts,
)

WORDY = st.text(alphabet="abcé 字符ab\u0301\t", max_size=25)  # repeats, short answers, a combining mark, whitespace


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(WORDY, min_size=1, max_size=3), min_size=1, max_size=4), WORDY)
def test_answer_rows_give_multi_part_recall(answers, prediction):
    prepared = [prepare_answer(split_parts(parts, split=False)) for parts in answers]
    want = [multi_part_recall(split_parts(parts, split=False), prediction) for parts in answers]
    pred = normalise(prediction)
    rows = [sum(compress(w, map(pred.__contains__, n))) for n, w in map(answer_row, prepared)]
    assert np.allclose(rows, want)
