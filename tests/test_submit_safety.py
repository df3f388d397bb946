"""The submit path under abuse: size cap before reading, temp uploads removed, rejected uploads counted.

Board-level tests use a local board; the upload tests go through the running app with gradio_client,
as a browser's upload does.
"""

from __future__ import annotations

import gzip
import io
import re
import subprocess
import sys
import tracemalloc
import uuid
from pathlib import Path

import httpx
import pytest
from gradio.utils import get_upload_folder
from gradio_client import Client, handle_file

from leaderboard import demo
from leaderboard.limits import InvalidLedger
from leaderboard.service import Board
from leaderboard.settings import Settings
from leaderboard.store import StoreSettings
from leaderboard.submission import DEFAULT_MAX_BYTES
from leaderboard.tracks import TRACKS
from leaderboard.ui import views

from appserver import running_app

BAD = b'{"track": "unidoc", "system": {"name": "Broken"}}\n{"id": 3}\n'


def local_board(tmp_path: Path, **store) -> Board:
    return Board(Settings(data_dir=tmp_path, judge="none"), StoreSettings(data_dir=tmp_path, **store)).start(background=False)


def valid_unidoc(seed: int = 11) -> tuple[str, bytes]:
    return demo.make_submissions("unidoc", demo.DEMO_DIR / "gold" / "unidoc", 1, seed=seed)[0]


def uploads_named(name: str) -> list[Path]:
    return list(Path(get_upload_folder()).rglob(name))


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with running_app(tmp_path_factory.mktemp("board")) as running:
        yield running


@pytest.fixture(scope="module")
def client(app):
    return Client(app.url, verbose=False)


def test_the_upload_temp_file_is_removed_after_submit(client, tmp_path):
    for body in (BAD, valid_unidoc()[1]):  # refused and accepted uploads alike
        name = f"safety-{uuid.uuid4().hex}.jsonl"
        path = tmp_path / name
        path.write_bytes(body)
        html = client.predict("unidoc", handle_file(str(path)), "", "", "", "", "cleaner", api_name="/submit")
        assert "submit-invalid" in html or "submit-queued" in html
        assert uploads_named(name) == [], "the uploaded copy is still in Gradio's upload folder"


def test_an_upload_over_the_size_cap_is_refused_at_the_door(client, app, tmp_path):
    assert app.blocks.max_file_size == DEFAULT_MAX_BYTES
    big = tmp_path / f"big-{uuid.uuid4().hex}.jsonl"
    with open(big, "wb") as fh:  # sparse: 1 byte past the cap costs no disk
        fh.truncate(DEFAULT_MAX_BYTES + 1)
    # Straight to the upload route, as a hostile client would (gradio_client refuses it before sending).
    with open(big, "rb") as fh:
        reply = httpx.post(f"{app.url}gradio_api/upload", files={"files": (big.name, fh)}, timeout=120)
    assert reply.status_code == 413 and "134217728" in reply.text.replace(",", "")
    assert uploads_named(big.name) == []


def test_a_200_mb_upload_is_refused_without_reading_it_whole(tmp_path, monkeypatch):
    board = local_board(tmp_path)
    big = tmp_path / "huge.jsonl"
    with open(big, "wb") as fh:
        fh.truncate(200 * 1024 * 1024)
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail(f"{self} read whole"))
    tracemalloc.start()
    try:
        status = board.submit_upload(user="alice", track="unidoc", path=big, overrides={"name": "Huge"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert status.state == "invalid" and "over the size cap of 134,217,728 bytes" in status.errors[0]
    assert peak < 160 * 1024 * 1024, f"{peak:,} bytes allocated for a refused 200 MB file"
    assert board.invalid_ledger.used("unidoc", "alice") == 1  # an oversized upload is a rejected upload


def test_rejected_uploads_count_and_the_allowance_refuses_before_validating(tmp_path, monkeypatch):
    board = local_board(tmp_path, invalid_submissions_per_day=2)
    for _ in range(2):
        assert board.submit(user="mallory", track="unidoc", filename="bad.jsonl", data=BAD, metadata={}).state == "invalid"
    # other users and other tracks have their own allowance
    assert board.submit(user="alice", track="unidoc", filename="bad.jsonl", data=BAD, metadata={}).state == "invalid"
    validated = []
    monkeypatch.setattr(board, "_validate", lambda *a: validated.append(a) or pytest.fail("validated"))
    name, data = valid_unidoc()
    refused = board.submit(user="mallory", track="unidoc", filename=name, data=data, metadata={})
    assert refused.state == "rate_limited" and not validated
    assert "2 rejected upload(s) to the unidoc track today" in refused.message
    assert "allowance: 2 rejected uploads per UTC day" in refused.message
    assert board.invalid_ledger.used("unidoc", "alice") == 1

    # the count is persisted: a restarted app refuses too
    again = local_board(tmp_path, invalid_submissions_per_day=2)
    assert again.submit(user="mallory", track="unidoc", filename=name, data=data, metadata={}).state == "rate_limited"
    assert again.submit(user="mallory", track="vdr", filename="bad.jsonl", data=BAD, metadata={}).state == "invalid"


def test_the_ledger_keeps_only_today_and_survives_a_broken_file(tmp_path):
    from datetime import UTC, datetime

    now = [datetime(2026, 1, 1, 23, 59, tzinfo=UTC)]
    ledger = InvalidLedger(tmp_path / "ledger.json", 3, clock=lambda: now[0])
    assert [ledger.add("vdr", "bob") for _ in range(3)] == [1, 2, 3] and ledger.exhausted("vdr", "bob")
    now[0] = datetime(2026, 1, 2, 0, 0, tzinfo=UTC)
    assert ledger.used("vdr", "bob") == 0 and not ledger.exhausted("vdr", "bob")
    (tmp_path / "ledger.json").write_text('{"day": ')  # truncated: counting restarts, nothing raises
    assert ledger.add("vdr", "bob") == 1


# ---- bombs through the Submit endpoint, in an app of its own --------------------------------------------------
UNIDOC_COLUMNS = views.default_columns(TRACKS["unidoc"])  # the default view a visitor opens
PEAK_BUDGET_KB = 1_200 * 1024  # issue 8: the app's peak under bombs stays under 1.2 GB
SERVE = """
import sys
sys.path.insert(0, {tests!r})
from appserver import running_app
with running_app({data!r}) as app:
    print(app.url, flush=True)
    sys.stdin.read()  # serve until the test closes stdin
"""


def empty_objects_bomb(count: int = 20_000_000) -> bytes:
    """~58 KB of .json.gz that decompresses to `count` empty predictions `{}` (57 MiB, under the size cap)."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
        gz.write(b'{"track":"unidoc","system":{"name":"Bomb"},"predictions":[{}')
        for _ in range(count // 1_000_000):
            gz.write(b",{}" * 1_000_000)
        gz.write(b"]}")
    return buf.getvalue()


def record_flood(count: int = 2_000_000) -> bytes:
    """A .jsonl.gz of `count` well-formed records (76 MB decompressed): thousands of times the track's limit."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
        gz.write(b'{"track":"unidoc","system":{"name":"Flood"}}\n')
        for _ in range(count // 100_000):
            gz.write(b'{"id":"finance-0000","retrieved":[]}\n' * 100_000)
    return buf.getvalue()


def peak_rss_kb(pid: int) -> int:
    return int(re.search(r"VmHWM:\s+(\d+)", Path(f"/proc/{pid}/status").read_text()).group(1))


@pytest.fixture
def app_process(tmp_path):
    """The app in a child process, so its peak memory (VmHWM) is the app's alone, not the test runner's."""
    code = SERVE.format(tests=str(Path(__file__).parent), data=str(tmp_path / "board"))
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[1]
    )
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http"), "the app did not start"
        yield proc, url
    finally:
        proc.stdin.close()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_bombs_through_submit_are_refused_while_another_visitor_browses(app_process, tmp_path):
    proc, url = app_process
    bomb, flood = tmp_path / "bomb.json.gz", tmp_path / "flood.jsonl.gz"
    bomb.write_bytes(empty_objects_bomb())
    flood.write_bytes(record_flood())
    assert bomb.stat().st_size < 70_000
    attacker, visitor = Client(url, verbose=False), Client(url, verbose=False)
    jobs = [attacker.submit("unidoc", handle_file(str(p)), "", "", "", "", "bomber", api_name="/submit") for p in (bomb, flood)]
    answered_meanwhile = 0
    while not all(job.done() for job in jobs):
        out = visitor.predict("Recall@10", "All", "", [], [], [], UNIDOC_COLUMNS, api_name="/table_unidoc")
        value = out.get("value", out) if "__type__" in out else out  # a bare table or a gr.update carrying one
        assert len(value["data"]) >= 7  # the demo systems: a full answer, not an error
        answered_meanwhile += not all(job.done() for job in jobs)
    bomb_html, flood_html = (job.result(timeout=120) for job in jobs)
    assert answered_meanwhile >= 1, "no table request was answered while the bombs were being checked"
    for html in (bomb_html, flood_html):
        assert 'class="submit-invalid"' in html and "nothing was uploaded" in html
    assert "JSON values (objects, lists, strings, numbers) in the file: far more than 292 prediction records need" in bomb_html
    assert (
        "line 294: more than 292 prediction records (the limit for this track: twice its gold units plus 100); "
        "reading stopped here"
    ) in flood_html
    peak = peak_rss_kb(proc.pid)
    assert peak < PEAK_BUDGET_KB, f"app peak RSS {peak / 1024:.0f} MB"


def test_form_fields_on_a_bomb_do_not_decode_it(tmp_path):
    """The form's fields are merged into the header before validation: that step must not build the predictions."""
    board = local_board(tmp_path)
    for name, data in (("bomb.json.gz", empty_objects_bomb()), ("flood.jsonl.gz", record_flood())):
        path = tmp_path / name
        path.write_bytes(data)
        tracemalloc.start()
        try:
            status = board.submit_upload(user="alice", track="unidoc", path=path, overrides={"name": "Renamed"})
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert status.state == "invalid" and "292 prediction records" in status.errors[0]
        # decompressed text (57-76 MB) plus its rewritten copy; 20 million `{}` objects would be GBs
        assert peak < 400 * 1024 * 1024, f"{name}: {peak:,} bytes allocated"
