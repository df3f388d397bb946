"""The board's side of a pull-request submission: each file validated, checked and scored like an upload.

store/hub_prs.py finds the files a pull request adds and posts what this module says about them. A
file is held to the rules of the Submit tab: the same validator, the rejected-uploads allowance
(INVALID_SUBMISSIONS_PER_DAY), the daily limit (SUBMISSIONS_PER_DAY), no predictions already on
the board (duplicates by fingerprint, pending pull requests included), no system name another
submitter uses. A valid file is scored here, once (the result goes to the results cache, so its
"pending review" entry and, after the merge, its board entry reuse it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from .admission import Admission
from .limits import InvalidLedger
from .problems import SubmissionError
from .scoring import Checked, ResultsCache, content_hash, score_checked
from .store import markdown as md
from .store.hub_prs import PullRequest, PullRequestFile, ReviewOutcome
from .submission import read_file
from .tracks import TRACKS


@dataclass(frozen=True)
class ReviewTools:
    """What reviewing needs of the board, handed over by it: the Submit tab's validator, rules and allowances."""

    validate: Callable[[bytes, str], Checked]  # the Submit tab's validator (one validation at a time)
    admission: Callable[[str, int], Admission]  # (track, pull request number) -> the rules over the other entries
    ledger: InvalidLedger  # the rejected-uploads allowance
    cache: ResultsCache  # where a scored file's result goes
    max_bytes: int  # a submission file's size cap
    board_url: str | None = None


def permalink(board_url: str | None, entry_id: str) -> str:
    """Where the system's page is: the board's System tab, or just its id when the board's address is unknown."""
    return f"{board_url}/?tab=system&sys={entry_id}" if board_url else f"system id `{entry_id}`"


def review_files(tools: ReviewTools, pr: PullRequest, files: list[PullRequestFile], now: datetime | None = None) -> ReviewOutcome:
    """Validate and score every file; ok only when all are valid. The lines are the comment's body (markdown, every
    piece of submitted text in it inert: see store/markdown.py)."""
    now = now or datetime.now(UTC)
    lines: list[str] = []
    ok = True
    accepted: dict[str, list[str]] = {}  # track -> fingerprints accepted earlier in this pull request
    for f in files:
        problems, scored = _review_file(tools, pr, f, now, accepted)
        name = md.code(f.path)
        if problems:
            ok = False
            lines += [f"- {name}: {p}" for p in problems]
        else:
            lines += [f"- {name}:", *(f"  {line}" for line in scored)]
    return ReviewOutcome(ok, lines)


def _review_file(
    tools: ReviewTools, pr: PullRequest, f: PullRequestFile, now: datetime, accepted: dict[str, list[str]]
) -> tuple[list[str], list[str]]:
    """(problems, score lines) of one file, as markdown: a message that may quote the file is one code span."""
    ledger = tools.ledger
    if ledger.exhausted(f.track, pr.author):  # before validating: the allowance bounds the work, as in the Submit tab
        return [md.code(ledger.refusal(f.track, pr.author))], []
    try:
        data = read_file(Path(f.local_path), tools.max_bytes)
    except SubmissionError as exc:
        ledger.add(f.track, pr.author)
        return [md.code(exc.problem)], []
    except OSError:
        return ["the downloaded file could not be read; it is reviewed again at the next push"], []
    checked = tools.validate(data, f.path.rsplit("/", 1)[-1])
    problems = [md.code(e) for e in checked.errors] if not checked.ok else []
    if checked.ok and checked.track_name != f.track:
        problems.append(f"the file declares track {md.code(repr(checked.track_name))} but sits under `submissions/{f.track}/`")
    if checked.ok and not problems:
        problems += _admission_problems(tools.admission(f.track, pr.num), pr, checked, now, accepted)
    if problems:
        ledger.add(f.track, pr.author)
        return problems, []
    accepted.setdefault(f.track, []).append(checked.fingerprint or "")
    result = score_checked(checked, content_hash(data))
    tools.cache.store(result)
    return [], _score_lines(tools.board_url, f, result.summary)


def _admission_problems(rules: Admission, pr: PullRequest, checked: Checked, now: datetime, accepted) -> list[str]:
    """Duplicates, a name taken, the daily limit: weighed against the track's entries other than this pull request's
    (`rules`), and the files of this pull request accepted before this one (`accepted`)."""
    track, problems = rules.track, []
    fingerprint = checked.fingerprint
    first = rules.duplicate_of(fingerprint)
    if first is not None:
        problems.append(
            f"duplicate: these predictions are already on the {track} track as submission {first.id} "
            f"({md.code(first.name, 100)}); the same predictions are ranked once"
        )
    elif fingerprint and fingerprint in accepted.get(track, []):
        problems.append("duplicate: the same predictions as another file of this pull request")
    name = (checked.system or {}).get("name")
    taken = rules.name_holder(pr.author, name)
    if taken is not None:
        problems.append(
            f"system.name: {md.code(name, 100)} is already used on the {track} track by "
            f"{md.code(taken.user or 'another submitter')} (submission {taken.id}); choose another name"
        )
    used = rules.used_today(pr.author, now) + len(accepted.get(track, []))
    if rules.over_limit(used):
        problems.append(
            f"{pr.author} has {used} submission(s) to the {track} track today; the limit is {rules.submissions_per_day} a day"
        )
    return problems


def _score_lines(board_url: str | None, f: PullRequestFile, summary: dict) -> list[str]:
    track = TRACKS[summary.track]
    system = summary.system or {}
    n, missing = summary.n or 0, summary.missing or 0
    lines = [f"- {md.code(system.get('name', '?'), 100)} on {track.title}: {n - missing} of {n} units answered"]
    overall, ci = summary.overall, summary.ci
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
    lines.append(f"- on the board: {permalink(board_url, f.sha256[:12])}")
    return lines
