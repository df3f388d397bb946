"""What a pull request changes, read from git trees: its merge base with main, and the files it adds.

The Hub's pull-request details name the target branch but not the commit the pull request started
from, and its commit listing (`GET /api/<type>s/<repo>/commits/<rev>`, what `list_repo_commits`
pages through, newest first, `limit` a page) gives no parent ids. A pull request's `refs/pr/<n>` is
created from a main commit and only the pull request's own commits go on top of it, so the merge
base is the first commit of the head's history that is also in main's history: both histories are
read a page at a time, side by side, until one commit of the first is in the other (usually one page
each: the pull request's few commits, main's commits since). A base not found within
MAX_COMMITS_WALKED commits of either (a very old pull request, a rewritten main) is None.

The changes are the differences between the trees at the base and at the head, compared folder by
folder by tree id (an unchanged folder is never listed) and file by file by blob id, along the one
shape a submission may take, `submissions/<track>/<user>/<file>`. Nothing here reads the Hub's diff,
which the Hub cuts when it is large: what is not in the diff is still in the tree.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

from huggingface_hub.errors import EntryNotFoundError
from huggingface_hub.hf_api import RepoFile, RepoFolder
from huggingface_hub.utils import _paginate_pages, build_hf_headers

from . import markdown as md
from .hub_client import REPO_TYPE, HubClient
from .naming import FLAGS_FILE, META_SUFFIX, SUBMISSIONS_DIR, check_component, extension_of

# Files one pull request may add, .meta.json sidecars counted: each costs a download, and a listing
# with more is refused unread.
MAX_FILES_PER_PULL_REQUEST = 10
# Submission files among them: each costs a validation.
MAX_SUBMISSIONS_PER_PULL_REQUEST = 5
# Commits of a pull request's history, and of main's, read to find where it branched from main.
MAX_COMMITS_WALKED = 1000
_COMMITS_PAGE = 100


class _TooManyChanges(Exception):
    pass


def allowed_path(path: str, author: str) -> str | None:
    """None when `path` may be added by `author`; else why not (markdown, the path shown inert)."""
    why = refusal(path, author)
    return None if why is None else f"{md.code(path)}: {why}"


def refusal(path: str, author: str) -> str | None:
    """Why `author` may not add `path` (without the path), or None."""
    if path == FLAGS_FILE:
        return "only maintainers change flags"
    parts = path.split("/")
    if len(parts) != 4 or parts[0] != SUBMISSIONS_DIR:
        return f"submissions go to `{SUBMISSIONS_DIR}/<track>/{author}/<file>`"
    _, track, user, name = parts
    try:
        check_component(track, "track")
        check_component(name, "file name")
    except ValueError as exc:
        return md.code(exc)
    if user != author:
        return (
            f"files under {md.code(f'{SUBMISSIONS_DIR}/{track}/{user}/')} belong to {md.code(user)}; yours go under `{author}/`"
        )
    if extension_of(name) is None and not (name.endswith(META_SUFFIX) and extension_of(name[: -len(META_SUFFIX)])):
        return "not a submission file (.json, .jsonl, .json.gz, .jsonl.gz) nor its `.meta.json`"
    return None


def blob_id(entry: RepoFile | RepoFolder) -> str:
    """The git id a listing gives: a file's blob id, a folder's tree id."""
    return entry.tree_id if isinstance(entry, RepoFolder) else entry.blob_id


class PullRequestTree:
    """Reads one repo's trees and histories for the reviewer (no download, no write)."""

    def __init__(self, client: HubClient, repo_id: str):
        self.client = client
        self.repo_id = repo_id

    def history(self, revision: str) -> Iterator[list[str]]:
        """Commit ids of `revision`'s history, newest first, a page at a time (only the pages asked for are read)."""
        url = f"{self.client.endpoint}/api/{REPO_TYPE}s/{self.repo_id}/commits/{quote(revision, safe='')}"
        headers = build_hf_headers(token=self.client.token or False, library_name="open-rag-leaderboard")
        for page, _ in _paginate_pages(url, {"limit": _COMMITS_PAGE}, headers, timeout=self.client.timeout):
            yield [str(item["id"]) for item in page]

    def merge_base(self, head: str, main: str) -> str | None:
        """The first commit of the head's history that main's history holds; None if not within MAX_COMMITS_WALKED."""
        theirs, ours = self.history(head), self.history(main)
        pr_commits: list[str] = []
        main_commits: set[str] = set()
        more_pr = more_main = True
        while (more_pr or more_main) and len(pr_commits) <= MAX_COMMITS_WALKED and len(main_commits) <= MAX_COMMITS_WALKED:
            if more_pr:
                page = next(theirs, None)
                more_pr = page is not None
                pr_commits += page or []
            if more_main:
                page = next(ours, None)
                more_main = page is not None
                main_commits.update(page or [])
            found = next((c for c in pr_commits if c in main_commits), None)
            if found is not None:
                return found
        return None

    def _listing(self, revision: str, folder: str | None) -> Iterator[RepoFile | RepoFolder]:
        """One folder's entries at `revision`, lazily (a page at a time); nothing when it does not exist there."""
        try:
            yield from self.client.list_tree(self.repo_id, revision, folder)
        except EntryNotFoundError:
            return

    def _folder_changes(self, base: str, head: str, folder: str | None) -> Iterator[tuple[str, object, object]]:
        """(path, entry at base, entry at head) of every entry of `folder` that differs (None: absent)."""
        before = {e.path: e for e in self._listing(base, folder)}  # main's own folder: listed whole
        seen = set()
        for entry in self._listing(head, folder):  # the author's: read only as far as the caller goes
            seen.add(entry.path)
            old = before.get(entry.path)
            if old is None or type(old) is not type(entry) or blob_id(old) != blob_id(entry):
                yield entry.path, old, entry
        for path, old in before.items():
            if path not in seen:
                yield path, old, None

    def changes(self, base: str, head: str, author: str) -> tuple[list[str], dict[str, RepoFile]]:
        """(problems, the files to fetch: path -> entry at the head), from the trees at the base and the head.

        Folders are compared by tree id, so only changed ones are listed, and only along the shape
        submissions/<track>/<user>/<file>; anything off it is a problem, not listed further. Past
        MAX_FILES_PER_PULL_REQUEST changes the listing stops: refused, nothing fetched.
        """
        problems: list[str] = []
        added: dict[str, RepoFile] = {}
        count = 0

        def note(problem: str | None = None) -> None:
            nonlocal count
            count += 1
            if problem:
                problems.append(problem)
            if count > MAX_FILES_PER_PULL_REQUEST:
                raise _TooManyChanges

        def visit(folder: str | None, depth: int) -> None:
            for path, old, new in self._folder_changes(base, head, folder):
                kinds = {type(e) for e in (old, new) if e is not None}
                if kinds == {RepoFolder} and depth < 3 and (depth > 0 or path == SUBMISSIONS_DIR):
                    visit(path, depth + 1)  # submissions/, a track, a user's folder
                    continue
                if RepoFolder in kinds:
                    note(f"{md.code(path + '/')}: a folder off `{SUBMISSIONS_DIR}/<track>/{author}/<file>`; not looked into")
                    continue
                why = refusal(path, author)
                if old is not None:
                    kind = "modified" if new is not None else "deleted"
                    also = f" ({why})" if why else ""
                    note(f"{md.code(path)}: {kind}; a pull request may only add new submission files{also}")
                elif why:
                    note(f"{md.code(path)}: {why}")
                else:
                    note()
                    added[path] = new

        try:
            visit(None, 0)
        except _TooManyChanges:
            return [
                *problems,
                f"more than {MAX_FILES_PER_PULL_REQUEST} files changed (submission files and their `.meta.json` "
                f"sidecars counted); a pull request adds at most {MAX_FILES_PER_PULL_REQUEST}: the rest is not listed",
            ], {}
        for path in sorted(added):
            if path.endswith(META_SUFFIX) and path[: -len(META_SUFFIX)] not in added:
                problems.append(f"{md.code(path)}: a metadata file without its submission file in this pull request")
        submissions = [p for p in added if not p.endswith(META_SUFFIX)]
        if len(submissions) > MAX_SUBMISSIONS_PER_PULL_REQUEST:
            problems.append(f"{len(submissions)} submission files; at most {MAX_SUBMISSIONS_PER_PULL_REQUEST} per pull request")
        return problems, ({} if problems else added)

    def on_main(self, main: str, added: dict[str, RepoFile]) -> dict[str, str]:
        """The added paths that main already holds (another pull request, a maintainer), with their blob ids."""
        found: dict[str, str] = {}
        for folder in sorted({p.rsplit("/", 1)[0] for p in added}):
            for entry in self._listing(main, folder):
                if entry.path in added:
                    found[entry.path] = blob_id(entry)
        return found
