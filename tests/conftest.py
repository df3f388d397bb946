"""Shared test fixtures: where the real benchmark gold lives, and offline defaults."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT.parent / "shared" / "benchmarks"
UNIDOC_GOLD = BENCHMARKS / "unidoc"
FUTUREPEDIA_GOLD = BENCHMARKS / "futurepedia" / "mul_ans_all.json"

# Tests never talk to the real Hub or send analytics.
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _needs(path: Path):
    return pytest.mark.skipif(
        not path.exists(),
        reason=f"real benchmark gold not found at {path} (it lives in ../shared/benchmarks beside the repository)",
    )


needs_unidoc = _needs(UNIDOC_GOLD)
needs_futurepedia = _needs(FUTUREPEDIA_GOLD)
