"""RESULTS_REPO as a dataset: `datasets.load_dataset` returns the board's rows with the page's numbers; pushes are batched.

`load_dataset` runs in a child process pointed at the local fake Hub (the
`datasets` and `huggingface_hub` clients read HF_ENDPOINT when imported), with
the real clients end to end: README `configs:` block, parquet files, downloads.
"""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from leaderboard import results, results_dataset
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.store.hub_client import HubClient
from leaderboard.tracks import TRACKS

from hubfake import FAKE_TOKEN, fake_hub  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "assets" / "demo" / "submissions"

LOAD = """
import json, sys, datasets
datasets.disable_progress_bars()
print(json.dumps({name: datasets.load_dataset(sys.argv[1], name, split="train").to_list() for name in sys.argv[2:]}))
"""


def load_dataset(hub, tmp_path: Path, repo: str, *configs: str) -> dict[str, list[dict]]:
    env = {
        **os.environ,
        "HF_ENDPOINT": hub.url,
        "HF_TOKEN": FAKE_TOKEN,
        "HF_HUB_OFFLINE": "0",
        "HF_DATASETS_OFFLINE": "0",
        "HF_HOME": str(tmp_path / "hf-home"),
    }
    done = subprocess.run([sys.executable, "-c", LOAD, repo, *configs], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def demo_files(tracks=None) -> dict[str, bytes]:
    return {
        f"submissions/{p.parent.name}/demo/{p.name}": p.read_bytes()
        for p in sorted(DEMO.rglob("*"))
        if p.is_file() and (tracks is None or p.parent.name in tracks)
    }


def hub_board(hub, data_dir: Path, judge: str = "none", refresh_seconds: float = 300.0, background: bool = False) -> Board:
    settings = StoreSettings(
        submissions_repo="org/subs",
        results_repo="org/results",
        hf_token=FAKE_TOKEN,
        hf_endpoint=hub.url,
        data_dir=data_dir,
        hub_timeout=5,
        refresh_seconds=refresh_seconds,
    )
    return Board(Settings(data_dir=data_dir, judge=judge), settings).start(background=background)


@pytest.fixture
def repos(fake_hub):  # noqa: F811
    fake_hub.create_repo("org/subs", repo_type="dataset")
    fake_hub.create_repo("org/results", repo_type="dataset")
    return fake_hub


# What a systems row holds of the board beside its result: who, when, the flag and the ranks over the listed rows.
BOARD_COLUMNS = ("flag", "flag_reason", "submitted", "user", "judging", "review", *results_dataset.RANKS)


def same(a, b) -> bool:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    if isinstance(a, float) or isinstance(b, float):
        return b is not None and math.isclose(float(a), float(b), rel_tol=0, abs_tol=1e-12)
    return a == b


def test_load_dataset_returns_the_boards_rows_with_the_numbers_the_page_shows(repos, tmp_path):
    repos.commit("org/subs", demo_files())
    board = hub_board(repos, tmp_path / "board")
    configs = [c for t in TRACKS for c in (t, f"{t}{results_dataset.UNITS_SUFFIX}")]
    loaded = load_dataset(repos, tmp_path, "org/results", *configs)
    for name, track in TRACKS.items():
        table = board.table(name)
        rows = {r["id"]: r for r in loaded[name]}
        assert list(rows) == list(table["id"])  # same systems, in the page's order
        columns = ["rank", "rank_ub", "n", "missing", "judge", "status", "name"]
        columns += [c for m in track.metrics for c in (m.key, f"{m.key}:low", f"{m.key}:high")]
        for record in table.to_dict("records"):
            row = rows[record["id"]]
            for col in columns:
                assert same(record[col], row[col]), (name, record["id"], col, record[col], row[col])
            entry = board.entry(record["id"])
            assert row["submission"] == entry.path and row["sha256"] == entry.sha256 and row["key"] == entry.key
        units = loaded[f"{name}{results_dataset.UNITS_SUFFIX}"]
        for entry in (e for e in board.entries(name) if e.status == "scored" and not e.duplicate_of):
            mine = [u for u in units if u["id"] == entry.id]
            for metric, values in board.units(entry).items():
                got = [u["score"] for u in mine if u["metric"] == metric]
                assert len(got) == len(values) and all(same(float(v), g) for v, g in zip(values, got))
                ids = track.units(board.gold(name), metric).ids
                assert [u["unit"] for u in mine if u["metric"] == metric] == [str(i) for i in ids]
    published = repos.files("org/results")
    for name in TRACKS:  # a systems row is its results table's row (the same repo's copy), but the board-only columns
        table = pq.read_table(io.BytesIO(published[f"results/tables/{name}.parquet"])).to_pylist()
        by_key = {r["key"]: {c: v for c, v in r.items() if c not in results.PRIVATE} for r in table}
        for row in loaded[name]:
            mine = by_key[row["key"]]
            assert all(same(v, row[c]) for c, v in mine.items()), (name, row["id"])
            assert set(row) - set(mine) == {"id", "submission", *BOARD_COLUMNS, *TRACKS[name].derived_columns}
    card = published["README.md"].decode()
    assert board.refresher.snapshot.commit in card
    for track in TRACKS.values():
        assert f"config_name: {track.name}\n" in card and all(m.description in card for m in track.metrics)
    assert "license: " in card and "How to cite" in card


def commits_and_operations(repos, monkeypatch) -> list[list[str]]:
    """Every commit the board makes to the results repo, as the list of paths it sends or deletes."""
    sent: list[list[str]] = []
    original = HubClient.commit

    def commit(self, repo_id, operations, message, parent_commit=None):
        if repo_id == "org/results":
            sent.append([op.path_in_repo for op in operations])
        return original(self, repo_id, operations, message, parent_commit)

    monkeypatch.setattr(HubClient, "commit", commit)
    return sent


def test_a_refresh_pushes_one_commit_of_only_what_changed_and_lists_nothing(repos, tmp_path, monkeypatch):
    sent = commits_and_operations(repos, monkeypatch)
    repos.commit("org/subs", demo_files(["vdr"]))
    board = hub_board(repos, tmp_path / "board")
    assert len(sent) == 1
    before = dict(repos.files("org/results"))

    new = demo_files(["unidoc"])
    repos.commit("org/subs", new)
    repos.reset_counts()
    board.refresh()
    assert len(sent) == 2  # one commit for the whole refresh, however many systems it brought
    paths = set(sent[1])
    added = {e.key for e in board.entries("unidoc")}
    assert {f"results/{k}.json" for k in added} <= paths
    assert not any(
        p.startswith("results/") and p.split("/")[1].split(".")[0] in {e.sha256 for e in board.entries("vdr")} for p in paths
    )
    assert "results/tables/vdr.parquet" not in paths and "results/tables/unidoc.parquet" in paths
    assert "data/vdr/systems.parquet" not in paths and "data/unidoc/systems.parquet" in paths
    assert not any(p.startswith("data/vdr/units/") for p in paths)
    assert repos.count("GET", "org/results/tree") == 0  # nothing listed: the board knows what it sent
    after = repos.files("org/results")
    assert all(after[p] == before[p] for p in before if p not in paths)

    repos.reset_counts()
    board.refresh()  # nothing new
    assert len(sent) == 2 and repos.count(path_contains="org/results") == 0


def test_a_system_leaving_the_board_takes_its_dataset_files_with_it(repos, tmp_path):
    files = demo_files(["vdr"])
    repos.commit("org/subs", files)
    board = hub_board(repos, tmp_path / "board")
    gone = board.entries("vdr")[0]
    unit_file = results_dataset.units_path("vdr", gone.id, gone.key)
    assert unit_file in repos.files("org/results")
    repos.commit("org/subs", {}, deletes=[gone.path])
    board.refresh()
    published = repos.files("org/results")
    assert unit_file not in published
    assert unit_file.rsplit("/", 1)[0] + "/" in "".join(published)  # the other systems' files stay
    assert gone.id not in {r["id"] for r in load_dataset(repos, tmp_path, "org/results", "vdr")["vdr"]}


def test_judged_results_reach_the_repo_in_one_deferred_commit(repos, tmp_path, monkeypatch):
    """Started in the background, results judged after a push wait for the next refresh interval: one commit for all."""
    sent = commits_and_operations(repos, monkeypatch)
    repos.commit("org/subs", demo_files(["unidoc"]))
    board = hub_board(repos, tmp_path / "board", judge="lexical", refresh_seconds=3600, background=True)
    deadline = time.monotonic() + 120
    while (
        not board.entries() or any(e.judging or e.status == "pending" for e in board.entries())
    ) and time.monotonic() < deadline:
        time.sleep(0.1)
    judged = [e for e in board.entries() if e.summary.judge != "none"]
    assert len(judged) >= 2
    commits_while_running = len(sent)
    assert commits_while_running <= 1  # the first pull's push; every judged result waits for the interval
    board.stop()  # a deferred push is sent on stop, not lost
    assert len(sent) == commits_while_running + 1
    published = repos.files("org/results")
    assert all(f"results/{e.key}.json" in published for e in judged)
