"""Every bundled demo submission scores exactly as recorded: refactoring the scorers must not move a number.

The snapshot (tests/data/demo_scores.json) holds, per demo file, the overall values,
CIs, breakdowns, n and missing, scored without a judge and, for judged tracks, with
the offline lexical judge. Regenerate it only for a deliberate change of a metric
(and bump METRIC_VERSION with it):

    python tests/test_demo_scores_snapshot.py --write
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = Path(__file__).parent / "data" / "demo_scores.json"
DEMO = ROOT / "assets" / "demo" / "submissions"
FIELDS = ("status", "overall", "ci", "breakdowns", "n", "missing")


def demo_files() -> list[Path]:
    return sorted(p for p in DEMO.rglob("*.json*") if ".meta" not in p.name)


def current_scores(path: Path, judge_dir: Path) -> dict:
    from leaderboard.judge import make_judge
    from leaderboard.scoring import score_bytes

    data = path.read_bytes()
    plain = score_bytes(data, path.name).summary
    judged = score_bytes(data, path.name, judge=make_judge("lexical", cache_dir=judge_dir)).summary
    return {"plain": {k: getattr(plain, k) for k in FIELDS}, "lexical": {k: getattr(judged, k) for k in FIELDS}}


def assert_close(got, want, where: str) -> None:
    if isinstance(want, float) or isinstance(got, float):
        assert got is not None and want is not None, f"{where}: {got!r} != {want!r}"
        assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12), f"{where}: {got!r} != {want!r}"
    elif isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), f"{where}: keys {sorted(got or {})} != {sorted(want)}"
        for k in want:
            assert_close(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {got!r} != {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, f"{where}[{i}]")
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


@pytest.mark.parametrize("path", demo_files(), ids=lambda p: p.name)
def test_demo_submission_scores_as_recorded(path: Path, tmp_path: Path) -> None:
    want = json.loads(SNAPSHOT.read_text(encoding="utf-8"))[path.name]
    got = json.loads(json.dumps(current_scores(path, tmp_path)))  # the same JSON round trip as the stored figures
    assert_close(got, want, path.name)


def test_snapshot_covers_every_demo_file() -> None:
    assert set(json.loads(SNAPSHOT.read_text(encoding="utf-8"))) == {p.name for p in demo_files()}


if __name__ == "__main__" and "--write" in sys.argv:
    import tempfile

    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        scores = {p.name: current_scores(p, Path(tmp)) for p in demo_files()}
    SNAPSHOT.write_text(json.dumps(scores, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {SNAPSHOT} ({len(scores)} files)")
