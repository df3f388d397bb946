"""What a HubStore already has on disk, so a pull downloads only new or changed files.

Persisted as JSON in the cache folder: a restarted app (same disk) does not
download the repo again. It holds

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
        try:
            raw = json.loads(file.read_text(encoding="utf-8"))
            if raw.get("version") != STATE_VERSION or raw.get("repo_id") != repo_id:
                return cls(repo_id)
            files = {p: FileState(*e) for p, e in raw.get("files", {}).items()}
            state = cls(repo_id, raw.get("commit"), files, dict(raw.get("folders", {})))
            # Checked once per process, not per pull: a file deleted from the cache since
            # (cache cleanup, new disk) drops its entry, and the next pull relists and refetches it.
            missing = [p for p, e in files.items() if not os.path.exists(e.local_path)]
            if missing:
                log.info(
                    "pull state: %d cached file(s) missing on disk, will download again",
                    len(missing),
                )
                for p in missing:
                    del state.files[p]
                state.commit, state.folders = None, {}
            return state
        except FileNotFoundError:
            return cls(repo_id)
        except (OSError, ValueError, TypeError) as exc:
            # A corrupt state only costs downloads, never correctness.
            log.warning("ignoring unreadable pull state %s: %s", file, exc)
            return cls(repo_id)

    def save(self, file: Path) -> None:
        file.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "version": STATE_VERSION,
            "repo_id": self.repo_id,
            "commit": self.commit,
            # Positional lists (FileState field order): json.dumps' C encoder, no asdict() walk.
            "files": {
                p: [e.size, e.git_oid, e.sha256, e.local_path, e.parsed]
                for p, e in self.files.items()
            },
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
