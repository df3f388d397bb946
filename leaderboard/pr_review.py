"""The board's side of a pull-request submission: each file validated, checked and scored like an upload.

store/hub_prs.py finds the files a pull request adds and posts what this module says about them. A
file is held to the rules of the Submit tab: the same validator, the rejected-uploads allowance
(INVALID_SUBMISSIONS_PER_DAY), the daily limit (SUBMISSIONS_PER_DAY), no predictions already on
the board (duplicates by fingerprint, pending pull requests included), no system name another
submitter uses. A valid file is scored here, once (the result goes to the results cache, so its
"pending review" entry and, after the merge, its board entry reuse it).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from . import ranking
from .problems import SubmissionError
from .scoring import content_hash, score_checked
from .store import markdown as md
from .store.hub_prs import PullRequest, PullRequestFile, Verdict
from .submission import read_file
from .tracks import TRACKS

if TYPE_CHECKING:
    from .service import Board


def permalink(board_url: str | None, entry_id: str) -> str:
    """Where the system's page is: the board's System tab, or just its id when the board's address is unknown."""
    return f"{board_url}/?tab=system&sys={entry_id}" if board_url else f"system id `{entry_id}`"


def judge_files(board: Board, pr: PullRequest, files: list[PullRequestFile], now: datetime | None = None) -> Verdict:
    """Validate and score every file; ok only when all are valid. The lines are the comment's body (markdown, every
    piece of submitted text in it inert: see store/markdown.py)."""
    now = now or datetime.now(UTC)
    lines: list[str] = []
    ok = True
    accepted: dict[str, list[str]] = {}  # track -> fingerprints accepted earlier in this pull request
    for f in files:
        problems, scored = _judge_file(board, pr, f, now, accepted)
        name = md.code(f.path)
        if problems:
            ok = False
            lines += [f"- {name}: {p}" for p in problems]
        else:
            lines += [f"- {name}:", *(f"  {line}" for line in scored)]
    return Verdict(ok, lines)


def _judge_file(
    board: Board, pr: PullRequest, f: PullRequestFile, now: datetime, accepted: dict[str, list[str]]
) -> tuple[list[str], list[str]]:
    """(problems, score lines) of one file, as markdown: a message that may quote the file is one code span."""
    ledger = board.invalid_ledger
    if ledger.exhausted(f.track, pr.author):  # before validating: the allowance bounds the work, as in the Submit tab
        return [md.code(ledger.refusal(f.track, pr.author))], []
    try:
        data = read_file(Path(f.local_path), board.rescorer.max_bytes)
    except SubmissionError as exc:
        ledger.add(f.track, pr.author)
        return [md.code(exc.problem)], []
    except OSError:
        return ["the downloaded file could not be read; it is reviewed again at the next push"], []
    checked = board._validate(data, f.path.rsplit("/", 1)[-1])
    problems = [md.code(e) for e in checked.errors] if not checked.ok else []
    if checked.ok and checked.track_name != f.track:
        problems.append(f"the file declares track {md.code(repr(checked.track_name))} but sits under `submissions/{f.track}/`")
    if checked.ok and not problems:
        problems += _admission_problems(board, pr, f, checked, now, accepted)
    if problems:
        ledger.add(f.track, pr.author)
        return problems, []
    accepted.setdefault(f.track, []).append(checked.fingerprint or "")
    result = score_checked(checked, content_hash(data))
    board.rescorer.cache.store(result)
    return [], _score_lines(board, f, result.summary)


def _admission_problems(board: Board, pr: PullRequest, f: PullRequestFile, checked, now: datetime, accepted) -> list[str]:
    """Duplicates, a name taken, the daily limit: judged against the board's entries other than this pull request's."""
    from .service import _name_key  # the Submit tab's rule for names

    others = [e for e in board.entries(f.track) if e.pull_request != pr.num]
    problems = []
    fingerprint = checked.fingerprint
    same = [e for e in others if fingerprint and e.summary.get("fingerprint") == fingerprint]
    if same:
        first = min(same, key=ranking.arrival)
        problems.append(
            f"duplicate: these predictions are already on the {f.track} track as submission {first.id} "
            f"({md.code(first.name, 100)}); the same predictions are ranked once"
        )
    elif fingerprint and fingerprint in accepted.get(f.track, []):
        problems.append("duplicate: the same predictions as another file of this pull request")
    wanted = _name_key((checked.system or {}).get("name"))
    taken = next((e for e in others if wanted and e.user != pr.author and _name_key(e.system.get("name")) == wanted), None)
    if taken is not None:
        problems.append(
            f"system.name: {md.code(checked.system.get('name'), 100)} is already used on the {f.track} track by "
            f"{md.code(taken.user or 'another submitter')} (submission {taken.id}); choose another name"
        )
    today = now.astimezone(UTC).date().isoformat()
    used = sum(1 for e in others if e.user == pr.author and (e.submitted_at or "").startswith(today))
    used += len(accepted.get(f.track, []))
    limit = board.store_settings.submissions_per_day
    if used >= limit:
        problems.append(f"{pr.author} has {used} submission(s) to the {f.track} track today; the limit is {limit} a day")
    return problems


def _score_lines(board: Board, f: PullRequestFile, summary: dict) -> list[str]:
    track = TRACKS[summary["track"]]
    system = summary.get("system") or {}
    n, missing = summary.get("n") or 0, summary.get("missing") or 0
    lines = [f"- {md.code(system.get('name', '?'), 100)} on {track.title}: {n - missing} of {n} units answered"]
    overall, ci = summary.get("overall", {}), summary.get("ci", {})
    for m in track.metrics:
        if m.key in overall:
            low_high = ci.get(m.key)
            bounds = f" (95% CI {low_high[0]:.3f} to {low_high[1]:.3f})" if low_high else ""
            lines.append(f"- {m.label}: {overall[m.key]:.3f}{bounds}")
        elif m.needs_judge:
            lines.append(f"- {m.label}: not judged yet (judged once on the board)")
    for c in track.extra_columns:  # e.g. vdr coverage: a partial run's headline counts missing datasets as 0
        if c.shown and isinstance(overall.get(c.key), (int, float)):
            value = overall[c.key]
            lines.append(f"- {c.label}: {value * 100:.{c.digits}f}%" if c.percent else f"- {c.label}: {value:.{c.digits}f}")
    lines.append(f"- on the board: {permalink(board.settings.board_url, f.sha256[:12])}")
    return lines
