"""The compiled recall kernel futurepedia scores with gives today's numbers bit for bit, stays lazy, and is bounded."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from itertools import compress
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboard.metrics import ngram_kernel
from leaderboard.metrics.ngram import answer_row, multi_part_recall, normalise, prepare_answer, split_parts
from leaderboard.tracks.base import MAX_ANSWER

ROOT = Path(__file__).resolve().parents[1]

# any code point (CJK, astral, NUL, lone surrogates) plus a few chosen often: repeats make grams match
ODD = st.sampled_from(
    ["\0", "\ud800", "\udfff", "\U0001d538", "\U0010ffff", "😀", "字", "符", "准", "将", "é", "\u0301", "ﬁ", "ß", "İ"]
)
SPACE = st.sampled_from([" ", "\t", "\n", "\x1c", "\x85", "\xa0", "\u2028", "\u3000"])  # str.isspace, some NFKC-mapped
CHAR = st.one_of(st.characters(codec=None, categories=None), ODD, SPACE, st.sampled_from("abcab"))
TEXT = st.text(alphabet=CHAR, max_size=20)
SHORT = st.text(alphabet=CHAR, min_size=1, max_size=2)  # 1-2 characters: the short-answer rule
ANSWER = st.lists(st.one_of(TEXT, SHORT), min_size=1, max_size=4)  # parts of one answer


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(TEXT, st.text(alphabet=st.one_of(SPACE, st.sampled_from("aB\0")), max_size=8)), max_size=6))
def test_normalised_points_are_normalise_one_by_one(texts):
    """NFKC + casefold over the NUL-joined texts and the compiled whitespace collapse give each text's normalise()."""
    points, starts = ngram_kernel.normalised_points(texts)
    assert len(starts) == len(texts) + 1 and starts[-1] == len(points)
    for text, first, end in zip(texts, starts, starts[1:]):
        assert points[first:end].tolist() == [ord(c) for c in normalise(text)]


def test_the_space_table_covers_every_whitespace_character():
    table = ngram_kernel._space_table()
    assert [c for c in range(0x110000) if chr(c).isspace()] == np.flatnonzero(table).tolist()


def row_form(needles, weights, prediction: str) -> float:
    """Today's scoring: the weights of the needles the prediction contains, summed in needle order."""
    return sum(compress(weights, map(prediction.__contains__, needles)))


def kernel_recalls(answers, predictions, pairs, kernel=None):
    rows = ngram_kernel.NeedleRows([answer_row(prepare_answer(split_parts(a, split=False))) for a in answers])
    preds = ngram_kernel.normalised_points(predictions)
    pair_pred = [i for i, _ in pairs]
    pair_row = [r for _, r in pairs]
    if kernel is None:
        return ngram_kernel.recall_pairs(rows, preds, pair_pred, pair_row)
    out = np.zeros(len(pairs))  # the interpreted loop, as it runs where numba is missing
    kernel(*ngram_kernel.pair_arguments(rows, preds, pair_pred, pair_row), out)
    return out


def wanted(answers, predictions, pairs):
    rows = [answer_row(prepare_answer(split_parts(a, split=False))) for a in answers]
    return [row_form(*rows[r], normalise(predictions[i])) for i, r in pairs]


@settings(max_examples=400, deadline=None)
@given(st.lists(ANSWER, min_size=1, max_size=4), st.lists(st.one_of(TEXT, st.just("")), min_size=1, max_size=4), st.randoms())
def test_kernel_equals_the_row_form_exactly(answers, predictions, rnd):
    """Every (prediction, answer) pair, in any order, scores == today's sum (not approximately), and
    within rounding of the readable multi_part_recall (which divides per part, so the last bit may differ)."""
    pairs = [(i, r) for i in range(len(predictions)) for r in range(len(answers))]
    rnd.shuffle(pairs)
    got = kernel_recalls(answers, predictions, pairs)
    assert got.tolist() == wanted(answers, predictions, pairs)
    reference = [multi_part_recall(split_parts(answers[r], split=False), predictions[i]) for i, r in pairs]
    assert np.allclose(got, reference, rtol=1e-12, atol=0)


@settings(max_examples=60, deadline=None)
@given(st.lists(ANSWER, min_size=1, max_size=3), st.lists(TEXT, min_size=1, max_size=3))
def test_the_interpreted_fallback_gives_the_same_numbers(answers, predictions):
    pairs = [(i, r) for i in range(len(predictions)) for r in range(len(answers))]
    got = kernel_recalls(answers, predictions, pairs, kernel=ngram_kernel._recall_pairs)
    assert got.tolist() == wanted(answers, predictions, pairs) == kernel_recalls(answers, predictions, pairs).tolist()


FILLER = st.text(alphabet=st.one_of(ODD, st.sampled_from("abcab")), min_size=3, max_size=6)  # no whitespace: stays long
LONG = st.builds(lambda head, filler, tail: head + filler * 200 + tail, TEXT, FILLER, TEXT)  # > _SMALL grams


@settings(max_examples=150, deadline=None)
@given(st.lists(ANSWER, min_size=1, max_size=3), st.lists(LONG, min_size=1, max_size=3), st.randoms())
def test_long_predictions_take_the_sorted_path_with_the_same_numbers(answers, fillers, rnd):
    """Past ngram_kernel._SMALL grams a prediction's grams are merge-sorted and binary-searched: exact too.
    Half the predictions embed an answer, so there are hits."""
    predictions = [f + "".join(answers[i % len(answers)]) if i % 2 else f for i, f in enumerate(fillers)]
    pairs = [(i, r) for i in range(len(predictions)) for r in range(len(answers))]
    rnd.shuffle(pairs)
    assert all(len(normalise(p)) > ngram_kernel._SMALL for p in predictions)
    assert kernel_recalls(answers, predictions, pairs).tolist() == wanted(answers, predictions, pairs)


def test_grams_that_collide_in_the_hash_table_are_found_exactly():
    """A prediction whose 3-grams "ccc" all fall in one slot of the small table (a probe chain 40 long)."""

    def slot(text):
        return ngram_kernel.slot_of(ngram_kernel.pack(text))

    # characters normalisation keeps (planes 2 to 5: CJK and unassigned), grouped by the slot of their "ccc";
    # the fullest slot's (each of the 4096 holds ~64 of these ~261,000)
    by_slot: dict[int, list[str]] = {}
    for c in map(chr, range(0x20000, 0x60000)):
        if normalise(c * 3) == c * 3:
            by_slot.setdefault(slot(c * 3), []).append(c)
    chars = max(by_slot.values(), key=len)[:45]
    assert len(chars) == 45 and len({slot(c * 3) for c in chars}) == 1
    prediction = "".join(c * 3 for c in chars[:40])  # 118 grams: 40 colliding "ccc", the others between
    assert len(prediction) - 2 <= ngram_kernel._SMALL
    answers = [[c * 3] for c in chars] + [["".join(chars[:3])], [chars[0] * 3 + chars[1] * 3]]
    pairs = [(0, r) for r in range(len(answers))]
    got = kernel_recalls(answers, [prediction], pairs)
    assert got.tolist() == wanted(answers, [prediction], pairs)
    assert got[:45].tolist() == [1.0] * 40 + [0.0] * 5


def test_short_answers_multi_part_answers_and_astral_characters():
    answers = [["准将"], ["罗"], ["x", "abc"], ["\U0001f600\U00020000\U0001f601"], ["Florence", "Turin"]]
    predictions = ["他的军衔是准将。", "罗马", "xab", "an \U0001f600\U00020000\U0001f601!", "Florence and Naples", ""]
    pairs = [(i, i) for i in range(5)] + [(5, r) for r in range(5)] + [(1, 0), (0, 1)]
    got = kernel_recalls(answers, predictions, pairs)
    florence = sum([1 / 12] * 6)  # "florence": 6 grams of 1 / (6 x 2 parts) each, added one by one (0.49999999999999994)
    assert got.tolist() == [1.0, 1.0, 0.5, 1.0, florence, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]


def test_a_prediction_at_the_length_bound_is_scored_exactly():
    """The longest prediction accepted (MAX_ANSWER characters), built to hold many distinct and many
    repeated grams, scores as the row form does (cost is O(L log L) per prediction, merge-sorted)."""
    rng = np.random.default_rng(3)
    long = "".join(map(chr, rng.integers(0x4E00, 0x4E00 + 40, MAX_ANSWER)))
    long = long[: MAX_ANSWER // 2] + "ab" * (MAX_ANSWER // 4)
    assert len(long) == MAX_ANSWER
    answers = [[long[100:160]], [long[-50:]], ["ab"], ["zzz"], [long[5000:5010], "b"]]
    pairs = [(0, r) for r in range(len(answers))]
    assert kernel_recalls(answers, [long], pairs).tolist() == wanted(answers, [long], pairs)


def test_bad_pairs_are_refused():
    rows = ngram_kernel.NeedleRows([answer_row(prepare_answer(["abc"]))])
    with pytest.raises(ValueError):
        ngram_kernel.recall_pairs(rows, ["abc"], [0], [1])
    with pytest.raises(ValueError):
        ngram_kernel.recall_pairs(rows, ["abc"], [1], [0])
    with pytest.raises(ValueError):
        ngram_kernel.recall_pairs(rows, ["abc"], [0, 0], [0])
    with pytest.raises(ValueError):
        ngram_kernel.NeedleRows([(("abcd",), (1.0,))])  # needles are 1 to 3 characters
    for weight in (float("inf"), float("nan"), -1.0):  # the kernel's branch-free add holds for these alone
        with pytest.raises(ValueError, match="weight"):
            ngram_kernel.NeedleRows([(("abc",), (weight,))])


def run_python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_neither_importing_the_app_nor_loading_gold_imports_numba():
    """numba (~0.3 s to import, ~0.3 s more to load the kernels) is loaded by the first Futurepedia scoring, never by
    `import leaderboard.*` nor by loading gold: the app's start-up does both (every track's gold: the results
    cache keys name its hash) and must not pay for it."""
    out = run_python(
        """
        import sys, tempfile
        from pathlib import Path
        import leaderboard.service, leaderboard.ui
        from leaderboard.demo import make_gold
        from leaderboard.tracks import TRACKS
        for name, track in TRACKS.items():
            track.load_gold(make_gold(name, Path(tempfile.mkdtemp()) / name, seed=1))
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("numba", "llvmlite")))
        """
    )
    assert out.strip().splitlines()[-1] == "[]"


def test_without_numba_scoring_runs_interpreted_with_a_warning_and_the_same_numbers():
    out = run_python(
        """
        import logging, sys
        sys.modules["numba"] = None  # import numba now raises ImportError, as on a platform without a wheel
        logging.basicConfig(level=logging.WARNING, stream=sys.stdout, format="%(message)s")
        from leaderboard.metrics import ngram_kernel
        from leaderboard.metrics.ngram import answer_row, prepare_answer
        rows = ngram_kernel.NeedleRows([answer_row(prepare_answer(["abcd", "x"]))])
        print(ngram_kernel.recall_pairs(rows, ngram_kernel.normalised_points(["  XX\u3000bcd ", ""]), [0, 1], [0, 0]).tolist())
        from leaderboard.metrics.compiled import compiled
        print(compiled(ngram_kernel._recall_pairs) is ngram_kernel._recall_pairs)
        """
    )
    assert "numba is not installed" in out
    assert out.strip().splitlines()[-2:] == ["[0.75, 0.0]", "True"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(TEXT, st.text(alphabet=st.one_of(SPACE, st.sampled_from("aB\0")), max_size=8)), max_size=12))
def test_texts_in_runs_give_the_arrays_of_one_pass(texts):
    """Normalising a few characters at a time (how a file of long predictions stays within its memory bound)
    puts together exactly the arrays of one pass, for both normalisations' layouts."""
    for points_of in (ngram_kernel.normalised_points, ngram_kernel.text_points):
        whole_points, whole_starts = points_of(texts, chunk=1 << 30)
        points, starts = points_of(texts, chunk=5)
        assert points.dtype == np.uint32 and starts.dtype == np.int64
        assert points.tolist() == whole_points.tolist() and starts.tolist() == whole_starts.tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=12), st.integers(1, 30))
def test_runs_cover_the_texts_in_order_each_closed_by_the_text_reaching_the_chunk(lengths, chunk):
    texts = ["x" * n for n in lengths]
    spans = ngram_kernel.runs(texts, chunk)
    assert spans[0][0] == 0 and spans[-1][1] == len(texts)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))  # consecutive, nothing skipped or repeated
    for first, end in spans[:-1]:  # every run but the last reaches the chunk, and only at its last text
        sizes = [n + 1 for n in lengths[first:end]]
        assert sum(sizes) >= chunk > sum(sizes[:-1])


@pytest.mark.parametrize("seed", range(4))
def test_grouped_order_is_the_stable_argsort(seed):
    rng = np.random.default_rng(seed)
    predictions = int(rng.integers(1, 50))
    pair_pred = rng.integers(0, predictions, int(rng.integers(0, 400)))
    assert ngram_kernel.grouped_order(pair_pred, predictions).tolist() == np.argsort(pair_pred, kind="stable").tolist()
    with pytest.raises(ValueError):
        ngram_kernel.grouped_order([predictions], predictions)


def test_same_texts_and_appended_compare_and_copy_texts_in_place():
    """Per text whether two layouts hold the same code points (empty texts, other lengths, the read-only UTF-32
    buffer of text_points beside normalised_points' writable array), and a layout with another's texts appended."""
    texts = ["Abc", "", "x  y", "ⅻ", "same"]
    board = ngram_kernel.normalised_points(texts)
    plain = ngram_kernel.text_points(texts)
    assert ngram_kernel.same_texts(board, plain).tolist() == [False, True, False, False, True]
    assert ngram_kernel.same_texts(plain, plain).all()
    points, starts = ngram_kernel.appended(board, plain, [0, 2, 3])
    joined = [normalise(t) for t in texts] + ["Abc", "x  y", "ⅻ"]
    assert [points[starts[i] : starts[i + 1]].tobytes().decode("utf-32-le") for i in range(len(joined))] == joined
    with pytest.raises(ValueError, match="out of range"):
        ngram_kernel.appended(board, plain, [5])
    with pytest.raises(ValueError, match="different numbers"):
        ngram_kernel.same_texts(board, ngram_kernel.text_points(texts[:2]))


_SCRIPTS = st.sampled_from(["Paris", "리스본", "准将", "東京タワー", "القاهرة", "Zürich", "2019", "1.5", "é", "x", " ", ", "])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_SCRIPTS, min_size=1, max_size=4).map("".join), min_size=1, max_size=6), st.data())
def test_rows_skipped_for_a_script_the_prediction_lacks_score_what_every_lookup_gives(answers, data):
    """A row each of whose needles holds a character of a bucket the prediction lacks scores 0.0 unlooked-up:
    on answers and predictions mixing scripts (and sharing digits, spaces and punctuation), compiled and
    interpreted, every recall is the row form's; and a row's common buckets are those of its needles."""
    predictions = data.draw(st.lists(st.lists(_SCRIPTS, max_size=5).map("".join), min_size=1, max_size=6))
    pairs = [(i, r) for i in range(len(predictions)) for r in range(len(answers))]
    expected = wanted(answers, predictions, pairs)
    assert kernel_recalls(answers, predictions, pairs).tolist() == expected
    assert kernel_recalls(answers, predictions, pairs, kernel=ngram_kernel._recall_pairs).tolist() == expected
    rows = ngram_kernel.NeedleRows([answer_row(prepare_answer(split_parts(a, split=False))) for a in answers])
    for r in range(len(rows)):
        needles = rows.codes[rows.start[r] : rows.start[r + 1]]
        per_needle = [
            int(
                np.bitwise_or.reduce(
                    ngram_kernel._bucket_bits(
                        np.array([(c >> s & (1 << 21) - 1) - 1 for s in (0, 21, 42) if c >> s & (1 << 21) - 1])
                    )
                )
            )
            for c in needles.tolist()
        ]
        assert rows.common[r] == (int(np.bitwise_and.reduce(per_needle)) if per_needle else 0)
