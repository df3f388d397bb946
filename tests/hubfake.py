"""A fake Hugging Face Hub for tests: a real HTTP server on 127.0.0.1 speaking the Hub's protocol.

It implements exactly the calls the store makes through `huggingface_hub`
(checked against huggingface_hub 2.4.0):

    GET  /api/whoami-v2                           (also what Gradio's mocked local login asks for)
    GET  /.well-known/openid-configuration        (the OAuth provider metadata a Space's login redirects with)
    POST /api/repos/create
    GET  /api/{type}s/{repo}                      (repo info, with the head commit "sha")
    GET  /api/{type}s/{repo}/revision/{rev}
    GET  /api/{type}s/{repo}/tree/{rev}[/{path}]  (?recursive, cursor pagination via Link header)
    GET  /api/{type}s/{repo}/commits/{rev}        (history, newest first: ?limit per page, ?p, Link header)
    POST /api/{type}s/{repo}/preupload/{rev}      (every file is "regular": no LFS)
    POST /api/{type}s/{repo}/commit/{rev}         (NDJSON: header, file base64, deletedFile, deletedFolder)
    HEAD/GET /[{type}s/]{repo}/resolve/{rev}/{path}  (ETag, X-Repo-Commit, Content-Length)

and pull requests as the Hub speaks them (a revision may be `refs/pr/<n>`, URL-encoded, or a PR commit's sha):

    POST /api/{type}s/{repo}/commit/main?create_pr=1     (opens a pull request holding the commit)
    POST /api/{type}s/{repo}/commit/refs%2Fpr%2F{n}      (adds a commit; a draft becomes open)
    GET  /api/{type}s/{repo}/refs?include_prs=1
    GET|POST /api/{type}s/{repo}/discussions             (list: ?type, ?status, ?author, page ?p of 50; create)
    GET  /api/{type}s/{repo}/discussions/{n}[?diff=1]    (events, changes.base, filesWithConflicts, git diff)
    POST /api/{type}s/{repo}/discussions/{n}/comment|status|merge

Data lives in memory; every commit gets a new sha and is applied atomically
under one lock (concurrent commits both land; a stale `parentCommit` gets 412
as on the Hub). Tests can switch the server `down()` (listening socket closed:
connection refused), make it answer errors (`fail(500)`), answer slowly
(`slow(seconds)`), or do the work of a request and lose its reply
(`lose_replies("/commit/")`: dropped, or sent only after a delay), run a test's
action when a request arrives, before it is answered (`on_request("/resolve/",
push)`: a push that lands exactly between a client's two calls), cut pull-request
diffs at a size as the Hub does (`diff_limit`), and count the requests it received.

    with running_hub(tokens={"hf_...": "alice"}) as hub:
        hub.create_repo("org/subs")
        hub.commit("org/subs", {"submissions/unidoc/bob/a.jsonl": b"..."})  # a maintainer's direct push
        HubStore("org/subs", token="hf_...", endpoint=hub.url, ...)
"""

from __future__ import annotations

import base64
import bisect
import difflib
import hashlib
import html
import itertools
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlsplit

REPO_TYPES = {"models": "model", "datasets": "dataset", "spaces": "space"}


def git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Commit:
    sha: str
    parent: str | None
    message: str
    files: dict[str, str]  # path -> blob oid
    date: str = field(default_factory=_now_iso)


@dataclass
class Repo:
    repo_id: str
    repo_type: str
    private: bool = False
    commits: list[Commit] = field(default_factory=list)
    created_at: str = field(default_factory=_now_iso)
    # Discussions and pull requests share one numbering, as on the Hub (see PullRequest).
    discussions: dict[int, PullRequest] = field(default_factory=dict)

    @property
    def head(self) -> Commit:
        return self.commits[-1]

    def resolve(self, revision: str) -> Commit | None:
        if revision in ("main", "refs/heads/main"):
            return self.head
        if revision.startswith("refs/pr/"):
            return self.resolve_pr_ref(revision)
        if len(revision) >= 7:
            for commit in reversed(self.commits):
                if commit.sha.startswith(revision):
                    return commit
            return self.resolve_pr_commit(revision)
        return None

    def resolve_pr_ref(self, revision: str) -> Commit | None:
        """The head of `refs/pr/<n>` (its base commit while a draft has no commit of its own)."""
        num = revision.removeprefix("refs/pr/")
        pr = self.discussions.get(int(num)) if num.isdigit() else None
        return pr.head(self) if pr is not None and pr.is_pull_request else None

    def commit_by_sha(self, sha: str) -> Commit | None:
        """Any commit of the repo, on main or on a pull request's branch."""
        for commit in self.commits:
            if commit.sha == sha:
                return commit
        for pr in self.discussions.values():
            for commit in pr.commits:
                if commit.sha == sha:
                    return commit
        return None

    def resolve_pr_commit(self, prefix: str) -> Commit | None:
        for pr in self.discussions.values():
            for commit in pr.commits:
                if commit.sha.startswith(prefix):
                    return commit
        return None


@dataclass
class PullRequest:
    """A discussion, or a pull request with its own commits on `refs/pr/<num>` (the Hub's model)."""

    num: int
    title: str
    author: str
    is_pull_request: bool
    base: str  # sha of the main commit it was opened from
    status: str = "open"  # "draft" (a PR opened without a commit yet) | "open" | "closed" | "merged"
    commits: list[Commit] = field(default_factory=list)  # its own, oldest first
    events: list[dict] = field(default_factory=list)  # as the details route returns them
    created_at: str = field(default_factory=_now_iso)
    merge_commit: str | None = None

    def head(self, repo: Repo) -> Commit:
        return self.commits[-1] if self.commits else next(c for c in repo.commits if c.sha == self.base)


def _comment_data(text: str) -> dict:
    now = _now_iso()
    return {
        "edited": False,
        "hidden": False,
        "latest": {"raw": text, "html": html.escape(text), "updatedAt": now, "author": {"name": "?"}},
        "history": [],
    }


class HubError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        code: str | None = None,
        headers: dict | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = headers or {}


class FakeHub:
    """The Hub's state plus the switches tests flip. Start it with `start()` or `running_hub()`."""

    def __init__(self, tokens: dict[str, str] | None = None, page_size: int = 1000):
        self.tokens = dict(tokens or {})  # token -> user name
        self.page_size = page_size
        self.repos: dict[tuple[str, str], Repo] = {}
        self.blobs: dict[str, bytes] = {}
        self.lock = threading.RLock()  # guards repos/blobs: commits are atomic
        self.requests: list[tuple[str, str]] = []  # (method, path without query)
        self.mode = "ok"  # "ok" | "error" | "down"
        self.error_status = 500
        self.delay = 0.0
        self.delay_path: str | None = None
        # hold(): requests wait here until ok() (or `held_max` seconds), an answer as late as a test needs
        self.released = threading.Event()
        self.released.set()
        self.held_max = 0.0
        # Requests whose path contains this are carried out, but their reply is lost (see lose_replies).
        self.lost_reply_path: str | None = None
        self.lost_reply_delay: float | None = None  # None: drop the connection instead of answering
        # Simulates a misbehaving server or proxy that echoes the request's Authorization
        # header in its error messages: the client side must still never show the token.
        self.echo_auth = False
        # on_request(): (path part, method or None, action) run once when a matching request arrives
        self._on_request: list[tuple[str, str | None, object]] = []
        # The Hub cuts a large pull-request diff and says so at its end; None: never cut.
        self.diff_limit: int | None = None
        self.port: int | None = None
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[socket.socket] = set()
        self._sha_counter = itertools.count(1)
        self._indexes: dict[str, dict] = {}  # commit sha -> listing index (see _index)

    # ---- lifecycle ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, port: int = 0) -> FakeHub:
        hub = self

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            allow_reuse_address = True

            def process_request(self, request, client_address):
                with hub.lock:
                    hub._connections.add(request)
                super().process_request(request, client_address)

            def shutdown_request(self, request):
                with hub.lock:
                    hub._connections.discard(request)
                super().shutdown_request(request)

        handler = type("FakeHubHandler", (_Handler,), {"hub": self})
        self._server = Server(("127.0.0.1", port or self.port or 0), handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            daemon=True,
        )
        self._thread.start()
        self.mode = "ok"
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        with self.lock:
            conns, self._connections = list(self._connections), set()
        for conn in conns:  # kept-alive connections too: "down" means nothing answers
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                conn.close()
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    # ---- failure switches --------------------------------------------------------------------

    def down(self) -> None:
        """Stop listening: clients get 'connection refused' until `up()`."""
        self.stop()
        self.mode = "down"

    def up(self) -> None:
        """Listen again on the same port, answering normally."""
        if self._server is None:
            self.start(self.port or 0)
        self.mode = "ok"
        self.delay = 0.0
        self.lost_reply_path = None

    def fail(self, status: int = 500) -> None:
        """Answer every request with `status` (and a Hub-like JSON error) until `ok()`."""
        self.error_status = status
        self.mode = "error"

    def slow(self, seconds: float, path_contains: str | None = None) -> None:
        """Wait `seconds` before answering (only paths containing `path_contains`, if given)."""
        self.delay = seconds
        self.delay_path = path_contains

    def lose_replies(self, path_contains: str, delay: float | None = None) -> None:
        """Carry out matching requests (a commit lands) but lose the answer, until `ok()`.

        delay=None: close the connection without a reply; else send it only after `delay` seconds
        (longer than the client's timeout: the client has given up by then).
        """
        self.lost_reply_path = path_contains
        self.lost_reply_delay = delay

    def on_request(self, path_contains: str, action, method: str | None = None) -> None:
        """Run `action()` once, when the next request whose path contains `path_contains` arrives (before answering it)."""
        with self.lock:
            self._on_request.append((path_contains, method, action))

    def hold(self, at_most: float = 60.0) -> None:
        """Keep every request waiting until `ok()` (or `at_most` seconds): a pull that is surely still running."""
        self.held_max = at_most
        self.released.clear()

    def ok(self) -> None:
        self.mode = "ok"
        self.released.set()
        self.delay = 0.0
        self.lost_reply_path = None
        with self.lock:
            self._on_request.clear()

    # ---- request log ---------------------------------------------------------------------------

    def count(self, method: str | None = None, path_contains: str | None = None) -> int:
        with self.lock:
            return sum(
                1 for m, p in self.requests if (method is None or m == method) and (path_contains is None or path_contains in p)
            )

    def downloads(self) -> list[str]:
        """Paths of files sent by GET .../resolve/... (one per file actually downloaded)."""
        with self.lock:
            return [
                unquote(p.split("/resolve/", 1)[1].split("/", 1)[1]) for m, p in self.requests if m == "GET" and "/resolve/" in p
            ]

    def reset_counts(self) -> None:
        with self.lock:
            self.requests.clear()

    # ---- direct state access (what a maintainer's git push or a merged PR does) ----------------

    def create_repo(
        self,
        repo_id: str,
        repo_type: str = "dataset",
        private: bool = False,
        exist_ok: bool = False,
    ) -> Repo:
        with self.lock:
            key = (repo_type, repo_id)
            if key in self.repos:
                if exist_ok:
                    return self.repos[key]
                raise HubError(409, "You already created this dataset repo")
            repo = Repo(repo_id, repo_type, private)
            gitattributes = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"
            self.repos[key] = repo
            self._apply(repo, {".gitattributes": gitattributes}, [], "initial commit", None)
            return repo

    def commit(
        self,
        repo_id: str,
        files: dict[str, bytes],
        message: str = "direct push",
        deletes: list[str] | None = None,
        repo_type: str = "dataset",
    ) -> str:
        """Apply a commit directly (no HTTP): returns the new head sha."""
        with self.lock:
            repo = self._repo(repo_type, repo_id)
            return self._apply(repo, files, deletes or [], message, None).sha

    def files(self, repo_id: str, repo_type: str = "dataset") -> dict[str, bytes]:
        with self.lock:
            repo = self._repo(repo_type, repo_id)
            return {p: self.blobs[o] for p, o in repo.head.files.items()}

    def head(self, repo_id: str, repo_type: str = "dataset") -> str:
        with self.lock:
            return self._repo(repo_type, repo_id).head.sha

    def commits(self, repo_id: str, repo_type: str = "dataset") -> list[Commit]:
        with self.lock:
            return list(self._repo(repo_type, repo_id).commits)

    # ---- pull requests and discussions (what the Hub's community tab holds) --------------------

    discussions_page_size = 50  # the Hub's page of GET .../discussions

    def open_discussion(
        self,
        repo_id: str,
        author: str,
        title: str,
        *,
        pull_request: bool = True,
        description: str = "",
        parent_commit: str | None = None,
        repo_type: str = "dataset",
    ) -> PullRequest:
        """A new discussion or pull request; a pull request opened without a commit is a draft, as on the Hub."""
        with self.lock:
            repo = self._repo(repo_type, repo_id)
            base = repo.resolve(parent_commit) if parent_commit else repo.head
            if base is None:
                raise HubError(404, f"Invalid rev id: {parent_commit}", "RevisionNotFound")
            num = max(repo.discussions, default=0) + 1
            pr = PullRequest(num, title, author, pull_request, base.sha, status="draft" if pull_request else "open")
            repo.discussions[num] = pr
            if description:
                self._add_event(pr, "comment", author, _comment_data(description))
            return pr

    def commit_to_pull_request(
        self,
        repo_id: str,
        num: int,
        files: dict[str, bytes],
        deletes: list[str] | None = None,
        message: str = "Upload files",
        author: str | None = None,
        parent_commit: str | None = None,
        repo_type: str = "dataset",
    ) -> Commit:
        """A commit on `refs/pr/<num>` (opens a draft); `parent_commit` must then be the PR's head."""
        with self.lock:
            repo = self._repo(repo_type, repo_id)
            pr = self.pull_request(repo_id, num, repo_type)
            if pr.status not in ("open", "draft"):
                raise HubError(403, f"Pull request #{num} is {pr.status}: no commit can be pushed to it")
            head = pr.head(repo)
            if parent_commit is not None and not head.sha.startswith(parent_commit):
                raise HubError(412, "A commit has happened since. Please refresh and try again.")
            commit = self._new_commit(repo, head, files, deletes or [], message)
            pr.commits.append(commit)
            pr.status = "open"
            self._add_event(pr, "commit", author or pr.author, {"subject": message, "oid": commit.sha})
            return commit

    def open_pull_request(
        self,
        repo_id: str,
        author: str,
        files: dict[str, bytes],
        deletes: list[str] | None = None,
        message: str = "Upload files",
        repo_type: str = "dataset",
    ) -> int:
        """What `create_commit(create_pr=True)` does, without HTTP: a pull request with one commit. Returns its number."""
        with self.lock:
            pr = self.open_discussion(repo_id, author, message, repo_type=repo_type)
            self.commit_to_pull_request(repo_id, pr.num, files, deletes, message, author, repo_type=repo_type)
            return pr.num

    def pull_request(self, repo_id: str, num: int, repo_type: str = "dataset") -> PullRequest:
        with self.lock:
            pr = self._repo(repo_type, repo_id).discussions.get(num)
            if pr is None:
                raise HubError(404, "Discussion not found", "DiscussionNotFound")
            return pr

    def comments(self, repo_id: str, num: int, repo_type: str = "dataset") -> list[tuple[str, str]]:
        """(author, text) of every comment on a discussion, oldest first."""
        with self.lock:
            pr = self.pull_request(repo_id, num, repo_type)
            return [(e["author"]["name"], e["data"]["latest"]["raw"]) for e in pr.events if e["type"] == "comment"]

    def comment(self, repo_id: str, num: int, author: str, text: str, repo_type: str = "dataset") -> dict:
        with self.lock:
            return self._add_event(self.pull_request(repo_id, num, repo_type), "comment", author, _comment_data(text))

    def set_status(
        self, repo_id: str, num: int, status: str, author: str, comment: str | None = None, repo_type: str = "dataset"
    ) -> dict:
        with self.lock:
            pr = self.pull_request(repo_id, num, repo_type)
            if pr.status == "merged":
                raise HubError(403, "A merged pull request cannot change status")
            if comment:
                self._add_event(pr, "comment", author, _comment_data(comment))
            pr.status = status
            return self._add_event(pr, "status-change", author, {"status": status})

    def merge(self, repo_id: str, num: int, author: str, comment: str | None = None, repo_type: str = "dataset") -> Commit:
        """Apply the pull request's changes (relative to its base) on main; a file main changed since conflicts (409)."""
        with self.lock:
            repo = self._repo(repo_type, repo_id)
            pr = self.pull_request(repo_id, num, repo_type)
            if not pr.is_pull_request or pr.status != "open":
                raise HubError(403, f"#{num} is not an open pull request")
            base = repo.resolve(pr.base)
            changes = self.pr_changes(repo, pr)
            conflicts = [p for p in changes if repo.head.files.get(p) != base.files.get(p)]
            if conflicts:
                raise HubError(409, f"Merge conflicts in: {', '.join(sorted(conflicts))}")
            added = {p: self.blobs[new] for p, (_, new) in changes.items() if new is not None}
            removed = [p for p, (_, new) in changes.items() if new is None]
            commit = self._apply(repo, added, removed, f"Merge pull request #{num}: {pr.title}", None)
            if comment:
                self._add_event(pr, "comment", author, _comment_data(comment))
            pr.status, pr.merge_commit = "merged", commit.sha
            self._add_event(pr, "status-change", author, {"status": "merged"})
            return commit

    def pr_changes(self, repo: Repo, pr: PullRequest) -> dict[str, tuple[str | None, str | None]]:
        """path -> (blob at the base, blob at the head); None where the file does not exist."""
        base, head = repo.resolve(pr.base).files, pr.head(repo).files
        return {p: (base.get(p), head.get(p)) for p in sorted(set(base) | set(head)) if base.get(p) != head.get(p)}

    def pr_diff(self, repo: Repo, pr: PullRequest) -> str:
        """The pull request's changes as a git diff (headers; hunks for small text files), as the Hub's `diff=1`."""
        out = []
        for path, (old, new) in self.pr_changes(repo, pr).items():
            out.append(f"diff --git a/{path} b/{path}")
            if old is None:
                out += ["new file mode 100644", f"index 0000000..{new[:7]}", "--- /dev/null", f"+++ b/{path}"]
            elif new is None:
                out += ["deleted file mode 100644", f"index {old[:7]}..0000000", f"--- a/{path}", "+++ /dev/null"]
            else:
                out += [f"index {old[:7]}..{new[:7]} 100644", f"--- a/{path}", f"+++ b/{path}"]
            before, after = (self.blobs[o] if o else b"" for o in (old, new))
            if len(before) + len(after) > 64 * 1024 or b"\0" in before + after:
                out.append("Binary files differ")
                continue
            hunk = difflib.unified_diff(
                before.decode("utf-8", "replace").splitlines(), after.decode("utf-8", "replace").splitlines(), lineterm="", n=0
            )
            out += [line for line in hunk if not line.startswith(("---", "+++"))]
        diff = "\n".join(out) + "\n" if out else ""
        if self.diff_limit is not None and len(diff) > self.diff_limit:  # as the Hub: the rest is not sent
            diff = diff[: self.diff_limit] + f"\n... (diff truncated, {len(diff):,} bytes)\n"
        return diff

    def _add_event(self, pr: PullRequest, kind: str, author: str, data: dict) -> dict:
        event = {
            "id": hashlib.sha1(f"{pr.num}:{len(pr.events)}:{time.time_ns()}".encode()).hexdigest()[:24],
            "type": kind,
            "createdAt": _now_iso(),
            "author": {"name": author, "type": "user"},
            "data": data,
        }
        pr.events.append(event)
        return event

    # ---- internals -----------------------------------------------------------------------------

    def _repo(self, repo_type: str, repo_id: str) -> Repo:
        repo = self.repos.get((repo_type, repo_id))
        if repo is None:
            raise HubError(404, "Repository not found", "RepoNotFound")
        return repo

    def _index(self, commit: Commit) -> dict:
        """Listing index of a commit, built once (at commit time): entries, children per folder, sorted paths.

        Folder ids are content hashes like git tree ids: unchanged content, unchanged id.
        """
        with self.lock:
            index = self._indexes.get(commit.sha)
            if index is not None:
                return index
            hashers: dict[str, hashlib._Hash] = {}
            for path in sorted(commit.files):
                parts = path.split("/")
                for i in range(1, len(parts)):
                    rest = "/".join(parts[i:])
                    hashers.setdefault("/".join(parts[:i]), hashlib.sha1()).update(f"{rest}\0{commit.files[path]}\n".encode())
            entries = {f: {"type": "directory", "oid": h.hexdigest(), "size": 0, "path": f} for f, h in hashers.items()}
            for path, oid in commit.files.items():
                entries[path] = {
                    "type": "file",
                    "oid": oid,
                    "size": len(self.blobs[oid]),
                    "path": path,
                }
            ordered = sorted(entries)
            children: dict[str, list[str]] = {"": []}
            for path in ordered:
                children.setdefault(path.rsplit("/", 1)[0] if "/" in path else "", []).append(path)
            index = self._indexes[commit.sha] = {
                "entries": entries,
                "ordered": ordered,
                "children": children,
            }
            return index

    def _apply(
        self,
        repo: Repo,
        files: dict[str, bytes],
        deletes: list[str],
        message: str,
        parent_commit: str | None,
    ) -> Commit:
        with self.lock:
            head = repo.commits[-1] if repo.commits else None
            if parent_commit is not None and (head is None or head.sha != parent_commit):
                raise HubError(412, "A commit has happened since. Please refresh and try again.")
            commit = self._new_commit(repo, head, files, deletes, message)
            repo.commits.append(commit)
            return commit

    def _new_commit(self, repo: Repo, head: Commit | None, files: dict[str, bytes], deletes: list[str], message: str) -> Commit:
        """A commit on top of `head` (not attached to any ref yet), its listing index built."""
        with self.lock:
            tree = dict(head.files) if head else {}
            for path in deletes:
                if path.endswith("/"):
                    for p in [p for p in tree if p.startswith(path)]:
                        del tree[p]
                elif path in tree:
                    del tree[path]
                else:
                    raise HubError(
                        404,
                        f"A file with this name doesn't exist: {path}",
                        "EntryNotFound",
                    )
            for path, data in files.items():
                oid = git_blob_oid(data)
                self.blobs[oid] = data
                tree[path] = oid
            seed = f"{repo.repo_id}:{next(self._sha_counter)}:{time.time_ns()}:{message}".encode()
            commit = Commit(
                hashlib.sha1(seed).hexdigest(),
                head.sha if head else None,
                message,
                tree,
            )
            # Pay the listing index at commit time, as a real server would.
            self._index(commit)
            return commit


class _Handler(BaseHTTPRequestHandler):
    hub: FakeHub
    protocol_version = "HTTP/1.1"  # keep-alive, as the real Hub
    # Headers and body go out in two writes: avoid 40 ms delayed-ACK stalls.
    disable_nagle_algorithm = True

    def log_message(self, format, *args):
        pass

    # ---- plumbing ------------------------------------------------------------------------------

    def do_GET(self):
        self._dispatch("GET")

    def do_HEAD(self):
        self._dispatch("HEAD")

    def do_POST(self):
        self._dispatch("POST")

    def _send(
        self,
        status: int,
        body: bytes = b"",
        headers: dict | None = None,
        content_type: str = "application/json",
    ):
        lost = self.hub.lost_reply_path
        if lost is not None and lost in urlsplit(self.path).path:
            if self.hub.lost_reply_delay is None:
                self.close_connection = True  # the work is done; the client sees the connection close
                return
            time.sleep(self.hub.lost_reply_delay)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, payload, headers: dict | None = None):
        self._send(status, json.dumps(payload).encode(), headers)

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _user(self) -> str | None:
        """The token's user; raises 401 for a token the Hub does not know (as the Hub does)."""
        auth = self.headers.get("Authorization") or ""
        if not auth:
            return None
        token = auth.split(" ", 1)[1] if " " in auth else auth
        user = self.hub.tokens.get(token)
        if user is None:
            raise HubError(401, "Invalid credentials in Authorization header")
        return user

    def _require_user(self) -> str:
        user = self._user()
        if user is None:
            raise HubError(401, "You must be authenticated to do this")
        return user

    def _readable_repo(self, repo_type: str, repo_id: str) -> Repo:
        user = self._user()
        repo = self.hub._repo(repo_type, repo_id)
        if repo.private and user is None:
            raise HubError(401, "Repository not found", "RepoNotFound")
        return repo

    def _dispatch(self, method: str):
        hub = self.hub
        split = urlsplit(self.path)
        path, query = split.path, parse_qs(split.query)
        with hub.lock:
            hub.requests.append((method, path))
            hooks = [h for h in hub._on_request if h[0] in path and h[1] in (None, method)][:1]
            for hook in hooks:
                hub._on_request.remove(hook)
        for _, _, action in hooks:  # outside the lock: the action may commit
            action()
        if method == "POST":
            body = self._body()  # read before answering so the connection stays usable
        else:
            body = b""
        if not hub.released.is_set():
            hub.released.wait(hub.held_max)
        if hub.delay and (hub.delay_path is None or hub.delay_path in path):
            time.sleep(hub.delay)
        echo = f" (request had Authorization: {self.headers.get('Authorization')})" if hub.echo_auth else ""
        if hub.mode == "error":
            return self._json(
                hub.error_status,
                {"error": "Internal Error - We're working hard to fix this as soon as possible!" + echo},
            )
        try:
            self._route(method, path, query, body)
        except HubError as err:
            headers = dict(err.headers)
            if err.code:
                headers["X-Error-Code"] = err.code
            headers["X-Error-Message"] = err.message + echo
            self._json(err.status, {"error": err.message + echo}, headers)
        except (BrokenPipeError, ConnectionResetError):
            pass

    # ---- routes --------------------------------------------------------------------------------

    def _route(self, method: str, path: str, query: dict, body: bytes):
        parts = path.strip("/").split("/")
        if path == "/api/whoami-v2" and method == "GET":
            return self._whoami()
        if path == "/.well-known/openid-configuration" and method == "GET":
            return self._openid_configuration()
        if path == "/api/repos/create" and method == "POST":
            return self._create_repo(body)
        if path == "/api/validate-yaml" and method == "POST":
            return self._validate_yaml(body)
        if len(parts) >= 4 and parts[0] == "api" and parts[1] in REPO_TYPES:
            repo_type = REPO_TYPES[parts[1]]
            repo_id = f"{unquote(parts[2])}/{unquote(parts[3])}"
            rest = parts[4:]
            if not rest and method == "GET":
                return self._repo_info(repo_type, repo_id, "main", query.get("expand"))
            if len(rest) == 2 and rest[0] == "revision" and method == "GET":
                return self._repo_info(repo_type, repo_id, unquote(rest[1]), query.get("expand"))
            if len(rest) >= 2 and rest[0] == "tree" and method == "GET":
                sub = unquote("/".join(rest[2:])) if len(rest) > 2 else ""
                return self._tree(repo_type, repo_id, unquote(rest[1]), sub, query)
            if len(rest) == 2 and rest[0] == "commits" and method == "GET":
                return self._commits(repo_type, repo_id, unquote(rest[1]), query)
            if len(rest) == 2 and rest[0] == "preupload" and method == "POST":
                return self._preupload(repo_type, repo_id, unquote(rest[1]), body)
            if len(rest) == 2 and rest[0] == "commit" and method == "POST":
                return self._commit(repo_type, repo_id, unquote(rest[1]), body, query)
            if rest and rest[0] in ("discussions", "refs"):
                return self._community(method, repo_type, repo_id, rest, query, body)
        # /[datasets|spaces/]{ns}/{name}/resolve/{rev}/{path}
        if method in ("GET", "HEAD"):
            offset = 1 if parts[0] in ("datasets", "spaces") else 0
            repo_type = "dataset" if parts[0] == "datasets" else "space" if parts[0] == "spaces" else "model"
            if len(parts) >= offset + 5 and parts[offset + 2] == "resolve":
                repo_id = f"{unquote(parts[offset])}/{unquote(parts[offset + 1])}"
                revision = unquote(parts[offset + 3])
                file_path = unquote("/".join(parts[offset + 4 :]))
                return self._resolve(repo_type, repo_id, revision, file_path)
        raise HubError(404, f"Not found: {method} {path}")

    def _validate_yaml(self, body: bytes):
        """What the Hub checks before a README.md is committed: its YAML front matter parses to a mapping."""
        import yaml

        content = json.loads(body or b"{}").get("content", "")
        if content.startswith("---\n"):
            try:
                meta = yaml.safe_load(content[4 : content.index("\n---", 4)])
            except (ValueError, yaml.YAMLError) as exc:
                return self._json(400, {"errors": [{"message": f"invalid YAML: {exc}"}]})
            if not isinstance(meta, dict):
                return self._json(400, {"errors": [{"message": "metadata must be a mapping"}]})
        return self._json(200, {"errors": [], "warnings": []})

    def _whoami(self):
        user = self._require_user()
        self._json(
            200,
            {
                "type": "user",
                "id": hashlib.md5(user.encode()).hexdigest()[:24],
                "name": user,
                "fullname": user,
                "avatarUrl": f"/avatars/{user}.svg",
                "orgs": [],
                "auth": {
                    "type": "access_token",
                    "accessToken": {"displayName": "fake", "role": "write"},
                },
            },
        )

    def _openid_configuration(self):
        """Provider metadata as huggingface.co publishes it (the endpoints a login is sent to)."""
        base = f"http://{self.headers.get('Host')}"
        self._json(
            200,
            {
                "issuer": base,
                "authorization_endpoint": f"{base}/oauth/authorize",
                "token_endpoint": f"{base}/oauth/token",
                "userinfo_endpoint": f"{base}/oauth/userinfo",
                "jwks_uri": f"{base}/oauth/jwks",
                "response_types_supported": ["code"],
                "scopes_supported": ["openid", "profile"],
            },
        )

    def _create_repo(self, body: bytes):
        self._require_user()
        payload = json.loads(body or b"{}")
        name, org = payload.get("name"), payload.get("organization")
        repo_id = f"{org}/{name}" if org else f"{self._user()}/{name}"
        repo_type = payload.get("type") or "model"
        private = payload.get("visibility") == "private" or bool(payload.get("private"))
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        url = f"{self.hub.url}/{prefix}{repo_id}"
        try:
            self.hub.create_repo(repo_id, repo_type, private=private)
        except HubError as err:
            if err.status != 409:
                raise
            # As the Hub: the 409 body still carries the url (huggingface_hub reads it with exist_ok=True).
            return self._json(409, {"error": f"You already created this {repo_type} repo", "url": url})
        self._json(200, {"url": url, "name": repo_id})

    def _repo_info(
        self,
        repo_type: str,
        repo_id: str,
        revision: str,
        expand: list[str] | None = None,
    ):
        with self.hub.lock:
            repo = self._readable_repo(repo_type, repo_id)
            commit = repo.resolve(revision)
            if commit is None:
                raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
            siblings = [{"rfilename": p} for p in sorted(commit.files)]
        info = {
            "_id": hashlib.md5(repo_id.encode()).hexdigest()[:24],
            "id": repo_id,
            "author": repo_id.split("/")[0],
            "sha": commit.sha,
            "lastModified": commit.date,
            "createdAt": repo.created_at,
            "private": repo.private,
            "gated": False,
            "disabled": False,
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "siblings": siblings,
        }
        if expand:  # as on the Hub: only the requested properties (plus the ids)
            info = {k: v for k, v in info.items() if k in ("_id", "id", *expand)}
        self._json(200, info)

    def _tree(self, repo_type: str, repo_id: str, revision: str, sub: str, query: dict):
        recursive = (query.get("recursive") or ["false"])[0].lower() in ("1", "true")
        cursor = int((query.get("cursor") or ["0"])[0])
        with self.hub.lock:
            repo = self._readable_repo(repo_type, repo_id)
            commit = repo.resolve(revision)
            if commit is None:
                raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
            index = self.hub._index(commit)
        folder = sub.strip("/")
        entries = index["entries"]
        if folder and entries.get(folder, {}).get("type") != "directory":
            raise HubError(
                404,
                f"Entry not found: {sub}",
                "EntryNotFound",
                {"X-Repo-Commit": commit.sha},
            )
        if not recursive:
            paths = index["children"].get(folder, [])
        elif not folder:
            paths = index["ordered"]
        else:  # everything under folder/: a contiguous run of the sorted paths
            ordered_paths = index["ordered"]
            start = bisect.bisect_left(ordered_paths, folder + "/")
            end = bisect.bisect_left(ordered_paths, folder + "0")  # "0" follows "/"
            paths = ordered_paths[start:end]
        ordered = [entries[p] for p in paths]
        page = ordered[cursor : cursor + self.hub.page_size]
        headers = {}
        if cursor + self.hub.page_size < len(ordered):
            host = self.headers.get("Host") or f"127.0.0.1:{self.hub.port}"
            next_url = (
                f"http://{host}/api/{repo_type}s/{repo_id}/tree/{quote(revision, safe='')}"
                + (f"/{quote(sub)}" if sub else "")
                + f"?recursive={'true' if recursive else 'false'}&expand=false&cursor={cursor + self.hub.page_size}"
            )
            headers["Link"] = f'<{next_url}>; rel="next"'
        self._json(200, page, headers)

    def _commits(self, repo_type: str, repo_id: str, revision: str, query: dict):
        """A revision's history, newest first, as the Hub pages it (`limit` a page, `p` the page, Link to the next)."""
        limit = max(1, min(1000, int((query.get("limit") or ["50"])[0])))
        page = int((query.get("p") or ["0"])[0])
        with self.hub.lock:
            repo = self._readable_repo(repo_type, repo_id)
            commit = repo.resolve(revision)
            if commit is None:
                raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
            history = []
            while commit is not None:
                history.append(commit)
                commit = repo.commit_by_sha(commit.parent) if commit.parent else None
        chunk = history[page * limit : (page + 1) * limit]
        items = [
            {"id": c.sha, "title": c.message, "message": "", "authors": [{"user": "?", "avatar": None}], "date": c.date}
            for c in chunk
        ]
        headers = {}
        if (page + 1) * limit < len(history):
            host = self.headers.get("Host") or f"127.0.0.1:{self.hub.port}"
            url = f"http://{host}/api/{repo_type}s/{repo_id}/commits/{quote(revision, safe='')}?limit={limit}&p={page + 1}"
            headers["Link"] = f'<{url}>; rel="next"'
        self._json(200, items, headers)

    def _preupload(self, repo_type: str, repo_id: str, revision: str, body: bytes):
        self._require_user()
        payload = json.loads(body or b"{}")
        with self.hub.lock:
            repo = self._readable_repo(repo_type, repo_id)
            commit = repo.resolve(revision)
            if commit is None:
                raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
            existing = dict(commit.files)
        files = [
            {
                "path": f["path"],
                "uploadMode": "regular",
                "shouldIgnore": False,
                "oid": existing.get(f["path"]),
            }
            for f in payload.get("files", [])
        ]
        self._json(200, {"files": files, "commitOid": commit.sha})

    def _commit(self, repo_type: str, repo_id: str, revision: str, body: bytes, query: dict):
        user = self._require_user()
        if query.get("create_pr") or revision.startswith("refs/pr/"):
            return self._commit_to_pull_request(repo_type, repo_id, revision, body, bool(query.get("create_pr")), user)
        header, files, deletes = self._commit_operations(body)
        with self.hub.lock:
            repo = self.hub._repo(repo_type, repo_id)
            if revision not in ("main", "refs/heads/main"):
                raise HubError(400, "The fake Hub only commits to main")
            commit = self.hub._apply(repo, files, deletes, header["summary"], header.get("parentCommit"))
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        self._json(
            200,
            {
                "success": True,
                "commitOid": commit.sha,
                "commitUrl": f"{self.hub.url}/{prefix}{repo_id}/commit/{commit.sha}",
                "pullRequestUrl": None,
            },
        )

    @staticmethod
    def _commit_operations(body: bytes) -> tuple[dict, dict[str, bytes], list[str]]:
        """(header, files added, paths deleted) of a commit's NDJSON payload."""
        header: dict = {}
        files: dict[str, bytes] = {}
        deletes: list[str] = []
        for line in body.splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            key, value = item.get("key"), item.get("value") or {}
            if key == "header":
                header = value
            elif key == "file":
                if value.get("encoding") != "base64":
                    raise HubError(400, "only base64 file content is supported")
                files[value["path"]] = base64.b64decode(value["content"])
            elif key == "deletedFile":
                deletes.append(value["path"])
            elif key == "deletedFolder":
                deletes.append(value["path"].rstrip("/") + "/")
            else:
                raise HubError(400, f"The fake Hub does not support {key!r} operations (LFS)")
        if not header.get("summary"):
            raise HubError(400, "commit summary is required")
        return header, files, deletes

    # ---- pull requests and discussions ------------------------------------------------------------

    def _commit_to_pull_request(self, repo_type: str, repo_id: str, revision: str, body: bytes, create: bool, user: str):
        """`?create_pr=1` on main opens a pull request holding this commit; a commit to `refs/pr/<n>` adds to one."""
        header, files, deletes = self._commit_operations(body)
        hub = self.hub
        with hub.lock:
            repo = self._readable_repo(repo_type, repo_id)
            if create:
                if revision not in ("main", "refs/heads/main"):
                    raise HubError(400, "Pull requests are opened against main")
                pr = hub.open_discussion(
                    repo_id, user, header["summary"], parent_commit=header.get("parentCommit"), repo_type=repo_type
                )
                if header.get("description"):
                    hub._add_event(pr, "comment", user, _comment_data(header["description"]))
                commit = hub.commit_to_pull_request(repo_id, pr.num, files, deletes, header["summary"], user, repo_type=repo_type)
            else:
                num = revision.removeprefix("refs/pr/")
                if not num.isdigit() or int(num) not in repo.discussions:
                    raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
                pr = repo.discussions[int(num)]
                commit = hub.commit_to_pull_request(
                    repo_id, pr.num, files, deletes, header["summary"], user, header.get("parentCommit"), repo_type
                )
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        self._json(
            200,
            {
                "success": True,
                "commitOid": commit.sha,
                "commitUrl": f"{hub.url}/{prefix}{repo_id}/commit/{commit.sha}",
                "pullRequestUrl": f"{hub.url}/{prefix}{repo_id}/discussions/{pr.num}" if create else None,
            },
        )

    def _community(self, method: str, repo_type: str, repo_id: str, rest: list[str], query: dict, body: bytes):
        hub = self.hub
        if rest == ["refs"] and method == "GET":
            return self._refs(repo_type, repo_id, bool(query.get("include_prs")))
        if rest == ["discussions"] and method == "GET":
            return self._list_discussions(repo_type, repo_id, query)
        if rest == ["discussions"] and method == "POST":
            user = self._require_user()
            payload = json.loads(body or b"{}")
            with hub.lock:
                self._readable_repo(repo_type, repo_id)
                pr = hub.open_discussion(
                    repo_id,
                    user,
                    str(payload.get("title") or ""),
                    pull_request=bool(payload.get("pullRequest")),
                    description=str(payload.get("description") or ""),
                    repo_type=repo_type,
                )
            return self._json(200, {"num": pr.num, "pullRequest": pr.is_pull_request})
        if len(rest) < 2 or not rest[1].isdigit():
            raise HubError(404, f"Not found: {method} /{'/'.join(rest)}")
        num = int(rest[1])
        if len(rest) == 2 and method == "GET":
            return self._discussion_details(repo_type, repo_id, num, bool(query.get("diff")))
        if len(rest) == 3 and method == "POST":
            user = self._require_user()
            payload = json.loads(body or b"null") or {}
            with hub.lock:
                self._readable_repo(repo_type, repo_id)
                if rest[2] == "comment":
                    event = hub.comment(repo_id, num, user, str(payload.get("comment") or ""), repo_type)
                    return self._json(200, {"newMessage": event})
                if rest[2] == "status":
                    status = payload.get("status")
                    if status not in ("open", "closed"):
                        raise HubError(400, "status must be open or closed")
                    event = hub.set_status(repo_id, num, status, user, payload.get("comment"), repo_type)
                    return self._json(200, {"newStatus": event})
                if rest[2] == "merge":
                    hub.merge(repo_id, num, user, payload.get("comment"), repo_type)
                    return self._json(200, {})
        raise HubError(404, f"Not found: {method} /{'/'.join(rest)}")

    def _discussion_json(self, repo: Repo, pr: PullRequest) -> dict:
        return {
            "num": pr.num,
            "title": pr.title,
            "author": {"name": pr.author, "type": "user"},
            "createdAt": pr.created_at,
            "status": pr.status,
            "repo": {"name": repo.repo_id, "type": repo.repo_type},
            "isPullRequest": pr.is_pull_request,
        }

    def _list_discussions(self, repo_type: str, repo_id: str, query: dict):
        """Newest first, one page of `discussions_page_size` per `p`; "open" includes drafts."""
        kind = (query.get("type") or ["all"])[0]
        status = (query.get("status") or ["all"])[0]
        author = (query.get("author") or [None])[0]
        page = int((query.get("p") or ["0"])[0])
        size = self.hub.discussions_page_size
        with self.hub.lock:
            repo = self._readable_repo(repo_type, repo_id)
            matching = [
                self._discussion_json(repo, pr)
                for pr in sorted(repo.discussions.values(), key=lambda d: -d.num)
                if (kind == "all" or (kind == "pull_request") == pr.is_pull_request)
                and (
                    status == "all" or (pr.status in ("open", "draft") if status == "open" else pr.status in ("closed", "merged"))
                )
                and (author is None or pr.author == author)
            ]
        start = page * size
        self._json(200, {"discussions": matching[start : start + size], "count": len(matching), "start": start})

    def _discussion_details(self, repo_type: str, repo_id: str, num: int, with_diff: bool):
        with self.hub.lock:
            repo = self._readable_repo(repo_type, repo_id)
            pr = self.hub.pull_request(repo_id, num, repo_type)
            details = {**self._discussion_json(repo, pr), "events": list(pr.events)}
            if pr.is_pull_request:
                details["changes"] = {
                    "base": "refs/heads/main",
                    **({"mergeCommitId": pr.merge_commit} if pr.merge_commit else {}),
                }
                base = repo.resolve(pr.base)
                changed = self.hub.pr_changes(repo, pr)
                details["filesWithConflicts"] = (
                    [p for p in changed if repo.head.files.get(p) != base.files.get(p)] if pr.status == "open" else []
                )
                if with_diff:
                    details["diff"] = self.hub.pr_diff(repo, pr)
        self._json(200, details)

    def _refs(self, repo_type: str, repo_id: str, include_prs: bool):
        with self.hub.lock:
            repo = self._readable_repo(repo_type, repo_id)
            refs = {
                "branches": [{"name": "main", "ref": "refs/heads/main", "targetCommit": repo.head.sha}],
                "converts": [],
                "tags": [],
            }
            if include_prs:
                refs["pullRequests"] = [
                    {"name": f"pr/{pr.num}", "ref": f"refs/pr/{pr.num}", "targetCommit": pr.head(repo).sha}
                    for pr in repo.discussions.values()
                    if pr.is_pull_request
                ]
        self._json(200, refs)

    def _resolve(self, repo_type: str, repo_id: str, revision: str, file_path: str):
        with self.hub.lock:
            repo = self._readable_repo(repo_type, repo_id)
            commit = repo.resolve(revision)
            if commit is None:
                raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
            oid = commit.files.get(file_path)
            if oid is None:
                raise HubError(
                    404,
                    "Entry not found",
                    "EntryNotFound",
                    {"X-Repo-Commit": commit.sha},
                )
            data = self.hub.blobs[oid]
        self._send(
            200,
            data,
            {"ETag": f'"{oid}"', "X-Repo-Commit": commit.sha, "Accept-Ranges": "bytes"},
            content_type="application/octet-stream",
        )


@contextmanager
def running_hub(tokens: dict[str, str] | None = None, page_size: int = 1000) -> Iterator[FakeHub]:
    """A started FakeHub on a free port, stopped on exit."""
    hub = FakeHub(tokens=tokens, page_size=page_size).start()
    try:
        yield hub
    finally:
        hub.stop()


FAKE_TOKEN = "hf_fakeFAKEfake0123456789"

try:  # a ready-made fixture for test modules: `from hubfake import fake_hub`
    import pytest

    @pytest.fixture
    def fake_hub(monkeypatch) -> Iterator[FakeHub]:
        """A running FakeHub (FAKE_TOKEN -> user "admin"); HF_ENDPOINT (for StoreSettings.from_env) points at it.

        Also lifts the test suite's HF_HUB_OFFLINE for huggingface_hub: requests go to 127.0.0.1 only.
        """
        from huggingface_hub import constants

        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        with running_hub(tokens={FAKE_TOKEN: "admin"}) as hub:
            monkeypatch.setenv("HF_ENDPOINT", hub.url)
            yield hub

except ImportError:  # bench scripts run without pytest
    pass


def child_env(hub, tmp_path) -> dict[str, str]:
    """The environment of a child process that reads gold from `hub` with private caches under `tmp_path`."""
    return {
        "HF_ENDPOINT": hub.url,
        "HF_HUB_OFFLINE": "0",
        "HF_HOME": str(tmp_path / "hf"),
        "LEADERBOARD_DATA_DIR": str(tmp_path / "data"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "PATH": "/usr/bin:/bin",
    }
