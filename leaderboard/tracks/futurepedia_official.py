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

from dataclasses import dataclass, replace
from itertools import chain, permutations

import numpy as np

from ..metrics import ngram_kernel
from ..metrics.compiled import compiled
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


def _aligned_max(groups: int, width: int, group, position, recall, keep=None) -> np.ndarray:
    """Per group, per part position, the best recall (0 where none): the scripts' code-switch lists."""
    out = np.zeros((groups, max(width, 1)))
    if keep is not None:
        group, position, recall = group[keep], position[keep], recall[keep]
    if len(group) and not (
        0 <= group.min() and group.max() < out.shape[0] and 0 <= position.min() and position.max() < out.shape[1]
    ):
        raise ValueError("a pair's group or position is outside the table")  # the compiled loop does not check
    args = (np.ascontiguousarray(group, dtype=np.int64), np.ascontiguousarray(position, dtype=np.int64))
    compiled(_scatter_max)(out, *args, np.ascontiguousarray(recall, dtype=np.float64))
    return out


def _scatter_max(out, group, position, recall):
    """out[group[e], position[e]] = max(itself, recall[e]) for each e in turn, NaN winning: what
    np.maximum.at does, without its per-element dispatch (a third of a file's official scoring)."""
    for e in range(len(group)):
        g, p, v = group[e], position[e], recall[e]
        if v > out[g, p] or v != v:
            out[g, p] = v


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
        they are one run of ngram_kernel.CHUNK_CHARS (else each run is joined on its own, as its copies are
        held one run at a time); dropped once the task's pairs are scored."""
        texts = self.texts(task)
        return self.once(
            ("joined", task), lambda: "\0".join(texts) if len(ngram_kernel.runs(texts, ngram_kernel.CHUNK_CHARS)) == 1 else None
        )

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
        # A recipe laid out as an earlier one (the same pairs, on the same points) whose row is the same as that
        # one's scores the same: only its pairs on a different row (short-answers-score changes only the short
        # parts) go to the kernel.
        scored = [np.ones(len(p), dtype=bool) for p in preds]
        same_as: dict[int, int] = {}
        for i in range(1, len(recipes)):
            j = next((j for j in range(i) if np.array_equal(preds[i], preds[j]) and np.array_equal(rows[i], rows[j])), None)
            if j is not None and j not in same_as:
                same_as[i] = j
                scored[i] = _rows_differ(gold, recipes[j], recipes[i])[rows[i]]
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


def _answer_layout(task: str, work: FileWork, recipe: Recipe) -> tuple[_Pairs, np.ndarray, np.ndarray]:
    """(the task's pairs under `recipe`, recall not yet computed; each pair's prediction and kernel row).
    A file with every unit of the task, in the canonical order (as a complete file in the gold's order
    lists them), has the gold's own layout: built once per gold and recipe, and only ever read."""
    gold, ks = work.gold, work.positions(task)
    if len(ks) != len(gold.unit_keys[task]) or not np.array_equal(ks, np.arange(len(ks))):
        return _laid_out(task, gold, recipe, ks)
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
        num, den, value, included = _unit_sums(task, work, rows, options)
        n += int(included.sum())
        answered = np.zeros(len(keys), dtype=bool)
        answered[work.pairs(task, options.recipe).ks] = True
        shared: dict = {}  # the task's metrics share `den` and `included`: summed and resampled once
        for key in num:
            head, per_lang, per_cell, bounds = _hierarchical(task, num[key], den, included, gold, not headline_only, shared)
            overall[key] = head
            if bounds is not None:
                ci[key] = bounds
            present = [v for v in per_lang.values() if v is not None]
            overall[f"{key}_var"] = float(np.var(present)) if present else None
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


def _unit_sums(task: str, work: FileWork, rows: PartRows, options: _Options):
    """Per metric and gold unit (canonical order): what it adds to its language's numerator and its own
    value; per gold unit what it adds to the denominator (the same for every metric) and whether it counts."""
    gold = work.gold
    keys = gold.unit_keys[task]
    pairs = work.pairs(task, options.recipe)
    ks, group, position, recall, slot = pairs.ks, pairs.group, pairs.position, pairs.recall, pairs.slot
    count = len(ks)
    parts = pairs.strict_parts.astype(np.float64)

    def part_sums(slot_of: int, counts: np.ndarray):  # per prediction, its answer's sum and mean of part recalls
        mine = slot == slot_of
        total = np.bincount(group[mine], recall[mine], minlength=count)
        return total, np.divide(total, counts, out=np.zeros(count), where=counts > 0)

    # steps sharing a recipe (those past short-answers-score) share its pairs, and so these sums
    strict, mean = work.once(("strict sums", task, options.recipe), lambda: part_sums(0, parts))
    names = ("monolingual",) if task == "monolingual" else ("crosslingual_strict", "crosslingual_loose")
    unit_num = {names[0]: mean if options.per_unit else strict}
    if task == "crosslingual":
        if options.per_unit:
            _, other_mean = work.once(("other sums", task, options.recipe), lambda: part_sums(1, pairs.other_parts))
            unit_num[names[1]] = np.maximum(mean, other_mean)
        else:
            width = int(position.max()) + 1 if len(position) else 1
            unit_num[names[1]] = _aligned_max(count, width, group, position, recall).sum(axis=1)
    unit_den = np.ones(count) if options.per_unit else parts
    if not options.refusals_are_text:
        refusal = work.refusal(task)
        for key in names:
            unit_num[key] = np.where(refusal, -1.0, unit_num[key])
        unit_den = np.where(refusal, 1.0, unit_den)
    included = np.zeros(len(keys), dtype=bool)
    den = np.zeros(len(keys))
    if options.count_missing:
        included[:] = True
        all_record, all_query, _ = _layout(gold, task)
        den[:] = 1.0 if options.per_unit else rows.ori_count[all_record, all_query]
    included[ks] = True
    den[ks] = unit_den
    num, value = {}, {}
    for key in names:
        num[key] = np.zeros(len(keys))
        num[key][ks] = unit_num[key]
        value[key] = np.zeros(len(keys))
        value[key][ks] = np.divide(unit_num[key], unit_den, out=np.zeros(count), where=unit_den > 0)
    return num, den, value, included


def _hierarchical(
    task: str, num: np.ndarray, den: np.ndarray, included: np.ndarray, gold, with_ci: bool = True, shared: dict | None = None
):
    """(headline, {language: value}, {pair: value}, CI): per cell (a language; cross-lingual: a language
    pair) the included units' numerators over their denominators; a cross-lingual language is the mean of
    its pairs; the headline the mean of the languages. Cells without a unit are left out at each level.
    The CI resamples record ids (all units of an id together) with the board's bootstrap plan. Without
    `with_ci` (a headline-only step): no CI (None) and no per-cell values ({})."""
    cluster, query, doc = _layout(gold, task)
    if task == "crosslingual":
        names, cell = PAIRS, _pair_cell(query, doc)
    else:
        names, cell = LANGS, query
    per_query = len(names) // len(LANGS)  # a language's cells are one block of the cells, in order
    flat = cluster * len(names) + cell
    size = len(gold.records) * len(names)
    shared = {} if shared is None else shared  # what `den` and `included` give, for the task's other metrics
    if "den" not in shared:
        shared["counted"] = np.bincount(cell, included.astype(np.float64), minlength=len(names))
        shared["den"] = np.bincount(flat, np.where(included, den, 0.0), minlength=size).reshape(len(gold.records), len(names))
    counted, cluster_den = shared["counted"], shared["den"]
    num = np.where(included, num, 0.0)
    cluster_num = np.bincount(flat, num, minlength=size).reshape(len(gold.records), len(names))

    def levels(cell_num, cell_den):
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where((cell_den > 0) & (counted > 0), cell_num / cell_den, np.nan)
        per_lang = _nanmean(ratio.reshape(*ratio.shape[:-1], len(LANGS), per_query))
        return ratio, per_lang, _nanmean(per_lang)

    ratio, per_lang, head = levels(cluster_num.sum(axis=0), cluster_den.sum(axis=0))
    cells = {name: _value(ratio[j]) for j, name in enumerate(names) if counted[j] > 0} if with_ci else {}
    langs = {q: _value(per_lang[j]) for j, q in enumerate(LANGS) if not np.isnan(per_lang[j])}
    if np.isnan(head):
        return None, langs, cells, None
    if not with_ci:
        return float(head), langs, cells, None
    counts = BootstrapPlan.for_sizes((len(gold.records),)).strata[0]
    with one_blas_thread():
        num = counts @ cluster_num
        if "resampled den" not in shared:
            shared["resampled den"] = counts @ cluster_den
    _, _, replicates = levels(num, shared["resampled den"])
    if np.isfinite(replicates).all():  # numpy's own arithmetic either way (the same bits), without its overhead
        low, high = percentiles(replicates, (2.5, 97.5))
    else:
        low, high = np.nanpercentile(replicates, [2.5, 97.5])
    return float(head), langs, cells, [float(low), float(high)]


def _nanmean(values: np.ndarray):
    """Mean over the last axis of the values that are not NaN (NaN when there is none), without warnings."""
    ok = ~np.isnan(values)
    total = np.where(ok, values, 0.0).sum(axis=-1)
    count = ok.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _value(x) -> float | None:
    return None if np.isnan(x) else float(x)


def _selection(work: FileWork, rows: PartRows, options: _Options) -> tuple[dict, int]:
    """Per offered document language: the mean recall of its replaced answer ({"selection_recall",
    "offered"}), and how many units were scored. A refusal is left out (eval_multi.py records nothing for
    it); a unit without a record names no document language, so it has no place in these means."""
    p = work.pairs("selection", options.recipe)
    unit, lang, record, counts, cell, position, recall = p.unit, p.lang, p.record, p.counts, p.cell, p.position, p.recall
    scored = len(work.parsed["selection"])
    if not options.refusals_are_text:  # the refusals' groups and pairs dropped, the others renumbered in order
        kept = ~work.refusal("selection")
        scored = int(kept.sum())
        if not scored:
            return {}, 0
        kept_group = kept[unit]
        kept_pair = kept_group[p.group]
        renumbered = np.cumsum(kept_group) - 1
        unit, lang, record, counts = unit[kept_group], lang[kept_group], record[kept_group], counts[kept_group]
        cell = renumbered[p.group[kept_pair]] * len(LANGS) + cell[kept_pair] % len(LANGS)
        position, recall = position[kept_pair], recall[kept_pair]
    group = cell // len(LANGS)
    groups = len(unit)
    if options.per_unit:  # f(d): the best answer language's mean over its parts (0 without an answer)
        sums = np.bincount(cell, recall, minlength=counts.size)
        means = np.divide(sums, counts.ravel(), out=np.zeros(counts.size), where=counts.ravel() > 0)
        num, den = means.reshape(counts.shape).max(axis=1), np.ones(groups)
    else:  # position by position over the first answer language's parts; [0] without an answer
        limit = np.where(rows.new_answers[record, lang] > 0, counts[:, 0], 1)
        keep = position < limit[group]
        num = _aligned_max(groups, int(limit.max()), group, position, recall, keep=keep).sum(axis=1)
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
