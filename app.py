"""The leaderboard app: `python app.py` serves the board on http://127.0.0.1:7860.

With no environment variable set it runs offline on the bundled demo data
(local submissions folder, demo gold, the lexical judge); see README.md for
the Hub and judge settings.
"""

from __future__ import annotations

import logging
import os

# Quiet offline: no analytics, no telemetry (set before gradio / huggingface_hub import).
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from leaderboard.tracks import TRACKS  # imports no Hub client: the offline switch below still applies

if not os.environ.get("SUBMISSIONS_REPO") and not any(os.environ.get(t.gold_env) for t in TRACKS.values()):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing to fetch from the Hub in the local default

from leaderboard.service import Board
from leaderboard.ui import build_app, launch_kwargs


def main() -> None:
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    board = Board().start()
    demo = build_app(board)
    demo.queue(default_concurrency_limit=4).launch(**launch_kwargs())


if __name__ == "__main__":
    main()
