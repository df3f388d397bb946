"""Vdr gold from BEIR-layout dataset repos on the Hub, read through the real `datasets` client.

The repos live on the local fake Hub (tests/hubfake.py) as parquet files with a README `configs:`
block, as ViDoRe publishes them. `datasets` and huggingface_hub read HF_ENDPOINT and the offline
switch when imported, so every load runs in a fresh interpreter with its own environment.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from beirdata import beir_files, parquet

from leaderboard.tracks import TRACKS
from leaderboard.tracks.beir_hub import HubGoldError, parse_gold_setting
from leaderboard.tracks.vdr import FAMILIES

from hubfake import child_env, fake_hub  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[1]
REPORTED = ROOT / "assets" / "reported" / "vidore-mteb-results.json"  # the project's copy of the shared file
# (query, doc, grade): integer ids as ViDoRe publishes them; a 0 grade, and a query judged only 0
ALPHA = [(1, 10, 1), (1, 11, 2), (2, 12, 1), (3, 13, 0), (4, 10, 1), (4, 14, 0)]
ALPHA_LATER = [(1, 10, 1), (2, 12, 2), (5, 15, 1)]  # a later commit of the same repo
BETA = [("q-a", "p1", 1), ("q-b", "p2", 2), ("q-b", "p3", 1)]  # string ids
SCRIPT = r"""
import json, os, sys
from leaderboard.tracks import TRACKS
from leaderboard.settings import Settings
from leaderboard.tracks import beir_hub
beir_hub.use(Settings.from_env(os.environ).hub_access())  # as the board and the CLI do
out = []
for source in json.loads(sys.argv[1]):
    try:
        g = TRACKS["vdr"].load_gold(source)
        out.append({"qrels": g.qrels, "judged": g.judged, "families": g.families, "label": g.label, "sha256": g.sha256})
    except ValueError as exc:
        out.append({"error": str(exc)})
print(json.dumps(out))
"""


def trec_folder(folder: Path, datasets: dict[str, list[tuple]]) -> Path:
    folder.mkdir(parents=True)
    for name, qrels in datasets.items():
        lines = [f"{q} 0 {d} {g}" for q, d, g in qrels]
        (folder / (name.replace("/", "__") + ".qrels")).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def hub(fake_hub):  # noqa: F811
    fake_hub.create_repo("vidore/alpha_beir", repo_type="dataset")
    fake_hub.commit("vidore/alpha_beir", beir_files(ALPHA))
    first = fake_hub.head("vidore/alpha_beir")
    fake_hub.commit("vidore/alpha_beir", beir_files(ALPHA_LATER))
    fake_hub.create_repo("testorg/beta", repo_type="dataset")
    fake_hub.commit("testorg/beta", beir_files(BETA))
    fake_hub.create_repo("testorg/flat", repo_type="dataset")  # parquet, but no qrels config
    fake_hub.commit("testorg/flat", {"README.md": b"# no configs", "data/test.parquet": parquet({"a": [1, 2]})})
    fake_hub.alpha_first = first
    fake_hub.reset_counts()
    return fake_hub


def load_in_child(hub, tmp_path: Path, *sources: str) -> list[dict]:
    res = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(list(sources))],
        cwd=ROOT,
        env=child_env(hub, tmp_path),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout)


def test_hub_gold_equals_the_same_qrels_read_from_trec_files(hub, tmp_path):
    (got,) = load_in_child(hub, tmp_path, f"vidore/alpha_beir@{hub.alpha_first}, testorg/beta")
    local = TRACKS["vdr"].load_gold(trec_folder(tmp_path / "trec", {"vidore/alpha": ALPHA, "testorg/beta": BETA}))
    assert got["qrels"] == local.qrels  # names without `_beir`, integer ids as decimal strings, grades as read
    assert got["judged"] == local.judged and got["judged"]["vidore/alpha"] == ["1", "2", "4"]  # query 3: only 0 grades
    assert got["families"] == {f: list(m) for f, m in FAMILIES.items()}  # ids without a suite: the track's families
    assert got["label"] == f"vidore/alpha_beir@{hub.alpha_first[:7]}, testorg/beta@{hub.head('testorg/beta')[:7]}"
    # only the qrels config was fetched: never the corpus (page images) nor the queries
    fetched = hub.downloads()
    assert any(p.startswith("qrels/") for p in fetched)
    assert not [p for p in fetched if p.startswith(("corpus/", "queries/"))], fetched


def test_unpinned_ids_read_the_current_commit_and_a_restart_downloads_nothing(hub, tmp_path):
    (got,) = load_in_child(hub, tmp_path, "vidore/alpha_beir")
    assert got["qrels"] == {"vidore/alpha": {"1": {"10": 1.0}, "2": {"12": 2.0}, "5": {"15": 1.0}}}  # ALPHA_LATER
    hub.reset_counts()
    (again,) = load_in_child(hub, tmp_path, "vidore/alpha_beir")  # a new process: a board restart
    assert again == got
    assert hub.downloads() == []  # one API call (which commit is current), no file


def test_suite_file_pins_revisions_declares_families_and_loads_offline_once_fetched(hub, tmp_path):
    suite = tmp_path / "toy-suite.json"
    suite.write_text(
        json.dumps(
            {
                "description": "two toy datasets",
                "families": {"Toy-A": [f"vidore/alpha_beir@{hub.alpha_first}"], "Toy-B": ["testorg/beta"]},
            }
        ),
        encoding="utf-8",
    )
    (got,) = load_in_child(hub, tmp_path, str(suite))
    assert got["qrels"]["vidore/alpha"] == TRACKS["vdr"].load_gold(trec_folder(tmp_path / "a", {"x/y": ALPHA})).qrels["x/y"]
    assert got["families"] == {"Toy-A": ["vidore/alpha"], "Toy-B": ["testorg/beta"]}
    assert got["label"] == "suite toy-suite.json (2 Hub datasets)"
    # the pinned dataset loads from the local copy with the Hub gone; the unpinned one must ask the Hub
    hub.down()
    pinned_only = tmp_path / "pinned.json"
    pinned_only.write_text(json.dumps({"families": {"Toy-A": [f"vidore/alpha_beir@{hub.alpha_first}"]}}), encoding="utf-8")
    offline, unpinned = load_in_child(hub, tmp_path, str(pinned_only), "testorg/beta")
    assert offline["qrels"] == {"vidore/alpha": got["qrels"]["vidore/alpha"]}
    assert unpinned == {"error": "testorg/beta: the Hub cannot be reached ([Errno 111] Connection refused)"}


def test_bad_ids_and_repos_are_precise_errors_naming_the_dataset(hub, tmp_path):
    bad_suite = tmp_path / "broken.json"
    bad_suite.write_text('{"families": {"V1": ["vidore/alpha_beir"', encoding="utf-8")
    results = load_in_child(
        hub,
        tmp_path,
        "testorg/flat",
        "testorg/nothing-here",
        "vidore/alpha_beir@no-such-branch",
        "vidore/alpha_beir,",
        str(bad_suite),
        str(tmp_path / "missing-suite.json"),
    )
    assert [r.get("error") for r in results] == [
        "testorg/flat: has no `qrels` config with a `test` split (expected the BEIR layout: configs qrels, queries, corpus)",
        "testorg/nothing-here: no such dataset on the Hub (or it is private and HF_TOKEN cannot read it)",
        "vidore/alpha_beir: no revision 'no-such-branch' on the Hub",
        "expected dataset ids separated by commas, got an empty one in 'vidore/alpha_beir,'",
        results[4]["error"],  # the JSON parser's own words follow the prefix
        f"suite file not found: {tmp_path / 'missing-suite.json'}",
    ]
    assert results[4]["error"].startswith("suite broken.json: not valid JSON")


def test_cli_scores_against_hub_gold_and_reports_coverage(hub, tmp_path):
    sub = tmp_path / "run.jsonl"
    header = {
        "track": "vdr",
        "system": {
            "name": "toy",
            "model": "m",
            "method": "none",
            "storage": {"testorg/beta": {"vectors": 1, "vectors_uncompressed": 1}},
        },
    }
    records = [
        {"dataset": "testorg/beta", "query_id": "q-b", "ranking": [{"doc": "p2", "score": 2.0}, {"doc": "p3", "score": 1.0}]}
    ]
    sub.write_text("\n".join(json.dumps(x) for x in [header, *records]) + "\n", encoding="utf-8")
    env = child_env(hub, tmp_path)
    cmd = [
        sys.executable,
        "-m",
        "leaderboard",
        "score",
        str(sub),
        "--json",
        "--gold",
        f"vidore/alpha_beir@{hub.alpha_first},testorg/beta",
    ]
    res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout)
    # beta: q-b ranked perfectly (1.0), q-a missing (0) -> 0.5; alpha not submitted -> 0; two datasets in the gold
    assert out["overall"]["ndcg@5"] == pytest.approx(0.25) and out["overall"]["coverage"] == 0.5
    assert list(out["breakdowns"]["dataset"]) == ["testorg/beta"]
    assert (out["n"], out["missing"]) == (5, 4)  # alpha's 3 judged queries and beta's q-a
    # a gold the Hub does not have: exit 2, one line naming it, no traceback
    cmd[-1] = "testorg/nothing-here"
    res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert (
        res.stderr.strip()
        == "gold: testorg/nothing-here: no such dataset on the Hub (or it is private and HF_TOKEN cannot read it)"
    )


# ---- reading the setting (no network) ----------------------------------------------------------------


def test_the_shipped_suite_is_the_fourteen_vidore_datasets_in_the_track_families():
    spec = parse_gold_setting("vidore-v1-v2")
    assert spec == parse_gold_setting(str(ROOT / "assets" / "suites" / "vidore-v1-v2.json"))
    assert spec.families == FAMILIES and len(spec.datasets) == 14
    assert all(d.revision and len(d.revision) == 40 for d in spec.datasets)  # pinned: reproducible, offline once fetched
    reported = json.loads(REPORTED.read_text(encoding="utf-8"))
    # the revisions the published nDCG@5 figures were measured on
    for d in spec.datasets:
        revisions = {f[d.name]["dataset_revision"] for f in reported["source"]["per_model_files"].values() if d.name in f}
        assert revisions == {d.revision}, d.name


def test_local_paths_stay_local_and_malformed_settings_are_refused(tmp_path):
    assert parse_gold_setting(None) is None
    assert parse_gold_setting(str(TRACKS["vdr"].demo_gold)) is None
    assert parse_gold_setting(TRACKS["vdr"].demo_gold / "vidore__esg_reports_v2.qrels") is None
    for setting, problem in [
        ("not an id", "neither a local path nor a Hugging Face dataset id"),
        ("vidore/a_beir,vidore/a", "vidore/a and vidore/a_beir are both dataset vidore/a"),
        (",".join(f"org/d{i}" for i in range(201)), "at most 200 datasets, got 201"),
    ]:
        with pytest.raises(HubGoldError, match=problem.replace("/", ".")):
            parse_gold_setting(setting)
    suite = tmp_path / "s.json"
    for body, problem in [
        ({"families": {"F": ["org/a"]}, "extra": 1}, "unknown keys"),
        ({"families": {"F": []}}, "family 'F' must list dataset ids"),
        ({"families": {}}, "expected"),
        ([1], "expected"),
    ]:
        suite.write_text(json.dumps(body), encoding="utf-8")
        with pytest.raises(HubGoldError, match=f"suite s.json: {problem}"):
            parse_gold_setting(str(suite))
