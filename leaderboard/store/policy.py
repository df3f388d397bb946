"""Submission rules shared by both backends: the per-user daily limit, checked as a file is stored.

Counted from the stored file names under the store's write lock, so two uploads at once cannot both pass.
The board's other admission rules (duplicates, a name taken) and the daily count of pull-request files,
which reach the store only when merged, are in leaderboard/admission.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from .errors import RateLimited
from .naming import day_prefix, parse_submission_path


def count_today(paths: Iterable[str], track: str, user: str, now: datetime) -> int:
    """Submissions by `user` to `track` stamped on the UTC day of `now` (read from the file names)."""
    prefix = day_prefix(now)
    count = 0
    for path in paths:
        parsed = parse_submission_path(path)
        if parsed == (track, user) and path.rsplit("/", 1)[-1].startswith(prefix):
            count += 1
    return count


def check_rate(paths: Iterable[str], track: str, user: str, now: datetime, limit: int) -> None:
    used = count_today(paths, track, user, now)
    if used >= limit:
        raise RateLimited(user=user, track=track, limit=limit, used=used)
