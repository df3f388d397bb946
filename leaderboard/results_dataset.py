"""The board as a dataset: what RESULTS_REPO holds so that `datasets.load_dataset(RESULTS_REPO, "<track>")` works.

    README.md                                   dataset card; its `configs:` block declares the configs below
    data/<track>/systems.parquet                config "<track>": one row per system on the board's table
    data/<track>/units/<id>-<key12>.parquet     config "<track>_units": per-unit scores, one file per system

A systems row is the track's results table's row (results.py, the one writer
of `results/tables/<track>.parquet`: identity, system, every headline metric
with its CI bounds under both protocols, n / missing, judge, status), its
columns but those only the board reads (`results.PRIVATE`), taken from the
table file as the board last wrote it, for the systems the page lists (not
hidden, no duplicates), in the page's order; before them, the board's columns
of that submission, which no result holds: its id and path, who submitted it
and when, the maintainers' flag, and the ranks (rank, rank_ub, band_first,
band_last) and columns computed across systems, as the page computes them over
these same rows when the file is written. The card names the submissions repo
commit.

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

from . import results
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


def systems_table(board, track: Track) -> pa.Table | None:
    """The rows of the track's results table that the page lists, in its order, after the board's own columns;
    None when the page lists none."""
    import pyarrow.parquet as pq  # here: only a push reads a table whole, and importing it costs every start ~10 ms

    page = board.table(track.name)
    path = results.table_path(board.rescorer.cache.root, track.name)
    if page.empty or not path.is_file():
        return None
    # the published columns alone: the board's msgpack parts are most of a table's bytes and never published
    public = [c for c in pq.read_schema(path).names if c not in results.PRIVATE]
    table = pq.read_table(path, columns=public)
    row_of = {k: i for i, k in enumerate(table.column("key").to_pylist())}
    by_id = {e.id: e for e in board.entries(track.name, ())}
    keys = [by_id[i].key if i in by_id else "" for i in page["id"]]
    listed = [i for i, k in enumerate(keys) if k in row_of]  # a system not scored yet has no result row
    if not listed:
        return None
    page = page.iloc[listed].reset_index(drop=True)
    page.insert(1, "submission", [by_id[i].path for i in page["id"]])
    own = page[[c for c in page.columns if c not in public]].copy()  # the page's columns no result holds
    for col in RANKS:
        own[col] = pd.array([None if pd.isna(v) else int(v) for v in own[col]], dtype="Int64")
    rows = table.select(public).take(pa.array([row_of[keys[i]] for i in listed], pa.int64()))
    out = pa.Table.from_pandas(own, preserve_index=False)
    for name in public:
        out = out.append_column(table.schema.field(name), rows.column(name))
    return out.replace_schema_metadata(table.schema.metadata)


RANKS = ("rank", "rank_ub", "band_first", "band_last")  # computed over the listed rows (ranking.ranked)


def units_table(board, entry) -> pa.Table:
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
    return pa.table(
        rows, pa.schema([("id", pa.string()), ("metric", pa.string()), ("unit", pa.string()), ("score", pa.float64())])
    )


def parquet_bytes(table: pa.Table) -> bytes:
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def files(board, remote_paths: Iterable[str] | None) -> dict[str, bytes | None]:
    """{repo path: bytes, or None to delete} of the dataset view; per-unit files already in the repo are left out."""
    remote = set(remote_paths or ())
    out: dict[str, bytes | None] = {}
    with_systems, with_units = [], []
    for track in TRACKS.values():
        systems = systems_table(board, track)
        if systems is None:
            if systems_path(track.name) in remote:  # a track that left the board: its files go too
                out[systems_path(track.name)] = None
            continue
        with_systems.append(track)
        out[systems_path(track.name)] = parquet_bytes(systems)
        if _units_files(board, track, systems, remote, out):
            with_units.append(track)
    snap = board.refresher.snapshot
    out[CARD] = card(with_systems, with_units, snap.commit if snap is not None else None).encode()
    return out


def _units_files(board, track: Track, systems: pa.Table, remote: set[str], out: dict) -> bool:
    """Into `out`, the per-unit files of the scored `systems` the repo lacks, and None for the track's others;
    whether the track has any."""
    by_id = {e.id: e for e in board.entries(track.name)}  # one pass: board.entry() scans every entry
    wanted = set()
    for entry_id, key, status in zip(*(systems.column(c).to_pylist() for c in ("id", "key", "status"))):
        if status != "scored" or entry_id not in by_id:
            continue
        path = units_path(track.name, entry_id, key)
        if path not in remote:
            units = units_table(board, by_id[entry_id])
            if not units.num_rows:
                continue
            out[path] = parquet_bytes(units)
        wanted.add(path)
    out.update({path: None for path in remote if path.startswith(units_dir(track.name) + "/") and path not in wanted})
    return bool(wanted)


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
        "A row is the system's row of the board's results table (`results/tables/<track>.parquet` in this repo, "
        "written by the board with every result it keeps) without the columns only the board reads (the "
        "msgpack-encoded summary parts and the file bookkeeping), for the systems the board's page lists (hidden "
        "systems and later copies of the same predictions are left out, as on the page), in the page's order. The "
        "first columns are the board's, not the result's: the ranks are computed over these same rows when the file "
        "is written, exactly as the page computes them (systems pending review are listed, not ranked).\n",
        "| column | meaning |\n|---|---|\n"
        "| `id`, `submission` | the system's id on the board (its permalink), and its file in the submissions repo "
        "(at the commit named above) |\n"
        "| `rank`, `rank_ub` | rank by the track's headline metric, and the best rank its CI allows |\n"
        "| `band_first`, `band_last` | the ranks of the system's tie band: from the band's top down to the last system "
        "whose CI overlaps the top's |\n"
        "| `flag`, `flag_reason`, `review` | maintainers' flag; a pull request still under review |\n"
        "| `submitted`, `user`, `judging` | when and by whom it was submitted; whether judging is still under way |\n"
        "| other columns before `key` | computed across systems by the board (a track's derived columns) |\n"
        "| `key`, `sha256`, `track`, `gold_sha256`, `judge`, `status`, `fingerprint` | the result's identity: its "
        "results-cache key, the submission's content hash, the track, the gold's hash, the judge of the answer "
        "metrics, scored / invalid, the hash of the parsed predictions |\n"
        "| `name`, system fields | the system as its submitter described it |\n"
        "| `<metric>`, `<metric>:low`, `<metric>:high` | the metric and its 95% bootstrap CI |\n"
        "| `official:<metric>`, `official:<metric>:low`, `official:<metric>:high` | the same, computed as the "
        "benchmark's own script computes it (tracks whose board differs from the script) |\n"
        "| `n`, `missing` | units scored, units the submission left out (coverage) |\n"
        "| `errors`, `warnings`, `records`, `scored_at` | problems found, prediction records read, when it was scored |\n",
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
