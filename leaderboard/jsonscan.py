"""The shape of a JSON / JSONL text measured without building it: nesting depth and value counts.

A 58 KB gzip can hold 20 million `{}`; decoding it builds 20 million dicts
(3 GB). This scan reads the bytes with whole-array numpy passes, in chunks of
a few MB, and builds nothing per value, so a submission is measured against
its limits before any decoder sees it. Strings are skipped (a bracket inside
an answer is text), escapes included.

Counts are of structure outside strings: openers `[` `{`, commas and colons.
Every value a decoder builds is a container, a scalar, a string or an object
key; two values of one container are separated by a comma and a key from its
value by a colon, so openers + commas + colons + 1 bounds the objects built
from one JSON text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

CHUNK = 1 << 20  # bytes per pass: temporary arrays stay in the tens of MB whatever the file size

_QUOTE, _BACKSLASH, _COMMA, _COLON, _NEWLINE = 34, 92, 44, 58, 10
_OPEN_ARRAY, _CLOSE_ARRAY, _OPEN_OBJECT, _CLOSE_OBJECT = 91, 93, 123, 125


@dataclass
class Shape:
    """What the scan found; `lines` mode measures every line as its own JSON text."""

    values: int = 0  # upper bound on the values a decoder builds (openers + commas + texts)
    max_depth: int = 0
    deep_lines: list[int] = field(default_factory=list)  # JSONL: 1-based lines nested deeper than the limit (first few)
    deep_line_count: int = 0
    top_items: int = 0  # JSON: items of arrays directly inside the top-level object (the predictions)


def scan(data: bytes, lines: bool, depth_limit: int, keep_lines: int = 1000) -> Shape:
    """Measure `data` (UTF-8 JSON, or JSONL when `lines`)."""
    shape = Shape()
    state = _State()
    start = 0
    n = len(data)
    while start < n:
        end = _boundary(data, min(start + CHUNK, n), lines)
        _scan_chunk(np.frombuffer(data, dtype=np.uint8, count=end - start, offset=start), start, data, lines,
                    depth_limit, keep_lines, state, shape)
        start = end
    if not lines:
        shape.values += 1
    return shape


@dataclass
class _State:
    """What carries from one chunk to the next in a single JSON text."""

    in_string: bool = False
    depth: int = 0
    depth2_is_array: bool = False  # the container opened at depth 2 is an array
    line: int = 1  # JSONL: the 1-based line the chunk starts on


def _boundary(data: bytes, end: int, lines: bool) -> int:
    """A chunk end that does not split an escape (and, for JSONL, ends a line)."""
    if end >= len(data):
        return len(data)
    if lines:
        nl = data.find(b"\n", end)
        return len(data) if nl < 0 else nl + 1
    while end < len(data) and data[end - 1] == _BACKSLASH:
        end += 1
    return end


def _unescaped_quotes(b: np.ndarray) -> np.ndarray:
    """Positions of the quotes that open or close a string (a quote after an odd run of backslashes is text)."""
    quotes = np.flatnonzero(b == _QUOTE)
    if not len(quotes):
        return quotes
    after_bs = quotes[quotes > 0]
    after_bs = after_bs[b[after_bs - 1] == _BACKSLASH]
    if not len(after_bs):
        return quotes
    bs = np.flatnonzero(b == _BACKSLASH)
    run_start = bs[np.r_[True, np.diff(bs) != 1]]
    # the backslash run ending just before each such quote: its start is the last run start at or before it
    starts = run_start[np.searchsorted(run_start, after_bs - 1, side="right") - 1]
    escaped = after_bs[(after_bs - starts) % 2 == 1]
    return np.setdiff1d(quotes, escaped, assume_unique=True)


def _scan_chunk(b: np.ndarray, offset: int, data: bytes, lines: bool, depth_limit: int, keep_lines: int,
                state: _State, shape: Shape) -> None:
    quotes = _unescaped_quotes(b)
    structural = np.flatnonzero((b == _OPEN_ARRAY) | (b == _OPEN_OBJECT) | (b == _CLOSE_ARRAY) | (b == _CLOSE_OBJECT)
                                | (b == _COMMA) | (b == _COLON))
    newlines = np.flatnonzero(b == _NEWLINE) if lines else np.zeros(0, dtype=np.int64)
    # quotes seen before each structural character: odd means it is inside a string
    before = np.searchsorted(quotes, structural)
    if lines:  # a string never spans lines in JSONL: parity restarts at each line
        line_of = np.searchsorted(newlines, structural)  # 0-based line within the chunk
        line_start = np.r_[0, newlines + 1][line_of]
        before = before - np.searchsorted(quotes, line_start)
        outside = structural[before % 2 == 0]
    else:
        outside = structural[(before % 2 == 0) != state.in_string]
        state.in_string ^= bool(len(quotes) % 2)
    chars = b[outside]
    opener = (chars == _OPEN_ARRAY) | (chars == _OPEN_OBJECT)
    closer = (chars == _CLOSE_ARRAY) | (chars == _CLOSE_OBJECT)
    delta = opener.astype(np.int64) - closer
    # keys are values too in a decoded object (one per colon)
    shape.values += int(np.count_nonzero((chars == _COMMA) | (chars == _COLON))) + int(np.count_nonzero(opener))
    if lines:
        line_of = np.searchsorted(newlines, outside)
        depth = _depth_within_groups(delta, line_of)
        if len(depth):
            shape.max_depth = max(shape.max_depth, int(depth.max()))
            deep = np.unique(line_of[depth > depth_limit])
            shape.deep_line_count += len(deep)
            room = keep_lines - len(shape.deep_lines)
            shape.deep_lines += (deep[:max(room, 0)] + state.line).tolist()
        # one value per non-blank line (a line of one scalar has no structure)
        shape.values += int(np.count_nonzero(b == _NEWLINE)) + 1
        state.line += len(newlines)
        return
    depth = state.depth + np.cumsum(delta)
    if len(depth):
        shape.max_depth = max(shape.max_depth, int(depth.max()))
        # items of arrays opened at depth 2 (inside the top-level object): commas at depth 2 in such an array
        opened2 = opener & (depth == 2)
        kind = np.where(opened2, chars == _OPEN_ARRAY, False)
        last_open = np.maximum.accumulate(np.where(opened2, np.arange(len(chars)), -1))
        in_array = np.where(last_open >= 0, kind[np.maximum(last_open, 0)], state.depth2_is_array)
        commas2 = (chars == _COMMA) & (depth == 2) & in_array
        # an array's first item has no comma before it: count non-empty arrays by the item after the opener
        first_items = opened2 & (chars == _OPEN_ARRAY)
        nonempty = np.flatnonzero(first_items)
        shape.top_items += int(np.count_nonzero(commas2)) + sum(
            1 for p in outside[nonempty].tolist() if _next_non_space(data, offset + p + 1) not in (b"]", b""))
        if np.any(opened2):
            state.depth2_is_array = bool(kind[np.flatnonzero(opened2)[-1]])
        state.depth = int(depth[-1])


def _depth_within_groups(delta: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Running depth that restarts at 0 at each new group (line)."""
    if not len(delta):
        return delta
    total = np.cumsum(delta)
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    base = (total - delta)[starts]
    sizes = np.diff(np.r_[starts, len(delta)])
    return total - np.repeat(base, sizes)


def _next_non_space(data: bytes, pos: int) -> bytes:
    while pos < len(data) and data[pos] in b" \t\r\n":
        pos += 1
    return data[pos:pos + 1]
