"""The "Scores: board / official script" choice of every track tab in a real browser (Debian's chromium through
Playwright, as tests/test_browser.py): the table's values and ranks, the chart, the reported-row legend and the
permalink follow it.

A track that declares no deviation shows the choice disabled, with why; every real track declares its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_browser import (
    SHOTS,
    desktop_context,
    header_index,
    open_board,
    plot_svg_text,
    query,
    rows,
)

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")

from leaderboard.ranking import OFFICIAL  # noqa: E402
from leaderboard.tracks import TRACKS  # noqa: E402
from leaderboard.ui import figures, views  # noqa: E402
from leaderboard.ui.tabs.track import SAME_PROTOCOL  # noqa: E402

from appserver import running_app  # noqa: E402


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with running_app(tmp_path_factory.mktemp("browser-scores")) as running:
        yield running


@pytest.fixture(scope="module")
def context():
    with desktop_context() as ctx:
        yield ctx


def checked(page, name: str) -> str:
    return page.eval_on_selector(f"#{name}-protocol", "el => el.querySelector('input:checked')?.value ?? ''")


def wait_text(page, selector: str, text: str):
    page.wait_for_function("([sel, text]) => document.querySelector(sel)?.textContent.includes(text)", arg=[selector, text])


def wait_plot_text(page, plot_id: str, text: str):
    page.wait_for_function(
        "([sel, text]) => [...document.querySelectorAll(sel + ' svg')].some(s => s.textContent.includes(text))",
        arg=[f"#{plot_id}", text],
    )


def first_system(app, name: str, protocol: str) -> str:
    raw = views.filtered_table(app.board, name, show_reported=True, protocol=protocol)
    return raw.loc[~raw["reported"].astype(bool), "name"].iloc[0]


def wait_first_rescored(page, table: str, system_col: int, want: str):
    """Wait until the first rescored row (reported rows sit where their figures rank them, and are not ranked)
    names `want`."""
    page.wait_for_function(
        """([rows, col, want]) => {
            const first = [...document.querySelectorAll(rows)].find(
                r => r.querySelector('[role=gridcell]')?.innerText.trim() !== 'reported');
            return first?.querySelector(`[data-col='${col}']`)?.innerText.trim() === want;
        }""",
        arg=[f"#{table} [role=row][data-index]", system_col, want],
    )


@pytest.mark.parametrize("name", list(TRACKS))
def test_the_scores_choice_on_every_track_tab(app, context, name):
    track = TRACKS[name]
    page = context.new_page()
    open_board(page, app, f"?tab={name}", table=f"{name}-table")
    radio = f"#{name}-protocol"
    assert "Scores" in page.inner_text(radio) and checked(page, name) == "board"
    if not track.deviations:  # nothing to choose: shown disabled, with why
        assert SAME_PROTOCOL in page.inner_text(radio)
        assert page.eval_on_selector(radio, "el => [...el.querySelectorAll('input')].every(i => i.disabled)")
        return
    table = f"{name}-table"
    plot = f"{name}-plot-0"
    plot_svg_text(page, plot)  # the first chart drawn at the tab's opening
    before = rows(page, table)
    if track.reported_files:
        legend = page.inner_text(f"#{name}-reported-legend")
        assert "official-script figures" in legend and "like for like" in legend  # how to compare them
        wait_plot_text(page, plot, figures.BOARD_SUBTITLE)

    page.click(f"{radio} label:has-text('official script')")
    page.wait_for_function("location.search.includes('protocol=official')")
    wait_text(page, f"#{table}", "scores: official script")
    wait_plot_text(page, plot, figures.OFFICIAL_SUBTITLE)  # the chart redrawn in the chosen scores
    board_raw = views.filtered_table(app.board, name, show_reported=True)
    official_raw = views.filtered_table(app.board, name, show_reported=True, protocol=OFFICIAL)
    # as the table shows them (3 decimals), in table order
    differ = not board_raw[track.rank_by].round(3).equals(official_raw[track.rank_by].round(3))
    system = header_index(page, table, "System")
    wait_first_rescored(page, table, system, first_system(app, name, OFFICIAL))
    after = rows(page, table)
    assert (after != before) == differ  # values change where this track's demo data differ between protocols
    if track.reported_files:
        assert "like for like" in page.inner_text(f"#{table}")  # the caption says so
        wait_text(page, f"#{name}-reported-legend", "now compare like for like")
        wait_plot_text(page, plot, figures.LIKE_FOR_LIKE)
    Path(SHOTS).mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(Path(SHOTS) / f"scores-official-{name}.png"), full_page=True)

    # the permalink holds it: a fresh page opens on the official scores, table and chart
    fresh = context.new_page()
    open_board(fresh, app, "?" + page.url.split("?", 1)[1], table=table)
    fresh.wait_for_function(f"document.querySelector('#{name}-protocol input:checked')?.value === 'official'")
    wait_text(fresh, f"#{table}", "scores: official script")
    wait_plot_text(fresh, plot, figures.OFFICIAL_SUBTITLE)
    assert rows(fresh, table) == after and query(fresh)["protocol"] == ["official"]

    # back to the board's: the parameter leaves the link (the default), the board's rows return
    fresh.click(f"{radio} label:has-text('board')")
    fresh.wait_for_function("!location.search.includes('protocol=')")
    wait_first_rescored(fresh, table, system, first_system(app, name, "board"))
    assert rows(fresh, table) == before
    page.close()  # pages left open keep polling the server: the next track's pages would wait behind them
    fresh.close()
