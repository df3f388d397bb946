"""Paging in a real browser (Debian's chromium, Playwright): "show more" grows the table and the link keeps it; a
picker finds a system far beyond the systems it lists by what is typed.

The board: the demo plus 300 generated systems, a page of 20 (tests/test_paging.py builds it).
"""

from __future__ import annotations

import pytest
from test_browser import ARGS, CHROMIUM, TIMEOUT, playwright, query  # its import skips these tests without chromium
from test_paging import PAGE, TRACK, paging_app


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with paging_app(tmp_path_factory.mktemp("browser-paging")) as big:
        yield big


@pytest.fixture(scope="module")
def page(app):
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
        context.set_default_timeout(TIMEOUT)
        yield context.new_page()
        browser.close()


def test_show_more_grows_the_table_and_the_link_keeps_it(app, page):
    total = len(app.board.table(TRACK))
    page.goto(app.url)
    page.wait_for_function("location.search.includes('tab=')")
    page.get_by_text(f"showing {PAGE} of {total:,} systems").wait_for()
    page.click(f"#{TRACK}-more")
    page.get_by_text(f"showing {2 * PAGE} of {total:,} systems").wait_for()
    page.wait_for_function(f"location.search.includes('rows={2 * PAGE}')")
    assert query(page)["rows"] == [str(2 * PAGE)]
    page.goto(page.url)  # the permalink, reopened
    page.get_by_text(f"showing {2 * PAGE} of {total:,} systems").wait_for()


def test_a_picker_finds_a_system_beyond_its_choices_by_what_is_typed(app, page):
    deep = app.board.table(TRACK).iloc[-1]
    page.goto(app.url + "?tab=compare")
    page.wait_for_function("location.search.includes('tab=compare')")
    page.wait_for_selector("#compare-metrics [role=row][data-index]")
    box = page.locator("#compare-b input")
    box.click()
    # the name pasted, then one key released: one search request (typing it key by key sends one per key, and
    # under CI load their answers can still be re-rendering the list when the option is clicked)
    box.fill(deep["name"])
    box.press("End")
    label = f"{deep['name']} · {deep['id'][:7]}"
    option = page.locator("#compare-b").get_by_role("option", name=label, exact=True)
    option.first.wait_for()  # not among the first systems the picker lists: the search on typing found it
    page.wait_for_timeout(500)
    option.first.click()
    page.wait_for_function(f"location.search.includes('b={deep['id']}')")
    page.wait_for_function(f"document.querySelector('#compare-summary').innerText.includes({deep['name']!r})")
