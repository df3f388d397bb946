"""Pull-request submissions to the submissions repo: list, check the trees, fetch, comment, land, close.

Anyone may open a pull request on a dataset repo (`upload_file(..., create_pr=True)`, `hf upload
--create-pr`): this is how someone without write access submits. On every refresh the board

1. lists the open pull requests (one paged call) and the heads of main and of every `refs/pr/<n>`
   (one call); a pull request whose head is the one already reviewed costs nothing more: no download,
   no comment (the outcome per head is kept in a small JSON state file, so a restart does not review again);
2. takes the pull requests with a new head fairly: round-robin across authors, each author's
   longest-waiting first, at most REVIEWS_PER_REFRESH a refresh; a pull request commented less than
   COMMENT_INTERVAL ago waits (pushes meanwhile are coalesced: its latest head is reviewed once the
   interval is over), so one comment per pull request per interval at most;
3. for each: finds where the pull request branched from main (its merge base) and compares the
   git trees at the base and at the head, folder by folder, by blob and tree ids. That comparison, not
   the Hub's diff (which the Hub cuts when it is large), is the set of paths the pull request changes.
   Only files *added* under `submissions/<track>/<author>/` (author = who opened the pull request),
   submission files and their `.meta.json` sidecars, at most MAX_FILES_PER_PULL_REQUEST of them,
   sidecars counted, may be merged; an edit, a deletion, `flags.json`, any other path or too many
   files make the pull request "refused" from the listing alone, before any download: it is
   commented, never merged and never closed by the board (a maintainer decides); so does an added
   path main holds already (with the same bytes: a landing of the board's whose answer was lost,
   closed as such);
4. downloads the added files at the head commit itself (sizes checked from the listing first, the
   bytes checked against the listed blob id or LFS sha256) and hands them to the board's
   `review_files` (validation, duplicates, limits, scores);
5. with auto-merge on, lands a valid pull request itself: one commit to main holding exactly the
   bytes it reviewed (`create_commit` with `parent_commit` = the main head it reviewed against, so
   a main that moved meanwhile refuses it and the pull request is reviewed again at the next
   refresh), then comments with that commit and closes the pull request. Right before, it reads the
   pull request's head again: a head that moved since the review is not landed (reviewed again at the
   next refresh). A push after that check changes nothing: only the reviewed bytes are committed;
6. posts one comment per reviewed head (a marker in its first line, so a lost state never means a
   second comment), and closes pull requests whose head stayed invalid for `close_after_days`.

How the merge base is found, from the Hub's commit listings (its pull-request details do not name
it), is in pr_tree.py. The diff is not read at all; the events of the details are (for the marker),
at most MAX_DETAILS_BYTES of them: other people's comments past that leave the marker unknown (a lost
state could then mean a second comment), never the review blocked.

Submitter text in comments (names, paths, quoted values) goes through markdown.code: shown, never
rendered. The store never scores: the `review_files` callback is the board's.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from huggingface_hub import CommitOperationAdd
from huggingface_hub.community import deserialize_event
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.hf_api import RepoFile
from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

from . import markdown as md
from .hub_client import REPO_TYPE, HubClient, http_status
from .model import MAX_METADATA_BYTES, decode_metadata
from .naming import META_SUFFIX
from .pr_tree import MAX_COMMITS_WALKED, PullRequestTree, blob_id

log = logging.getLogger(__name__)

STATE_VERSION = 2
# New pull-request heads reviewed per refresh; the others wait for the next refresh (a flood of
# pull requests costs a bounded amount of work per cycle).
REVIEWS_PER_REFRESH = 10
# At most one board comment per pull request within this time: pushes meanwhile wait and are coalesced.
COMMENT_INTERVAL = timedelta(minutes=10)
# Bytes of one pull request's events read (to find the board's own comment); others' comments can make them large.
MAX_DETAILS_BYTES = 8 * 1024 * 1024
# Problems listed in one comment (a pull request adding thousands of files gets a short comment).
MAX_PROBLEMS_SHOWN = 50
_MARKER = "<!-- open-rag-leaderboard review {head} -->"

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
class ReviewOutcome:
    """The board's review of the files: `ok` when every one is valid and scored; `lines`: the comment's body."""

    ok: bool
    lines: list[str]


ReviewFiles = Callable[[PullRequest, list[PullRequestFile]], ReviewOutcome]


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
    merged: bool = False  # the reviewed files landed on main (`landed`: that commit)
    closed: bool = False
    main: str = ""  # the main head it was reviewed against
    landed: str = ""

    @property
    def pull_request(self) -> PullRequest:
        return PullRequest(self.num, self.author, self.title, self.created_at, self.head, self.url)

    def pending_files(self) -> list[PullRequestFile]:
        return [PullRequestFile(**f) for f in self.files]


def fair_order(waiting: list[tuple[str, int, str]]) -> list[int]:
    """Pull-request numbers in review order from (waiting since, number, author): round-robin across authors,
    each author's longest-waiting first; the author whose oldest one waited longest goes first in each round."""
    queues: dict[str, list[tuple[str, int]]] = {}
    for since, num, author in sorted(waiting):
        queues.setdefault(author, []).append((since, num))
    rounds = sorted(queues.values())
    order: list[int] = []
    while rounds:
        order += [q.pop(0)[1] for q in rounds]
        rounds = [q for q in rounds if q]
    return order


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
        comment_interval: timedelta = COMMENT_INTERVAL,
    ):
        self.client = client
        self.repo_id = repo_id
        self.tree = PullRequestTree(client, repo_id)
        self.state_file = state_file
        self.max_file_bytes = 0  # set by each `review`: the board's own cap on a submission file
        self.auto_merge = auto_merge
        self.close_after_days = close_after_days
        self.comment_interval = comment_interval
        self._clock = clock
        self._me: str | None = None
        self._heads: dict[int, str] = {}  # the latest listing's heads: a review of an older head is not pending
        self.reviews: dict[int, Review] = {}
        self.waiting: dict[int, str] = {}  # number -> ISO time its unreviewed head was first seen
        self.commented: dict[int, str] = {}  # number -> ISO time of the board's last comment on it
        self._load()

    # ---- state -------------------------------------------------------------------------------

    def _load(self) -> None:
        try:
            raw = json.loads(self.state_file.read_text(encoding="utf-8"))
            if raw.get("version") != STATE_VERSION or raw.get("repo_id") != self.repo_id:
                return
            reviews = {int(n): Review(**r) for n, r in raw["reviews"].items()}
            waiting = {int(n): str(t) for n, t in raw.get("waiting", {}).items()}
            commented = {int(n): str(t) for n, t in raw.get("commented", {}).items()}
        except FileNotFoundError:
            return
        except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            # Costs one more review (and, the marker aside, nothing else): never a crash.
            log.warning("ignoring unreadable pull-request state %s (%s)", self.state_file.name, type(exc).__name__)
            return
        # A downloaded file gone from the cache: the pull request is reviewed again.
        self.reviews = {n: r for n, r in reviews.items() if all(Path(f["local_path"]).exists() for f in r.files)}
        self.waiting, self.commented = waiting, commented

    def _save(self) -> None:
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "version": STATE_VERSION,
            "repo_id": self.repo_id,
            "reviews": {n: asdict(r) for n, r in self.reviews.items()},
            "waiting": self.waiting,
            "commented": self.commented,
        }
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
            (r.pull_request, r.pending_files())
            for r in sorted(self.reviews.values(), key=lambda r: r.num)
            # a landed one stays until the pull that brings its files (the next refresh) replaces it
            if r.outcome == VALID and self._heads.get(r.num, r.head) == r.head
        ]

    # ---- one refresh -------------------------------------------------------------------------

    def review(self, review_files: ReviewFiles, max_file_bytes: int) -> dict[str, int]:
        """Review open pull requests with a new head (at most REVIEWS_PER_REFRESH, fairly); returns counts of what was done.

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
                heads, main = self._heads_now() if open_prs else ({}, "")
                self._heads = heads
                for book in (self.reviews, self.waiting, self.commented):  # merged or closed since: forgotten
                    for num in set(book) - set(open_prs):
                        del book[num]
                        changed = True
                now = self._clock()
                due: list[tuple[str, int, str]] = []
                for num, discussion in open_prs.items():
                    head, known = heads.get(num), self.reviews.get(num)
                    if head is None:
                        continue
                    if known is not None and known.head == head:
                        try:
                            changed |= self._follow_up(known, done)
                        except HfHubHTTPError as exc:  # this pull request only: retried next refresh
                            log.warning("pull request #%d: follow-up failed (HTTP %s)", num, http_status(exc))
                        continue
                    if num not in self.waiting:
                        self.waiting[num] = now.isoformat()
                        changed = True
                    last = self.commented.get(num)
                    if last is not None and now - datetime.fromisoformat(last) < self.comment_interval:
                        continue  # commented lately: this head waits (a later push replaces it)
                    due.append((self.waiting[num], num, discussion.author))
                for num in fair_order(due)[:REVIEWS_PER_REFRESH]:
                    discussion = open_prs[num]
                    pr = PullRequest(
                        num, discussion.author, discussion.title, discussion.created_at.isoformat(), heads[num], discussion.url
                    )
                    try:
                        review = self._review_one(pr, main, review_files, done)
                    except HfHubHTTPError as exc:  # this pull request only (deleted meanwhile, ...): retried next refresh
                        log.warning("pull request #%d not reviewed: HTTP %s", num, http_status(exc))
                        continue
                    if review is None:  # its head or main moved before it could land: reviewed again next refresh
                        continue
                    self.reviews[num] = review
                    self.waiting.pop(num, None)
                    changed = True
                    done["reviewed"] += 1
            finally:
                if changed:
                    self._save()
        return done

    def _heads_now(self) -> tuple[dict[int, str], str]:
        """(head commit per open pull request, head of the board's branch), from one listing of the refs."""
        refs = self.client.api.list_repo_refs(self.repo_id, repo_type=REPO_TYPE, include_pull_requests=True)
        heads = {int(r.ref.rsplit("/", 1)[1]): r.target_commit for r in refs.pull_requests or [] if r.ref.startswith("refs/pr/")}
        branch = self.client.revision
        main = next((b.target_commit for b in refs.branches if branch in (b.name, b.ref)), None)
        return heads, main or self.client.head(self.repo_id)

    def _follow_up(self, known: Review, done: dict[str, int]) -> bool:
        """What a reviewed head may still need: its comment (the Hub refused it), its closing. True if anything changed."""
        changed = False
        if not known.commented and known.comment_body:
            self._post_comment(known, done)
            changed = True
        if known.merged and not known.closed:
            self.client.api.change_discussion_status(self.repo_id, known.num, "closed", repo_type=REPO_TYPE)
            known.closed = True
            done["closed"] += 1
            return True
        if self._maybe_close(known):
            done["closed"] += 1
            changed = True
        return changed

    def _review_one(self, pr: PullRequest, main: str, review_files: ReviewFiles, done: dict[str, int]) -> Review | None:
        marker = _MARKER.format(head=pr.head)
        events = self._events(pr.num)
        # Only the board's own comments count: an author posting the marker must not silence the review.
        already = events is not None and any(
            e.type == "comment" and getattr(e, "content", "").startswith(marker) and e.author == self._account() for e in events
        )
        base = self.tree.merge_base(pr.head, main)
        if base is None:
            lost = f"where this pull request branched from main is not within {MAX_COMMITS_WALKED:,} commits"
            problems, added = [f"{lost}: open a new one from the current main"], {}
        else:
            problems, added = self.tree.changes(base, pr.head, pr.author)
        files: list[PullRequestFile] = []
        local: dict[str, Path] = {}
        file_problems: list[str] = []
        reviewed = ReviewOutcome(False, [])
        landed_before = False
        if not problems:
            on_main = self.tree.on_main(main, added)
            # Every file on main as reviewed: the board's own landing, whose answer was lost.
            landed_before = self.auto_merge and bool(added) and all(on_main.get(p) == blob_id(e) for p, e in added.items())
            if not landed_before:
                problems += [f"{md.code(p)}: a file of this name is on main already" for p in sorted(on_main)]
        if not problems and not landed_before:
            files, local, file_problems = self._fetch(pr, added)
            reviewed = review_files(pr, files) if files else ReviewOutcome(False, [])
            if not files and not file_problems:
                file_problems.append("the pull request adds no submission file")
        outcome = REFUSED if problems else VALID if landed_before or (reviewed.ok and not file_problems) else INVALID
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
            main=main,
        )
        merge_failed = ""
        if landed_before:
            review.merged = True
        elif outcome == VALID and self.auto_merge:
            if self._heads_now()[0].get(pr.num) != pr.head:
                log.info("pull request #%d: a new head since the review; reviewed again at the next refresh", pr.num)
                return None
            try:
                review.landed = self._land(pr, local, main)
                review.merged = True
                done["merged"] += 1
            except HfHubHTTPError as exc:
                if http_status(exc) == 412:  # main moved since the review: the review may no longer hold
                    log.info("pull request #%d: main moved before it landed; reviewed again at the next refresh", pr.num)
                    return None
                log.warning("pull request #%d not landed (HTTP %s)", pr.num, http_status(exc))
                merge_failed = f"HTTP {http_status(exc)}"
        review.commented = already
        if not already:
            review.comment_body = self._comment(review, problems + file_problems, reviewed.lines, marker, merge_failed)
            try:
                self._post_comment(review, done)
            except HfHubHTTPError as exc:  # kept: the files are not fetched again, the comment is retried alone
                log.warning("comment on pull request #%d not posted (HTTP %s); retried next refresh", pr.num, http_status(exc))
        if review.merged:
            try:
                self.client.api.change_discussion_status(self.repo_id, pr.num, "closed", repo_type=REPO_TYPE)
                review.closed = True
                done["closed"] += 1
            except HfHubHTTPError as exc:  # closed at a later refresh
                log.warning("pull request #%d landed but not closed (HTTP %s)", pr.num, http_status(exc))
        return review

    def _post_comment(self, review: Review, done: dict[str, int]) -> None:
        self.client.api.comment_discussion(self.repo_id, review.num, review.comment_body, repo_type=REPO_TYPE)
        review.commented, review.comment_body = True, ""
        self.commented[review.num] = self._clock().isoformat()
        done["commented"] += 1

    def _get(self, path: str, **params):
        return get_session().stream(
            "GET",
            f"{self.client.api.endpoint}/api/{REPO_TYPE}s/{self.repo_id}/{path}",
            params=params,
            headers=build_hf_headers(token=self.client.token or False, library_name="open-rag-leaderboard"),
            timeout=self.client.timeout,
        )

    def _events(self, num: int) -> list | None:
        """The pull request's events (no diff), at most MAX_DETAILS_BYTES read; None past that."""
        with self._get(f"discussions/{num}") as resp:
            if resp.status_code >= 400:
                resp.read()
                hf_raise_for_status(resp)
            body = bytearray()
            for chunk in resp.iter_bytes():
                body += chunk
                if len(body) > MAX_DETAILS_BYTES:
                    return None
        return [deserialize_event(e) for e in json.loads(body).get("events", [])]

    def _account(self) -> str:
        """The board's own Hub account (whose comments these are), asked once per process."""
        if self._me is None:
            self._me = self.client.whoami()
        return self._me

    # ---- what the pull request changes -----------------------------------------------------------

    def _fetch(self, pr: PullRequest, added: dict[str, RepoFile]) -> tuple[list[PullRequestFile], dict[str, Path], list[str]]:
        """Download the added files at the head (sizes checked from the listing first, bytes against its ids).

        Returns the submission files, every file fetched (path -> local copy: what would land) and the problems.
        """
        problems: list[str] = []
        local: dict[str, Path] = {}
        digests: dict[str, str] = {}
        for path, entry in sorted(added.items()):
            cap = MAX_METADATA_BYTES if path.endswith(META_SUFFIX) else self.max_file_bytes
            if entry.size > cap:
                problems.append(f"{md.code(path)}: {entry.size:,} bytes, over the {cap:,}-byte limit (not downloaded)")
                continue
            file = self.client.download(self.repo_id, path, pr.head)
            sha256, blob = _digests(file)
            expected = entry.lfs.sha256 if entry.lfs else entry.blob_id
            if expected not in (sha256, blob):
                problems.append(
                    f"{md.code(path)}: the downloaded bytes are not the ones listed at the head; reviewed again at the next push"
                )
                continue
            local[path], digests[path] = file, sha256
        files = []
        for path, file in local.items():
            if path.endswith(META_SUFFIX):
                continue
            size, sha = added[path].size, digests[path]
            metadata: dict = {}
            if meta := local.get(path + META_SUFFIX):
                metadata = decode_metadata(meta.read_bytes(), path + META_SUFFIX)
                problems += _metadata_problems(path, metadata, pr, size, sha)
            _, track, user, _ = path.split("/")
            files.append(PullRequestFile(path, track, user, str(file), sha, size, metadata))
        return files, local, problems

    def _land(self, pr: PullRequest, local: dict[str, Path], main: str) -> str:
        """One commit on the board's branch holding exactly the reviewed bytes; refused (412) if main moved since `main`."""
        operations = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(f)) for p, f in sorted(local.items())]
        info = self.client.api.create_commit(
            self.repo_id,
            operations=operations,
            commit_message=f"Submission from pull request #{pr.num} by {pr.author}",
            commit_description=f"The files of {pr.head} as the leaderboard reviewed them: {pr.url}",
            repo_type=REPO_TYPE,
            revision=self.client.revision,
            parent_commit=main,
        )
        return info.oid

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

    def _comment(self, review: Review, problems: list[str], lines: list[str], marker: str, merge_failed: str = "") -> str:
        head = review.head[:7]
        out = [marker]
        if review.outcome == VALID:
            out.append(f"**Leaderboard review of {head}: valid.**")
            out += ["", *lines, ""]
            if review.landed:
                out.append(
                    f"The files reviewed here landed on main as commit {review.landed[:7]} ({review.landed}); "
                    "this pull request is closed."
                )
            elif review.merged:
                out.append("These files are on main already; this pull request is closed.")
            else:
                why = f"It could not be merged automatically ({merge_failed}). " if merge_failed else ""
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


def _digests(path: Path) -> tuple[str, str]:
    """(sha256, git blob id) of a file, read once."""
    sha256, blob = hashlib.sha256(), hashlib.sha1(b"blob %d\0" % path.stat().st_size)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            sha256.update(chunk)
            blob.update(chunk)
    return sha256.hexdigest(), blob.hexdigest()


# How far a sidecar's submitted_at may be from the pull request's opening: it decides which of two equal
# submissions came first, so an author must not backdate it.
_SUBMITTED_AT_SLACK = timedelta(hours=1)


def _metadata_problems(path: str, metadata: dict, pr: PullRequest, size: int, sha256: str) -> list[str]:
    """The sidecar must agree with what the board sees: track, user, size, hash, and a submission time near the PR's."""
    name = md.code(path + META_SUFFIX)
    if "meta_error" in metadata:
        return [f"{name}: {md.code(metadata['meta_error'].split(': ', 1)[-1])}"]
    problems = []
    _, track, user, _ = path.split("/")
    for key, want in (("track", track), ("user", user), ("size", size), ("sha256", sha256)):
        if key in metadata and metadata[key] != want:
            problems.append(f"{name}: {key} is {md.code(repr(metadata[key]), 100)}, expected {want!r}")
    when = metadata.get("submitted_at")
    if when is not None:
        try:
            stamp = datetime.fromisoformat(str(when).replace("Z", "+00:00"))
            opened = datetime.fromisoformat(pr.created_at)
            if stamp.tzinfo is None or abs(stamp - opened) > _SUBMITTED_AT_SLACK:
                problems.append(f"{name}: submitted_at {md.code(str(when), 40)} is not the time the pull request was opened")
        except ValueError:
            problems.append(f"{name}: submitted_at {md.code(str(when), 40)} is not an ISO time")
    return problems
