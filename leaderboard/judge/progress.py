"""Progress hooks for `judge_many(progress=...)`: a tqdm bar for the CLI.

The judge only calls `progress(done, total)`; the app can pass its own callable
(e.g. one that updates a Gradio progress bar) and the CLI passes this one.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Self

from tqdm import tqdm

from .base import batch_status


class TqdmProgress:
    """`with TqdmProgress("judging") as p: judge.judge_many(items, progress=p)`."""

    def __init__(self, desc: str = "judging", **tqdm_kwargs: Any) -> None:
        self.desc = desc
        self.kwargs = {"file": sys.stderr, "unit": "answer", "dynamic_ncols": True, **tqdm_kwargs}
        self.bar: tqdm | None = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = tqdm(total=total, desc=self.desc, **self.kwargs)
        self.bar.update(done - self.bar.n)  # update() respects tqdm's refresh throttling

    def on_batch(
        self, batch_id: str, lines_done: int, lines_total: int, since: float | None = None, waiting: bool = True
    ) -> None:
        """Batch mode: the batch being polled, its lines answered so far and how long it has waited, beside the bar."""
        if self.bar is not None:
            now = time.time()
            self.bar.set_postfix_str(
                batch_status(batch_id, lines_done, lines_total, now if since is None else since, waiting, now)
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
