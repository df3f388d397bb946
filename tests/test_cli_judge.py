"""`python -m leaderboard score --judge ...` end to end: the real openai client against a local server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from openaifake import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
SUBMISSION = sorted((ROOT / "assets" / "demo" / "submissions" / "unidoc").glob("*.jsonl"))[0]


def run_score(env_extra: dict, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **env_extra}
    return subprocess.run(
        [sys.executable, "-m", "leaderboard", "score", str(SUBMISSION), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


def test_openai_judge_scores_and_a_rerun_costs_nothing(server, tmp_path):
    env = {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "sk-test",
        "JUDGE_MODEL": "fake-judge",
        "LEADERBOARD_DATA_DIR": str(tmp_path),
    }
    dry = run_score(env, "--judge", "openai", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    estimate = json.loads(dry.stdout)
    assert estimate["judge"] == "openai:fake-judge" and estimate["calls"] > 0 and server.calls == 0  # spent nothing

    first = run_score(env, "--judge", "openai", "--json")
    assert first.returncode == 0, first.stderr
    out = json.loads(first.stdout)
    assert out["judge"] == "openai:fake-judge"
    assert 0 <= out["overall"]["completeness"] <= 1 and 0 <= out["overall"]["faithfulness"] <= 1
    answered = out["judge_ledger"]["items"]
    assert 0 < out["judge_ledger"]["calls"] <= 2 * answered  # at most two calls per answer
    assert server.calls == out["judge_ledger"]["calls"] + out["judge_ledger"]["gold_calls"]

    again = json.loads(run_score(env, "--judge", "openai", "--json").stdout)
    assert again["judge_ledger"]["calls"] == 0 and again["judge_ledger"]["gold_calls"] == 0
    assert again["overall"] == out["overall"]


def test_lexical_judge_is_offline_and_labelled(tmp_path):
    res = run_score({"LEADERBOARD_DATA_DIR": str(tmp_path)}, "--judge", "lexical", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["judge"] == "lexical-v1" and "completeness" in out["overall"]
    assert "approximation" in res.stderr


def test_without_a_judge_e2e_is_not_judged(tmp_path):
    res = run_score({"LEADERBOARD_DATA_DIR": str(tmp_path), "JUDGE": ""}, "--json")
    out = json.loads(res.stdout)
    assert out["judge"] == "none" and "completeness" not in out["overall"]
    assert "not judged" in run_score({"LEADERBOARD_DATA_DIR": str(tmp_path)}).stdout


def test_batch_flag_judges_through_the_batch_api_with_the_live_scores(server, tmp_path):
    env = {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "sk-test",
        "JUDGE_MODEL": "fake-judge",
        "JUDGE_BATCH_POLL_SECONDS": "0.01",
    }
    live = run_score({**env, "LEADERBOARD_DATA_DIR": str(tmp_path / "live")}, "--judge", "openai", "--json")
    assert live.returncode == 0, live.stderr
    live_calls = server.calls
    batch = run_score({**env, "LEADERBOARD_DATA_DIR": str(tmp_path / "batch")}, "--judge", "openai", "--batch", "--json")
    assert batch.returncode == 0, batch.stderr
    out, live_out = json.loads(batch.stdout), json.loads(live.stdout)
    assert server.calls == live_calls  # no live chat call
    assert out["overall"] == live_out["overall"] and out["ci"] == live_out["ci"]
    assert out["judge_ledger"]["batch_lines"] == live_calls and len(out["judge_ledger"]["batch_ids"]) == 3
    # JUDGE_MODE=batch does the same without the flag; everything is cached now: no batch at all
    again = run_score(
        {**env, "JUDGE_MODE": "batch", "LEADERBOARD_DATA_DIR": str(tmp_path / "batch")}, "--judge", "openai", "--json"
    )
    assert json.loads(again.stdout)["judge_ledger"]["batch_ids"] == [] and len(server.batches) == 3


def test_batch_flag_needs_the_openai_judge_and_a_pending_batch_exits_4(server, tmp_path):
    res = run_score({"LEADERBOARD_DATA_DIR": str(tmp_path)}, "--judge", "lexical", "--batch")
    assert res.returncode == 2 and res.stderr.strip() == "judge: --batch is for the openai judge, not lexical"
    server.api_plan.extend(["401"])
    env = {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "sk-test",
        "JUDGE_MODEL": "fake-judge",
        "LEADERBOARD_DATA_DIR": str(tmp_path),
    }
    res = run_score(env, "--judge", "openai", "--batch", "--json")
    assert res.returncode == 4 and "judge: upload the batch file: HTTP 401" in res.stderr and "Traceback" not in res.stderr


def run_score_files(env_extra: dict, files: list[Path], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "leaderboard", "score", *map(str, files), *args],
        cwd=ROOT,
        env={**os.environ, **env_extra},
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_batch_scores_several_files_in_one_run(server, tmp_path):
    demo = ROOT / "assets" / "demo" / "submissions" / "unidoc"
    files = [demo / f"{name}.jsonl" for name in ("colpali-qwen2-5-vl-7b", "gme-7b-gpt-4o-mini", "mm-fusion-rrf-gpt-4o")]
    env = {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "sk-test",
        "JUDGE_MODEL": "fake-judge",
        "JUDGE_BATCH_POLL_SECONDS": "0.01",
    }
    live = run_score_files({**env, "LEADERBOARD_DATA_DIR": str(tmp_path / "live")}, files, "--judge", "openai", "--json")
    assert live.returncode == 0, live.stderr
    live_calls = server.calls
    batch_env = {**env, "LEADERBOARD_DATA_DIR": str(tmp_path / "batch")}
    batch = run_score_files(batch_env, files, "--judge", "openai", "--batch", "--json")
    assert batch.returncode == 0, batch.stderr
    outs, live_outs = (list(map(json.loads, r.stdout.splitlines())) for r in (batch, live))
    assert len(outs) == len(live_outs) == 3 and server.calls == live_calls  # one line per file, no live call
    assert len(server.batches) == 3  # one batch per round for the three files, not three per file
    for out, live_out in zip(outs, live_outs, strict=True):
        assert out["system"] == live_out["system"] and out["overall"] == live_out["overall"]
        assert out["judge_ledger"]["batch_ids"] == list(server.batches)
    assert sum(o["judge_ledger"]["batch_lines"] for o in outs) == live_calls == len(server.batch_bodies)
    again = run_score_files(batch_env, files, "--judge", "openai", "--batch", "--json")
    assert again.returncode == 0 and len(server.batches) == 3  # all cached: no batch, no line
    assert all(json.loads(x)["judge_ledger"]["batch_lines"] == 0 for x in again.stdout.splitlines())
    # a batch service refusing: exit 4, whatever the number of files; a bad file: exit 1 before any judging
    server.api_plan.extend(["401"])
    other = {**env, "LEADERBOARD_DATA_DIR": str(tmp_path / "other")}
    refused = run_score_files(other, files, "--judge", "openai", "--batch")
    assert refused.returncode == 4 and "HTTP 401" in refused.stderr and "Traceback" not in refused.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"track": "unidoc"}\n')
    res = run_score_files(other, [files[0], bad], "--judge", "openai", "--batch")
    assert res.returncode == 1 and res.stderr.startswith(f"{bad}: ") and len(server.batches) == 3


def test_dry_run_needs_no_key_and_prices_the_tokens(tmp_path, monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "JUDGE_PRICE_PER_MTOK", "JUDGE_MODE"):
        monkeypatch.delenv(name, raising=False)
    env = {"LEADERBOARD_DATA_DIR": str(tmp_path), "JUDGE_MODEL": "fake-judge"}
    plain = run_score(env, "--judge", "openai", "--dry-run")
    assert plain.returncode == 0, plain.stderr
    tokens = json.loads(plain.stdout)
    assert tokens["prompt_tokens"] > 0 and tokens["completion_tokens"] > 0 and "cost_usd" not in tokens  # no price guessed

    priced = json.loads(run_score({**env, "JUDGE_PRICE_PER_MTOK": "0.15,0.60"}, "--judge", "openai", "--dry-run").stdout)
    live = (tokens["prompt_tokens"] * 0.15 + tokens["completion_tokens"] * 0.60) / 1e6
    assert priced["cost_usd"] == pytest.approx(live, abs=1e-6) and priced["price_per_mtok"] == [0.15, 0.6]
    assert priced["batch_price"] is False and priced["prompt_tokens"] == tokens["prompt_tokens"]

    batch = run_score({**env, "JUDGE_PRICE_PER_MTOK": "0.15,0.60"}, "--judge", "openai", "--dry-run", "--batch")
    assert batch.returncode == 0, batch.stderr
    halved = json.loads(batch.stdout)
    assert halved["cost_usd"] == pytest.approx(live / 2, abs=1e-6) and halved["batch_price"] is True


@pytest.mark.parametrize("value", ["0.15", "a,b", "-1,2", "1,2,3"])
def test_a_malformed_price_is_one_precise_line(tmp_path, monkeypatch, value):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    res = run_score({"LEADERBOARD_DATA_DIR": str(tmp_path), "JUDGE_PRICE_PER_MTOK": value}, "--judge", "openai", "--dry-run")
    assert res.returncode == 2 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "JUDGE_PRICE_PER_MTOK must be two numbers `in,out`" in lines[0] and repr(value) in lines[0]
