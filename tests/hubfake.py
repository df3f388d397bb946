"""A fake Hugging Face Hub for tests: a real HTTP server on 127.0.0.1 speaking the Hub's protocol.

It implements exactly the calls the store makes through `huggingface_hub`
(checked against huggingface_hub 2.4.0):

    GET  /api/whoami-v2                           (also what Gradio's mocked local login asks for)
    GET  /.well-known/openid-configuration        (the OAuth provider metadata a Space's login redirects with)
    POST /api/repos/create
    GET  /api/{type}s/{repo}                      (repo info, with the head commit "sha")
    GET  /api/{type}s/{repo}/revision/{rev}
    GET  /api/{type}s/{repo}/tree/{rev}[/{path}]  (?recursive, cursor pagination via Link header)
    POST /api/{type}s/{repo}/preupload/{rev}      (every file is "regular": no LFS)
    POST /api/{type}s/{repo}/commit/{rev}         (NDJSON: header, file base64, deletedFile, deletedFolder)
    HEAD/GET /[{type}s/]{repo}/resolve/{rev}/{path}  (ETag, X-Repo-Commit, Content-Length)

Data lives in memory; every commit gets a new sha and is applied atomically
under one lock (concurrent commits both land; a stale `parentCommit` gets 412
as on the Hub). Tests can switch the server `down()` (listening socket closed:
connection refused), make it answer errors (`fail(500)`), answer slowly
(`slow(seconds)`), or do the work of a request and lose its reply
(`lose_replies("/commit/")`: dropped, or sent only after a delay), and count
the requests it received.

    with running_hub(tokens={"hf_...": "alice"}) as hub:
        hub.create_repo("org/subs")
        hub.commit("org/subs", {"submissions/unidoc/bob/a.jsonl": b"..."})  # a maintainer's direct push
        HubStore("org/subs", token="hf_...", endpoint=hub.url, ...)
"""

from __future__ import annotations

import base64
import bisect
import hashlib
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

    @property
    def head(self) -> Commit:
        return self.commits[-1]

    def resolve(self, revision: str) -> Commit | None:
        if revision in ("main", "refs/heads/main"):
            return self.head
        if len(revision) >= 7:
            for commit in reversed(self.commits):
                if commit.sha.startswith(revision):
                    return commit
        return None


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

    def hold(self, at_most: float = 60.0) -> None:
        """Keep every request waiting until `ok()` (or `at_most` seconds): a pull that is surely still running."""
        self.held_max = at_most
        self.released.clear()

    def ok(self) -> None:
        self.mode = "ok"
        self.released.set()
        self.delay = 0.0
        self.lost_reply_path = None

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
            repo.commits.append(commit)
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
            if len(rest) == 2 and rest[0] == "preupload" and method == "POST":
                return self._preupload(repo_type, repo_id, unquote(rest[1]), body)
            if len(rest) == 2 and rest[0] == "commit" and method == "POST":
                return self._commit(repo_type, repo_id, unquote(rest[1]), body, query)
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
        self._require_user()
        if query.get("create_pr"):
            raise HubError(400, "The fake Hub does not support pull requests")
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
