"""Self-healing state: a damaged cache entry is treated as missing, logged once and rebuilt; one never hides another.

Each test damages one piece of state the way a crash, a full disk or a bad
upload to RESULTS_REPO would (truncated, garbage, another entry's content),
restarts or refreshes, and checks that every demo system is back on the board
with the numbers it had, and that detail and compare work for the damaged one.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

import numpy as np
import pytest
from gradio_client import Client

import leaderboard.scoring as scoring
from leaderboard.judge import make_judge
from leaderboard.judge.verdict import JudgeItem
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.ui import views
from leaderboard.ui.layout import status_html

from appserver import running_app
from hubfake import FAKE_TOKEN, fake_hub  # noqa: F401 (fixture)
from openaifake import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "assets" / "demo" / "submissions"
DEMO_SYSTEMS = sum(1 for p in DEMO.rglob("*") if p.is_file())  # 26


def local_board(data_dir: Path, judge: str = "none") -> Board:
    return Board(Settings(data_dir=data_dir, judge=judge), StoreSettings(data_dir=data_dir)).start(background=False)


def snapshot_of(board: Board) -> dict[str, tuple]:
    """What the board shows per system: status, name and headline numbers."""
    return {e.id: (e.status, e.name, json.dumps(e.summary.overall, sort_keys=True)) for e in board.entries()}


def pick(board: Board, track: str, n: int = 0):
    return sorted((e for e in board.entries(track)), key=lambda e: e.id)[n]


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def truncated_copy(path: Path) -> None:
    """`path` replaced by a truncated copy of itself, renamed over it as every writer of the results folder writes.

    A restart serves a results table's row while the summary's file has the size and modification time the
    row took (scoring.ResultsCache): a file renamed over it is noticed.
    """
    tmp = path.with_name(f".tmp-truncated-{path.name}")
    tmp.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    os.replace(tmp, path)


def warnings_about(caplog, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and text in r.getMessage()]


def assert_detail_and_compare_work(board: Board, e, other) -> None:
    units = board.units(e)
    assert units and all(
        len(v) == len(scoring.TRACKS[e.summary.track].units(board.gold(e.summary.track), k).ids) for k, v in units.items()
    )
    html, _, unit_rows = views.detail(board, e.id)
    assert e.name in html and len(unit_rows) > 0
    result = board.compare(e.id, other.id)
    assert result["metrics"] and all(m.n_shared > 0 for m in result["metrics"])


# ---- results cache ------------------------------------------------------------------------------------------------
def test_a_truncated_results_json_is_rescored_on_restart_and_every_row_comes_back(tmp_path, caplog):
    before = snapshot_of(local_board(tmp_path))
    assert len(before) == DEMO_SYSTEMS
    board = local_board(tmp_path)
    victim = pick(board, "vdr")
    summary_file = tmp_path / "results" / f"{victim.key}.json"
    truncated_copy(summary_file)  # after a second start, which may have marked the index (were it 2 s old)
    caplog.set_level(logging.WARNING)
    restarted = local_board(tmp_path)
    assert snapshot_of(restarted) == before  # all rows back, same numbers
    assert json.loads(summary_file.read_text())["sha256"] == victim.summary.sha256  # rewritten
    assert len(warnings_about(caplog, victim.key)) == 1
    restarted.refresh()
    assert len(warnings_about(caplog, victim.key)) == 1  # logged once, not per pull
    assert_detail_and_compare_work(restarted, restarted.entry(victim.id), pick(restarted, "vdr", 1))


def test_a_results_json_holding_another_submissions_content_is_treated_as_missing(tmp_path, caplog):
    board = local_board(tmp_path)
    before = snapshot_of(board)
    a, b = pick(board, "unidoc", 0), pick(board, "unidoc", 1)
    # b's file now holds a's summary: served as is, b would show a's name and numbers
    (tmp_path / "results" / f"{b.key}.json").write_bytes((tmp_path / "results" / f"{a.key}.json").read_bytes())
    caplog.set_level(logging.WARNING)
    restarted = local_board(tmp_path)
    assert snapshot_of(restarted) == before
    assert restarted.entry(b.id).summary.sha256 == b.summary.sha256
    assert any("belongs to another key" in m for m in warnings_about(caplog, b.key))


@pytest.mark.parametrize("damage", ["truncated", "missing a metric", "wrong length"])
def test_a_damaged_npz_is_rescored_in_the_background_and_detail_and_compare_work(tmp_path, caplog, damage, monkeypatch):
    board = local_board(tmp_path)
    before = snapshot_of(board)
    victim, other = pick(board, "futurepedia", 0), pick(board, "futurepedia", 1)
    npz = tmp_path / "results" / f"{victim.key}.npz"
    good_units = board.units(victim)
    if damage == "truncated":
        truncate(npz)
    else:
        units = dict(good_units)
        if damage == "missing a metric":
            units.pop("monolingual")
        else:
            units["monolingual"] = units["monolingual"][:-1]
        np.savez(npz, **units)
    caplog.set_level(logging.WARNING)
    restarted = local_board(tmp_path)
    assert snapshot_of(restarted) == before
    validations = []
    validate = scoring._check
    monkeypatch.setattr(scoring, "_check", lambda data, name, *a: validations.append(name) or validate(data, name, *a))
    # A page view only reads: it says the per-unit scores are being rescored and queues the work, once.
    for _ in range(2):
        html, _, unit_rows = views.detail(restarted, victim.id)
        assert "being rescored" in html and unit_rows.empty
        summary, metrics, _, _ = views.compare_view(restarted, victim.id, other.id)
        assert "being rescored" in summary and victim.name in summary and metrics.empty
    assert validations == [] and restarted.judge_queue.waiting() == 1
    run_worker(restarted)  # the board's background worker: the system rescored, its results rewritten
    assert validations == [Path(victim.path).name] and not restarted.rescoring(restarted.entry(victim.id))
    healed = restarted.entry(victim.id)
    assert_detail_and_compare_work(restarted, healed, restarted.entry(other.id))
    assert "being rescored" not in views.detail(restarted, victim.id)[0]
    assert_detail_and_compare_work(restarted, restarted.entry(other.id), healed)  # as the second system too
    units = restarted.units(healed)
    assert set(units) == set(good_units) and all(np.array_equal(units[k], good_units[k], equal_nan=True) for k in units)
    assert len(warnings_about(caplog, victim.key)) == 1  # once, however many requests asked
    with np.load(npz) as z:
        assert sorted(z.files) == sorted(good_units)  # the file was rewritten


def test_a_scorer_exception_on_one_file_leaves_the_others_on_the_board(tmp_path, monkeypatch, caplog):
    real = scoring.Rescorer.score_file
    victim_name = "colqwen2-v1-0-none.jsonl"

    def failing(self, path, *a, **k):
        if Path(path).name == victim_name:
            raise RuntimeError(f"scorer bug reading {path}")
        return real(self, path, *a, **k)

    monkeypatch.setattr(scoring.Rescorer, "score_file", failing)
    board = local_board(tmp_path)
    entries = board.entries()
    assert len(entries) == DEMO_SYSTEMS
    broken = [e for e in entries if e.path.endswith(victim_name)]
    assert len(broken) == 1 and broken[0].status == "invalid"
    message = broken[0].summary.errors[0]
    assert "internal error while scoring" in message and f"log ref {broken[0].id}" in message
    assert "RuntimeError" not in message and str(tmp_path) not in message  # no class name, no server path
    assert all(e.status == "scored" for e in entries if e is not broken[0])
    assert f"log ref {broken[0].id}" in caplog.text


def test_the_app_serves_detail_and_compare_of_a_system_whose_cache_files_were_damaged(tmp_path):
    with running_app(tmp_path) as app:
        victim, other = pick(app.board, "unidoc", 0), pick(app.board, "unidoc", 1)
        before = snapshot_of(app.board)
    truncate(tmp_path / "results" / f"{victim.key}.npz")
    truncate(tmp_path / "results" / f"{other.key}.json")
    with running_app(tmp_path) as app:
        assert snapshot_of(app.board) == before
        client = Client(app.url, verbose=False)
        html, breakdown, _, units = client.predict(victim.id, api_name="/detail")
        assert victim.name in html
        deadline = time.monotonic() + 60
        while not units["data"]:  # "being rescored" until the board's worker has rescored it
            assert "being rescored" in html and time.monotonic() < deadline
            time.sleep(0.2)
            html, breakdown, _, units = client.predict(victim.id, api_name="/detail")
        summary, metrics, *_ = client.predict("unidoc", victim.id, other.id, api_name="/compare")
        assert victim.name in summary and len(metrics["data"]) >= 2


def run_worker(board: Board) -> None:
    board.judge_queue.put("")  # the worker does what is queued, then stops
    board.judge_queue.run()


# ---- judge cache --------------------------------------------------------------------------------------------------
Q = "What did the plant produce in 2023?"
GOLD = "The plant produced 40 GWh in 2023. Output rose by 5 percent."


def _items() -> list[JudgeItem]:
    return [
        JudgeItem(
            qid=f"energy-{i}",
            question=Q,
            gold_answer=GOLD,
            evidence_facts=["Output rose by 5 percent."],
            response=f"The plant produced 40 GWh in 2023. Reply {i}.",
        )
        for i in range(3)
    ]


@pytest.mark.parametrize(
    "garbage", ["truncated", "not an object", "nested too deeply", "facts and flags differ", "another question's verdict"]
)
def test_a_garbage_judge_cache_entry_is_judged_again_and_rewritten(tmp_path, caplog, garbage):
    with FakeOpenAI() as fake:

        def judge():
            return make_judge(
                "openai",
                cache_dir=tmp_path / "judge",
                model="fake-judge",
                base_url=fake.base_url,
                api_key="test-key",
                backoff_base=0.001,
                backoff_max=0.01,
                timeout=5.0,
            )

        items = _items()
        first = judge().judge_many(items)
        files = sorted((tmp_path / "judge").rglob("verdicts/*/*.json"))
        assert len(files) == 3
        victim = next(f for f in files if f.parent.name == "energy-1")
        good = victim.read_text()
        record = json.loads(good)
        if garbage == "truncated":
            victim.write_text(good[: len(good) // 2])
        elif garbage == "not an object":
            victim.write_text("[1, 2, 3]")
        elif garbage == "nested too deeply":
            victim.write_text("[" * 100_000 + "]" * 100_000)
        elif garbage == "facts and flags differ":
            victim.write_text(json.dumps({**record, "gold_fact_supported": record["gold_fact_supported"] + [True]}))
        else:
            other = next(f for f in files if f.parent.name == "energy-2")
            victim.write_text(other.read_text())
        calls = fake.calls
        caplog.set_level(logging.WARNING)
        again = judge().judge_many(items)  # a restart: a new judge on the same cache
        assert fake.calls > calls  # the damaged verdict was judged again...
        assert again["energy-1"].to_dict() == first["energy-1"].to_dict() and again["energy-1"].failure is None
        assert json.loads(victim.read_text()) == record  # ...and rewritten
        assert {q: v.to_dict() for q, v in again.items()} == {q: v.to_dict() for q, v in first.items()}
        assert len(warnings_about(caplog, "judge cache")) == 1
        calls = fake.calls
        judge().judge_many(items)
        assert fake.calls == calls and len(warnings_about(caplog, "judge cache")) == 1  # healed: all cached now


# ---- Hub: pull state, downloads, results repo ------------------------------------------------------------------
@pytest.fixture
def hub_setup(fake_hub, tmp_path):  # noqa: F811
    fake_hub.create_repo("org/subs", repo_type="dataset")
    fake_hub.create_repo("org/results", repo_type="dataset")
    files = sorted((DEMO / "unidoc").glob("*.jsonl"))[:3]
    fake_hub.commit("org/subs", {f"submissions/unidoc/demo/{p.name}": p.read_bytes() for p in files})
    settings = StoreSettings(
        submissions_repo="org/subs",
        results_repo="org/results",
        hf_token=FAKE_TOKEN,
        hf_endpoint=fake_hub.url,
        data_dir=tmp_path / "a",
        hub_timeout=5,
    )

    def board(data_dir: Path = tmp_path / "a") -> Board:
        s = StoreSettings(**{**settings.__dict__, "data_dir": data_dir})
        return Board(Settings(data_dir=data_dir, judge="none"), s).start(background=False)

    return fake_hub, board


@pytest.mark.parametrize("damage", ["truncated", "a list", "an entry of the wrong shape"])
def test_a_damaged_pull_state_is_rebuilt_on_restart(hub_setup, tmp_path, caplog, damage):
    hub, board = hub_setup
    before = snapshot_of(board())
    assert len(before) == 3
    (state,) = (tmp_path / "a" / "hub" / "state").glob("org--subs.json")
    if damage == "truncated":
        truncate(state)
    elif damage == "a list":
        state.write_text("[]")
    else:
        raw = json.loads(state.read_text())
        path = next(iter(raw["files"]))
        raw["files"][path][0] = str(raw["files"][path][0])  # the size as a string: never matches the listing
        state.write_text(json.dumps(raw))
    caplog.set_level(logging.WARNING)
    restarted = board()
    assert snapshot_of(restarted) == before
    assert len(warnings_about(caplog, "pull state")) == 1
    assert json.loads(state.read_text())["commit"] == hub.head("org/subs")  # saved sound again


def test_a_submission_file_damaged_in_the_download_cache_is_fetched_again(hub_setup, tmp_path):
    hub, board = hub_setup
    first = board()
    before = snapshot_of(first)
    victim = pick(first, "unidoc")
    local = first.refresher.snapshot.by_path()[victim.path].local_path
    truncate(local)
    hub.reset_counts()
    restarted = board()
    assert hub.downloads() == [victim.path]  # only the damaged file
    assert snapshot_of(restarted) == before
    file = restarted.refresher.snapshot.by_path()[victim.path]
    assert scoring.content_hash(file.local_path.read_bytes()) == victim.summary.sha256
    assert restarted.records(restarted.entry(victim.id))  # raw records for detail and compare


def test_bad_results_in_the_results_repo_never_reach_a_fresh_board_and_its_push_repairs_them(hub_setup, tmp_path, monkeypatch):
    hub, board = hub_setup
    first = board()
    before = snapshot_of(first)
    a, b, c = sorted(first.entries(), key=lambda e: e.id)
    published = hub.files("org/results")
    assert f"results/{a.key}.json" in published and f"results/{b.key}.npz" in published
    good_json = published[f"results/{a.key}.json"]
    hub.commit(
        "org/results",
        {
            f"results/{a.key}.json": good_json[: len(good_json) // 2],  # truncated
            f"results/{b.key}.npz": published[f"results/{b.key}.npz"][:100],  # truncated
            f"results/{c.key}.json": good_json,  # another submission's summary under c's name
        },
    )
    rescored = []
    real = scoring.score_checked
    monkeypatch.setattr(
        scoring, "score_checked", lambda checked, sha, *a_, **k: rescored.append(sha) or real(checked, sha, *a_, **k)
    )
    hub.reset_counts()
    fresh = board(tmp_path / "fresh")  # a new Space: RESULTS_REPO gives it no numbers, it rescores
    assert snapshot_of(fresh) == before
    assert sorted(rescored) == sorted(e.summary.sha256 for e in (a, b, c))  # each once
    assert not [p for p in hub.downloads() if p.startswith("results/")]  # summaries and per-unit scores: never fetched
    assert_detail_and_compare_work(fresh, fresh.entry(b.id), fresh.entry(a.id))
    repaired = hub.files("org/results")  # the fresh board's push replaced the bad files with its own
    for name in (f"{a.key}.json", f"{b.key}.npz", f"{c.key}.json"):
        assert repaired[f"results/{name}"] == (tmp_path / "fresh" / "results" / name).read_bytes()
    assert json.loads(repaired[f"results/{c.key}.json"])["sha256"] == c.summary.sha256


# ---- flags.json ---------------------------------------------------------------------------------------------------
def hidden_ids(board: Board) -> set[str]:
    return {e.id for e in board.entries() if e.hidden}


def test_a_broken_flags_json_keeps_the_last_good_flags_across_a_restart_and_tells_admins(tmp_path, caplog):
    flags = tmp_path / "local" / "flags.json"
    flags.parent.mkdir(parents=True)
    flags.write_text(json.dumps({"demo/vdr/colqwen2-v1-0-none.jsonl": {"status": "hidden", "reason": "test"}}))
    board = local_board(tmp_path)
    hidden = hidden_ids(board)
    assert len(hidden) == 1 and board.status()["notice"] is None
    shown = set(board.table("vdr")["id"])
    assert not hidden & shown

    flags.write_text('{"demo/vdr/colqwen2-v1-0-none.jsonl": {"status": "hidden",')  # a maintainer's bad edit
    caplog.set_level(logging.WARNING)
    board.refresh()
    board.refresh()
    assert hidden_ids(board) == hidden and set(board.table("vdr")["id"]) == shown
    notice = board.status()["notice"]
    assert notice.startswith("flags.json unreadable since ") and notice.endswith("; keeping the last good flags")
    assert notice in status_html(board).replace("&#x27;", "'") and str(tmp_path) not in notice
    assert len(warnings_about(caplog, "flags.json unreadable")) == 1  # once, not per pull

    restarted = local_board(tmp_path)  # the last good flags survive a restart
    assert hidden_ids(restarted) == hidden and restarted.status()["notice"] == notice

    flags.write_text(json.dumps({"demo/vdr/colsmol-256m-none.jsonl": "hidden"}))  # fixed: the new flags apply
    restarted.refresh()
    assert restarted.status()["notice"] is None and "notice" not in status_html(restarted)
    assert len(hidden_ids(restarted)) == 1 and hidden_ids(restarted) != hidden


def test_a_broken_flags_json_on_the_hub_keeps_the_last_good_flags(hub_setup, tmp_path):
    hub, board = hub_setup
    first = board()
    victim = pick(first, "unidoc")
    hub.commit("org/subs", {"flags.json": json.dumps({victim.path: "hidden"}).encode()})
    first.refresh()
    assert hidden_ids(first) == {victim.id}
    hub.commit("org/subs", {"flags.json": b"{\x00 not json"})
    first.refresh()
    assert hidden_ids(first) == {victim.id} and "flags.json unreadable since" in first.status()["notice"]
    restarted = board()
    assert hidden_ids(restarted) == {victim.id} and restarted.status()["notice"] == first.status()["notice"]
    hub.commit("org/subs", {"flags.json": b"{}"})
    restarted.refresh()
    assert hidden_ids(restarted) == set() and restarted.status()["notice"] is None
