"""Batch judging: the LLM judge's calls through the OpenAI Files + Batches API.

Same prompts, request bodies, strict parsing, verdicts and cache as the live
judge (`LLMJudge`); only the transport differs. A run is three rounds, each one
batch (JSONL uploaded with purpose=batch, then `/v1/batches`), because each
round needs the previous one's replies:

  gold     gold-fact extraction for the questions whose facts are not cached
  check    call 1 per answer: its facts + which gold facts it states
  support  call 2 per answer that stated a fact: which of them the gold supports

Every line's `custom_id` is `<call>:<question id>:<16 hex of the response (or
gold answer) sha256>`; the run keeps the map back to (question, response, call).
A line that comes back failed or malformed is sent again in a follow-up batch
(at most `line_retries` / `malformed_retries` times, the malformed ones with the
same retry note as a live call), then recorded as a judge failure. An expired,
cancelled or failed batch keeps the lines it answered; the others are sent
again, at most `max_resubmits` times. The run's state (its members, the pending
batch, every line's outcome) is an atomic JSON file under the judge cache
(`<cache>/batches/<run key>.json`), so a restart resumes polling the same batch
instead of paying twice; it is deleted when the run ends, its verdicts being
cached.

A batch is made once even when its create's answer is lost (a timeout, a reset,
a proxy's 5xx: the server may have made it) or the process dies before the state
names it: each submission gets a random attempt id, saved in the state before the
upload and sent in the batch's metadata. Before a create is retried, and when a
run resumes with an attempt and no pending batch, the server's batches are looked
through (bounded) for that attempt, and a batch found is adopted. A service that
refuses the listing is warned about once and the batch created anyway.

Whole boards (`judge_groups`): the items of several submissions are judged as one
run, identical (question, response, gold) items being one line. A run remembers
its members, so a later call resumes every unfinished run holding any of the items
it asks for (whatever else it asks for), then judges the rest in a new run. Each
submission gets its own ledger; a line several submissions share is charged to
the first of them (in the order given), the others count it as a cache hit, as
live mode would judging them one after the other: the ledgers add up to the bill.

What is read back is bounded: output files stop at a size cap, a line longer
than `max_line_bytes` is skipped, and lines the batch was not asked for (or
repeated ones) are ignored with a log line.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import openai
import pydantic
from openai.types.chat import ChatCompletion

from . import prompts, replies
from .base import BatchError, BatchPending, Progress, check_unique
from .cache import _ABSENT, _read, _safe_qid, _write_atomic
from .client import _FATAL, ChatJSONClient, RetryPolicy, read_reply
from .llm import LLMJudge
from .replies import MalformedReply
from .verdict import JudgeItem, Ledger, Verdict, Verdicts

log = logging.getLogger(__name__)

ENDPOINT = "/v1/chat/completions"
TERMINAL = ("completed", "expired", "cancelled", "failed")
STATE_VERSION = 2
MAX_STATE_BYTES = 256 * 2**20  # a state file larger than any run writes is not read: started afresh
MAX_RUN_FILES = 64  # unfinished runs looked at per call (oldest first); more means something else writes there
MAX_LINES_PER_BATCH = 50_000  # OpenAI's limits per input file; a larger round goes out in several batches
MAX_BATCH_BYTES = 180 * 2**20  # (200 MB there)
_LOGGED_IGNORED = 5  # ignored output lines logged one by one per file; the rest are counted
MAX_LISTED = 1_000  # batches looked through for a submission attempt (OpenAI lists the newest first)
ROUNDS = ("gold", "check", "support")


@dataclass
class BatchLedger(Ledger):
    """A batch run's cost: the live ledger's fields (same meaning) plus what the batches did."""

    mode: str = "batch"
    batch_ids: list[str] = field(default_factory=list)
    batch_lines: int = 0  # lines sent, resent ones included
    batch_line_failures: int = 0  # lines answered with an error or a malformed reply
    batch_unreturned: int = 0  # lines an expired / cancelled / failed batch did not answer


@dataclass
class _Line:
    """One request of a round and how its reply is read."""

    custom_id: str
    call: str  # "gold" | "check" | "support"
    messages: list[dict[str, str]]
    schema_name: str
    schema: dict[str, Any]
    interpret: Callable[[dict[str, Any]], Any]


def custom_id(call: str, qid: str, sha256: str) -> str:
    q = _safe_qid(qid)
    if len(q) > 80:  # bounded whatever the gold's ids look like
        q = hashlib.sha256(qid.encode()).hexdigest()[:32]
    return f"{call}:{q}:{sha256[:16]}"


def _new_line_state() -> dict[str, Any]:
    return {
        "done": False,
        "value": None,
        "failure": None,
        "answers": 0,  # replies received (billed), malformed ones included
        "errors": 0,  # lines answered with an error
        "malformed": 0,
        "unreturned": 0,
        "sent": 0,  # times this line went out in a batch (resends included)
        "note": None,  # the last malformed reply's problem: the retry says it, like a live retry
        "prompt_tokens": 0,
        "completion_tokens": 0,
    }


UKey = tuple[str, str, str]  # (question id, response sha256, gold sha256): one verdict


def ukey(it: JudgeItem) -> UKey:
    return (it.qid, it.response_sha256, it.gold_sha256)


def _state_ok(rec: Any, key: str | None, judge: str) -> bool:
    """A state file this code wrote for this judge (and run key, when given); a truncated or hand-edited one is not."""
    if not (
        isinstance(rec, dict)
        and rec.get("version") == STATE_VERSION
        and isinstance(rec.get("key"), str)
        and (key is None or rec["key"] == key)
        and rec.get("judge") == judge
    ):
        return False
    pending = rec.get("pending")
    submitting = rec.get("submitting")  # absent in a state an older version wrote
    fresh = _new_line_state()
    members = rec.get("members")
    return (
        isinstance(rec.get("batch_ids"), list)
        and all(isinstance(b, str) for b in rec["batch_ids"])
        and isinstance(members, list)
        and all(isinstance(m, list) and len(m) == 3 and all(isinstance(x, str) for x in m) for m in members)
        and isinstance(rec.get("lines"), dict)
        and all(isinstance(st, dict) and set(st) == set(fresh) for st in rec["lines"].values())
        and (
            pending is None
            or (
                isinstance(pending, dict)
                and isinstance(pending.get("batch_id"), str)
                and pending.get("round") in ROUNDS
                and isinstance(pending.get("custom_ids"), list)
            )
        )
        and (
            submitting is None
            or (
                isinstance(submitting, dict)
                and set(submitting) == {"round", "attempt", "custom_ids"}
                and submitting["round"] in ROUNDS
                and isinstance(submitting["attempt"], str)
                and 0 < len(submitting["attempt"]) <= 64
                and isinstance(submitting["custom_ids"], list)
                and all(isinstance(c, str) for c in submitting["custom_ids"])
            )
        )
    )


def _read_state(path: Path) -> Any:
    """The parsed state file, _ABSENT when there is none, None when it is too large or unreadable (bounded read)."""
    try:
        if path.stat().st_size > MAX_STATE_BYTES:
            return None
    except FileNotFoundError:
        return _ABSENT
    except OSError:
        return None
    return _read(path)


class _Run:
    """The persisted state of one judging run: its members (the verdicts it judges) and every line's outcome."""

    def __init__(self, path: Path, key: str, judge: str, members: Sequence[UKey] = (), rec: Any = None) -> None:
        self.path = path
        if rec is None:
            rec = _read_state(path)
            if rec is not _ABSENT and not _state_ok(rec, key, judge):
                log.warning("batch state %s is unreadable or not this run's; starting afresh", path.name)
                rec = _ABSENT
        self.resumed = rec is not _ABSENT
        self.state: dict[str, Any] = (
            rec
            if rec is not _ABSENT
            else {
                "version": STATE_VERSION,
                "key": key,
                "judge": judge,
                "members": sorted(list(m) for m in members),
                "pending": None,
                "submitting": None,  # the submission under way: its attempt id, to find its batch after a loss
                "batch_ids": [],
                "lines": {},
            }
        )
        self.members: set[UKey] = {(a, b, c) for a, b, c in self.state["members"]}

    def line(self, cid: str) -> dict[str, Any]:
        return self.state["lines"].setdefault(cid, _new_line_state())

    def save(self) -> None:
        _write_atomic(self.path, self.state)

    def finish(self) -> None:
        self.path.unlink(missing_ok=True)


class BatchJudge(LLMJudge):
    """The LLM judge through the Files + Batches API: same name, prompts, verdicts and cache as live."""

    ledger_class = BatchLedger
    mode = "batch"

    def __init__(
        self,
        chat: ChatJSONClient,
        cache_dir: str,
        *,
        max_response_chars: int = 32_000,
        poll_seconds: float = 30.0,
        max_wait_seconds: float = 26 * 3600.0,  # the completion window is 24 h: a batch is terminal by then
        line_retries: int = 2,
        max_resubmits: int = 3,
        max_line_bytes: int = 512 * 1024,
        max_items: int = 50_000,
        sleep: Callable[[float], None] = time.sleep,
        transport: Any = None,
    ) -> None:
        super().__init__(chat, cache_dir, concurrency=1, max_response_chars=max_response_chars)
        self.description = f"{self.description}, batch mode"
        # the server's Files + Batches API, or a folder for `vllm run-batch` (batchdir.BatchDir)
        self.client: Any = transport if transport is not None else chat.client
        self.policy: RetryPolicy = chat.policy
        self.poll_seconds = poll_seconds
        self.max_wait_seconds = max_wait_seconds
        self.line_retries = line_retries
        self.malformed_retries = chat.policy.malformed_retries
        self.max_resubmits = max_resubmits
        self.max_line_bytes = max_line_bytes
        self.max_items = max_items  # what a caller grouping submissions puts in one run (service.Board)
        self._sleep = sleep
        self._ignored_counts: dict[str, int] = {}  # per batch: output lines skipped (logged up to a few)
        self._listing_refused = False  # the service refused to list batches: not asked again (warned once)
        self.last_ledger: BatchLedger | None = None

    # ---------------------------------------------------------------- public API

    def judge_many(
        self, items: Sequence[JudgeItem], progress: Progress | None = None, ledger: Ledger | None = None
    ) -> dict[str, Verdict]:
        """Verdicts by qid. Raises BatchError when the service refuses, BatchPending when a batch outlasts the wait."""
        check_unique(items)
        ledger = ledger or self.new_ledger()
        (judged,) = self.judge_groups([items], [progress], [ledger])
        self.last_ledger = ledger  # type: ignore[assignment]
        return judged.by_qid

    def judge_groups(
        self,
        groups: Sequence[Sequence[JudgeItem]],
        progresses: Sequence[Progress | None] | None = None,
        ledgers: Sequence[Ledger] | None = None,
    ) -> list[Verdicts]:
        """Judge several submissions' items as one batch run (one batch per round for them all).

        `groups[i]` are one submission's items (one per question). Returns, per group, its verdicts and
        its share of the run's ledger, to score that submission with. Identical items across groups are
        one line, charged to the first group using it. Raises BatchError / BatchPending like judge_many;
        the run state is kept for a re-run.
        """
        for group in groups:
            check_unique(group)
        started = time.monotonic()
        progresses = list(progresses) if progresses is not None else [None] * len(groups)
        ledgers = list(ledgers) if ledgers is not None else [self.new_ledger() for _ in groups]
        verdicts: dict[UKey, Verdict] = {}
        cached: set[UKey] = set()
        todo: dict[UKey, JudgeItem] = {}
        for group, ledger, progress in zip(groups, ledgers, progresses, strict=True):
            ledger.add(items=len(group))
            hits = 0
            for it in group:
                k = ukey(it)
                if k in verdicts or k in todo:
                    hits += k in cached
                    continue
                hit = self.cache.get_verdict(it.qid, it.response_sha256, it.gold_sha256)
                if hit is None:
                    todo[k] = it
                else:
                    verdicts[k], hits = hit, hits + 1
                    cached.add(k)
            if progress:
                progress(hits, len(group))
        charges: dict[str, Any] = {"lines": {}, "item_lines": {}, "gold_cached": set(), "batch_ids": []}
        if todo:
            fanout = _Fanout(progresses)
            for part in self._waves(list(todo.values())):
                for run, its in self._runs_for(part):
                    if run.resumed:
                        log.info(
                            "resuming batch run %s (pending: %s)", run.path.name, (run.state["pending"] or {}).get("batch_id")
                        )
                    verdicts.update(self._judge_run(run, its, charges, fanout))
                    charges["batch_ids"].extend(run.state["batch_ids"])
                    run.finish()
        seconds = round(time.monotonic() - started, 3)
        self._charge(groups, ledgers, verdicts, cached, charges)
        out = []
        for group, ledger, progress in zip(groups, ledgers, progresses, strict=True):
            ledger.add(seconds=seconds)
            if progress:
                progress(len(group), len(group))
            by_qid = {it.qid: verdicts[ukey(it)] for it in group}
            out.append(Verdicts(self.name, self.prompt_version, by_qid, ledger.to_dict(), shared=True))
        return out

    def inflight_members(self) -> set[UKey]:
        """The items of the unfinished runs a restart would resume: a caller bounding its work admits them first."""
        members: set[UKey] = set()
        for run in self._inflight():
            members |= run.members
        return members

    # ---------------------------------------------------------------- runs: resumed first, then new ones

    @staticmethod
    def _waves(items: list[JudgeItem]) -> Iterator[list[JudgeItem]]:
        """Items split so that no two in a wave share a line id with different gold (tracks reusing question ids)."""
        while items:
            wave: dict[tuple[str, str], JudgeItem] = {}
            gold: dict[str, str] = {}
            later: list[JudgeItem] = []
            for it in items:
                if (it.qid, it.response_sha256) in wave or gold.get(it.qid, it.gold_answer_sha256) != it.gold_answer_sha256:
                    later.append(it)
                else:
                    wave[(it.qid, it.response_sha256)] = it
                    gold[it.qid] = it.gold_answer_sha256
            yield list(wave.values())
            items = later

    def _inflight(self) -> list[_Run]:
        """The unfinished runs on disk, oldest first (bounded); an unreadable state file is removed."""
        folder = self.cache.dir / "batches"
        try:
            paths = sorted(folder.glob("*.json"), key=lambda p: (p.stat().st_mtime_ns, p.name))[:MAX_RUN_FILES]
        except OSError:
            return []
        runs = []
        for path in paths:
            rec = _read_state(path)
            if rec is _ABSENT:
                continue
            if not _state_ok(rec, None, self.name) or path.stem != rec["key"][:32]:
                log.warning("batch state %s is unreadable or not this run's; starting afresh", path.name)
                path.unlink(missing_ok=True)
                continue
            runs.append(_Run(path, rec["key"], self.name, rec=rec))
        return runs

    def _runs_for(self, items: list[JudgeItem]) -> Iterator[tuple[_Run, list[JudgeItem]]]:
        """Each unfinished run holding some of `items` with those items, then a new run for the rest."""
        left = {ukey(it): it for it in items}
        for run in self._inflight():
            mine = [it for k, it in left.items() if k in run.members]
            if mine:
                for it in mine:
                    del left[ukey(it)]
                yield run, mine
        if left:
            rest = list(left.values())
            key = self._run_key(rest)
            yield _Run(self.cache.dir / "batches" / f"{key[:32]}.json", key, self.name, [ukey(it) for it in rest]), rest

    def _run_key(self, todo: Sequence[JudgeItem]) -> str:
        what = sorted(ukey(it) for it in todo)
        return hashlib.sha256(json.dumps([self.name, self.prompt_version, what]).encode()).hexdigest()

    # ---------------------------------------------------------------- the three rounds

    def _judge_run(self, run: _Run, todo: list[JudgeItem], charges: dict[str, Any], progress: Any) -> dict[UKey, Verdict]:
        """Verdicts of `todo` (unique items, none cached); what each line cost goes to `charges` for the ledgers."""
        # round 1: gold facts of the questions whose facts are not cached
        gold: dict[tuple[str, str], list[str]] = {}
        gold_lines: dict[str, _Line] = {}
        for it in todo:
            if not it.gold_answer.strip():
                continue
            gk = (it.qid, it.gold_answer_sha256)
            cid = custom_id("gold", it.qid, it.gold_answer_sha256)
            if gk in gold or cid in gold_lines:
                continue
            cached = self.cache.get_gold(it.qid, it.gold_answer_sha256)
            if cached is not None and cid not in run.state["lines"]:
                gold[gk] = cached
                charges["gold_cached"].add(gk)
                continue
            gold_lines[cid] = _Line(
                cid,
                "gold",
                prompts.gold_facts_messages(it.question, it.gold_answer),
                "gold_facts",
                prompts.GOLD_FACTS_SCHEMA,
                replies.gold_facts,
            )
        self._round(run, "gold", gold_lines, progress)
        for it in todo:
            gk = (it.qid, it.gold_answer_sha256)
            cid = custom_id("gold", it.qid, it.gold_answer_sha256)
            if cid in gold_lines and gk not in gold:
                st = run.line(cid)
                charges["lines"][cid] = dict(st)
                if st["failure"] is None:
                    gold[gk] = st["value"]
                    self.cache.put_gold(
                        it.qid,
                        it.gold_answer_sha256,
                        st["value"],
                        judge_model=self.judge_model,
                        prompt_tokens=st["prompt_tokens"],
                        completion_tokens=st["completion_tokens"],
                    )

        # round 2: call 1 of every answer that has gold facts and something to judge
        check_lines: dict[str, _Line] = {}
        for it in todo:
            facts = gold.get((it.qid, it.gold_answer_sha256))
            if facts is not None and it.response.strip() and len(it.response) <= self.max_response_chars:
                cid = custom_id("check", it.qid, it.response_sha256)
                check_lines[cid] = _Line(
                    cid,
                    "check",
                    prompts.response_check_messages(it.question, facts, it.response),
                    "response_check",
                    prompts.RESPONSE_CHECK_SCHEMA,
                    _check_reader(len(facts)),
                )
        self._round(run, "check", check_lines, progress)

        # round 3: call 2 of every answer whose call 1 found a fact
        support_lines: dict[str, _Line] = {}
        for it in todo:
            st = run.state["lines"].get(custom_id("check", it.qid, it.response_sha256))
            if st and st["failure"] is None and st["value"] and st["value"][0]:
                facts = st["value"][0]
                cid = custom_id("support", it.qid, it.response_sha256)
                support_lines[cid] = _Line(
                    cid,
                    "support",
                    prompts.fact_support_messages(it.question, it.gold_answer, it.evidence_facts, facts),
                    "fact_support",
                    prompts.FACT_SUPPORT_SCHEMA,
                    _support_reader(len(facts)),
                )
        self._round(run, "support", support_lines, progress)

        out: dict[UKey, Verdict] = {}
        for it in todo:
            k = ukey(it)
            gold_cid = custom_id("gold", it.qid, it.gold_answer_sha256)
            used = [gold_cid] if gold_cid in gold_lines else []
            for call in ("check", "support"):
                cid = custom_id(call, it.qid, it.response_sha256)
                if cid in run.state["lines"] and (cid in check_lines or cid in support_lines):
                    charges["lines"][cid] = dict(run.state["lines"][cid])
                    used.append(cid)
            charges["item_lines"][k] = used
            v = self._assemble(run, it, gold)
            if v.failure is None:
                self.cache.put_verdict(v)
            out[k] = v
        return out

    def _assemble(self, run: _Run, it: JudgeItem, gold: dict[tuple[str, str], list[str]]) -> Verdict:
        """The verdict the live judge would give for the same replies (LLMJudge._judge_uncached, step by step)."""
        if not it.gold_answer.strip():
            return self._verdict(it, failure="gold answer is empty")
        facts = gold.get((it.qid, it.gold_answer_sha256))
        if facts is None:
            st = run.line(custom_id("gold", it.qid, it.gold_answer_sha256))
            return self._verdict(it, failure=f"gold facts: {st['failure']}")
        if not it.response.strip():
            return self._verdict(it, gold_facts=facts, gold_fact_supported=[False] * len(facts))
        if len(it.response) > self.max_response_chars:
            return self._verdict(
                it, gold_facts=facts, failure=f"response too long to judge ({len(it.response)} > {self.max_response_chars} chars)"
            )
        spent = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}

        def from_line(call: str) -> tuple[Any, str | None]:
            st = run.line(custom_id(call, it.qid, it.response_sha256))
            spent["calls"] += st["answers"]
            spent["prompt_tokens"] += st["prompt_tokens"]
            spent["completion_tokens"] += st["completion_tokens"]
            return st["value"], st["failure"]

        return self._two_calls(it, facts, spent, lambda: from_line("check"), lambda _facts: from_line("support"))

    # ---------------------------------------------------------------- each group's ledger

    def _charge(
        self,
        groups: Sequence[Sequence[JudgeItem]],
        ledgers: Sequence[Ledger],
        verdicts: dict[UKey, Verdict],
        cached: set[UKey],
        charges: dict[str, Any],
    ) -> None:
        """Each group's share in its ledger: the lines of its items, a shared line charged to the first group using it."""
        charged_items: set[UKey] = set()
        charged_lines: set[str] = set()
        for group, ledger in zip(groups, ledgers, strict=True):
            judged_here = False
            for it in group:
                k = ukey(it)
                if k in cached or k in charged_items or k not in charges["item_lines"]:
                    ledger.add(cache_hits=1)  # cached before, or judged for an earlier group of this call
                    continue
                charged_items.add(k)
                judged_here = True
                v = verdicts[k]
                ledger.add_verdict(v)
                if it.gold_answer.strip() and (it.qid, it.gold_answer_sha256) in charges["gold_cached"]:
                    ledger.add(gold_cache_hits=1)
                for cid in charges["item_lines"][k]:
                    st = charges["lines"][cid]
                    if cid.startswith("gold:"):
                        if cid in charged_lines:
                            ledger.add(gold_cache_hits=1)  # extracted for an earlier item: a hit, as live
                            continue
                        ledger.add(
                            gold_calls=st["answers"],
                            gold_prompt_tokens=st["prompt_tokens"],
                            gold_completion_tokens=st["completion_tokens"],
                        )
                    charged_lines.add(cid)
                    ledger.add(retries=st["errors"], malformed=st["malformed"])
                    if isinstance(ledger, BatchLedger):
                        ledger.add(
                            batch_lines=st["sent"],
                            batch_line_failures=st["errors"] + st["malformed"],
                            batch_unreturned=st["unreturned"],
                        )
            if judged_here and isinstance(ledger, BatchLedger):
                ledger.batch_ids.extend(b for b in charges["batch_ids"] if b not in ledger.batch_ids)

    # ---------------------------------------------------------------- one round: submit, poll, collect, resend

    def _round(self, run: _Run, name: str, lines: dict[str, _Line], progress: Progress | None) -> None:
        while True:
            pending = run.state["pending"]
            todo = [lines[cid] for cid in lines if not run.line(cid)["done"]]
            if pending is not None and pending["round"] != name:
                if not todo:  # a resumed run: this round ended before the restart, the pending batch is a later one's
                    return
                # this round is unfinished yet a later one is pending: a state this code does not write
                log.warning("batch %s belongs to round %s, not %s: dropped", pending["batch_id"], pending["round"], name)
                run.state["pending"] = pending = None
            if pending is None:
                if not todo:
                    return
                pending = self._resume_attempt(run, name) or self._submit(run, name, todo[:MAX_LINES_PER_BATCH])
            batch = self._wait(pending, progress)
            self._collect(run, pending, batch, lines)

    def _body(self, run: _Run, line: _Line) -> dict[str, Any]:
        note = run.line(line.custom_id)["note"]
        messages = line.messages if note is None else [*line.messages[:2], prompts.retry_note(note)]
        return self.chat.request_body(messages, self.chat.response_format_for(line.schema_name, line.schema))

    def _submit(self, run: _Run, name: str, todo: list[_Line]) -> dict[str, Any]:
        encoded: list[bytes] = []
        size = 0
        for line in todo:
            request = {"custom_id": line.custom_id, "method": "POST", "url": ENDPOINT, "body": self._body(run, line)}
            data = json.dumps(request, ensure_ascii=False).encode() + b"\n"
            if encoded and size + len(data) > MAX_BATCH_BYTES:
                break  # the rest goes in the next batch of this round
            encoded.append(data)
            size += len(data)
        todo = todo[: len(encoded)]
        payload = b"".join(encoded)
        attempt = secrets.token_hex(12)
        custom_ids = [x.custom_id for x in todo]
        # saved before anything is sent: whatever is lost from here on, a retry or a restart can look for this attempt
        run.state["submitting"] = {"round": name, "attempt": attempt, "custom_ids": custom_ids}
        run.save()
        filename = f"judge-{run.state['key'][:16]}-{name}.jsonl"
        try:
            uploaded = self._api(
                "upload the batch file", lambda: self.client.files.create(file=(filename, payload), purpose="batch")
            )
        except BatchError:
            run.state["submitting"] = None  # no create was sent under this attempt: no batch to look for
            run.save()
            raise
        tries = 0

        def create() -> Any:
            nonlocal tries
            tries += 1
            if tries > 1:  # the last try may have made the batch and lost the answer: look for it before making another
                found = self._find_attempt(attempt)
                if found is not None:
                    return found
            return self.client.batches.create(
                input_file_id=uploaded.id,
                endpoint=ENDPOINT,
                completion_window="24h",
                metadata={"judge": self.name[:500], "round": name, "run": run.state["key"][:32], "attempt": attempt},
            )

        batch = self._api("create the batch", create)
        return self._pending(run, name, batch.id, uploaded.id, custom_ids)

    def _resume_attempt(self, run: _Run, name: str) -> dict[str, Any] | None:
        """The batch a submission left unrecorded (a crash after its create), adopted; None when none is found."""
        submitting = run.state.get("submitting")
        if submitting is None or submitting["round"] != name:
            return None
        attempt = submitting["attempt"]
        batch = self._api(f"look for batch attempt {attempt}", lambda: self._find_attempt(attempt))
        if batch is None:
            # the crash came before the create (or the listing is refused): the upload, if any, is left unused
            log.info("batch attempt %s of round %s made no batch that can be found: submitting afresh", attempt, name)
            return None
        log.info("batch %s: found for attempt %s of round %s, adopted", batch.id, attempt, name)
        return self._pending(run, name, batch.id, getattr(batch, "input_file_id", None), submitting["custom_ids"])

    def _pending(self, run: _Run, name: str, batch_id: str, input_file_id: Any, custom_ids: list[str]) -> dict[str, Any]:
        pending = {
            "round": name,
            "batch_id": batch_id,
            "input_file_id": input_file_id if isinstance(input_file_id, str) else None,
            "custom_ids": custom_ids,
            "sent_at": time.time(),  # the status line's "waiting for the provider for ...", across restarts
        }
        run.state["pending"] = pending
        run.state["submitting"] = None
        run.state["batch_ids"].append(batch_id)
        for cid in custom_ids:
            run.line(cid)["sent"] += 1
        run.save()  # from here on a restart polls this batch
        log.info("batch %s: round %s, %d lines", batch_id, name, len(custom_ids))
        return pending

    def _find_attempt(self, attempt: str) -> Any:
        """The server's batch carrying this attempt id in its metadata, or None (not among the first MAX_LISTED
        listed, or the service does not list batches). A transient failure is raised, for the caller's retries."""
        lister = getattr(self.client.batches, "list", None)
        if self._listing_refused:
            return None
        if lister is None:
            return self._no_listing("the transport has no listing")
        try:
            # the page iterates on through the next pages; read whole up to the bound whatever the order, as an
            # early stop on creation times would be safe for one listing order only
            for batch in islice(lister(limit=100), MAX_LISTED):
                # the server's data, strangers' batches included, of any type: only strings equal to ours match
                meta = getattr(batch, "metadata", None)
                mine = isinstance(meta, dict) and isinstance(meta.get("attempt"), str) and meta["attempt"] == attempt
                if mine and isinstance(getattr(batch, "id", None), str):
                    return batch
        except openai.APIStatusError as e:
            if e.status_code in (408, 409, 429) or e.status_code >= 500:
                raise
            return self._no_listing(f"HTTP {e.status_code}")
        except (TypeError, AttributeError, ValueError, openai.APIResponseValidationError) as e:  # not a list of batches
            return self._no_listing(f"an unreadable listing ({type(e).__name__})")
        return None

    def _no_listing(self, why: str) -> None:
        self._listing_refused = True  # not asked again by this judge
        log.warning("cannot list batches (%s): a batch whose create lost its answer may be made again", why)

    def _wait(self, pending: dict[str, Any], progress: Progress | None) -> Any:
        started = time.monotonic()
        batch_id = pending["batch_id"]
        sent_at = pending.get("sent_at")  # absent from an older state, or garbled: the wait counts from now
        plausible = isinstance(sent_at, (int, float)) and not isinstance(sent_at, bool) and 0 < sent_at <= time.time()
        since = sent_at if plausible else time.time()
        while True:
            batch = self._api(f"poll batch {batch_id}", lambda: self.client.batches.retrieve(batch_id), pending=batch_id)
            counts = batch.request_counts
            total = len(pending["custom_ids"])
            done = min(total, (counts.completed + counts.failed) if counts else 0)
            on_batch = getattr(progress, "on_batch", None)
            if on_batch is not None:
                on_batch(batch_id, done, total, since=since, waiting=batch.status not in TERMINAL)
            if batch.status in TERMINAL:
                return batch
            if time.monotonic() - started >= self.max_wait_seconds:
                raise BatchPending(f"batch {batch_id} is still {batch.status}; run again to resume polling it", batch_id)
            self._sleep(self.poll_seconds)

    def _collect(self, run: _Run, pending: dict[str, Any], batch: Any, lines: dict[str, _Line]) -> None:
        asked = set(pending["custom_ids"])
        got: dict[str, dict[str, Any]] = {}
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                for rec in self._read_records(file_id, batch.id, len(asked)):
                    cid = rec.get("custom_id")
                    if not isinstance(cid, str) or cid not in asked:
                        self._ignored(batch.id, f"a line not asked for ({str(cid)[:80]!r})")
                    elif cid not in lines:
                        continue  # a resumed run's line whose submission is no longer asked for: nobody reads it
                    elif _never_run(rec):
                        continue  # an expired / cancelled batch's unrun request: sent again below, like a missing line
                    elif cid in got:
                        self._ignored(batch.id, f"a repeated line ({cid})")
                    else:
                        got[cid] = rec
        self._ignored_done(batch.id)
        why = batch.status
        errors = getattr(getattr(batch, "errors", None), "data", None) or []
        if errors:
            why += f": {str(getattr(errors[0], 'message', '') or '')[:200]}"
        for cid in pending["custom_ids"]:
            if cid not in lines:
                continue
            st = run.line(cid)
            if cid in got:
                self._take(run, lines[cid], st, got[cid])
            else:
                st["unreturned"] += 1
                if st["unreturned"] > self.max_resubmits:
                    st["done"], st["failure"] = True, f"not answered by {st['unreturned']} batches (last one {why})"
        run.state["pending"] = None
        run.save()

    def _take(self, run: _Run, line: _Line, st: dict[str, Any], rec: dict[str, Any]) -> None:
        """One returned line: a value, or a failure to resend (bounded), or a recorded failure."""
        response = rec.get("response")
        status = response.get("status_code") if isinstance(response, dict) else None
        body = response.get("body") if isinstance(response, dict) else None
        if rec.get("error") or status != 200 or not isinstance(body, dict):
            st["errors"] += 1
            if st["errors"] > self.line_retries:
                st["done"], st["failure"] = True, f"batch line failed {st['errors']} times: {_describe(rec, status)}"
            return
        st["answers"] += 1
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        for key in ("prompt_tokens", "completion_tokens"):
            n = usage.get(key)
            st[key] += n if type(n) is int and 0 <= n < 10**9 else 0
        try:
            value = read_reply(ChatCompletion.model_validate(body), line.schema, line.interpret)
        except (MalformedReply, IndexError, AttributeError, pydantic.ValidationError) as e:
            problem = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
            st["malformed"] += 1
            if st["malformed"] > self.malformed_retries:
                st["done"], st["failure"] = True, f"malformed reply after {st['malformed']} attempts: {problem}"
            else:
                st["note"] = problem
            return
        st["done"], st["value"] = True, value

    # ---------------------------------------------------------------- reading back, bounded

    def _read_records(self, file_id: str, batch_id: str, asked: int) -> list[dict[str, Any]]:
        """The JSON objects of an output / error file, bounded in size; anything else is logged and skipped."""
        cap = 16 * 2**20 + asked * 64 * 1024
        records: list[dict[str, Any]] = []

        def read() -> None:
            records.clear()
            with self.client.files.with_streaming_response.content(file_id) as resp:
                for raw in _bounded_lines(resp.iter_bytes(), cap, self.max_line_bytes, lambda why: self._ignored(batch_id, why)):
                    try:
                        rec = json.loads(raw)
                    except (ValueError, RecursionError):
                        self._ignored(batch_id, "a line that is not JSON")
                        continue
                    if isinstance(rec, dict):
                        records.append(rec)
                    else:
                        self._ignored(batch_id, "a line that is not a JSON object")

        self._api(f"read file {file_id} of batch {batch_id}", read, pending=batch_id)
        return records

    def _ignored(self, batch_id: str, what: str) -> None:
        counts = self._ignored_counts
        counts[batch_id] = counts.get(batch_id, 0) + 1
        if counts[batch_id] <= _LOGGED_IGNORED:
            log.warning("batch %s: ignored %s", batch_id, what)

    def _ignored_done(self, batch_id: str) -> None:
        n = self._ignored_counts.pop(batch_id, 0)
        if n > _LOGGED_IGNORED:
            log.warning("batch %s: %d lines ignored in all", batch_id, n)

    # ---------------------------------------------------------------- the service, with the live judge's retry policy

    def _api(self, what: str, call: Callable[[], Any], pending: str | None = None) -> Any:
        """`call()`, transient errors retried with backoff; a refusal is a BatchError, an unreachable service
        while a batch is pending a BatchPending (the batch may be fine: a re-run polls it again)."""
        attempt = 0
        while True:
            try:
                return call()
            except _FATAL as e:
                raise BatchError(f"{what}: HTTP {e.status_code} {type(e).__name__}: {str(e)[:200]}") from None
            except (OSError, ValueError) as e:  # the batch folder (JUDGE_BATCH_DIR): missing or unreadable file
                raise BatchError(f"{what}: {getattr(e, 'strerror', None) or str(e)[:200]}") from None
            except (openai.APIConnectionError, openai.APIStatusError) as e:
                status = getattr(e, "status_code", None)
                if status is not None and status not in (408, 409, 429) and status < 500:
                    raise BatchError(f"{what}: HTTP {status}: {str(e)[:200]}") from None
                attempt += 1
                if attempt >= self.policy.max_attempts:
                    problem = f"{what}: {'HTTP ' + str(status) if status else 'no answer'} after {attempt} attempts"
                    if pending is not None:
                        raise BatchPending(f"{problem}; run again to resume batch {pending}", pending) from None
                    raise BatchError(problem) from None
                self._sleep(self.policy.delay(attempt))


class _Fanout:
    """The progress of every group of a run: each sees the batch being polled and its lines."""

    def __init__(self, progresses: Sequence[Progress | None]) -> None:
        self.targets = [f for p in progresses if (f := getattr(p, "on_batch", None)) is not None]

    def on_batch(self, batch_id: str, lines_done: int, lines_total: int, **state: Any) -> None:
        for target in self.targets:
            target(batch_id, lines_done, lines_total, **state)


def _check_reader(n_gold: int) -> Callable[[dict[str, Any]], list[Any]]:
    # a list, not the live tuple: the value is kept in the JSON state between rounds and restarts
    return lambda value: list(replies.response_check(value, n_gold))


def _support_reader(n_facts: int) -> Callable[[dict[str, Any]], list[bool]]:
    return lambda value: replies.fact_support(value, n_facts)


def _bounded_lines(chunks: Iterator[bytes], cap: int, max_line: int, ignored: Callable[[str], None]) -> Iterator[bytes]:
    """Lines of a byte stream, reading at most `cap` bytes; a line longer than `max_line` is skipped whole."""
    buf = b""
    skipping = False
    read = 0
    for chunk in chunks:
        read += len(chunk)
        if read > cap:
            ignored(f"the rest of a file past {cap} bytes")
            return
        buf += chunk
        while True:
            cut = buf.find(b"\n")
            if cut < 0:
                break
            line, buf = buf[:cut], buf[cut + 1 :]
            if skipping:
                skipping = False
            elif len(line) > max_line:
                ignored(f"a line longer than {max_line} bytes")
            elif line.strip():
                yield line
        if len(buf) > max_line:
            if not skipping:
                ignored(f"a line longer than {max_line} bytes")
            skipping, buf = True, b""
    if len(buf) > max_line:
        ignored(f"a line longer than {max_line} bytes")
    elif buf.strip() and not skipping:
        yield buf


def _never_run(rec: dict[str, Any]) -> bool:
    err = rec.get("error")
    return isinstance(err, dict) and err.get("code") in ("batch_expired", "batch_cancelled")


def _describe(rec: dict[str, Any], status: Any) -> str:
    err = rec.get("error")
    if isinstance(err, dict):
        return f"{str(err.get('code'))[:60]}: {str(err.get('message'))[:200]}"
    response = rec.get("response") if isinstance(rec.get("response"), dict) else {}
    body = response.get("body") if isinstance(response.get("body"), dict) else {}
    message = body.get("error", {}).get("message") if isinstance(body.get("error"), dict) else None
    return f"HTTP {status}" + (f": {str(message)[:200]}" if message else "")
