"""Gold from a Hugging Face dataset id, fetched with the real Hub client from a local fake Hub."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from leaderboard.tracks import TRACKS

from hubfake import fake_hub  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[1]
DEMO_GOLD = ROOT / "assets" / "demo" / "gold"


def test_unidoc_gold_from_a_dataset_id(fake_hub, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    fake_hub.create_repo("Salesforce/UniDoc-Bench", repo_type="dataset")
    files = {f"data/QA/filtered/{p.name}": p.read_bytes() for p in (DEMO_GOLD / "unidoc").glob("*.json")}
    files["README.md"] = b"# not gold"
    fake_hub.commit("Salesforce/UniDoc-Bench", files)
    sub = sorted((ROOT / "assets" / "demo" / "submissions" / "unidoc").glob("*.jsonl"))[0]
    env = {
        "HF_ENDPOINT": fake_hub.url,
        "HF_HUB_OFFLINE": "0",
        "HF_HOME": str(tmp_path / "hf"),
        "LEADERBOARD_DATA_DIR": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }
    res = subprocess.run(
        [sys.executable, "-m", "leaderboard", "score", str(sub), "--gold", "Salesforce/UniDoc-Bench", "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    remote = json.loads(res.stdout)
    local = json.loads(
        subprocess.run(
            [sys.executable, "-m", "leaderboard", "score", str(sub), "--json"],
            cwd=ROOT,
            env={**env, "HF_HUB_OFFLINE": "1"},
            capture_output=True,
            text=True,
        ).stdout
    )
    assert remote["overall"] == local["overall"] and remote["n"] == local["n"]
    # only the gold files were fetched
    assert all(p.startswith("data/QA/filtered/") for p in fake_hub.downloads())


def test_unknown_gold_is_a_clear_error(tmp_path):
    sub = sorted((ROOT / "assets" / "demo" / "submissions" / "vdr").glob("*.jsonl"))[0]
    res = subprocess.run(
        [sys.executable, "-m", "leaderboard", "score", str(sub), "--gold", str(tmp_path / "nope")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2 and "gold:" in res.stderr and "Traceback" not in res.stderr
    assert TRACKS["vdr"].resolve_gold(None) == DEMO_GOLD / "vdr"
