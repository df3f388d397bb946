"""From scored results to ranked tables: the board's data, independent of any UI.

Everything here is derived from result summaries; nothing is rescored.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .tracks import Track


@dataclass
class Entry:
    """One submission as the board knows it."""

    id: str  # short content hash: stable, shareable
    path: str
    summary: dict  # the result summary (status scored / invalid), or {} while pending
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
        return self.summary.get("system") or self.metadata.get("system") or {}

    @property
    def name(self) -> str:
        return str(self.system.get("name") or self.path.rsplit("/", 1)[-1])

    @property
    def hidden(self) -> bool:
        return bool(self.flag and self.flag.get("status") == "hidden")


def content_key(e: Entry) -> str:
    """What makes two submissions of a track duplicates: the parsed predictions' fingerprint when scored, else
    the stored bytes (an invalid file has no parsed predictions to compare)."""
    fingerprint = e.summary.get("fingerprint") if e.status == "scored" else None
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
        group.sort(key=arrival)
        first, seen = group[0], set()
        for e in group:
            e.id = e.sha256[:12] if e.sha256 not in seen else _path_id(e)
            seen.add(e.sha256)
            e.duplicate_of = None if e is first else first.id


def _path_id(e: Entry) -> str:
    return hashlib.sha256(f"{e.sha256}\n{e.path}".encode()).hexdigest()[:12]


def rank_upper_bound(low: np.ndarray, high: np.ndarray, higher_is_better: bool = True) -> np.ndarray:
    """Best rank a system can claim given the CIs (as Chatbot Arena does).

    1 + the number of systems that are better beyond the uncertainty: whose
    lower bound is above this system's upper bound (for a lower-is-better
    metric, whose upper bound is below this system's lower bound).
    """
    low, high = np.asarray(low, float), np.asarray(high, float)
    if not higher_is_better:
        return 1 + (high[None, :] < low[:, None]).sum(axis=1)
    return 1 + (low[None, :] > high[:, None]).sum(axis=1)


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
    rows = []
    # per track, not per row (10,000s of rows at scale): the field and metric column names
    fields = [(f.key, f.kind == "int") for f in track.system_fields]
    metric_columns = [(m.key, f"{m.key}:low", f"{m.key}:high") for m in track.metrics]
    for e in entries:
        if (e.hidden and not include_hidden) or e.duplicate_of:  # a duplicate is ranked once, as its earliest copy
            continue
        s = e.summary
        if s.get("track") not in (None, track.name) or (not s and e.metadata.get("track") != track.name):
            continue
        flag, system = e.flag or {}, e.system
        row = {
            "id": e.id,
            "status": e.status,
            "flag": flag.get("status", ""),
            "flag_reason": flag.get("reason", ""),
            "submitted": e.submitted_at or s.get("scored_at", ""),
            "user": e.user or "",
            "n": s.get("n"),
            "missing": s.get("missing"),
            "judge": s.get("judge", ""),
            "judging": e.judging,
            "errors": len(s.get("errors", [])),
            "review": e.review,
        }
        for key, is_int in fields:
            value = system.get(key)
            row[key] = "" if value is None else value if is_int else str(value)
        row["name"] = e.name
        overall, ci = s.get("overall", {}), s.get("ci", {})
        if slice_ is not None:
            overall, ci = (s.get("breakdowns", {}).get(slice_[0], {}).get(slice_[1]) or {}), {}
        for key, low, high in metric_columns:
            row[key] = overall.get(key)
            row[low], row[high] = ci.get(key) or (None, None)
        for c in track.extra_columns:  # reported by the scorer (futurepedia VAR); derived ones come below
            if c.key in overall:
                row[c.key] = overall[c.key]
        rows.append(row)
    df = pd.DataFrame(rows)
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
    return order.drop(columns="_s").reset_index(drop=True)
