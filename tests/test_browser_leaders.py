"""The first screen in a real browser at 1440 x 1000 (Debian's chromium through Playwright, the fixtures of
tests/test_browser.py): the leaders strip of each track, the tie bands, one-line rows with ten and more above the
fold, the VDR trade-off's curves per (model, method), and the System tab opening on the leader.

Screenshots of each track's first screen go to test-output/screenshots/ (not committed)."""

from __future__ import annotations

import pytest
from test_browser import SHOTS, app, assert_inert, browser, chips, open_board, plot_svg_text  # noqa: F401 (fixtures)

from leaderboard.tracks import TRACKS
from leaderboard.ui import columns, views

WIDE = {"width": 1440, "height": 1000}


@pytest.fixture(scope="module")
def page(browser):  # noqa: F811 (the imported fixture)
    ctx = browser.new_context(viewport=WIDE, reduced_motion="reduce")
    ctx.set_default_timeout(60_000)
    page = ctx.new_page()
    page.dialogs = []
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    yield page
    ctx.close()


@pytest.mark.parametrize("name", list(TRACKS))
def test_first_screen_strip_bands_and_ten_one_line_rows(app, page, name):  # noqa: F811
    track = TRACKS[name]
    open_board(page, app, f"?tab={name}", table=f"{name}-table")
    page.wait_for_selector(f"#{name}-strip .lead-name")  # the figures, not the placeholder
    page.wait_for_timeout(500)  # the load's render settles
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"first-screen-{name}.png"))

    # the strip: one card per metric (the ranking one first), the leader with value and CI, ties and their criterion
    strip = views.leaders(app.board, name, views.TableView(show_reported=True))
    cards = page.locator(f"#{name}-strip .lead-card")
    assert cards.count() == len(views.strip_metrics(track, track.rank_by)) == len(strip.leaders)
    for i, lead in enumerate(strip.leaders):
        text = cards.nth(i).inner_text()
        assert lead.label in text and f"{lead.value:.3f}" in text and f"[{lead.low:.3f}, {lead.high:.3f}]" in text
        assert f"tied with {lead.tied} of" in text if lead.tied else "ahead of all" in text
        assert "tie = 95% CIs overlap" in text
        title = cards.nth(i).locator(".lead-name").get_attribute("title")
        assert title == lead.name
        if lead.reported is not None:
            assert "reported" in text and f"{lead.reported.value:.3f}" in text
    assert "ranks the table" in cards.first.inner_text()
    if track.reported_files:
        assert page.locator(f"#{name}-strip .lead-reported .reported-badge").count() >= 1
    assert_inert(page)

    # one-line rows, ten and more above the fold (header, status, tabs, controls and strip included)
    heights = page.eval_on_selector_all(
        f"#{name}-table [role=row][data-index]",
        "rs => rs.map(r => { const b = r.getBoundingClientRect(); return [b.top, b.height]; })",
    )
    line = page.eval_on_selector(
        f"#{name}-table [role=row][data-index] [role=gridcell]", "c => parseFloat(getComputedStyle(c).lineHeight) || 20"
    )
    assert heights and all(h < 2 * line + 8 for _, h in heights), (heights[:3], line)  # no row wraps to two lines
    total = len(views.view_rows(app.board, name, views.TableView(show_reported=True)))
    assert sum(1 for top, h in heights if top + h <= WIDE["height"]) >= min(10, total)
    # the declared widths (ui/columns.py), on the tab the page opens on too: its table as built, which the load
    # leaves as it is (a wide system name once stretched that table's columns and pushed the metrics off screen)
    disp = views.table_page(app.board, name, views.TableView(show_reported=True, rows=views.page_rows(app.board)))[0]
    declared = [int(w.removesuffix("px")) for w in views.column_widths(disp, track)]
    widths = page.eval_on_selector_all(
        f"#{name}-table th[role=columnheader]", "hs => hs.map(h => h.getBoundingClientRect().width)"
    )
    assert len(widths) == len(declared) and all(abs(w - d) <= 2 for w, d in zip(widths, declared)), (widths, declared)
    # the CI on the value's line, smaller
    metric_cell = page.locator(f"#{name}-table [role=row][data-index] sub").first
    assert float(metric_cell.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) < float(
        metric_cell.evaluate("e => parseFloat(getComputedStyle(e.parentElement).fontSize)")
    )

    # tie bands: the band column as the ranking computes it, and the band shading of its rows
    table = views.ranked(app.board, name)
    bands = [columns.band_text(r) for r in table[table["rank"].notna()].to_dict("records")]
    col = page.eval_on_selector_all(f"#{name}-table th[role=columnheader]", "els => els.map(e => e.title)").index("Tie band")
    shown = page.eval_on_selector_all(
        f"#{name}-table [role=row][data-index]",
        f"rs => rs.filter(r => !r.querySelector('.reported-badge')).map(r => r.querySelectorAll('[role=gridcell]')[{col}].innerText.trim())",
    )
    assert shown == bands[: len(shown)] and any("–" in b for b in shown)
    assert page.locator(f"#{name}-filters").count() == 1  # filters folded into one collapsed group


def test_a_page_opens_with_its_table_and_who_leads_before_its_load_answers(app, page):  # noqa: F811
    """The tab a page opens on comes with the page as the last load drew it for the board version, its table,
    leaders strip and first chart (TrackTab.serve): a page whose load never answers still shows them, as they are
    now."""
    app.board._bump()  # new data: the table the page was built with is behind
    open_board(page, app)  # a visit: its load draws the view, and the page is served with it from then on
    page.wait_for_selector("#unidoc-strip .lead-name")
    page.route("**/gradio_api/queue/**", lambda route: route.abort())  # the next visit: no answer ever comes
    try:
        page.goto(app.url)
        page.wait_for_selector("#unidoc-table [role=row][data-index]")
        assert page.locator("#unidoc-strip .lead-card.pending").count() == 0
        top = views.leaders(app.board, "unidoc", views.TableView(show_reported=True)).leaders[0]
        assert page.locator("#unidoc-strip .lead-name").first.inner_text() == top.name
        systems = page.eval_on_selector_all(
            "#unidoc-table [role=row][data-index]",
            "rs => rs.map(r => r.querySelectorAll('[role=gridcell]')[3].innerText.trim())",
        )
        assert systems[:5] == views.table_frames(app.board, "unidoc", show_reported=True)[0]["System"].tolist()[:5]
        page.wait_for_selector("#unidoc-plot-0 .main-svg g.trace")  # its first chart, drawn from the page alone
    finally:
        page.unroute("**/gradio_api/queue/**")


def test_vdr_tradeoff_curves_per_model_and_method(app, page):  # noqa: F811
    open_board(page, app, "?tab=vdr", table="vdr-table")
    page.wait_for_selector("#vdr-plot-0 svg.main-svg")
    names = page.eval_on_selector_all("#vdr-plot-0 g.legend .traces text.legendtext", "els => els.map(e => e.textContent)")
    systems = [e.system for e in app.board.entries("vdr") if e.status == "scored"]
    pairs = {f"{s['model']} · {s['method']}" for s in systems}
    assert pairs <= set(names) and "Pareto front" in names
    assert "one curve per base model and method" in plot_svg_text(page, "vdr-plot-0")
    page.screenshot(path=str(SHOTS / "vdr-tradeoff.png"), full_page=True)


def test_system_tab_opens_on_the_leader_of_the_current_track(app, page):  # noqa: F811
    open_board(page, app, "?tab=futurepedia", table="futurepedia-table")
    leader = views.leader_id(app.board, "futurepedia")
    name = app.board.entry(leader).name
    page.get_by_role("tab", name="System", exact=True).click()
    page.wait_for_function(
        "(n) => document.querySelector('#system-meta') && document.querySelector('#system-meta').innerText.includes(n)",
        arg=name,
    )
    assert leader[:7] in page.input_value("#system-pick input")
    page.wait_for_function("(id) => location.search.includes('sys=' + id)", arg=leader)


def test_a_chip_unticked_removes_its_filter(app, page):  # noqa: F811
    open_board(page, app, "?tab=vdr&f.model=colqwen2-v1.0&f.method=merge", table="vdr-table")
    page.wait_for_selector("#vdr-chips label")
    assert chips(page, "vdr") == ["Base model: colqwen2-v1.0", "Method: merge"]
    strip = page.inner_text("#vdr-strip")
    assert "colqwen2-v1.0 (merge 50%)" in strip  # the strip follows the filters: the leader among the filtered rows
    page.click("#vdr-chips label:has-text('Method: merge')")
    page.wait_for_function("!location.search.includes('f.method')")
    page.wait_for_function("document.querySelectorAll('#vdr-chips label').length === 1")
    assert chips(page, "vdr") == ["Base model: colqwen2-v1.0"] and "f.model=colqwen2-v1.0" in page.url
    page.wait_for_function("document.querySelector('#vdr-strip').innerText.includes('colqwen2-v1.0 (uncompressed)')")
