"""One judged submission's verdicts and the ledger of the run that made them: what RESULTS_REPO shares.

    <results>/verdicts/<submission sha256>.<judge>.json
        {"format": 1, "sha256", "judge", "prompt_version", "judge_ledger": {...}, "verdicts": [<Verdict>, ...]}

Verdicts are the one expensive part of a result (an LLM's calls); every metric
is cheap to recompute from the submission and them. So a fresh board takes only
these files from RESULTS_REPO and rescores each submission with the record's
verdicts (`Record.verdicts_for`: nothing sent, the ledger the recorded one). A
record that does not answer every item of its submission (the gold changed, a
judge failure) lends its verdicts to the judge's own cache instead, and the
judge pays only for the rest.

Everything in a record is checked on read (size before parsing, then shape,
identity and each verdict's own consistency); a writer of RESULTS_REPO can
still forge a verdict's flags, which is what the README's trust model says.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .base import check_unique
from .verdict import JudgeItem, Verdict, Verdicts

RECORDS_DIR = "verdicts"
FORMAT = 1
# A verdict holds a question's gold facts and an answer's facts (answers past 32,000 characters are not
# judged): ~2 KB in practice, 20 KB at worst, so 1,742 unidoc questions need ~35 MB at the very most.
MAX_BYTES = 48 * 2**20
MAX_VERDICTS = 200_000
_NAME = re.compile(r"^([0-9a-f]{64})\.([A-Za-z0-9_-]{1,100})\.json$")
_LEDGER_KEYS = 64  # a ledger has ~20 counts; more is not one
_LEDGER_TEXT = frozenset(("judge", "judge_model", "prompt_version", "mode"))  # every other field is a count
_LEDGER_IDS = frozenset(("batch_ids",))
_TEXT = 200

UKey = tuple[str, str, str]  # (qid, response sha256, gold sha256): what a verdict answers


def safe_judge(name: str) -> str:
    """The judge's name as it stands in file names (the results cache's rule)."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def file_name(sha256: str, judge: str) -> str:
    return f"{sha256}.{safe_judge(judge)}.json"


def is_record_path(rel: str) -> bool:
    """Whether `rel` (relative to the results folder) names a record: the one kind a pull installs."""
    folder, _, name = rel.partition("/")
    return folder == RECORDS_DIR and _NAME.match(name) is not None


def _ukey(qid: str, response_sha256: str, gold_sha256: str) -> UKey:
    return (qid, response_sha256, gold_sha256)


@dataclass(frozen=True)
class Record:
    sha256: str
    judge: str
    prompt_version: str
    ledger: dict[str, Any]
    verdicts: tuple[Verdict, ...]

    def to_bytes(self) -> bytes:
        doc = {
            "format": FORMAT,
            "sha256": self.sha256,
            "judge": self.judge,
            "prompt_version": self.prompt_version,
            "judge_ledger": self.ledger,
            "verdicts": [v.to_dict() for v in self.verdicts],
        }
        return json.dumps(doc, ensure_ascii=False, sort_keys=True).encode()

    def by_item(self) -> dict[UKey, Verdict]:
        return {_ukey(v.qid, v.response_sha256, v.gold_sha256): v for v in self.verdicts}

    def verdicts_for(self, judge: Any, items: Sequence[JudgeItem]) -> Verdicts | None:
        """The verdicts of `items` as `judge` (its name and prompt version) made them, with the recorded run's ledger;
        None when the record is another judge's or does not answer every item (nothing is sent either way)."""
        if (self.judge, self.prompt_version) != (judge.name, judge.prompt_version):
            return None
        found = self.by_item()
        keys = [_ukey(it.qid, it.response_sha256, it.gold_sha256) for it in items]
        if not all(k in found for k in keys):
            return None
        check_unique(items)
        by_qid = {it.qid: found[k] for it, k in zip(items, keys, strict=True)}
        return Verdicts(self.judge, self.prompt_version, by_qid, dict(self.ledger), shared=False)


def _ledger_problem(ledger: Any) -> str | None:
    if not isinstance(ledger, dict) or len(ledger) > _LEDGER_KEYS:
        return "its ledger is not an object of counts"
    for key, value in ledger.items():
        if not isinstance(key, str) or len(key) > 40:
            return "its ledger has a bad key"
        if key in _LEDGER_TEXT:
            if not isinstance(value, str) or len(value) > _TEXT:
                return f"its ledger's {key!r} is not a short text"
        elif key in _LEDGER_IDS:
            if (
                not isinstance(value, list)
                or len(value) > 10_000
                or not all(isinstance(v, str) and len(v) <= _TEXT for v in value)
            ):
                return f"its ledger's {key!r} is not a list of ids"
        elif isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
            return f"its ledger's {key[:40]!r} is not a count"
    return None


def verdict_problem(v: Verdict, judge: str, prompt_version: str) -> str | None:
    """Why a (well-typed) verdict cannot be served as this judge's (the judge cache's own rule, plus failures)."""
    if len(v.gold_facts) != len(v.gold_fact_supported) or len(v.response_facts) != len(v.response_fact_supported):
        return "facts and flags differ in length"
    if (v.judge, v.prompt_version) != (judge, prompt_version):
        return "is another judge's or prompt version's"
    if v.failure is not None:
        return "is a judge failure (never kept: a later run retries it)"
    return None


def parse(data: bytes, name: str) -> Record | str:
    """The record stored under `name` (a file name), or why it is not one. `data` is within MAX_BYTES."""
    m = _NAME.match(name)
    if m is None:
        return "is not named <sha256>.<judge>.json"
    if len(data) > MAX_BYTES:
        return f"is {len(data):,} bytes, over the {MAX_BYTES:,} a record may have"
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as exc:
        return f"is unreadable ({type(exc).__name__})"
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return f"is not a format-{FORMAT} verdict record"
    sha, judge, pv, verdicts = (doc.get(k) for k in ("sha256", "judge", "prompt_version", "verdicts"))
    if not (isinstance(sha, str) and isinstance(judge, str) and isinstance(pv, str)) or len(judge) > _TEXT or len(pv) > _TEXT:
        return "lacks its identity (sha256, judge, prompt version)"
    if (sha, safe_judge(judge)) != m.groups():
        return "belongs to another submission or judge than its name says"
    problem = _ledger_problem(doc.get("judge_ledger"))
    if problem is not None:
        return problem
    if not isinstance(verdicts, list) or len(verdicts) > MAX_VERDICTS:
        return "has no list of verdicts"
    out = []
    for i, raw in enumerate(verdicts):
        try:
            v = Verdict.from_dict(raw)
        except ValueError as exc:
            return f"has a bad verdict #{i + 1} ({str(exc)[:80]})"
        problem = verdict_problem(v, judge, pv)
        if problem is not None:
            return f"has a verdict #{i + 1} that {problem}"
        out.append(v)
    return Record(sha, judge, pv, doc["judge_ledger"], tuple(out))


def read(path: Path, name: str | None = None) -> Record | str:
    """The record in the file at `path`: its size is checked before a byte is parsed."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            return f"is {size:,} bytes, over the {MAX_BYTES:,} a record may have"
        data = path.read_bytes()
    except OSError as exc:
        return f"is unreadable ({type(exc).__name__})"
    return parse(data, name or path.name)
