"""Typed decoding for well-formed submissions: parse and type-check in one C-level pass.

Rescoring is dominated by reading JSON; most files are valid. For a track that
declares a typed record (`Track.record_type`), msgspec decodes the file
straight into typed records, checking every type (strings, integers >= 1,
finite numbers, list lengths) while it parses, and the track's
`fast_validate` checks the rest with whole-file passes. Anything unusual (a
type error, an unknown id, a repeat that deserves a warning) returns None:
the generic path then reads the file again and says precisely what is wrong,
with lines and fields. Both paths accept exactly the same files.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any, NamedTuple

import msgspec

from .problems import Problems
from .submission import (
    HEADER_VALUES,
    MAX_DEPTH,
    Envelope,
    loads_strict,
    rough_values,
    structure_depth,
    submission_extension,
    values_over,
)
from .tracks import TRACKS, Track


class _TrackOnly(msgspec.Struct):
    track: str


_TRACK_ONLY = msgspec.json.Decoder(_TrackOnly)


@cache
def _decoders(track: Track, rec: Any = None) -> tuple[msgspec.json.Decoder, msgspec.json.Decoder]:
    """(one-record decoder for JSONL, whole-envelope decoder for JSON) of a track (of `rec`, default its
    record_type)."""
    rec = rec or track.record_type
    envelope = msgspec.defstruct(
        "Envelope", [("track", str), ("predictions", list[rec]), ("system", Any, None)], forbid_unknown_fields=True
    )
    return msgspec.json.Decoder(rec), msgspec.json.Decoder(envelope)


def _decoded(track: Track, decode: Callable[[tuple[msgspec.json.Decoder, msgspec.json.Decoder]], Any]) -> Any:
    """decode(decoders) with the track's common_record_type first, when it has one; a file that type refuses
    is decoded again with record_type (which says whether it is one the fast path takes at all)."""
    if track.common_record_type is not None:
        try:
            return decode(_decoders(track, track.common_record_type))
        except msgspec.ValidationError:
            pass
    return decode(_decoders(track))


_BLANK_START = re.compile(rb"\n[ \t\r\n\x0b\x0c]")  # a line that starts with whitespace (bytes.strip's)


def _non_blank_lines(body: bytes, newlines: int) -> int:
    """The lines of `body` (which holds `newlines` newlines) with more than whitespace. When every line starts
    with a byte that is not whitespace, that is all of them but an empty last one: one regex pass (~0.7 ms a
    bench file), not a strip per line (~1.3 ms), which the other files take."""
    if body[:1].strip() and not _BLANK_START.search(body):
        return newlines + (not body.endswith(b"\n"))
    return sum(map(bool, map(bytes.strip, body.split(b"\n"))))


class FastParse(NamedTuple):
    """A clean file read by the typed fast path: nothing to report, ready to fingerprint and score."""

    track: Track
    gold: Any
    system: dict  # the header's system, validated
    parsed: Any  # what Track.validate would return
    records: int


def fast_parse(
    raw: bytes, name: str, gold_sources: dict | None, gold_of: Callable[[Track], Any] | None = None
) -> FastParse | None:
    """The parsed predictions of a clean file, else None (the generic path then reads it and explains).

    Within the track's limits by construction: a file that might pass them
    (more lines than records allowed, more values than allowed, a header
    nested too deep) is left to the generic path, which measures it exactly
    before decoding. The typed records refuse unknown keys, so nothing is
    skipped unseen and their nesting is fixed by the types. `gold_of(track)`:
    the track's gold as the caller has it (scoring.check asks for it once per
    file, whichever path reads the file).
    """
    if gold_of is None:

        def gold_of(track: Track) -> Any:
            return track.load_gold((gold_sources or {}).get(track.name))

    ext = submission_extension(name) or ""
    try:
        if ext.startswith(".jsonl"):
            head, _, body = raw.lstrip(b"\xef\xbb\xbf").lstrip().partition(b"\n")
            if rough_values(head) > HEADER_VALUES:
                return None
            header = loads_strict(head.decode("utf-8"))  # the same rules as the generic path (no NaN)
            track = TRACKS.get(header.get("track")) if isinstance(header, dict) else None
            if track is None or track.record_type is None:
                return None
            gold = gold_of(track)
            limits = track.limits(gold)
            newlines = body.count(b"\n")
            if newlines >= limits.records or values_over(body, limits.values, lines=True):
                return None
            records = _decoded(track, lambda decoders: decoders[0].decode_lines(body))
            # JSONL is one record per line; decode_lines would also take a record spread over lines, or two on one
            if len(records) != _non_blank_lines(body, newlines):
                return None
            system = header.get("system")
        else:
            track = TRACKS.get(_TRACK_ONLY.decode(raw).track)  # skims the rest without building it
            if track is None or track.record_type is None:
                return None
            gold = gold_of(track)
            limits = track.limits(gold)
            if values_over(raw, limits.values):
                return None
            doc = _decoded(track, lambda decoders: decoders[1].decode(raw))
            records, system = doc.predictions, doc.system
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError, UnicodeDecodeError, AttributeError, RecursionError):
        return None
    if not records or len(records) > limits.records or structure_depth(system, MAX_DEPTH - 1) > MAX_DEPTH - 1:
        return None  # the header's system sits one level inside the envelope
    problems = Problems()
    system = track.validate_system(system, "header", problems)
    env = Envelope(track.name, system, [], [], "header")
    parsed = track.fast_validate(records, system, gold, env) if problems.ok else None
    if parsed is None:
        return None
    return FastParse(track, gold, system, parsed, len(records))
