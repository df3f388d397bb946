"""Pulling the submissions repo: the pull state, listing what changed, downloads, snapshots, flags.

A pull compares the repo's head with the commit of the pull state (pull_state.py)
and downloads only new or changed files; folders whose git tree id did not change
are not even listed. The state is saved whenever the head moved (and the pull's
time on every pull), so a restarted app serves the last pull from disk
(`cached_snapshot`, dated by that pull) before the Hub answers.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from huggingface_hub.errors import EntryNotFoundError
from huggingface_hub.hf_api import RepoFile

from .flags import LastGoodFlags
from .hub_client import HubClient
from .model import FlagsUnreadable, Snapshot, SubmissionFile, decode_metadata, read_flags
from .naming import FLAGS_FILE, META_SUFFIX, SUBMISSIONS_DIR, meta_path, parse_submission_path
from .pull_state import FileState, PullState, load_pulled_at, remote_key, save_pulled_at

log = logging.getLogger(__name__)

# Called for every tracked file on every pull with a new head: parse each path once.
_parse_submission_path = functools.lru_cache(maxsize=1 << 16)(parse_submission_path)


def _file_digests(path: Path) -> tuple[str, str]:
    """(sha256, git blob id) of a local file, one read."""
    size = path.stat().st_size
    sha = hashlib.sha256()
    git = hashlib.sha1(b"blob %d\0" % size)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            sha.update(chunk)
            git.update(chunk)
    return sha.hexdigest(), git.hexdigest()


def _is_tracked(path: str) -> bool:
    """Whether a repo file is part of the board: a submission, its metadata, or flags.json."""
    if path == FLAGS_FILE or _parse_submission_path(path):
        return True
    return path.endswith(META_SUFFIX) and _parse_submission_path(path[: -len(META_SUFFIX)]) is not None


class SubmissionsPuller:
    """The local copy of the submissions repo, brought up to date by `pull`."""

    def __init__(
        self,
        client: HubClient,
        repo_id: str,
        state_dir: Path,
        *,
        source: str,
        max_workers: int,
    ):
        self.client = client
        self.repo_id = repo_id
        self.source = source
        self._max_workers = max_workers
        self._state_file = state_dir / f"{repo_id.replace('/', '--')}.json"
        self._state = PullState.load(self._state_file, repo_id)
        self._flags = LastGoodFlags(state_dir / f"{repo_id.replace('/', '--')}.last-good-flags.json")
        # path -> signature at this object's last pull (what `changed` is relative to)
        self._previous: dict[str, tuple] | None = None
        # path -> (signature, SubmissionFile): unchanged files are not rebuilt on every pull
        self._built: dict[str, tuple] = {}
        self.lock = threading.Lock()

    def cached_snapshot(self) -> Snapshot | None:
        with self.lock:
            if not self._state.commit or not all(Path(f.local_path).exists() for f in self._state.files.values()):
                return None
            # Dated by the pull that left it on disk: "data as of" must not become the restart time.
            return self._snapshot(fetched_at=load_pulled_at(self._state_file, self._state.commit))

    def pull(self) -> Snapshot:
        with self.lock, self.client.errors("pulling submissions"):
            head = self.client.head(self.repo_id)
            if head != self._state.commit:
                self._sync_state(head)
            snap = self._snapshot()
            self._remember_pull_time(snap)
            return snap

    def seed(self, files: dict[str, FileState]) -> None:
        """Files this process just committed: the next pull lists them but need not download them."""
        with self.lock:
            self._state.files.update(files)

    def flags(self) -> dict:
        """flags.json at the current head (not necessarily the last pull's)."""
        with self.client.errors("reading flags"):
            head = self.client.head(self.repo_id)  # fails fast when the Hub is down
            with self.lock:
                if head == self._state.commit:
                    return self._flags_in_force()
            try:
                local = self.client.download(self.repo_id, FLAGS_FILE, head)
            except EntryNotFoundError:
                return self._flags.read(None)  # no flags.json: nothing hidden or flagged
            return self._flags.read(local.read_bytes(), FLAGS_FILE)

    def notice(self) -> str | None:
        return self._flags.notice()

    def _remember_pull_time(self, snap: Snapshot) -> None:
        try:
            save_pulled_at(self._state_file, snap.commit, snap.fetched_at)
        except OSError as exc:  # costs only the date shown after a restart, never the pull
            log.warning("pull time not saved: %s", exc)

    def _sync_state(self, head: str) -> None:
        """Make the pull state match commit `head`, downloading only new or changed files."""
        state = self._state
        tracked, folders = self._current_files(head)
        wanted = [p for p, (size, key) in tracked.items() if not (p in state.files and state.files[p].matches(size, key))]
        log.info("pull %s@%s: %d tracked files, %d to download", self.repo_id, head[:10], len(tracked), len(wanted))
        try:
            if len(wanted) > 1:
                with ThreadPoolExecutor(max_workers=min(self._max_workers, len(wanted))) as pool:
                    list(pool.map(lambda p: self._fetch_into_state(p, tracked[p][0], head), wanted))
            else:
                for p in wanted:
                    self._fetch_into_state(p, tracked[p][0], head)
            for gone in set(state.files) - set(tracked):
                del state.files[gone]
            # Only now, with every file of `head` on disk, may folder ids vouch for their content.
            state.folders = folders
            state.commit = head
        finally:
            state.save(self._state_file)

    def _current_files(self, head: str) -> tuple[dict[str, tuple[int, str]], dict[str, str]]:
        """Tracked files at `head` as path -> (size, remote key), and the folder tree ids seen.

        Lists only what may have changed: a folder under submissions/ whose git tree id
        equals the one recorded at the last complete pull is taken from the state as is;
        a changed folder is listed one level deep, a new folder recursively (one paged call).
        One new file thus costs a handful of small listings, however large the repo.
        """
        state = self._state
        files: dict[str, tuple[int, str]] = {}
        folders: dict[str, str] = {}

        def take(items) -> list:
            subfolders = []
            for item in items:
                if isinstance(item, RepoFile):
                    if _is_tracked(item.path):
                        files[item.path] = (item.size, remote_key(item.blob_id, item.lfs.sha256 if item.lfs else None))
                elif item.path == SUBMISSIONS_DIR or item.path.startswith(SUBMISSIONS_DIR + "/"):
                    folders[item.path] = item.tree_id
                    subfolders.append(item)
            return subfolders

        # Folders whose tree id matches the state: their files are taken from it below.
        unchanged: set[str] = set()

        def visit(path: str | None) -> None:
            for folder in take(self.client.list_tree(self.repo_id, head, path)):
                known = state.folders.get(folder.path)
                if known == folder.tree_id and state.commit is not None:
                    unchanged.add(folder.path)
                elif known is None:
                    take(self.client.list_tree(self.repo_id, head, folder.path, recursive=True))
                else:
                    visit(folder.path)

        def in_unchanged(path: str) -> bool:
            while "/" in path:
                path = path.rsplit("/", 1)[0]
                if path in unchanged:
                    return True
            return False

        visit(None)
        if unchanged:  # one pass over the state, not one per unchanged folder
            for path, entry in state.files.items():
                if in_unchanged(path):
                    files[path] = (entry.size, entry.key())
            for path, tree_id in state.folders.items():
                if in_unchanged(path):
                    folders[path] = tree_id
        return files, folders

    def _fetch_into_state(self, path: str, size: int, revision: str) -> None:
        local = self.client.download(self.repo_id, path, revision)
        if local.stat().st_size != size:
            # The download cache trusts what it holds: a copy damaged on disk is fetched afresh.
            log.warning("cached copy of %s has the wrong size; downloading it again", path)
            local = self.client.download(self.repo_id, path, revision, force=True)
        sha, git = _file_digests(local)
        parsed = None
        if path.endswith(META_SUFFIX):
            parsed = decode_metadata(local.read_bytes(), path)
        elif path == FLAGS_FILE:
            try:  # None: unreadable, the snapshot keeps the last good flags
                parsed = read_flags(local.read_bytes(), path)
            except FlagsUnreadable:
                parsed = None
        self._state.files[path] = FileState(size, git, sha, str(local), parsed)

    def _flags_in_force(self) -> dict:
        """Flags of the pulled flags.json, or the last good ones while it is unreadable."""
        entry = self._state.files.get(FLAGS_FILE)
        if entry is None:
            return self._flags.read(None)
        if entry.parsed is not None:
            return self._flags.good(entry.parsed)
        try:
            return self._flags.read(Path(entry.local_path).read_bytes(), FLAGS_FILE)
        except OSError as exc:
            return self._flags.unreadable(entry.sha256.encode(), f"cannot be read ({exc.strerror})", FLAGS_FILE)

    def _snapshot(self, fetched_at: datetime | None = None) -> Snapshot:
        state = self._state
        files: list[SubmissionFile] = []
        signatures: dict[str, tuple] = {}
        for path, entry in sorted(state.files.items()):
            parsed_path = _parse_submission_path(path)
            if not parsed_path:
                continue
            meta_entry = state.files.get(meta_path(path))
            signature = (entry.sha256, meta_entry.sha256 if meta_entry else None)
            signatures[path] = signature
            cached = self._built.get(path)
            if cached is None or cached[0] != (signature, entry.local_path):
                metadata = dict(meta_entry.parsed or {}) if meta_entry else {}
                built = SubmissionFile(path, Path(entry.local_path), *parsed_path, entry.sha256, metadata)
                cached = self._built[path] = ((signature, entry.local_path), built)
            files.append(cached[1])
        previous = self._previous or {}
        changed = [p for p, sig in signatures.items() if previous.get(p) != sig]
        removed = sorted(set(previous) - set(signatures))
        self._previous = signatures
        for gone in set(self._built) - set(signatures):
            del self._built[gone]
        return Snapshot(
            commit=state.commit or "",
            fetched_at=fetched_at or datetime.now(UTC),
            files=files,
            flags=self._flags_in_force(),
            changed=changed,
            removed=removed,
            source=self.source,
        )
