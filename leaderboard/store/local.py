"""LocalStore: submissions in a folder (the default: no account, no network).

The folder has the repo layout of naming.py. The bundled demo submissions
(`assets/demo/submissions/<track>/*.json[l][.gz]`) are read-only extra
submissions, listed under the repo path `demo/<track>/<file>` and user "demo",
for the tracks in `demo_tracks` only (those scored against the demo gold the
submissions were made for; None: every track).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Callable, Collection
from datetime import UTC, datetime
from pathlib import Path

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


def _load_hashes(path: Path) -> dict[str, tuple]:
    """The saved hashes; an unreadable or malformed file only costs reading the submissions again."""
    try:
        raw = json.loads(path.read_bytes())
        return {
            name: tuple(entry)
            for name, entry in raw.items()
            if isinstance(entry, list)
            and len(entry) == 4
            and all(type(v) is int for v in entry[:3])
            and isinstance(entry[3], str)
            and len(entry[3]) == 64
        }
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, RecursionError, AttributeError):
        return {}


def _save_hashes(path: Path, hashes: dict[str, tuple]) -> None:
    try:
        _atomic_write(path, json.dumps({f: list(v) for f, v in hashes.items()}).encode(), overwrite=True)
    except OSError:
        pass  # a read-only disk: hashed again next start, nothing wrong


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
        # file -> (size, mtime_ns, sha256), so a pull rehashes only what changed on disk.
        # Persisted (HASHES_FILE), so a restart does not read every submission again: with ctime, which no
        # tool can set back, a file rewritten in place is hashed again whatever its size and mtime say.
        self._hash_cache: dict[str, tuple] = _load_hashes(self.root / HASHES_FILE)  # by str(path): no Path objects
        self._hashes_dirty = False
        self._previous: dict[str, tuple] | None = None
        # Outside submissions/ (never scanned): the flags kept in force when flags.json breaks.
        self._flags = LastGoodFlags(self.root / ".state" / "last-good-flags.json")

    def __repr__(self) -> str:
        return f"LocalStore(root={str(self.root)!r}, demo_dir={str(self.demo_dir) if self.demo_dir else None!r})"

    # ---- reading -------------------------------------------------------------------------

    def _sha256(self, file: Path) -> str:
        st = file.stat()
        cached = self._hash_cache.get(str(file))
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

    def _scan(self, track: str | None = None) -> list[tuple[str, Path, str, str]]:
        """(repo path, local file, track, user) of every submission, demo ones included."""
        found: list[tuple[str, Path, str, str]] = []
        sub_root = self.root / SUBMISSIONS_DIR
        base = sub_root / track if track else sub_root
        if base.is_dir():
            for file in sorted(base.rglob("*")):
                if not file.is_file():
                    continue
                rel = file.relative_to(self.root).as_posix()
                parsed = parse_submission_path(rel)
                if parsed:
                    found.append((rel, file, *parsed))
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
        return found

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
            found = self._scan()
            for rel, file, track, user in found:
                meta_file = file.with_name(file.name + META_SUFFIX)
                metadata: dict = {}
                meta_sig: tuple = ()
                if meta_file.is_file():
                    raw = meta_file.read_bytes()
                    metadata = decode_metadata(raw, rel + META_SUFFIX)
                    meta_sig = (hashlib.sha256(raw).hexdigest(),)
                digest = self._sha256(file)
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
                _save_hashes(self.root / HASHES_FILE, {f: self._hash_cache[f] for f in kept if f in self._hash_cache})
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
                if file.stat().st_size == len(data) and self._sha256(file) == digest:
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
