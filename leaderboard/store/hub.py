"""HubStore: submissions in a Hugging Face dataset repo, through huggingface_hub.

Calls used (all repo_type="dataset"): dataset_info (head commit), list_repo_tree
(recursive listing with blob ids), hf_hub_download (into our own cache folder),
create_commit (submission + metadata in one commit, guarded by parent_commit),
create_repo (results repo on first push) and whoami.

Every operation starts with dataset_info: it is the one call huggingface_hub
does not retry with backoff, so a Hub that is down or answering 5xx is
reported at once instead of after ~20 s of retries.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

import httpx2  # huggingface_hub's HTTP library: its exceptions are what a dead network raises
from huggingface_hub import CommitOperationAdd, HfApi, hf_hub_download
from huggingface_hub import constants as hf_constants
from huggingface_hub.errors import (
    EntryNotFoundError,
    HfHubHTTPError,
    OfflineModeIsEnabled,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.hf_api import RepoFile
from huggingface_hub.utils.tqdm import silent_tqdm

from . import hub_http
from .base import Store
from .errors import DuplicateSubmission, StoreError, StoreMisconfigured, StoreUnavailable, redact
from .flags import LastGoodFlags
from .model import (
    FlagsUnreadable,
    Snapshot,
    SubmissionFile,
    decode_metadata,
    encode_metadata,
    read_flags,
    stored_metadata,
)
from .naming import (
    FLAGS_FILE,
    META_SUFFIX,
    RESULTS_DIR,
    SUBMISSIONS_DIR,
    check_component,
    git_blob_oid,
    meta_path,
    normalize_extension,
    parse_submission_path,
    sha256_hex,
    submission_path,
)
from .policy import check_rate
from .pull_state import FileState, PullState, load_pulled_at, remote_key, save_pulled_at

log = logging.getLogger(__name__)

REPO_TYPE = "dataset"
# The commit's parent_commit is no longer the head: someone committed meanwhile.
_CONFLICT_STATUSES = (409, 412)
_COMMIT_ATTEMPTS = 5


def _utcnow() -> datetime:
    return datetime.now(UTC)


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


def _safe_relative(path: str) -> PurePosixPath | None:
    rel = PurePosixPath(path)
    if rel.is_absolute() or any(part in ("", ".", "..") for part in rel.parts):
        return None
    return rel


class HubStore(Store):
    remote = True

    def __init__(
        self,
        repo_id: str,
        token: str | None = None,
        endpoint: str | None = None,
        results_repo: str | None = None,
        cache_dir: Path | str = Path(".cache") / "hub",
        *,
        submissions_per_day: int = 5,
        timeout: float = 30.0,
        revision: str = "main",
        clock: Callable[[], datetime] = _utcnow,
        max_workers: int = 8,
    ):
        self.repo_id = repo_id
        self.results_repo = results_repo
        self.endpoint = (endpoint or hf_constants.ENDPOINT).rstrip("/")
        self.revision = revision
        self.timeout = timeout
        self.submissions_per_day = submissions_per_day
        self.cache_dir = Path(cache_dir)
        self.source = f"hub:{repo_id}"
        self._token = token or None
        self._clock = clock
        self._max_workers = max_workers
        hub_http.install_request_timeout(timeout)
        # token=False when unset: use exactly the configured token, never one lying in ~/.cache.
        self._api = HfApi(
            endpoint=self.endpoint,
            token=self._token or False,
            library_name="open-rag-leaderboard",
        )
        self._downloads = self.cache_dir / "downloads"
        self._state_file = (
            self.cache_dir / "state" / f"{repo_id.replace('/', '--')}.json"
        )
        self._state = PullState.load(self._state_file, repo_id)
        self._flags = LastGoodFlags(
            self.cache_dir / "state" / f"{repo_id.replace('/', '--')}.last-good-flags.json"
        )
        # Results files RESULTS_REPO holds in a bad state: the next push replaces them.
        self._bad_remote_results: set[str] = set()
        # path -> signature at this object's last pull (what `changed` is relative to)
        self._previous: dict[str, tuple] | None = None
        # path -> (signature, SubmissionFile): unchanged files are not rebuilt on every pull
        self._built: dict[str, tuple] = {}
        self._pull_lock = threading.Lock()
        self._write_lock = threading.Lock()

    def __repr__(self) -> str:
        token = "<set>" if self._token else "<none>"  # never the token itself
        return (
            f"HubStore(repo_id={self.repo_id!r}, endpoint={self.endpoint!r}, "
            f"results_repo={self.results_repo!r}, token={token})"
        )

    # ---- error handling ------------------------------------------------------------------

    @contextmanager
    def _hub_errors(self, action: str, repo_id: str | None = None) -> Iterator[None]:
        """Turn whatever the Hub client raises into StoreUnavailable with a safe, short message."""
        repo = repo_id or self.repo_id
        try:
            with hub_http.single_attempt():
                yield
        except StoreError:
            raise
        except RepositoryNotFoundError:
            raise StoreUnavailable(
                f"Hugging Face Hub: dataset repo {repo} not found or not accessible with the configured token "
                f"(while {action})"
            ) from None
        except RevisionNotFoundError:
            raise StoreUnavailable(
                f"Hugging Face Hub: revision {self.revision!r} of {repo} not found (while {action})"
            ) from None
        except HfHubHTTPError as exc:
            status = exc.response.status_code if exc.response is not None else None
            if status in (401, 403):  # a secret to fix, not an outage: never "retry later"
                raise StoreMisconfigured(
                    f"HF_TOKEN rejected by the Hub: check the Space secret (HTTP {status} while {action} {repo})"
                ) from None
            if status is not None and status >= 500:
                reason = f"server error (HTTP {status})"
            else:
                reason = f"HTTP {status}"
            detail = redact(exc.server_message or "", self._token).strip().splitlines()
            if detail:
                reason += f": {detail[0][:200]}"
            raise StoreUnavailable(
                f"Hugging Face Hub unavailable while {action} ({repo}): {reason}"
            ) from None
        except (httpx2.TimeoutException, hub_http.NotResent):
            raise StoreUnavailable(
                f"Hugging Face Hub unavailable while {action} ({repo}): no answer from {self.endpoint} "
                f"within {self.timeout:g} s"
            ) from None
        except (httpx2.HTTPError, OfflineModeIsEnabled, EntryNotFoundError) as exc:
            # ConnectError, RemoteProtocolError, ...; EntryNotFound here is hf_hub_download's
            # "could not reach the Hub and the file is not cached" (LocalEntryNotFoundError).
            raise StoreUnavailable(
                f"Hugging Face Hub unavailable while {action} ({repo}): cannot reach {self.endpoint} "
                f"({type(exc).__name__})"
            ) from None
        except (OSError, ValueError) as exc:
            # Local disk trouble or a malformed answer: still "keep serving the last snapshot".
            raise StoreUnavailable(
                f"store error while {action} ({repo}): {redact(exc, self._token)[:300]}"
            ) from None

    # ---- Hub primitives ------------------------------------------------------------------

    def _head(self, repo_id: str) -> str:
        # expand: only the head sha, not the list of every file the repo holds.
        info = self._api.dataset_info(
            repo_id, revision=self.revision, timeout=self.timeout, expand=["sha"]
        )
        if not info.sha:
            raise StoreUnavailable(f"Hugging Face Hub returned no commit for {repo_id}")
        return info.sha

    def _list_files(
        self, repo_id: str, revision: str, under: str | None = None
    ) -> dict[str, RepoFile]:
        try:
            items = list(
                self._api.list_repo_tree(
                    repo_id,
                    path_in_repo=under,
                    recursive=True,
                    revision=revision,
                    repo_type=REPO_TYPE,
                )
            )
        except EntryNotFoundError:
            return {}  # the folder does not exist yet
        return {item.path: item for item in items if isinstance(item, RepoFile)}

    def _download(self, repo_id: str, path: str, revision: str, force: bool = False) -> Path:
        with hub_http.single_attempt():  # also in the pull's download threads
            return Path(
                hf_hub_download(
                    repo_id,
                    path,
                    repo_type=REPO_TYPE,
                    revision=revision,
                    cache_dir=str(self._downloads),
                    token=self._token or False,
                    endpoint=self.endpoint,
                    etag_timeout=self.timeout,
                    tqdm_class=silent_tqdm,
                    force_download=force,
                )
            )

    # ---- pull ----------------------------------------------------------------------------

    def cached_snapshot(self) -> Snapshot | None:
        with self._pull_lock:
            if not self._state.commit or not all(Path(f.local_path).exists() for f in self._state.files.values()):
                return None
            # Dated by the pull that left it on disk: "data as of" must not become the restart time.
            return self._snapshot(fetched_at=load_pulled_at(self._state_file, self._state.commit))

    def pull(self) -> Snapshot:
        with self._pull_lock, self._hub_errors("pulling submissions"):
            head = self._head(self.repo_id)
            if head != self._state.commit:
                self._sync_state(head)
            snap = self._snapshot()
            self._remember_pull_time(snap)
            return snap

    def _remember_pull_time(self, snap: Snapshot) -> None:
        try:
            save_pulled_at(self._state_file, snap.commit, snap.fetched_at)
        except OSError as exc:  # costs only the date shown after a restart, never the pull
            log.warning("pull time not saved: %s", exc)

    def _sync_state(self, head: str) -> None:
        """Make the pull state match commit `head`, downloading only new or changed files."""
        state = self._state
        tracked, folders = self._current_files(head)
        wanted = [
            p
            for p, (size, key) in tracked.items()
            if not (p in state.files and state.files[p].matches(size, key))
        ]
        log.info(
            "pull %s@%s: %d tracked files, %d to download",
            self.repo_id,
            head[:10],
            len(tracked),
            len(wanted),
        )
        try:
            if len(wanted) > 1:
                with ThreadPoolExecutor(
                    max_workers=min(self._max_workers, len(wanted))
                ) as pool:
                    list(
                        pool.map(
                            lambda p: self._fetch_into_state(p, tracked[p][0], head),
                            wanted,
                        )
                    )
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

    def _current_files(
        self, head: str
    ) -> tuple[dict[str, tuple[int, str]], dict[str, str]]:
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
                    if self._is_tracked(item.path):
                        files[item.path] = (
                            item.size,
                            remote_key(
                                item.blob_id, item.lfs.sha256 if item.lfs else None
                            ),
                        )
                elif item.path == SUBMISSIONS_DIR or item.path.startswith(
                    SUBMISSIONS_DIR + "/"
                ):
                    folders[item.path] = item.tree_id
                    subfolders.append(item)
            return subfolders

        # Folders whose tree id matches the state: their files are taken from it below.
        unchanged: set[str] = set()

        def visit(path: str | None) -> None:
            for folder in take(
                self._api.list_repo_tree(
                    self.repo_id, path_in_repo=path, revision=head, repo_type=REPO_TYPE
                )
            ):
                known = state.folders.get(folder.path)
                if known == folder.tree_id and state.commit is not None:
                    unchanged.add(folder.path)
                elif known is None:
                    take(
                        self._api.list_repo_tree(
                            self.repo_id,
                            path_in_repo=folder.path,
                            recursive=True,
                            revision=head,
                            repo_type=REPO_TYPE,
                        )
                    )
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

    @staticmethod
    def _is_tracked(path: str) -> bool:
        if path == FLAGS_FILE or _parse_submission_path(path):
            return True
        return (
            path.endswith(META_SUFFIX)
            and _parse_submission_path(path[: -len(META_SUFFIX)]) is not None
        )

    def _fetch_into_state(self, path: str, size: int, revision: str) -> None:
        local = self._download(self.repo_id, path, revision)
        if local.stat().st_size != size:
            # The download cache trusts what it holds: a copy damaged on disk is fetched afresh.
            log.warning("cached copy of %s has the wrong size; downloading it again", path)
            local = self._download(self.repo_id, path, revision, force=True)
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

    def notice(self) -> str | None:
        return self._flags.notice()

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
                built = SubmissionFile(
                    path, Path(entry.local_path), *parsed_path, entry.sha256, metadata
                )
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
            fetched_at=fetched_at or _utcnow(),
            files=files,
            flags=self._flags_in_force(),
            changed=changed,
            removed=removed,
            source=self.source,
        )

    # ---- submit --------------------------------------------------------------------------

    def submit(
        self, track: str, user: str, filename_ext: str, data: bytes, metadata: dict
    ) -> SubmissionFile:
        check_component(track, "track")
        check_component(user, "user")
        ext = normalize_extension(filename_ext)
        digest = sha256_hex(data)
        oid = git_blob_oid(data)
        # The lock serialises this process's submitters; parent_commit serialises against
        # everyone else (other replicas, maintainers): a moved head means re-check and retry.
        with self._write_lock, self._hub_errors("submitting"):
            for attempt in range(_COMMIT_ATTEMPTS):
                head = self._head(self.repo_id)
                existing = self._list_files(
                    self.repo_id, head, under=f"{SUBMISSIONS_DIR}/{track}"
                )
                for path, entry in existing.items():
                    if parse_submission_path(path) and (
                        (entry.lfs and entry.lfs.sha256 == digest)
                        or (not entry.lfs and entry.blob_id == oid)
                    ):
                        raise DuplicateSubmission(existing=path, track=track)
                now = self._clock()
                check_rate(existing, track, user, now, self.submissions_per_day)
                path = submission_path(track, user, now, digest, ext)
                meta = stored_metadata(
                    metadata,
                    track=track,
                    user=user,
                    sha256=digest,
                    size=len(data),
                    submitted_at=now,
                )
                meta_bytes = encode_metadata(meta)
                try:
                    self._api.create_commit(
                        self.repo_id,
                        operations=[
                            CommitOperationAdd(path_in_repo=path, path_or_fileobj=data),
                            CommitOperationAdd(
                                path_in_repo=meta_path(path), path_or_fileobj=meta_bytes
                            ),
                        ],
                        commit_message=f"Add {track} submission by {user}",
                        repo_type=REPO_TYPE,
                        revision=self.revision,
                        parent_commit=head,
                    )
                except HfHubHTTPError as exc:
                    status = (
                        exc.response.status_code if exc.response is not None else None
                    )
                    if status in _CONFLICT_STATUSES and attempt + 1 < _COMMIT_ATTEMPTS:
                        log.info(
                            "submit %s: repo moved during commit, retrying (%d)",
                            path,
                            attempt + 1,
                        )
                        continue
                    raise
                except httpx2.TransportError:  # a timeout, a dropped connection
                    # The commit may have gone out with no answer coming back: it may have landed all the same.
                    # Telling the user "failed" then would make them resubmit into a duplicate.
                    if not self._landed(path, digest, oid):
                        raise
                    log.info("submit %s: the Hub's reply was lost, but the commit is in the repo", path)
                break
            local = self._keep_local_copy(path, data)
            local_meta = self._keep_local_copy(meta_path(path), meta_bytes)
        # Seed the pull state: the next pull lists these files but need not download them.
        with self._pull_lock:
            self._state.files[path] = FileState(len(data), oid, digest, str(local))
            self._state.files[meta_path(path)] = FileState(
                len(meta_bytes),
                git_blob_oid(meta_bytes),
                sha256_hex(meta_bytes),
                str(local_meta),
                meta,
            )
        return SubmissionFile(path, local, track, user, digest, meta)

    def _landed(self, path: str, digest: str, oid: str) -> bool:
        """Whether the repo's head now holds `path` with exactly our bytes (after a lost commit reply)."""
        try:
            head = self._head(self.repo_id)
            entry = self._list_files(self.repo_id, head, under=path.rsplit("/", 1)[0]).get(path)
        except (HfHubHTTPError, httpx2.HTTPError, StoreError, OSError, ValueError) as exc:
            log.warning("submit %s: could not check whether the commit landed: %s", path,
                        redact(str(exc), self._token)[:200])
            return False
        if entry is None:
            return False
        return entry.lfs.sha256 == digest if entry.lfs else entry.blob_id == oid

    def _keep_local_copy(self, path: str, data: bytes) -> Path:
        target = self.cache_dir / "submitted" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
        return target

    # ---- flags ---------------------------------------------------------------------------

    def flags(self) -> dict:
        """flags.json at the current head (not necessarily the last pull's)."""
        with self._hub_errors("reading flags"):
            head = self._head(self.repo_id)  # fails fast when the Hub is down
            with self._pull_lock:
                if head == self._state.commit:
                    return self._flags_in_force()
            try:
                local = self._download(self.repo_id, FLAGS_FILE, head)
            except EntryNotFoundError:
                return self._flags.read(None)  # no flags.json: nothing hidden or flagged
            return self._flags.read(local.read_bytes(), FLAGS_FILE)

    # ---- account -------------------------------------------------------------------------

    def ensure_repos(self, private: bool | None = None) -> None:
        """Create the submissions (and results) dataset repos if missing; needs a write token."""
        for repo in filter(None, (self.repo_id, self.results_repo)):
            with self._hub_errors("creating the repo", repo):
                self._api.create_repo(
                    repo, repo_type=REPO_TYPE, private=private, exist_ok=True
                )

    def whoami(self) -> str:
        """The account the configured token belongs to."""
        with self._hub_errors("checking the token"):
            if not self._token:
                raise StoreUnavailable("no HF_TOKEN configured")
            return self._api.whoami()["name"]

    # ---- results cache -------------------------------------------------------------------

    def push_results(self, local_dir: Path) -> int:
        """Upload result files under `local_dir` that RESULTS_REPO lacks, in one commit.

        Result files are named by content hash + metric version, so a name already
        in the repo is never uploaded again.
        """
        if not self.results_repo:
            return 0
        local_dir = Path(local_dir)
        local = (
            {
                f.relative_to(local_dir).as_posix(): f
                for f in sorted(local_dir.rglob("*"))
                if f.is_file()
                and not any(p.startswith(".") for p in f.relative_to(local_dir).parts)
            }
            if local_dir.is_dir()
            else {}
        )
        if not local:
            return 0
        with self._write_lock, self._hub_errors("pushing results", self.results_repo):
            try:
                head = self._head(self.results_repo)
                remote = self._list_files(self.results_repo, head, under=RESULTS_DIR)
            except RepositoryNotFoundError:
                self._api.create_repo(
                    self.results_repo, repo_type=REPO_TYPE, exist_ok=True
                )
                remote = {}
            missing = [
                rel
                for rel in local
                if f"{RESULTS_DIR}/{rel}" not in remote or rel in self._bad_remote_results
            ]
            if not missing:
                return 0
            self._api.create_commit(
                self.results_repo,
                operations=[
                    CommitOperationAdd(
                        path_in_repo=f"{RESULTS_DIR}/{rel}",
                        path_or_fileobj=local[rel].read_bytes(),
                    )
                    for rel in missing
                ],
                commit_message=f"Add {len(missing)} cached result file(s)",
                repo_type=REPO_TYPE,
                revision=self.revision,
            )
            self._bad_remote_results.difference_update(missing)
            return len(missing)

    def pull_results(self, local_dir: Path) -> int:
        """Download result files from RESULTS_REPO that `local_dir` lacks; a missing repo means nothing cached yet.

        Each file is checked before it is installed (scoring.result_file_problem): a
        truncated or mismatched one is skipped and logged, so the board rescores that
        submission, and the next push replaces it in the repo.
        """
        from ..scoring import result_file_problem  # lazily: the store itself never scores

        if not self.results_repo:
            return 0
        local_dir = Path(local_dir)
        with self._hub_errors("pulling results", self.results_repo):
            try:
                head = self._head(self.results_repo)
            except RepositoryNotFoundError:
                return 0
            remote = self._list_files(self.results_repo, head, under=RESULTS_DIR)
            count = 0
            for path in sorted(remote):
                rel = _safe_relative(path[len(RESULTS_DIR) + 1 :])
                if rel is None:
                    continue
                target = local_dir.joinpath(*rel.parts)
                if target.exists():
                    continue
                source = self._download(self.results_repo, path, head)
                problem = result_file_problem(rel.name, source)
                if problem is not None:
                    if rel.as_posix() not in self._bad_remote_results:
                        log.warning("results repo file %s %s; skipped, it will be rescored", path, problem)
                    self._bad_remote_results.add(rel.as_posix())
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
                os.close(fd)
                shutil.copyfile(source, tmp)
                os.replace(tmp, target)
                count += 1
            return count
