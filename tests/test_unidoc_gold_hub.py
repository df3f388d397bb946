"""UniDoc gold from the Hub in both published forms, through the real Hub client and the real `datasets`.

The fake Hub (tests/hubfake.py) holds `Salesforce/UniDoc-Bench` as Hugging Face publishes it: parquet files named
by a README `configs:` block, first one `test` split of every question (the earlier revision), then one split per
domain (the current one), beside a large file that must never be fetched; and a repo with the GitHub layout
(`data/QA/filtered/<domain>.json`). `datasets` and huggingface_hub read HF_ENDPOINT when imported, so every load
runs in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import unidocdata

from leaderboard.tracks import TRACKS
from leaderboard.tracks.unidoc_gold import NO_FACTS

from hubfake import child_env, fake_hub  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[1]
REPO = "Salesforce/UniDoc-Bench"
SCRIPT = r"""
import json, os, sys
from leaderboard.gold import gold_label
from leaderboard.tracks import TRACKS
from leaderboard.settings import Settings
from leaderboard.tracks import beir_hub
beir_hub.use(Settings.from_env(os.environ).hub_access())  # as the board and the CLI do
track, out = TRACKS["unidoc"], []
for source in json.loads(sys.argv[1]):
    try:
        g = track.load_gold(source)
    except ValueError as exc:
        out.append({"error": str(exc), "label": gold_label(track, source)})
        continue
    out.append({
        "form": g.form, "commit": g.commit, "sha256": g.sha256, "label": gold_label(track, source),
        "questions": {q.qid: [q.question, q.answer, q.question_type, q.answer_type, q.pages, q.evidence_facts]
                      for q in g.questions},
    })
print(json.dumps(out))
"""


def load_in_child(hub, tmp_path: Path, *sources: str, offline: bool = False) -> list[dict]:
    res = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(list(sources))],
        cwd=ROOT,
        env={**child_env(hub, tmp_path), "HF_HUB_OFFLINE": "1" if offline else "0"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout)


def local(files: dict[str, bytes], folder: Path) -> dict:
    """The same files read from a local folder, in this process (pyarrow, not `datasets`)."""
    g = TRACKS["unidoc"].load_gold(unidocdata.write(folder, files))
    return {q.qid: [q.question, q.answer, q.question_type, q.answer_type, q.pages, q.evidence_facts] for q in g.questions}


def as_json(value):
    return json.loads(json.dumps(value))


@pytest.fixture(scope="module")
def by_domain():
    return unidocdata.rows_by_domain()


@pytest.fixture
def hub(fake_hub, by_domain):  # noqa: F811
    fake_hub.create_repo(REPO, repo_type="dataset")
    fake_hub.commit(REPO, {**unidocdata.single_split(by_domain), "pdfs/finance.tar.gz": b"\0" * 100_000})
    fake_hub.first = fake_hub.head(REPO)
    fake_hub.commit(REPO, unidocdata.domain_splits(by_domain), deletes=["data/test-00000-of-00001.parquet"])
    fake_hub.reset_counts()
    return fake_hub


def test_both_parquet_layouts_through_datasets_at_their_commits(hub, by_domain, tmp_path):
    current, earlier = load_in_child(hub, tmp_path, REPO, f"{REPO}@{hub.first}")
    head = hub.head(REPO)
    assert (current["form"], current["commit"]) == ("parquet", head)
    assert current["label"] == f"{REPO}@{head[:7]} (parquet, {len(current['questions']):,} questions; {NO_FACTS})"
    assert (earlier["form"], earlier["commit"]) == ("parquet", hub.first)
    every = sum(len(rows) for rows in by_domain.values())  # 1,742 from the real files
    assert earlier["label"] == f"{REPO}@{hub.first[:7]} (parquet, {every:,} questions; {NO_FACTS})"
    # read through `datasets` = the same files read locally with pyarrow
    assert current["questions"] == as_json(local(unidocdata.domain_splits(by_domain), tmp_path / "a"))
    assert earlier["questions"] == as_json(local(unidocdata.single_split(by_domain), tmp_path / "b"))
    n = {d: len(rows) for d, rows in by_domain.items()}
    assert len(earlier["questions"]) == sum(n.values())
    assert len(current["questions"]) == sum(min(v, unidocdata.PER_DOMAIN) for v in n.values())
    # ids are positions in the domain's split: the current layout lists each domain's questions in reverse
    for d in unidocdata.DOMAINS:
        assert current["questions"][f"{d}-0000"][0] == by_domain[d][-1]["question"]
    assert all(not q[5] for q in current["questions"].values())  # no evidence facts in this form
    fetched = hub.downloads()
    assert not [p for p in fetched if not p.startswith("data/") and p != "README.md"], fetched  # never the PDFs


def test_the_json_form_on_the_hub_and_a_repo_with_both_forms(fake_hub, by_domain, tmp_path):  # noqa: F811
    folder = unidocdata.json_gold()
    json_files = {f"data/QA/filtered/{d}.json": (folder / f"{d}.json").read_bytes() for d in unidocdata.DOMAINS}
    fake_hub.create_repo("org/unidoc-github", repo_type="dataset")
    fake_hub.commit("org/unidoc-github", {**json_files, "README.md": b"# the GitHub layout"})
    fake_hub.create_repo("org/unidoc-both", repo_type="dataset")
    fake_hub.commit("org/unidoc-both", {**json_files, **unidocdata.domain_splits(by_domain)})
    github, both = load_in_child(fake_hub, tmp_path, "org/unidoc-github", "org/unidoc-both")
    here = TRACKS["unidoc"].load_gold(folder)
    assert github["form"] == "json" and github["sha256"] == here.sha256  # the same bytes: the same cache key
    head = fake_hub.head("org/unidoc-github")
    assert github["label"] == f"org/unidoc-github@{head[:7]} (JSON question files, {len(here.questions):,} questions)"
    assert github["questions"] == as_json(
        {q.qid: [q.question, q.answer, q.question_type, q.answer_type, q.pages, q.evidence_facts] for q in here.questions}
    )
    assert both["form"] == "parquet"  # preferred when the repo holds both


def test_an_unknown_shape_on_the_hub_is_one_line_naming_the_split_and_column(fake_hub, by_domain, tmp_path):  # noqa: F811
    fake_hub.create_repo("org/no-pages", repo_type="dataset")
    fake_hub.commit("org/no-pages", unidocdata.domain_splits(by_domain, drop="gt_image_paths"))
    fake_hub.create_repo("org/nothing", repo_type="dataset")
    fake_hub.commit("org/nothing", {"README.md": b"# empty", "notes/finance.txt": b"x"})
    head = fake_hub.head("org/no-pages")[:7]
    sub = sorted((ROOT / "assets" / "demo" / "submissions" / "unidoc").glob("*.jsonl"))[0]
    cmd = [sys.executable, "-m", "leaderboard", "validate", str(sub), "--gold", "org/no-pages"]
    res = subprocess.run(cmd, cwd=ROOT, env=child_env(fake_hub, tmp_path), capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.splitlines() == [
        f"gold: org/no-pages@{head}: split commerce_manufacturing: no column gt_image_paths (columns: question, answer, "
        "question_type, answer_type, domain, longdoc_image_paths)"
    ]
    (nothing,) = load_in_child(fake_hub, tmp_path, "org/nothing")
    assert nothing["error"] == (
        f"org/nothing@{fake_hub.head('org/nothing')[:7]}: holds no parquet files and not the domain files "
        + ", ".join(f"{d}.json" for d in unidocdata.DOMAINS)
    )
    assert nothing["label"] == f"org/nothing (cannot be read: {nothing['error']})"


def test_cli_scores_against_the_pinned_parquet_gold(hub, tmp_path):
    """An oracle run made from the gold pages of the pinned revision: recall 1 on every question."""
    (earlier,) = load_in_child(hub, tmp_path, f"{REPO}@{hub.first}")
    lines = [json.dumps({"track": "unidoc", "system": {"name": "oracle", "paradigm": "image"}})]
    for qid, (text, *_rest) in earlier["questions"].items():
        pages = earlier["questions"][qid][4]
        retrieved = [{"doc": doc, "pages": [p], "modality": "image"} for doc, p in pages[:10]]
        lines.append(json.dumps({"id": qid, "question": text, "retrieved": retrieved}))
    sub = tmp_path / "oracle.jsonl"
    sub.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "leaderboard", "score", str(sub), "--json", "--gold", f"{REPO}@{hub.first}"]
    res = subprocess.run(cmd, cwd=ROOT, env=child_env(hub, tmp_path), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout)
    assert out["n"] == len(earlier["questions"]) and out["missing"] == 0
    full = sum(len(q[4]) <= 10 for q in earlier["questions"].values())
    assert out["overall"]["recall@10"] == pytest.approx(
        sum(min(1, 10 / len(q[4])) for q in earlier["questions"].values()) / len(earlier["questions"])
    )
    assert full >= 0.9 * len(earlier["questions"])


def test_offline_a_pinned_commit_is_the_one_read_or_a_clear_error(hub, tmp_path):
    """Offline, `datasets` reads the latest version it cached whatever the revision: never another commit's gold."""
    earlier, current = load_in_child(hub, tmp_path, f"{REPO}@{hub.first}", REPO)
    head = hub.head(REPO)
    hub.down()
    pinned_earlier, pinned_current, never = load_in_child(
        hub, tmp_path, f"{REPO}@{hub.first}", f"{REPO}@{head}", "org/never-fetched", offline=True
    )
    assert never["error"] == "org/never-fetched: not cached for offline use (HF_HUB_OFFLINE is set)"
    assert pinned_earlier == {
        "error": f"{REPO}: commit {hub.first[:7]} is not cached for offline use",
        "label": f"{REPO}@{hub.first[:7]} (cannot be read: {REPO}: commit {hub.first[:7]} is not cached for offline use)",
    }
    assert pinned_current["questions"] == current["questions"] and pinned_current["commit"] == head
    assert earlier["questions"] != current["questions"]  # the two commits number their questions differently
