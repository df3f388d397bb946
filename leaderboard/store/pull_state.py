"""What a HubStore already has on disk, so a pull downloads only new or changed files.

Persisted as JSON in the cache folder: a restarted app (same disk) does not
download the repo again, and serves it before its first pull. A state that is
unreadable, or names a cached file gone or damaged on disk, only costs downloads
(see `PullState.load`). It holds

- `files`: one entry per tracked repo file (submission, metadata, flags.json)
  with the content ids the Hub's tree listing can be compared against: the git
  blob id for regular files, the sha256 for LFS files (the listing gives
  `oid` for the former, `lfs.oid` for the latter);
- `folders`: the git tree id of every folder under `submissions/` at
  `commit`. Git tree ids are content hashes, so a folder whose id did not change
  holds exactly the files we already have: the next pull does not list it.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

log = logging.getLogger(__name__)

STATE_VERSION = 2


def remote_key(blob_id: str | None, lfs_sha256: str | None) -> str:
    """How the Hub's tree listing identifies a file's content."""
    return f"sha256:{lfs_sha256}" if lfs_sha256 else f"git:{blob_id}"


@dataclass
class FileState:
    size: int
    git_oid: str  # git blob id of the bytes we hold
    sha256: str
    local_path: str
    # Parsed JSON for metadata / flags files, so pulls don't reread them.
    parsed: dict | None = None

    def matches(self, size: int, key: str) -> bool:
        """True when the listed file is the one we hold (whether the Hub stores it as git or LFS)."""
        return size == self.size and key in (
            f"git:{self.git_oid}",
            f"sha256:{self.sha256}",
        )

    def key(self) -> str:
        return f"git:{self.git_oid}"


@dataclass
class PullState:
    repo_id: str
    commit: str | None = None
    files: dict[str, FileState] = field(default_factory=dict)
    # Folder path -> git tree id at `commit`.
    folders: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, file: Path, repo_id: str) -> PullState:
        """The saved state; an unreadable, truncated or mismatched one counts as none (logged once, at start).

        A corrupt state only costs downloads, never correctness: every entry is
        checked for shape, and a cached file that is gone or has the wrong size
        (truncated on disk) drops its entry, so the next pull fetches it again.
        """
        try:
            raw = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(repo_id)
        except (OSError, ValueError, RecursionError) as exc:
            log.warning("ignoring unreadable pull state %s (%s); will list the repo again", file.name, type(exc).__name__)
            return cls(repo_id)
        if not isinstance(raw, dict):
            log.warning("ignoring malformed pull state %s (not an object); will list the repo again", file.name)
            return cls(repo_id)
        if raw.get("version") != STATE_VERSION or raw.get("repo_id") != repo_id:
            return cls(repo_id)  # an older layout or another repo: start afresh, nothing is wrong
        try:
            state = cls._from_json(raw, repo_id)
        except (ValueError, TypeError, AttributeError) as exc:
            log.warning("ignoring malformed pull state %s (%s); will list the repo again", file.name, exc)
            return cls(repo_id)
        # Checked once per process, not per pull: a file deleted or damaged in the cache since
        # (cache cleanup, new disk, a crash mid-write) drops its entry, and the next pull refetches it.
        damaged = [p for p, e in state.files.items() if not _on_disk(e)]
        if damaged:
            log.info("pull state: %d cached file(s) missing or damaged on disk, will download again", len(damaged))
            for p in damaged:
                del state.files[p]
            state.commit, state.folders = None, {}
        return state

    @classmethod
    def _from_json(cls, raw: dict, repo_id: str) -> PullState:
        commit, files, folders = raw.get("commit"), raw.get("files", {}), raw.get("folders", {})
        if not isinstance(commit, str | None) or not isinstance(files, dict) or not isinstance(folders, dict):
            raise ValueError("commit, files or folders of the wrong type")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in folders.items()):
            raise ValueError("folder ids must be strings")
        return cls(repo_id, commit, {p: _file_state(p, e) for p, e in files.items()}, dict(folders))

    def save(self, file: Path) -> None:
        file.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "version": STATE_VERSION,
            "repo_id": self.repo_id,
            "commit": self.commit,
            # Positional lists (FileState field order): json.dumps' C encoder, no asdict() walk.
            "files": {p: [e.size, e.git_oid, e.sha256, e.local_path, e.parsed] for p, e in self.files.items()},
            "folders": self.folders,
        }
        text = json.dumps(payload, separators=(",", ":"), default=str)
        fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=".state-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, file)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)


def _file_state(path: str, entry) -> FileState:
    """One saved file entry, shape-checked: [size, git oid, sha256, local path, parsed JSON or null]."""
    if not isinstance(entry, list) or len(entry) != 5:
        raise ValueError(f"entry of {path[:200]!r} is not a 5-item list")
    size, git_oid, sha, local, parsed = entry
    if type(size) is not int or size < 0 or not all(isinstance(v, str) for v in (git_oid, sha, local)):
        raise ValueError(f"entry of {path[:200]!r} has fields of the wrong type")
    if parsed is not None and not isinstance(parsed, dict):
        raise ValueError(f"entry of {path[:200]!r} has parsed content of the wrong type")
    return FileState(size, git_oid, sha, local, parsed)


def _on_disk(entry: FileState) -> bool:
    try:
        return os.stat(entry.local_path).st_size == entry.size
    except OSError:
        return False


# ---- when the last successful pull finished ------------------------------------------------------
# A sidecar of the state file, rewritten on every successful pull: tiny, so a pull whose head did
# not move (the common case) does not rewrite the whole state. "data as of" after a restart during
# an outage is this time, not the restart's.


def pulled_at_file(state_file: Path) -> Path:
    return state_file.with_name(state_file.name + ".pulled")


def save_pulled_at(state_file: Path, commit: str | None, when: datetime) -> None:
    target = pulled_at_file(state_file)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"commit": commit, "pulled_at": when.astimezone(UTC).isoformat()})
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".pulled-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def load_pulled_at(state_file: Path, commit: str | None) -> datetime | None:
    """When the pull that left `commit` on disk last succeeded; None when unknown.

    Without a readable record for that commit (a state written by an older version,
    a crash between the two writes), the state file's own time stands in: it was
    written by the last pull that changed it.
    """
    try:
        raw = json.loads(pulled_at_file(state_file).read_text(encoding="utf-8"))
        if raw.get("commit") == commit:
            when = datetime.fromisoformat(raw["pulled_at"])
            return when if when.tzinfo else when.replace(tzinfo=UTC)
    except FileNotFoundError:
        pass
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        log.warning("ignoring unreadable pull time %s: %s", pulled_at_file(state_file), exc)
    try:
        return datetime.fromtimestamp(state_file.stat().st_mtime, UTC)
    except OSError:
        return None
