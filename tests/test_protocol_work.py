"""The protocol steps of one file share their work (`Track.protocol_work`) and the intermediate steps are scored
headline-only: neither may change a number. Every stored official value and deviation effect must equal, to
the last bit, what scoring each step on its own, in full, gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leaderboard import protocols
from leaderboard.scoring import check
from leaderboard.tracks import TRACKS

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "assets" / "demo" / "submissions"


def _checked(track: str, path: Path):
    checked = check(path.read_bytes(), path.name)
    assert checked.ok, checked.errors[:3]
    return checked


def _with_refusals(parsed: dict) -> dict:
    """A futurepedia file with every fifth prediction of each task a refusal of the scripts' phrase list."""
    out = {}
    for task, preds in parsed.items():
        units = {}
        for i, (unit, payload) in enumerate(preds.items()):
            if i % 5 == 0:
                payload = ("insufficient information", payload[1]) if task == "selection" else "insufficient information"
            units[unit] = payload
        out[task] = units
    return out


def _cases():
    for track in ("unidoc", "futurepedia", "vdr"):
        for path in sorted((DEMO / track).iterdir()):
            yield pytest.param(track, path, False, id=f"{track}-{path.name}")
    yield pytest.param("futurepedia", DEMO / "futurepedia" / "polyrag-xl.jsonl", True, id="futurepedia-refusals")


def _naive_steps(track, parsed, gold) -> list:
    """Each prefix of the deviations scored on its own, in full, with nothing shared."""
    names = [d.name for d in track.deviations]
    return [track.score_with(parsed, gold, frozenset(names[:i])) for i in range(len(names) + 1)]


@pytest.mark.parametrize(("track_name", "path", "refusals"), list(_cases()))
def test_shared_work_and_headline_only_steps_change_no_number(track_name, path, refusals):
    track = TRACKS[track_name]
    checked = _checked(track_name, path)
    parsed = _with_refusals(checked.parsed) if refusals else checked.parsed
    naive = _naive_steps(track, parsed, checked.gold)
    board = track.score(parsed, checked.gold)
    assert board.overall == naive[-1].overall
    official, effects = protocols.official_report(track, parsed, checked.gold, board)
    assert (official.overall, official.ci, official.breakdowns) == (naive[0].overall, naive[0].ci, naive[0].breakdowns)
    assert (official.n, official.missing) == (naive[0].n, naive[0].missing)
    assert official.extra.get("notes") == naive[0].extra.get("notes")
    for i, effect in enumerate(effects):
        before, after = naive[i].overall, naive[i + 1].overall
        expected = {
            k: after[k] - before[k] if after.get(k) is not None and before.get(k) is not None else None for k in effect["effect"]
        }
        assert effect["effect"] == expected, effect["name"]


@pytest.mark.parametrize("track_name", ["unidoc", "futurepedia", "vdr"])
def test_steps_in_any_order_share_work_correctly(track_name):
    """The shared work is keyed by what each fix changes: asked for the steps backwards, it gives the same."""
    track = TRACKS[track_name]
    path = sorted((DEMO / track_name).iterdir())[0]
    checked = _checked(track_name, path)
    names = [d.name for d in track.deviations]
    naive = _naive_steps(track, checked.parsed, checked.gold)
    work = track.protocol_work(checked.parsed, checked.gold)
    for i in reversed(range(len(names) + 1)):
        fixes = frozenset(names[:i])
        got = track.score_with(checked.parsed, checked.gold, fixes, headline_only=True, work=work)
        assert got.overall == naive[i].overall, sorted(fixes)
        full = track.score_with(checked.parsed, checked.gold, fixes, work=work)
        assert (full.overall, full.ci, full.breakdowns) == (naive[i].overall, naive[i].ci, naive[i].breakdowns)


_FRAGMENTS = st.sampled_from(
    ["Paris", "paris", "리스본", "准将", "准", "Lisboa", "ΣΑΣ", "  ", " ", "。", ", ", "a", "-", "Pays-Bas"]
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_pairs_scored_together_are_the_pairs_scored_alone(data):
    """FileWork scores the board's pairs and every step recipe's in one kernel call per normalisation; each
    pair must get the recall its own rows give it alone, whatever the predictions say (gold answers mixed in,
    short answers, repeats, spaces, punctuation)."""
    from leaderboard.metrics import ngram_kernel
    from leaderboard.tracks import futurepedia_official as fo

    track = TRACKS["futurepedia"]
    checked = _checked("futurepedia", sorted((DEMO / "futurepedia").iterdir())[0])
    gold = checked.gold
    answers = [a for r in gold.records[:20] for a in r.ori.values() for a in a]
    text = st.lists(st.one_of(_FRAGMENTS, st.sampled_from(answers)), max_size=6).map("".join)
    pool = data.draw(st.lists(text, min_size=1, max_size=12), label="predictions")
    step = data.draw(st.integers(1, 7), label="step")
    parsed = {}
    for task, preds in checked.parsed.items():  # the pool dealt out over every unit of the file
        texts = [pool[(i * step) % len(pool)] for i in range(len(preds))]
        parsed[task] = {u: (t, p[1]) if task == "selection" else t for (u, p), t in zip(preds.items(), texts)}
    work = track.protocol_work(parsed, gold)
    for task in parsed:
        for recipe in fo.STEP_RECIPES:
            pairs = work.pairs(task, recipe)
            layout = fo._selection_layout if task == "selection" else fo._answer_layout
            _, pred, row = layout(task, work, recipe)
            rows = fo.part_rows(gold, recipe)
            alone = ngram_kernel.recall_pairs(rows.needles, work.predictions(task, recipe), pred, row) / rows.size[row]
            assert np.array_equal(pairs.recall, alone), (task, recipe)
        layout, recall = work.board(task)
        board = fo.Recipe(True, True, True)
        alone = ngram_kernel.recall_pairs(gold.answer_rows.needles, work.predictions(task, board), layout[0], layout[1])
        assert np.array_equal(recall, alone), task


@pytest.mark.parametrize("path", sorted((DEMO / "futurepedia").iterdir()), ids=lambda p: p.name)
def test_board_recalls_from_part_counts_are_the_kernels_on_the_boards_rows(path):
    """The board's answer recalls, derived from its recipe's part counts (FileWork._board_recalls), are to the
    last bit what the kernel gives on the board's own answer rows."""
    from leaderboard.metrics import ngram_kernel
    from leaderboard.tracks.futurepedia import _board_layout

    checked = _checked("futurepedia", path)
    work = TRACKS["futurepedia"].protocol_work(checked.parsed, checked.gold)
    for task in checked.parsed:
        layout, recall = work.board(task)
        texts = work.texts(task)
        alone = ngram_kernel.recall_pairs(
            checked.gold.answer_rows.needles, ngram_kernel.normalised_points(texts), *_board_layout(task, work)[:2]
        )
        assert recall.tobytes() == alone.tobytes(), task


@pytest.mark.parametrize("with_nul", [False, True], ids=["plain", "a-prediction-holds-NUL"])
def test_a_files_bulk_passes_are_each_prediction_on_its_own(with_nul):
    """FileWork joins a task's predictions once for the refusals and both normalisations (each trusts that
    joined text without counting its NULs again); a prediction holding NUL sends the task one by one. Either
    way each prediction's points are its own normalisation's and its refusal its own."""
    from leaderboard.metrics.nale import refused, script_normalise
    from leaderboard.metrics.ngram import normalise
    from leaderboard.tracks.futurepedia_official import BOARD_NORMALISED, SCRIPT_NORMALISED, FileWork

    checked = _checked("futurepedia", DEMO / "futurepedia" / "polyrag-xl.jsonl")
    parsed = _with_refusals(checked.parsed)
    if with_nul:
        parsed = {
            task: {u: (p[0] + "\0 x。", p[1]) if task == "selection" else p + "\0 X。" for u, p in units.items()}
            for task, units in parsed.items()
        }
    work = FileWork(parsed, checked.gold)
    for task in parsed:
        texts = work.texts(task)
        assert (work.joined(task) is None) == with_nul
        for recipe, normalised in ((BOARD_NORMALISED, normalise), (SCRIPT_NORMALISED, lambda t: script_normalise(t.lower()))):
            points, starts = work.predictions(task, recipe)
            got = [points[starts[i] : starts[i + 1]].tobytes().decode("utf-32-le") for i in range(len(texts))]
            assert got == [normalised(t) for t in texts]
        assert work.refusal(task).tolist() == [refused(t) for t in texts]


@pytest.mark.parametrize("in_gold_order", [True, False], ids=["gold-order", "shuffled"])
def test_recipes_share_a_layout_only_where_their_parts_are_laid_out_alike(tmp_path, in_gold_order):
    """Twin recipes (fo._layout_twin) share one layout of a file's pairs. An answer with an empty part ("a, , b")
    splits into three parts for the scripts and two for the board: there the recipes are not twins, and each
    recipe's layout is still the one it builds alone."""
    import json
    import random

    from leaderboard.submission import parse_envelope
    from leaderboard.tracks import futurepedia_official as fo

    records = json.loads((ROOT / "assets/demo/gold/futurepedia/demo_answers.json").read_text(encoding="utf-8"))
    records[0]["ori_ans"]["en"] = records[0]["ori_ans"]["en"] + ", , " + records[0]["ori_ans"]["fr"]
    path = tmp_path / "gold.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    gold = TRACKS["futurepedia"].load_gold(path)
    script, board = fo.SCRIPT_NORMALISED, fo.BOARD_NORMALISED
    assert fo._layout_twin(gold, board) is not fo._layout_twin(gold, script)
    assert fo._layout_twin(gold, fo.Recipe(True, False, False)) is fo._layout_twin(gold, script)  # distinct: same split

    submission = DEMO / "futurepedia" / "polyrag-xl.jsonl"
    env = parse_envelope(submission.read_bytes(), submission.name)
    lines = env.records[:]
    if not in_gold_order:
        random.Random(3).shuffle(lines)
    data = "\n".join(json.dumps(x) for x in [{"track": "futurepedia", "system": env.system}, *lines]).encode()
    checked = check(data, "a.jsonl", {"futurepedia": path})
    assert checked.ok, checked.errors[:3]
    work = TRACKS["futurepedia"].protocol_work(checked.parsed, checked.gold)
    for task in ("monolingual", "crosslingual"):
        for recipe in fo.STEP_RECIPES:
            pairs, pred, row = fo._answer_layout(task, work, recipe)
            alone, alone_pred, alone_row = fo._laid_out(task, gold, recipe, work.positions(task))
            assert np.array_equal(pred, alone_pred) and np.array_equal(row, alone_row), (task, recipe)
            assert np.array_equal(pairs.strict_parts, alone.strict_parts), (task, recipe)
