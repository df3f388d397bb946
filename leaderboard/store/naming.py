"""Where things live inside a submissions repo (Hub or local folder): one place for the layout.

Layout (same for the Hub dataset repo and the local folder):

    flags.json                                         maintainers' hide/flag list
    submissions/<track>/<user>/<stamp>-<hash12>.<ext>  a submission (stamp: YYYYmmddTHHMMSSZ, UTC)
    submissions/<track>/<user>/<...>.<ext>.meta.json   its metadata, optional

and in RESULTS_REPO, the scoring's results cache (named by scoring.ResultsCache.key), published:

    results/<sha256>.<track>.<gold12>.v<METRIC_VERSION>.<judge>.json   summary (.npz: per-unit scores)
    results/tables/<track>.parquet                                      every summary of a track (results.py)
    results/verdicts/<sha256>.<judge>.json                              an LLM judge's verdicts (judge/record.py):
                                                                        the one kind a pull installs

Files pushed directly by maintainers may use any name and any depth under
`submissions/<track>/`: the first folder under the track is the user, a file
sitting directly in the track folder belongs to `DIRECT_PUSH_USER`.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime

from .errors import InvalidName

SUBMISSIONS_DIR = "submissions"
FLAGS_FILE = "flags.json"
META_SUFFIX = ".meta.json"
RESULTS_DIR = "results"
# Longest first, so "x.jsonl.gz" is read as jsonl.gz and not as "gz".
SUBMISSION_EXTENSIONS = ("jsonl.gz", "json.gz", "jsonl", "json")
DIRECT_PUSH_USER = "maintainers"
STAMP_FORMAT = "%Y%m%dT%H%M%SZ"
HASH_PREFIX_LEN = 12

_SAFE_COMPONENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")


def check_component(value: str, what: str) -> str:
    """`value` if it is safe as one path component (no slash, no dot-dot, no spaces)."""
    if not isinstance(value, str) or not _SAFE_COMPONENT.match(value) or ".." in value:
        raise InvalidName(f"{what} {value!r} is not allowed (letters, digits, '.', '_', '-'; at most 96 chars)")
    return value


def normalize_extension(ext: str) -> str:
    """'.JSONL.gz' -> 'jsonl.gz'; anything but a submission extension is refused."""
    clean = ext.strip().lower().lstrip(".")
    if clean not in SUBMISSION_EXTENSIONS:
        raise InvalidName(f"extension {ext!r} is not a submission format (expected one of: .json, .jsonl, .json.gz, .jsonl.gz)")
    return clean


def extension_of(filename: str) -> str | None:
    """The submission extension of a file name, or None when it is not a submission."""
    lower = filename.lower()
    if lower.endswith(META_SUFFIX):
        return None
    for ext in SUBMISSION_EXTENSIONS:
        if lower.endswith("." + ext):
            return ext
    return None


def utc_stamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime(STAMP_FORMAT)


def day_prefix(when: datetime) -> str:
    """File-name prefix shared by every submission stamped on the same UTC day."""
    return when.astimezone(UTC).strftime("%Y%m%dT")


def submission_path(track: str, user: str, when: datetime, sha256_hex: str, ext: str) -> str:
    check_component(track, "track")
    check_component(user, "user")
    return f"{SUBMISSIONS_DIR}/{track}/{user}/{utc_stamp(when)}-{sha256_hex[:HASH_PREFIX_LEN]}.{normalize_extension(ext)}"


def meta_path(submission: str) -> str:
    return submission + META_SUFFIX


def parse_submission_path(path: str) -> tuple[str, str] | None:
    """(track, user) for a submission path of the repo, None for anything else."""
    parts = path.split("/")
    if len(parts) < 3 or parts[0] != SUBMISSIONS_DIR or extension_of(parts[-1]) is None:
        return None
    # no empty, ".", ".." or hidden component (each of the last three starts with "."): checked on the whole
    # path at once, as a listing of 10,000s of files calls this for each at every start
    if "" in parts or "/." in f"/{path}":
        return None
    track = parts[1]
    user = parts[2] if len(parts) > 3 else DIRECT_PUSH_USER
    return track, user


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def git_blob_oid(data: bytes) -> str:
    """The git blob id of `data`, as the Hub reports it for regular (non-LFS) files."""
    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()
