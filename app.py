"""The leaderboard app: `python app.py` serves the board on http://127.0.0.1:7860.

With no environment variable set it runs offline on the bundled demo data
(local submissions folder, demo gold, the lexical judge); see README.md for
the Hub and judge settings.
"""

from __future__ import annotations

import gc
import logging
import os

# Quiet offline: no analytics, no telemetry (set before gradio / huggingface_hub import).
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from leaderboard.tracks import TRACKS  # imports no Hub client: the offline switch below still applies

if not os.environ.get("SUBMISSIONS_REPO") and not any(os.environ.get(t.gold_env) for t in TRACKS.values()):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing to fetch from the Hub in the local default

from leaderboard.scoring import gc_paused
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.ui import build_app, launch_kwargs

GC_YOUNG_THRESHOLD = 10_000  # allocations between collections of the youngest generation, once started (start)


def settings() -> Settings:
    """The one Settings, from the environment: only here and in leaderboard/cli.py is it read."""
    return Settings.from_env(os.environ, default_judge="lexical")


def start(board: Board | None = None, config: Settings | None = None):
    """The board loaded and its page built: all `python app.py` does before serving (bench/bench_scale.py times it).

    What loading and building allocate (entries, summaries, the page's components: 100,000s of objects at
    10,000 submissions) lives as long as the process. The collector is paused meanwhile and all of it then moved
    to the permanent generation (`gc.freeze`): the first collection after the pause would otherwise walk every
    one of them (0.2-0.4 s at 10,000 submissions), and every later full collection again. The price: cyclic
    garbage left by the start (~5,400 objects, gradio's first app among them, the same at any board size) is
    never collected.
    Only here, in the serving process: tests build many boards in one process and must get theirs back.

    Then the youngest generation is collected every GC_YOUNG_THRESHOLD allocations, not every 700: a request
    that draws a track first decodes 1,000s of summaries (10,000s of dicts, freed by reference counting, not by
    the collector), and with everything frozen the default threshold ran full collections through them over and
    over (about a third of the time spent decoding at 10,000 submissions, bench/bench_scale.py). Cyclic garbage
    waits for more allocations before it is collected: kilobytes.
    """
    with gc_paused():  # one pause for both (theirs nest in it), so no collection runs between them
        board = (board or Board(config or settings())).start()
        demo = build_app(board)
        gc.freeze()  # before the collector is back on: the first allocation after would start the walk
    _, *older = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *older)
    return board, demo


def main() -> None:
    config = settings()
    logging.basicConfig(level=config.page.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    board, demo = start(config=config)
    demo.queue(default_concurrency_limit=4).launch(**launch_kwargs(board.settings))


if __name__ == "__main__":
    main()
