"""Progress hooks for `judge_many(progress=...)`: a tqdm bar for the CLI.

The judge only calls `progress(done, total)`; the app can pass its own callable
(e.g. one that updates a Gradio progress bar) and the CLI passes this one.
"""

from __future__ import annotations

import sys
from typing import Any, Self

from tqdm import tqdm


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

    def on_batch(self, batch_id: str, lines_done: int, lines_total: int) -> None:
        """Batch mode: the batch being polled and its lines answered so far, beside the answers bar."""
        if self.bar is not None:
            self.bar.set_postfix_str(f"batch {batch_id[:64]}, {lines_done} of {lines_total} lines")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
