"""Errors raised by the submission store, and the token scrubbing they rely on.

Every message that leaves the store (exception text, log line, repr) goes
through `redact` first: a Hugging Face token must never reach a page or a log,
even when the Hub (or a proxy in front of it) echoes request details back.
"""

from __future__ import annotations

import re

# Hub user tokens look like hf_<34+ alphanumerics>; also catch bearer headers
# and "token=" query strings in case a server or proxy echoes them back.
_TOKEN_PATTERNS = (
    re.compile(r"hf_[A-Za-z0-9]{8,}"),
    re.compile(r"(?i)(bearer\s+)[^\s'\"]+"),
    re.compile(r"(?i)(token[=:]\s*)[^\s&'\"]+"),
)


def redact(text: object, *secrets: str | None) -> str:
    """`text` as a string with every known secret and anything token-shaped masked."""
    out = str(text)
    for secret in secrets:
        if secret:
            out = out.replace(secret, "***")
    out = _TOKEN_PATTERNS[0].sub("hf_***", out)
    for pattern in _TOKEN_PATTERNS[1:]:
        out = pattern.sub(lambda m: m.group(1) + "***", out)
    return out


class StoreError(Exception):
    """Base class of every error the store raises on purpose."""


class StoreUnavailable(StoreError):
    """The backend (the Hub, usually) could not be reached or answered with an error.

    The caller keeps serving its last good snapshot; `str(error)` is safe to show.
    """


class StoreMisconfigured(StoreUnavailable):
    """The Hub refused the configured token (HTTP 401/403).

    A setting to fix (the Space secret), not an outage to wait out: the page and
    the submit message say so instead of "retry later".
    """


class DuplicateSubmission(StoreError):
    """The same bytes are already stored for this track; nothing was uploaded."""

    def __init__(self, existing: str, track: str):
        self.existing = existing
        self.track = track
        super().__init__(f"This file was already submitted to the {track} track as {existing}; it was not uploaded again.")


class RateLimited(StoreError):
    """The user already made the allowed number of submissions today for this track."""

    def __init__(self, user: str, track: str, limit: int, used: int):
        self.user = user
        self.track = track
        self.limit = limit
        self.used = used
        super().__init__(
            f"{user} has already made {used} submission(s) to the {track} track today "
            f"(limit: {limit} per UTC day). Please try again after 00:00 UTC."
        )


class InvalidName(StoreError, ValueError):
    """A track, user or extension that cannot be used as a path component."""
