"""Reported rows in a real browser (Debian's chromium through Playwright, as tests/test_browser.py): the badge,
its source on hover (the title attribute), the one-line legend, the toggle, and a permalink that restores it."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_browser import SHOTS, desktop_context, open_board, query, rows

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")

from appserver import running_app  # noqa: E402

ROWS = "#unidoc-table [role=row][data-index]"
BADGES = f"{ROWS} .reported-badge"


def wait_for_count(page, selector: str, n: int) -> None:
    """Until `selector` matches exactly n elements (Playwright's timeout fails the test, naming the count seen)."""
    try:
        page.wait_for_function("([sel, n]) => document.querySelectorAll(sel).length === n", arg=[selector, n])
    except playwright.Error as exc:
        seen = page.eval_on_selector_all(selector, "els => els.length")
        raise AssertionError(f"{selector}: {seen} elements, expected {n}") from exc


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with running_app(tmp_path_factory.mktemp("browser-reported")) as running:
        yield running


@pytest.fixture(scope="module")
def context():
    with desktop_context() as ctx:
        yield ctx


def test_badge_hover_source_toggle_and_permalink(app, context):
    page = context.new_page()
    open_board(page, app)
    # the paper's six systems, beside the rescored ones (waited for: the grid may draw its rows in more than one frame)
    wait_for_count(page, BADGES, 6)
    badges = page.locator(BADGES)
    assert badges.first.inner_text().strip() == "reported"
    title = badges.first.get_attribute("title")
    assert title.startswith("Reported, not rescored: Peng et al. (2025)") and "licence: figures cited from a paper" in title
    assert "1,600" in title
    badges.first.hover()  # visible and under the pointer: the browser shows its title as the tooltip
    legend = page.inner_text("#unidoc-reported-legend")
    assert "reported" in legend and "no CI" in legend and "Rescored" in legend
    # the reported rows look different: their cells carry the reported style
    styled = page.eval_on_selector_all(
        "#unidoc-table [role=row][data-index] [data-col='0']",
        "cells => cells.filter(c => c.querySelector('.reported-badge')).map(c => getComputedStyle(c).fontStyle)",
    )
    assert styled and set(styled) == {"italic"}
    page.wait_for_selector("#unidoc-leaders table")  # drawn by the page's load (not at start-up)
    leaders = page.inner_text("#unidoc-leaders")  # the first-visit story: who leads per domain, rescored vs reported
    assert "Who leads" in leaders and "Best per domain" in leaders and "Best per answer type" in leaders
    Path(SHOTS).mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(Path(SHOTS) / "reported-default.png"), full_page=True)
    with_reported = len(rows(page, "unidoc-table"))

    # the toggle hides them and the permalink says so
    page.click("#unidoc-show-reported input")
    page.wait_for_function("location.search.includes('reported=0')")
    wait_for_count(page, BADGES, 0)
    wait_for_count(page, ROWS, with_reported - 6)
    assert query(page)["reported"] == ["0"]

    # a fresh page from that link: the toggle restored off, no reported row
    fresh = context.new_page()
    open_board(fresh, app, "?" + page.url.split("?", 1)[1])
    # the link carries reported=0 from the start, so the URL says nothing about the restore: wait for the toggle
    fresh.wait_for_function("!document.querySelector('#unidoc-show-reported input').checked")
    wait_for_count(fresh, BADGES, 0)
    wait_for_count(fresh, ROWS, with_reported - 6)

    # turned back on: the badges return and the parameter leaves the link (on is the default)
    fresh.click("#unidoc-show-reported input")
    fresh.wait_for_function("!location.search.includes('reported=')")
    wait_for_count(fresh, BADGES, 6)
