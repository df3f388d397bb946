"""The values the store hands out: submission files, snapshots, flags."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

log = logging.getLogger(__name__)

FLAG_STATUSES = ("hidden", "flagged")


@dataclass(frozen=True)
class SubmissionFile:
    """One submission as stored: the raw file (already on local disk) and its metadata."""

    path: str  # path in the repo, e.g. submissions/unidoc/alice/20260102T030405Z-0123456789ab.jsonl
    # Readable local copy (Hub: inside the download cache). The local store gives a str: it lists 10,000s of
    # files at each start, and building a Path costs more than the rest of a file's entry; `local_path` is the Path.
    local: str | Path
    track: str
    user: str
    sha256: str  # of the raw bytes as stored (gzip included)
    # The <file>.meta.json content, {} when absent.
    metadata: dict = field(default_factory=dict)

    @property
    def local_path(self) -> Path:
        return Path(self.local)


@dataclass(frozen=True)
class Snapshot:
    """What the store held at one commit."""

    commit: str  # Hub commit sha; "local-<hash>" for the local folder
    fetched_at: datetime  # when this pull finished (UTC)
    files: list[SubmissionFile]
    flags: dict  # repo path -> {"status": "hidden"|"flagged", "reason": str}
    # Paths new or changed (bytes or metadata) since this store object's previous pull.
    changed: list[str]
    # Paths present at the previous pull, gone now.
    removed: list[str] = field(default_factory=list)
    source: str = ""  # "hub:<repo>" or "local:<folder>", for the "data as of" line

    def by_path(self) -> dict[str, SubmissionFile]:
        return {f.path: f for f in self.files}


class FlagsUnreadable(ValueError):
    """flags.json as a whole cannot be used (not JSON, not an object): the message says why, without a path."""


def read_flags(raw: bytes | str, origin: str = "flags.json") -> dict:
    """Validated flags; raises FlagsUnreadable when the file as a whole is unusable.

    Accepted shape: {"<repo path>": {"status": "hidden"|"flagged", "reason": "..."}}.
    """
    try:
        data = json.loads(raw)
    except RecursionError:
        raise FlagsUnreadable("nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise FlagsUnreadable(f"not valid JSON ({str(exc)[:120]})") from None
    if not isinstance(data, dict):
        raise FlagsUnreadable("must be a JSON object mapping paths to flags")
    flags: dict = {}
    for path, entry in data.items():
        if isinstance(entry, str):  # shorthand {"path": "hidden"}
            entry = {"status": entry}
        status = entry.get("status") if isinstance(entry, dict) else None
        if status not in FLAG_STATUSES:
            log.warning(
                "%s: entry %r has status %r, expected one of %s; skipped",
                origin,
                path,
                status,
                FLAG_STATUSES,
            )
            continue
        reason = entry.get("reason", "")
        flags[str(path)] = {
            "status": status,
            "reason": reason if isinstance(reason, str) else str(reason),
        }
    return flags


def stored_metadata(
    metadata: dict,
    *,
    track: str,
    user: str,
    sha256: str,
    size: int,
    submitted_at: datetime,
) -> dict:
    """The JSON written beside a submission: the caller's metadata plus the facts the store vouches for.

    The store's own keys win over the caller's, so a submitter cannot forge them.
    """
    return {
        **(metadata or {}),
        "track": track,
        "user": user,
        "sha256": sha256,
        "size": size,
        "submitted_at": submitted_at.isoformat().replace("+00:00", "Z"),
    }


def encode_metadata(meta: dict) -> bytes:
    return (json.dumps(meta, ensure_ascii=False, indent=2, sort_keys=True, default=str) + "\n").encode("utf-8")


# A sidecar the app writes holds the form fields and the validated system header: a few KB. A larger one
# (anyone with write access to the submissions repo can put one there) is not decoded at all.
MAX_METADATA_BYTES = 64 * 1024


def decode_metadata(raw: bytes, origin: str) -> dict:
    """Parsed metadata; a broken, oversized or too deeply nested file yields {"meta_error": ...}, never raises.

    It is read while pulling: an exception here would stop every pull, and the whole board with it.
    """
    if len(raw) > MAX_METADATA_BYTES:
        log.warning("metadata %s is %d bytes, over %d: ignored", origin, len(raw), MAX_METADATA_BYTES)
        return {"meta_error": f"{origin} is over {MAX_METADATA_BYTES:,} bytes"}
    try:
        data = json.loads(raw)
    except RecursionError:
        log.warning("metadata %s is nested too deeply: ignored", origin)
        return {"meta_error": f"{origin} is nested too deeply"}
    except (ValueError, UnicodeDecodeError) as exc:
        log.warning("metadata %s is not valid JSON: %s", origin, exc)
        return {"meta_error": f"{origin} is not valid JSON: {exc}"}
    if not isinstance(data, dict):
        return {"meta_error": f"{origin} is not a JSON object"}
    return data
