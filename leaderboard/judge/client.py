"""One JSON-returning chat call with our own retry policy, on the real `openai` client.

The openai client's built-in retries are switched off (max_retries=0) so the
policy lives here and is testable: transient errors (429, 408/409, 5xx,
timeouts, connection errors) back off exponentially; malformed replies are
re-asked a bounded number of times; authentication / permission / unknown-model
errors, and several calls in a row that exhausted their transport retries (a
server that is down), are fatal for the run: every later call fails at once
instead of hammering, or waiting on, a server that will not answer.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import openai

from . import prompts
from .base import JudgeConfigError
from .replies import MalformedReply, parse_json_object

T = TypeVar("T")

_FATAL = (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError)


@dataclass
class CallResult(Generic[T]):
    value: T | None = None
    failure: str | None = None
    calls: int = 0  # replies received (billed), malformed ones included
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0  # transient errors retried
    malformed: int = 0


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5  # transport attempts per call (429/5xx/timeouts)
    malformed_retries: int = 2  # extra asks after a malformed reply
    backoff_base: float = 1.0  # seconds; delay = base * 2**(n-1), jittered, capped
    backoff_max: float = 30.0
    max_consecutive_failures: int = 3  # calls in a row that exhausted retries => server down, stop

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        d = min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)
        if retry_after is not None:  # the server knows best, within our cap
            d = max(d, min(retry_after, self.backoff_max))
        return d


def _retry_after(err: openai.APIStatusError) -> float | None:
    try:
        return float(err.response.headers.get("retry-after", ""))
    except (ValueError, AttributeError):
        return None


def build_openai_client(base_url: str | None, api_key: str | None, timeout: float) -> openai.OpenAI:
    base_url, api_key = base_url or None, api_key or None
    if api_key is None:
        if base_url is None:
            raise JudgeConfigError("the openai judge needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)")
        api_key = "unused"  # local OpenAI-compatible servers (vLLM, Ollama, ...) ignore the key
    return openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0)


def read_reply(completion: Any, schema: dict[str, Any], interpret: Callable[[dict[str, Any]], T]) -> T:
    """The strictly parsed value of a chat completion (live or from a batch output line).

    Raises MalformedReply (or IndexError / AttributeError on a reply without a choice).
    """
    choice = completion.choices[0]
    if choice.finish_reason == "length":
        raise MalformedReply("reply truncated (finish_reason=length)")
    if getattr(choice.message, "refusal", None):
        raise MalformedReply("model refused")
    return interpret(parse_json_object(choice.message.content, schema))


class ChatJSONClient:
    """Sends chat completions at temperature 0 and returns strictly parsed JSON.

    `concurrency` bounds in-flight requests across every run sharing this client
    (the app may judge two submissions at once); backoff sleeps outside the slot.
    """

    def __init__(
        self,
        client: openai.OpenAI,
        model: str,
        *,
        concurrency: int = 4,
        policy: RetryPolicy = RetryPolicy(),
        response_format: str = "json_schema",
        temperature: float | None = 0.0,
        max_completion_tokens: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if response_format not in ("json_schema", "json_object"):
            raise JudgeConfigError("response_format must be 'json_schema' or 'json_object'")
        self.client = client
        self.model = model
        self.policy = policy
        self.response_format = response_format
        self.temperature = temperature
        self.max_completion_tokens = max_completion_tokens
        self._slots = threading.BoundedSemaphore(max(1, concurrency))
        self._sleep = sleep
        self.fatal: str | None = None
        self._consecutive_failures = 0
        self._state_lock = threading.Lock()

    def reset(self) -> None:
        """Forget a previous run's fatal error (a fixed key or a restarted server gets a new chance)."""
        with self._state_lock:
            self.fatal, self._consecutive_failures = None, 0

    def _transport_exhausted(self, failure: str) -> None:
        with self._state_lock:
            self._consecutive_failures += 1
            if self._consecutive_failures >= self.policy.max_consecutive_failures and not self.fatal:
                self.fatal = f"fatal: {self._consecutive_failures} calls in a row failed ({failure}); server down?"

    def response_format_for(self, name: str, schema: dict[str, Any]) -> dict[str, Any]:
        if self.response_format == "json_object":
            return {"type": "json_object"}
        return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}

    def request_body(self, messages: list[dict[str, str]], response_format: dict[str, Any]) -> dict[str, Any]:
        """The chat-completions request, the same whether sent live or as a batch line."""
        body: dict[str, Any] = {"model": self.model, "messages": messages, "response_format": response_format}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_completion_tokens is not None:
            body["max_completion_tokens"] = self.max_completion_tokens
        return body

    def _create(self, messages: list[dict[str, str]], response_format: dict[str, Any]) -> Any:
        with self._slots:
            return self.client.chat.completions.create(**self.request_body(messages, response_format))

    def complete(
        self,
        messages: list[dict[str, str]],
        schema_name: str,
        schema: dict[str, Any],
        interpret: Callable[[dict[str, Any]], T],
    ) -> CallResult[T]:
        out: CallResult[T] = CallResult()
        fmt = self.response_format_for(schema_name, schema)
        transient = 0
        while True:
            if self.fatal:
                out.failure = self.fatal
                return out
            try:
                completion = self._create(messages, fmt)
            except _FATAL as e:
                self.fatal = f"fatal: HTTP {e.status_code} {type(e).__name__}: {str(e)[:200]}"
                out.failure = self.fatal
                return out
            except (openai.APIConnectionError, openai.APIStatusError) as e:  # timeout is a connection error
                status = getattr(e, "status_code", None)
                if status is not None and status not in (408, 409, 429) and status < 500:
                    out.failure = f"http {status}: {str(e)[:200]}"
                    return out
                transient += 1
                what = (
                    "timeout" if isinstance(e, openai.APITimeoutError) else (f"HTTP {status}" if status else "connection error")
                )
                if transient >= self.policy.max_attempts:
                    out.failure = f"transport: {what} after {transient} attempts"
                    self._transport_exhausted(out.failure)
                    return out
                out.retries += 1
                self._sleep(self.policy.delay(transient, _retry_after(e) if status else None))
                continue

            out.calls += 1
            self._consecutive_failures = 0  # the server answers
            usage = getattr(completion, "usage", None)
            out.prompt_tokens += getattr(usage, "prompt_tokens", 0) or 0
            out.completion_tokens += getattr(usage, "completion_tokens", 0) or 0
            try:
                out.value = read_reply(completion, schema, interpret)
                return out
            except (MalformedReply, IndexError, AttributeError) as e:
                out.malformed += 1
                if out.malformed > self.policy.malformed_retries:
                    out.failure = f"malformed reply after {out.malformed} attempts: {e}"
                    return out
                messages = [*messages[:2], prompts.retry_note(str(e))]
