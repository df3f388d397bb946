"""Vdr gold from the Hub: how long the 14-dataset ViDoRe suite takes to load, first and on a restart.

    python bench/bench_hub_gold.py

Steps:
  1. start the local fake Hub (tests/hubfake.py) and publish 14 BEIR-layout parquet repos the
     size of ViDoRe V1 + V2 (500 queries with one relevant page each for most V1 sets, 1,663 for
     tatdqa, 100 for the synthetic and shift sets; about 1,500 graded qrels for each V2 set), with a
     stand-in corpus config of 1 MiB per repo that must never be fetched;
  2. in a fresh interpreter each time (as a board start), load the gold through the vdr track:
     a. first start, suite pinned to commits: everything fetched through `datasets`;
     b. restart, pinned: the local copies, with the Hub switched off;
     c. restart, the same ids unpinned: one API call per dataset, no file;
  3. print the wall time of each start and what was downloaded.

Not a test: the machine is shared and noisy; read the figures.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from beirdata import beir_files

from hubfake import child_env, running_hub

SIZES = {  # repo -> (queries, qrels per query, graded)
    **{
        f"vidore/{d}_beir": (500, 1, False)
        for d in ("arxivqa_test_subsampled", "docvqa_test_subsampled", "infovqa_test_subsampled")
    },
    "vidore/tabfquad_test_subsampled_beir": (280, 1, False),
    "vidore/tatdqa_test_beir": (1663, 1, False),
    "vidore/shiftproject_test_beir": (100, 1, False),
    **{
        f"vidore/syntheticDocQA_{d}_test_beir": (100, 1, False)
        for d in ("artificial_intelligence", "energy", "government_reports", "healthcare_industry")
    },
    **{
        f"vidore/{d}": (230, 6, True)
        for d in ("esg_reports_v2", "economics_reports_v2", "biomedical_lectures_v2", "esg_reports_human_labeled_v2")
    },
}
CHILD = r"""
import json, sys, time
t = time.perf_counter()
from leaderboard.tracks import TRACKS
gold = TRACKS["vdr"].load_gold(sys.argv[1])
print(json.dumps({"seconds": time.perf_counter() - t, "datasets": len(gold.qrels),
                  "qrels": sum(len(d) for qs in gold.qrels.values() for d in qs.values())}))
"""


def repo_files(rng: random.Random, queries: int, per_query: int, graded: bool) -> dict[str, bytes]:
    rows = [(q, rng.randrange(1000), rng.choice((1, 2)) if graded else 1) for q in range(queries) for _ in range(per_query)]
    rows = list({(q, d): (q, d, g) for q, d, g in rows}.values())
    return beir_files(rows, corpus_ids=list(range(8)), image=b"\0" * (128 << 10))


def start(hub, tmp: Path, setting: str) -> dict:
    env = child_env(hub, tmp)
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", CHILD, setting], cwd=ROOT, env=env, capture_output=True, text=True)
    if res.returncode:
        raise SystemExit(res.stderr[-2000:])
    return {**json.loads(res.stdout), "process": time.perf_counter() - t}


def main() -> None:
    rng = random.Random(0)
    with running_hub() as hub, tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        pinned = []
        for repo, size in SIZES.items():
            hub.create_repo(repo, repo_type="dataset")
            hub.commit(repo, repo_files(rng, *size))
            pinned.append(f"{repo}@{hub.head(repo)}")
        suite = tmp / "suite.json"
        suite.write_text(json.dumps({"families": {"All": pinned}}), encoding="utf-8")
        hub.reset_counts()
        first = start(hub, tmp, str(suite))
        fetched = hub.downloads()
        print(
            f"first start (pinned, fetched): {first['process']:.2f} s process, {first['seconds']:.2f} s loading "
            f"{first['datasets']} datasets / {first['qrels']:,} qrels; {len(fetched)} files downloaded, "
            f"{sum(p.startswith('corpus/') for p in fetched)} of them corpus files"
        )
        hub.down()
        again = start(hub, tmp, str(suite))
        print(f"restart (pinned, Hub down):    {again['process']:.2f} s process, {again['seconds']:.2f} s loading")
        hub.up()
        hub.reset_counts()
        unpinned = start(hub, tmp, ",".join(SIZES))
        print(
            f"restart (unpinned ids):        {unpinned['process']:.2f} s process, {unpinned['seconds']:.2f} s loading; "
            f"{hub.count()} requests, {len(hub.downloads())} files downloaded"
        )


if __name__ == "__main__":
    main()
