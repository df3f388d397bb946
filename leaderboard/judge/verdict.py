"""What goes into a judge (JudgeItem), what comes out (Verdict) and what a run cost (Ledger).

Verdicts are plain JSON-serialisable records: they are cached on disk, published
with results and re-read by a fresh deployment, so `from_dict` checks types
instead of trusting the file.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from typing import Any

from .text import sha256_text


@dataclass(frozen=True)
class JudgeItem:
    """One (question, response) to judge.

    `gold_answer` is the question's `complete_answer` already flattened to text;
    `evidence_facts` are the `facts` of its used `chunk_used` items.
    """

    qid: str
    question: str
    gold_answer: str
    evidence_facts: list[str]
    response: str

    @property
    def response_sha256(self) -> str:
        return sha256_text(self.response)

    @property
    def gold_sha256(self) -> str:
        """Hash of everything gold a verdict depends on: a changed gold invalidates cached verdicts."""
        return _gold_hash(self.question, self.gold_answer, tuple(self.evidence_facts))

    @property
    def gold_answer_sha256(self) -> str:
        """Hash of what gold-fact extraction reads (question + gold answer)."""
        return _gold_hash(self.question, self.gold_answer, None)


@lru_cache(maxsize=8192)
def _gold_hash(question: str, gold_answer: str, evidence: tuple[str, ...] | None) -> str:
    # The same gold is hashed once per submission otherwise: 1,742 x every system.
    parts: list[object] = [question, gold_answer] if evidence is None else [question, gold_answer, list(evidence)]
    return sha256_text(json.dumps(parts))


@dataclass
class Verdict:
    judge: str  # e.g. "openai:gpt-4o-mini" or "lexical-v1": the board never mixes judges
    judge_model: str
    prompt_version: str
    qid: str
    response_sha256: str
    gold_facts: list[str]
    gold_fact_supported: list[bool]
    response_facts: list[str]
    response_fact_supported: list[bool]
    failure: str | None = None  # set => not scored, counted as a judge failure
    calls: int = 0  # model replies this verdict consumed (gold extraction excluded)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    gold_sha256: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> Verdict:
        """Strict: a record of the wrong shape raises ValueError (a corrupt cache file is a miss)."""
        if not isinstance(data, dict):
            raise ValueError("verdict must be an object")
        kinds: dict[str, tuple[type, ...]] = {
            "judge": (str,),
            "judge_model": (str,),
            "prompt_version": (str,),
            "qid": (str,),
            "response_sha256": (str,),
            "failure": (str, type(None)),
            "calls": (int,),
            "prompt_tokens": (int,),
            "completion_tokens": (int,),
            "gold_sha256": (str,),
        }
        lists = {"gold_facts": str, "gold_fact_supported": bool, "response_facts": str, "response_fact_supported": bool}
        out: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in data:
                if f.name in lists or f.name in ("judge", "judge_model", "prompt_version", "qid", "response_sha256"):
                    raise ValueError(f"verdict lacks {f.name!r}")
                continue
            value = data[f.name]
            if f.name in lists:
                if not isinstance(value, list) or not all(type(v) is lists[f.name] for v in value):
                    raise ValueError(f"verdict field {f.name!r} must be a list of {lists[f.name].__name__}")
            elif not isinstance(value, kinds[f.name]) or (isinstance(value, bool) and bool not in kinds[f.name]):
                raise ValueError(f"verdict field {f.name!r} has the wrong type")
            out[f.name] = value
        return cls(**out)


_LEDGER_LOCK = threading.Lock()  # module-level so a Ledger's __dict__ stays plain JSON


@dataclass
class Ledger:
    """What one judging run cost; the caller stores it with the submission's results.

    `calls`/tokens are the per-response judge calls; the once-per-question gold
    fact extraction is counted apart (`gold_*`) because only the first
    submission to meet a question pays it. Every field is a plain str/int/float.
    """

    judge: str = ""
    judge_model: str = ""
    prompt_version: str = ""
    items: int = 0
    cache_hits: int = 0  # verdicts served from the cache: zero calls
    judged: int = 0  # verdicts produced by this run, failures included
    failures: int = 0
    calls: int = 0  # model replies received (malformed ones too: they are billed)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    gold_calls: int = 0
    gold_cache_hits: int = 0
    gold_prompt_tokens: int = 0
    gold_completion_tokens: int = 0
    retries: int = 0  # 429 / 5xx / timeouts / connection errors retried
    malformed: int = 0  # replies rejected by the strict parser
    seconds: float = 0.0

    def add(self, **counts: float) -> None:
        with _LEDGER_LOCK:
            for key, value in counts.items():
                setattr(self, key, getattr(self, key) + value)

    def add_verdict(self, v: Verdict) -> None:
        """Count one verdict this run produced (a failure too): its calls and tokens are billed."""
        self.add(
            judged=1,
            failures=int(v.failure is not None),
            calls=v.calls,
            prompt_tokens=v.prompt_tokens,
            completion_tokens=v.completion_tokens,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Verdicts:
    """One submission's verdicts as scoring takes them: data, never a judge to call.

    Live judging (`verdicts_of`), a batch run (`BatchJudge.judge_groups`) and a verdict record
    (`record.Record.verdicts_for`) all make one; `scoring.score_checked` reads it.
    """

    judge: str  # the judge's name: the results key's and the summary's "judge"
    prompt_version: str
    by_qid: dict[str, Verdict]
    ledger: dict[str, Any] | None = None  # what the run cost (Ledger.to_dict), stored with the results
    # True: an LLM judge's own run, whose verdicts RESULTS_REPO shares as a record (judge/record.py); False for the
    # lexical approximation (recomputed in no time) and for verdicts read from a record (shared already)
    shared: bool = False
