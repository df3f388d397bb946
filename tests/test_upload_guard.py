"""Gradio's upload route under a flood, and its queue stream asked for unknown sessions.

One app for the module, on its own upload folder (GRADIO_TEMP_DIR) with small allowances: 3 MiB and 4 files held per
client, 5 MiB in the folder, uploads unclaimed after 3 s deleted. Clients other than the local one are told apart by
X-Forwarded-For, which uvicorn believes from the local host only (FORWARDED_ALLOW_IPS' default); the ledger's own
rules (hour, login share, claim, addresses on a Space) are tested on the ledger with a fake clock.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from gradio_client import Client, handle_file

from leaderboard import demo
from leaderboard.settings import PageSettings
from leaderboard.ui.upload_guard import client_address, client_key
from leaderboard.ui.upload_ledger import ANONYMOUS_SHARE, MIB, UploadLedger, UploadLimits

from appserver import running_app

CLAIM_SECONDS = 3.0
CLIENT_MIB, CLIENT_FILES, FOLDER_MIB = 3, 4, 5


def folder_usage(folder: Path) -> tuple[int, int]:
    size = files = 0
    for root, _, names in os.walk(folder):
        for name in names:
            try:
                size += os.stat(os.path.join(root, name)).st_size
                files += 1
            except OSError:  # deleted meanwhile
                pass
    return size, files


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gradio-uploads")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRADIO_TEMP_DIR", str(folder))  # Gradio's own variable, read by Gradio
        page = PageSettings(
            upload_claim_seconds=CLAIM_SECONDS,
            upload_client_mib=CLIENT_MIB,
            upload_client_files=CLIENT_FILES,
            upload_folder_mib=FOLDER_MIB,
        )
        with running_app(tmp_path_factory.mktemp("board"), page=page) as running:
            running.folder = folder
            yield running


def upload(app, data: bytes, client: str, name: str = "flood.jsonl", timeout: float = 30) -> httpx.Response:
    return httpx.post(
        f"{app.url}gradio_api/upload",
        files={"files": (name, data)},
        headers={"X-Forwarded-For": client},
        timeout=timeout,
    )


def wait_empty(folder: Path, timeout: float = 10.0) -> tuple[int, int]:
    deadline = time.monotonic() + timeout
    while (usage := folder_usage(folder)) != (0, 0) and time.monotonic() < deadline:
        time.sleep(0.05)
    return usage


def test_a_flood_is_bounded_while_another_client_submits_and_browses(app, tmp_path):
    stop = threading.Event()
    peak = [0, 0]

    def watch():
        while not stop.is_set():
            size, files = folder_usage(app.folder)
            peak[0], peak[1] = max(peak[0], size), max(peak[1], files)
            time.sleep(0.005)

    blob = os.urandom(MIB)  # 1 MiB each: two fit a client's allowance, four (not five, with framing) the folder
    flooders = ["203.0.113.1", "203.0.113.2", "203.0.113.3"]
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    name, data = demo.make_submissions("unidoc", demo.DEMO_DIR / "gold" / "unidoc", 1, seed=23)[0]
    mine = tmp_path / name
    mine.write_bytes(data)
    try:
        with ThreadPoolExecutor(8) as pool:
            flood = [pool.submit(upload, app, blob, flooders[i % 3], f"f{i}.jsonl") for i in range(60)]
            client = Client(app.url, verbose=False)
            html = client.predict("unidoc", handle_file(str(mine)), "", "", "", "", "honest", api_name="/submit")
            table = client.predict(api_name="/table_unidoc")
            codes = Counter(f.result().status_code for f in flood)
    finally:
        stop.set()
        watcher.join()
    assert 'class="submit-queued"' in html, html[:500]
    assert "honest" in str(table) or table, "the second client got no table"
    assert set(codes) <= {200, 413, 429} and codes[429] and codes[413], codes
    assert codes[200] <= 3 * CLIENT_FILES, codes
    assert peak[0] <= FOLDER_MIB * MIB, f"the folder peaked at {peak[0]:,} bytes"
    # unclaimed, every flood upload is deleted after the claim window; the submit deleted its own file
    assert wait_empty(app.folder, timeout=CLAIM_SECONDS + 5) == (0, 0)


def test_refusals_say_why(app):
    for i in range(CLIENT_FILES):  # different bytes: the same ones again are the same file in the folder
        assert upload(app, b"x%d" % i, "198.51.100.7").status_code == 200
    refused = upload(app, b"x-next", "198.51.100.7")
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
    assert "not yet submitted" in refused.text and f"in {CLIENT_FILES} at once" in refused.text
    assert upload(app, b"x" * 100, "198.51.100.8").status_code == 200, "another client has its own allowance"
    # several files in one request count as several
    many = httpx.post(
        f"{app.url}gradio_api/upload",
        files=[("files", (f"m{i}.jsonl", b"y%d" % i)) for i in range(CLIENT_FILES + 1)],
        headers={"X-Forwarded-For": "198.51.100.9"},
    )
    assert many.status_code == 429 and "not yet submitted" in many.text


def test_a_body_over_the_cap_is_refused_from_its_content_length_before_it_is_read(app):
    before = folder_usage(app.folder)
    port = int(app.url.rstrip("/").rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(
            b"POST /gradio_api/upload HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 198.51.100.20\r\n"
            b"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 300000000\r\n\r\n--b\r\n"
        )
        started = time.monotonic()
        head = b""  # the answer comes with 300 MB still unsent (its head and body may come in two reads)
        while b"larger than a submission may be" not in head and time.monotonic() - started < 5:
            chunk = s.recv(4096)
            if not chunk:
                break
            head += chunk
        assert time.monotonic() - started < 5
    assert head.startswith(b"HTTP/1.1 413") and b"larger than a submission may be" in head
    assert folder_usage(app.folder)[0] <= before[0]  # nothing written (the sweeper may take earlier tests' files)


@pytest.mark.parametrize("route", ["queue/join", "component_server"])
def test_every_route_refuses_a_body_over_one_upload_before_reading_it(app, route):
    port = int(app.url.rstrip("/").rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(
            f"POST /gradio_api/{route} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: 300000000\r\n\r\n{".encode()
        )
        assert s.recv(4096).startswith(b"HTTP/1.1 413")


def test_a_body_without_content_length_is_counted_while_it_streams(app):
    sent = []

    def body():
        yield b'--b\r\nContent-Disposition: form-data; name="files"; filename="s.jsonl"\r\n\r\n'
        for _ in range(64):  # 4 MiB, over a client's 3 MiB
            sent.append(1)
            yield b"z" * (64 * 1024)
        yield b"\r\n--b--\r\n"

    reply = httpx.post(
        f"{app.url}gradio_api/upload",
        content=body(),
        headers={"Content-Type": "multipart/form-data; boundary=b", "X-Forwarded-For": "198.51.100.30"},
        timeout=30,
    )
    assert reply.status_code == 429 and "not yet submitted" in reply.text
    assert folder_usage(app.folder)[0] <= FOLDER_MIB * MIB
    # the cut-short temp file is swept with everything earlier tests left unclaimed
    assert wait_empty(app.folder, timeout=CLAIM_SECONDS + 5) == (0, 0), "the cut-short temp file stayed"


def test_x_forwarded_for_is_not_believed_from_an_untrusted_peer(app):
    # 127.0.0.2 is not a proxy uvicorn trusts: each request's own made-up address is ignored
    with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2")) as stranger:
        codes = [
            stranger.post(
                f"{app.url}gradio_api/upload",
                files={"files": ("s.jsonl", b"q%d" % i)},
                headers={"X-Forwarded-For": f"10.0.0.{i}"},
            ).status_code
            for i in range(CLIENT_FILES + 2)
        ]
    assert codes == [200] * CLIENT_FILES + [429, 429]


def test_unknown_sessions_log_one_line(app):
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    keep = Keep(level=logging.DEBUG)
    watched = [logging.getLogger(n) for n in ("uvicorn.error", "uvicorn", "leaderboard.ui.quiet_sessions", "gradio")]
    for logger in watched:
        logger.addHandler(keep)
    try:
        for i in range(10):
            reply = httpx.get(f"{app.url}gradio_api/queue/data", params={"session_hash": f"gone{i}"}, timeout=30)
            assert reply.status_code == 200 and '"session_not_found":true' in reply.text  # the stream ends cleanly
    finally:
        for logger in watched:
            logger.removeHandler(keep)
    lines = [line for r in records for line in keep.format(r).splitlines()]
    assert len(records) == 1 and len(lines) == 1, f"{len(records)} records, {len(lines)} lines: {lines[:5]}"
    assert "unknown session" in lines[0]


# ---- the ledger's rules, on a fake clock ---------------------------------------------------------------------
LIMITS = UploadLimits(
    request_bytes=1000,
    client_bytes=3000,
    client_files=3,
    hour_bytes=5000,
    hour_files=5,
    folder_bytes=4000,
    folder_files=10,
    claim_seconds=300,
)


def stored(folder: Path, name: str, size: int) -> str:
    path = folder / name[:2] / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b"u" * size)
    return str(path)


def take(ledger: UploadLedger, folder: Path, key: str, size: int, anonymous: bool = True):
    ticket, refusal = ledger.admit(key, anonymous, size)
    if refusal is not None:
        return refusal
    assert ledger.grow(ticket, size, 1) is None
    return ledger.finish(ticket, [stored(folder, f"{key}-{time.monotonic_ns()}", size)])


def test_the_hourly_allowance_frees_after_an_hour_and_unclaimed_uploads_go_after_the_window(tmp_path):
    now = [0.0]
    ledger = UploadLedger(LIMITS, tmp_path, clock=lambda: now[0])
    for _ in range(5):
        assert take(ledger, tmp_path, "ip:a", 100) is None
        now[0] += 301
        ledger.sweep()  # each one swept unclaimed after the window: the hour still counts it
    assert folder_usage(tmp_path) == (0, 0)
    refusal = take(ledger, tmp_path, "ip:a", 100)
    assert refusal.status == 429 and "in the last hour" in refusal.message
    assert 0 < refusal.retry_after <= 3600
    now[0] += 3600
    assert take(ledger, tmp_path, "ip:a", 100) is None
    assert take(ledger, tmp_path, "ip:a", 2000).message.startswith("Upload refused: larger than a submission")


def test_a_claimed_upload_is_left_to_its_submit_and_a_deleted_one_frees_the_allowance(tmp_path):
    now = [0.0]
    ledger = UploadLedger(LIMITS, tmp_path, clock=lambda: now[0])
    t, _ = ledger.admit("ip:b", True, 10)
    path = stored(tmp_path, "claimed.jsonl", 10)
    assert ledger.finish(t, [path]) is None and ledger.claim(path)
    now[0] += 1000
    ledger.sweep()
    assert Path(path).exists(), "the sweeper took a file a submit is reading"
    for _ in range(3):
        assert take(ledger, tmp_path, "ip:c", 900) is None
    assert take(ledger, tmp_path, "ip:c", 900).status == 429
    for p in tmp_path.glob("ip/ip:c-*"):  # what a submit does when done
        p.unlink()
    assert take(ledger, tmp_path, "ip:c", 900) is None


def test_without_a_login_only_a_share_of_the_folder_is_open_where_submitting_needs_one(tmp_path):
    ledger = UploadLedger(UploadLimits(**{**LIMITS.__dict__, "login_reserve": True}), tmp_path)
    assert take(ledger, tmp_path, "ip:d", 900) is None and take(ledger, tmp_path, "ip:e", 900) is None
    anonymous = take(ledger, tmp_path, "ip:f", 900)  # 2,700 > half of 4,000
    assert anonymous.status == 413 and "without a login" in anonymous.message
    assert LIMITS.folder_bytes * ANONYMOUS_SHARE < 2700
    assert take(ledger, tmp_path, "user:alice", 900, anonymous=False) is None
    assert take(ledger, tmp_path, "user:bob", 900, anonymous=False) is None
    assert take(ledger, tmp_path, "user:carol", 900, anonymous=False).status == 413  # 4,500 > 4,000


def test_who_the_client_is():
    scope = {"client": ("10.16.3.80", 5), "headers": [(b"x-forwarded-for", b"6.6.6.6, 203.0.113.9")]}
    assert client_address(scope, on_space=True) == "203.0.113.9"  # the proxy's entry, not the client's own
    assert client_address(scope, on_space=False) == "10.16.3.80"
    v6 = {"client": ("2001:db8:1:2:aaaa::1", 5), "headers": []}
    other = {"client": ("2001:db8:1:2:bbbb::9", 5), "headers": []}
    assert client_address(v6, False) == client_address(other, False) == "2001:db8:1:2::/64"
    assert client_address({"client": ("::ffff:192.0.2.1", 1)}, False) == "192.0.2.1"
    session = {"oauth_info": {"userinfo": {"preferred_username": "alice"}, "expires_at": time.time() + 60}}
    assert client_key({**scope, "session": session}, True) == ("user:alice", False)
    expired = {"oauth_info": {"userinfo": {"preferred_username": "alice"}, "expires_at": time.time() - 1}}
    assert client_key({**scope, "session": expired}, True) == ("ip:203.0.113.9", True)
