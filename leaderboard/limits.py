"""Per-user allowances of the submit path that the store does not count.

The store counts stored submissions (SUBMISSIONS_PER_DAY). A rejected upload
is never stored, yet validating it costs the server as much as a valid one:
without a count, one user could send bombs all day for free. `InvalidLedger`
counts rejections per (track, user) on the current UTC day in one small JSON
file under the data folder, so the allowance survives a restart.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from .tracks import TRACKS

log = logging.getLogger(__name__)


def _utc_now() -> datetime:
    return datetime.now(UTC)


class InvalidLedger:
    """Rejected uploads per (track, user) today; only today's counts are kept, so the file stays small."""

    def __init__(self, path: Path, allowance: int, clock: Callable[[], datetime] = _utc_now):
        self.path = Path(path)
        self.allowance = allowance
        self.clock = clock
        self._lock = threading.Lock()

    def _today(self) -> str:
        return self.clock().astimezone(UTC).date().isoformat()

    def _counts(self) -> dict[str, int]:
        """Today's counts; a missing, unreadable or stale ledger means none yet."""
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("invalid-submission ledger %s unreadable (%s); counting from zero", self.path, exc)
            return {}
        if not isinstance(doc, dict) or doc.get("day") != self._today() or not isinstance(doc.get("counts"), dict):
            return {}
        return {k: v for k, v in doc["counts"].items() if isinstance(v, int)}

    @staticmethod
    def _key(track: str, user: str) -> str:
        # Any text may arrive as the track through the API: an unknown one is counted as "-", so the ledger
        # cannot be grown by inventing tracks.
        return f"{track if track in TRACKS else '-'}/{user}"

    def used(self, track: str, user: str) -> int:
        with self._lock:
            return self._counts().get(self._key(track, user), 0)

    def exhausted(self, track: str, user: str) -> bool:
        return self.used(track, user) >= self.allowance

    def add(self, track: str, user: str) -> int:
        """Count one more rejection; the new count for today."""
        with self._lock:
            counts = self._counts()
            key = self._key(track, user)
            counts[key] = counts.get(key, 0) + 1
            self._write({"day": self._today(), "counts": counts})
            return counts[key]

    def refusal(self, track: str, user: str) -> str:
        return (
            f"{user} has already had {self.used(track, user)} rejected upload(s) to the {track} track today "
            f"(allowance: {self.allowance} rejected uploads per UTC day); the file was not checked. "
            "Please validate it locally with `python -m leaderboard validate FILE` and try again after 00:00 UTC."
        )

    def _write(self, doc: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".ledger-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(doc, fh)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
