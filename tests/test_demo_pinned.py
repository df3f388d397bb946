"""Demo generation is pinned byte for byte, per track, beyond the bundled seed-0 demo.

test_demo.py proves that assets/demo is a fresh generation (seed 0, demo size).
This file pins what the bench scripts and outside checks generate: gold of both
sizes at another seed, and submissions made by `make_submissions` from it. The
digests were computed with leaderboard/demo.py as it stood before it became the
leaderboard/demo/ package (commit 4ed36e4), so the split changed no byte; any later
change of a generator shows here as a changed digest. Change a digest only for a
deliberate change of the synthetic data, and regenerate assets/demo with it:

    PYTHONPATH=. python tests/test_demo_pinned.py      # prints the current digests
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from leaderboard import demo

SEED = 3
# Submissions per generation: enough for every file format (.json at i=0, .jsonl.gz at
# i=5) and the random profile branches (partial coverage, dropped queries, dataset subsets).
# Vdr bench submissions rank 100 of 1,000 pages for 5,000 queries each: one keeps this fast.
N_DEMO_SUBMISSIONS = 12
N_BENCH_SUBMISSIONS = {"unidoc": 6, "futurepedia": 6, "vdr": 1}

PINNED = {  # computed with the pre-split leaderboard/demo.py (see the docstring)
    "unidoc": {
        "demo_gold": "46e2491a16f6957a92641426",
        "demo_submissions": "4b46e457884080f97f2bf922",
        "bench_gold": "e20476a111c9c529e3e3e22a",
        "bench_submissions": "b2905152f57fabf8de591123",
        "bench_submissions_4_per_domain": "0b6613fe7f5348906501d758",
    },
    "futurepedia": {
        "demo_gold": "66237f4ce1273bd62fd029d3",
        "demo_submissions": "6c7bb934180bdbbc4b472708",
        "bench_gold": "0e1e05985d71d09c84d6cb43",
        "bench_submissions": "a1062c24ffe091071fca56e5",
    },
    "vdr": {
        "demo_gold": "d4863c2ee17aa71d9b319c9f",
        "demo_submissions": "9a661b8232e1e8ad5729fc48",
        "bench_gold": "8767cc65c6a9e4a03d75f456",
        "bench_submissions": "b5f67e6706ca468aeaefeb5a",
    },
}


def digest(parts: list[tuple[str, bytes]]) -> str:
    h = hashlib.sha256()
    for name, data in parts:
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()[:24]


def tree(root: Path) -> list[tuple[str, bytes]]:
    return [(p.relative_to(root).as_posix(), p.read_bytes()) for p in sorted(root.rglob("*")) if p.is_file()]


def generation_digests(track: str, tmp: Path) -> dict[str, str]:
    out = {}
    for size in ("demo", "bench"):
        gold = demo.make_gold(track, tmp / size / track, SEED, size=size)
        out[f"{size}_gold"] = digest(tree(tmp / size / track))
        n = N_DEMO_SUBMISSIONS if size == "demo" else N_BENCH_SUBMISSIONS[track]
        out[f"{size}_submissions"] = digest(demo.make_submissions(track, gold, n, SEED))
    if track == "unidoc":
        out["bench_submissions_4_per_domain"] = digest(
            demo.make_submissions(track, tmp / "bench" / track, 3, SEED, questions_per_domain=4)
        )
    return out


@pytest.mark.parametrize("track", sorted(PINNED))
def test_generation_matches_pinned_digests(track: str, tmp_path: Path) -> None:
    assert generation_digests(track, tmp_path) == PINNED[track]


if __name__ == "__main__":
    import tempfile

    for name in PINNED:
        with tempfile.TemporaryDirectory() as folder:
            print(f"    {name!r}: {generation_digests(name, Path(folder))!r},")
