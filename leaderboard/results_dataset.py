"""The board as a dataset: what RESULTS_REPO holds so that `datasets.load_dataset(RESULTS_REPO, "<track>")` works.

    README.md                                   dataset card; its `configs:` block declares the configs below
    data/<track>/systems.parquet                config "<track>": one row per system, as the board's table has it
    data/<track>/units/<id>-<key12>.parquet     config "<track>_units": per-unit scores, one file per system

A systems row is the board's table row (`Board.table`: the same numbers the
page shows: rank, rank upper bound, metadata, every headline metric with its
CI bounds, n / missing, judge, status) plus the submission's path, content
hash and results-cache key; the card names the submissions repo commit.
Hidden systems and duplicates are not in it, as on the page.

Per-unit files are named by the system id and its results key: a system's
file changes name when its results do (judged, rescored), so files already in
the repo are never rebuilt or sent again, and a file whose system left the
board is deleted (`files` maps it to None).
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable

import pandas as pd
import pyarrow as pa

from .results import PARTS, Protocol
from .tracks import TRACKS, Track

DATA_DIR = "data"
CARD = "README.md"
LICENSE = "cc-by-4.0"  # of the published scores (not of the gold or the submitted predictions)
UNITS_SUFFIX = "_units"


def systems_path(track: str) -> str:
    return f"{DATA_DIR}/{track}/systems.parquet"


def units_dir(track: str) -> str:
    return f"{DATA_DIR}/{track}/units"


def units_path(track: str, entry_id: str, key: str) -> str:
    return f"{units_dir(track)}/{entry_id}-{hashlib.sha256(key.encode()).hexdigest()[:12]}.parquet"


def systems_frame(board, track: Track) -> pd.DataFrame:
    """The track's table as the page serves it, plus where each row comes from."""
    table = board.table(track.name)
    if table.empty:
        return table
    by_id = {e.id: e for e in board.entries(track.name, PARTS)}
    table = table.copy()
    table.insert(0, "track", track.name)
    table["submission"] = [by_id[i].path if i in by_id else "" for i in table["id"]]
    table["sha256"] = [by_id[i].sha256 if i in by_id else "" for i in table["id"]]
    table["results_key"] = [by_id[i].key if i in by_id else "" for i in table["id"]]
    if track.deviations:  # the official script's numbers beside the board's (SCORING.md, "Official scripts")
        official = [(by_id[i].summary.official if i in by_id else None) or Protocol() for i in table["id"]]
        for m in track.metrics:
            table[f"official:{m.key}"] = [o.overall.get(m.key) for o in official]
            bounds = [o.ci.get(m.key) or (None, None) for o in official]
            table[f"official:{m.key}:low"] = [low for low, _ in bounds]
            table[f"official:{m.key}:high"] = [high for _, high in bounds]
    return _arrow_ready(table)


def _arrow_ready(df: pd.DataFrame) -> pd.DataFrame:
    """Columns of one type each: ranks as nullable ints, a column mixing numbers and "" (a field not given) as text."""
    out = df.copy()
    for col in ("rank", "rank_ub", "band_first", "band_last"):
        if col in out:
            out[col] = pd.array([None if pd.isna(v) else int(v) for v in out[col]], dtype="Int64")
    for col in out.columns:
        if out[col].dtype == object:
            kinds = {type(v) for v in out[col] if v is not None and not (isinstance(v, float) and pd.isna(v))}
            if len(kinds) > 1:
                out[col] = [None if v is None or v == "" else str(v) for v in out[col]]
    return out


def units_frame(board, entry) -> pd.DataFrame:
    """One row per (metric, unit) of a scored system: its per-unit score, aligned with the gold's unit ids."""
    track = TRACKS[entry.summary.track]
    gold = board.gold(track.name)
    rows = {"id": [], "metric": [], "unit": [], "score": []}
    for metric, values in sorted(board.units(entry).items()):
        ids = track.units(gold, metric).ids
        rows["id"] += [entry.id] * len(values)
        rows["metric"] += [metric] * len(values)
        rows["unit"] += [str(u) for u in ids[: len(values)]]
        rows["score"] += [float(v) for v in values]
    return pd.DataFrame(rows)


def parquet_bytes(df: pd.DataFrame) -> bytes:
    sink = io.BytesIO()
    import pyarrow.parquet as pq  # here: only a push writes parquet, and importing it costs every start ~10 ms

    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), sink)
    return sink.getvalue()


def files(board, remote_paths: Iterable[str] | None) -> dict[str, bytes | None]:
    """{repo path: bytes, or None to delete} of the dataset view; per-unit files already in the repo are left out."""
    remote = set(remote_paths or ())
    out: dict[str, bytes | None] = {}
    with_units: list[Track] = []
    with_systems: list[Track] = []
    for track in TRACKS.values():
        frame = systems_frame(board, track)
        if frame.empty:
            continue
        with_systems.append(track)
        out[systems_path(track.name)] = parquet_bytes(frame)
        wanted = set()
        by_id = {e.id: e for e in board.entries(track.name)}  # one pass: board.entry() scans every entry
        for entry_id in frame.loc[frame["status"] == "scored", "id"]:
            entry = by_id.get(entry_id)
            if entry is None or not entry.key:
                continue
            path = units_path(track.name, entry.id, entry.key)
            wanted.add(path)
            if path not in remote:
                units = units_frame(board, entry)
                if not units.empty:
                    out[path] = parquet_bytes(units)
                else:
                    wanted.discard(path)
        for path in remote:
            if path.startswith(units_dir(track.name) + "/") and path not in wanted:
                out[path] = None
        if wanted:
            with_units.append(track)
    for track in TRACKS.values():  # a track that left the board: its files go too
        if track not in with_systems and systems_path(track.name) in remote:
            out[systems_path(track.name)] = None
    snap = board.refresher.snapshot
    out[CARD] = card(with_systems, with_units, snap.commit if snap is not None else None).encode()
    return out


def card(tracks: list[Track], with_units: list[Track], commit: str | None = None) -> str:
    """The dataset card: configs for `datasets`, then columns, metric definitions, licence and citation."""
    configs = []
    for t in tracks:
        configs.append(f"- config_name: {t.name}\n  data_files:\n  - split: train\n    path: {systems_path(t.name)}")
        if t in with_units:
            configs.append(
                f"- config_name: {t.name}{UNITS_SUFFIX}\n  data_files:\n  - split: train\n    path: {units_dir(t.name)}/*.parquet"
            )
    header = f"---\nlicense: {LICENSE}\npretty_name: RAG leaderboard results\nconfigs:\n" + "\n".join(configs) + "\n---\n"
    parts = [
        header,
        "# RAG leaderboard results\n",
        "The board's scores, written by the board itself each time its results change. "
        "Every number is recomputed by the board from the submitted predictions against hidden gold.\n",
        f"Submissions repo commit of these rows: `{commit}`.\n" if commit else "",
        "```python\nfrom datasets import load_dataset\n"
        + "".join(f'load_dataset(REPO, "{t.name}")  # one row per system\n' for t in tracks[:1])
        + "".join(f'load_dataset(REPO, "{t.name}{UNITS_SUFFIX}")  # per-unit scores\n' for t in with_units[:1])
        + "```\n",
        "## Columns of `<track>` (one row per system)\n",
        "| column | meaning |\n|---|---|\n"
        "| `track`, `id` | track, and the system's id on the board (its permalink) |\n"
        "| `rank`, `rank_ub` | rank by the track's headline metric, and the best rank its CI allows |\n"
        "| `band_first`, `band_last` | the ranks of the system's tie band: from the band's top down to the last system "
        "whose CI overlaps the top's |\n"
        "| `name`, system fields | the system as its submitter described it |\n"
        "| `<metric>`, `<metric>:low`, `<metric>:high` | the metric and its 95% bootstrap CI |\n"
        "| `official:<metric>`, `official:<metric>:low`, `official:<metric>:high` | the same, computed as the "
        "benchmark's own script computes it (tracks whose board differs from the script) |\n"
        "| `n`, `missing` | units scored, units the submission left out (coverage) |\n"
        "| `judge`, `judging` | the judge of the answer metrics, and whether judging is still under way |\n"
        "| `status`, `errors`, `flag`, `flag_reason` | scored / invalid / pending, problems found, maintainers' flag |\n"
        "| `submitted`, `user` | when and by whom it was submitted |\n"
        "| `submission`, `sha256`, `results_key` | the submission file in the submissions repo (at the commit "
        "named above), its content hash, and its results-cache key |\n",
        "`<track>_units` has one row per (`id`, `metric`, `unit`) with the unit's `score`.\n",
    ]
    for t in tracks:
        metrics = "".join(
            f"| `{m.key}` | {m.label} | {m.description} | {'higher' if m.higher_is_better else 'lower'} |\n" for m in t.metrics
        )
        parts.append(
            f"## {t.title} (`{t.name}`)\n\n{t.description}\n\n"
            f"| metric | label | definition | better |\n|---|---|---|---|\n{metrics}"
        )
    parts.append(
        f"## Licence\n\nThe scores are released under {LICENSE.upper()}. "
        "The gold data and the submitted predictions keep their own licences.\n"
    )
    parts.append(
        "## How to cite\n\nCite the leaderboard and this dataset by its repository id and the commit you used, "
        "and the benchmark of each track you report (see the About tab of the board).\n"
    )
    return "\n".join(parts)
