"""Pull-request submissions, end to end: real huggingface_hub clients (the board's and the submitters') and the fake Hub.

A submitter opens a pull request with `upload_file(..., create_pr=True)`; the board's refresh reviews it
(store/hub_prs.py + pr_review.py) and comments, merges or refuses.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest
from huggingface_hub import HfApi
from huggingface_hub import constants as hf_constants

from leaderboard import demo
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.store.hub_prs import REFUSED, VALID, fair_order
from leaderboard.store.pr_tree import allowed_path
from leaderboard.tracks import TRACKS
from leaderboard.ui import views

from hubfake import FAKE_TOKEN, running_hub

REPO = "org/subs"
ALICE, BOB = "hf_aliceALICEalice0123", "hf_bobBOBbob0123456789"
GOLD = demo.DEMO_DIR / "gold"


def run(track: str = "vdr", seed: int = 31, name: str | None = None) -> bytes:
    """A valid submission no demo file repeats (optionally under another system name)."""
    data = demo.make_submissions(track, GOLD / track, 1, seed=seed)[0][1]
    if name is None:
        return data
    doc = json.loads(data)
    doc["system"]["name"] = name
    return json.dumps(doc).encode()


@pytest.fixture
def hub(monkeypatch):
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)
    with running_hub(tokens={FAKE_TOKEN: "admin", ALICE: "alice", BOB: "bob"}) as hub:
        hub.create_repo(REPO)
        yield hub


def board_on(hub, tmp_path: Path, **store) -> Board:
    settings = StoreSettings(
        submissions_repo=REPO, hf_token=FAKE_TOKEN, hf_endpoint=hub.url, data_dir=tmp_path, hub_timeout=5, **store
    )
    return Board(Settings(data_dir=tmp_path, judge="none", board_url="https://board.example"), settings).start(background=False)


def open_pr(hub, token: str, files: dict[str, bytes], message: str = "My submission") -> int:
    """What a submitter does: one upload_file per file, the first opening the pull request, the rest pushed to it."""
    api = HfApi(endpoint=hub.url, token=token)
    paths = iter(files.items())
    path, data = next(paths)
    info = api.upload_file(
        path_or_fileobj=data, path_in_repo=path, repo_id=REPO, repo_type="dataset", create_pr=True, commit_message=message
    )
    for path, data in paths:
        api.upload_file(path_or_fileobj=data, path_in_repo=path, repo_id=REPO, repo_type="dataset", revision=info.pr_revision)
    return info.pr_num


def board_comments(hub, num: int) -> list[str]:
    return [text for author, text in hub.comments(REPO, num) if author == "admin"]


def test_a_valid_pull_request_is_scored_commented_once_and_merged(hub, tmp_path):
    data = run()
    num = open_pr(hub, ALICE, {"submissions/vdr/alice/run1.json": data})
    board = board_on(hub, tmp_path, auto_merge=True)
    comments = board_comments(hub, num)
    assert len(comments) == 1
    sha = hashlib.sha256(data).hexdigest()
    entry_id = sha[:12]
    assert "valid" in comments[0] and f"https://board.example/?tab=system&sys={entry_id}" in comments[0]
    summary = board.rescorer.cached(sha).summary
    extra = {c.key for c in TRACKS["vdr"].extra_columns}
    assert summary.overall["coverage"] == 1.0 and "- Coverage: 100%\n" in comments[0]
    for key, value in summary.overall.items():  # every headline number, with its CI where it has one
        if key in extra:
            continue
        low_high = summary.ci.get(key)
        bounds = f" (95% CI {low_high[0]:.3f} to {low_high[1]:.3f})" if low_high else ""
        assert f": {value:.3f}{bounds}\n" in comments[0] + "\n"
    assert "(95% CI" in comments[0]
    assert hub.pull_request(REPO, num).status == "closed" and "landed on main as commit" in comments[0]
    assert hub.files(REPO)["submissions/vdr/alice/run1.json"] == data
    board.refresh()  # the merge reaches main: the file is a board entry of alice's, ranked
    (entry,) = board.entries("vdr")
    assert (entry.user, entry.pull_request, entry.status, entry.id) == ("alice", None, "scored", entry_id)
    assert len(board_comments(hub, num)) == 1


def test_without_auto_merge_a_valid_pull_request_waits_as_pending_review(hub, tmp_path):
    num = open_pr(hub, ALICE, {"submissions/vdr/alice/run1.json": run()})
    board = board_on(hub, tmp_path)
    assert hub.pull_request(REPO, num).status == "open"
    assert "until a maintainer merges it" in board_comments(hub, num)[0]
    table = board.table("vdr")
    (row,) = table.to_dict("records")
    assert row["review"] == f"pending review (PR #{num})" and row["status"] == "scored"
    assert pd.isna(row["rank"]) and row["ndcg@5"] is not None  # scores shown, not ranked
    disp, _ = views.table_frames(board, "vdr")
    assert "⏳ pending review" in disp["System"][0]
    # A restarted board shows it at once, from its state, and reviews nothing again.
    hub.reset_counts()
    again = board_on(hub, tmp_path)
    assert [e.pull_request for e in again.entries("vdr")] == [num]
    assert hub.downloads() == [] and len(board_comments(hub, num)) == 1


def test_an_invalid_pull_request_gets_every_problem_and_is_closed_after_the_delay(hub, tmp_path):
    doc = json.loads(run())
    doc["predictions"][0].pop("query_id", None)
    doc["predictions"][1]["ranking"] = "not a list"
    num = open_pr(
        hub,
        ALICE,
        {
            "submissions/vdr/alice/bad.json": json.dumps(doc).encode(),
            "submissions/vdr/alice/broken.jsonl": b"{not json\n",
        },
    )
    board = board_on(hub, tmp_path, auto_merge=True)
    (comment,) = board_comments(hub, num)
    assert "invalid" in comment
    assert "`submissions/vdr/alice/bad.json`" in comment and "`submissions/vdr/alice/broken.jsonl`" in comment
    assert comment.count("\n- ") >= 3  # each problem on its own line
    assert hub.pull_request(REPO, num).status == "open" and board.entries("vdr") == []
    reviewer = board.store.pull_requests
    reviewer._clock = lambda: datetime.now(UTC) + timedelta(days=15)
    board.refresh()
    assert hub.pull_request(REPO, num).status == "closed"
    assert "Closed by the leaderboard" in hub.comments(REPO, num)[-1][1]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"submissions/vdr/bob/20260101T000000Z-aaaaaaaaaaaa.json": b"{}"}, "belong to `bob`"),
        ({"flags.json": b'{"submissions/vdr/bob/x.json": "hidden"}'}, "only maintainers change flags"),
        ({"notes.txt": b"hi"}, "submissions go to"),
    ],
)
def test_a_pull_request_touching_others_files_or_flags_is_refused(hub, tmp_path, files, expected):
    hub.commit(REPO, {"submissions/vdr/bob/20260101T000000Z-aaaaaaaaaaaa.json": run(seed=40), "flags.json": b"{}"})
    files = {**files, "submissions/vdr/alice/run1.json": run()}  # a valid file does not make it mergeable
    num = open_pr(hub, ALICE, files)
    board = board_on(hub, tmp_path, auto_merge=True)
    (comment,) = board_comments(hub, num)
    assert "not merged automatically" in comment and expected in comment
    assert hub.pull_request(REPO, num).status == "open"
    assert board.store.pull_requests.reviews[num].outcome == REFUSED
    assert [e.user for e in board.entries("vdr")] == ["bob"]  # nothing pending from the refused pull request
    board.store.pull_requests._clock = lambda: datetime.now(UTC) + timedelta(days=60)
    board.refresh()
    assert hub.pull_request(REPO, num).status == "open"  # refused ones are a maintainer's call, never closed


def test_a_deletion_is_refused(hub, tmp_path):
    path = "submissions/vdr/alice/20260101T000000Z-aaaaaaaaaaaa.json"
    hub.commit(REPO, {path: run(seed=41)})
    num = hub.open_pull_request(REPO, "alice", {}, deletes=[path])
    board_on(hub, tmp_path, auto_merge=True)
    (comment,) = board_comments(hub, num)
    assert f"`{path}`: deleted" in comment and hub.pull_request(REPO, num).status == "open"


def test_a_refresh_with_nothing_new_costs_a_few_requests_no_download_no_comment(hub, tmp_path):
    nums = [open_pr(hub, ALICE, {f"submissions/vdr/alice/run{i}.json": run(seed=50 + i)}) for i in range(3)]
    board = board_on(hub, tmp_path)
    assert all(len(board_comments(hub, n)) == 1 for n in nums)
    hub.reset_counts()
    board.refresh()
    assert hub.downloads() == [] and all(len(board_comments(hub, n)) == 1 for n in nums)
    assert hub.count("POST") == 0
    assert hub.count() == 3  # main's head, the open pull requests, the heads (theirs and main's)
    # A new push to one pull request: that one is reviewed (and commented) again once the comment interval
    # is over, the others are not.
    HfApi(endpoint=hub.url, token=ALICE).upload_file(
        path_or_fileobj=run(seed=60, name="v2"),
        path_in_repo="submissions/vdr/alice/run0.json",
        repo_id=REPO,
        repo_type="dataset",
        revision=f"refs/pr/{nums[0]}",
    )
    board.refresh()
    assert [len(board_comments(hub, n)) for n in nums] == [1, 1, 1]
    board.store.pull_requests._clock = lambda: datetime.now(UTC) + timedelta(minutes=11)
    board.refresh()
    assert [len(board_comments(hub, n)) for n in nums] == [2, 1, 1]


def test_a_duplicate_pull_request_is_commented_as_a_duplicate(hub, tmp_path):
    data = run()
    hub.commit(REPO, {"submissions/vdr/bob/20260101T000000Z-aaaaaaaaaaaa.json": data})
    doc = json.loads(data)
    doc["system"]["name"] = "my own name"
    doc["predictions"] = list(reversed(doc["predictions"]))  # the same predictions, written differently
    num = open_pr(hub, ALICE, {"submissions/vdr/alice/copy.json": json.dumps(doc, indent=1).encode()})
    board = board_on(hub, tmp_path, auto_merge=True)
    (comment,) = board_comments(hub, num)
    bob = board.entries("vdr")[0]
    assert f"duplicate: these predictions are already on the vdr track as submission {bob.id}" in comment
    assert hub.pull_request(REPO, num).status == "open"


def test_a_name_taken_and_the_daily_limit_apply(hub, tmp_path):
    hub.commit(REPO, {"submissions/vdr/bob/20260101T000000Z-aaaaaaaaaaaa.json": run(seed=70, name="Shared")})
    num = open_pr(hub, ALICE, {"submissions/vdr/alice/a.json": run(seed=71, name="shared")})
    board = board_on(hub, tmp_path, submissions_per_day=1)
    assert "is already used on the vdr track by `bob`" in board_comments(hub, num)[0]
    two = open_pr(
        hub, ALICE, {"submissions/vdr/alice/b.json": run(seed=72, name="b"), "submissions/vdr/alice/c.json": run(seed=73)}
    )
    board.refresh()
    assert "the limit is 1 a day" in board_comments(hub, two)[0]


def test_a_too_big_file_is_reported_and_never_downloaded(hub, tmp_path):
    num = open_pr(hub, ALICE, {"submissions/vdr/alice/huge.jsonl": b" " * 5000})
    settings = StoreSettings(submissions_repo=REPO, hf_token=FAKE_TOKEN, hf_endpoint=hub.url, data_dir=tmp_path, hub_timeout=5)
    board = Board(Settings(data_dir=tmp_path, judge="none"), settings)
    board.rescorer.max_bytes = 4096
    board.start(background=False)
    (comment,) = board_comments(hub, num)
    assert "5,000 bytes, over the 4,096-byte limit (not downloaded)" in comment
    assert "submissions/vdr/alice/huge.jsonl" not in hub.downloads()


def test_a_sidecar_must_agree_with_the_file_and_the_pull_request(hub, tmp_path):
    data = run()
    meta = {"track": "vdr", "user": "mallory", "submitted_at": "2020-01-01T00:00:00Z"}
    num = open_pr(
        hub,
        ALICE,
        {"submissions/vdr/alice/run.json": data, "submissions/vdr/alice/run.json.meta.json": json.dumps(meta).encode()},
    )
    board_on(hub, tmp_path, auto_merge=True)
    (comment,) = board_comments(hub, num)
    assert "user is `'mallory'`, expected 'alice'" in comment and "submitted_at `2020-01-01T00:00:00Z`" in comment
    assert hub.pull_request(REPO, num).status == "open"


def test_a_draft_from_upload_folder_is_reviewed_once_it_has_its_commit(hub, tmp_path):
    folder = tmp_path / "upload" / "submissions" / "vdr" / "alice"
    folder.mkdir(parents=True)
    (folder / "run.json").write_bytes(run())
    info = HfApi(endpoint=hub.url, token=ALICE).upload_folder(
        folder_path=tmp_path / "upload", repo_id=REPO, repo_type="dataset", create_pr=True, commit_message="folder"
    )
    board = board_on(hub, tmp_path / "board")
    assert board.store.pull_requests.reviews[info.pr_num].outcome == VALID


def test_paths_and_order():
    assert allowed_path("submissions/vdr/alice/../x.json", "alice") is not None
    assert allowed_path("submissions/vdr/alice/x.json", "alice") is None
    assert allowed_path("submissions/vdr/alice/x.json.meta.json", "alice") is None
    assert allowed_path("submissions/vdr/alice/sub/x.json", "alice") is not None
    # round-robin across authors, each author's longest-waiting first
    waiting = [("t1", 1, "m"), ("t1", 2, "m"), ("t3", 3, "m"), ("t2", 4, "a"), ("t0", 5, "b"), ("t4", 6, "a")]
    assert fair_order(waiting) == [5, 1, 4, 2, 6, 3]


def test_submit_from_the_cli_opens_a_pull_request_the_board_scores(hub, tmp_path, monkeypatch, capsys):
    from leaderboard import cli

    monkeypatch.setenv("HF_TOKEN", ALICE)
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    file = tmp_path / "my-run.json"
    file.write_bytes(run())
    hub.reset_counts()
    cli.main(["submit", str(file), "--repo", REPO, "--dry-run"])
    plan = json.loads(capsys.readouterr().out)
    (path, meta_path) = plan["files"]
    assert path.startswith("submissions/vdr/alice/") and meta_path == path + ".meta.json"
    assert plan["files"][meta_path]["user"] == "alice" and plan["files"][meta_path]["original_filename"] == "my-run.json"
    assert hub.count("POST") == 0  # a dry run sends nothing

    cli.main(["submit", str(file), "--repo", REPO, "--track", "vdr"])
    out = capsys.readouterr().out
    assert f"pull request opened: {hub.url}/datasets/{REPO}/discussions/1" in out
    board = board_on(hub, tmp_path / "board", auto_merge=True)
    (comment,) = board_comments(hub, 1)
    assert "valid" in comment and hub.pull_request(REPO, 1).status == "closed"
    board.refresh()
    (entry,) = board.entries("vdr")
    assert entry.user == "alice" and entry.metadata["original_filename"] == "my-run.json"


def test_submit_refuses_an_invalid_file_before_any_request(hub, tmp_path, monkeypatch, capsys):
    from leaderboard import cli

    monkeypatch.setenv("HF_TOKEN", ALICE)
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    file = tmp_path / "bad.json"
    file.write_bytes(b'{"track": "vdr", "system": {}, "predictions": []}')
    hub.reset_counts()
    with pytest.raises(SystemExit) as exit_:
        cli.main(["submit", str(file), "--repo", REPO])
    assert exit_.value.code == 1 and "system.name" in capsys.readouterr().err
    assert hub.count() == 0


def test_in_the_app_reviews_run_in_their_own_thread(hub, tmp_path):
    import time

    num = open_pr(hub, ALICE, {"submissions/vdr/alice/run1.json": run()})
    settings = StoreSettings(submissions_repo=REPO, hf_token=FAKE_TOKEN, hf_endpoint=hub.url, data_dir=tmp_path, hub_timeout=5)
    board = Board(Settings(data_dir=tmp_path, judge="none"), settings).start(background=True)
    try:
        deadline = time.monotonic() + 60
        while not [e for e in board.entries("vdr") if e.pull_request == num] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [e.review for e in board.entries("vdr")] == [f"pending review (PR #{num})"]
        assert len(board_comments(hub, num)) == 1
    finally:
        board.stop()
    assert not board._review_thread.is_alive()


def test_a_lost_state_does_not_mean_a_second_comment(hub, tmp_path):
    num = open_pr(hub, ALICE, {"submissions/vdr/alice/run1.json": run()})
    board = board_on(hub, tmp_path)
    board.store.pull_requests.state_file.unlink()
    again = board_on(hub, tmp_path)  # reviews the pull request again: its comment for this head is found
    assert again.store.pull_requests.reviews[num].outcome == VALID
    assert len(board_comments(hub, num)) == 1


def test_an_author_posting_the_marker_does_not_silence_the_review(hub, tmp_path):
    num = open_pr(hub, ALICE, {"submissions/vdr/alice/run1.json": run()})
    head = hub.pull_request(REPO, num).commits[-1].sha
    HfApi(endpoint=hub.url, token=ALICE).comment_discussion(
        REPO, num, f"<!-- open-rag-leaderboard review {head} -->", repo_type="dataset"
    )
    board_on(hub, tmp_path)
    assert len(board_comments(hub, num)) == 1


def test_the_fake_hub_serves_pull_requests_to_the_real_client(hub, tmp_path):
    from huggingface_hub import hf_hub_download

    hub.discussions_page_size = 2  # the listing pages: the client follows them
    nums = [hub.open_pull_request(REPO, "alice", {f"submissions/vdr/alice/{i}.json": b"%d" % i}) for i in range(5)]
    api = HfApi(endpoint=hub.url, token=FAKE_TOKEN)
    listed = api.get_repo_discussions(REPO, repo_type="dataset", discussion_type="pull_request", discussion_status="open")
    assert sorted(d.num for d in listed) == nums
    tree = api.list_repo_tree(REPO, revision="refs/pr/3", repo_type="dataset", recursive=True)
    assert "submissions/vdr/alice/2.json" in {f.path for f in tree}
    local = hf_hub_download(
        REPO,
        "submissions/vdr/alice/2.json",
        repo_type="dataset",
        revision="refs/pr/3",
        endpoint=hub.url,
        token=FAKE_TOKEN,
        cache_dir=tmp_path,
    )
    assert Path(local).read_bytes() == b"2"
    refs = api.list_repo_refs(REPO, repo_type="dataset", include_pull_requests=True)
    assert {r.ref for r in refs.pull_requests} == {f"refs/pr/{n}" for n in nums}
    hub.commit(REPO, {"x.txt": b"main moved"})
    history = [c.commit_id for c in api.list_repo_commits(REPO, revision="refs/pr/3", repo_type="dataset")]
    mains = [c.sha for c in hub.commits(REPO)]
    assert history == [hub.pull_request(REPO, 3).commits[-1].sha, *reversed(mains[:-1])]  # its own, then its base's
    api.change_discussion_status(REPO, nums[0], "closed", repo_type="dataset")
    assert api.get_discussion_details(REPO, nums[0], repo_type="dataset").status == "closed"
    api.merge_pull_request(REPO, nums[1], repo_type="dataset")
    assert hub.files(REPO)["submissions/vdr/alice/1.json"] == b"1"
    with pytest.raises(Exception, match="not an open pull request"):
        api.merge_pull_request(REPO, nums[0], repo_type="dataset")


def test_a_merge_conflict_is_said_in_the_comment_and_left_to_a_maintainer(hub, tmp_path):
    num = open_pr(hub, ALICE, {"submissions/vdr/alice/run1.json": run()})
    other = run(seed=90, name="other")
    hub.commit(REPO, {"submissions/vdr/alice/run1.json": other})  # main moved: same path
    board_on(hub, tmp_path, auto_merge=True)
    (comment,) = board_comments(hub, num)
    assert "`submissions/vdr/alice/run1.json`: a file of this name is on main already" in comment
    assert hub.pull_request(REPO, num).status == "open" and hub.files(REPO)["submissions/vdr/alice/run1.json"] == other


def test_a_refused_comment_is_retried_alone_without_fetching_again(hub, tmp_path, monkeypatch):
    from hubfake import HubError

    num = open_pr(hub, ALICE, {"submissions/vdr/alice/run1.json": run()})

    def refuse(*args, **kwargs):
        raise HubError(403, "You cannot comment here")

    posting = hub.comment
    monkeypatch.setattr(hub, "comment", refuse)
    board = board_on(hub, tmp_path)
    assert board_comments(hub, num) == [] and board.store.pull_requests.reviews[num].outcome == VALID
    hub.reset_counts()
    board.refresh()
    assert hub.downloads() == [] and hub.count("POST", "/comment") == 1  # only the comment is tried again
    hub.comment = posting  # the Hub takes comments again
    board.refresh()
    board.refresh()
    assert len(board_comments(hub, num)) == 1


# ---- the pull-request door under attack (issue 24) ------------------------------------------------------------------


def push(hub, num: int, files: dict[str, bytes], deletes: list[str] | None = None, author: str = "alice") -> str:
    """The author's push to `refs/pr/<num>` (no HTTP: it lands exactly when a test's fault control says)."""
    return hub.commit_to_pull_request(REPO, num, files, deletes, "push", author).sha


def reviewed_head(hub, num: int) -> str:
    return hub.pull_request(REPO, num).commits[-1].sha


def test_a_cut_diff_hides_nothing_the_tree_shows(hub, tmp_path):
    victim, theirs = "submissions/vdr/bob/20260101T000000Z-aaaaaaaaaaaa.json", run(seed=40)
    hub.commit(REPO, {victim: theirs})
    ours = {f"submissions/vdr/alice/run{i}.json": run(seed=140 + i, name=f"alice {i}") for i in range(2)}
    num = hub.open_pull_request(REPO, "alice", {**ours, victim: b"", "zzz-smuggled.md": b"# hi\n"})
    repo = hub.repos[("dataset", REPO)]
    diff = hub.pr_diff(repo, hub.pull_request(REPO, num))
    hub.diff_limit = diff.index("diff --git a/submissions/vdr/bob/")  # the Hub's cut falls before the victim's file
    board_on(hub, tmp_path, auto_merge=True)
    main = hub.files(REPO)
    assert main[victim] == theirs and "zzz-smuggled.md" not in main and not set(ours) & set(main)
    (comment,) = board_comments(hub, num)
    assert "not merged automatically" in comment
    assert f"`{victim}`" in comment and "`zzz-smuggled.md`" in comment
    assert hub.pull_request(REPO, num).status == "open"


def test_a_push_between_review_and_merge_is_not_merged(hub, tmp_path):
    hub.commit(REPO, {"submissions/vdr/bob/20260101T000000Z-aaaaaaaaaaaa.json": run(seed=40), "flags.json": b"{}"})
    mine = "submissions/vdr/alice/run1.json"
    num = hub.open_pull_request(REPO, "alice", {mine: run()})
    hidden = json.dumps({"submissions/vdr/bob/20260101T000000Z-aaaaaaaaaaaa.json": {"status": "hidden"}}).encode()
    # The author pushes while the board downloads her file: after the review's listing, before any merge.
    hub.on_request(f"/resolve/{reviewed_head(hub, num)}/{mine}", lambda: push(hub, num, {"flags.json": hidden}, [mine]), "GET")
    board = board_on(hub, tmp_path, auto_merge=True)
    assert hub.files(REPO)["flags.json"] == b"{}" and mine not in hub.files(REPO)
    assert hub.pull_request(REPO, num).status == "open"
    board.refresh()  # the new head is reviewed: it touches flags.json and deletes a file
    assert hub.files(REPO)["flags.json"] == b"{}"
    (comment,) = board_comments(hub, num)
    assert "not merged automatically" in comment and "flags.json" in comment
    assert [e.user for e in board.entries("vdr")] == ["bob"]


def test_a_push_just_before_the_boards_commit_lands_only_the_reviewed_bytes(hub, tmp_path):
    hub.commit(REPO, {"flags.json": b"{}"})
    mine, data = "submissions/vdr/alice/run1.json", run()
    num = hub.open_pull_request(REPO, "alice", {mine: data})
    reviewed = hub.pull_request(REPO, num).commits[-1].sha
    hidden = b'{"submissions/vdr/alice/run1.json": {"status": "hidden"}}'
    swap = lambda: push(hub, num, {"flags.json": hidden, mine: b"{}"})  # noqa: E731
    hub.on_request("/preupload/main", swap)  # the board's own commit to main
    hub.on_request("/merge", swap)  # (a merge through the Hub's merge button, for comparison)
    board_on(hub, tmp_path, auto_merge=True)
    main = hub.files(REPO)
    assert main["flags.json"] == b"{}" and main[mine] == data  # the bytes reviewed, nothing pushed after
    assert hub.pull_request(REPO, num).status == "closed"
    (comment,) = board_comments(hub, num)
    assert f"review of {reviewed[:7]}: valid" in comment and "landed on main as commit" in comment


def test_reviews_are_fair_across_authors_and_comments_coalesce(hub, tmp_path):
    floods = [hub.open_pull_request(REPO, "mallory", {f"submissions/vdr/mallory/f{i}.json": b"{}"}) for i in range(10)]
    num = open_pr(hub, ALICE, {"submissions/vdr/alice/run1.json": run()})
    now = [datetime.now(UTC)]
    settings = StoreSettings(submissions_repo=REPO, hf_token=FAKE_TOKEN, hf_endpoint=hub.url, data_dir=tmp_path, hub_timeout=5)
    board = Board(Settings(data_dir=tmp_path, judge="none"), settings)
    board.store.pull_requests._clock = lambda: now[0]
    board.start(background=False)
    for round_ in range(4):  # ten pull requests pushed at every refresh
        for n in floods:
            push(hub, n, {f"submissions/vdr/mallory/f{n}.json": b'{"round": %d}' % round_}, author="mallory")
        if round_ < 1:
            board.refresh()
            assert len(board_comments(hub, num)) == 1, "another author's pull request waited more than two refreshes"
        else:
            now[0] += timedelta(seconds=30)
            board.refresh()
    assert [len(board_comments(hub, n)) for n in floods] == [1] * 10  # pushes within the interval: no new comment
    now[0] += timedelta(minutes=11)
    board.refresh()
    assert [len(board_comments(hub, n)) for n in floods] == [2] * 10  # one comment per interval, on the latest head
    heads = {n: hub.pull_request(REPO, n).commits[-1].sha for n in floods}
    assert all(heads[n][:7] in board_comments(hub, n)[-1] for n in floods)


def test_a_sidecar_flood_is_refused_from_the_listing_without_downloads(hub, tmp_path):
    files = {"submissions/vdr/alice/run.json": run()}
    files.update({f"submissions/vdr/alice/x{i}.json.meta.json": b"{}" for i in range(3000)})
    num = hub.open_pull_request(REPO, "alice", files)
    hub.reset_counts()
    board_on(hub, tmp_path, auto_merge=True)
    assert hub.count(path_contains="/resolve/") == 0
    (comment,) = board_comments(hub, num)
    assert "not merged automatically" in comment and ".meta.json" in comment
    assert hub.count() < 40 and "submissions/vdr/alice/run.json" not in hub.files(REPO)


def test_a_comment_flood_by_someone_else_does_not_block_the_review(hub, tmp_path, monkeypatch):
    from leaderboard.store import hub_prs

    monkeypatch.setattr(hub_prs, "MAX_DETAILS_BYTES", 20_000)
    num = open_pr(hub, ALICE, {"submissions/vdr/alice/run1.json": run()})
    for _ in range(5):
        hub.comment(REPO, num, "bob", "z" * 10_000)
    board_on(hub, tmp_path, auto_merge=True)
    (comment,) = board_comments(hub, num)
    assert "valid" in comment and "too large" not in comment
    assert "submissions/vdr/alice/run1.json" in hub.files(REPO)


HOSTILE = "[Claim prize](http://x) ![t](http://x/t.png) @maint <b>x</b> *y*"


def rendered(comment: str) -> tuple[str, str]:
    """(html, the text outside code spans) of a comment as CommonMark renders it."""
    import re

    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(comment)
    return html, re.sub(r"<code>.*?</code>", "", html, flags=re.S)


def test_submitter_text_in_comments_is_inert(hub, tmp_path):
    valid = open_pr(hub, ALICE, {"submissions/vdr/alice/run1.json": run(name=HOSTILE)})
    meta = {"track": "vdr", "user": HOSTILE}
    bad = open_pr(
        hub,
        ALICE,
        {
            "submissions/vdr/alice/run2.json": run(seed=32, name="plain"),
            "submissions/vdr/alice/run2.json.meta.json": json.dumps(meta).encode(),
        },
    )
    plain = HOSTILE.replace("/", "")  # a path: no folders
    hub.commit(REPO, {f"b: {plain}.md": b"hi"})
    refused = hub.open_pull_request(REPO, "alice", {f"notes: {plain}.md": b"hi", f"b: {plain}.md": b"edited"})
    board_on(hub, tmp_path)
    for num in (valid, bad, refused):
        (comment,) = board_comments(hub, num)
        html, outside = rendered(comment)
        for tag in ('href="http://x', "<img", "<b>x", "<em>y"):  # the board's own links and emphasis are its own
            assert tag not in html, (num, tag, comment)
        assert "@maint" not in outside and "http:" not in outside, comment
        assert "@maint" in html, comment  # shown, as text


def test_a_landing_whose_answer_was_lost_is_found_on_main_and_closed(hub, tmp_path):
    data = run()
    num = open_pr(hub, ALICE, {"submissions/vdr/alice/run1.json": data})
    hub.lose_replies("/commit/main")  # the board's commit lands; its answer never comes
    board = board_on(hub, tmp_path, auto_merge=True)
    hub.ok()
    assert hub.files(REPO)["submissions/vdr/alice/run1.json"] == data and board_comments(hub, num) == []
    board.refresh()  # reviewed again: the files are on main, as reviewed
    (comment,) = board_comments(hub, num)
    assert "on main already" in comment and hub.pull_request(REPO, num).status == "closed"
    assert len([c for c in hub.commits(REPO) if "pull request #" in c.message]) == 1  # landed once


def test_main_moving_before_the_landing_means_a_new_review_then_the_landing(hub, tmp_path):
    data = run()
    num = open_pr(hub, ALICE, {"submissions/vdr/alice/run1.json": data})
    other = {"submissions/vdr/bob/20260101T000000Z-aaaaaaaaaaaa.json": run(seed=40)}
    hub.on_request("/preupload/main", lambda: hub.commit(REPO, other))  # a maintainer's push lands first
    board = board_on(hub, tmp_path, auto_merge=True)
    assert "submissions/vdr/alice/run1.json" not in hub.files(REPO) and board_comments(hub, num) == []
    board.refresh()  # reviewed again against the new main: it lands on top of it
    main = hub.files(REPO)
    assert main["submissions/vdr/alice/run1.json"] == data and set(other) <= set(main)
    assert len(board_comments(hub, num)) == 1 and hub.pull_request(REPO, num).status == "closed"
