"""LocalStore: submissions in a folder (the default: no account, no network).

The folder has the repo layout of naming.py. The bundled demo submissions
(`assets/demo/submissions/<track>/*.json[l][.gz]`) are read-only extra
submissions, listed under the repo path `demo/<track>/<file>` and user "demo",
for the tracks in `demo_tracks` only (those scored against the demo gold the
submissions were made for; None: every track).
"""

from __future__ import annotations

import gc
import hashlib
import os
import tempfile
import threading
import time
from collections.abc import Callable, Collection
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import msgspec

from .base import Store
from .errors import DuplicateSubmission
from .flags import LastGoodFlags
from .model import (
    Snapshot,
    SubmissionFile,
    decode_metadata,
    encode_metadata,
    stored_metadata,
)
from .naming import (
    FLAGS_FILE,
    META_SUFFIX,
    SUBMISSIONS_DIR,
    check_component,
    extension_of,
    meta_path,
    normalize_extension,
    parse_submission_path,
    sha256_hex,
    submission_path,
)
from .policy import check_rate

DEMO_PREFIX = "demo"
DEMO_USER = "demo"


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _atomic_write(target: Path, data: bytes, *, overwrite: bool) -> None:
    """Write via a temp file so readers never see half a file; refuse to overwrite unless asked."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if overwrite:
            os.replace(tmp, target)
        else:
            # Atomic, and fails with FileExistsError: never clobbers a submission.
            os.link(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


HASHES_FILE = ".state/hashes.json"  # outside submissions/: never scanned
HASHES_FORMAT = 2
# How long a directory must have stood unchanged before its signature is recorded: more than the file system's
# timestamp granularity (a clock tick on ext4, xfs, btrfs, tmpfs; a second on the coarsest), so that any later
# change to it gets another mtime/ctime (one made in the tick the signature was taken in could keep it).
SETTLE_NS = 2_000_000_000

_SHA = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]


class _Hashes(msgspec.Struct, forbid_unknown_fields=True):
    """What HASHES_FILE holds: see LocalStore.__init__."""

    format: int
    files: dict[str, tuple[int, int, int, _SHA]]  # file -> (size, mtime_ns, ctime_ns, sha256)
    dirs: dict[str, tuple[tuple[int, int, int], list[str], list[str]]]  # dir -> (signature, files, subdirectories)


_HASHES = msgspec.json.Decoder(_Hashes)


def _load_hashes(path: Path) -> _Hashes:
    """The saved hashes; an unreadable, malformed or older file only costs reading the submissions again."""
    collecting = gc.isenabled()
    gc.disable()  # tens of thousands of small acyclic objects: no need for the cyclic collector to walk them
    try:
        saved = _HASHES.decode(path.read_bytes())
        if saved.format == HASHES_FORMAT:
            return saved
    except (OSError, msgspec.DecodeError, RecursionError):
        pass
    finally:
        if collecting:
            gc.enable()
    return _Hashes(HASHES_FORMAT, {}, {})


def _save_hashes(path: Path, hashes: _Hashes) -> None:
    try:
        _atomic_write(path, msgspec.json.encode(hashes), overwrite=True)
    except OSError:
        pass  # a read-only disk: hashed again next start, nothing wrong


def _signature(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


class LocalStore(Store):
    def __init__(
        self,
        root: Path,
        demo_dir: Path | None = None,
        submissions_per_day: int = 5,
        clock: Callable[[], datetime] = _utcnow,
        demo_tracks: Collection[str] | None = None,
    ):
        self.root = Path(root)
        self.demo_dir = Path(demo_dir) if demo_dir else None
        self.demo_tracks = frozenset(demo_tracks) if demo_tracks is not None else None
        self.submissions_per_day = submissions_per_day
        self.source = f"local:{self.root}"
        self._clock = clock
        self._write_lock = threading.Lock()
        self._pull_lock = threading.Lock()
        # file -> (size, mtime_ns, ctime_ns, sha256), so a pull rehashes only what changed on disk.
        # Persisted (HASHES_FILE), so a restart does not read every submission again: with ctime, which no
        # tool can set back, a file rewritten in place is hashed again whatever its size and mtime say.
        saved = _load_hashes(self.root / HASHES_FILE)
        self._hash_cache: dict[str, tuple] = saved.files  # by str(path): no Path objects
        # A directory of the submissions folder -> (its inode, mtime_ns, ctime_ns; its files; its subdirectories),
        # recorded once it had stood unchanged for SETTLE_NS. While a directory's signature is the recorded one,
        # its files are listed and their hashes taken from the record without a stat per file. Safe because
        # nothing writes into this folder but `submit`, and it never writes a file in place: the metadata is a
        # temp file renamed over, the submission a temp file linked to its (new) name, so every change of a
        # file adds, removes or replaces a directory entry, which changes the directory's mtime and ctime
        # (and ctime cannot be set back by any tool). What is not noticed: a file edited in place by hand, until
        # its directory changes (or HASHES_FILE is deleted). The bundled demo files (a checkout, which git may
        # rewrite in place) keep the per-file check.
        self._dirs: dict[str, tuple] = saved.dirs
        self._walked: set[str] = set()  # the directories the last scans walked (those kept in HASHES_FILE)
        self._hashes_dirty = False
        self._previous: dict[str, tuple] | None = None
        # Outside submissions/ (never scanned): the flags kept in force when flags.json breaks.
        self._flags = LastGoodFlags(self.root / ".state" / "last-good-flags.json")

    def __repr__(self) -> str:
        return f"LocalStore(root={str(self.root)!r}, demo_dir={str(self.demo_dir) if self.demo_dir else None!r})"

    # ---- reading -------------------------------------------------------------------------

    def _sha256(self, file: str | Path, held: bool = False) -> str:
        """`held`: its directory's record holds (see __init__), so a hash taken when it was recorded holds too."""
        cached = self._hash_cache.get(str(file))
        if held and cached is not None:
            return cached[3]
        st = os.stat(file)
        if cached and cached[:3] == (st.st_size, st.st_mtime_ns, st.st_ctime_ns):
            return cached[3]
        h = hashlib.sha256()
        with open(file, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        digest = h.hexdigest()
        self._hash_cache[str(file)] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, digest)
        self._hashes_dirty = True
        return digest

    def _scan(self, track: str | None = None) -> list[tuple[str, str | Path, str, str]]:
        """(repo path, local file, track, user) of every submission, demo ones included."""
        return self._scan_folder(track, record=False)[0]

    def _scan_folder(
        self, track: str | None = None, record: bool = True
    ) -> tuple[list[tuple[str, str | Path, str, str]], set[str], set[str]]:
        """(what `_scan` returns; the files of the submissions folder whose recorded hash holds without a stat;
        every file of that folder). `record`: record the directories listed (only when the caller then checks
        every submission's hash, as `pull` does: a record vouches for the hashes taken after it)."""
        found: list[tuple[str, str | Path, str, str]] = []
        listed: list[tuple[str, str, bool]] = []  # (repo path, local file, its directory's record holds)
        sub_root = self.root / SUBMISSIONS_DIR
        base = sub_root / track if track else sub_root
        if base.is_dir():
            now_ns = time.time_ns() if record else None
            self._walk(str(base), base.relative_to(self.root).as_posix(), listed, now_ns, self._walked)
            for rel, file, _ in sorted(listed):
                parsed = parse_submission_path(rel)
                if parsed:
                    found.append((rel, file, *parsed))  # a str: no Path per file (SubmissionFile.local)
        if self.demo_dir and self.demo_dir.is_dir():
            for file in sorted(self.demo_dir.rglob("*")):
                rel_parts = file.relative_to(self.demo_dir).parts
                if not file.is_file() or len(rel_parts) < 2 or extension_of(file.name) is None:
                    continue
                if any(p.startswith(".") for p in rel_parts) or (track and rel_parts[0] != track):
                    continue
                if self.demo_tracks is not None and rel_parts[0] not in self.demo_tracks:
                    continue  # made for the demo gold, not the gold this track is scored against
                user = rel_parts[1] if len(rel_parts) > 2 else DEMO_USER
                found.append((f"{DEMO_PREFIX}/{'/'.join(rel_parts)}", file, rel_parts[0], user))
        return found, {f for _, f, held in listed if held}, {f for _, f, _ in listed}

    def _walk(self, folder: str, rel: str, out: list[tuple[str, str, bool]], now_ns: int | None, seen: set[str]) -> None:
        """Add (repo path, local file, whether its directory's record holds) of every file under `folder` (repo
        path `rel`) to `out`, and the directories walked to `seen`. A directory whose signature is the recorded
        one is not listed (see __init__); one listed is recorded when settled at `now_ns` (None: not recorded)."""
        seen.add(folder)
        try:
            st = os.stat(folder)
        except OSError:
            return
        signature = _signature(st)
        record = self._dirs.get(folder)
        held = record is not None and tuple(record[0]) == signature
        if held:
            names, subdirs = record[1], record[2]
        else:
            names, subdirs = [], []
            with os.scandir(folder) as listing:
                for entry in listing:
                    if entry.is_dir():
                        subdirs.append(entry.name)
                    elif entry.is_file():
                        names.append(entry.name)
            # Recorded only once settled, so any later change shows; the files' hashes are checked this time.
            if now_ns is not None and max(st.st_mtime_ns, st.st_ctime_ns) < now_ns - SETTLE_NS:
                self._dirs[folder] = (signature, names, subdirs)
            else:
                self._dirs.pop(folder, None)
            self._hashes_dirty = True
        out.extend((f"{rel}/{n}", f"{folder}/{n}", held) for n in names)
        for sub in subdirs:
            self._walk(f"{folder}/{sub}", f"{rel}/{sub}", out, now_ns, seen)

    def _read_flags(self) -> dict:
        flags_file = self.root / FLAGS_FILE
        if not flags_file.is_file():
            return self._flags.read(None)
        try:
            raw = flags_file.read_bytes()
        except OSError as exc:
            return self._flags.unreadable(b"", f"cannot be read ({exc.strerror})", FLAGS_FILE)
        return self._flags.read(raw, FLAGS_FILE)

    def flags(self) -> dict:
        return self._read_flags()

    def notice(self) -> str | None:
        return self._flags.notice()

    def pull(self) -> Snapshot:
        with self._pull_lock:
            files: list[SubmissionFile] = []
            signatures: dict[str, tuple] = {}
            self._walked = set()
            found, held, present = self._scan_folder()
            for rel, file, track, user in found:
                name = str(file)
                meta_name = name + META_SUFFIX
                metadata: dict = {}
                meta_sig: tuple = ()
                if meta_name in present if name in present else os.path.isfile(meta_name):  # demo files: not listed
                    raw = Path(meta_name).read_bytes()
                    metadata = decode_metadata(raw, rel + META_SUFFIX)
                    meta_sig = (hashlib.sha256(raw).hexdigest(),)
                digest = self._sha256(file, name in held)
                signatures[rel] = (digest, *meta_sig)
                files.append(SubmissionFile(rel, file, track, user, digest, metadata))
            flags = self._read_flags()
            commit_hash = hashlib.sha1(repr((sorted(signatures.items()), sorted(flags.items()))).encode())
            previous = self._previous or {}
            changed = [p for p, sig in signatures.items() if previous.get(p) != sig]
            removed = sorted(set(previous) - set(signatures))
            self._previous = signatures
            if self._hashes_dirty:
                self._hashes_dirty = False
                kept = (str(f) for _, f, _, _ in found)
                hashes = {f: self._hash_cache[f] for f in kept if f in self._hash_cache}
                dirs = dict(self._dirs)  # one copy: a submit may record a directory meanwhile
                dirs = {d: r for d, r in dirs.items() if d in self._walked}
                _save_hashes(self.root / HASHES_FILE, _Hashes(HASHES_FORMAT, hashes, dirs))
            return Snapshot(
                commit=f"local-{commit_hash.hexdigest()[:12]}",
                fetched_at=_utcnow(),
                files=files,
                flags=flags,
                changed=changed,
                removed=removed,
                source=self.source,
            )

    # ---- writing -------------------------------------------------------------------------

    def submit(self, track: str, user: str, filename_ext: str, data: bytes, metadata: dict) -> SubmissionFile:
        check_component(track, "track")
        check_component(user, "user")
        ext = normalize_extension(filename_ext)
        digest = sha256_hex(data)
        with self._write_lock:
            existing = self._scan(track)
            for rel, file, _, _ in existing:
                if os.stat(file).st_size == len(data) and self._sha256(file) == digest:
                    raise DuplicateSubmission(existing=rel, track=track)
            now = self._clock()
            check_rate(
                (rel for rel, *_ in existing),
                track,
                user,
                now,
                self.submissions_per_day,
            )
            rel = submission_path(track, user, now, digest, ext)
            meta = stored_metadata(
                metadata,
                track=track,
                user=user,
                sha256=digest,
                size=len(data),
                submitted_at=now,
            )
            target = self.root / rel
            # Metadata first: a pull that sees the submission always sees its metadata too.
            _atomic_write(self.root / meta_path(rel), encode_metadata(meta), overwrite=True)
            _atomic_write(target, data, overwrite=False)
        return SubmissionFile(rel, target, track, user, digest, meta)
