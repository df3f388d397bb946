"""Batch judging end to end: the real `openai` client's Files + Batches calls against tests/openaifake.py."""

from __future__ import annotations

import io
import json
import logging
import re
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import openai
import pytest

from leaderboard.judge import (
    BatchError,
    BatchJudge,
    BatchPending,
    JudgeConfigError,
    JudgeItem,
    LLMJudge,
    TqdmProgress,
    make_judge,
)
from leaderboard.judge.batch import _bounded_lines, custom_id
from leaderboard.judge_queue import JudgeProgress
from leaderboard.scoring import score_bytes
from leaderboard.settings import Settings
from leaderboard.ui.html import status_html

from openaifake import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
SUBMISSIONS = sorted((ROOT / "assets" / "demo" / "submissions" / "unidoc").glob("*.jsonl"))

Q = "How did the plant's output change?"
GOLD = "The plant produced 400 megawatts in 2010. Output doubled by 2020. The operator is Northwind Energy."
EVIDENCE = ["Northwind Energy operates the plant", "Capacity reached 800 megawatts in 2020"]
ANSWERS = [
    "The plant produced 400 megawatts in 2010. Northwind Energy sold it in 2015.",
    "Output doubled by 2020.",
    "",  # nothing to judge: no call
    "The operator is Northwind Energy. Output doubled by 2020. It is in Norway.",
]


def items(answers: list[str] = ANSWERS) -> list[JudgeItem]:
    return [JudgeItem(f"energy-{i:04d}", Q, GOLD, list(EVIDENCE), a) for i, a in enumerate(answers)]


@pytest.fixture
def fake():
    with FakeOpenAI() as f:
        yield f


def judge_for(fake: FakeOpenAI, cache: Path, mode: str = "batch", batch_dir: Path | None = None, **kw):
    judge = make_judge(
        "openai",
        cache_dir=cache,
        model="fake-judge",
        base_url=fake.base_url,
        api_key="test-key",
        backoff_base=0.001,
        backoff_max=0.01,
        timeout=5.0,
        mode=mode,
        poll_seconds=0.01,
        batch_dir=batch_dir,
    )
    for key, value in kw.items():
        setattr(judge, key, value)
    return judge


def live_verdicts(tmp_path: Path, its: list[JudgeItem]) -> dict:
    with FakeOpenAI() as other:  # its own server: the batch test's counters stay clean
        return judge_for(other, tmp_path / "live-cache", mode="live").judge_many(its)


def test_a_board_judged_in_batch_mode_gets_the_live_verdicts_and_scores(fake, tmp_path):
    for sub in SUBMISSIONS[:2]:  # two systems: the second shares the first one's cached gold facts
        data = sub.read_bytes()
        with FakeOpenAI() as live_server:
            live_judge = judge_for(live_server, tmp_path / "live", mode="live")
            live = score_bytes(data, sub.name, None, live_judge).summary
            live_calls = live_server.calls
        judge = judge_for(fake, tmp_path / "batch")
        batches_before = list(fake.batches)
        assert isinstance(judge, BatchJudge) and judge.name == live_judge.name == "openai:fake-judge"
        batch = score_bytes(data, sub.name, None, judge).summary
        assert fake.calls == 0  # not one live chat call in batch mode
        assert batch.judge == live.judge
        for key in ("overall", "ci", "breakdowns", "n", "missing"):
            assert getattr(batch, key) == getattr(live, key), key
        led_live, led_batch = live.judge_ledger, batch.judge_ledger
        for key in ("items", "judged", "failures", "calls", "prompt_tokens", "completion_tokens", "gold_calls"):
            assert led_batch[key] == led_live[key], key  # same requests, so the same bill
        assert led_batch["batch_lines"] == led_live["calls"] + led_live["gold_calls"] == live_calls
        assert led_batch["mode"] == "batch" and led_batch["batch_ids"] == list(fake.batches)[len(batches_before) :]
        # one batch per round: gold facts, call 1, call 2; the second system's questions have cached gold facts
        assert len(led_batch["batch_ids"]) == (3 if sub == SUBMISSIONS[0] else 2)
        assert led_batch["gold_calls"] == (96 if sub == SUBMISSIONS[0] else 0)
    # verdict by verdict, the cache files are the same whichever path wrote them
    live_files = sorted(p.relative_to(tmp_path / "live") for p in (tmp_path / "live").rglob("*.json"))
    batch_files = sorted(p.relative_to(tmp_path / "batch") for p in (tmp_path / "batch").rglob("*.json"))
    assert live_files == batch_files and len(batch_files) > 100
    for rel in batch_files:
        a, b = json.loads((tmp_path / "live" / rel).read_text()), json.loads((tmp_path / "batch" / rel).read_text())
        if "/gold/" not in rel.as_posix():
            assert a == b, rel
        else:
            assert a["facts"] == b["facts"], rel
    # a second run: every verdict cached, no batch, no line, no call
    lines_before, batches_before = len(fake.batch_bodies), len(fake.batches)
    again = score_bytes(SUBMISSIONS[0].read_bytes(), SUBMISSIONS[0].name, None, judge_for(fake, tmp_path / "batch")).summary
    assert len(fake.batches) == batches_before and len(fake.batch_bodies) == lines_before and fake.calls == 0
    assert again.judge_ledger["batch_lines"] == 0 and again.judge_ledger["cache_hits"] == again.judge_ledger["items"]
    assert not list((tmp_path / "batch").rglob("batches/*.json"))  # no run state left behind


def test_lines_carry_custom_ids_and_the_live_request_bodies(fake, tmp_path):
    its = items()
    judge_for(fake, tmp_path / "batch").judge_many(its)
    with FakeOpenAI() as live_server:
        judge_for(live_server, tmp_path / "live", mode="live").judge_many(its)
        live_bodies = live_server.requests
    inputs = [json.loads(line) for f in fake.files.values() if f["meta"]["purpose"] == "batch" for line in f["data"].splitlines()]
    ids = [line["custom_id"] for line in inputs]
    assert len(ids) == len(set(ids)) == len(live_bodies) == 4 + 3 + 3  # gold per question, 2 calls per non-empty answer
    assert sorted(i for i in ids if i.startswith("gold:")) == sorted(
        custom_id("gold", it.qid, it.gold_answer_sha256) for it in its
    )
    assert sorted(i for i in ids if i.startswith("check:")) == sorted(
        custom_id("check", it.qid, it.response_sha256) for it in its if it.response
    )
    assert custom_id("check", "energy-0001", "ab" * 32) == "check:energy-0001:" + "ab" * 8
    assert len(custom_id("gold", "q/" * 100, "ab" * 32)) < 64  # bounded whatever the question ids are
    assert all(line["method"] == "POST" and line["url"] == "/v1/chat/completions" for line in inputs)
    # the same request bodies as live calls, in any order
    canon = sorted(json.dumps(b, sort_keys=True) for b in live_bodies)
    assert sorted(json.dumps(line["body"], sort_keys=True) for line in inputs) == canon
    for created in fake.batches.values():
        assert created["endpoint"] == "/v1/chat/completions" and created["completion_window"] == "24h"
        assert created["metadata"]["judge"] == "openai:fake-judge"


def test_failed_and_malformed_lines_are_retried_in_a_follow_up_batch(fake, tmp_path):
    its = items(ANSWERS[:1])
    # gold ok; call 1: an error line, then a malformed reply, then valid; call 2 ok
    fake.line_plan.extend(["ok", "500", "malformed", "ok", "ok"])
    judge = judge_for(fake, tmp_path / "batch")
    v = judge.judge_many(its)["energy-0000"]
    live = live_verdicts(tmp_path, its)["energy-0000"]
    judged = ("gold_facts", "gold_fact_supported", "response_facts", "response_fact_supported", "failure")
    assert [getattr(v, k) for k in judged] == [getattr(live, k) for k in judged]
    assert v.failure is None and v.calls == 3  # the malformed reply is billed, the error line is not
    assert len(fake.batches) == 5  # gold, check, check again (error), check again (malformed), support
    led = judge.last_ledger
    assert (led.batch_line_failures, led.retries, led.malformed, led.failures) == (2, 1, 1, 0)
    # the resend after a malformed reply carries the live judge's retry note
    retry = fake.batch_bodies[3]["messages"]
    assert retry[:2] == fake.batch_bodies[1]["messages"] and len(retry) == 3
    assert retry[2]["content"].startswith("Your previous reply was rejected (not JSON")


def test_lines_failing_every_time_are_recorded_as_failures_not_cached(fake, tmp_path):
    its = items(ANSWERS[:2])
    # gold (one line per item) ok; then every call-1 line of energy-0000 fails, energy-0001's succeed
    judge = judge_for(fake, tmp_path / "batch")
    fake.line_plan.extend(["ok", "ok", "500", "ok", "500", "500"])  # round 1 of check: 0000 fails, 0001 ok; then 0000 x2
    fake.line_plan.extend(["ok"])  # support of 0001
    out = judge.judge_many(its)
    assert out["energy-0000"].failure.startswith("response check: batch line failed 3 times: HTTP 500")
    assert out["energy-0001"].failure is None
    assert judge.last_ledger.failures == 1 and fake.calls == 0
    # the failure is not cached: a later run judges it again (and only it)
    judge.judge_many(its)
    assert judge.last_ledger.cache_hits == 1 and judge.last_ledger.failures == 0

    fake.line_plan.extend(["malformed"] * 3)  # a new question: its gold-fact line never parses
    v = judge.judge_many([JudgeItem("energy-0099", Q, GOLD, EVIDENCE, "Output doubled by 2020.")])["energy-0099"]
    assert v.failure is not None and v.failure.startswith("gold facts: malformed reply after 3 attempts: not JSON")
    assert judge.last_ledger.malformed == 3 and judge.last_ledger.failures == 1


def test_an_expired_batch_keeps_what_it_answered_and_resubmits_the_rest(fake, tmp_path):
    its = items()
    fake.expire_plan.extend([1, None, 2])  # gold batch: 1 of 4 answered; its resend completes; check batch: 2 of 3
    judge = judge_for(fake, tmp_path / "batch")
    out = judge.judge_many(its)
    assert out == live_verdicts(tmp_path, its)
    statuses = [b["status"] for b in fake.batches.values()]
    sizes = [b["request_counts"]["total"] for b in fake.batches.values()]
    assert statuses == ["expired", "completed", "expired", "completed", "completed"]
    assert sizes == [4, 3, 3, 1, 3]  # only what was not answered goes out again
    assert judge.last_ledger.batch_unreturned == 4 and judge.last_ledger.batch_lines == 4 + 3 + 3 + 1 + 3


def test_batches_that_never_answer_are_bounded_then_failures(fake, tmp_path):
    its = items(ANSWERS[:1])
    fake.expire_plan.extend([0] * 10)
    judge = judge_for(fake, tmp_path / "batch")
    v = judge.judge_many(its)["energy-0000"]
    assert v.failure == "gold facts: not answered by 4 batches (last one expired)"
    assert len(fake.batches) == 4  # 1 + max_resubmits (3), then no more


def test_a_cancelled_batch_keeps_what_it_answered_and_resubmits_the_rest(fake, tmp_path):
    its = items()
    fake.hold = True
    fake.cancel_keeps = 2
    judge = judge_for(fake, tmp_path / "batch")
    result: dict = {}
    worker = threading.Thread(target=lambda: result.update(judge.judge_many(its)))
    worker.start()
    deadline = time.monotonic() + 10
    while not fake.batches and time.monotonic() < deadline:
        time.sleep(0.01)
    client = openai.OpenAI(base_url=fake.base_url, api_key="k", max_retries=0)
    (first,) = fake.batches
    assert client.batches.cancel(first).status == "cancelled"  # e.g. an operator in the provider's dashboard
    fake.hold = False
    worker.join(20)
    assert result == live_verdicts(tmp_path, its)
    assert [b["request_counts"]["total"] for b in fake.batches.values()][:2] == [4, 2]


def test_a_restart_mid_batch_resumes_polling_the_same_batch(fake, tmp_path):
    its = items()
    fake.hold = {"batch_fake2"}  # the gold round completes, the first check batch runs on
    first = judge_for(fake, tmp_path / "batch", max_wait_seconds=0.2)
    with pytest.raises(BatchPending) as err:
        first.judge_many(its)
    assert err.value.batch_id == "batch_fake2" and "run again to resume" in str(err.value)
    state_files = list((tmp_path / "batch").rglob("batches/*.json"))
    assert len(state_files) == 1 and json.loads(state_files[0].read_text())["pending"]["batch_id"] == "batch_fake2"
    assert len(fake.batches) == 2

    fake.hold = False
    polled_before = len(fake.batch_calls)
    second = judge_for(fake, tmp_path / "batch")  # a new process: same cache folder, nothing in memory
    out = second.judge_many(its)
    assert out == live_verdicts(tmp_path, its)
    after = fake.batch_calls[polled_before:]
    assert after[0] == ("GET", "/v1/batches/batch_fake2")  # first thing: polls the batch it left running
    assert len(fake.batches) == 3  # no gold or check batch created again: only the support round is new
    led = second.last_ledger
    assert led.batch_ids == ["batch_fake1", "batch_fake2", "batch_fake3"]
    assert (led.gold_calls, led.calls) == (4, 6)  # the whole run's bill, across the restart
    assert not list((tmp_path / "batch").rglob("batches/*.json"))


def test_output_lines_not_asked_for_are_ignored_and_reading_is_bounded(fake, tmp_path, caplog):
    its = items(ANSWERS[:2])
    stranger = {"custom_id": "gold:someone-else:0000", "response": {"status_code": 200, "body": {}}, "error": None}
    fake.extra_output = [json.dumps(stranger), "not json at all", "[1, 2]", "x" * 20_000]
    judge = judge_for(fake, tmp_path / "batch", max_line_bytes=8_000)
    with caplog.at_level(logging.WARNING, logger="leaderboard.judge.batch"):
        out = judge.judge_many(its)
    assert out == live_verdicts(tmp_path, its)
    logged = " ".join(r.getMessage() for r in caplog.records)
    for what in ("a line not asked for ('gold:someone-else:0000')", "not JSON", "not a JSON object", "longer than 8000 bytes"):
        assert what in logged


def test_a_repeated_line_cannot_overwrite_the_first(fake, tmp_path):
    (it,) = items(ANSWERS[:1])
    gold_id = custom_id("gold", it.qid, it.gold_answer_sha256)
    forged = {
        "custom_id": gold_id,
        "response": {"status_code": 200, "body": {"choices": [{"message": {"content": '{"facts": ["forged"]}'}}]}},
        "error": None,
    }
    fake.extra_output = [json.dumps(forged)]  # after the real line: a repeat, ignored
    v = judge_for(fake, tmp_path / "batch").judge_many([it])[it.qid]
    assert "forged" not in v.gold_facts and v.gold_facts == live_verdicts(tmp_path, [it])[it.qid].gold_facts


def test_bounded_lines_stop_at_the_cap_and_skip_long_lines():
    skipped: list[str] = []
    chunks = [b"a" * 10 + b"\n" + b"b" * 50, b"b" * 50 + b"\nc\n", b"d" * 5]
    assert list(_bounded_lines(iter(chunks), 10_000, 60, skipped.append)) == [b"a" * 10, b"c", b"d" * 5]
    assert skipped == ["a line longer than 60 bytes"]
    skipped.clear()
    assert list(_bounded_lines(iter([b"x\n" * 10, b"y\n" * 10]), 25, 60, skipped.append)) == [b"x"] * 10
    assert skipped == ["the rest of a file past 25 bytes"]


def test_a_refusing_service_is_a_batch_error_and_an_unreachable_one_leaves_the_batch_pending(fake, tmp_path):
    fake.api_plan.extend(["401"])
    with pytest.raises(BatchError, match="upload the batch file: HTTP 401"):
        judge_for(fake, tmp_path / "batch").judge_many(items(ANSWERS[:1]))
    assert fake.batches == {}
    fake.api_plan.extend(["ok", "ok"] + ["503"] * 5)  # upload, create, then every poll fails
    with pytest.raises(BatchPending, match="poll batch batch_fake1: HTTP 503 after 5 attempts"):
        judge_for(fake, tmp_path / "batch").judge_many(items(ANSWERS[:1]))
    out = judge_for(fake, tmp_path / "batch").judge_many(items(ANSWERS[:1]))  # the service is back: resumes
    assert out["energy-0000"].failure is None and list(fake.batches)[0] == "batch_fake1"


def test_mode_from_the_settings(fake, tmp_path):
    def judge(env: dict[str, str]):
        base = {
            "JUDGE_MODEL": "m",
            "OPENAI_BASE_URL": fake.base_url,
            "OPENAI_API_KEY": "k",
            "LEADERBOARD_DATA_DIR": str(tmp_path),
        }
        return make_judge("openai", **Settings.from_env({**base, **env}).judge_kwargs())

    batch = judge({"JUDGE_MODE": "batch", "JUDGE_BATCH_POLL_SECONDS": "0.5", "JUDGE_BATCH_MAX_ITEMS": "7"})
    assert isinstance(batch, BatchJudge) and batch.poll_seconds == 0.5 and "batch mode" in batch.description
    assert batch.max_items == 7
    assert type(judge({"JUDGE_MODE": "live"})) is LLMJudge
    assert type(judge({})) is LLMJudge  # live unless asked
    with pytest.raises(ValueError, match="JUDGE_MODE must be live or batch"):
        judge({"JUDGE_MODE": "later"})
    with pytest.raises(JudgeConfigError, match="unknown judge mode"):
        make_judge("openai", cache_dir=tmp_path, model="m", base_url=fake.base_url, api_key="k", mode="later")


def test_progress_reports_the_batch_and_its_lines(fake, tmp_path):
    progress = JudgeProgress()
    seen: list[tuple[str, int, int]] = []
    original = progress.on_batch

    def spy(batch_id: str, done: int, total: int, **state) -> None:
        seen.append((batch_id, done, total))
        original(batch_id, done, total, **state)

    progress.on_batch = spy  # type: ignore[method-assign]
    judge_for(fake, tmp_path / "batch").judge_many(items(), progress=progress)
    assert ("batch_fake1", 4, 4) in seen and ("batch_fake2", 3, 3) in seen
    assert (progress.done, progress.total) == (4, 4)
    # the status line shows it; the batch id is the server's text, escaped and bounded
    progress.on_batch("batch_<b>" + "9" * 200, 12, 40)
    board = SimpleNamespace(
        status=lambda: {"data_as_of": "now", "judge": "openai:m", "banner": "", "notice": ""},
        judge_progress={"sys-1": progress},
        entry=lambda _id: SimpleNamespace(name="My RAG"),
    )
    html = status_html(board)
    assert "judging: batch batch_&lt;b&gt;999" in html and ", 12 of 40 lines" in html
    assert '<progress value="12" max="40">' in html and "9" * 60 not in html


def status_of(progress: JudgeProgress) -> str:
    board = SimpleNamespace(
        status=lambda: {"data_as_of": "now", "judge": "openai:m", "banner": "", "notice": ""},
        judge_progress={"sys-1": progress},
        entry=lambda _id: SimpleNamespace(name="My RAG"),
    )
    return status_html(board)


def test_a_batch_the_provider_never_finishes_says_how_long_it_has_waited(fake, tmp_path):
    fake.hold, fake.held_done = True, 1.0  # its counts say every line is done; its output never comes
    its = items()
    progress = JudgeProgress()
    with pytest.raises(BatchPending):
        judge_for(fake, tmp_path / "batch", max_wait_seconds=0.05).judge_many(its, progress=progress)
    assert re.search(r"judging: batch batch_fake1, 4 of 4 lines, waiting for the provider for \d s ", status_of(progress))
    # resumed hours later (a restart): the wait counts from when the batch was sent, not from the restart
    (state,) = (tmp_path / "batch").rglob("batches/*.json")
    record = json.loads(state.read_text())
    record["pending"]["sent_at"] -= 3 * 3600 + 5 * 60 + 10
    state.write_text(json.dumps(record))
    progress = JudgeProgress()
    with pytest.raises(BatchPending):
        judge_for(fake, tmp_path / "batch", max_wait_seconds=0.05).judge_many(its, progress=progress)
    assert "batch batch_fake1, 4 of 4 lines, waiting for the provider for 3 h 05 min" in status_of(progress)
    assert len(fake.batches) == 1  # the same batch, polled again
    # once the output is there the line says so, until the next round's batch replaces it
    seen = []
    progress.on_batch = lambda *a, **kw: seen.append((*a, kw["waiting"], kw["since"]))  # type: ignore[method-assign]
    fake.hold = False
    judge_for(fake, tmp_path / "batch").judge_many(its, progress=progress)
    first = [s for s in seen if s[0] == "batch_fake1"]
    assert first[-1][3] is False and first[-1][4] == record["pending"]["sent_at"]
    progress = JudgeProgress()
    progress.on_batch("batch_fake1", 4, 4, since=time.time() - 130, waiting=False)
    assert "batch batch_fake1, 4 of 4 lines, its output arrived after 2 min: reading it" in status_of(progress)
    # the CLI's bar says the same
    bar = TqdmProgress(file=io.StringIO())
    bar(0, 4)
    bar.on_batch("batch_fake2", 96, 96, since=time.time() - 2 * 86400 - 3 * 3600, waiting=True)
    assert bar.bar.postfix == "batch batch_fake2, 96 of 96 lines, waiting for the provider for 2 d 3 h"
    bar.close()


def held_run_state(fake, tmp_path, its) -> Path:
    """The state file of a run left waiting on its first batch (the server holds it)."""
    fake.hold = True
    with pytest.raises(BatchPending):
        judge_for(fake, tmp_path / "batch", max_wait_seconds=0.05).judge_many(its)
    (state,) = (tmp_path / "batch").rglob("batches/*.json")
    return state


def test_a_corrupt_run_state_starts_the_run_afresh(fake, tmp_path, caplog):
    its = items(ANSWERS[:1])
    state = held_run_state(fake, tmp_path, its)
    record = json.loads(state.read_text())
    record["lines"] = {"gold:x:0": {"done": "yes"}}  # wrong shape: not trusted
    state.write_text(json.dumps(record))
    fake.hold = False
    with caplog.at_level(logging.WARNING, logger="leaderboard.judge.batch"):
        out = judge_for(fake, tmp_path / "batch").judge_many(its)
    assert out == live_verdicts(tmp_path, its)
    assert "is unreadable or not this run's; starting afresh" in caplog.text
    # the state naming the held batch was not trusted: that batch was never polled again, a new run paid anew
    assert fake.batches["batch_fake1"]["status"] == "in_progress" and len(fake.batches) == 1 + 3


def run_batch_like_vllm(folder: Path, model: FakeOpenAI) -> int:
    """What `vllm run-batch -i <id>.input.jsonl -o <id>.output.jsonl` does, answered by the fake model."""
    ran = 0
    for src in sorted(folder.glob("*.input.jsonl")):
        dst = src.with_name(src.name.replace(".input.", ".output."))
        if dst.exists():
            continue
        out = []
        for n, raw in enumerate(src.read_text().splitlines()):
            req = json.loads(raw)
            status, body, _ = model._reply(req["url"], req["body"], "ok")
            response = {"status_code": status, "request_id": f"vllm-batch-{n}", "body": body}
            out.append(json.dumps({"id": f"vllm-{n}", "custom_id": req["custom_id"], "response": response, "error": None}))
        dst.with_suffix(".tmp").write_text("\n".join(out) + "\n")
        dst.with_suffix(".tmp").rename(dst)
        ran += 1
    return ran


def test_a_batch_folder_for_vllm_run_batch_gives_the_live_verdicts(fake, tmp_path, monkeypatch):
    its = items()
    folder = tmp_path / "batches"
    rounds = 0
    while True:  # the CLI's way: exit while a batch runs, run the batch, run again to resume
        judge = judge_for(fake, tmp_path / "batch", batch_dir=folder, max_wait_seconds=0.0)
        try:
            out = judge.judge_many(its)
            break
        except BatchPending as pending:
            assert (folder / f"{pending.batch_id}.input.jsonl").is_file()
            rounds += run_batch_like_vllm(folder, fake)
    assert rounds == 3 and out == live_verdicts(tmp_path, its)
    assert fake.calls == 0 and fake.batches == {}  # the server was never asked: the folder was the transport
    assert sorted(judge.last_ledger.batch_ids) == sorted(p.name.split(".")[0] for p in folder.glob("*.input.jsonl"))
    # a state naming a batch that is not a plain name is refused, never followed outside the folder
    other = [JudgeItem("energy-0100", Q, GOLD, EVIDENCE, "Output doubled by 2020.")]
    with pytest.raises(BatchPending):
        judge_for(fake, tmp_path / "batch", batch_dir=folder, max_wait_seconds=0.0).judge_many(other)
    (state,) = (tmp_path / "batch").rglob("batches/*.json")
    record = json.loads(state.read_text())
    record["pending"]["batch_id"] = "../../etc/passwd"
    state.write_text(json.dumps(record))
    with pytest.raises(BatchError, match="not a batch id"):
        judge_for(fake, tmp_path / "batch", batch_dir=folder, max_wait_seconds=0.0).judge_many(other)


def judged_board(tmp_path: Path, fake: FakeOpenAI, monkeypatch, mode: str, max_items: int | None = None):
    from leaderboard.service import Board
    from leaderboard.store import StoreSettings

    settings = Settings(
        data_dir=tmp_path,
        judge="openai",
        judge_model="fake-judge",
        openai_base_url=fake.base_url,
        judge_mode=mode,
        judge_batch_poll_seconds=0.01,
        **({"judge_batch_max_items": max_items} if max_items else {}),
    )
    return Board(settings, StoreSettings(data_dir=tmp_path)).start(background=False)


def test_the_app_judges_a_board_in_batch_mode_and_shows_the_batch(fake, tmp_path, monkeypatch):
    with FakeOpenAI() as live_server:
        live_board = judged_board(tmp_path / "live", live_server, monkeypatch, "live")
        live_board.judge_queue.put("")
        live_board.judge_queue.run()
    board = judged_board(tmp_path / "batch", fake, monkeypatch, "batch")
    assert isinstance(board.judge, BatchJudge)
    waiting = [e for e in board.entries("unidoc") if e.judging]
    assert len(waiting) >= 2
    fake.hold = True
    board.judge_queue.put("")
    worker = threading.Thread(target=board.judge_queue.run)
    worker.start()
    deadline = time.monotonic() + 20
    while "judging: batch" not in status_html(board) and time.monotonic() < deadline:
        time.sleep(0.02)
    line = status_html(board)
    assert f"Answers of {waiting[0].name}: judging: batch batch_fake1, 0 of 96 lines" in line
    fake.hold = False
    worker.join(120)
    assert not worker.is_alive() and fake.calls == 0 and "judging: batch" not in status_html(board)
    live = {e.id: e.summary for e in live_board.entries("unidoc")}
    for e in waiting:  # every system with answers: judged, with the live board's scores
        assert not e.judging and e.summary.judge == live[e.id].judge == "openai:fake-judge"
        assert e.summary.overall == live[e.id].overall and e.summary.ci == live[e.id].ci
        assert "completeness" in e.summary.overall


def test_a_round_over_the_batch_limits_goes_out_in_several_batches(fake, tmp_path, monkeypatch):
    import leaderboard.judge.batch as batch_module

    its = items()
    monkeypatch.setattr(batch_module, "MAX_LINES_PER_BATCH", 2)
    judge = judge_for(fake, tmp_path / "batch")
    assert judge.judge_many(its) == live_verdicts(tmp_path, its)
    assert [b["request_counts"]["total"] for b in fake.batches.values()] == [2, 2, 2, 1, 2, 1]  # gold 4, check 3, support 3
    monkeypatch.setattr(batch_module, "MAX_LINES_PER_BATCH", 50_000)
    monkeypatch.setattr(batch_module, "MAX_BATCH_BYTES", 1)  # one line per file, never zero
    fake.batches.clear()
    judge.judge_many([JudgeItem("energy-0200", Q, GOLD, EVIDENCE, "Output doubled by 2020.")])
    assert [b["request_counts"]["total"] for b in fake.batches.values()] == [1, 1, 1]


# ---------------------------------------------------------------- whole boards: several submissions, one run

LEDGER_SHARE = (
    "items",
    "judged",
    "cache_hits",
    "failures",
    "calls",
    "prompt_tokens",
    "completion_tokens",
    "gold_calls",
    "gold_cache_hits",
    "gold_prompt_tokens",
    "gold_completion_tokens",
)


def test_judge_groups_send_a_shared_item_once_and_charge_it_to_the_first_group(fake, tmp_path):
    first = items()
    second = items([ANSWERS[0], "Northwind Energy sold the plant in 2015.", "", "Output doubled by 2020."])
    judge = judge_for(fake, tmp_path / "batch")
    judged = judge.judge_groups([first, second])
    assert len(fake.batches) == 3 and fake.calls == 0  # one batch per round for both groups
    lines = [b["request_counts"]["total"] for b in fake.batches.values()]
    # gold: one per question (shared); call 1: first's 3 answers + second's 2 new ones (energy-0000 is the same)
    assert lines[:2] == [4, 3 + 2]
    ids = [
        json.loads(x)["custom_id"] for f in fake.files.values() if f["meta"]["purpose"] == "batch" for x in f["data"].splitlines()
    ]
    assert len(ids) == len(set(ids)) == sum(lines)
    # the same verdicts and the same bill as live mode judging the two submissions one after the other
    with FakeOpenAI() as live_server:
        live = judge_for(live_server, tmp_path / "live", mode="live")
        live_out, live_ledgers = [], []
        for group in (first, second):
            live_out.append(live.judge_many(group))
            live_ledgers.append(live.last_ledger.to_dict())
        assert live_server.calls == sum(lines)
    for v, group, verdicts, ledger in zip(judged, (first, second), live_out, live_ledgers, strict=True):
        assert v.by_qid == verdicts and list(v.by_qid) == [it.qid for it in group]
        shared = v.ledger
        assert {k: shared[k] for k in LEDGER_SHARE} == {k: ledger[k] for k in LEDGER_SHARE}
        assert v.judge == judge.name and shared["mode"] == "batch" and shared["batch_ids"] == list(fake.batches)
        assert v.prompt_version == judge.prompt_version and v.shared  # an LLM run's: scoring writes its record
    a, b = (v.ledger for v in judged)
    # energy-0000 and the empty energy-0002 are the first's items: hits; the other two use its gold lines
    assert (b["cache_hits"], b["judged"], b["gold_cache_hits"], b["gold_calls"]) == (2, 2, 2, 0)
    assert a["batch_lines"] + b["batch_lines"] == sum(lines) == len(fake.batch_bodies)


def run_worker(board) -> None:
    board.judge_queue.put("")  # the worker drains what is queued, then stops
    board.judge_queue.run()


def test_a_whole_board_is_judged_in_one_batch_per_round_with_the_live_scores(fake, tmp_path, monkeypatch):
    from leaderboard.ui.views import detail

    with FakeOpenAI() as live_server:
        live_board = judged_board(tmp_path / "live", live_server, monkeypatch, "live")
        run_worker(live_board)
        live_calls = live_server.calls
    board = judged_board(tmp_path / "batch", fake, monkeypatch, "batch")
    waiting = [e for e in board.entries("unidoc") if e.judging]
    assert len(waiting) >= 3
    fake.hold = True
    worker = threading.Thread(target=run_worker, args=(board,))
    worker.start()
    deadline = time.monotonic() + 30
    while status_html(board).count("judging: batch") < len(waiting) and time.monotonic() < deadline:
        time.sleep(0.02)
    line = status_html(board)
    for e in waiting:  # every submission of the run shows the batch it waits for
        assert f"Answers of {e.name}: judging: batch batch_fake1, 0 of 96 lines" in line
    fake.hold = False
    worker.join(120)
    assert not worker.is_alive()
    assert list(fake.batches) == ["batch_fake1", "batch_fake2", "batch_fake3"]  # not three per submission
    assert fake.calls == 0 and len(fake.batch_bodies) == live_calls
    live = {e.id: e.summary for e in live_board.entries("unidoc")}
    for e in waiting:
        s, lv = e.summary, live[e.id]
        assert not e.judging and s.judge == lv.judge == "openai:fake-judge"
        for key in ("overall", "ci", "breakdowns", "n", "missing"):
            assert getattr(s, key) == getattr(lv, key), (e.name, key)
        # its own share: the bill live mode gave this submission, judging the board in the same order
        assert {k: s.judge_ledger[k] for k in LEDGER_SHARE} == {k: lv.judge_ledger[k] for k in LEDGER_SHARE}
        assert s.judge_ledger["batch_ids"] == list(fake.batches)
        html = detail(board, e.id)[0]
        shown = f"batch mode: {s.judge_ledger['batch_lines']} lines in 3 batches (batch_fake1, batch_fake2, batch_fake3)"
        assert shown in html and "0 failed lines, 0 unreturned" in html
        assert "batch mode" not in detail(live_board, e.id)[0]  # a live ledger has no batch fields
    assert sum(e.summary.judge_ledger["batch_lines"] for e in waiting) == live_calls
    # a second run (a restart): every verdict cached, nothing queued, not one line
    again = judged_board(tmp_path / "batch", fake, monkeypatch, "batch")
    assert not [e for e in again.entries("unidoc") if e.judging]
    run_worker(again)
    assert len(fake.batches) == 3 and len(fake.batch_bodies) == live_calls


def late_submission(board, changed: int) -> Path:
    """A new system in the board's local store: the first demo answers, `changed` of them rewritten."""
    src = next(p for p in SUBMISSIONS if p.name.startswith("gme-7b"))
    lines = src.read_text().splitlines()
    header = json.loads(lines[0])
    header["system"]["name"] = "Late system"
    records = [json.loads(x) for x in lines[1:]]
    for n, rec in enumerate(records[:changed]):
        rec["answer"] = f"Late answer number {n} names Northwind Energy. It was written after the batch started."
    target = board.store.root / "submissions" / "unidoc" / "alice" / "late-system.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(json.dumps(x) for x in [header, *records]) + "\n")
    return target


def test_a_restart_mid_run_polls_the_same_batch_whatever_else_is_queued(fake, tmp_path, monkeypatch):
    board = judged_board(tmp_path, fake, monkeypatch, "batch")
    waiting = {e.id for e in board.entries("unidoc") if e.judging}
    fake.hold = {"batch_fake2"}  # the gold round completes, the check round runs on
    board.judge.max_wait_seconds = 0.3
    run_worker(board)  # the wait ends: the run is left on disk, its submissions queued again after a poll interval
    assert len(fake.batches) == 2 and all(e.summary.judge == "none" for e in board.entries("unidoc") if e.id in waiting)
    assert all(e.judging for e in board.entries("unidoc") if e.id in waiting)
    deadline = time.monotonic() + 10
    while board.judge_queue.waiting() < len(waiting) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert board.judge_queue.waiting() == len(waiting)
    (state,) = (tmp_path / "judge").rglob("batches/*.json")
    assert json.loads(state.read_text())["pending"]["batch_id"] == "batch_fake2"

    late_submission(board, changed=3)  # arrives while the batch runs
    fake.hold = False
    polled_before = len(fake.batch_calls)
    restarted = judged_board(tmp_path, fake, monkeypatch, "batch")  # a new process: the state file is all it has
    queued = [e for e in restarted.entries("unidoc") if e.judging]
    assert {e.id for e in queued} > waiting and len(queued) == len(waiting) + 1
    run_worker(restarted)
    assert fake.batch_calls[polled_before] == ("GET", "/v1/batches/batch_fake2")  # first thing: the batch it left
    # the old run: only its third round is new; the late system's 3 new answers: their own call 1 and call 2 batches
    assert len(fake.batches) == 5
    assert [b["request_counts"]["total"] for b in list(fake.batches.values())[3:]] == [3, 3]
    assert not list((tmp_path / "judge").rglob("batches/*.json"))
    with FakeOpenAI() as live_server:
        live_board = judged_board(tmp_path / "live", live_server, monkeypatch, "live")
        late_submission(live_board, changed=3)
        live_board.refresh()
        run_worker(live_board)
        assert len(fake.batch_bodies) == live_server.calls  # across the restart, every line paid once
    live = {e.id: e.summary for e in live_board.entries("unidoc")}
    for e in queued:
        assert not e.judging and e.summary.overall == live[e.id].overall, e.name
    late = next(e for e in queued if e.name == "Late system")
    assert {"batch_fake4", "batch_fake5"} <= set(late.summary.judge_ledger["batch_ids"])
    # the shares add up to the lines sent, those before the restart included
    assert sum(e.summary.judge_ledger["batch_lines"] for e in queued) == len(fake.batch_bodies)


def test_a_board_run_is_bounded_by_max_items(fake, tmp_path, monkeypatch):
    board = judged_board(tmp_path, fake, monkeypatch, "batch", max_items=100)  # one demo submission (96 answers) a run
    waiting = [e for e in board.entries("unidoc") if e.judging]
    assert board.judge.max_items == 100
    run_worker(board)  # the first run; the others wait in the queue for theirs
    assert sum(not e.judging for e in waiting) == 1
    while board.judge_queue.waiting():
        run_worker(board)
    runs = {tuple(e.summary.judge_ledger["batch_ids"]) for e in waiting}
    assert len(runs) == len(waiting) and all(not e.judging for e in waiting)
    assert len(fake.batches) == 3 + 2 * (len(waiting) - 1)  # gold facts once, then call 1 and call 2 per run


def test_the_judge_cost_view_bounds_and_escapes_the_batch_fields():
    from leaderboard.ui.views.system import _batch_cost

    ledger = {"mode": "batch", "batch_ids": ["<b>x</b>"] + [f"batch_{n}" for n in range(9)], "batch_lines": 12}
    shown = _batch_cost({**ledger, "batch_line_failures": 2, "batch_unreturned": "lots"})
    assert "&lt;b&gt;x&lt;/b&gt;" in shown and "<b>" not in shown
    assert "12 lines in 10 batches" in shown and "batch_4 and 4 more" in shown and "batch_5" not in shown
    assert "2 failed lines, 0 unreturned" in shown  # a count that is not a number shows as 0
    assert _batch_cost({"calls": 3}) == ""


def test_an_unfinished_run_waits_for_a_call_asking_for_its_answers(fake, tmp_path, monkeypatch, caplog):
    import leaderboard.judge.batch as batch_module

    mine = items()
    others = [JudgeItem(f"other-{n}", Q, GOLD, EVIDENCE, "Output doubled by 2020.") for n in range(2)]
    fake.hold = True
    with pytest.raises(BatchPending):
        judge_for(fake, tmp_path / "batch", max_wait_seconds=0.05).judge_many(mine)
    fake.hold = False
    judge = judge_for(fake, tmp_path / "batch")
    assert judge.inflight_members() == {(it.qid, it.response_sha256, it.gold_sha256) for it in mine}
    poll = ("GET", "/v1/batches/batch_fake1")
    polled = fake.batch_calls.count(poll)
    judge.judge_many(others)  # none of the unfinished run's answers: a run of their own; that one is left as it was
    assert fake.batch_calls.count(poll) == polled and len(fake.batches) == 1 + 3
    assert len(list((tmp_path / "batch").rglob("batches/*.json"))) == 1
    assert judge.judge_many(mine) == live_verdicts(tmp_path, mine)
    assert fake.batch_calls.count(poll) > polled and len(fake.batches) == 4 + 2  # resumed: gold facts not sent again

    # a state file over the size bound is not read: removed, and its answers judged afresh
    fake.hold = True
    late = [JudgeItem("energy-0300", Q, GOLD, EVIDENCE, "Output doubled by 2020. Northwind Energy runs it.")]
    with pytest.raises(BatchPending):
        judge_for(fake, tmp_path / "batch", max_wait_seconds=0.05).judge_many(late)
    fake.hold = False
    monkeypatch.setattr(batch_module, "MAX_STATE_BYTES", 100)
    created = len(fake.batches)
    with caplog.at_level(logging.WARNING, logger="leaderboard.judge.batch"):
        assert judge_for(fake, tmp_path / "batch").judge_many(late) == live_verdicts(tmp_path, late)
    assert "is unreadable or not this run's; starting afresh" in caplog.text
    assert len(fake.batches) == created + 3  # its held batch abandoned: the gold facts sent again


# ---------------------------------------------------------------- a batch made once, whatever is lost on the way


class Crash(BaseException):
    """The process killed at that instant: no handler of the judge catches it, nothing after it runs."""


def crash_create(monkeypatch, judge, when: str, nth: int = 1) -> None:
    """The judge's `nth` batches.create kills the process, `before` or `after` the server made the batch."""
    real = judge.client.batches.create
    made = {"n": 0}

    def create(**kw):
        made["n"] += 1
        if made["n"] == nth:
            if when == "after":
                real(**kw)
            raise Crash
        return real(**kw)

    monkeypatch.setattr(judge.client.batches, "create", create)


def undisturbed_batches(its: list[JudgeItem], tmp_path: Path) -> int:
    with FakeOpenAI() as other:
        judge_for(other, tmp_path / "undisturbed").judge_many(its)
        return len(other.batches)


def run_state(cache: Path) -> dict:
    (state,) = cache.rglob("batches/*.json")
    return json.loads(state.read_text())


@pytest.mark.parametrize("lost", ["lost500", "lostdrop"])
def test_a_create_whose_answer_is_lost_is_found_not_made_again(fake, tmp_path, lost):
    its = items()
    fake.api_plan.extend(["ok", lost])  # the gold round's upload, then its create: made on the server, the answer lost
    judge = judge_for(fake, tmp_path / "batch")
    assert judge.judge_many(its) == live_verdicts(tmp_path, its)
    assert list(fake.batches) == ["batch_fake1", "batch_fake2", "batch_fake3"]  # one per round: the retry found it
    assert fake.batch_calls.count(("GET", "/v1/batches")) == 1  # looked up before the retry only
    led = judge.last_ledger
    assert led.batch_ids == list(fake.batches)
    assert len(fake.batch_bodies) == led.batch_lines == 4 + 3 + 3  # every line billed once
    meta = fake.batches["batch_fake1"]["metadata"]
    assert set(meta) == {"judge", "round", "run", "attempt"} and meta["round"] == "gold"
    assert len(meta["attempt"]) == 24 and all(len(v) <= 512 for v in meta.values())
    assert len({b["metadata"]["attempt"] for b in fake.batches.values()}) == 3  # an attempt id per submission
    assert not list((tmp_path / "batch").rglob("batches/*.json"))


def test_a_crash_between_create_and_the_state_write_adopts_the_batch_on_restart(fake, tmp_path, monkeypatch):
    its = items()
    first = judge_for(fake, tmp_path / "batch")
    crash_create(monkeypatch, first, "after", nth=2)  # the check round's batch made, the process killed right after
    with pytest.raises(Crash):
        first.judge_many(its)
    assert list(fake.batches) == ["batch_fake1", "batch_fake2"]
    state = run_state(tmp_path / "batch")
    assert state["pending"] is None and state["submitting"]["round"] == "check"
    assert state["submitting"]["attempt"] == fake.batches["batch_fake2"]["metadata"]["attempt"]
    # strangers' batches listed first (newest), their metadata anything: skipped, never mistaken for it
    for n, meta in enumerate([None, "attempt", {"attempt": [state["submitting"]["attempt"]]}, {"attempt": 7}]):
        fake.batches[f"batch_stranger{n}"] = {**fake.batches["batch_fake1"], "id": f"batch_stranger{n}", "metadata": meta}

    second = judge_for(fake, tmp_path / "batch")  # a restart: the state file is all it has
    assert second.judge_many(its) == live_verdicts(tmp_path, its)
    made = [b for b in fake.batches if not b.startswith("batch_stranger")]
    assert len(made) == undisturbed_batches(its, tmp_path) == 3  # the check batch adopted, not made again
    assert second.last_ledger.batch_ids == made
    assert len(fake.batch_bodies) == second.last_ledger.batch_lines == 4 + 3 + 3
    assert not list((tmp_path / "batch").rglob("batches/*.json"))


def test_a_crash_between_upload_and_create_submits_afresh_on_restart(fake, tmp_path, monkeypatch):
    its = items()
    first = judge_for(fake, tmp_path / "batch")
    crash_create(monkeypatch, first, "before")  # the gold round's file uploaded, no batch made
    with pytest.raises(Crash):
        first.judge_many(its)
    assert fake.batches == {} and len(fake.files) == 1
    assert run_state(tmp_path / "batch")["submitting"]["round"] == "gold"
    calls_before = len(fake.batch_calls)
    second = judge_for(fake, tmp_path / "batch")
    assert second.judge_many(its) == live_verdicts(tmp_path, its)
    assert fake.batch_calls[calls_before] == ("GET", "/v1/batches")  # first thing: looked for the attempt
    assert len(fake.batches) == undisturbed_batches(its, tmp_path) == 3  # not found: submitted afresh, once
    inputs = [f for f in fake.files.values() if f["meta"]["purpose"] == "batch"]
    assert len(inputs) == 3 + 1  # the crashed attempt's upload is left behind, unused
    assert len(fake.batch_bodies) == second.last_ledger.batch_lines == 4 + 3 + 3


@pytest.mark.parametrize("listing", ["404", "garbled"])
def test_a_service_refusing_to_list_batches_still_judges_with_one_warning(fake, tmp_path, monkeypatch, caplog, listing):
    its = items()
    fake.api_plan.extend(["ok", "lost500"])  # the upload; the create: made, its answer lost
    if listing == "404":
        fake.api_plan.append("404")  # the listing: no such route
    else:
        monkeypatch.setattr(fake, "_list_batches", lambda query: (200, {"object": "list", "data": 5, "has_more": True}))
    judge = judge_for(fake, tmp_path / "batch")
    with caplog.at_level(logging.WARNING, logger="leaderboard.judge.batch"):
        assert judge.judge_many(its) == live_verdicts(tmp_path, its)
        # nothing to find it by: the gold round made again (the first one never read)
        assert len(fake.batches) == 3 + 1
        fake.api_plan.extend(["ok", "lost500"])
        more = [JudgeItem("energy-0400", Q, GOLD, EVIDENCE, "Output doubled by 2020.")]
        assert judge.judge_many(more) == live_verdicts(tmp_path, more)
    assert fake.batch_calls.count(("GET", "/v1/batches")) == 1  # a refused listing is not asked again
    warned = [r for r in caplog.records if "cannot list batches" in r.getMessage()]
    assert len(warned) == 1 and ("HTTP 404" if listing == "404" else "unreadable listing") in warned[0].getMessage()


def test_a_batch_folder_needs_no_listing_its_batch_ids_are_its_contents(fake, tmp_path, monkeypatch, caplog):
    its = items()
    folder = tmp_path / "batches"
    first = judge_for(fake, tmp_path / "batch", batch_dir=folder, max_wait_seconds=0.0)
    crash_create(monkeypatch, first, "after")  # the gold batch written, the process killed before the state names it
    with pytest.raises(Crash):
        first.judge_many(its)
    (made,) = folder.glob("*.input.jsonl")
    with caplog.at_level(logging.WARNING, logger="leaderboard.judge.batch"), pytest.raises(BatchPending) as err:
        judge_for(fake, tmp_path / "batch", batch_dir=folder, max_wait_seconds=0.0).judge_many(its)
    # nothing listed, so made again: the same bytes, the same batch, not a second one
    assert list(folder.glob("*.input.jsonl")) == [made] and made.name == f"{err.value.batch_id}.input.jsonl"
    assert "cannot list batches" not in caplog.text


def test_a_run_state_with_a_garbled_submission_attempt_is_refused(fake, tmp_path, caplog):
    its = items(ANSWERS[:1])
    path = held_run_state(fake, tmp_path, its)
    record = json.loads(path.read_text())
    good = {"round": "gold", "attempt": "ab" * 12, "custom_ids": ["gold:x:0"]}
    judge = judge_for(fake, tmp_path / "batch")
    bad_values = [
        "gold",
        [],
        {**good, "round": "later"},
        {**good, "attempt": 12},
        {**good, "attempt": "x" * 1000},
        {**good, "custom_ids": "gold:x:0"},
        {**good, "custom_ids": [1]},
        {**good, "attempt": ""},
        {**good, "attempt": None},
        {k: v for k, v in good.items() if k != "attempt"},
        {**good, "extra": 1},
    ]
    for bad in bad_values:
        path.write_text(json.dumps({**record, "submitting": bad}))
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="leaderboard.judge.batch"):
            assert judge.inflight_members() == set(), bad
        assert "is unreadable or not this run's; starting afresh" in caplog.text and not path.exists()
    path.write_text(json.dumps({**record, "submitting": good}))  # the shape this code writes: resumed
    assert judge.inflight_members() == {(it.qid, it.response_sha256, it.gold_sha256) for it in its}
