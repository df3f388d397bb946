"""Futurepedia scored as its own scripts score it (eval_mono.py, eval_cross.py; selection as eval_multi.py),
with any subset of the board's fixes switched on (SCORING.md, "Official scripts"; the fixes are declared here,
the track's board scoring is futurepedia.py, which imports them).

The scripts score one file per query language (and document language): a file's value is the sum of every
answer part's recall over the number of parts, a refusal counting one part of -1; a task's headline is the
mean of its language values (cross-lingual: a language's value is the mean of its language pairs' values).
With mean-per-unit a unit's value is the mean over its parts and every unit weighs the same; with
missing-units-count a unit without a record scores 0 and counts. With all six fixes these are the board's
numbers (up to rounding; the board itself is `FuturepediaTrack.score`).

Key layout of the result: the board's metric keys for monolingual and cross-lingual (overall, CI, `_var`,
breakdowns `language` and `language_pair`); selection has no overall key here: breakdown `doc_language`
holds per document language `selection_recall` (mean recall of that language's replaced answer) and
`offered` (how many units offered that language).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from itertools import chain, permutations

import numpy as np

from ..metrics import ngram_kernel
from ..metrics.compiled import available, compiled
from ..metrics.nale import Recipe, part_row, refusals, script_points, split_answer
from ..metrics.stats import BootstrapPlan, one_blas_thread, percentiles
from .base import Deviation, Scores

LANGS = ("en", "fr", "es", "pt", "zh", "ja", "ko", "ar")
TASKS = ("monolingual", "crosslingual", "selection")
PAIRS = tuple(f"{q}-{d}" for q, d in permutations(LANGS, 2))

# The board's fixes to eval_mono.py / eval_cross.py of niane030422-cmd/NALE (and eval_multi.py for selection),
# in the order their effects are measured (SCORING.md, "Official scripts"); applied below.
DEVIATIONS = (
    Deviation(
        "distinct-3grams",
        "a part's 3-grams are a list: repeats kept, those holding a space left out",
        "the set of distinct 3-grams, spaces included (the seed's recipe)",
        "a repeated 3-gram counted twice weighs one stretch of the answer double, and dropping the 3-grams "
        "across a space leaves a two-syllable Korean or Chinese word pair with none: such answers score 0 "
        "even when named exactly",
    ),
    Deviation(
        "normalise-both-sides",
        "the prediction is lowercased, then punctuation removal and NFKD are each kept only when the text is "
        "one alphabetic or numeric token (so a single Hangul word is split into jamo, 'Pays-Bas' loses its "
        "hyphen, a sentence keeps both)",
        "NFKC, casefold, whitespace collapsed, on the answer and the prediction alike, whatever their length",
        "the same answer normalised one way as a gold and another way inside a sentence cannot match itself: "
        "'리스본' becomes jamo, the prediction's '리스본' does not",
    ),
    Deviation(
        "short-answers-score",
        "a part or a prediction shorter than 3 characters scores 0",
        "a gold shorter than 3 characters scores 1 when it occurs in the prediction, else 0",
        "32 Chinese, Japanese and Korean answers (e.g. 准将) have no 3-gram: the script scores them 0 even "
        "when answered exactly, a bias against the languages the track measures",
    ),
    Deviation(
        "mean-per-unit",
        "every part of every answer weighs the same in a language's mean (a four-city answer counts four "
        "times); cross-lingual loose takes the better of the two languages part by part, by position",
        "a unit's value is the mean over its parts and every unit weighs the same; loose is the better of "
        "the two answers' values",
        "a question's weight should not depend on how many parts its answer has, and parts of answers in "
        "two languages are not aligned by position",
    ),
    Deviation(
        "refusals-are-text",
        "a prediction holding one of 10 'insufficient information' phrases scores -1 (selection: is left out)",
        "a refusal is scored like any prediction: 0 when it names nothing of the answer",
        "a penalty below 0 for a refusal, matched on exact wordings only (a capital letter escapes it), "
        "makes the number depend on phrasing, not on the answer",
    ),
    Deviation(
        "missing-units-count",
        "units the file has no record for are left out (the scripts score the records they are given)",
        "a unit without a record scores 0 and counts",
        "leaving out hard questions must not raise the mean",
    ),
)
FIXES = tuple(d.name for d in DEVIATIONS)

LANG_POS = {q: i for i, q in enumerate(LANGS)}


@dataclass(frozen=True)
class PartRows:
    """Every answer part of the gold as a kernel row, for one recipe; built once per gold load and recipe."""

    needles: ngram_kernel.NeedleRows
    size: np.ndarray  # per row: the denominator of its recall
    ori_first: np.ndarray  # [record position, language code]: the first row of its answer's parts
    ori_count: np.ndarray  # ... and how many parts
    # [record position, document language code, j]: the j-th answer language's replaced answer, in the gold's
    # order (count 0 past the last); new_answers[record position, document language code]: how many there are
    new_first: np.ndarray
    new_count: np.ndarray
    new_answers: np.ndarray


def part_rows(gold, recipe: Recipe) -> PartRows:
    cache = gold.protocol_cache
    if recipe not in cache:
        rows, sizes = [], []
        first = np.zeros((len(gold.records), len(LANGS)), dtype=np.int64)
        count = np.zeros_like(first)
        new_first = np.zeros((len(gold.records), len(LANGS), len(LANGS)), dtype=np.int64)
        new_count = np.zeros_like(new_first)
        new_answers = np.zeros_like(first)

        def add(parts) -> tuple[int, int]:
            start = len(rows)
            for part in parts:
                needles, counts, size = part_row(part, recipe)
                rows.append((needles, counts))
                sizes.append(size)
            return start, len(parts)

        for i, r in enumerate(gold.records):
            for q, answer in r.raw_ori.items():
                first[i, LANG_POS[q]], count[i, LANG_POS[q]] = add(split_answer(answer, recipe, split=True))
            for d, by_lang in r.raw_new.items():
                c = LANG_POS[d]
                new_answers[i, c] = len(by_lang)
                for j, answer in enumerate(by_lang.values()):
                    new_first[i, c, j], new_count[i, c, j] = add(split_answer(answer, recipe, split=False))
        cache[recipe] = PartRows(
            ngram_kernel.NeedleRows(rows),
            np.array(sizes, dtype=np.float64),
            first,
            count,
            new_first,
            new_count,
            new_answers,
        )
    return cache[recipe]


def _layout(gold, task: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per unit of `task` in canonical order: its record's position, query and document language codes."""
    cache = gold.protocol_cache
    if task not in cache:
        keys = gold.unit_keys[task]
        record = np.fromiter((gold.index[u[0]] for u in keys), dtype=np.int64, count=len(keys))
        query = np.fromiter((LANG_POS[u[1]] for u in keys), dtype=np.int64, count=len(keys))
        doc = np.fromiter((LANG_POS[u[-1]] for u in keys), dtype=np.int64, count=len(keys))
        cache[task] = record, query, doc
    return cache[task]


def _codes(codes: dict, items, count: int = -1) -> np.ndarray:
    """[codes[x] for x in items] as an int64 array, looked up at C level (no Python frame per item)."""
    return np.fromiter(map(codes.__getitem__, items), dtype=np.int64, count=count)


def _pair_cell(query: np.ndarray, doc: np.ndarray) -> np.ndarray:
    """A (query, document) language pair's index in PAIRS: permutations(LANGS, 2) is query-major, the query
    itself skipped."""
    return query * (len(LANGS) - 1) + doc - (doc > query)


def _expand(first: np.ndarray, count: np.ndarray):
    """(group, row, position) of every part: group g's parts are rows first[g] .. first[g] + count[g] - 1."""
    group = np.repeat(np.arange(len(count)), count)
    position = np.arange(len(group)) - (np.cumsum(count) - count)[group]
    return group, first[group] + position, position


@dataclass(frozen=True)
class _Options:
    recipe: Recipe
    per_unit: bool
    refusals_are_text: bool
    count_missing: bool

    @classmethod
    def of(cls, fixes: frozenset[str]) -> _Options:
        unknown = sorted(fixes - set(FIXES))
        if unknown:
            raise ValueError(f"futurepedia: unknown fix {', '.join(unknown)} (known: {', '.join(FIXES)})")
        return cls(
            Recipe("distinct-3grams" in fixes, "normalise-both-sides" in fixes, "short-answers-score" in fixes),
            "mean-per-unit" in fixes,
            "refusals-are-text" in fixes,
            "missing-units-count" in fixes,
        )


# The recipes of the protocol steps (protocols.deviation_effects applies the fixes in their declared order):
# their pairs are scored together (FileWork._recalls).
STEP_RECIPES = tuple(dict.fromkeys(_Options.of(frozenset(FIXES[:i])).recipe for i in range(len(FIXES) + 1)))
# A recipe of each normalisation of the predictions (all that `_predictions` reads of a recipe)
BOARD_NORMALISED = next(r for r in STEP_RECIPES if r.board_normalisation)
SCRIPT_NORMALISED = next(r for r in STEP_RECIPES if not r.board_normalisation)
BOARD_RECIPE = _Options.of(frozenset(FIXES)).recipe  # all the fixes: the board's own recipe


def _predictions(texts: list[str], recipe: Recipe, joined: str | None = None):
    if recipe.board_normalisation:
        return ngram_kernel.normalised_points(texts, joined=joined)
    return script_points(texts, joined)


def _repeated_sums(found, weight, parts, out):
    """out[g] = 0.0 + weight[e] added found[e] times, for each of group g's parts[g] entries e in turn (the
    groups' entries one after another)."""
    e = 0
    for g in range(len(parts)):
        total = 0.0
        for _ in range(parts[g]):
            for _ in range(int(found[e])):
                total += weight[e]
            e += 1
        out[g] = total


def _aligned_max(groups: int, width: int, group, position, recall, limit=None) -> np.ndarray:
    """Per group, per part position, the best recall (0 where none): the scripts' code-switch lists; with
    `limit`, only the pairs at a position under their group's limit."""
    out = np.zeros((groups, max(width, 1)))
    if limit is None:
        limit = np.full(groups, out.shape[1], dtype=np.int64)
    args = (np.ascontiguousarray(group, dtype=np.int64), np.ascontiguousarray(position, dtype=np.int64))
    recall = np.ascontiguousarray(recall, dtype=np.float64)
    if not compiled(_scatter_max)(out, *args, recall, np.ascontiguousarray(limit, dtype=np.int64)):
        raise ValueError("a pair's group or position is outside the table")
    return out


def _scatter_max(out, group, position, recall, limit) -> bool:
    """out[group[e], position[e]] = max(itself, recall[e]) for each e in turn whose position is under its
    group's limit, NaN winning: what np.maximum.at does, without its per-element dispatch (a third of a file's
    official scoring), nor a pass per array to select and check the pairs. False (out left part-filled) when a
    group or a kept position is outside the table: the compiled loop checks its own indices."""
    rows, width = out.shape
    for e in range(len(group)):
        g, p, v = group[e], position[e], recall[e]
        if g < 0 or g >= rows or p < 0:
            return False
        if p < limit[g]:
            if p >= width:
                return False
            if v > out[g, p] or v != v:
                out[g, p] = v
    return True


class FileWork:
    """What the protocol steps of one file share, each part computed once: per task the predictions' texts,
    which are refusals, their points per normalisation, and per answer recipe every (prediction, answer part)
    pair's recall. Steps that differ only in how units are aggregated (mean-per-unit, refusals-are-text,
    missing-units-count) reuse one recipe's pairs as they are."""

    def __init__(self, parsed: dict, gold, board_layout=None):
        """board_layout(task, work): the board's (prediction, answer row) pairs of a task (and whatever else
        its scoring reads), whose recalls are then computed in the same kernel calls as the steps' own."""
        self.gold = gold
        self.board_layout = board_layout
        self._parts: dict = {}
        # Each task's units in the gold's canonical order, whatever the file's: every sum over predictions then
        # adds the same numbers in the same order, so the same predictions listed otherwise (a duplicate by
        # fingerprint) score bit for bit alike, and a complete file takes the gold's own layout. New dicts, not
        # `parsed`: a Predictions keeps its work (`.work`), and a cycle between the two would leave every
        # file's predictions to the cyclic collector (a ~5 ms pass a file).
        self.parsed = {task: self._in_canonical_order(task, units) for task, units in parsed.items()}

    def once(self, key, compute):
        if key not in self._parts:
            self._parts[key] = compute()
        return self._parts[key]

    def texts(self, task: str) -> list[str]:
        preds = self.parsed[task]
        return self.once(("texts", task), lambda: [p for p, _ in preds.values()] if task == "selection" else list(preds.values()))

    def joined(self, task: str) -> str | None:
        """The task's predictions joined by NUL, which the refusals and both normalisations start from, when
        they are one run of ngram_kernel.CHUNK_CHARS and none holds NUL (else each run is joined on its own, as
        its copies are held one run at a time); dropped once the task's pairs are scored."""
        texts = self.texts(task)
        return self.once(("joined", task), lambda: ngram_kernel.joined_texts(texts))

    def refusal(self, task: str) -> np.ndarray:
        return self.once(("refusal", task), lambda: np.array(refusals(self.texts(task), self.joined(task)), dtype=bool))

    def predictions(self, task: str, recipe: Recipe):
        return self.once(
            ("points", task, recipe.board_normalisation), lambda: _predictions(self.texts(task), recipe, self.joined(task))
        )

    def positions(self, task: str) -> np.ndarray:
        """Per prediction: its unit's position in the task's canonical order (gold.unit_keys: record-major,
        then the query language, then the document language); ascending, as the predictions are in that order."""
        return self._parts[("positions", task)]

    def _in_canonical_order(self, task: str, units: dict) -> dict:
        """`units` in canonical order (itself when already in it), their positions kept. A key's position comes
        from its fields one column at a time: a dict lookup of each whole key tuple (hashing and comparing every
        field) costs some 3x as much."""
        keys = self.gold.unit_keys[task]
        if len(units) == len(keys) and list(units) == keys:  # complete, in the gold's order: compared, not coded
            self._parts[("positions", task)] = np.arange(len(keys))
            return units
        ks = np.zeros(0, dtype=np.int64)
        if units:
            columns = list(zip(*units))  # a key is (id, query language[, document language])
            record, query = _codes(self.gold.index, columns[0]), _codes(LANG_POS, columns[1])
            if task == "crosslingual":
                ks = record * len(PAIRS) + _pair_cell(query, _codes(LANG_POS, columns[2]))
            else:
                ks = record * len(LANGS) + query
        if (ks[1:] > ks[:-1]).all():  # positions are unique: strictly increasing is in order
            self._parts[("positions", task)] = ks
            return units
        order = np.argsort(ks)
        self._parts[("positions", task)] = ks[order]
        items = list(units.items())
        return dict([items[i] for i in order.tolist()])

    def selection_groups(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per (selection prediction, offered document language) group: its prediction, language and record."""

        def compute():
            gold, preds = self.gold, self.parsed["selection"]
            docs = [d for _, d in preds.values()]
            offered = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
            unit = np.repeat(np.arange(len(preds)), offered)
            lang = _codes(LANG_POS, chain.from_iterable(docs), len(unit))
            record = _codes(gold.index, (rid for rid, _ in preds), len(preds))[unit]
            return unit, lang, record

        return self.once("selection groups", compute)

    @staticmethod
    def batched(task: str) -> tuple[Recipe, ...]:
        """The recipes whose pairs `_recalls` scores together. Selection has no headline, so the steps between
        the protocols never read its pairs: only the official protocol's recipe (any other is scored alone
        when asked for)."""
        return STEP_RECIPES[:1] if task == "selection" else STEP_RECIPES

    def pairs(self, task: str, recipe: Recipe) -> _Pairs:
        if recipe in self.batched(task) and ("pairs", task, recipe) not in self._parts:
            self._recalls(task)
        layout = _selection_layout if task == "selection" else _answer_layout

        def alone():
            pairs, pred, row = layout(task, self, recipe)
            rows = part_rows(self.gold, recipe)
            return pairs.with_found(ngram_kernel.recall_pairs(rows.needles, self.predictions(task, recipe), pred, row), rows)

        return self.once(("pairs", task, recipe), alone)

    def board(self, task: str) -> tuple:
        """(the board's layout of the task, as board_layout gives it; the recall of each of its pairs)."""
        if ("board", task) not in self._parts:
            self._recalls(task)
        return self._parts[("board", task)]

    def _recalls(self, task: str) -> None:
        """Every pair recall of a task in one kernel call: the pairs of each step recipe, on either
        normalisation of the predictions, and the board's own (board normalisation; those the board's
        recipe's pairs give are derived from them, `_board_recalls`). The kernel is given
        each prediction's board-normalised points, and its script-normalised ones only where they differ
        (for most predictions both normalisations give one text): a prediction's grams are then built once
        for all its pairs. Each pair's recall is the kernel's, however the pairs are grouped, so every step
        reads the numbers it would compute alone."""
        gold = self.gold
        recipes = list(self.batched(task))
        layout = _selection_layout if task == "selection" else _answer_layout
        laid = [layout(task, self, r) for r in recipes]
        sets = [part_rows(gold, r).needles for r in recipes]
        rows = [r for _, _, r in laid]
        points, script_pred = self._both_normalisations(task, recipes)
        preds = [p if r.board_normalisation else script_pred[p] for r, (_, p, _) in zip(recipes, laid)]
        board = None if self.board_layout is None else self.board_layout(task, self)
        # The board's answers are its recipe's parts (selection's conflicting answers are not batched): their
        # recalls follow from the parts' counts found (`_board_recalls`), without a lookup of their own.
        board_in_kernel = board is not None and BOARD_RECIPE not in recipes
        if board_in_kernel:
            sets.append(gold.answer_rows.needles)
            preds.append(board[0])
            rows.append(board[1])
        key = ("joined rows", board_in_kernel, tuple(recipes))
        if key not in gold.protocol_cache:
            gold.protocol_cache[key] = ngram_kernel.NeedleRows.joined(sets)
        joined, offsets = gold.protocol_cache[key]
        # A recipe laid out as an earlier one (the same pairs) scores a pair as that one does when the pair has the
        # same prediction points and the same row there: only its other pairs go to the kernel, the rest are
        # copied from the earlier recipe's (itself complete, copied or not). Each recipe copies from the one
        # that leaves the fewest pairs to score: the steps add one fix at a time, so that is mostly the step
        # before (board-normalisation leaves the parts that normalise alike, short-answers-score all but the
        # short ones), where the first recipe that qualifies, the scripts' own lists, shares few rows.
        scored = [np.ones(len(p), dtype=bool) for p in preds]
        same_as: dict[int, int] = {}
        for i in range(1, len(recipes)):
            for j in range(i):
                # (a recipe's preds and rows are its pairs': one length; twin recipes share one rows array)
                if rows[i] is rows[j] or np.array_equal(rows[i], rows[j]):
                    mask = _rows_differ(gold, recipes[j], recipes[i])[rows[i]] | (preds[i] != preds[j])
                    if mask.sum() < scored[i].sum():
                        same_as[i], scored[i] = j, mask
        pred = np.concatenate([p[m] for p, m in zip(preds, scored)])
        row = np.concatenate([(r + o)[m] for r, o, m in zip(rows, offsets, scored)])
        order = ngram_kernel.grouped_order(pred, len(points[1]) - 1)  # a prediction's pairs together: its grams are built once
        found = np.empty(len(pred))
        found[order] = ngram_kernel.recall_pairs(joined, points, pred[order], row[order])
        bounds = np.cumsum([0, *(int(m.sum()) for m in scored)])
        per_set = []
        for i, m in enumerate(scored):
            mine = found[bounds[i] : bounds[i + 1]]
            if i in same_as:
                mine, part = per_set[same_as[i]].copy(), mine
                mine[m] = part
            per_set.append(mine)
        for i, (r, (pairs, _, _)) in enumerate(zip(recipes, laid)):
            self._parts[("pairs", task, r)] = pairs.with_found(per_set[i], part_rows(gold, r))
        if board is not None:
            found = per_set[-1] if board_in_kernel else self._board_recalls(task, per_set[recipes.index(BOARD_RECIPE)])
            self._parts[("board", task)] = (board, found)

    def _board_recalls(self, task: str, found: np.ndarray) -> np.ndarray:
        """The recall of each of the board's answers of a task (monolingual: per prediction; cross-lingual:
        per prediction its query language's, then its documents' language's) from `found`, the counts found
        of its parts under the board's recipe (BOARD_RECIPE, whose parts are the board's: the same split,
        normalisation and needles). An answer's row gives each needle of part p the weight 1 / (p's needles
        x the answer's parts), and the kernel adds a row's weights found one by one in needle order (part by
        part): adding each part's weight as many times as it has needles found is that very sum, bit for bit."""
        pairs = self._parts[("pairs", task, BOARD_RECIPE)]
        parts = pairs.strict_parts if task == "monolingual" else np.stack([pairs.strict_parts, pairs.other_parts], 1).ravel()
        weight = 1.0 / (part_rows(self.gold, BOARD_RECIPE).size[pairs.row] * np.repeat(parts, parts))
        parts = np.ascontiguousarray(parts, dtype=np.int64)
        if len(found) != len(weight) or (parts < 0).any() or int(parts.sum()) != len(found):
            raise ValueError("the board's parts do not match the counts found")  # the compiled loop does not check
        out = np.zeros(len(parts))
        compiled(_repeated_sums)(np.ascontiguousarray(found), weight, parts, out)
        return out

    def _both_normalisations(self, task: str, recipes) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
        """(the points the kernel scores this task's pairs on: every prediction board-normalised, then the
        script-normalised ones that differ; per prediction, the index of its script-normalised points there).
        Every batched pair is scored at once, so neither normalisation's points (4 bytes a character of the
        task's predictions) need outlive the call (a recipe scored alone, off the batch, builds them again)."""
        board = self.predictions(task, BOARD_NORMALISED)
        script = None if all(r.board_normalisation for r in recipes) else self.predictions(task, SCRIPT_NORMALISED)
        self.refusal(task)  # (every official step reads it) while the joined text is at hand
        for key in (("points", task, True), ("points", task, False), ("joined", task)):
            self._parts.pop(key, None)
        count = len(board[1]) - 1
        if script is None:
            return board, np.arange(count)
        differ = np.flatnonzero(~ngram_kernel.same_texts(board, script))
        script_pred = np.arange(count)
        if not len(differ):
            return board, script_pred
        script_pred[differ] = count + np.arange(len(differ))
        return ngram_kernel.appended(board, script, differ), script_pred


def _rows_differ(gold, a: Recipe, b: Recipe) -> np.ndarray:
    """Per row of two recipes' PartRows (laid out alike): whether its needles, weights or size differ."""
    key = ("rows differ", a, b)
    if key not in gold.protocol_cache:
        x, y = part_rows(gold, a), part_rows(gold, b)
        n = len(x.needles)
        differ = np.ones(n, dtype=bool)
        if len(y.needles) == n:
            for r in range(n):
                xs, xe, ys, ye = x.needles.start[r], x.needles.start[r + 1], y.needles.start[r], y.needles.start[r + 1]
                differ[r] = not (
                    x.size[r] == y.size[r]
                    and np.array_equal(x.needles.codes[xs:xe], y.needles.codes[ys:ye])
                    and np.array_equal(x.needles.weights[xs:xe], y.needles.weights[ys:ye])
                )
        gold.protocol_cache[key] = differ
    return gold.protocol_cache[key]


@dataclass(frozen=True)
class _Pairs:
    """Every (prediction, answer part) pair of a task under one recipe, in prediction order, with its recall.

    Monolingual and cross-lingual: `group` is the prediction, `slot` 0 for the query language's answer and 1
    for the documents' language's. Selection: `group` is the (prediction, offered document language) group,
    `cell` the group's answer language slot (group * len(LANGS) + j); per group its prediction (`unit`),
    document language and record, and `counts` the parts per answer language."""

    ks: np.ndarray  # per prediction: its unit's position in the task's canonical order
    group: np.ndarray
    position: np.ndarray
    recall: np.ndarray
    slot: np.ndarray | None = None
    strict_parts: np.ndarray | None = None
    other_parts: np.ndarray | None = None
    cell: np.ndarray | None = None
    unit: np.ndarray | None = None
    lang: np.ndarray | None = None
    record: np.ndarray | None = None
    counts: np.ndarray | None = None
    row: np.ndarray | None = None  # each pair's answer part (a PartRows row)

    def with_found(self, found: np.ndarray, rows: PartRows) -> _Pairs:
        """These pairs with their recall, from the kernel's sums of counts found (`found`, in pair order)."""
        return replace(self, recall=found / rows.size[self.row])


def _layout_twin(gold, recipe: Recipe) -> Recipe:
    """The first step recipe whose answers' parts are laid out as `recipe`'s (each answer's first row and count
    of parts alike, all `_laid_out` reads: the recipes differ in needles and sizes, not in the split), else
    `recipe`: twins share one layout of a file's answer pairs, built once (the same pairs, rows and predictions)."""
    key = ("layout twin", recipe)
    if key not in gold.protocol_cache:
        mine = part_rows(gold, recipe)
        fields = ("ori_first", "ori_count")
        gold.protocol_cache[key] = next(
            r
            for r in (*STEP_RECIPES, recipe)
            if all(np.array_equal(getattr(part_rows(gold, r), f), getattr(mine, f)) for f in fields)
        )
    return gold.protocol_cache[key]


def _answer_layout(task: str, work: FileWork, recipe: Recipe) -> tuple[_Pairs, np.ndarray, np.ndarray]:
    """(the task's pairs under `recipe`, recall not yet computed; each pair's prediction and kernel row), one
    object for twin recipes (`_layout_twin`), only ever read. A file with every unit of the task, in the
    canonical order (as a complete file in the gold's order lists them), has the gold's own layout: built once
    per gold and recipe."""
    gold, ks = work.gold, work.positions(task)
    recipe = _layout_twin(gold, recipe)
    if len(ks) != len(gold.unit_keys[task]) or not np.array_equal(ks, np.arange(len(ks))):
        return work.once(("layout", task, recipe), lambda: _laid_out(task, gold, recipe, ks))
    key = ("complete layout", task, recipe)
    if key not in gold.protocol_cache:
        gold.protocol_cache[key] = _laid_out(task, gold, recipe, np.arange(len(ks)))
    return gold.protocol_cache[key]


def _laid_out(task: str, gold, recipe: Recipe, ks: np.ndarray) -> tuple[_Pairs, np.ndarray, np.ndarray]:
    rows = part_rows(gold, recipe)
    record, query, doc = (x[ks] for x in _layout(gold, task))
    strict_parts = rows.ori_count[record, query]
    other_parts = None
    if task == "crosslingual":
        # a prediction's pairs together (its grams are built once): its strict parts, then the other answer's
        other_parts = rows.ori_count[record, doc]
        group, _, at = _expand(np.zeros(len(ks), dtype=np.int64), strict_parts + other_parts)
        strict_of = strict_parts[group]
        slot = (at >= strict_of).astype(np.int64)
        position = at - slot * strict_of
        row = np.where(slot == 1, rows.ori_first[record, doc][group], rows.ori_first[record, query][group]) + position
    else:
        group, row, position = _expand(rows.ori_first[record, query], strict_parts)
        slot = np.zeros(len(group), dtype=np.int64)
    return _Pairs(ks, group, position, None, slot, strict_parts, other_parts, row=row), group, row


def _selection_layout(task: str, work: FileWork, recipe: Recipe) -> tuple[_Pairs, np.ndarray, np.ndarray]:
    rows = part_rows(work.gold, recipe)
    unit, lang, record = work.selection_groups()
    counts = rows.new_count[record, lang]  # (groups, answer languages)
    cell, row, position = _expand(rows.new_first[record, lang].ravel(), counts.ravel())
    group = cell // len(LANGS)
    empty = np.zeros(0, dtype=np.int64)
    pairs = _Pairs(empty, group, position, None, cell=cell, unit=unit, lang=lang, record=record, counts=counts, row=row)
    return pairs, unit[group], row


def score_official(
    parsed: dict, gold, fixes: frozenset[str], *, headline_only: bool = False, work: FileWork | None = None
) -> Scores:
    """The submission's numbers with only `fixes` applied (none: the scripts' own protocol). headline_only:
    the overall values alone (no CI, breakdowns nor units); `work`: what this file's other protocol steps
    computed already."""
    options = _Options.of(frozenset(fixes))
    work = work if work is not None else FileWork(parsed, gold)
    rows = part_rows(gold, options.recipe)
    overall: dict[str, float | None] = {}
    ci: dict[str, list[float]] = {}
    breakdowns: dict[str, dict] = {}
    units: dict[str, np.ndarray] = {}
    n = missing = 0
    for task, preds in parsed.items():
        keys = gold.unit_keys[task]
        missing += len(keys) - len(preds)
        if task == "selection":
            if headline_only:  # selection has no headline: only how many units it scores
                scored = len(preds) if options.refusals_are_text else int((~work.refusal("selection")).sum())
                n += len(keys) if options.count_missing else scored
                continue
            cells, scored = _selection(work, rows, options)
            n += len(keys) if options.count_missing else scored  # as the board's n, which counts them in the entropy
            if cells:
                breakdowns["doc_language"] = cells
            continue
        num, value = _unit_sums(task, work, rows, options, with_value=not headline_only)
        sums = _denominators(task, work, rows, options)
        n += sums.included_count
        if not headline_only:
            answered = np.zeros(len(keys), dtype=bool)
            answered[work.pairs(task, options.recipe).ks] = True
        shared: dict = {}  # the task's metrics share its denominators' bootstrap: resampled once
        for key in num:
            head, per_lang, per_cell, bounds = _hierarchical(task, num[key], sums, work, not headline_only, shared)
            overall[key] = head
            if bounds is not None:
                ci[key] = bounds
            present = [v for v in per_lang.values() if v is not None]
            overall[f"{key}_var"] = _variance(present) if present else None
            if headline_only:  # a step's breakdowns and units are never read
                continue
            for q, v in per_lang.items():
                breakdowns.setdefault("language", {}).setdefault(q, {})[key] = v
            if task == "crosslingual":
                for pair, v in per_cell.items():
                    breakdowns.setdefault("language_pair", {}).setdefault(pair, {})[key] = v
            units[key] = np.where(answered, value[key], np.nan)
    return Scores(
        n=n,
        missing=missing,
        overall=overall,
        ci=ci,
        breakdowns={a: breakdowns[a] for a in ("language", "language_pair", "doc_language") if a in breakdowns},
        units=units,
        extra={"tasks": [t for t in ("monolingual", "crosslingual", "selection") if t in parsed]},
    )


def _cells(gold, task: str) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """(the task's cells: languages, cross-lingual language pairs; per unit in canonical order its cell, and its
    (record, cell) position in a records x cells table); built once per gold."""
    key = ("cells", task)
    cache = gold.protocol_cache
    if key not in cache:
        cluster, query, doc = _layout(gold, task)
        names, cell = (PAIRS, _pair_cell(query, doc)) if task == "crosslingual" else (LANGS, query)
        cache[key] = names, cell, cluster * len(names) + cell
    return cache[key]


def _part_sums(task: str, pairs: _Pairs):
    """Per prediction: the sum of its answer's part recalls and their mean; cross-lingual, also the mean of its
    documents' language answer's, and the loose sum (the best recall at each part position, summed: the
    scripts' code-switch list). The sums add each slot's own pairs' recalls in pair order, as a bincount of
    that slot's pairs alone does; the compiled loop scores all three in one pass over the pairs."""
    count = len(pairs.ks)
    parts = pairs.strict_parts
    other_mean = loose = None
    if task == "crosslingual":
        group, slot, position, recall = pairs.group, pairs.slot, pairs.position, pairs.recall
        width = int(position.max()) + 1 if len(position) else 1
        if available() and width <= _PAIRWISE_BLOCK:
            total, other, loose = np.zeros(count), np.zeros(count), np.empty(count)
            args = (np.ascontiguousarray(x, dtype=np.int64) for x in (group, slot, position))
            if not compiled(_cross_loop)(*args, np.ascontiguousarray(recall, dtype=np.float64), total, other, loose, width):
                raise ValueError("a pair's prediction, slot or position is outside the table")
        else:
            both = np.bincount(group * 2 + slot, recall, minlength=2 * count)
            total, other = both[0::2], both[1::2]
            loose = _row_sums(_aligned_max(count, width, group, position, recall))
        other_parts = pairs.other_parts
        other_mean = np.divide(other, other_parts, out=np.zeros(count), where=other_parts > 0)
    else:
        total = np.bincount(pairs.group, pairs.recall, minlength=count)
    return total, np.divide(total, parts, out=np.zeros(count), where=parts > 0), other_mean, loose


def _cross_loop(group, slot, position, recall, strict, other, loose, width) -> bool:
    """strict[g] / other[g] += recall[e] for each pair e of prediction g in its slot, in pair order (a
    bincount's sums); loose[g] = the sum of the best recall (NaN winning) at each position 0 .. width - 1 (0.0
    where none), in numpy's order for a row of `width` values (`_row_sums`; width at most 128). False when a
    pair's prediction, slot or position is outside the table: the loop checks its own indices."""
    count = len(strict)
    table = np.zeros((count, width))
    for e in range(len(group)):
        g, s, p, v = group[e], slot[e], position[e], recall[e]
        if g < 0 or g >= count or s < 0 or s > 1 or p < 0 or p >= width:
            return False
        if s == 0:
            strict[g] += v
        else:
            other[g] += v
        if v > table[g, p] or v != v:
            table[g, p] = v
    for g in range(count):
        if width < 8:
            total = 0.0
            for p in range(width):
                total += table[g, p]
        else:
            r0, r1, r2, r3 = table[g, 0], table[g, 1], table[g, 2], table[g, 3]
            r4, r5, r6, r7 = table[g, 4], table[g, 5], table[g, 6], table[g, 7]
            p = 8
            while p < width - width % 8:
                r0 += table[g, p]
                r1 += table[g, p + 1]
                r2 += table[g, p + 2]
                r3 += table[g, p + 3]
                r4 += table[g, p + 4]
                r5 += table[g, p + 5]
                r6 += table[g, p + 6]
                r7 += table[g, p + 7]
                p += 8
            total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
            while p < width:
                total += table[g, p]
                p += 1
            total = 0.0 + total
        loose[g] = total
    return True


def _unit_sums(task: str, work: FileWork, rows: PartRows, options: _Options, with_value: bool = True):
    """Per metric: per prediction what it adds to its cell's numerator, and (with_value) per gold unit
    (canonical order) its own value."""
    keys = work.gold.unit_keys[task]
    pairs = work.pairs(task, options.recipe)
    ks, count = pairs.ks, len(pairs.ks)
    # steps sharing a recipe (those past short-answers-score) share its pairs, and so these sums
    strict, mean, other_mean, loose = work.once(("part sums", task, options.recipe), lambda: _part_sums(task, pairs))
    names = ("monolingual",) if task == "monolingual" else ("crosslingual_strict", "crosslingual_loose")
    unit_num = {names[0]: mean if options.per_unit else strict}
    if task == "crosslingual":
        unit_num[names[1]] = np.maximum(mean, other_mean) if options.per_unit else loose
    if not options.refusals_are_text and _any_refusal(work, task):
        refusal = work.refusal(task)
        for key in names:
            unit_num[key] = np.where(refusal, -1.0, unit_num[key])
    value = {}
    if with_value:
        unit_den = _denominators(task, work, rows, options).unit_den
        for key in names:
            value[key] = np.zeros(len(keys))
            value[key][ks] = np.divide(unit_num[key], unit_den, out=np.zeros(count), where=unit_den > 0)
    return unit_num, value


def _any_refusal(work: FileWork, task: str) -> bool:
    return work.once(("any refusal", task), lambda: bool(work.refusal(task).any()))


@dataclass(frozen=True)
class _Denominators:
    """What a task's metrics share under one step's options: per prediction and per gold unit (canonical order,
    0.0 where a unit does not count) what it adds to the denominator, and how many units count; per cell how
    many units count and its denominator (None without one or without a unit: `_divisors`)."""

    unit_den: np.ndarray
    den: np.ndarray
    included_count: int
    counted: np.ndarray
    divisors: list


def _denominators(task: str, work: FileWork, rows: PartRows, options: _Options) -> _Denominators:
    """Shared by the steps that agree on them: a unit's parts are its answer's split, which depends on the
    recipe's normalisation alone (nale.split_answer); with mean-per-unit every denominator is 1, a refusal's
    too."""
    if options.per_unit:
        key = ("denominators", task, "per unit", options.count_missing)
    else:
        key = ("denominators", task, options.recipe.board_normalisation, options.refusals_are_text, options.count_missing)

    def compute():
        gold = work.gold
        keys = gold.unit_keys[task]
        ks = work.positions(task)
        unit_den = np.ones(len(ks)) if options.per_unit else work.pairs(task, options.recipe).strict_parts.astype(np.float64)
        if not options.per_unit and not options.refusals_are_text and _any_refusal(work, task):
            unit_den = np.where(work.refusal(task), 1.0, unit_den)  # (mean-per-unit's are all 1 already)
        den = np.zeros(len(keys))
        if options.count_missing:
            all_record, all_query, _ = _layout(gold, task)
            den[:] = 1.0 if options.per_unit else rows.ori_count[all_record, all_query]
        den[ks] = unit_den
        names, cell, _ = _cells(gold, task)

        def counted():
            included = np.ones(len(keys), dtype=bool) if options.count_missing else np.zeros(len(keys), dtype=bool)
            included[ks] = True
            return np.bincount(cell, included.astype(np.float64), minlength=len(names))

        counts = work.once(("counted", task, options.count_missing), counted)
        cell_den = np.bincount(cell, den, minlength=len(names))  # (den is 0.0 wherever a unit does not count)
        included_count = len(keys) if options.count_missing else len(ks)  # (positions are distinct)
        return _Denominators(unit_den, den, included_count, counts, _divisors(cell_den, counts))

    return work.once(key, compute)


def _hierarchical(
    task: str, unit_num: np.ndarray, sums: _Denominators, work: FileWork, with_ci: bool = True, shared: dict | None = None
):
    """(headline, {language: value}, {pair: value}, CI): per cell (a language; cross-lingual: a language
    pair) the included units' numerators over their denominators; a cross-lingual language is the mean of
    its pairs; the headline the mean of the languages. Cells without a unit are left out at each level.
    The CI resamples record ids (all units of an id together) with the board's bootstrap plan. Without
    `with_ci` (a headline-only step): no CI (None) and no per-cell values ({}).

    `unit_num`: per prediction, what it adds to its cell's numerator. A cell's sums are its units' in canonical
    order (record-major; a unit without a prediction adds 0.0 to a sum that is never -0.0: nothing), and a unit
    is alone in its (record, cell): the sum over records of the records x cells table the bootstrap resamples,
    bit for bit."""
    gold = work.gold
    names, cell, flat = _cells(gold, task)
    per_query = len(names) // len(LANGS)  # a language's cells are one block of the cells, in order
    counted = sums.counted
    # the predictions are in canonical order (FileWork): a cell's sum adds its units' numerators in that order
    cells_of = work.once(("canonical cells", task), lambda: cell[work.positions(task)])
    cell_num = np.bincount(cells_of, unit_num, minlength=len(names)).tolist()
    ratio, per_lang, head = _levels(cell_num, sums.divisors, per_query)
    cells = {name: _value(ratio[j]) for j, name in enumerate(names) if counted[j] > 0} if with_ci else {}
    langs = {q: v for q, v in zip(LANGS, per_lang) if v == v}
    if head != head:
        return None, langs, cells, None
    if not with_ci:
        return head, langs, cells, None
    shared = {} if shared is None else shared  # the resampled denominators, for the task's other metrics
    records = len(gold.records)
    size = records * len(names)
    # the records x cells table of the numerators: a unit alone in its slot, 0.0 + its value (as a bincount)
    table = np.zeros(size)
    table[work.once(("table slots", task), lambda: flat[work.positions(task)])] = unit_num + 0.0
    cluster_num = table.reshape(records, len(names))
    counts = BootstrapPlan.for_sizes((records,)).strata[0]
    with one_blas_thread():
        num = counts @ cluster_num
        if "resampled den" not in shared:
            den = np.bincount(flat, sums.den, minlength=size).reshape(records, len(names))
            shared["resampled den"] = _resampled_denominators(gold, task, counts, den)
    replicates = _replicate_levels(num, shared["resampled den"], counted, per_query)
    if np.isfinite(replicates).all():  # numpy's own arithmetic either way (the same bits), without its overhead
        low, high = _interval(replicates)
    else:
        low, high = np.nanpercentile(replicates, [2.5, 97.5])
    return head, langs, cells, [float(low), float(high)]


def _resampled_denominators(gold, task: str, counts: np.ndarray, den: np.ndarray) -> np.ndarray:
    """counts @ den, kept for the gold's last few distinct tables: the denominators are the answers' parts
    (or 1s), changed only by a file's refusals and missing units, so files without either share one (a
    product of 1,000 x records x cells). Looked up by the table's bytes: the same bits in, the same bits out."""
    kept = gold.protocol_cache.setdefault(("resampled denominators", task), [])
    key = den.tobytes()
    for bits, resampled in list(kept):  # (a copy: another thread's file may add one meanwhile)
        if bits == key:
            return resampled
    resampled = counts @ den
    kept.insert(0, (key, resampled))  # the newest first, the oldest dropped
    del kept[_RESAMPLED_KEPT:]
    return resampled


_RESAMPLED_KEPT = 4  # tables per task (~0.5 MB each for cross-lingual on the published gold)


def _interval(replicates: np.ndarray) -> tuple[float, float]:
    """stats.percentiles(replicates, (2.5, 97.5)) of finite replicates: the same two order statistics each (one
    partition) and the same interpolation, in Python floats (numpy's own arithmetic on two values)."""
    n = len(replicates)
    if n < 2:
        low, high = percentiles(replicates, (2.5, 97.5))
        return float(low), float(high)
    virtual = [(n - 1) * (q / 100) for q in (2.5, 97.5)]
    below = [math.floor(v) for v in virtual]
    above = [min(b + 1, n - 1) for b in below]
    part = np.partition(replicates, sorted(set(below + above)))
    out = []
    for v, b, a in zip(virtual, below, above):
        low, high, gamma = float(part[b]), float(part[a]), v - b
        diff = high - low
        out.append(high - diff * (1 - gamma) if gamma >= 0.5 else low + diff * gamma)
    return out[0], out[1]


def _replicate_levels(num: np.ndarray, den: np.ndarray, counted: np.ndarray, per_query: int) -> np.ndarray:
    """Per replicate (a row of the resampled cell sums), its headline: `_levels`'s arithmetic, by the compiled
    loop when numba is there, else as arrays."""
    if available() and per_query < 8 and len(LANGS) <= _PAIRWISE_BLOCK:
        out = np.empty(len(num))
        compiled(_levels_loop)(np.ascontiguousarray(num), np.ascontiguousarray(den), counted.astype(np.float64), per_query, out)
        return out
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where((den > 0) & (counted > 0), num / den, np.nan)
    return _nanmean(_nanmean(ratio.reshape(len(ratio), len(LANGS), per_query)))


def _levels_loop(num, den, counted, per_query, out):
    """out[i] = the headline of row i of the cell sums: a cell's ratio (NaN without a denominator or a unit),
    a language's mean of its cells that are not NaN (added one by one from 0.0: fewer than 8 per language),
    the mean of the languages that are not NaN, each NaN adding 0.0 in its place: numpy's order for a row of
    n values (from 0.0 one by one under 8, else 8 running sums joined pairwise, the rest one by one)."""
    rows, cells = num.shape
    langs = cells // per_query
    per_lang = np.empty(langs)
    for i in range(rows):
        for q in range(langs):
            total = 0.0
            count = 0
            for c in range(q * per_query, (q + 1) * per_query):
                if den[i, c] > 0 and counted[c] > 0:
                    v = num[i, c] / den[i, c]
                    if v == v:
                        total += v
                        count += 1
            per_lang[q] = total / count if count > 0 else np.nan
        count = 0
        for q in range(langs):
            if per_lang[q] == per_lang[q]:
                count += 1
            else:
                per_lang[q] = 0.0
        if langs < 8:
            total = 0.0
            for q in range(langs):
                total += per_lang[q]
        else:
            r0, r1, r2, r3 = per_lang[0], per_lang[1], per_lang[2], per_lang[3]
            r4, r5, r6, r7 = per_lang[4], per_lang[5], per_lang[6], per_lang[7]
            q = 8
            while q < langs - langs % 8:
                r0 += per_lang[q]
                r1 += per_lang[q + 1]
                r2 += per_lang[q + 2]
                r3 += per_lang[q + 3]
                r4 += per_lang[q + 4]
                r5 += per_lang[q + 5]
                r6 += per_lang[q + 6]
                r7 += per_lang[q + 7]
                q += 8
            total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
            while q < langs:
                total += per_lang[q]
                q += 1
            total = 0.0 + total
        out[i] = total / count if count > 0 else np.nan


def _divisors(cell_den: np.ndarray, counted: np.ndarray) -> list:
    return [d if d > 0 and c > 0 else None for d, c in zip(cell_den.tolist(), counted.tolist())]


def _levels(cell_num: list[float], divisors: list, per_query: int):
    """(per cell its numerator over its denominator, NaN without one or without a unit; per language the
    mean of its cells that are not NaN, NaN when none is; the mean of the languages that are not NaN) in
    Python floats: numpy's own arithmetic on a few values (`_nanmean` of them: a NaN adds 0.0 in its place
    and does not count), without a numpy call per level."""
    nan = math.nan
    ratio = [nan if d is None else n / d for n, d in zip(cell_num, divisors)]
    per_lang = [_mean_of(ratio[i : i + per_query]) for i in range(0, len(ratio), per_query)]
    return ratio, per_lang, _mean_of(per_lang)


def _mean_of(values: list[float]) -> float:
    """_nanmean of a few values, in Python floats. Under 8 values numpy adds them one by one from 0.0, a NaN's
    0.0 then adding nothing (the running sum is never -0.0): the NaNs are skipped."""
    if len(values) < 8:
        total, count = 0.0, 0
        for v in values:
            if v == v:
                total += v
                count += 1
        return total / count if count else math.nan
    count = sum(1 for v in values if v == v)
    return _sum_of([v if v == v else 0.0 for v in values]) / count if count else math.nan


def _sum_of(values: list[float]) -> float:
    """np.add.reduce of a list of floats, bit for bit: `_row_sums`'s order, in Python floats."""
    n = len(values)
    if n < 8:
        total = 0.0
        for v in values:
            total += v
        return total
    if n > _PAIRWISE_BLOCK:
        return float(np.add.reduce(np.asarray(values, dtype=np.float64)))
    r = values[:8]
    i = 8
    while i < n - n % 8:
        for j in range(8):
            r[j] += values[i + j]
        i += 8
    total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    for v in values[i:]:
        total += v
    return 0.0 + total


def _variance(values: list[float]) -> float:
    """np.var of a few floats (its arithmetic: the mean, then the mean of the squared deviations), bit for bit."""
    n = len(values)
    if n > _PAIRWISE_BLOCK:
        return float(np.var(values))
    mean = _sum_of(values) / n
    deviations = [v - mean for v in values]
    return _sum_of([d * d for d in deviations]) / n


def _nanmean(values: np.ndarray):
    """Mean over the last axis of the values that are not NaN (NaN when there is none), without warnings."""
    ok = ~np.isnan(values)
    shape, width = values.shape[:-1], values.shape[-1]
    if values.size < _COLUMNS_FROM * width:
        total, count = np.where(ok, values, 0.0).sum(axis=-1), ok.sum(axis=-1)
    else:
        total = _row_sums(np.where(ok, values, 0.0).reshape(-1, width)).reshape(shape)
        count = np.zeros(total.size, dtype=np.int64)
        for column in ok.reshape(-1, width).T:
            count += column
        count = count.reshape(shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _row_sums(values: np.ndarray) -> np.ndarray:
    """values.sum(axis=1) of a 2-D float64 array, bit for bit, a column at a time: numpy adds a row's n values
    from 0.0 one by one when n < 8, else (up to its 128-value block) in 8 running sums joined pairwise, then
    the rest one by one; per-row reductions over a few values cost it ~10 ns a row, the columns' vector adds
    a fraction of that. Wider rows, and fewer than _COLUMNS_FROM, are numpy's own."""
    rows, n = values.shape
    if rows < _COLUMNS_FROM or n > _PAIRWISE_BLOCK:
        return values.sum(axis=1)
    if n < 8:
        out = np.zeros(rows)
        for j in range(n):
            out += values[:, j]
        return out
    r = [values[:, j].copy() for j in range(8)]
    i = 8
    while i < n - n % 8:
        for j in range(8):
            r[j] += values[:, i + j]
        i += 8
    out = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    for j in range(i, n):
        out += values[:, j]
    return 0.0 + out


_PAIRWISE_BLOCK = 128  # numpy's PW_BLOCKSIZE: longer rows are summed in halves (not emulated here)
_COLUMNS_FROM = 64  # rows: fewer are summed by numpy itself (a call per column would cost more)


def _value(x) -> float | None:
    return None if x != x else float(x)


def _selection(work: FileWork, rows: PartRows, options: _Options) -> tuple[dict, int]:
    """Per offered document language: the mean recall of its replaced answer ({"selection_recall",
    "offered"}), and how many units were scored. A refusal is left out (eval_multi.py records nothing for
    it); a unit without a record names no document language, so it has no place in these means. A kept
    group's row of the table is its own pairs' whichever groups are beside it, and the kept groups' rows are
    summed in their order, as the table of the kept groups alone."""
    p = work.pairs("selection", options.recipe)
    unit, lang, record, counts, cell, position, recall = p.unit, p.lang, p.record, p.counts, p.cell, p.position, p.recall
    group, groups = p.group, len(unit)
    scored = len(work.parsed["selection"])
    kept_group = None  # the groups of the predictions scored (None: all of them)
    if not options.refusals_are_text:
        kept = ~work.refusal("selection")
        scored = int(kept.sum())
        if not scored:
            return {}, 0
        if scored < len(kept):
            kept_group = kept[unit]
    if options.per_unit:  # f(d): the best answer language's mean over its parts (0 without an answer)
        if kept_group is not None:  # the refusals' groups and pairs dropped, the others renumbered in order
            kept_pair = kept_group[group]
            renumbered = np.cumsum(kept_group) - 1
            unit, lang, counts = unit[kept_group], lang[kept_group], counts[kept_group]
            cell = renumbered[group[kept_pair]] * len(LANGS) + cell[kept_pair] % len(LANGS)
            recall = recall[kept_pair]
        sums = np.bincount(cell, recall, minlength=counts.size)
        means = np.divide(sums, counts.ravel(), out=np.zeros(counts.size), where=counts.ravel() > 0)
        num, den = means.reshape(counts.shape).max(axis=1), np.ones(len(unit))
    else:  # position by position over the first answer language's parts; [0] without an answer
        limit = np.where(rows.new_answers[record, lang] > 0, counts[:, 0], 1)
        if kept_group is None:
            num = _row_sums(_aligned_max(groups, int(limit.max()), group, position, recall, limit))
        else:  # a refusal's group keeps no pair (limit 0), and its row is then dropped
            width = int(limit[kept_group].max())
            table = _aligned_max(groups, width, group, position, recall, np.where(kept_group, limit, 0))
            num, limit, lang = _row_sums(table)[kept_group], limit[kept_group], lang[kept_group]
        den = limit.astype(np.float64)
    total = np.bincount(lang, num, minlength=len(LANGS))
    weight = np.bincount(lang, den, minlength=len(LANGS))
    offered_by = np.bincount(lang, minlength=len(LANGS))
    cells = {
        d: {"selection_recall": float(total[j] / weight[j]) if weight[j] > 0 else None, "offered": int(offered_by[j])}
        for j, d in enumerate(LANGS)
        if offered_by[j]
    }
    return cells, scored
