"""The flags in force: the last good flags.json, kept across a broken edit and a restart.

A maintainer's typo in flags.json must not un-hide every hidden submission. So
the store reads flags through a `LastGoodFlags`: a readable flags.json (or none
at all: nothing flagged) becomes the flags in force and is persisted beside the
store's state; an unreadable one leaves the last good flags in force and sets
a notice for the status line until a readable one arrives. The problem is
logged once per broken version, not on every pull.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from .model import FlagsUnreadable, read_flags

log = logging.getLogger(__name__)


def _utcnow() -> datetime:
    return datetime.now(UTC)


class LastGoodFlags:
    def __init__(self, file: Path, clock=_utcnow):
        self.file = Path(file)  # where the last good flags (and the current problem) are persisted
        self._clock = clock
        self.flags: dict = {}
        self._broken: dict | None = None  # {"since", "error", "sha256"} while flags.json is unreadable
        self._load()

    def _load(self) -> None:
        try:
            saved = json.loads(self.file.read_text(encoding="utf-8"))
            flags = saved["flags"]
            if not isinstance(flags, dict) or not all(isinstance(v, dict) for v in flags.values()):
                raise ValueError("flags must map paths to objects")
            broken = saved.get("broken")
            self.flags = flags
            self._broken = broken if isinstance(broken, dict) and {"since", "error", "sha256"} <= set(broken) else None
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
            log.warning("saved flags %s unreadable (%s); starting with no flags", self.file.name, type(exc).__name__)

    def _save(self) -> None:
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.file.parent, prefix=".flags-", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"flags": self.flags, "broken": self._broken}, fh)
            os.replace(tmp, self.file)
        except OSError as exc:  # persisting is a comfort for restarts, never a reason to fail a pull
            log.warning("could not save the last good flags to %s: %s", self.file, exc)

    def good(self, flags: dict) -> dict:
        """A readable flags.json was seen: it is in force from now on."""
        if flags != self.flags or self._broken is not None:
            if self._broken is not None:
                log.info("flags.json readable again; its flags are in force")
            self.flags, self._broken = dict(flags), None
            self._save()
        return dict(self.flags)

    def read(self, raw: bytes | None, origin: str = "flags.json") -> dict:
        """The flags in force after reading `raw` (None: there is no flags.json, so nothing is flagged)."""
        if raw is None:
            return self.good({})
        try:
            return self.good(read_flags(raw, origin))
        except FlagsUnreadable as exc:
            return self.unreadable(raw, str(exc), origin)

    def unreadable(self, raw: bytes, error: str, origin: str = "flags.json") -> dict:
        sha = hashlib.sha256(raw).hexdigest()
        if self._broken is None or self._broken["sha256"] != sha:
            since = self._broken["since"] if self._broken else self._clock().strftime("%Y-%m-%d %H:%M UTC")
            log.warning("%s unreadable: %s; keeping the last good flags (%d entries)", origin, error, len(self.flags))
            self._broken = {"since": since, "error": error, "sha256": sha}
            self._save()
        return dict(self.flags)

    def notice(self) -> str | None:
        """The admins' status line while flags.json is unreadable."""
        b = self._broken
        return f"flags.json unreadable since {b['since']}: {b['error']}; keeping the last good flags" if b else None
