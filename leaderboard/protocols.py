"""The two protocols of every track: the board's and the benchmark's own script's (SCORING.md, "Official scripts").

A track declares its deviations from the script (`Track.deviations`, in measuring order) and scores with any
subset of them applied (`Track.score_with`): all of them is the board's protocol, none the official one. This
module builds, for any track, the official numbers and each deviation's effect on a file, measured stepwise
from the official protocol to the board's, so that the effects add up to board minus official.

Judged metrics have one protocol: the official numbers carry the board's judged values unchanged (the judge
is never run twice).
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from .tracks.base import Scores, Track

PROTOCOLS = ("board", "official")


def official_scores(track: Track, parsed: Any, gold: Any, board: Scores | None = None, work: Any = None) -> Scores:
    """The file scored as the benchmark's script scores it; `board` (its board scores) lends its judged values;
    `work`: the file's `Track.protocol_work`, when its other steps share it."""
    scores = track.score_with(parsed, gold, frozenset(), work=work)
    if board is not None:
        _copy_judged(track, scores, board)
    return scores


def _copy_judged(track: Track, scores: Scores, board: Scores) -> None:
    for m in track.judged_metrics:
        if m.key in board.overall:
            scores.overall[m.key] = board.overall[m.key]
            if m.key in board.ci:
                scores.ci[m.key] = board.ci[m.key]
        for axis, cells in board.breakdowns.items():
            for value, metrics in cells.items():
                if m.key in metrics:
                    scores.breakdowns.setdefault(axis, {}).setdefault(value, {})[m.key] = metrics[m.key]


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def deviation_effects(track: Track, parsed: Any, gold: Any, official: dict, board: dict, work: Any = None) -> list[dict]:
    """Per declared deviation, in order: {name, script, board, effect: {KEY: delta}}.

    delta = the headline with this fix and the ones before it, minus the headline with only the ones before
    it; the first step starts from `official` (overall values) and the last ends at `board` (overall values),
    so the effects of each key add up to board minus official. A key without a number on either side of a
    step has the effect None. Judged keys are left out (one protocol: no effect). The intermediate steps
    are scored headline-only (their CIs are never shown), sharing `work` (`Track.protocol_work`).
    """
    judged = {m.key for m in track.judged_metrics}
    keys = [k for k in official if k not in judged]
    out = []
    before = official
    applied: list[str] = []
    for i, dev in enumerate(track.deviations):
        applied.append(dev.name)
        last = i == len(track.deviations) - 1
        after = board if last else track.score_with(parsed, gold, frozenset(applied), headline_only=True, work=work).overall
        effect = {k: after[k] - before[k] if _number(after.get(k)) and _number(before.get(k)) else None for k in keys}
        out.append({"name": dev.name, "script": dev.script, "board": dev.board, "effect": effect})
        before = after
    return out


def official_report(track: Track, parsed: Any, gold: Any, board: Scores) -> tuple[Scores, list[dict]]:
    """(the official Scores, with the board's judged values; the deviations with their effects) of a scored file."""
    work = track.protocol_work(parsed, gold)
    official = official_scores(track, parsed, gold, board, work)
    return official, deviation_effects(track, parsed, gold, official.overall, board.overall, work)


def cli_output(track: Track, parsed: Any, gold: Any, summary, protocol: str) -> dict:
    """What `score --json` prints for one scored file (a results.Summary) in `protocol`.

    board: the board's keys plus "official" (the official overall values) and "deviations"; official: the same
    keys computed the official way, plus "protocol": "official". Each adds "notes" when the official protocol
    has something to say about the file (what it left out, what the script could not read).
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}: expected one of {', '.join(PROTOCOLS)}")
    out = {k: getattr(summary, k) for k in ("track", "system", "n", "missing", "overall", "ci", "breakdowns")}
    if summary.official is not None:  # scored with both protocols already (scoring.score_checked)
        official, deviations = summary.official, summary.deviations
        notes = official.notes if official.notes is not msgspec.UNSET else []
    else:  # a track whose board is its script's: the same numbers (its script's notes, if any)
        official, deviations = official_report(track, parsed, gold, summary)
        notes = official.extra.get("notes", [])
    if protocol == "official":
        out.update({k: getattr(official, k) for k in ("n", "missing", "overall", "ci", "breakdowns")})
        out["protocol"] = "official"
    else:
        out["official"] = official.overall
        out["deviations"] = deviations
    if notes:
        out["notes"] = notes
    return out
