"""The app as a Space runs it: `python app.py` in a subprocess, its Hub and OAuth provider the local fake Hub.

huggingface_hub and Gradio's OAuth module read HF_ENDPOINT, HF_TOKEN and the
OAUTH_* variables when they are imported, so each app runs in its own process
with the environment set before it starts (as on a Space).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from gradio_client import Client, handle_file

from appserver import free_port
from hubfake import running_hub

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "hf_aliceTOKENfake0123456789abcdef"
SUBS, RESULTS = "org/rag-submissions", "org/rag-results"
SUBMISSION = ROOT / "assets" / "demo" / "submissions" / "unidoc" / "jina-clip-v2-retrieval.jsonl"


@pytest.fixture
def hub():
    with running_hub(tokens={TOKEN: "alice"}) as fake:
        fake.create_repo(SUBS)
        yield fake


@contextmanager
def app_process(tmp_path: Path, env: dict[str, str]):
    """`python app.py` with `env` on a free port; yields (url, log file), stops it on exit."""
    port = free_port()
    base = {
        k: v
        for k, v in os.environ.items()
        if k != "SYSTEM" and not k.startswith(("HF_", "OAUTH_", "SPACE_", "SUBMISSIONS_", "RESULTS_"))
    }
    full = {
        **base,
        "HF_HUB_OFFLINE": "0",
        "HF_HOME": str(tmp_path / "hf-home"),
        "LEADERBOARD_DATA_DIR": str(tmp_path / "data"),
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        "JUDGE": "none",
        **env,
    }
    log_path = tmp_path / "app.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=full, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the app exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
            try:
                if httpx.get(url + "/", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"the app did not answer within 120 s:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.3)
        yield url, log_path
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def login_session(url: str) -> str:
    """Log in the way a browser does (follow /login/huggingface to the callback) and return the session cookie."""
    with httpx.Client(base_url=url, follow_redirects=False, timeout=30) as http:
        first = http.get("/login/huggingface")
        assert first.status_code in (302, 307)
        callback = urlsplit(first.headers["location"])
        assert callback.path == "/login/callback"
        second = http.get(f"{callback.path}?{callback.query}")
        assert second.status_code in (302, 307) and second.headers["location"].startswith("/")
        # The cookie is Secure (Gradio sets https_only): a browser sends it to http://127.0.0.1, an HTTP client
        # only when told, so take it from the callback's answer.
        found = re.search(r"(?:^|[\s,])session=([^;]+)", second.headers.get("set-cookie", ""))
        assert found, second.headers
        return found.group(1)


def submit(client: Client) -> str:
    return client.predict("unidoc", handle_file(str(SUBMISSION)), "", "", "", "", api_name="/submit")


def test_local_hub_board_submits_as_the_logged_in_user(hub, tmp_path):
    """Off a Space, Gradio mocks the login with the machine's token: whoami on the (fake) Hub names the user."""
    env = {"HF_ENDPOINT": hub.url, "HF_TOKEN": TOKEN, "SUBMISSIONS_REPO": SUBS, "LOCAL_LOGIN": "1"}
    with app_process(tmp_path, env) as (url, log):
        api = Client(url, verbose=False).view_api(return_format="dict", print_info=False)
        params = [p["parameter_name"] for p in api["named_endpoints"]["/submit"]["parameters"]]
        assert "user_name" not in params  # no typed-in name: the login says who submits

        anonymous = submit(Client(url, verbose=False))
        assert "Log in with Hugging Face to submit" in anonymous
        assert not [p for p in hub.files(SUBS) if p.startswith("submissions/")]

        session = login_session(url)
        assert hub.count("GET", "/api/whoami-v2") >= 1  # the mocked login asked the Hub who the token is
        logged_in = Client(url, verbose=False, headers={"Cookie": f"session={session}"})
        html = submit(logged_in)
        assert "submit-queued" in html and "submissions/unidoc/alice/" in html, html
        stored = [p for p in hub.files(SUBS) if p.startswith("submissions/unidoc/alice/") and not p.endswith(".meta.json")]
        assert len(stored) == 1 and hub.files(SUBS)[stored[0]] == SUBMISSION.read_bytes()


def test_space_starts_redirects_to_the_provider_and_reports_a_rejected_token(hub, tmp_path):
    """SPACE_ID and the OAuth variables a Space sets: the app starts, /login/huggingface goes to the provider, and a
    token the Hub refuses is reported as a secret to fix (status line and logs), not as an outage."""
    env = {
        "SYSTEM": "spaces",
        "SPACE_ID": "org/rag-board",
        "SPACE_HOST": "org-rag-board.hf.space",
        "HF_ENDPOINT": hub.url,
        "HF_TOKEN": "hf_revokedTOKEN0123456789abcdefgh",
        "SUBMISSIONS_REPO": SUBS,
        "RESULTS_REPO": RESULTS,
        "OAUTH_CLIENT_ID": "client-0123",
        "OAUTH_CLIENT_SECRET": "oauth-secret-4567",
        "OAUTH_SCOPES": "openid profile",
        "OPENID_PROVIDER_URL": hub.url,
        "ADMIN_USERS": "alice",
    }
    with app_process(tmp_path, env) as (url, log):
        with httpx.Client(base_url=url, follow_redirects=False, timeout=30) as http:
            login = http.get("/login/huggingface")
        assert login.status_code in (302, 307)
        target = urlsplit(login.headers["location"])
        assert f"{target.scheme}://{target.netloc}" == hub.url and target.path == "/oauth/authorize"
        query = parse_qs(target.query)
        assert query["client_id"] == ["client-0123"] and query["response_type"] == ["code"]
        assert query["redirect_uri"][0].startswith("https://org-rag-board.hf.space/login/callback")
        assert query["scope"] == ["openid profile"] and query["state"][0]

        client = Client(url, verbose=False)
        assert "Log in with Hugging Face to submit" in submit(client)
        status = client.predict(api_name="/refresh")
        assert "Configuration problem" in status and "HF_TOKEN rejected by the Hub: check the Space secret" in status
        assert "retry" not in status.lower()
    text = log.read_text()
    assert "HF_TOKEN rejected by the Hub: check the Space secret" in text
    assert "hf_revokedTOKEN" not in text and "oauth-secret-4567" not in text
