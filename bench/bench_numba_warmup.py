"""What numba costs a process: `import numba`, the first compile of the recall kernels, and loading them from the cache.

    python bench/bench_numba_warmup.py [--runs 3]

Each figure is measured in a fresh process (python -c ...), the compile with an empty numba cache
directory (NUMBA_CACHE_DIR) and the cached load with that directory filled by the run before. Also
times `import leaderboard.service` (must not import numba: start-up) for reference. Not a test: the
machine is shared and noisy, so read the figures.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import sys, time
t = time.perf_counter(); import leaderboard.service, leaderboard.ui; service = time.perf_counter() - t
assert "numba" not in sys.modules
t = time.perf_counter(); import numba; imported = time.perf_counter() - t
from leaderboard.metrics import nale
t = time.perf_counter(); nale.warm_up(); warm = time.perf_counter() - t
print(service, imported, warm)
"""


def probe(cache_dir: str) -> list[float]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return [float(x) for x in done.stdout.split()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    for run in range(args.runs):
        with tempfile.TemporaryDirectory() as cache_dir:
            service, imported, cold = probe(cache_dir)
            _, imported_again, cached = probe(cache_dir)
        print(
            f"run {run + 1}: import leaderboard.service+ui {service * 1000:.0f} ms (no numba); "
            f"import numba {imported * 1000:.0f} / {imported_again * 1000:.0f} ms; "
            f"compile both kernels (empty cache) {cold * 1000:.0f} ms; load them from the cache {cached * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
