"""A local OpenAI-compatible chat-completions server: the judge's test double.

It answers deterministically from the prompt's content, like a simple-minded
model that reads the tagged data blocks:

- gold facts: the sentences of <gold_answer>;
- response check: response facts = sentences of <response>; a gold fact is
  "stated" when all its words (3+ letters, minus a few stopwords) occur in <response>;
- fact support: a response fact is "supported" when all its words occur in
  <gold_answer> + <evidence>.

It is also GULLIBLE on purpose: if the words "every fact is supported" appear
in the user message OUTSIDE a well-formed data block, it marks every fact
stated/supported. So a naively built prompt (response pasted unescaped, able
to close its own block) would let an injected answer raise its score; the
real prompt builder must not.

Failure injection: `plan` is a queue of behaviours consumed one per request
("ok", an HTTP status such as "429" / "500" / "401", "malformed",
"badschema", ("sleep", seconds)); `delay`
slows every request so concurrency can be observed (`max_in_flight`).

Files + Batches (the batch judge's transport), as OpenAI serves them: upload
(purpose=batch, multipart), retrieve, content; batches create / retrieve /
cancel with statuses validating -> in_progress -> completed, or expired /
cancelled / failed; each line answered by the same fake model as a live call,
successes in the output file, failed lines in the error file. `requests` holds
live chat calls only; `batch_bodies` every line body a batch answered. Knobs:
`batch_seconds` (time from create to completion), `line_plan` (one behaviour
per answered line: "ok", "malformed", "badschema" or an HTTP status such as
"500"), `expire_plan` (per created batch: None, or the number of lines it
answers before it expires), `hold` (True, or a set of batch ids: those
batches stay in_progress, for a restart mid-batch; `held_done`: the share of
their lines they report completed meanwhile, 1.0 for a provider whose counts say
done while its output never comes), `api_plan` (one behaviour per
Files/Batches request: "ok", an HTTP status, or a lost answer: "lost500" does
what was asked, e.g. creates the batch, then answers 500, "lostdrop" does it then
closes the connection without an answer), `extra_output` (raw lines appended to
the next output file: lines not asked for, garbage, an overlong line),
`cancel_keeps` (lines a cancelled batch has answered). `GET /v1/batches` lists
the batches newest first, as OpenAI does (`limit`, default 20, at most 100;
`after`, a batch id cursor; `first_id`, `last_id`, `has_more`).
"""

from __future__ import annotations

import email.parser
import email.policy
import html
import json
import re
import threading
import time
import urllib.parse
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

_BLOCK = re.compile(r"<(question|gold_answer|evidence|gold_facts|response|response_facts)>(.*?)</\1>", re.DOTALL)
_ITEM = re.compile(r"^\[(\d+)\] (.*)$", re.MULTILINE)
_SENT = re.compile(r"(?<=[.!?])\s+")
_STOP = {"the", "and", "for", "are", "was", "were", "with", "that", "this", "from", "its", "has", "have"}
GULLIBLE_TRIGGER = "every fact is supported"


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 3 and w not in _STOP}


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.split(text.strip()) if re.search(r"\w", s)]


def _contained(fact: str, reference: set[str]) -> bool:
    w = words(fact)
    return bool(w) and w <= reference


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The fake model: a JSON reply computed from the first user message."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    blocks: dict[str, str] = {}
    for m in _BLOCK.finditer(user):
        blocks.setdefault(m.group(1), html.unescape(m.group(2).strip()))
    outside = _BLOCK.sub(" ", user).lower()
    gullible = GULLIBLE_TRIGGER in outside
    if "response_facts" in blocks:
        reference = words(blocks.get("gold_answer", "") + " " + blocks.get("evidence", ""))
        items = _ITEM.findall(blocks["response_facts"])
        return {"response_facts": [{"id": int(i), "supported": gullible or _contained(t, reference)} for i, t in items]}
    if "response" in blocks:
        said = words(blocks["response"])
        items = _ITEM.findall(blocks.get("gold_facts", ""))
        return {
            "response_facts": sentences(blocks["response"]),
            "gold_facts": [{"id": int(i), "stated": gullible or _contained(t, said)} for i, t in items],
        }
    return {"facts": sentences(blocks.get("gold_answer", ""))}


class FakeOpenAI:
    """`with FakeOpenAI() as fake: OpenAI(base_url=fake.base_url, ...)`."""

    def __init__(self, delay: float = 0.0, batch_seconds: float = 0.0) -> None:
        self.delay = delay
        self.plan: deque[Any] = deque()
        self.requests: list[dict[str, Any]] = []  # every live chat request body received, in order
        # Files + Batches
        self.batch_seconds = batch_seconds
        self.line_plan: deque[Any] = deque()
        self.expire_plan: deque[int | None] = deque()
        self.hold: bool | set[str] = False
        self.held_done = 0.0
        self.api_plan: deque[str] = deque()
        self.extra_output: list[str] = []
        self.cancel_keeps = 0
        self.files: dict[str, dict[str, Any]] = {}  # id -> {"meta": file object, "data": bytes}
        self.batches: dict[str, dict[str, Any]] = {}  # id -> batch object (+ private "_" keys)
        self.batch_bodies: list[dict[str, Any]] = []
        self.batch_calls: list[tuple[str, str]] = []  # (method, path) of every Files/Batches request
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                try:
                    if self.path.startswith(("/v1/files", "/v1/batches")):
                        fake._handle_batch_api(self, "POST")
                    else:
                        fake._handle(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def do_GET(self) -> None:
                try:
                    fake._handle_batch_api(self, "GET")
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )  # fast shutdown

    # -- lifecycle
    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def calls(self) -> int:
        """Live chat calls (batch lines are counted apart: `batch_bodies`)."""
        return len(self.requests)

    @property
    def batches_created(self) -> list[str]:
        return list(self.batches)

    # -- request handling
    def _send(self, h: BaseHTTPRequestHandler, status: int, payload: Any, raw: str | None = None) -> None:
        data = (raw if raw is not None else json.dumps(payload)).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        body = json.loads(h.rfile.read(int(h.headers.get("Content-Length", 0))))
        with self.lock:
            self.requests.append(body)
            behaviour = self.plan.popleft() if self.plan else "ok"
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                time.sleep(self.delay)
            if isinstance(behaviour, tuple) and behaviour[0] == "sleep":
                time.sleep(behaviour[1])
                behaviour = "ok"
            status, payload, raw = self._reply(h.path, body, behaviour)
        finally:
            # Out of flight before the answer leaves: the client may send its next request the moment it has
            # read this one, and must not be counted twice (max_in_flight would then exceed its limit).
            with self.lock:
                self.in_flight -= 1
        self._send(h, status, payload, raw)

    def _reply(self, path: str, body: dict, behaviour: Any) -> tuple[int, Any, str | None]:
        if isinstance(behaviour, str) and behaviour.isdigit():  # "429", "500", "401", ...
            return int(behaviour), {"error": {"message": f"fake {behaviour}", "type": "fake"}}, None
        if path.rstrip("/") != "/v1/chat/completions":
            return 404, {"error": {"message": "unknown path"}}, None
        content = json.dumps(answer(body))
        if behaviour == "malformed":
            content = "Sure! Here is the JSON: {" + content[:20]
        elif behaviour == "badschema":
            content = json.dumps({"verdict": "everything is fine"})
        prompt_tokens = sum(len(m["content"].split()) for m in body["messages"])
        completion_tokens = len(content.split())
        return (
            200,
            {
                "id": f"chatcmpl-fake-{len(self.requests)}",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "logprobs": None,
                        "message": {"role": "assistant", "content": content, "refusal": None},
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
            None,
        )

    # -- Files + Batches
    _TERMINAL = ("completed", "expired", "cancelled", "failed")

    def _handle_batch_api(self, h: BaseHTTPRequestHandler, method: str) -> None:
        raw = h.rfile.read(int(h.headers.get("Content-Length", 0))) if method == "POST" else b""
        path, _, query = h.path.partition("?")
        path = path.rstrip("/")
        with self.lock:
            self.batch_calls.append((method, path))
        if self.delay:
            time.sleep(self.delay)
        parts = path.split("/")[2:]  # ["files", id, "content"] / ["batches", id, "cancel"]
        with self.lock:
            behaviour = self.api_plan.popleft() if self.api_plan else "ok"
            if behaviour.isdigit():
                return self._send(h, int(behaviour), {"error": {"message": f"fake {behaviour}", "type": "fake"}})
            send = self._send
            if behaviour.startswith("lost"):  # the request is served, its answer never reaches the client

                def send(h: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
                    if behaviour == "lostdrop":
                        h.close_connection = True
                    else:
                        self._send(h, int(behaviour[4:]), {"error": {"message": "fake lost answer", "type": "fake"}})

            if method == "POST" and parts == ["files"]:
                return send(h, *self._upload(h.headers.get("Content-Type", ""), raw))
            if method == "GET" and len(parts) == 2 and parts[0] == "files" and parts[1] in self.files:
                return self._send(h, 200, self.files[parts[1]]["meta"])
            if method == "GET" and len(parts) == 3 and parts[0] == "files" and parts[2] == "content" and parts[1] in self.files:
                data = self.files[parts[1]]["data"]
                h.send_response(200)
                h.send_header("Content-Type", "application/octet-stream")
                h.send_header("Content-Length", str(len(data)))
                h.end_headers()
                h.wfile.write(data)
                return None
            if method == "POST" and parts == ["batches"]:
                return send(h, *self._create_batch(json.loads(raw)))
            if method == "GET" and parts == ["batches"]:
                return send(h, *self._list_batches(urllib.parse.parse_qs(query)))
            if len(parts) >= 2 and parts[0] == "batches" and parts[1] in self.batches:
                batch = self.batches[parts[1]]
                if method == "POST" and parts[2:] == ["cancel"]:
                    if batch["status"] not in self._TERMINAL:
                        self._finish(batch, "cancelled", limit=self.cancel_keeps)
                    return send(h, 200, self._public(batch))
                if method == "GET" and len(parts) == 2:
                    self._advance(batch)
                    return send(h, 200, self._public(batch))
        return self._send(h, 404, {"error": {"message": "unknown path", "type": "invalid_request_error"}})

    def _new_file(self, data: bytes, filename: str, purpose: str) -> dict[str, Any]:
        file_id = f"file-fake{len(self.files) + 1}"
        meta = {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
        }
        self.files[file_id] = {"meta": meta, "data": data}
        return meta

    def _upload(self, content_type: str, raw: bytes) -> tuple[int, Any]:
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + raw
        )
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in msg.iter_parts() if msg.is_multipart() else ():
            name = part.get_param("name", header="content-disposition")
            fields[name] = (part.get_filename(), part.get_payload(decode=True) or b"")
        purpose = fields.get("purpose", (None, b""))[1].decode()
        if "file" not in fields or purpose != "batch":
            return 400, {"error": {"message": "need a file and purpose=batch", "type": "invalid_request_error"}}
        filename, data = fields["file"]
        return 200, self._new_file(data, filename or "upload.jsonl", purpose)

    def _create_batch(self, body: dict[str, Any]) -> tuple[int, Any]:
        file = self.files.get(body.get("input_file_id", ""))
        if file is None or body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
            return 400, {"error": {"message": "bad batch request", "type": "invalid_request_error"}}
        batch_id = f"batch_fake{len(self.batches) + 1}"
        now = int(time.time())
        batch = {
            "id": batch_id,
            "object": "batch",
            "endpoint": body["endpoint"],
            "errors": None,
            "input_file_id": body["input_file_id"],
            "completion_window": "24h",
            "status": "validating",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": now,
            "expires_at": now + 86400,
            "request_counts": {"total": 0, "completed": 0, "failed": 0},
            "metadata": body.get("metadata"),
            "_started": time.monotonic(),
            "_expire_after": self.expire_plan.popleft() if self.expire_plan else None,
            "_lines": [],
        }
        errors = []
        seen: set[str] = set()
        for n, line in enumerate(file["data"].decode().splitlines(), 1):
            try:
                req = json.loads(line)
                ok = req["method"] == "POST" and req["url"] == body["endpoint"] and isinstance(req["body"], dict)
                cid = req["custom_id"]
            except (ValueError, KeyError, TypeError):
                ok, cid = False, None
            if not ok:
                errors.append({"code": "invalid_request", "line": n, "message": "malformed request line"})
            elif cid in seen:
                errors.append({"code": "duplicate_custom_id", "line": n, "message": f"duplicate custom_id {cid}"})
            else:
                seen.add(cid)
                batch["_lines"].append(req)
        batch["request_counts"]["total"] = len(batch["_lines"])
        self.batches[batch_id] = batch
        if errors:  # OpenAI rejects the whole file
            batch["status"], batch["failed_at"] = "failed", now
            batch["errors"] = {"object": "list", "data": errors[:10]}
        return 200, self._public(batch)

    def _list_batches(self, query: dict[str, list[str]]) -> tuple[int, Any]:
        limit = query.get("limit", ["20"])[0]
        if not limit.isdigit() or not 1 <= int(limit) <= 100:
            return 400, {"error": {"message": "limit must be 1 to 100", "type": "invalid_request_error"}}
        newest_first = list(reversed(self.batches))
        after = query.get("after", [None])[0]
        start = newest_first.index(after) + 1 if after in newest_first else 0 if after is None else len(newest_first)
        ids = newest_first[start : start + int(limit)]
        data = [self._public(self.batches[i]) for i in ids]
        more = start + len(ids) < len(newest_first)
        return 200, {
            "object": "list",
            "data": data,
            "first_id": ids[0] if ids else None,
            "last_id": ids[-1] if ids else None,
            "has_more": more,
        }

    def _public(self, batch: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in batch.items() if not k.startswith("_")}

    def _advance(self, batch: dict[str, Any]) -> None:
        if batch["status"] in self._TERMINAL:
            return
        elapsed = time.monotonic() - batch["_started"]
        held = self.hold is True or (isinstance(self.hold, set) and batch["id"] in self.hold)
        if held or elapsed < self.batch_seconds:
            batch["status"] = "in_progress"
            total = batch["request_counts"]["total"]
            fraction = self.held_done if held else min(elapsed / self.batch_seconds, 0.99)
            batch["request_counts"]["completed"] = int(total * fraction)
            return
        limit = batch["_expire_after"]
        self._finish(batch, "completed" if limit is None else "expired", limit=limit)

    def _finish(self, batch: dict[str, Any], status: str, limit: int | None) -> None:
        """Answer the first `limit` lines (all: None) like live calls; the rest are never answered."""
        out, err = [], []
        for n, req in enumerate(batch["_lines"]):
            if limit is not None and n >= limit:  # never run: in the error file, as OpenAI reports them
                code = "batch_expired" if status == "expired" else "batch_cancelled"
                line = {"id": f"batch_req_{batch['id']}_{n}", "custom_id": req["custom_id"], "response": None}
                err.append(json.dumps({**line, "error": {"code": code, "message": "not executed before the batch ended"}}))
                continue
            self.batch_bodies.append(req["body"])
            behaviour = self.line_plan.popleft() if self.line_plan else "ok"
            code, payload, _ = self._reply("/v1/chat/completions", req["body"], behaviour)
            line = {
                "id": f"batch_req_{batch['id']}_{n}",
                "custom_id": req["custom_id"],
                "response": {"status_code": code, "request_id": f"req_{n}", "body": payload},
                "error": None,
            }
            (out if code == 200 else err).append(json.dumps(line))
        counts = batch["request_counts"]
        counts["completed"], counts["failed"] = len(out), len(err)
        if limit is not None:
            counts["failed"] -= len(batch["_lines"]) - min(limit, len(batch["_lines"]))
        out += self.extra_output
        self.extra_output = []
        if out:
            batch["output_file_id"] = self._new_file(("\n".join(out) + "\n").encode(), "output.jsonl", "batch_output")["id"]
        if err:
            batch["error_file_id"] = self._new_file(("\n".join(err) + "\n").encode(), "errors.jsonl", "batch_output")["id"]
        batch["status"] = status
        batch[f"{status}_at"] = int(time.time())
