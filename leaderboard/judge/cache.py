"""On-disk judge cache: gold facts and verdicts, one small JSON file each.

Layout (a plain folder, publishable with the results, mergeable by copying):

    <root>/<judge slug>/<prompt version>/gold/<qid>.json
    <root>/<judge slug>/<prompt version>/verdicts/<qid>/<sha256 of response>.json

One file per record, written to a temp file and renamed, so concurrent writers
(threads, or the app and the CLI at once) never leave a half-written record and
a lookup is one file read, however many submissions the board holds. A record
whose gold hash, judge or prompt version does not match is a miss (the gold
changed, or a file was copied to the wrong place), never a wrong answer.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from .text import sha256_text
from .verdict import Verdict

log = logging.getLogger(__name__)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(name: str) -> str:
    """File-system-safe name; the exact name is stored inside each record and checked on read."""
    return _UNSAFE.sub("_", name).strip("._") or "judge"


def _safe_qid(qid: str) -> str:
    s = slug(qid)
    return s if s == qid else f"{s}-{sha256_text(qid)[:12]}"


def _write_atomic(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(record, f, ensure_ascii=False, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


_ABSENT = object()


def _read(path: Path) -> Any:
    """The parsed record, _ABSENT when there is none, None when it is unreadable (truncated, garbage)."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return _ABSENT
    except (OSError, ValueError, RecursionError):
        return None


class JudgeCache:
    def __init__(self, root: str | os.PathLike[str], judge: str, prompt_version: str) -> None:
        self.judge = judge
        self.prompt_version = prompt_version
        self.dir = Path(root) / slug(judge) / slug(prompt_version)
        self._reported: set[Path] = set()  # bad records already logged: once per process

    def _bad(self, path: Path, problem: str) -> None:
        """A corrupt or misplaced record is a miss (judged again and overwritten); say so once."""
        if path not in self._reported:
            self._reported.add(path)
            log.warning("judge cache: %s %s; judging again", path.relative_to(self.dir), problem)

    # gold facts: the per-question artefact every submission shares
    def _gold_path(self, qid: str) -> Path:
        return self.dir / "gold" / f"{_safe_qid(qid)}.json"

    def get_gold(self, qid: str, gold_answer_sha256: str) -> list[str] | None:
        path = self._gold_path(qid)
        rec = _read(path)
        if rec is _ABSENT:
            return None
        if not (
            isinstance(rec, dict)
            and rec.get("judge") == self.judge
            and rec.get("prompt_version") == self.prompt_version
            and rec.get("qid") == qid
            and isinstance(rec.get("facts"), list)
            and rec["facts"]
            and all(isinstance(f, str) for f in rec["facts"])
        ):
            self._bad(path, "is unreadable or not this question's gold facts")
            return None
        if rec.get("gold_answer_sha256") != gold_answer_sha256:
            return None  # the gold changed: an ordinary miss
        return rec["facts"]

    def put_gold(self, qid: str, gold_answer_sha256: str, facts: list[str], **meta: Any) -> None:
        _write_atomic(
            self._gold_path(qid),
            {
                "judge": self.judge,
                "prompt_version": self.prompt_version,
                "qid": qid,
                "gold_answer_sha256": gold_answer_sha256,
                "facts": facts,
                **meta,
            },
        )

    # verdicts: one per (qid, response)
    def _verdict_path(self, qid: str, response_sha256: str) -> Path:
        return self.dir / "verdicts" / _safe_qid(qid) / f"{response_sha256}.json"

    def get_verdict(self, qid: str, response_sha256: str, gold_sha256: str) -> Verdict | None:
        path = self._verdict_path(qid, response_sha256)
        rec = _read(path)
        if rec is _ABSENT:
            return None
        try:
            v = Verdict.from_dict(rec)
        except ValueError as exc:
            self._bad(path, f"is unreadable ({str(exc)[:80] if rec is not None else 'not JSON'})")
            return None
        if (
            len(v.gold_facts) != len(v.gold_fact_supported)
            or len(v.response_facts) != len(v.response_fact_supported)
            or (v.judge, v.prompt_version, v.qid, v.response_sha256) != (self.judge, self.prompt_version, qid, response_sha256)
        ):
            self._bad(path, "does not match its place (facts and flags differ in length, or another judge, question or response)")
            return None
        if v.gold_sha256 != gold_sha256 or v.failure is not None:
            return None  # the gold changed, or a failure written by hand: an ordinary miss
        return v

    def put_verdict(self, verdict: Verdict) -> None:
        if verdict.failure is not None:
            raise ValueError("failures are not cached: a later run must retry them")
        _write_atomic(self._verdict_path(verdict.qid, verdict.response_sha256), verdict.to_dict())
