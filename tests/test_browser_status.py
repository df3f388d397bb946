"""The status line of an open page follows the Hub, in a real browser (Debian's chromium through Playwright).

The app runs against the fake Hub with short intervals (pull every 0.5 s, page timer 0.5 s, Hub timeout 2 s):
the Hub goes down and up while pages stay open, never reloaded.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from appserver import CHROMIUM, CHROMIUM_ARGS

if not CHROMIUM.exists():
    pytest.skip(
        f"{CHROMIUM} not found: the browser tests drive Debian's chromium (apt-get install chromium)", allow_module_level=True
    )
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")

from leaderboard.store import StoreSettings  # noqa: E402

from appserver import running_app  # noqa: E402
from hubfake import FAKE_TOKEN, fake_hub  # noqa: E402, F401 (fixture)

ROOT = Path(__file__).resolve().parents[1]
UNIDOC_FILES = sorted((ROOT / "assets" / "demo" / "submissions" / "unidoc").glob("*.jsonl"))
ARGS = [
    *CHROMIUM_ARGS,
    # two pages are open at once: the one not in front must keep its timer running at full speed
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
]
TICK = 0.5  # the page's timer (STATUS_POLL_SECONDS) and the board's pull interval in these tests
HUB_TIMEOUT = 2.0
# A tick is 0.5 s, but a shared two-core machine (load average above 10 while other suites run) stretches
# ticks to seconds: the bound is generous. Before live status, an open page never showed the banner at all.
WITHIN_MS = 30_000


@pytest.fixture
def hub(fake_hub):  # noqa: F811
    fake_hub.create_repo("org/subs", repo_type="dataset")
    fake_hub.commit("org/subs", {f"submissions/unidoc/demo/{p.name}": p.read_bytes() for p in UNIDOC_FILES[:2]})
    return fake_hub


@pytest.fixture
def app_on_hub(hub, tmp_path):
    def start(hub_timeout: float = HUB_TIMEOUT):
        # No token: the board only reads, and a token would make the page ask for a login, which Gradio mocks
        # off a Space with whoami on huggingface.co (not the fake Hub).
        settings = StoreSettings(
            submissions_repo="org/subs", hf_endpoint=hub.url, data_dir=tmp_path, hub_timeout=hub_timeout, refresh_seconds=TICK
        )
        return running_app(tmp_path, judge="none", store_settings=settings, status_poll_seconds=TICK)

    return start


@pytest.fixture
def new_page():
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
        context.set_default_timeout(WITHIN_MS)

        def make(url: str):
            page = context.new_page()
            page.goto(url)
            page.wait_for_selector("#status .asof")
            page.evaluate("window.__sameDocument = true")  # gone if the page ever reloads
            return page

        yield make
        context.close()
        browser.close()


def status_text(page) -> str:
    return page.inner_text("#status")


# Rescored rows only: the reported rows (published figures, tests/test_browser_reported.py) show before any pull.
RESCORED_ROWS = (
    "[...document.querySelectorAll('#unidoc-table [role=row][data-index]')].filter(r => !r.querySelector('.reported-badge'))"
)


def table_rows(page) -> int:
    return page.evaluate(f"{RESCORED_ROWS}.length")


def assert_not_reloaded(page):
    assert page.evaluate("window.__sameDocument === true"), "the page was reloaded"


def test_an_open_page_shows_the_outage_banner_and_clears_it_without_a_reload(hub, app_on_hub, new_page):
    with app_on_hub() as app:
        page = new_page(app.url)
        page.wait_for_function("document.querySelector('#status').innerText.includes('data as of')")
        # both files pulled and scored (the table may show the first before the second is scored)
        page.wait_for_function(f"{RESCORED_ROWS}.length === 2")
        assert page.query_selector("#status .banner") is None
        rows = table_rows(page)

        hub.down()
        page.wait_for_selector("#status .banner")
        assert app.board.refresher.last_error is not None
        assert "Hub unreachable since" in status_text(page) and "data as of" in status_text(page)
        assert table_rows(page) == rows  # the last good data stays on screen
        late = new_page(app.url)  # opened during the outage: says so too (once loaded)
        late.wait_for_selector("#status .banner")

        hub.up()
        for p in (page, late):
            p.wait_for_selector("#status .banner", state="detached")
        assert app.board.refresher.last_error is None
        for p in (page, late):
            assert_not_reloaded(p)
            assert "data as of" in status_text(p) and "unreachable" not in status_text(p)
            assert table_rows(p) == rows


def test_a_page_opened_while_the_first_pull_runs_says_loading_then_shows_the_rows(hub, app_on_hub, new_page):
    # The Hub answers nothing until the page has looked (however long a loaded machine takes to open it), and
    # within the client's timeout: the first pull is surely still running, not failed.
    hub.hold(at_most=WITHIN_MS / 1000)
    with app_on_hub(hub_timeout=2 * WITHIN_MS / 1000) as app:  # opens without waiting for the Hub (test_live_status)
        page = new_page(app.url)
        assert "loading: first pull from hub:org/subs in progress" in status_text(page)
        assert table_rows(page) == 0
        hub.ok()
        page.wait_for_function("document.querySelector('#status').innerText.includes('data as of')")
        page.wait_for_function(f"{RESCORED_ROWS}.length === 2")
        assert_not_reloaded(page)
        assert "loading" not in status_text(page)
