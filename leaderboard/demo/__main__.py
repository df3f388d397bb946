"""python -m leaderboard.demo [OUT_DIR]: regenerate the demo data (default: assets/demo)."""

import sys
from pathlib import Path

from . import DEMO_DIR, write_demo

write_demo(Path(sys.argv[1]) if len(sys.argv) > 1 else DEMO_DIR)
