"""What a page load costs the server and shows, in a real browser (Debian's chromium, Playwright).

The page is built once, at start, with the first track's table. Its load draws the tab the link names (its
leaders and chart, and its table unless the page holds it as it is, with the board as it is then) and gives every
control its value from the link: a control is sent a value only where it differs from the value it was built with,
since a value sent again fires the control's change. Then the other tracks are drawn once each, after the tab on
screen, so that opening one asks the server nothing (ui/layout.py `prefetch`); before, every plain page load
re-rendered all three tracks' tables at once, and again whenever a tab opened. A submission scored after the start
still reaches a page opened after it, at once (the status timer never ticks here: its interval is an hour).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_browser import ARGS, CHROMIUM, TIMEOUT, playwright  # its import skips these tests without chromium

from leaderboard.submission import with_system
from leaderboard.tracks import TRACKS
from leaderboard.ui.tabs.track import TrackTab

from appserver import place_submission, running_app, wait_judged

ROOT = Path(__file__).resolve().parents[1]
LATE = "Late Arrival RAG"
FIRST = next(iter(TRACKS))


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    renders: list[str] = []
    original = TrackTab.render

    def counted(self, *args):
        renders.append(self.id)
        return original(self, *args)

    TrackTab.render = counted
    try:
        with running_app(tmp_path_factory.mktemp("fresh"), status_poll_seconds=3600) as running:
            running.renders = renders
            yield running
    finally:
        TrackTab.render = original


def open_page(url: str, ready: str, arg=None) -> None:
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(TIMEOUT)
            page.goto(url)
            page.wait_for_function(ready, arg=arg)
            page.wait_for_selector(f"#{FIRST}-leaders table")  # the leaders come with the load's render
            page.wait_for_timeout(1500)  # time for any further event the load fires
        finally:
            browser.close()


def test_a_plain_page_load_renders_the_track_on_screen_first_and_each_track_once(app):
    app.renders.clear()
    open_page(app.url, f"() => document.querySelectorAll('#{FIRST}-table [role=row][data-index]').length > 0")
    assert app.renders == list(TRACKS), app.renders  # was: every track's table at once, at each load and tab opening


def test_a_page_opened_after_new_data_shows_it_without_waiting_for_the_timer(app, tmp_path):
    base = ROOT / "assets" / "demo" / "submissions" / "unidoc" / "textrag-bge-m3-qwen2-5-7b.jsonl"
    # one prediction fewer: a run of its own (the same predictions would be a duplicate of the demo, not a row)
    late = with_system(b"\n".join(base.read_bytes().splitlines()[:-1]), base.name, {"name": LATE})
    built = app.board.version
    place_submission(app.data_dir, "unidoc", "late", late, stamp="20260301T000000Z")
    app.board.refresh()
    wait_judged(app.board)
    assert app.board.version != built and any(e.name == LATE for e in app.board.entries("unidoc"))
    has_late = "name => [...document.querySelectorAll('#unidoc-table [role=row]')].some(r => r.innerText.includes(name))"
    open_page(app.url, has_late, LATE)
