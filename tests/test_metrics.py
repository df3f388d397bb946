"""The metric module against the seed recipes, hand-computed cases and pytrec_eval."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboard.metrics import (
    BootstrapPlan,
    char_ngram_recall,
    multi_part_recall,
    ndcg_at_k,
    page_precision_recall,
    paired_test,
    selection_entropy,
)
from leaderboard.metrics.ngram import normalise, split_parts


# ---- seed recipes, written as the original code did ------------------------------
def seed_ngram_recall(gold: str, pred: str, n: int = 3) -> float:
    gold_ngrams = {gold[i : i + n] for i in range(len(gold) - n + 1)}
    pred_ngrams = {pred[i : i + n] for i in range(len(pred) - n + 1)}
    if not gold_ngrams:
        return 0
    return len(gold_ngrams & pred_ngrams) / len(gold_ngrams)


def seed_binary_ndcg5(ranked: list[str], relevant: set[str]) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:5]) if d in relevant)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 5)))
    return dcg / idcg


texts = st.text(alphabet=st.sampled_from(list("abcAB ,.准将가나مر\u00e9e\u0301 ")), max_size=30)


@given(texts, texts)
def test_ngram_recall_equals_seed_recipe_with_normalisation_and_short_rule_off(gold, pred):
    assert char_ngram_recall(gold, pred, normalised=False, short_rule=False) == seed_ngram_recall(gold, pred)


def test_ngram_recall_normalises_and_scores_short_cjk_answers():
    assert char_ngram_recall("准将", "他的军衔是准将。") == 1.0
    assert char_ngram_recall("准将", "他的军衔是上校。") == 0.0
    assert seed_ngram_recall("准将", "准将") == 0  # the bias the short rule removes
    assert char_ngram_recall("Café  Rouge", "the cafe\u0301 rouge") == 1.0  # NFKC + casefold + spaces
    assert normalise("  A\u00a0\tB ") == "a b"
    assert char_ngram_recall("abcd", "xxabc") == 0.5  # grams abc, bcd: one of two


def test_multi_part_answers_need_every_part():
    parts = split_parts("Florence, Turin, Naples, Verona", split=True)
    assert parts == ["Florence", "Turin", "Naples", "Verona"]
    assert multi_part_recall(parts, "Florence and Turin") == pytest.approx(0.5)
    assert multi_part_recall(parts, "florence, turin, naples, verona") == 1.0
    assert split_parts("University of California, Berkeley", split=False) == ["University of California, Berkeley"]
    assert split_parts(["A", " ", "B"], split=False) == ["A", "B"]  # parts normalising to empty are dropped


def test_precision_recall_over_gold_pages_hand_computed():
    gold = {("d1", 5), ("d1", 6), ("d1", 9), ("d2", 1)}
    cands = [
        ("d1", 6, 8, "text"),  # shares page 6: hit, covers 6
        ("d1", 6, 8, "text"),  # repeat of the previous one: miss
        ("d1", 6, 8, "image"),  # same pages, other modality: a distinct candidate, hit (covers nothing new)
        ("d1", 7, 8, None),  # between the gold pages: miss
        ("d3", 1, 1, None),  # other doc: miss
        ("d1", 4, 5, "text", "c1"),  # hit, covers 5
        ("d1", 4, 5, "text", "c2"),  # another chunk of the same pages (its own id): hit
        ("d1", 9, 9, "text", "c1"),  # the id of an earlier candidate: a repeat, whatever its pages
        ("d1", 4, 5, "text"),  # no id, same doc, pages and modality as an earlier one: a repeat
    ]
    p, r = page_precision_recall(cands, gold)
    assert p == pytest.approx(4 / 10)  # P@10 = hits / 10 even for a short list
    assert r == pytest.approx(2 / 4)  # pages 5 and 6 of 4 gold pages
    # the script's rules: every copy counts, and the list's length divides
    assert page_precision_recall(cands, gold, repeats_count_once=False, precision_over_k=False) == (
        pytest.approx(7 / 9),
        pytest.approx(3 / 4),
    )
    p, r = page_precision_recall([("d1", 1, 100, None)] + [("x", 1, 1, None)] * 10, gold)
    assert (p, r) == (pytest.approx(0.1), pytest.approx(3 / 4))  # one wide candidate covers every d1 page
    # only the first 10 count
    p, r = page_precision_recall([("x", i, i, None) for i in range(1, 11)] + [("d2", 1, 1, None)], gold)
    assert (p, r) == (0.0, 0.0)
    assert math.isnan(page_precision_recall([], gold, precision_over_k=False)[0])


@given(
    st.lists(
        st.tuples(
            st.sampled_from("ab"),
            st.integers(1, 6),
            st.integers(0, 3),
            st.sampled_from([None, "text"]),
            st.sampled_from([None, "x", "y"]),
        ),
        max_size=14,
    )
)
def test_precision_is_hits_over_ten_and_a_repeat_is_a_miss(raw):
    cands = [(d, s, s + w, m) if i is None else (d, s, s + w, m, i) for d, s, w, m, i in raw]
    gold = {("a", 2), ("a", 3), ("b", 5)}
    tp = 0
    for j, c in enumerate(cands[:10]):
        earlier = cands[:j]
        repeat = any(
            (len(c) == len(e) == 5 and c[4] == e[4]) or ((len(c) == 4 or len(e) == 4) and c[:4] == e[:4]) for e in earlier
        )
        tp += not repeat and any(c[0] == g[0] and c[1] <= g[1] <= c[2] for g in gold)
    p, r = page_precision_recall(cands, gold)
    assert p == tp / 10 and 0 <= r <= 1


@given(
    st.lists(st.sampled_from([f"d{i}" for i in range(12)]), unique=True, min_size=1, max_size=12),
    st.sets(st.sampled_from([f"d{i}" for i in range(12)]), min_size=1),
)
def test_binary_ndcg_equals_seed_recipe(ranked, relevant):
    scores = [float(len(ranked) - i) for i in range(len(ranked))]  # strictly decreasing: the order given
    got = ndcg_at_k(ranked, scores, {d: 1 for d in relevant}, 5)
    assert got == pytest.approx(seed_binary_ndcg5(ranked, relevant))


def test_ndcg_ties_break_by_doc_id_descending():
    grades = {"a": 1}
    # a and b tie: trec_eval puts b (larger id) first, so a lands at rank 2
    assert ndcg_at_k(["a", "b"], [1.0, 1.0], grades, 5) == pytest.approx(1 / math.log2(3))


pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is a test dependency")


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_ndcg_matches_pytrec_eval_on_random_runs_with_ties_and_grades(data):
    n_queries = data.draw(st.integers(1, 5))
    docs = [f"doc{i}" for i in range(15)]
    qrels, run = {}, {}
    for q in range(n_queries):
        grades = data.draw(st.dictionaries(st.sampled_from(docs), st.integers(0, 3), min_size=1, max_size=8))
        if not any(g > 0 for g in grades.values()):
            grades[docs[0]] = 1
        ranked = data.draw(st.lists(st.sampled_from(docs), unique=True, min_size=1, max_size=12))
        scores = data.draw(st.lists(st.sampled_from([0.5, 1.0, 1.5, 2.0]), min_size=len(ranked), max_size=len(ranked)))
        qrels[f"q{q}"] = grades
        run[f"q{q}"] = dict(zip(ranked, scores))
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.5"}).evaluate(run)
    for q, ranking in run.items():
        got = ndcg_at_k(list(ranking), list(ranking.values()), qrels[q], 5)
        assert got == pytest.approx(ref[q]["ndcg_cut_5"], abs=1e-9)


def test_selection_entropy():
    se, norm, p = selection_entropy([1.0, 1.0])
    assert se == pytest.approx(math.log(2)) and norm == pytest.approx(1.0) and p == [0.5, 0.5]
    assert selection_entropy([1.0, 0.0, 0.0])[:2] == (0.0, 0.0)
    assert selection_entropy([0.0, 0.0]) == (0.0, 0.0, [0.0, 0.0])
    se, norm, _ = selection_entropy([0.6, 0.3, 0.1])
    assert se == pytest.approx(-(0.6 * math.log(0.6) + 0.3 * math.log(0.3) + 0.1 * math.log(0.1)))
    assert norm == pytest.approx(se / math.log(3))


def test_bootstrap_is_deterministic_and_matches_a_plain_loop():
    rng = np.random.default_rng(5)
    x = rng.random(50)
    ci = BootstrapPlan.for_sizes((50,)).ci([x])[0]
    # the same resamples drawn the naive way
    loop_rng = np.random.default_rng(0)
    idx = loop_rng.integers(0, 50, size=(1000, 50))
    means = x[idx].mean(axis=1)
    assert ci == pytest.approx(np.percentile(means, [2.5, 97.5]))
    assert BootstrapPlan.for_sizes((50,)).resamples == 1000


def test_clustered_bootstrap_moves_clusters_together():
    # two clusters, one of all ones, one of all zeros: every replicate mean is
    # a mix of whole clusters, so it can only be 0, 0.5 or 1
    plan = BootstrapPlan.for_sizes((2,))
    reps = plan.replicates([np.array([3.0, 0.0])], [np.array([3.0, 3.0])])
    assert set(np.round(reps[:, 0], 6)) <= {0.0, 0.5, 1.0}


def test_stratified_bootstrap_weighs_strata_equally():
    plan = BootstrapPlan.for_sizes((3, 100))
    reps = plan.replicates([np.ones(3), np.zeros(100)])
    assert np.allclose(reps, 0.5)


def test_paired_test_detects_a_real_difference_and_not_noise():
    rng = np.random.default_rng(1)
    a = rng.random(300)
    better = paired_test([a + 0.05], [a])
    assert better.significant and better.diff == pytest.approx(0.05) and better.p_value < 0.05
    same = paired_test([a], [a[::-1].copy()])
    assert not same.significant and same.ci[0] < 0 < same.ci[1]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(["a", "b", "zz"]), st.integers(1, 6), st.integers(0, 2), st.sampled_from([None, "text", "image"])
            ),
            max_size=13,
        ),
        min_size=1,
        max_size=6,
    )
)
def test_batched_unidoc_scoring_equals_the_per_question_function(lists):
    """The vectorised path of the unidoc track gives exactly the scalar definition's numbers, in both protocols
    (the demo gold's doc ids have no leading zero and its candidates no id: only repeats, the denominator and
    empty lists tell the protocols apart)."""
    from leaderboard.problems import Problems
    from leaderboard.submission import Envelope
    from leaderboard.tracks import TRACKS

    track = TRACKS["unidoc"]
    gold = track.load_gold()
    qs = gold.questions[: len(lists)]
    # point the candidates at the gold documents of each question, so hits happen
    records = []
    for q, raw in zip(qs, lists):
        doc_of = {"a": q.contexts[0][0], "b": q.contexts[-1][0], "zz": "no-such-doc"}
        records.append(
            {
                "id": q.qid,
                "retrieved": [{"doc": doc_of[d], "pages": [s, s + w], **({"modality": m} if m else {})} for d, s, w, m in raw],
            }
        )
    env = Envelope("unidoc", {}, records, [f"line {i}" for i in range(len(records))], "header")
    problems = Problems()
    run = track.validate(env, gold, problems)
    assert problems.ok
    from leaderboard.tracks.unidoc import gold_pages

    scores = track.score(run, gold)
    official = track.score_with(run, gold, frozenset())
    for i, rec in enumerate(records):
        cands = [(c["doc"], c["pages"][0], c["pages"][-1], c.get("modality")) for c in rec["retrieved"]]
        p, r = page_precision_recall(cands, gold_pages(qs[i]))
        assert scores.units["precision@10"][i] == pytest.approx(p)
        assert scores.units["recall@10"][i] == pytest.approx(r)
        p, r = page_precision_recall(cands, gold_pages(qs[i]), repeats_count_once=False, precision_over_k=False)
        if cands:
            assert official.units["precision@10"][i] == pytest.approx(p)
            assert official.units["recall@10"][i] == pytest.approx(r)
        else:  # the script leaves an empty list out
            assert np.isnan(official.units["precision@10"][i])


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_batched_ndcg_equals_the_scalar_definition_with_ties(data):
    from leaderboard.metrics.ranking import ideal_dcg, ndcg_at_k_many

    docs_pool = [f"d{i}" for i in range(12)]
    rankings, grades = [], []
    for _ in range(data.draw(st.integers(1, 6))):
        ranked = data.draw(st.lists(st.sampled_from(docs_pool), unique=True, min_size=1, max_size=12))
        scores = data.draw(st.lists(st.sampled_from([0.0, 1.0, 1.5, 2.0, 3.0]), min_size=len(ranked), max_size=len(ranked)))
        g = data.draw(st.dictionaries(st.sampled_from(docs_pool), st.integers(1, 3), min_size=1, max_size=5))
        rankings.append((ranked, scores))
        grades.append(g)
    flat_docs = [d for r, _ in rankings for d in r]
    flat_scores = np.array([s for _, sc in rankings for s in sc], dtype=float)
    lens = np.array([len(r) for r, _ in rankings])
    got = ndcg_at_k_many(flat_scores, flat_docs, lens, grades, np.array([ideal_dcg(g, 5) for g in grades]), 5)
    for value, (ranked, scores), g in zip(got, rankings, grades):
        assert value == pytest.approx(ndcg_at_k(ranked, scores, g, 5))


def test_percentiles_are_numpys_bits():
    from leaderboard.metrics.stats import percentiles

    rng = np.random.default_rng(3)
    for n in (2, 5, 999, 1000):
        one, many = rng.random(n), rng.random((n, 4))
        assert (percentiles(one, (2.5, 97.5)) == np.percentile(one, [2.5, 97.5])).all()
        assert (percentiles(many, (2.5, 97.5)) == np.percentile(many, [2.5, 97.5], axis=0)).all()
    with_nan = np.array([0.1, np.nan, 0.3])
    assert np.isnan(percentiles(with_nan, (50,))).all()  # left to numpy


def test_compiled_bootstrap_product_matches_blas():
    plan = BootstrapPlan.for_sizes((40, 7))
    rng = np.random.default_rng(4)
    values, weights = [rng.random((40, 3)), rng.random((7, 3))], [rng.random(40) + 1, rng.random(7) + 1]
    got = plan.replicates(values, weights)
    blas = sum((c @ v) / (c @ w)[:, None] for c, v, w in zip(plan.strata, values, weights)) / 2
    assert np.allclose(got, blas, rtol=1e-12, atol=0)
    # a column's numbers do not depend on the columns beside it
    assert (plan.replicates([v[:, :1] for v in values], weights)[:, 0] == got[:, 0]).all()


def test_page_hits_compiled_loop_matches_array_form(monkeypatch):
    from leaderboard.metrics import retrieval

    rng = np.random.default_rng(5)
    for _ in range(50):
        nq, g, nc = rng.integers(1, 20), rng.integers(1, 6), rng.integers(0, 100)
        gd, gp = rng.integers(-2, 5, (nq, g)), rng.integers(1, 10, (nq, g))
        cq, cd, cs = rng.integers(0, nq, nc), rng.integers(-1, 5, nc), rng.integers(1, 10, nc)
        args = (cq, cd, cs, cs + rng.integers(0, 3, nc), rng.random(nc) < 0.2, gd, gp)
        compiled = retrieval.page_hits_batch(*args)
        with monkeypatch.context() as m:
            m.setattr(retrieval, "available", lambda: False)
            plain = retrieval.page_hits_batch(*args)
        assert all((a == b).all() and a.dtype == b.dtype for a, b in zip(compiled, plain))
