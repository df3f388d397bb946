"""Duplicates by content (spec "Duplicates"): the same parsed predictions are ranked once, as the earliest copy.

Whatever the compression, whitespace, key order, record order, header or repo path: the later copies are not
rows of the tables, their detail says "duplicate of <id>", and the app refuses them with that id. Also the
submit-time name rule: another submitter's system name on the same track is refused.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from leaderboard import demo
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.ui import views

from appserver import place_submission
from hubfake import FAKE_TOKEN, fake_hub  # noqa: F401 (fixture)

GOLD = demo.DEMO_DIR / "gold"


def local_board(tmp_path: Path) -> Board:
    return Board(Settings(data_dir=tmp_path, judge="none"), StoreSettings(data_dir=tmp_path)).start(background=False)


def fresh_run(track: str = "unidoc", seed: int = 21) -> bytes:
    """A valid submission no demo file repeats."""
    return demo.make_submissions(track, GOLD / track, 1, seed=seed)[0][1]


def reshuffled(data: bytes, name: str) -> bytes:
    """The same predictions written differently: other header name, reversed record and key order, indented."""
    doc = json.loads(data)
    doc["system"] = {**doc["system"], "name": name}
    doc["predictions"] = [dict(reversed(list(r.items()))) for r in reversed(doc["predictions"])]
    return json.dumps(dict(reversed(list(doc.items()))), indent=2).encode()


def rows(board: Board, track: str = "unidoc") -> list[str]:
    return board.table(track)["id"].tolist()


def test_the_same_bytes_at_two_paths_give_one_row(tmp_path):
    data = fresh_run()
    place_submission(tmp_path, "unidoc", "alice", data, "json", stamp="20260101T000000Z")
    place_submission(tmp_path, "unidoc", "bob", data, "json", stamp="20260102T000000Z")
    board = local_board(tmp_path)
    alice = next(e for e in board.entries("unidoc") if e.user == "alice")
    bob = next(e for e in board.entries("unidoc") if e.user == "bob")
    assert alice.duplicate_of is None and bob.duplicate_of == alice.id
    assert alice.id != bob.id and alice.id == alice.sha256[:12]  # the earliest keeps the citable hash
    assert rows(board).count(alice.id) == 1 and bob.id not in rows(board)
    assert board.entry(bob.id) is bob and board.entry(alice.id) is alice  # both reachable
    meta, *_ = views.detail(board, bob.id)
    assert f"duplicate of {alice.id}" in meta
    assert "duplicate of" not in views.detail(board, alice.id)[0]


def test_gzipped_reformatted_copies_are_duplicates_and_the_earliest_ranks(tmp_path):
    data = fresh_run(seed=22)
    # the later stamp is the original; the earlier one a reformatted, gzipped copy by someone else
    place_submission(tmp_path, "unidoc", "carol", data, "json", stamp="20260105T000000Z")
    place_submission(tmp_path, "unidoc", "dave", gzip.compress(reshuffled(data, "Copy")), "json.gz", stamp="20260103T000000Z")
    place_submission(tmp_path, "unidoc", "erin", data + b"\n", "json", stamp="20260104T000000Z")
    board = local_board(tmp_path)
    by_user = {e.user: e for e in board.entries("unidoc")}
    dave = by_user["dave"]
    assert dave.status == "scored" and dave.duplicate_of is None and dave.id in rows(board)
    assert by_user["carol"].duplicate_of == dave.id and by_user["erin"].duplicate_of == dave.id
    assert by_user["carol"].id not in rows(board) and by_user["erin"].id not in rows(board)
    # a different run is not a duplicate
    assert all(e.duplicate_of is None for e in board.entries("unidoc") if e.user == "demo")


@pytest.mark.parametrize("variant", ["gzip", "trailing newline", "reformatted"])
def test_resubmitting_the_same_predictions_is_refused_with_the_earlier_id(tmp_path, variant):
    data = fresh_run(seed=23)
    place_submission(tmp_path, "unidoc", "frank", data, "json")  # arrived by direct upload
    board = local_board(tmp_path)
    earlier = next(e for e in board.entries("unidoc") if e.user == "frank")
    again, name = {
        "gzip": (gzip.compress(data), "run.json.gz"),
        "trailing newline": (data + b"\n", "run.json"),
        "reformatted": (reshuffled(data, "Brand new name"), "run.json"),
    }[variant]
    before = len(board.entries())
    for user in ("frank", "grace"):  # the owner and anybody else alike
        status = board.submit(user=user, track="unidoc", filename=name, data=again, metadata={})
        assert status.state == "duplicate" and status.existing == earlier.id
        assert f"already submitted to the unidoc track as submission {earlier.id}" in status.message
    assert len(board.entries()) == before


def test_an_app_submission_repeated_by_direct_upload_is_marked(tmp_path):
    board = local_board(tmp_path)
    data = fresh_run(seed=24)
    first = board.submit(user="heidi", track="unidoc", filename="mine.json", data=data, metadata={})
    assert first.ok
    place_submission(tmp_path, "unidoc", "ivan", gzip.compress(data), "json.gz", stamp="29990101T000000Z")
    board.refresh()
    heidi = next(e for e in board.entries("unidoc") if e.user == "heidi")
    ivan = next(e for e in board.entries("unidoc") if e.user == "ivan")
    assert ivan.duplicate_of == heidi.id and ivan.id not in rows(board) and heidi.id in rows(board)


def test_duplicates_at_two_paths_of_the_hub_repo(fake_hub, tmp_path):  # noqa: F811
    data = fresh_run("vdr", seed=25)
    fake_hub.create_repo("org/subs", repo_type="dataset")
    fake_hub.commit(
        "org/subs",
        {
            "submissions/vdr/alice/20260101T000000Z-aaaaaaaaaaaa.json": data,
            "submissions/vdr/bob/20260201T000000Z-bbbbbbbbbbbb.json.gz": gzip.compress(data),
        },
    )
    settings = StoreSettings(
        submissions_repo="org/subs", hf_token=FAKE_TOKEN, hf_endpoint=fake_hub.url, data_dir=tmp_path, hub_timeout=5
    )
    board = Board(Settings(data_dir=tmp_path, judge="none"), settings).start(background=False)
    alice, bob = sorted(board.entries("vdr"), key=lambda e: e.user)
    assert alice.status == bob.status == "scored"
    assert bob.duplicate_of == alice.id and rows(board, "vdr") == [alice.id]
    assert f"duplicate of {alice.id}" in views.detail(board, bob.id)[0]
    before = set(fake_hub.files("org/subs"))
    refused = board.submit(user="carol", track="vdr", filename="again.json", data=data + b"\n", metadata={})
    assert refused.state == "duplicate" and refused.existing == alice.id
    assert set(fake_hub.files("org/subs")) == before  # nothing reached the repo


def test_another_owners_name_is_refused_and_the_owners_new_version_accepted(tmp_path):
    board = local_board(tmp_path)
    demo_entry = next(e for e in board.entries("unidoc") if e.user == "demo")
    taken = demo_entry.name
    doc = json.loads(fresh_run(seed=26))
    for spelled in (taken, taken.upper(), "  " + taken.replace(" ", "   ") + " "):
        doc["system"]["name"] = spelled
        status = board.submit(user="mallory", track="unidoc", filename="x.json", data=json.dumps(doc).encode(), metadata={})
        assert status.state == "invalid" and "name is taken" in status.message
        assert f"{taken!r}" in status.errors[0] or taken.upper() in status.errors[0]
        assert "demo" in status.errors[0] and demo_entry.id in status.errors[0]

    doc["system"]["name"] = "Mallory's own system"
    assert board.submit(user="mallory", track="unidoc", filename="a.json", data=json.dumps(doc).encode(), metadata={}).ok
    doc2 = json.loads(fresh_run(seed=27))
    doc2["system"]["name"] = "MALLORY'S OWN  SYSTEM"  # the same owner's next version under the same name
    assert board.submit(user="mallory", track="unidoc", filename="b.json", data=json.dumps(doc2).encode(), metadata={}).ok
    # the same name on another track is someone else's business
    vdr = json.loads(fresh_run("vdr", seed=27))
    vdr["system"]["name"] = taken
    assert board.submit(user="mallory", track="vdr", filename="v.json", data=json.dumps(vdr).encode(), metadata={}).ok
