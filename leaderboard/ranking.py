"""From scored results to ranked tables: the board's data, independent of any UI.

Everything here is derived from result summaries; nothing is rescored.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field

import msgspec
import numpy as np
import pandas as pd

from .results import PENDING, Protocol, Summary
from .tracks import Track


@dataclass
class Entry:
    """One submission as the board knows it."""

    id: str  # short content hash: stable, shareable
    path: str
    summary: Summary = PENDING  # the result (status scored / invalid; PENDING until scored)
    key: str = ""  # results-cache key, for per-unit scores
    user: str | None = None
    submitted_at: str | None = None
    flag: dict | None = None  # from flags.json: {"status": "hidden" | "flagged", "reason": ...}
    status: str = "pending"  # scored | invalid | pending
    judging: bool = False  # E2E metrics still being judged
    metadata: dict = field(default_factory=dict)
    sha256: str = ""  # of the stored bytes
    duplicate_of: str | None = None  # id of the earliest submission with the same parsed predictions
    pull_request: int | None = None  # number of the open pull request it comes from: pending review, not ranked

    @property
    def review(self) -> str:
        """ "pending review (PR #n)" for a pull request's file not merged yet, else ""."""
        return f"pending review (PR #{self.pull_request})" if self.pull_request is not None else ""

    @property
    def system(self) -> dict:
        return self.summary.system or self.metadata.get("system") or {}

    @property
    def name(self) -> str:
        return str(self.system.get("name") or self.path.rsplit("/", 1)[-1])

    @property
    def hidden(self) -> bool:
        return bool(self.flag and self.flag.get("status") == "hidden")


def content_key(e: Entry) -> str:
    """What makes two submissions of a track duplicates: the parsed predictions' fingerprint when scored, else
    the stored bytes (an invalid file has no parsed predictions to compare)."""
    fingerprint = e.summary.fingerprint if e.status == "scored" else None
    return f"predictions:{fingerprint}" if fingerprint else f"bytes:{e.sha256}" if e.sha256 else f"path:{e.path}"


def arrival(e: Entry) -> tuple:
    """Earliest first: the submission stamp (commit time for the app, the file's stamp otherwise), then the path."""
    return (e.submitted_at is None, e.submitted_at or "", e.path)


def mark_duplicates(entries: list[Entry], track_of) -> None:
    """The earliest entry of each content keeps its plain id and its row; every later one points to it.

    A byte-identical copy at another path would share the earliest's id (the id is a hash of the bytes),
    so it gets one salted with its path: every entry stays reachable by its own id.
    """
    groups: dict[tuple[str, str], list[Entry]] = {}
    for e in entries:
        groups.setdefault((track_of(e), content_key(e)), []).append(e)
    for group in groups.values():
        if len(group) == 1:  # most contents are submitted once: the plain id, no duplicate
            e = group[0]
            e.id, e.duplicate_of = e.sha256[:12], None
            continue
        group.sort(key=arrival)
        first, seen = group[0], set()
        for e in group:
            e.id = e.sha256[:12] if e.sha256 not in seen else _path_id(e)
            seen.add(e.sha256)
            e.duplicate_of = None if e is first else first.id


def _path_id(e: Entry) -> str:
    return hashlib.sha256(f"{e.sha256}\n{e.path}".encode()).hexdigest()[:12]


# The board's "Scores" choice (SCORING.md, "Official scripts"): the board's own definitions, or the benchmark's
# script's, stored beside them in every summary of a track that declares deviations (summary.official).
BOARD, OFFICIAL = "board", "official"
PROTOCOLS = (BOARD, OFFICIAL)


def protocol_of(track: Track, choice) -> str:
    """OFFICIAL when it is asked for and the track declares deviations (else both protocols are the board's)."""
    return OFFICIAL if choice == OFFICIAL and track.deviations else BOARD


def in_protocol(track: Track, summary: Summary, protocol: str) -> Summary:
    """`summary` as `protocol` scores it: under OFFICIAL its official overall, ci, breakdowns, n and missing in place
    of the board's (judged metrics carry the same values in both); a summary without an official part as it is."""
    if protocol_of(track, protocol) != OFFICIAL:
        return summary
    o = summary.official
    if not isinstance(o, Protocol):  # invalid, pending: no scores to switch
        return summary
    return msgspec.structs.replace(summary, overall=o.overall, ci=o.ci, breakdowns=o.breakdowns, n=o.n, missing=o.missing)


def entries_in(track: Track, entries: list[Entry], protocol: str) -> list[Entry]:
    """`entries` with their summaries as `protocol` scores them (new entries; the board's are left as they are)."""
    if protocol_of(track, protocol) != OFFICIAL:
        return entries
    return [dataclasses.replace(e, summary=in_protocol(track, e.summary, protocol)) for e in entries]


def rank_upper_bound(low: np.ndarray, high: np.ndarray, higher_is_better: bool = True) -> np.ndarray:
    """Best rank a system can claim given the CIs (as Chatbot Arena does).

    1 + the number of systems that are better beyond the uncertainty: whose
    lower bound is above this system's upper bound (for a lower-is-better
    metric, whose upper bound is below this system's lower bound).
    """
    low, high = np.asarray(low, float), np.asarray(high, float)
    if np.isnan(low).any() or np.isnan(high).any():  # NaN compares false both ways: count pairs as they are
        if not higher_is_better:
            return 1 + (high[None, :] < low[:, None]).sum(axis=1)
        return 1 + (low[None, :] > high[:, None]).sum(axis=1)
    # By binary search in the sorted bounds: O(n log n), not an n x n matrix (10,000s of systems at scale).
    if not higher_is_better:
        return 1 + np.searchsorted(np.sort(high), low, side="left")  # bounds strictly below each lower bound
    return 1 + len(low) - np.searchsorted(np.sort(low), high, side="right")  # lower bounds strictly above


def tie_bands(low: np.ndarray, high: np.ndarray, higher_is_better: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(first, last) position (1-based) of each system's tie band, for systems in ranking order (best first).

    A band starts at its best system and runs down to the last system whose interval still overlaps that one's
    (as LMArena shares a rank among models whose intervals overlap); the next band starts after it. Every
    system whose interval overlaps a band's top is inside that band. Intervals are assumed to hold their point
    estimate (a percentile bootstrap's do; a metric without CI has the point for both bounds), so a system further
    down overlaps the top exactly when its upper bound reaches the top's lower bound (lower-is-better: its lower
    bound reaches the top's upper bound). O(n log n): a running extreme of the bounds from the bottom, searched.
    """
    low, high = np.asarray(low, float), np.asarray(high, float)
    n = len(low)
    first, last = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    if n == 0:
        return first, last
    if higher_is_better:  # reach[j]: the highest upper bound from j down; non-increasing in j
        reach, need = np.maximum.accumulate(high[::-1])[::-1], low
        keys = -reach  # non-decreasing: searchsorted finds the last j whose reach is at least the top's need
    else:
        reach, need = np.minimum.accumulate(low[::-1])[::-1], high
        keys = reach
    top = 0
    while top < n:
        bound = -need[top] if higher_is_better else need[top]
        end = int(np.searchsorted(keys, bound, side="right")) - 1  # the last j with keys[j] <= bound
        end = max(end, top)
        first[top : end + 1], last[top : end + 1] = top + 1, end + 1
        top = end + 1
    return first, last


def _listed(e: Entry, track: Track, include_hidden: bool) -> bool:
    """Whether `e` is a row of `track`'s table: not hidden (unless asked), not a duplicate (ranked once, as its
    earliest copy), and on this track."""
    if (e.hidden and not include_hidden) or e.duplicate_of:
        return False
    s = e.summary
    pending = s.status == "pending"
    return not (s.track not in (None, track.name) or (pending and e.metadata.get("track") != track.name))


def table(
    track: Track,
    entries: list[Entry],
    *,
    include_hidden: bool = False,
    rank_by: str | None = None,
    slice_: tuple[str, str] | None = None,
) -> pd.DataFrame:
    """One row per submission: rank, rank upper bound, metadata, metrics with CI bounds, status.

    `rank_by` picks the metric that ranks (default: the track's); `slice_`
    = (axis, value) shows every metric on that slice of the gold (one
    language, one dataset family...) from the breakdowns instead of overall;
    slices carry no CI, so their rank upper bound is the plain rank.
    """
    # Column by column (10,000s of rows at scale): one list per column, no dict per row.
    kept = [e for e in entries if _listed(e, track, include_hidden)]
    if not kept:
        return pd.DataFrame()
    summaries = [e.summary for e in kept]
    flags = [e.flag or {} for e in kept]
    columns: dict[str, list] = {
        "id": [e.id for e in kept],
        "status": [e.status for e in kept],
        "flag": [f.get("status", "") for f in flags],
        "flag_reason": [f.get("reason", "") for f in flags],
        "submitted": [e.submitted_at or s.scored_at for e, s in zip(kept, summaries)],
        "user": [e.user or "" for e in kept],
        "n": [s.n for s in summaries],
        "missing": [s.missing for s in summaries],
        "judge": [s.judge if s.status != "pending" else "" for s in summaries],
        "judging": [e.judging for e in kept],
        "errors": [len(s.errors) for s in summaries],
        "review": [e.review for e in kept],
    }
    systems = [s.system or e.metadata.get("system") or {} for e, s in zip(kept, summaries)]  # Entry.system
    for f in track.system_fields:
        values = [system.get(f.key) for system in systems]
        is_int = f.kind == "int"
        columns[f.key] = ["" if v is None else v if is_int else str(v) for v in values]
    columns["name"] = [str(system.get("name") or e.path.rsplit("/", 1)[-1]) for e, system in zip(kept, systems)]  # Entry.name
    if slice_ is None:
        overalls = [s.overall for s in summaries]
        cis = [s.ci for s in summaries]
    else:  # slices carry no CI
        overalls = [s.breakdowns.get(slice_[0], {}).get(slice_[1]) or {} for s in summaries]
        cis = [{}] * len(kept)
    for m in track.metrics:
        columns[m.key] = [o.get(m.key) for o in overalls]
        bounds = [ci.get(m.key) or (None, None) for ci in cis]
        # unpacked: a CI is a pair or nothing (anything else fails here, as unpacking it always did)
        columns[f"{m.key}:low"] = [low for low, _ in bounds]
        columns[f"{m.key}:high"] = [high for _, high in bounds]
    # Reported by the scorer (futurepedia VAR), on the rows that have them (NaN elsewhere, as pandas fills a
    # missing key); a column comes in the order a row-by-row build meets it: by first row, then declared order.
    extras = []
    for rank_, c in enumerate(track.extra_columns):
        first = next((i for i, o in enumerate(overalls) if c.key in o), None)
        if first is not None:
            extras.append((first, rank_, c.key))
    for _, _, key in sorted(extras):
        columns[key] = [o[key] if key in o else np.nan for o in overalls]
    return ranked(track, pd.DataFrame(columns), rank_by)


def ranked(track: Track, df: pd.DataFrame, rank_by: str | None = None) -> pd.DataFrame:
    """A track's table rows with their derived columns, rank and rank upper bound, in ranking order."""
    if df.empty:
        return df
    for key, values in track.derive_columns(df).items():  # computed across systems (vdr retention)
        df[key] = values
    key = rank_by or track.rank_by
    higher = next((m.higher_is_better for m in track.metrics if m.key == key), True)  # derived columns: higher
    scored = (df["status"] == "scored") & df[key].notna() & (df["review"] == "")  # pending review: shown, not ranked
    df["rank"] = pd.NA
    df["rank_ub"] = pd.NA
    if scored.any():
        df.loc[scored, "rank"] = df.loc[scored, key].rank(ascending=not higher, method="min").astype(int)
        sub = df.loc[scored]
        low = sub[f"{key}:low"].fillna(sub[key]).to_numpy(float)
        high = sub[f"{key}:high"].fillna(sub[key]).to_numpy(float)
        df.loc[scored, "rank_ub"] = rank_upper_bound(low, high, higher)
    order = df.assign(_s=scored.astype(int)).sort_values(
        ["_s", key, "name"], ascending=[False, not higher, True], na_position="last"
    )
    order = order.drop(columns="_s").reset_index(drop=True)
    # Tie bands, on the rows in ranking order (scored ones come first): the ranks a band spans.
    order["band_first"], order["band_last"] = pd.NA, pd.NA
    n = int(scored.sum())
    if n:
        sub = order.iloc[:n]
        low = sub[f"{key}:low"].fillna(sub[key]).to_numpy(float)
        high = sub[f"{key}:high"].fillna(sub[key]).to_numpy(float)
        first, last = tie_bands(low, high, higher)
        ranks = sub["rank"].to_numpy(dtype=np.int64)
        order.loc[: n - 1, "band_first"] = ranks[first - 1]  # a band's first rank is its top's (shared ranks stay)
        order.loc[: n - 1, "band_last"] = last
    return order
