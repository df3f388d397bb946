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
"""

from __future__ import annotations

import html
import json
import re
import threading
import time
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

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.plan: deque[Any] = deque()
        self.requests: list[dict[str, Any]] = []  # every request body received, in order
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                try:
                    fake._handle(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

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
        return len(self.requests)

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
