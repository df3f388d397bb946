"""RESULTS_REPO is not trusted with numbers: a fresh board takes back only its judge's verdicts and rescores.

Board A judges (fake OpenAI judge) and publishes to the local Hub; then someone
with write access edits the repo the way an attacker would: an inflated
summary, junk at paths no file kind has, an oversized file under a known name.
A fresh board B (a new Space) must show exactly A's numbers (a fresh rescoring)
without calling the judge, never download the junk or the oversized file, and
its next push must put its own bytes back where the repo was edited.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from leaderboard.judge import record
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings

from hubfake import FAKE_TOKEN, fake_hub  # noqa: F401 (fixture)
from openaifake import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "assets" / "demo" / "submissions"
UNIDOC = sorted((DEMO / "unidoc").glob("*.jsonl"))[:2]
VDR = sorted((DEMO / "vdr").glob("*.jsonl"))[:2]
JUDGE = "openai:fake-judge"


def shown(board: Board) -> dict[str, tuple]:
    """What the page shows per system: status, judge, headline numbers with CIs, coverage."""
    return {
        e.id: (
            e.status,
            e.summary.judge,
            json.dumps(e.summary.overall, sort_keys=True),
            json.dumps(e.summary.ci, sort_keys=True),
            e.summary.n,
        )
        for e in board.entries()
    }


@pytest.fixture
def published(fake_hub, tmp_path, monkeypatch):  # noqa: F811
    """The Hub, a judge server, a board factory, and board A's judged and published results."""
    fake_hub.create_repo("org/subs", repo_type="dataset")
    fake_hub.create_repo("org/results", repo_type="dataset")
    files = {f"submissions/unidoc/demo/{p.name}": p.read_bytes() for p in UNIDOC}
    files.update({f"submissions/vdr/demo/{p.name}": p.read_bytes() for p in VDR})
    fake_hub.commit("org/subs", files)
    with FakeOpenAI() as judge_server:

        def board(data_dir: Path, drain: bool = True, mode: str = "live") -> Board:
            store = StoreSettings(
                submissions_repo="org/subs",
                results_repo="org/results",
                hf_token=FAKE_TOKEN,
                hf_endpoint=fake_hub.url,
                data_dir=data_dir,
                hub_timeout=5,
            )
            settings = Settings(
                data_dir=data_dir,
                judge="openai",
                judge_model="fake-judge",
                openai_base_url=judge_server.base_url,
                openai_api_key="sk-test",
                judge_mode=mode,
                judge_batch_poll_seconds=0.01,
            )
            b = Board(settings, store).start(background=False)
            if drain:
                b.judge_queue.put("")
                b.judge_queue.run()  # judge what waits, in this thread
            return b

        first = board(tmp_path / "a")
        assert judge_server.calls > 0 and all(not e.judging for e in first.entries())
        yield fake_hub, judge_server, board, first


def judged_unidoc(board: Board):
    return sorted((e for e in board.entries("unidoc") if e.summary.judge == JUDGE), key=lambda e: e.id)


def test_a_poisoned_results_repo_leaves_the_numbers_of_a_fresh_rescoring(published, tmp_path, monkeypatch):
    hub, judge_server, board, first = published
    before = shown(first)
    unidoc, vdr = judged_unidoc(first)[0], sorted(first.entries("vdr"), key=lambda e: e.id)[0]
    repo = hub.files("org/results")
    assert f"results/{record.RECORDS_DIR}/{record.file_name(unidoc.sha256, JUDGE)}" in repo  # the verdicts travel
    # What a writer of RESULTS_REPO could do: inflate two summaries (consistent with their names, so every
    # check of the old pull passed), drop junk at paths no file kind has, and an oversized file under a known
    # kind's name (a verdict record of a submission the board does not have: such records are never fetched,
    # so a flood of them cannot fill the disk either).
    poisoned = {}
    for e, metric in ((vdr, "ndcg@5"), (unidoc, "completeness")):
        summary = json.loads(repo[f"results/{e.key}.json"])
        summary["overall"][metric] = 0.999
        poisoned[f"results/{e.key}.json"] = json.dumps(summary).encode()
    junk = os.urandom(1 << 20)
    monkeypatch.setattr(record, "MAX_BYTES", 1 << 20)  # a small cap, so the test moves little data
    oversized = f"results/{record.RECORDS_DIR}/{'f' * 64}.openai_fake-judge.json"
    hub.commit(
        "org/results",
        {
            **poisoned,
            "results/junk.bin": junk,
            f"results/{record.RECORDS_DIR}/junk.bin": junk,
            "results/index/unidoc/zz.json": junk,
            oversized: b'{"format": 1, "verdicts": [' + b"0," * (600 * 1024) + b"0]}",
            f"results/{'e' * 64}.vdr.-.v3.none.json": b'{"overall": {"ndcg@5": 1.0}, "pad": "' + b"x" * (2 << 20) + b'"}',
        },
    )
    hub.reset_counts()
    calls = judge_server.calls

    fresh = board(tmp_path / "b", drain=False)  # a new Space: nothing on its disk

    assert shown(fresh) == before  # every number recomputed: none of the edits shows
    assert judge_server.calls == calls and not any(e.judging for e in fresh.entries())  # judged from the pulled verdicts
    pulled = {p for p in hub.downloads() if p.startswith("results/")}
    assert pulled == {f"results/{record.RECORDS_DIR}/{record.file_name(e.sha256, JUDGE)}" for e in judged_unidoc(first)}
    assert not [
        p
        for p in (tmp_path / "b").rglob("*")
        if p.name in ("junk.bin", "zz.json") or {"e" * 64, "f" * 64} & set(p.name.split("."))
    ]
    records = [p for p in (tmp_path / "b").rglob("*.json") if record.is_record_path(f"verdicts/{p.name}")]
    assert sorted(p.relative_to(tmp_path / "b").as_posix() for p in records) == sorted(pulled)  # no copy in a cache
    # the fresh board's push put its own results back where the repo was edited
    repaired = hub.files("org/results")
    for path in poisoned:
        assert repaired[path] == (tmp_path / "b" / path).read_bytes()
        assert json.loads(repaired[path])["overall"] == next(
            e.summary.overall for e in fresh.entries() if f"results/{e.key}.json" == path
        )


def test_an_oversized_or_damaged_verdict_record_is_refused_and_only_its_missing_verdicts_are_judged_again(
    published, tmp_path, monkeypatch, caplog
):
    hub, judge_server, board, first = published
    before = shown(first)
    big, partial = judged_unidoc(first)[:2]
    big_path = f"results/{record.RECORDS_DIR}/{record.file_name(big.sha256, JUDGE)}"
    partial_path = f"results/{record.RECORDS_DIR}/{record.file_name(partial.sha256, JUDGE)}"
    repo = hub.files("org/results")
    own_big = repo[big_path]
    monkeypatch.setattr(record, "MAX_BYTES", len(own_big) + 1024)
    doc = json.loads(repo[partial_path])
    dropped = doc["verdicts"].pop()  # one verdict fewer: the rest is still worth having
    hub.commit(
        "org/results",
        {big_path: own_big[:-1] + b" " * (2048) + b"}", partial_path: json.dumps(doc).encode()},
    )
    hub.reset_counts()
    calls = judge_server.calls

    fresh = board(tmp_path / "b", drain=False)
    assert big_path not in hub.downloads()  # over the cap by the listing: never fetched
    assert partial_path in hub.downloads()
    assert {e.id for e in fresh.entries() if e.judging} == {big.id, partial.id}
    assert judge_server.calls == calls
    fresh.judge_queue.put("")
    fresh.judge_queue.run()
    assert shown(fresh) == before
    # the big one judged afresh (two calls per answer at most, gold facts once per question), the partial one
    # only for the verdict its record lacked: at most two calls
    judged_again = judge_server.calls - calls
    assert 0 < judged_again
    partial_entry = fresh.entry(partial.id)
    assert partial_entry.summary.judge_ledger["cache_hits"] == len(doc["verdicts"])
    assert partial_entry.summary.judge_ledger["calls"] <= 2
    assert dropped["qid"] in {v["qid"] for v in json.loads((tmp_path / "b" / partial_path).read_bytes())["verdicts"]}
    repaired = hub.files("org/results")  # the board's own records replaced the refused and the partial one
    assert repaired[big_path] == (tmp_path / "b" / big_path).read_bytes()
    assert repaired[partial_path] == (tmp_path / "b" / partial_path).read_bytes()
    assert len(json.loads(repaired[partial_path])["verdicts"]) == len(doc["verdicts"]) + 1


def test_the_about_page_states_the_trust_model():
    from leaderboard.ui.about import about_markdown

    assert "takes back only the LLM judge's verdicts" in about_markdown() and "forge a verdict" in about_markdown()


def test_a_verdict_record_is_checked_whole_before_it_is_installed(tmp_path):
    sha = "a" * 64
    name = record.file_name(sha, JUDGE)
    verdict = {
        "judge": JUDGE,
        "judge_model": "fake-judge",
        "prompt_version": "p1",
        "qid": "q1",
        "response_sha256": "b" * 64,
        "gold_sha256": "c" * 64,
        "gold_facts": ["x"],
        "gold_fact_supported": [True],
        "response_facts": ["y"],
        "response_fact_supported": [False],
    }
    good = {
        "format": 1,
        "sha256": sha,
        "judge": JUDGE,
        "prompt_version": "p1",
        "judge_ledger": {"calls": 2},
        "verdicts": [verdict],
    }
    assert isinstance(record.parse(json.dumps(good).encode(), name), record.Record)
    bad = {
        "another submission": {**good, "sha256": "d" * 64},
        "another judge": {**good, "judge": "openai:other"},
        "flags of another length": {**good, "verdicts": [{**verdict, "gold_fact_supported": [True, True]}]},
        "another prompt version inside": {**good, "verdicts": [{**verdict, "prompt_version": "p0"}]},
        "a failure": {**good, "verdicts": [{**verdict, "failure": "timeout"}]},
        "a ledger of text": {**good, "judge_ledger": {"calls": "x" * 500}},
        "a negative count": {**good, "judge_ledger": {"calls": -1}},
        "no verdict list": {**good, "verdicts": {"q1": verdict}},
    }
    for why, doc in bad.items():
        assert isinstance(record.parse(json.dumps(doc).encode(), name), str), why
    assert isinstance(record.parse(json.dumps(good).encode(), "junk.bin"), str)
    assert not record.is_record_path("junk.bin") and not record.is_record_path(f"verdicts/../{name}")
    assert record.is_record_path(f"verdicts/{name}") and not record.is_record_path(f"verdicts/x/{name}")
    huge = tmp_path / name
    with open(huge, "wb") as f:
        f.truncate(record.MAX_BYTES + 1)  # sparse: measured, never read
    assert "over the" in record.read(huge)


def test_in_batch_mode_a_partial_record_sends_only_its_missing_answer(published, tmp_path, monkeypatch):
    hub, judge_server, board, first = published
    before = shown(first)
    partial = judged_unidoc(first)[0]
    path = f"results/{record.RECORDS_DIR}/{record.file_name(partial.sha256, JUDGE)}"
    doc = json.loads(hub.files("org/results")[path])
    doc["verdicts"].pop()
    hub.commit("org/results", {path: json.dumps(doc).encode()})
    lines = len(judge_server.batch_bodies)

    fresh = board(tmp_path / "b", mode="batch")  # the judge's queue drained: one batch run for what the records lack
    assert shown(fresh) == before
    sent = judge_server.batch_bodies[lines:]
    assert 1 <= len(sent) <= 3  # the missing answer's two calls, and its question's gold facts
    assert fresh.entry(partial.id).summary.judge_ledger["cache_hits"] == len(doc["verdicts"])
