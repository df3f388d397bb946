"""The page in a real browser: Debian's chromium driven by Playwright (never `playwright install`).

One app for the module (the demo submissions plus one hostile submission whose
name is an HTML payload), one browser; a fresh browser context per test.
Screenshots go to test-output/screenshots/ (CI artifacts, not committed).
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from appserver import CHROMIUM, CHROMIUM_ARGS

if not CHROMIUM.exists():
    pytest.skip(
        f"{CHROMIUM} not found: the browser tests drive Debian's chromium (apt-get install chromium)", allow_module_level=True
    )
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")

from leaderboard.submission import with_system  # noqa: E402
from leaderboard.tracks import TRACKS  # noqa: E402
from leaderboard.ui import views  # noqa: E402

from appserver import place_submission, running_app  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "test-output" / "screenshots"
ARGS = CHROMIUM_ARGS
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
XSS_NAME = "<img src=x onerror=alert(1)>"
XSS_SYSTEM = {
    "name": XSS_NAME,
    "organization": "<script>alert(2)</script>",
    "description": "**bold?** [click](javascript:alert(3)) <b onmouseover=alert(4)>hover</b>",
    "link": 'https://example.org/"onmouseover="alert(5)"',  # passes the http(s) check, never becomes a link
}
HOSTILE_BASE = ROOT / "assets" / "demo" / "submissions" / "unidoc" / "textrag-bge-m3-qwen2-5-7b.jsonl"  # the run copied
# The hostile run's answer to its first unit: shown in the raw record boxes (a textarea: the closing tag first)
XSS_ANSWER = "</textarea><img src=x onerror=alert(6)><script>alert(7)</script>"
TIMEOUT = 30_000  # ms: two cores shared by the server, the board and chromium


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("browser-board")
    # One prediction fewer: a run of its own (the same predictions would be a duplicate of the demo, not a row).
    header, first, *rest = HOSTILE_BASE.read_bytes().splitlines()[:-1]
    first = json.dumps({**json.loads(first), "answer": XSS_ANSWER}).encode()
    hostile = with_system(b"\n".join([header, first, *rest]), HOSTILE_BASE.name, XSS_SYSTEM)
    place_submission(data_dir, "unidoc", "mallory", hostile)
    with running_app(data_dir) as running:
        xss = next(e for e in running.board.entries("unidoc") if e.name == XSS_NAME)
        assert xss.status == "scored", xss.summary.errors
        yield running


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module", autouse=True)
def screenshots():
    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS


@pytest.fixture
def page_factory(browser):
    """New pages (tabs) of one browser context per test and viewport: a fresh page, a warm HTTP cache."""
    contexts = {}

    def make(viewport=DESKTOP):
        key = (viewport["width"], viewport["height"])
        if key not in contexts:
            contexts[key] = browser.new_context(viewport=viewport, reduced_motion="reduce")
            contexts[key].set_default_timeout(TIMEOUT)
        page = contexts[key].new_page()
        page.dialogs = []
        page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
        page.errors = []
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        return page

    yield make
    for ctx in contexts.values():
        ctx.close()


# ---- helpers -------------------------------------------------------------------------------------------------
def column(page, table_id: str, col: int) -> list[str]:
    return page.eval_on_selector_all(
        f"#{table_id} [role=row][data-index] [data-col='{col}']", "els => els.map(e => e.innerText.trim())"
    )


def header_index(page, table_id: str, name: str) -> int:
    headers = page.eval_on_selector_all(f"#{table_id} th[role=columnheader]", "els => els.map(e => e.title)")
    return headers.index(name)


def rows(page, table_id: str) -> list[list[str]]:
    return page.eval_on_selector_all(
        f"#{table_id} [role=row][data-index]",
        "rs => rs.map(r => [...r.querySelectorAll('[role=gridcell]')].map(c => c.innerText.trim()))",
    )


def query(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def open_board(page, app, path: str = "", table: str = "unidoc-table"):
    page.goto(app.url + path)
    page.wait_for_selector(f"#{table} [role=row][data-index]")
    # without a query, the URL carries the view once the page has restored it (written by the view on screen); a
    # link that already names a view has tab= from the start: callers wait for what the link restores
    page.wait_for_function("location.search.includes('tab=')")


def rescored_only(page, table: str = "unidoc-table"):
    """Wait until the permalink's `reported=0` is restored: the page first shows the default view, with reported rows."""
    page.wait_for_function(
        "(sel) => location.search.includes('reported=0') && document.querySelectorAll(sel).length === 0",
        arg=f"#{table} [role=row][data-index] .reported-badge",
    )


def wait_rows(page, table_id: str, expected: list[str], col: int | None = None):
    """Until column `col` (None: the System column, found by its header) reads `expected`."""
    page.wait_for_function(
        """([table, col, want]) => {
             const heads = [...document.querySelectorAll(`#${table} th[role=columnheader]`)].map(e => e.title);
             const at = col === null ? heads.indexOf("System") : col;
             const sel = `#${table} [role=row][data-index] [data-col='${at}']`;
             const got = [...document.querySelectorAll(sel)].map(e => e.innerText.trim());
             return at >= 0 && JSON.stringify(got) === JSON.stringify(want);
           }""",
        arg=[table_id, col, expected],
    )


def chips(page, track: str) -> list[str]:
    """The active filters' chips beside the folded Filters group."""
    return page.eval_on_selector_all(f"#{track}-chips label", "ls => ls.map(l => l.innerText.trim())")


def pick(page, dropdown_id: str, option: str):
    page.click(f"#{dropdown_id} input")
    page.get_by_role("option", name=option, exact=True).click()


def plot_svg_text(page, plot_id: str) -> str:
    page.wait_for_selector(f"#{plot_id} svg.main-svg")
    return page.eval_on_selector(f"#{plot_id}", "el => [...el.querySelectorAll('svg')].map(s => s.textContent).join(' ')")


def assert_inert(page):
    """Nothing from a submission ran or became markup."""
    assert page.dialogs == []
    # gradio's own scripts live in <head> (its config carries the names as JSON data); none may appear in the page
    found = page.evaluate(
        "[...document.querySelectorAll('img[src=\"x\"], [onerror], [onmouseover], gradio-app script')]"
        ".filter(e => e.tagName !== 'SCRIPT' || !e.src)"
        ".map(e => e.outerHTML.slice(0, 120))"
    )
    assert found == [], found
    assert (
        page.evaluate(
            "[...document.querySelectorAll('a[href]')].filter(a => !/^(https?:|#|\\/|blob:)/i.test(a.getAttribute('href'))).length"
        )
        == 0
    )


# ---- the board -----------------------------------------------------------------------------------------------
def test_board_loads_with_rows_and_a_chart_and_sorts(app, page_factory):
    page = page_factory()
    open_board(page, app, "?reported=0")  # the rescored rows alone (tests/test_browser_reported.py: with the reported)
    rescored_only(page)
    names = column(page, "unidoc-table", header_index(page, "unidoc-table", "System"))
    expected = [
        e.name
        for e in sorted(
            (e for e in app.board.entries("unidoc") if e.status == "scored"),
            key=lambda e: (-e.summary.overall["recall@10"], e.name),
        )
    ]
    assert names == expected and len(names) == 8
    ranks = [int(r) for r in column(page, "unidoc-table", 0)]
    assert (
        ranks[0] == 1 and ranks == sorted(ranks) and len(set(ranks)) == 8
    )  # the hostile run lacks one answer: below its original
    recall = header_index(page, "unidoc-table", "Recall@10")
    cell = page.inner_html(f"#unidoc-table [data-row='0'][data-col='{recall}']")
    assert "<sub>" in cell  # the CI in smaller type: a rendered <sub>, not text

    # the first chart of the track is drawn when the page opens: a Plotly SVG with bars
    text = plot_svg_text(page, "unidoc-plot-0")
    assert "per domain" in text and page.locator("#unidoc-plot-0 g.trace.bars").count() >= 1
    page.screenshot(path=str(SHOTS / "desktop-board.png"), full_page=True)

    # sort by the System column from its header menu: the order changes to alphabetical
    col = header_index(page, "unidoc-table", "System")
    page.click(f"#unidoc-table th[data-heading='{col}'] span")
    page.click(f"#unidoc-table th[data-heading='{col}'] button[aria-label='Open cell menu']")
    page.get_by_role("menuitem", name="Sort ascending").or_(page.get_by_text("Sort ascending", exact=True)).first.click()
    wait_rows(page, "unidoc-table", sorted(names), col)
    assert column(page, "unidoc-table", col) != names

    # numeric columns sort as numbers (the data behind the formatted cells), not as text
    units = header_index(page, "unidoc-table", "Recall@10")
    page.click(f"#unidoc-table th[data-heading='{units}'] span")
    page.click(f"#unidoc-table th[data-heading='{units}'] button[aria-label='Open cell menu']")
    page.get_by_text("Clear sort", exact=True).click()
    page.click(f"#unidoc-table th[data-heading='{units}'] span")
    page.click(f"#unidoc-table th[data-heading='{units}'] button[aria-label='Open cell menu']")
    page.get_by_text("Sort ascending", exact=True).click()
    page.wait_for_function(
        """(col) => {
        const cells = [...document.querySelectorAll(`#unidoc-table [role=row][data-index] [data-col='${col}']`)];
        const v = cells.map(c => parseFloat(c.innerText));
        return v.length > 1 && v.every((x, i) => i === 0 || v[i - 1] <= x);
    }""",
        arg=units,
    )
    assert page.errors == []


def test_a_track_tab_is_drawn_when_it_opens(app, page_factory):
    """Only the first track's table is built with the page (ui/tabs/track.py `on_screen`); another track's table,
    its leaders, its per-system picker and its first chart are drawn when its tab opens, in board order."""
    page = page_factory()
    open_board(page, app)
    later = list(TRACKS.values())[2]  # a track with published figures: its leaders table is drawn too
    assert later.reported_files and page.locator(f"#{later.name}-table [role=row][data-index]").count() == 0
    page.get_by_role("tab", name=later.title, exact=True).click()
    page.wait_for_function("(name) => location.search.includes('tab=' + name)", arg=later.name)
    page.wait_for_selector(f"#{later.name}-table [role=row][data-index]")
    first = views.table_page(app.board, later.name, views.TableView(show_reported=True))[1]["name"].iloc[0]  # the view's best row
    assert column(page, f"{later.name}-table", header_index(page, f"{later.name}-table", "System"))[0].startswith(first)
    page.wait_for_selector(f"#{later.name}-leaders table")
    assert plot_svg_text(page, f"{later.name}-plot-0")
    futurepedia = list(TRACKS.values())[1]  # the per-system picker's track: it gets its choices and the best system
    page.get_by_role("tab", name=futurepedia.title, exact=True).click()
    best = views.system_choices(app.board, futurepedia.name, limit=1)[0][0]
    page.wait_for_function(
        "([sel, want]) => document.querySelector(sel).value === want", arg=[f"#{futurepedia.name}-chart-system input", best]
    )
    assert plot_svg_text(page, f"{futurepedia.name}-plot-0")
    assert page.errors == []


def test_control_change_updates_url_and_permalink_restores_view(app, page_factory):
    page = page_factory()
    open_board(page, app)
    pick(page, "unidoc-rank-by", "Completeness")
    page.wait_for_function("location.search.includes('rank=completeness')")
    page.click("#unidoc-filters button.label-wrap")  # the filters are folded: open them
    pick(page, "unidoc-filter-paradigm", "text")
    page.keyboard.press("Escape")
    page.wait_for_function("location.search.includes('f.paradigm=text')")
    page.wait_for_selector("#unidoc-chips label")
    assert chips(page, "unidoc") == ["Paradigm: text"]  # the active filter, shown folded too
    page.fill("#unidoc-search textarea, #unidoc-search input", "bge")
    page.wait_for_function("location.search.includes('q=bge')")
    q = query(page)
    assert q["tab"] == ["unidoc"] and q["rank"] == ["completeness"] and q["f.paradigm"] == ["text"] and q["q"] == ["bge"]
    wait_rows(page, "unidoc-table", ["TextRAG: BGE-M3 + Qwen2.5-7B"])
    table = rows(page, "unidoc-table")
    label = page.inner_text("#unidoc-table p")
    assert label == "UniDoc-Bench: ranked by Completeness"

    fresh = page_factory()
    fresh.goto(page.url)
    wait_rows(fresh, "unidoc-table", ["TextRAG: BGE-M3 + Qwen2.5-7B"])
    assert fresh.input_value("#unidoc-rank-by input") == "Completeness"
    assert fresh.input_value("#unidoc-search textarea, #unidoc-search input") == "bge"
    fresh.wait_for_selector("#unidoc-chips label")
    assert chips(fresh, "unidoc") == ["Paradigm: text"]  # folded, the restored filter shows as a chip
    fresh.click("#unidoc-filters button.label-wrap")
    assert "text" in fresh.inner_text("#unidoc-filter-paradigm")
    assert fresh.locator("#main-tabs [role=tab][aria-selected=true]").first.inner_text().strip() == "UniDoc-Bench"
    assert rows(fresh, "unidoc-table") == table
    assert fresh.inner_text("#unidoc-table p") == label
    fresh.wait_for_function("location.search.includes('q=bge')")
    assert query(fresh) == q  # the restored page keeps the same permalink

    # another track's tab, restored from its own permalink; an older link naming the metric by its label still works
    other = page_factory()
    other.goto(app.url + "?tab=vdr&f.model=colqwen2-v1.0&f.method=merge&rank=nDCG%405")
    wait_rows(other, "vdr-table", ["colqwen2-v1.0 (merge 50%)", "colqwen2-v1.0 (merge 75%)", "colqwen2-v1.0 (merge 90%)"])
    assert other.locator("#main-tabs [role=tab][aria-selected=true]").first.inner_text().strip() == "VDR compression"
    other.wait_for_function("location.search.includes('rank=ndcg%405')")  # rewritten with the metric's key
    assert other.input_value("#vdr-rank-by input") == "nDCG@5"


def test_compare_tab_and_its_permalink(app, page_factory):
    page = page_factory()
    open_board(page, app)
    page.get_by_role("tab", name="Compare").click()
    page.wait_for_function("location.search.includes('tab=compare')")
    page.wait_for_selector("#compare-metrics [role=row][data-index]")
    summary = page.inner_text("#compare-summary")
    assert summary.startswith("A = ") and "units both answered" in summary
    metrics = rows(page, "compare-metrics")
    assert [r[0] for r in metrics][:2] == ["Recall@10", "Precision@10"]
    assert all(re.fullmatch(r"[+-]\d\.\d{3}", r[3]) and r[6] in ("yes", "no") for r in metrics)
    plot_svg_text(page, "compare-plot")
    page.wait_for_selector("#compare-top [role=row][data-index]")
    q = query(page)
    assert q["track"] == ["unidoc"] and q["a"] and q["b"] and q["a"] != q["b"]
    page.screenshot(path=str(SHOTS / "desktop-compare.png"), full_page=True)

    # another track, picked by the user: A and B become that track's two best systems
    pick(page, "compare-track", "VDR compression")
    vdr = _choices(app, "vdr")
    page.wait_for_function(f"location.search.includes('track=vdr') && location.search.includes('a={vdr[0][1]}')")
    assert page.input_value("#compare-b input") == vdr[1][0]
    # then a B with partial coverage (4 of the 8 datasets): compared on the shared queries, and it says how many
    partial = next(e for e in app.board.entries("vdr") if e.summary.overall["coverage"] < 1)
    shared = partial.summary.n - partial.summary.missing  # A, the best run, answered every query
    pick(page, "compare-b", next(label for label, i in vdr if i == partial.id))
    page.wait_for_function(f"location.search.includes('b={partial.id}')")
    page.wait_for_function(f"document.querySelector('#compare-summary').innerText.includes({partial.name!r})")
    assert f"over the {shared} units both answered" in page.inner_text("#compare-summary")
    page.wait_for_function("document.querySelectorAll('#compare-metrics [role=row][data-index]').length > 0")
    metrics = rows(page, "compare-metrics")
    assert metrics[0][0] == "nDCG@5" and metrics[0][-1] == str(shared)

    # the permalink of that view, in a fresh page: same tab, same track, same A and B, same numbers
    fresh = page_factory()
    fresh.goto(page.url)
    fresh.wait_for_function(
        "document.querySelector('#compare-summary') && "
        f"document.querySelector('#compare-summary').innerText.includes({partial.name!r})"
    )
    assert fresh.locator("#main-tabs [role=tab][aria-selected=true]").first.inner_text().strip() == "Compare"
    assert fresh.input_value("#compare-track input") == "VDR compression"
    assert fresh.input_value("#compare-a input") == vdr[0][0]
    assert fresh.input_value("#compare-b input") == next(label for label, i in vdr if i == partial.id)
    fresh.wait_for_selector("#compare-metrics [role=row][data-index]")
    assert fresh.inner_text("#compare-summary") == page.inner_text("#compare-summary")
    assert rows(fresh, "compare-metrics") == metrics
    assert query(fresh) == query(page)


def test_a_compare_permalink_asks_for_no_pair_but_the_one_it_names(app, page_factory):
    """The permalink's restore sets A and B in one answer, which the browser writes one picker at a time: a
    comparison asked for on A's change carried A restored and B as built, and could be answered after the
    restored pair's (the summary then named a B nobody picked). Every comparison the page asks for names the
    permalink's pair, and the one on screen is it."""
    ids = [i for _, i in _choices(app)]
    a, b = ids[2], ids[3]  # neither is a picker's value as built (the two best systems)
    names = {e.id: e.name for e in app.board.entries("unidoc")}
    page = page_factory()
    sent: list[list] = []
    page.on("request", lambda r: "/queue/join" in r.url and sent.append(json.loads(r.post_data)["data"]))
    page.goto(app.url + f"?tab=compare&track=unidoc&a={a}&b={b}")
    expected = f"A = {names[a]} · B = {names[b]}"
    page.wait_for_function(
        "(t) => document.querySelector('#compare-summary') && document.querySelector('#compare-summary').innerText.includes(t)",
        arg=expected,
    )
    page.wait_for_timeout(1500)  # what else was asked for has been answered
    runs = [d for d in sent if len(d) == 4 and d[:2] == ["compare", "unidoc"]]
    assert runs and all(d[2:] == [a, b] for d in runs), runs
    assert expected in page.inner_text("#compare-summary")


# What a chart's labels and legend occupy on the page: every x label clear of the legend and inside the figure,
# the legend inside the figure, and the plot area left its height.
CHART_LAYOUT_JS = """(el) => {
  const figure = el.querySelector('svg.main-svg').getBoundingClientRect();
  const legend = el.querySelector('g.legend');
  const box = legend ? legend.getBoundingClientRect() : null;
  const labels = [...el.querySelectorAll('g.xtick text')].map(t => t.getBoundingClientRect());
  const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const plot = el.querySelector('.cartesianlayer .bg, .nsewdrag').getBoundingClientRect();
  return {
    labels: labels.length,
    under_legend: box ? labels.filter(r => meets(r, box)).length : 0,
    outside: labels.filter(r => r.bottom > figure.bottom + 1 || r.top < figure.top - 1).length,
    legend_outside: box ? box.bottom > figure.bottom + 1 : false,
    plot_height: plot.height,
  };
}"""


def chart_layout(page, plot_id: str) -> dict:
    page.wait_for_selector(f"#{plot_id} g.xtick text")
    page.wait_for_timeout(300)  # plotly settles its margins in a second pass
    return page.eval_on_selector(f"#{plot_id}", CHART_LAYOUT_JS)


def test_chart_labels_stay_clear_of_the_legend(app, page_factory):
    """Long category names (vdr's datasets, tilted) under many systems' legend: before, the legend sat at a fixed
    fraction of the plot under it and covered the names; the chart now grows and the legend stays below them."""
    page = page_factory()
    open_board(page, app, "?tab=vdr", table="vdr-table")
    page.get_by_role("tab", name="Per dataset", exact=True).click()
    page.wait_for_function("document.querySelectorAll('#vdr-plot-1 g.legend .traces').length >= 9")
    checked = {"vdr per dataset": chart_layout(page, "vdr-plot-1")}
    page.screenshot(path=str(SHOTS / "desktop-vdr-per-dataset.png"), full_page=True)
    page.get_by_role("tab", name="nDCG@5 against compression (Pareto front marked)").click()
    checked["vdr tradeoff"] = chart_layout(page, "vdr-plot-0")
    page.goto(app.url + "?tab=compare")
    page.wait_for_selector("#compare-metrics [role=row][data-index]")
    checked["compare"] = chart_layout(page, "compare-plot")
    for name, got in checked.items():
        assert got["labels"] >= 4, (name, got)
        assert got["under_legend"] == 0 and got["outside"] == 0 and not got["legend_outside"], (name, got)
        assert got["plot_height"] >= 200, (name, got)


def _choices(app, track="unidoc"):
    from leaderboard.ui import views

    return views.system_choices(app.board, track)


# ---- hostile text ----------------------------------------------------------------------------------------------
def test_hostile_system_name_shows_literally_and_runs_nothing(app, page_factory):
    xss = next(e for e in app.board.entries("unidoc") if e.name == XSS_NAME)
    other = next(e for e in app.board.entries("unidoc") if e.name.startswith("BM25"))
    page = page_factory()
    open_board(page, app)

    # the table: the name as text, the organisation too
    assert XSS_NAME in column(page, "unidoc-table", header_index(page, "unidoc-table", "System"))
    assert "<script>alert(2)</script>" in column(page, "unidoc-table", header_index(page, "unidoc-table", "Organisation"))
    # the charts: the legend of the per-domain bars, the labels of the retrieval vs end-to-end scatter
    assert XSS_NAME in plot_svg_text(page, "unidoc-plot-0")
    page.get_by_role("tab", name="Retrieval vs end-to-end").click()
    page.wait_for_function(f"""() => [...document.querySelectorAll('#unidoc-plot-3 svg')]
                                   .some(s => s.textContent.includes({XSS_NAME!r}))""")
    assert_inert(page)

    # compare, opened from its permalink: summary, chart title, the system pickers
    page.goto(app.url + f"?tab=compare&track=unidoc&a={xss.id}&b={other.id}")
    # the restored pair's comparison, and no other after it (test_a_compare_permalink_asks_for_no_pair_but_the_one_it_names)
    expected = f"A = {XSS_NAME} · B = {other.name}"
    page.wait_for_function(
        "(t) => document.querySelector('#compare-summary') && document.querySelector('#compare-summary').innerText.includes(t)",
        arg=expected,
    )
    assert expected in page.inner_text("#compare-summary")
    page.wait_for_function(f"""() => [...document.querySelectorAll('#compare-plot svg')]
                                   .some(s => s.textContent.includes({XSS_NAME!r}))""")
    assert page.input_value("#compare-a input").startswith(XSS_NAME)
    assert_inert(page)

    # the detail view: name, organisation, description and the refused link all as text
    page.goto(app.url + f"?tab=system&sys={xss.id}")
    page.wait_for_function("document.querySelector('#system-meta table')")
    meta = page.inner_text("#system-meta")
    for value in XSS_SYSTEM.values():
        assert value in meta, value
    assert page.locator("#system-meta a").count() == 0  # the link is not http(s)-clean: no anchor at all
    page.wait_for_selector("#system-breakdown [role=row][data-index]")
    page.screenshot(path=str(SHOTS / "desktop-system-detail.png"), full_page=True)
    assert_inert(page)
    # its raw record: the answer as text in the box, the box still the only thing there
    unit = json.loads(HOSTILE_BASE.read_text().splitlines()[1])["id"]
    page.fill("#system-unit textarea, #system-unit input", unit)
    page.press("#system-unit textarea, #system-unit input", "Enter")
    page.wait_for_function("(a) => (document.querySelector('#system-record textarea') || {}).value?.includes(a)", arg=XSS_ANSWER)
    assert json.loads(page.input_value("#system-record textarea"))["answer"] == XSS_ANSWER
    assert page.locator("#system-record textarea").count() == 1
    assert_inert(page)
    assert page.errors == []


# ---- phone width -------------------------------------------------------------------------------------------------
def test_phone_width_is_readable(app, page_factory):
    page = page_factory(PHONE)
    open_board(page, app, "?reported=0")
    rescored_only(page)
    plot_svg_text(page, "unidoc-plot-0")
    # the page itself does not scroll sideways: the table scrolls inside its own box
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1
    assert page.locator("#unidoc-table [role=row][data-index]").count() == 8
    page.screenshot(path=str(SHOTS / "phone-board.png"), full_page=True)
    page.goto(app.url + "?tab=compare")
    page.wait_for_selector("#compare-metrics [role=row][data-index]")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1
    page.screenshot(path=str(SHOTS / "phone-compare.png"), full_page=True)
    assert_inert(page)


def test_clicking_a_row_opens_that_system(app, page_factory):
    page = page_factory()
    open_board(page, app)
    names = column(page, "unidoc-table", header_index(page, "unidoc-table", "System"))
    second = names[1]
    page.locator(f"#unidoc-table [role=row][data-index] [data-col='{header_index(page, 'unidoc-table', 'System')}']").nth(
        1
    ).click()
    page.wait_for_function("location.search.includes('tab=system')")
    page.wait_for_function(
        "(n) => document.querySelector('#system-meta') && document.querySelector('#system-meta').innerText.includes(n)",
        arg=second,
    )
    assert page.input_value("#system-pick input").split(" · ")[1].startswith(second[:20])


def test_clicking_a_unit_shows_its_raw_prediction(app, page_factory):
    e = next(x for x in app.board.entries("unidoc") if x.status == "scored")
    page = page_factory()
    page.goto(app.url + f"?tab=system&sys={e.id}")
    page.wait_for_selector("#system-units [role=row][data-index]")
    first_unit = page.locator("#system-units [role=row][data-index] [data-col='0']").first
    unit_id = first_unit.inner_text().strip()
    first_unit.click()
    page.wait_for_function(
        "(u) => { const box = document.querySelector('#system-record textarea'); return !!box && box.value.includes(u); }",
        arg=unit_id,
    )
    assert page.input_value("#system-unit textarea, #system-unit input") == unit_id


def test_compare_shows_both_raw_predictions_of_the_unit_it_picks(app, page_factory):
    """Below the comparison, the unit where A and B differ most, as each of them answered it (JSON text)."""
    page = page_factory()
    page.goto(app.url + "?tab=compare")
    page.wait_for_selector("#compare-top [role=row][data-index]")
    page.wait_for_function("() => document.querySelector('#compare-unit input').value !== ''")
    unit = page.input_value("#compare-unit input")
    both = "(u) => ['a', 'b'].every((s) => (document.querySelector(`#compare-rec-${s} textarea`) || {}).value?.includes(u))"
    page.wait_for_function(both, arg=unit)
    for side in ("a", "b"):
        assert json.loads(page.input_value(f"#compare-rec-{side} textarea"))["id"] == unit


def test_the_system_tab_shows_only_what_the_pick_has(app, page_factory):
    """Nothing picked: the hint alone (an empty table read as headers 1, 2, 3); a reported row: its figures, and no
    unit controls (it has no units); a submission: every part."""
    visible = "(sel) => { const el = document.querySelector(sel); return !!el && el.offsetParent !== null; }"
    parts = ("#system-breakdown", "#system-units", "#system-search", "#system-record")
    page = page_factory()
    page.goto(app.url + "?tab=system&sys=nonexistent")  # a link naming no system opens on a leader: a wrong id picks none
    page.wait_for_function(
        "document.querySelector('#system-meta') && document.querySelector('#system-meta').innerText.includes('Pick a system')"
    )
    page.wait_for_timeout(500)
    assert [page.evaluate(visible, p) for p in parts] == [False] * 4
    page.goto(app.url + "?tab=system&sys=reported:unidoc:paper-image")
    page.wait_for_selector("#system-breakdown [role=row][data-index]")
    assert [page.evaluate(visible, p) for p in parts] == [True, False, False, False]
    e = next(x for x in app.board.entries("unidoc") if x.status == "scored")
    page.goto(app.url + f"?tab=system&sys={e.id}")
    page.wait_for_selector("#system-units [role=row][data-index]")
    assert [page.evaluate(visible, p) for p in parts] == [True] * 4
    assert "1\n2\n3" not in page.inner_text("#system-breakdown")
    page.click("#system-show")  # the Show button (the /detail endpoint) leaves every part shown
    page.wait_for_timeout(1000)
    assert [page.evaluate(visible, p) for p in parts] == [True] * 4


@contextlib.contextmanager
def desktop_context():
    """A chromium context at the desktop viewport with the suite's timeout (module fixtures of the browser tests)."""
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        ctx = browser.new_context(viewport=DESKTOP, reduced_motion="reduce")
        ctx.set_default_timeout(TIMEOUT)
        yield ctx
        ctx.close()
        browser.close()


# ---- a tab drawn once per board version --------------------------------------------------------------------------
def _asked(page, app) -> list[str]:
    """What the page asks the server from now on: the handler of every queue request, by qualified name (and the
    track for a track tab's), the status timer's tick left out (it asks every few seconds whatever is on screen)."""
    asked: list[str] = []

    def name(fn_index: int) -> str:
        fn = app.blocks.fns[fn_index].fn
        inner = getattr(fn, "__wrapped__", fn)
        track = getattr(getattr(inner, "__self__", None), "id", "")
        return f"{fn.__qualname__}({track})"

    def on_request(request):
        if "/queue/join" in request.url:
            called = name(json.loads(request.post_data)["fn_index"])
            if not called.startswith("_wire_status.<locals>.poll"):
                asked.append(called)

    page.on("request", on_request)
    return asked


def _open_tab(page, title: str, track: str):
    page.get_by_role("tab", name=title, exact=True).click()
    page.wait_for_selector(f"#{track}-table [role=row][data-index]")
    plot_svg_text(page, f"{track}-plot-0")


def test_the_other_tracks_are_mounted_hidden_while_the_first_screen_is_read(app, page_factory):
    """ui/layout.py PREMOUNT_JS: once the first chart is drawn, the other tracks' tabs mount in the page, hidden (their
    charts drawn at the width they show at, nothing of them on screen); opening one asks the server nothing and
    shows its table and its chart as drawn, not drawn again; the folded filters stay unmounted until opened. A page
    opened on another track mounts the first one the same way."""
    page = page_factory()
    asked = _asked(page, app)
    open_board(page, app)
    plot_svg_text(page, "unidoc-plot-0")
    others = [(t.name, t.title) for t in list(TRACKS.values())[1:]]
    for name, _ in others:
        page.wait_for_selector(f"#{name}-plot-0 .main-svg g.trace", state="attached")
        assert not page.is_visible(f"#{name}-table")  # not shown (laid out unseen, taking no room on the page)
        assert page.locator(f"#{name}-filter-{views.filter_fields(TRACKS[name])[0].key}").count() == 0  # folded
    page.wait_for_timeout(1000)  # anything still coming in
    asked.clear()
    shown_width = page.evaluate("document.querySelector('#unidoc-plot-0 .js-plotly-plot').offsetWidth")
    # the hidden tabs take no room on the page
    heights = "[...document.querySelectorAll('#main-tabs > .tabitem')].map(e => e.getBoundingClientRect().height)"
    assert [h > 0 for h in page.evaluate(heights)][: len(TRACKS)] == [True] + [False] * len(others)
    for name, title in others:
        # drawn hidden at the width it shows at (assets/style.css): every draw of it from now on is counted
        hidden_width = page.evaluate(
            "(id) => { const gd = document.querySelector(id + ' .js-plotly-plot'); window.__draws = 0;"
            " gd.on('plotly_afterplot', () => window.__draws++); return gd._fullLayout.width; }",
            f"#{name}-plot-0",
        )
        assert abs(hidden_width - shown_width) <= 1, (name, hidden_width, shown_width)
        _open_tab(page, title, name)
        page.wait_for_timeout(500)
        box, drawn, draws = page.evaluate(
            "(id) => { const gd = document.querySelector(id + ' .js-plotly-plot');"
            " return [gd.offsetWidth, gd._fullLayout.width, window.__draws]; }",
            f"#{name}-plot-0",
        )
        assert (draws, abs(drawn - box) <= 1) == (0, True), (name, box, drawn, draws)  # shown as drawn
    page.wait_for_timeout(1000)
    assert asked == []
    page.click(f"#{others[-1][0]}-filters button.label-wrap")  # a folded group's controls mount when it opens
    page.wait_for_selector(f"#{others[-1][0]}-filter-{views.filter_fields(TRACKS[others[-1][0]])[0].key}")

    first = next(iter(TRACKS))
    other = page_factory()
    other.goto(app.url + f"?tab={others[-1][0]}")
    other.wait_for_selector(f"#{others[-1][0]}-plot-0 .main-svg g.trace")
    other.wait_for_selector(f"#{first}-plot-0 .main-svg g.trace", state="attached")
    assert page.errors == [] and other.errors == []


def test_the_other_tracks_are_asked_for_once_the_first_chart_is_drawn(app, page_factory):
    """ui/layout.py FIRST_CHART_JS: the other tracks' tables and charts (`prefetch`) are asked for after the tab on
    screen has drawn its first chart, not in its way; a page whose chart cannot draw (Plotly's bundle refused here)
    asks for them all the same after 5 s."""
    page = page_factory()
    page.route("**/PlotlyPlot-*.js", lambda route: route.abort())
    asked = _asked(page, app)
    started = time.monotonic()
    open_board(page, app)
    page.wait_for_timeout(max(0, 3500 - (time.monotonic() - started) * 1000))
    assert not any(a.startswith("_wire_permalinks.<locals>.prefetch") for a in asked), asked
    for _ in range(80):  # the wait gives up 5 s after the page's load answered
        if any(a.startswith("_wire_permalinks.<locals>.prefetch") for a in asked):
            break
        page.wait_for_timeout(100)
    assert any(a.startswith("_wire_permalinks.<locals>.prefetch") for a in asked), asked

    drawn = page_factory()  # a page whose chart draws: asked for once it is drawn
    asked = _asked(drawn, app)
    open_board(drawn, app)
    plot_svg_text(drawn, "unidoc-plot-0")
    for _ in range(40):
        if any(a.startswith("_wire_permalinks.<locals>.prefetch") for a in asked):
            break
        drawn.wait_for_timeout(100)
    assert any(a.startswith("_wire_permalinks.<locals>.prefetch") for a in asked), asked


def test_a_drawn_tab_is_shown_again_without_asking_the_server(app, page_factory):
    """ui/tabs/track.py `wire`: a track tab the page holds drawn for the board version it knows opens in the page
    alone (no request); new data redraws the tab on screen, and a tab drawn before it
    when it opens again. Last in the module: it adds a submission to the board."""
    page = page_factory()
    asked = _asked(page, app)
    open_board(page, app)
    plot_svg_text(page, "unidoc-plot-0")
    tracks = [(t.name, t.title) for t in TRACKS.values()]
    for name, title in tracks[1:]:  # each drawn once: by the page's load or when it opens
        _open_tab(page, title, name)
    page.wait_for_timeout(1500)  # anything still coming in
    asked.clear()
    for name, title in [*tracks, *tracks]:
        _open_tab(page, title, name)
        page.wait_for_timeout(300)
    page.wait_for_timeout(1000)
    assert asked == []
    assert "tab=vdr" in page.url  # the URL follows the tab on screen all the same

    # New data (a submission, pulled): the tab on screen is redrawn, the others when they open again
    futurepedia = tracks[1]
    base = ROOT / "assets" / "demo" / "submissions" / "futurepedia" / "gemma-2-9b-mono.jsonl"
    fresh = with_system(b"\n".join(base.read_bytes().splitlines()[:-1]), base.name, {"name": "Fresh system"})
    place_submission(app.data_dir, futurepedia[0], "newcomer", fresh)
    version = app.board.version
    app.board.refresh()
    assert app.board.version != version

    def tracks_asked():  # the compare and system tabs refresh their pickers with new data: theirs, not asked here
        return [a for a in asked if a.startswith("TrackTab.")]

    for _ in range(TIMEOUT // 250):  # the timer's next tick (5 s) announces it; the tab on screen asks for its draw
        if tracks_asked():
            break
        page.wait_for_timeout(250)
    page.wait_for_timeout(1000)
    assert tracks_asked() == ["TrackTab.draw(vdr)"]
    _open_tab(page, futurepedia[1], futurepedia[0])
    page.wait_for_function(
        "() => [...document.querySelectorAll('#futurepedia-table [role=row][data-index]')]"
        ".some(r => r.innerText.includes('Fresh system'))"
    )
    assert tracks_asked() == ["TrackTab.draw(vdr)", "TrackTab.draw(futurepedia)"]
    assert page.errors == []
