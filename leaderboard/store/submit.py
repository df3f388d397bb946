"""The submit flow in one call: validate first, store only what is valid, say what happened.

The UI calls `submit_checked`; an invalid file never reaches the store.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from .base import Store
from .errors import DuplicateSubmission, InvalidName, RateLimited, StoreMisconfigured, StoreUnavailable
from .model import SubmissionFile
from .naming import extension_of

log = logging.getLogger(__name__)

State = Literal["queued", "invalid", "duplicate", "rate_limited", "unavailable"]


class Report(Protocol):
    """What a track validator returns (the tracks module's report fits this shape)."""

    ok: bool
    errors: list[str]
    track_name: str | None
    system: dict | None


@dataclass(frozen=True)
class SubmitStatus:
    state: State
    message: str  # one line for the user
    # Every validation problem, for "invalid".
    errors: list[str] = field(default_factory=list)
    file: SubmissionFile | None = None  # the stored submission, for "queued"
    existing: str | None = None  # the earlier identical file, for "duplicate"

    @property
    def ok(self) -> bool:
        return self.state == "queued"


def submit_checked(
    store: Store,
    validate: Callable[[bytes, str], Report],
    *,
    user: str,
    filename: str,
    data: bytes,
    metadata: dict | None = None,
    track: str | None = None,
    admit: Callable[[Report], SubmitStatus | None] | None = None,
) -> SubmitStatus:
    """Validate `data` (named `filename` by the uploader), then store it if and only if it is valid.

    `track`, when given (the track picked in the form), must match the track the file declares.
    `admit`, when given, sees the valid report before anything is stored and may refuse it with a
    status (the board refuses duplicates by content and names taken by another submitter).
    """
    # Only the base name: uploads arrive as temp paths, browsers may send "C:\\fakepath\\x.jsonl".
    name = (filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    ext = extension_of(name)
    if ext is None:
        return SubmitStatus(
            "invalid",
            "Unsupported file type.",
            [f"{name or 'the file'}: expected a .json, .jsonl, .json.gz or .jsonl.gz file"],
        )
    report = validate(data, name)
    errors = list(report.errors or [])
    if not report.ok or not report.track_name:
        if not errors:
            errors = ["the file was rejected by the validator (no detail given)"]
        return SubmitStatus(
            "invalid",
            f"The file is invalid ({len(errors)} problem(s)); nothing was uploaded.",
            errors,
        )
    if track and report.track_name != track:
        return SubmitStatus(
            "invalid",
            "The file is for another track; nothing was uploaded.",
            [f"the file declares track {report.track_name!r} but the {track!r} track was selected"],
        )
    refused = admit(report) if admit is not None else None
    if refused is not None:
        return refused
    stored_meta = {
        **(metadata or {}),
        "system": report.system or {},
        "original_filename": name,
    }
    try:
        stored = store.submit(report.track_name, user, ext, data, stored_meta)
    except DuplicateSubmission as exc:
        return SubmitStatus("duplicate", str(exc), existing=exc.existing)
    except RateLimited as exc:
        return SubmitStatus("rate_limited", str(exc))
    except InvalidName as exc:
        return SubmitStatus("invalid", str(exc), [str(exc)])
    except StoreMisconfigured as exc:  # retrying cannot help until a maintainer fixes the secret
        log.error("submission by %s not stored: %s", user, exc)
        return SubmitStatus(
            "unavailable",
            f"The submission could not be stored: the board is misconfigured ({exc}). "
            "The maintainers have been told in the logs; nothing was uploaded.",
        )
    except StoreUnavailable as exc:
        log.warning("submission by %s not stored: %s", user, exc)
        return SubmitStatus(
            "unavailable",
            f"The submission could not be stored right now: {exc}. Please retry later.",
        )
    return SubmitStatus("queued", f"Submitted as {stored.path}; it will be scored shortly.", file=stored)
