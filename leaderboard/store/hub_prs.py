"""Pull-request submissions to the submissions repo: list, check the changes, fetch, comment, merge, close.

Anyone may open a pull request on a dataset repo (`upload_file(..., create_pr=True)`, `hf upload
--create-pr`): this is how someone without write access submits. On every refresh the board

1. lists the open pull requests (one paged call) and the head commit of every `refs/pr/<n>` (one
   call); a pull request whose head is the one already reviewed costs nothing more: no download, no
   comment (the outcome per head is kept in a small JSON state file, so a restart does not review again);
2. for a new head: reads the pull request's changes (the Hub's diff against its base, i.e. what a
   merge would do). Only files *added* under `submissions/<track>/<author>/` (author = who opened
   the pull request), submission files and their `.meta.json` sidecars, may be merged; an edit of an
   existing file, a deletion, `flags.json` or any other path makes the pull request "refused": it is
   commented, never merged and never closed by the board (a maintainer decides);
3. lists the author's folder at that head for the sizes, and downloads only files under the caps
   (a larger file is reported, never fetched), at the head commit itself (a push meanwhile cannot
   swap the bytes);
4. hands the files to the board's `judge` (validation, duplicates, limits, scores) and posts one
   comment per head, carrying a marker so that a lost state never means a second comment;
5. merges valid pull requests when auto-merge is on, and closes pull requests whose head stayed
   invalid for `close_after_days`.

The store never scores: the judge callback is the board's.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from huggingface_hub.community import deserialize_event
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.hf_api import RepoFile
from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

from .hub_client import REPO_TYPE, HubClient, http_status
from .model import MAX_METADATA_BYTES, decode_metadata
from .naming import FLAGS_FILE, META_SUFFIX, SUBMISSIONS_DIR, check_component, extension_of

log = logging.getLogger(__name__)

STATE_VERSION = 1
# Submission files one pull request may add: each costs a validation.
MAX_FILES_PER_PULL_REQUEST = 5
# New pull-request heads reviewed per refresh; the others wait for the next refresh (a flood of
# pull requests costs a bounded amount of work per cycle).
REVIEWS_PER_REFRESH = 10
# Bytes of one pull request's details (events and diff) read: the diff is the author's to make large.
MAX_DETAILS_BYTES = 8 * 1024 * 1024
# Problems listed in one comment (a pull request adding thousands of files gets a short comment).
MAX_PROBLEMS_SHOWN = 50
_MARKER = "<!-- open-rag-leaderboard review {head} -->"
_DIFF_HEADER = re.compile(r"^diff --git a/(\S+) b/(\S+)$")

# Outcomes of a review
VALID, INVALID, REFUSED = "valid", "invalid", "refused"


@dataclass(frozen=True)
class PullRequest:
    num: int
    author: str
    title: str
    created_at: str  # ISO time the pull request was opened
    head: str  # commit sha of refs/pr/<num>
    url: str


@dataclass(frozen=True)
class PullRequestFile:
    """A submission file a pull request adds, downloaded at the pull request's head."""

    path: str
    track: str
    user: str  # the pull request's author
    local_path: str
    sha256: str
    size: int
    metadata: dict = field(default_factory=dict)  # its .meta.json sidecar, {} when absent


@dataclass(frozen=True)
class Verdict:
    """The board's judgement of the files: `ok` when every one is valid and scored; `lines`: the comment's body."""

    ok: bool
    lines: list[str]


Judge = Callable[[PullRequest, list[PullRequestFile]], Verdict]


@dataclass
class Review:
    """What the board decided about one head of one pull request (persisted)."""

    num: int
    head: str
    author: str
    title: str
    created_at: str
    url: str
    outcome: str  # valid | invalid | refused
    reviewed_at: str
    files: list[dict] = field(default_factory=list)  # PullRequestFile fields, for "pending review" entries
    commented: bool = False
    comment_body: str = ""  # kept only while the Hub refused the comment: posted at a later refresh
    merged: bool = False
    closed: bool = False

    @property
    def pull_request(self) -> PullRequest:
        return PullRequest(self.num, self.author, self.title, self.created_at, self.head, self.url)

    def pending_files(self) -> list[PullRequestFile]:
        return [PullRequestFile(**f) for f in self.files]


def parse_diff(diff: str) -> list[tuple[str, str]] | None:
    """(path, "added" | "deleted" | "modified" | "renamed") per file of a git diff; None when it cannot be read.

    Only header lines are read: every content line of a hunk starts with '+', '-', ' ', '@' or '\\'.
    A path git had to quote (spaces, control characters) does not match: the diff is then unreadable.
    """
    changes: list[list[str]] = []
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            match = _DIFF_HEADER.match(line)
            if match is None or match.group(1) != match.group(2):
                if match is not None:  # a rename: "a/old b/new"
                    changes.append([match.group(1), "renamed"])
                    changes.append([match.group(2), "renamed"])
                    continue
                return None
            changes.append([match.group(1), "modified"])
        elif changes and line.startswith("new file mode"):
            changes[-1][1] = "added"
        elif changes and line.startswith("deleted file mode"):
            changes[-1][1] = "deleted"
        elif changes and line.startswith(("rename from", "rename to", "copy from", "copy to")):
            changes[-1][1] = "renamed"
    if diff.strip() and not changes:
        return None
    return [(p, k) for p, k in changes]


def allowed_path(path: str, author: str) -> str | None:
    """None when `path` may be added by `author`; else why not."""
    if path == FLAGS_FILE:
        return f"`{FLAGS_FILE}`: only maintainers change flags"
    parts = path.split("/")
    if len(parts) != 4 or parts[0] != SUBMISSIONS_DIR:
        return f"`{path}`: submissions go to `{SUBMISSIONS_DIR}/<track>/{author}/<file>`"
    _, track, user, name = parts
    try:
        check_component(track, "track")
        check_component(name, "file name")
    except ValueError as exc:
        return f"`{path}`: {exc}"
    if user != author:
        return f"`{path}`: files under `{SUBMISSIONS_DIR}/{track}/{user}/` belong to {user}; yours go under `{author}/`"
    if extension_of(name) is None and not (name.endswith(META_SUFFIX) and extension_of(name[: -len(META_SUFFIX)])):
        return f"`{path}`: not a submission file (.json, .jsonl, .json.gz, .jsonl.gz) nor its `.meta.json`"
    return None


class PullRequestReviewer:
    """Reviews the open pull requests of the submissions repo; the board calls `review` once per refresh."""

    def __init__(
        self,
        client: HubClient,
        repo_id: str,
        state_file: Path,
        *,
        auto_merge: bool = False,
        close_after_days: float = 14.0,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ):
        self.client = client
        self.repo_id = repo_id
        self.state_file = state_file
        self.max_file_bytes = 0  # set by each `review`: the board's own cap on a submission file
        self.auto_merge = auto_merge
        self.close_after_days = close_after_days
        self._clock = clock
        self._me: str | None = None
        self.reviews: dict[int, Review] = self._load()

    # ---- state -------------------------------------------------------------------------------

    def _load(self) -> dict[int, Review]:
        try:
            raw = json.loads(self.state_file.read_text(encoding="utf-8"))
            if raw.get("version") != STATE_VERSION or raw.get("repo_id") != self.repo_id:
                return {}
            reviews = {int(n): Review(**r) for n, r in raw["reviews"].items()}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            # Costs one more review (and, the marker aside, nothing else): never a crash.
            log.warning("ignoring unreadable pull-request state %s (%s)", self.state_file.name, type(exc).__name__)
            return {}
        # A downloaded file gone from the cache: the pull request is reviewed again.
        return {n: r for n, r in reviews.items() if all(Path(f["local_path"]).exists() for f in r.files)}

    def _save(self) -> None:
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        payload = {"version": STATE_VERSION, "repo_id": self.repo_id, "reviews": {n: asdict(r) for n, r in self.reviews.items()}}
        fd, tmp = tempfile.mkstemp(dir=self.state_file.parent, prefix=".prs-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(payload, fh)
            os.replace(tmp, self.state_file)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    def pending(self) -> list[tuple[PullRequest, list[PullRequestFile]]]:
        """Open pull requests whose current head is valid, with their files: the board's "pending review" entries."""
        return [
            (r.pull_request, r.pending_files()) for r in sorted(self.reviews.values(), key=lambda r: r.num) if r.outcome == VALID
        ]

    # ---- one refresh -------------------------------------------------------------------------

    def review(self, judge: Judge, max_file_bytes: int) -> dict[str, int]:
        """Review every open pull request with a new head (at most REVIEWS_PER_REFRESH); returns counts of what was done.

        `max_file_bytes`: a submission file listed larger than this is reported, never downloaded.
        """
        self.max_file_bytes = max_file_bytes
        done = {"reviewed": 0, "commented": 0, "merged": 0, "closed": 0}
        api = self.client.api
        changed = False
        with self.client.errors("reviewing pull requests"):
            try:
                listed = api.get_repo_discussions(
                    self.repo_id, discussion_type="pull_request", discussion_status="open", repo_type=REPO_TYPE
                )
                open_prs = {d.num: d for d in listed if d.status == "open"}  # a draft is not ready for review
                heads = {}
                if open_prs:
                    refs = api.list_repo_refs(self.repo_id, repo_type=REPO_TYPE, include_pull_requests=True)
                    heads = {
                        int(r.ref.rsplit("/", 1)[1]): r.target_commit
                        for r in refs.pull_requests or []
                        if r.ref.startswith("refs/pr/")
                    }
                for num in set(self.reviews) - set(open_prs):  # merged or closed since: nothing pending any more
                    del self.reviews[num]
                    changed = True
                budget = REVIEWS_PER_REFRESH
                for num in sorted(open_prs):
                    head = heads.get(num)
                    known = self.reviews.get(num)
                    if head is None:
                        continue
                    try:
                        if known is not None and known.head == head:
                            if not known.commented and known.comment_body:
                                self._post_comment(known, done)
                                changed = True
                            if self._maybe_close(known):
                                done["closed"] += 1
                                changed = True
                            continue
                        if budget == 0:
                            continue
                        budget -= 1
                        discussion = open_prs[num]
                        pr = PullRequest(
                            num, discussion.author, discussion.title, discussion.created_at.isoformat(), head, discussion.url
                        )
                        self.reviews[num] = self._review_one(pr, judge, done)
                    except HfHubHTTPError as exc:  # this pull request only (deleted meanwhile, ...): retried next refresh
                        log.warning("pull request #%d not reviewed or closed: HTTP %s", num, http_status(exc))
                        continue
                    changed = True
                    done["reviewed"] += 1
            finally:
                if changed:
                    self._save()
        return done

    def _review_one(self, pr: PullRequest, judge: Judge, done: dict[str, int]) -> Review:
        api = self.client.api
        events, diff = self._details(pr.num)
        marker = _MARKER.format(head=pr.head)
        # Only the board's own comments count: an author posting the marker must not silence the review.
        already = any(e.type == "comment" and marker in getattr(e, "content", "") and e.author == self._account() for e in events)
        if diff is None:
            path_problems, wanted = [f"the changes are over {MAX_DETAILS_BYTES:,} bytes of diff: too large to review"], []
        else:
            path_problems, wanted = self._changes(diff, pr.author)
        files, file_problems = self._fetch(pr, wanted)
        verdict = judge(pr, files) if files else Verdict(False, [])
        if not files and not path_problems and not file_problems:
            file_problems.append("the pull request adds no submission file")
        problems = path_problems + file_problems
        outcome = REFUSED if path_problems else VALID if verdict.ok and not file_problems else INVALID
        review = Review(
            pr.num,
            pr.head,
            pr.author,
            pr.title,
            pr.created_at,
            pr.url,
            outcome,
            self._clock().isoformat(),
            [asdict(f) for f in files] if outcome == VALID else [],
        )
        merge_failed = False
        if outcome == VALID and self.auto_merge:  # merged first, so the comment says what happened
            try:
                api.merge_pull_request(self.repo_id, pr.num, repo_type=REPO_TYPE)
                review.merged = True
                done["merged"] += 1
            except HfHubHTTPError as exc:  # a conflict, a moved main: a maintainer merges by hand
                log.warning("pull request #%d not merged (HTTP %s)", pr.num, http_status(exc))
                merge_failed = True
        review.commented = already
        if not already:
            review.comment_body = self._comment(review, problems, verdict.lines, marker, merge_failed)
            try:
                self._post_comment(review, done)
            except HfHubHTTPError as exc:  # kept: the files are not fetched again, the comment is retried alone
                log.warning("comment on pull request #%d not posted (HTTP %s); retried next refresh", pr.num, http_status(exc))
        return review

    def _post_comment(self, review: Review, done: dict[str, int]) -> None:
        self.client.api.comment_discussion(self.repo_id, review.num, review.comment_body, repo_type=REPO_TYPE)
        review.commented, review.comment_body = True, ""
        done["commented"] += 1

    def _details(self, num: int) -> tuple[list, str | None]:
        """(events, diff) of a pull request, as `get_discussion_details` reads them, but at most MAX_DETAILS_BYTES
        read: past that, the events that fit are unknown too ([]) and the diff is None."""
        api = self.client.api
        url = f"{api.endpoint}/api/{REPO_TYPE}s/{self.repo_id}/discussions/{num}"
        headers = build_hf_headers(token=self.client.token or False, library_name="open-rag-leaderboard")
        with get_session().stream("GET", url, params={"diff": "1"}, headers=headers, timeout=self.client.timeout) as resp:
            if resp.status_code >= 400:
                resp.read()
                hf_raise_for_status(resp)
            body = bytearray()
            for chunk in resp.iter_bytes():
                body += chunk
                if len(body) > MAX_DETAILS_BYTES:
                    return [], None
        details = json.loads(body)
        return [deserialize_event(e) for e in details.get("events", [])], details.get("diff") or ""

    def _account(self) -> str:
        """The board's own Hub account (whose comments these are), asked once per process."""
        if self._me is None:
            self._me = self.client.whoami()
        return self._me

    def _changes(self, diff: str | None, author: str) -> tuple[list[str], list[str]]:
        """(problems, paths to fetch) of the pull request's changes."""
        changes = parse_diff(diff or "")
        if changes is None:
            return ["the pull request's changes cannot be read (a path with spaces or unusual characters?)"], []
        problems, wanted = [], []
        for path, kind in changes:
            why = allowed_path(path, author)
            if kind != "added":
                also = f" ({why.split(': ', 1)[1]})" if why else ""
                problems.append(f"`{path}`: {kind}; a pull request may only add new submission files{also}")
            elif why:
                problems.append(why)
            else:
                wanted.append(path)
        added = set(wanted)
        for path in wanted:
            if path.endswith(META_SUFFIX) and path[: -len(META_SUFFIX)] not in added:
                problems.append(f"`{path}`: a metadata file without its submission file in this pull request")
        submissions = [p for p in wanted if not p.endswith(META_SUFFIX)]
        if len(submissions) > MAX_FILES_PER_PULL_REQUEST:
            problems.append(f"{len(submissions)} submission files; at most {MAX_FILES_PER_PULL_REQUEST} per pull request")
            return problems, []
        return problems, wanted

    def _fetch(self, pr: PullRequest, wanted: list[str]) -> tuple[list[PullRequestFile], list[str]]:
        """Download the wanted files at the head (sizes checked from the listing first); the submission files."""
        if not wanted:
            return [], []
        listed: dict[str, RepoFile] = {}
        for folder in sorted({p.rsplit("/", 1)[0] for p in wanted}):
            listed.update(self.client.list_files(self.repo_id, pr.head, under=folder))
        problems: list[str] = []
        local: dict[str, Path] = {}
        for path in wanted:
            entry = listed.get(path)
            cap = MAX_METADATA_BYTES if path.endswith(META_SUFFIX) else self.max_file_bytes
            if entry is None:
                problems.append(f"`{path}`: not found at the pull request's head")
            elif entry.size > cap:
                problems.append(f"`{path}`: {entry.size:,} bytes, over the {cap:,}-byte limit (not downloaded)")
            else:
                local[path] = self.client.download(self.repo_id, path, pr.head)
        files = []
        for path, file in local.items():
            if path.endswith(META_SUFFIX):
                continue
            entry = listed[path]
            sha = _sha256(file)
            metadata: dict = {}
            if meta := local.get(path + META_SUFFIX):
                metadata = decode_metadata(meta.read_bytes(), path + META_SUFFIX)
                problems += _metadata_problems(path, metadata, pr, entry.size, sha)
            _, track, user, _ = path.split("/")
            files.append(PullRequestFile(path, track, user, str(file), sha, entry.size, metadata))
        return files, problems

    def _maybe_close(self, review: Review) -> bool:
        """Close a pull request whose head has been invalid for close_after_days (once)."""
        if review.outcome != INVALID or review.closed:
            return False
        since = datetime.fromisoformat(review.reviewed_at)
        if self._clock() - since < timedelta(days=self.close_after_days):
            return False
        self.client.api.change_discussion_status(
            self.repo_id,
            review.num,
            "closed",
            comment=f"Closed by the leaderboard: still invalid {self.close_after_days:g} days after the review above. "
            "Fix the problems and open a new pull request.",
            repo_type=REPO_TYPE,
        )
        review.closed = True
        return True

    def _comment(self, review: Review, problems: list[str], lines: list[str], marker: str, merge_failed: bool = False) -> str:
        head = review.head[:7]
        out = [marker]
        if review.outcome == VALID:
            out.append(f"**Leaderboard review of {head}: valid.**")
            out += ["", *lines, ""]
            if review.merged:
                out.append("Merged automatically.")
            else:
                why = "It could not be merged automatically (a conflict?). " if merge_failed else ""
                out.append(f"{why}Listed on the board as *pending review* until a maintainer merges it.")
            return "\n".join(out)
        everything = problems + lines
        if review.outcome == REFUSED:
            out.append(
                f"**Leaderboard review of {head}: not merged automatically.** This pull request changes more than new submission files:"
            )
        else:
            out.append(f"**Leaderboard review of {head}: invalid.** Problems found:")
        out.append("")
        out += [f"- {p}" if not p.startswith(("-", "*", " ")) else p for p in everything[:MAX_PROBLEMS_SHOWN]]
        if len(everything) > MAX_PROBLEMS_SHOWN:
            out.append(f"- ... and {len(everything) - MAX_PROBLEMS_SHOWN} more")
        out.append("")
        if review.outcome == REFUSED:
            out.append("A maintainer will look at it; submissions only add files under `submissions/<track>/<your user>/`.")
        else:
            out.append(
                f"Push a fixed commit to this pull request and it is reviewed again; left invalid, it is closed after "
                f"{self.close_after_days:g} days."
            )
        return "\n".join(out)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


# How far a sidecar's submitted_at may be from the pull request's opening: it decides which of two equal
# submissions came first, so an author must not backdate it.
_SUBMITTED_AT_SLACK = timedelta(hours=1)


def _metadata_problems(path: str, metadata: dict, pr: PullRequest, size: int, sha256: str) -> list[str]:
    """The sidecar must agree with what the board sees: track, user, size, hash, and a submission time near the PR's."""
    name = f"`{path}{META_SUFFIX}`"
    if "meta_error" in metadata:
        return [f"{name}: {metadata['meta_error'].split(': ', 1)[-1]}"]
    problems = []
    _, track, user, _ = path.split("/")
    for key, want in (("track", track), ("user", user), ("size", size), ("sha256", sha256)):
        if key in metadata and metadata[key] != want:
            problems.append(f"{name}: {key} is {str(metadata[key])[:100]!r}, expected {want!r}")
    when = metadata.get("submitted_at")
    if when is not None:
        try:
            stamp = datetime.fromisoformat(str(when).replace("Z", "+00:00"))
            opened = datetime.fromisoformat(pr.created_at)
            if stamp.tzinfo is None or abs(stamp - opened) > _SUBMITTED_AT_SLACK:
                problems.append(f"{name}: submitted_at {str(when)[:40]!r} is not the time the pull request was opened")
        except ValueError:
            problems.append(f"{name}: submitted_at {str(when)[:40]!r} is not an ISO time")
    return problems
