"""Every public endpoint of the running app, through gradio_client (the real server, the real HTTP API).

One app for the module: the bundled demo submissions, a private data folder,
the offline lexical judge. The submit tests come last in the file because they
add a system to the board.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError

from leaderboard import demo
from leaderboard.submission import with_system
from leaderboard.tracks import TRACKS
from leaderboard.ui import views

from appserver import place_submission, running_app

UNIDOC_COLUMNS = [
    "Organisation",
    "Paradigm",
    "Recall@10",
    "Precision@10",
    "Completeness",
    "Faithfulness",
    "Rank (CI)",
    "Covered",
    "Status",
]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with running_app(tmp_path_factory.mktemp("board")) as running:
        yield running


@pytest.fixture(scope="module")
def client(app):
    return Client(app.url, verbose=False, download_files=str(app.data_dir / "downloads"))


def ids_by_name(app, track: str) -> dict[str, str]:
    return {e.name: e.id for e in app.board.entries(track)}


def frame(value, shown: bool = True) -> pd.DataFrame:
    """A Dataframe output (a bare value or a gr.update carrying one) as a DataFrame.

    `shown`: the cells as the page shows them (the board tables send sortable
    numbers as data and the formatted text as display values), else the data.
    """
    value = value.get("value", value) if isinstance(value, dict) and "__type__" in value else value
    display = (value.get("metadata") or {}).get("display_value")
    return pd.DataFrame(display if shown and display else value["data"], columns=value["headers"])


def number(cell: str) -> float | None:
    m = re.match(r"\s*(-?\d+(?:\.\d+)?)(%?)", cell or "")
    if not m:
        return None
    return float(m.group(1)) / (100 if m.group(2) else 1)


def table(client, track: str, *args) -> tuple[pd.DataFrame, dict]:
    out = client.predict(*args, api_name=f"/table_{track}")
    return frame(out), out


# ---- tables -----------------------------------------------------------------------------------------
def test_table_unidoc_default_view_is_ranked(client, app):
    df, out = table(client, "unidoc", "Recall@10", "All", "", [], [], [], UNIDOC_COLUMNS, False)
    scored = [e for e in app.board.entries("unidoc") if e.status == "scored"]
    assert len(df) == len(scored) >= 7
    assert list(df.columns) == ["Rank", "Rank (CI)", "System", *[c for c in UNIDOC_COLUMNS if c != "Rank (CI)"]]
    assert out["label"] == "UniDoc-Bench: ranked by Recall@10"
    recall = [number(c) for c in df["Recall@10"]]
    assert recall == sorted(recall, reverse=True)
    assert df["Rank"].tolist()[0] == "1" and all(df["Rank"].astype(int).diff().dropna() >= 0)
    # plain rank vs the CI-aware rank: never better than 1, never worse than the plain rank
    for rank, ub in zip(df["Rank"].astype(int), df["Rank (CI)"]):
        assert ub.startswith("≥") and 1 <= int(ub[1:]) <= rank
    # metrics with 95% CI in smaller type, 3 decimals
    assert re.fullmatch(r"0\.\d{3} <sub>\[0\.\d{3}, 0\.\d{3}\]</sub>", df["Recall@10"][0])
    assert out["datatype"][list(df.columns).index("System")] == "str"  # submitted text is never HTML
    assert out["datatype"][list(df.columns).index("Recall@10")] == "html"  # our own cells: numbers and tags
    # the browser sorts the data, not the text: numbers for ranks, metrics and counts, null when there is none
    keys = frame(out, shown=False)
    assert keys["Rank"].tolist() == list(range(1, len(df) + 1))
    assert keys["Recall@10"].tolist() == pytest.approx(recall, abs=5e-4)
    assert keys["Covered"].tolist() == [float(c.split(" / ")[0]) for c in df["Covered"]]
    assert keys["System"].tolist() == df["System"].tolist()


def test_table_judged_and_not_judged_cells(client):
    df, _ = table(client, "unidoc", "Recall@10", "All", "", [], [], [], UNIDOC_COLUMNS)
    rows = df.set_index("System")
    retrieval_only = rows.loc["Jina-CLIP v2 retrieval only"]
    assert retrieval_only["Completeness"] == "not judged" and retrieval_only["Faithfulness"] == "not judged"
    assert number(retrieval_only["Recall@10"]) is not None and retrieval_only["Status"] == "scored"
    judged = rows.loc["MM fusion: BGE-M3 + ColQwen2, RRF + GPT-4o"]
    assert number(judged["Completeness"]) is not None and "<sup>≈</sup>" in judged["Completeness"]  # lexical judge
    assert "judging" not in " ".join(df["Status"])


def test_table_rank_by_judged_metric_puts_unjudged_last(client):
    df, out = table(client, "unidoc", "Completeness", "All", "", [], [], [], UNIDOC_COLUMNS)
    assert out["label"] == "UniDoc-Bench: ranked by Completeness"
    values = [number(c) for c in df["Completeness"]]
    judged = [v for v in values if v is not None]
    assert judged == sorted(judged, reverse=True) and values[: len(judged)] == judged
    assert df["System"].iloc[-1] == "Jina-CLIP v2 retrieval only" and df["Rank"].iloc[-1] == ""
    last = dict(zip(out["value"]["headers"], out["value"]["data"][-1]))
    assert last["Rank"] is None and last["Completeness"] is None  # sorts last, never as the text "not judged"


def test_table_filter_search_and_columns(client):
    df, _ = table(client, "unidoc", "Recall@10", "All", "", ["image"], [], [], UNIDOC_COLUMNS, False)
    assert set(df["Paradigm"]) == {"image"}
    assert set(df["System"]) == {"ColPali pages + Qwen2.5-VL-7B", "VisRAG-Ret + MiniCPM-V (partial run)"}
    assert df["Rank"].tolist() == sorted(df["Rank"].tolist(), key=int)  # the overall rank is kept under a filter

    df, _ = table(client, "unidoc", "Recall@10", "All", "bge-m3", [], [], [], UNIDOC_COLUMNS, False)
    assert len(df) >= 2 and all("bge-m3" in s.lower() for s in df["System"])

    df, _ = table(client, "unidoc", "Recall@10", "All", "Demo Baselines", ["text", "image"], [], [], UNIDOC_COLUMNS, False)
    assert df["System"].tolist() == ["BM25 + Llama-3.1-8B (baseline)"]  # search matches the organisation too

    df, _ = table(client, "unidoc", "Recall@10", "All", "no such system", [], [], [], UNIDOC_COLUMNS, False)
    assert df.empty

    df, _ = table(client, "unidoc", "Recall@10", "All", "", [], [], [], ["Recall@10"], False)
    assert list(df.columns) == ["Rank", "System", "Recall@10"]


def test_table_slice_shows_the_slice_scores(client, app):
    df, out = table(client, "unidoc", "Recall@10", "Domain: finance", "", [], [], [], UNIDOC_COLUMNS, False)
    assert out["label"] == "UniDoc-Bench: ranked by Recall@10, scores on Domain: finance"
    entries = {e.name: e for e in app.board.entries("unidoc")}
    for name, cell in zip(df["System"], df["Recall@10"]):
        expected = entries[name].summary.breakdowns["domain"]["finance"]["recall@10"]
        assert number(cell) == pytest.approx(expected, abs=5e-4)
        assert "<sub>" not in cell  # slices carry no CI
    recall = [number(c) for c in df["Recall@10"]]
    assert recall == sorted(recall, reverse=True)


def test_table_futurepedia_filters_slice_and_var(client, app):
    fields = views.filter_fields(TRACKS["futurepedia"])
    assert [f.key for f in fields]  # futurepedia declares its filters
    cols = ["Organisation", "Monolingual", "Monolingual VAR", "Cross-lingual (strict)", "Covered", "Status"]
    filters = [[] for _ in fields]
    df, _ = table(client, "futurepedia", "Monolingual", "All", "", *filters, cols)
    assert len(df) == len(app.board.entries("futurepedia"))
    assert all(re.fullmatch(r"\d\.\d{4}", v) for v in df["Monolingual VAR"])
    mono = [number(c) for c in df["Monolingual"]]
    assert mono == sorted(mono, reverse=True)
    # the monolingual-only system has no cross-lingual score: a dash, not "not judged"
    gemma = df.set_index("System").loc["Gemma-2-9B monolingual"]
    assert gemma["Cross-lingual (strict)"] == "–"

    df_ja, out = table(client, "futurepedia", "Monolingual", "Query language: ja", "", *filters, cols)
    assert out["label"].endswith("scores on Query language: ja")
    entries = {e.name: e for e in app.board.entries("futurepedia")}
    for name, cell in zip(df_ja["System"], df_ja["Monolingual"]):
        assert number(cell) == pytest.approx(entries[name].summary.breakdowns["language"]["ja"]["monolingual"], abs=5e-4)

    # a filter on the first declared field keeps only matching systems
    key = fields[0].key
    value = next(e.system[key] for e in app.board.entries("futurepedia") if e.system.get(key))
    chosen = [[value]] + [[] for _ in fields[1:]]
    df_f, _ = table(client, "futurepedia", "Monolingual", "All", "", *chosen, cols)
    expected = {e.name for e in app.board.entries("futurepedia") if e.system.get(key) == value}
    assert set(df_f["System"]) == expected and len(df_f) < len(df)


def test_table_vdr_filters_and_rank_by(client, app):
    cols = ["Base model", "Method", "nDCG@5", "Compression", "Retention", "Status"]
    df, _ = table(client, "vdr", "nDCG@5", "All", "", ["colqwen2-v1.0"], ["merge"], cols, False)
    assert set(df["Base model"]) == {"colqwen2-v1.0"} and set(df["Method"]) == {"merge"}
    assert df["System"].tolist() == ["colqwen2-v1.0 (merge 50%)", "colqwen2-v1.0 (merge 75%)", "colqwen2-v1.0 (merge 90%)"]
    assert all(re.fullmatch(r"\d+\.\d%", r) for r in df["Retention"])

    df, out = table(client, "vdr", "Compression", "All", "", [], [], cols, False)
    assert out["label"] == "VDR compression: ranked by Compression"
    comp = [number(c) for c in df["Compression"]]
    assert comp == sorted(comp, reverse=True)

    df, _ = table(client, "vdr", "nDCG@5", "Dataset family: ViDoRe-V2", "", [], [], cols, False)
    # the family slice lists the runs that cover the whole family: not the demo run on ViDoRe-V1 only
    covering = {e.name for e in app.board.entries("vdr") if "ViDoRe-V2" in e.summary.breakdowns.get("family", {})}
    assert set(df["System"]) == covering and 0 < len(covering) < len(app.board.entries("vdr"))


# ---- CSV export ----------------------------------------------------------------------------------------
def test_export_csv_has_the_rows_of_the_view(client, app):
    path = client.predict("Recall@10", "All", "", ["text"], [], [], UNIDOC_COLUMNS, False, api_name="/export_csv_unidoc")
    assert Path(path).name == "unidoc-leaderboard.csv"
    csv = pd.read_csv(path)
    df, _ = table(client, "unidoc", "Recall@10", "All", "", ["text"], [], [], UNIDOC_COLUMNS, False)
    assert csv["name"].tolist() == df["System"].tolist()
    assert set(csv["paradigm"]) == {"text"}
    assert {"id", "name", "organization", "recall@10", "recall@10:low", "recall@10:high", "rank", "rank_ub", "status"} <= set(
        csv.columns
    )
    entries = {e.id: e for e in app.board.entries("unidoc")}
    for _, row in csv.iterrows():  # full precision, not the display rounding
        assert row["recall@10"] == pytest.approx(entries[row["id"]].summary.overall["recall@10"])

    path = client.predict("nDCG@5", "All", "", [], [], [], False, api_name="/export_csv_vdr")
    csv = pd.read_csv(path)
    assert len(csv) == len(app.board.entries("vdr")) and "retention" in csv.columns
    assert csv["ndcg@5"].is_monotonic_decreasing


# ---- compare --------------------------------------------------------------------------------------------
def test_compare_two_systems(client, app):
    ids = ids_by_name(app, "unidoc")
    a, b = ids["MM fusion: BGE-M3 + ColQwen2, RRF + GPT-4o"], ids["BM25 + Llama-3.1-8B (baseline)"]
    summary, metrics, plot, top, unit = client.predict("unidoc", a, b, api_name="/compare")
    assert "MM fusion" in summary and "BM25" in summary and "96 units" in summary
    m = frame(metrics)
    assert list(m.columns) == ["Metric", "A", "B", "A − B", "95% CI of A − B", "p", "Significant (95%)", "Shared units"]
    judged = " (judge: lexical-v1 (offline approximation, not an LLM judge))"  # judged rows say which judge
    assert m["Metric"].tolist() == ["Recall@10", "Precision@10", "Completeness" + judged, "Faithfulness" + judged]
    for _, row in m.iterrows():
        diff = float(row["A − B"])
        assert diff == pytest.approx(float(row["A"]) - float(row["B"]), abs=2e-3)
        low, high = map(float, row["95% CI of A − B"].strip("[]").split(", "))
        assert low <= diff <= high
        assert row["Significant (95%)"] == ("yes" if low > 0 or high < 0 else "no")
        assert row["Shared units"] == "96"
        # no replicate across 0: the p-value's bound (2 / resamples), and a CI clear of 0 beside it
        assert (row["p"] == "< 0.002" and (low > 0 or high < 0)) or 0 < float(row["p"]) <= 1
    assert "< 0.002" in m["p"].tolist()  # Precision@10 on the demo: no replicate crosses 0
    assert plot["type"] == "plotly" and json.loads(plot["plot"])["data"]  # per-category difference chart
    t = frame(top)
    assert {"Unit", "A", "B", "A − B", "question"} <= set(t.columns) and len(t) > 0
    diffs = [abs(float(d)) for d in t["A − B"]]
    assert diffs == sorted(diffs, reverse=True)
    assert unit["value"] == t["Unit"][0]


def test_compare_partial_coverage_uses_shared_units(client, app):
    ids = ids_by_name(app, "unidoc")
    partial = next(e for e in app.board.entries("unidoc") if "partial" in e.name)
    answered = partial.summary.extra["answered"]
    assert answered < partial.summary.n
    summary, metrics, *_ = client.predict("unidoc", partial.id, ids["BM25 + Llama-3.1-8B (baseline)"], api_name="/compare")
    assert f"over the {answered} units both answered" in summary
    m = frame(metrics)
    m = m.set_index(m["Metric"].str.split(" (", regex=False).str[0])
    assert m.loc["Completeness", "Shared units"] == str(answered)


def test_inputs_of_the_wrong_type_are_refused_saying_which_and_what_it_takes(client):
    """An API caller's null for a list or text for a number: a message naming the control and what it takes, as for
    a value that is not a choice (not Gradio's generic "raised an exception")."""
    view = dict(rank_by="nDCG@5", scores_on="All", search="", model=[], method=[], columns=["Method"])
    with pytest.raises(AppError, match=r"^Shown columns: None is not a list of choices$"):
        client.predict(**{**view, "columns": None}, api_name="/table_vdr")
    with pytest.raises(AppError, match=r"^Shown columns: 5 is not a list of choices$"):
        client.predict(**{**view, "columns": 5}, api_name="/export_csv_vdr")
    with pytest.raises(AppError, match=r"^Systems shown: 'many' is not a number$"):
        client.predict(**view, rows="many", api_name="/table_vdr")
    # the worst case quoted: a million values, the message still a line (reprlib cuts it while writing it)
    with pytest.raises(AppError, match=r"^Systems shown: \[0, 0, 0, 0, \.\.\.\] is not a number$"):
        client.predict(**view, rows=[0] * 1_000_000, api_name="/table_vdr")
    # Gradio's own refusal quotes the value whole: cut, so a megabyte sent is not a megabyte sent back
    with pytest.raises(AppError, match=r"^Value: 'x{100}") as refused:
        client.predict(**{**view, "columns": ["x" * 1_000_000]}, api_name="/table_vdr")
    assert len(str(refused.value)) < 4100 and str(refused.value).endswith(" … (cut)")
    assert client.predict(**view, rows=3, api_name="/table_vdr")["value"]["data"]  # the same view, well typed


def test_compare_refuses_bad_pairs(client, app):
    u = ids_by_name(app, "unidoc")["BM25 + Llama-3.1-8B (baseline)"]
    v = next(iter(ids_by_name(app, "vdr").values()))
    summary, metrics, *_ = client.predict("unidoc", u, v, api_name="/compare")
    assert "Pick two systems of the UniDoc-Bench track." in summary and not frame(metrics).size
    summary, *_ = client.predict("unidoc", u, u, api_name="/compare")
    assert "two different systems" in summary
    summary, *_ = client.predict("unidoc", u, "000000000000", api_name="/compare")
    assert "Unknown system" in summary
    # two systems of one track, asked for on another: refused as such, not compared on their own track
    other = ids_by_name(app, "unidoc")["ColPali pages + Qwen2.5-VL-7B"]
    summary, metrics, *_ = client.predict("vdr", u, other, api_name="/compare")
    assert "Pick two systems of the VDR compression track." in summary and not frame(metrics).size
    summary, metrics, *_ = client.predict("unidoc", u, other, api_name="/compare")  # on their own track: compared
    assert "A</b>" in summary and frame(metrics).size


def test_compare_vdr(client, app):
    ids = ids_by_name(app, "vdr")
    summary, metrics, plot, top, _ = client.predict(
        "vdr", ids["colqwen2-v1.0 (uncompressed)"], ids["colqwen2-v1.0 (merge 90%)"], api_name="/compare"
    )
    m = frame(metrics).set_index("Metric")
    assert float(m.loc["nDCG@5", "A − B"]) > 0
    assert len(frame(top)) > 0


# ---- detail and raw records ------------------------------------------------------------------------------
def test_detail_view(client, app):
    e = next(e for e in app.board.entries("unidoc") if e.name == "BM25 + Llama-3.1-8B (baseline)")
    html, breakdown, category, units = client.predict(e.id, api_name="/detail")
    assert "BM25 + Llama-3.1-8B (baseline)" in html and e.id in html
    assert 'href="https://example.org/' in html and 'rel="noopener noreferrer nofollow"' in html
    assert "96 units scored, 0 missing" in html
    bd = frame(breakdown)
    assert set(bd["Breakdown"]) == {"Domain", "Question type", "Answer type"} and len(bd) == 8 + 4 + 4
    finance = bd[(bd["Breakdown"] == "Domain") & (bd["Value"] == "finance")].iloc[0]
    assert float(finance["Recall@10"]) == pytest.approx(e.summary.breakdowns["domain"]["finance"]["recall@10"], abs=5e-4)
    u = frame(units)
    assert len(u) == 96 and {"Unit", "Recall@10", "Completeness", "domain", "question"} <= set(u.columns)
    choices = [c[1] if isinstance(c, (list, tuple)) else c for c in category["choices"]]
    # the categories to filter units by: the unit's domain, question type, answer type; no scores, no question text
    assert {"finance", "legal", "comparison", "table_required"} <= set(choices)
    assert not any(c[:1].isdigit() for c in choices) and not any("?" in c for c in choices)


def test_detail_of_unknown_system(client):
    html, *_ = client.predict("nope", api_name="/detail")
    assert "Pick a system" in html


def test_record_endpoint(client, app):
    e = next(e for e in app.board.entries("unidoc") if e.name == "BM25 + Llama-3.1-8B (baseline)")
    rec = json.loads(client.predict(e.id, "finance-0003", api_name="/record"))
    assert rec["id"] == "finance-0003" and "answer" in rec and rec["retrieved"]
    assert "no prediction" in client.predict(e.id, "finance-9999", api_name="/record")
    partial = next(x for x in app.board.entries("unidoc") if "partial" in x.name)
    v = next(x for x in app.board.entries("vdr") if x.summary.extra.get("datasets"))
    vunit = next(iter(app.board.records(v)))
    vrec = json.loads(client.predict(v.id, vunit, api_name="/record"))
    assert vrec and isinstance(vrec, dict)
    assert client.predict(partial.id, "", api_name="/record") == ""


# ---- submit (last: it adds a system to the board) ------------------------------------------------------------
def _stored_files(app) -> list[Path]:
    root = app.data_dir / "local" / "submissions"
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_submit_invalid_file_returns_every_error_and_stores_nothing(client, app, tmp_path):
    lines = [
        '{"track":"unidoc","system":{"name":"Broken","paradigm":"telepathy","link":"ftp://x"}}',
        '{"id":"finance-9999","retrieved":[{"doc":"1","pages":[1]}],"answer":"a"}',
        '{"id":"finance-0000","retrieved":"nope","answer":"a"}',
        '{"id":"finance-0001","retrieved":[{"doc":"1","pages":[1]}],"answer":"a"}',
        '{"id":"finance-0001","retrieved":[{"doc":"1","pages":[1]}],"answer":"a"}',
        '{"id":42}',
    ]
    bad = tmp_path / "broken.jsonl"
    bad.write_text("\n".join(lines))
    before_files, before_entries = _stored_files(app), len(app.board.entries())
    html = client.predict("unidoc", handle_file(str(bad)), "", "", "", "", "tester", api_name="/submit")
    assert 'class="submit-invalid"' in html and "nothing was uploaded" in html
    for needle in (
        "system.paradigm",
        "system.link",
        "unknown question id",
        "field retrieved",
        "repeated question id",
        "line 6, field id",
    ):
        assert needle in html, needle
    assert html.count("<li>") == 6
    assert _stored_files(app) == before_files and len(app.board.entries()) == before_entries

    # a file for another track than the one picked: refused too
    vdr_name, vdr_data = next((n, d) for n, d in demo.make_submissions("vdr", demo.DEMO_DIR / "gold" / "vdr", 1))
    other = tmp_path / vdr_name
    other.write_bytes(vdr_data)
    html = client.predict("unidoc", handle_file(str(other)), "", "", "", "", "tester", api_name="/submit")
    assert "another track" in html and _stored_files(app) == before_files

    text = tmp_path / "notes.txt"
    text.write_text("not a submission")
    with pytest.raises(AppError, match="Invalid file type"):  # the upload component refuses it before the handler
        client.predict("unidoc", handle_file(str(text)), "", "", "", "", "tester", api_name="/submit")
    assert _stored_files(app) == before_files


def test_submit_valid_file_appears_scored_then_duplicate(client, app, tmp_path):
    name, data = demo.make_submissions("unidoc", demo.DEMO_DIR / "gold" / "unidoc", 1, seed=7)[0]
    path = tmp_path / name
    path.write_bytes(data)
    html = client.predict(
        "unidoc",
        handle_file(str(path)),
        "API test system",
        "API Org",
        "https://example.org/api",
        "Submitted by the API test.",
        "tester",
        api_name="/submit",
    )
    assert 'class="submit-queued"' in html and "Scored: submission" in html
    new_id = re.search(r"Scored: submission <code>([0-9a-f]{12})</code>", html).group(1)
    stored = _stored_files(app)
    assert any(p.name.endswith(".json") and "/unidoc/tester/" in p.as_posix() for p in stored)

    df, _ = table(client, "unidoc", "Recall@10", "All", "API test system", [], [], [], UNIDOC_COLUMNS)
    assert df["System"].tolist() == ["API test system"]
    row = df.iloc[0]
    assert row["Status"].startswith("scored") and row["Organisation"] == "API Org" and row["Rank"].isdigit()
    assert number(row["Recall@10"]) is not None

    html_detail, *_ = client.predict(new_id, api_name="/detail")
    assert "API test system" in html_detail and "Submitted by the API test." in html_detail

    again = client.predict(
        "unidoc",
        handle_file(str(path)),
        "API test system",
        "API Org",
        "https://example.org/api",
        "Submitted by the API test.",
        "tester",
        api_name="/submit",
    )
    assert 'class="submit-duplicate"' in again and "already submitted" in again
    assert _stored_files(app) == stored


def test_table_has_results_and_judge_filters(client):
    """Futurepedia's task filter and unidoc's judged / judge filters (extra filters after the declared fields)."""
    fp_filters = [[] for _ in views.filter_fields(TRACKS["futurepedia"])]
    keys = [f.key for f in views.filter_fields(TRACKS["futurepedia"])]
    fp_filters[keys.index("has")] = ["Selection entropy"]
    df, _ = table(client, "futurepedia", "Selection entropy", "All", "", *fp_filters, ["Selection entropy"])
    everyone, _ = table(client, "futurepedia", "Monolingual", "All", "", *[[] for _ in keys], ["Selection entropy"])
    assert 0 < len(df) < len(everyone) and "–" not in set(df["Selection entropy"])  # only systems with the task

    df, _ = table(client, "unidoc", "Recall@10", "All", "", [], ["Completeness"], [], UNIDOC_COLUMNS)
    assert "Jina-CLIP v2 retrieval only" not in set(df["System"])  # not judged: no completeness
    df, _ = table(client, "unidoc", "Recall@10", "All", "", [], [], ["lexical-v1"], UNIDOC_COLUMNS)
    assert len(df) and all("≈" in c for c in df["Completeness"])  # every judged cell says which judge (approximation)


def test_refresh_endpoint_pulls_a_file_that_arrived_directly(client, app):
    """A file pushed into the store by a maintainer appears after a refresh (locally anyone may refresh)."""
    src = sorted((Path(__file__).resolve().parents[1] / "assets" / "demo" / "submissions" / "vdr").glob("*.jsonl"))[0]
    data = with_system(src.read_bytes(), src.name, {"name": "Pushed directly by a maintainer", "model": "maintainer-base-x"})
    place_submission(app.data_dir, "vdr", "maintainers", data, stamp="20260301T000000Z")
    before = len(app.board.entries("vdr"))
    html = client.predict(api_name="/refresh")
    assert "data as of" in html
    names = [e.name for e in app.board.entries("vdr")]
    assert len(names) == before + 1 and "Pushed directly by a maintainer" in names

    # Its base model is a filter value first seen after the start: the API takes it at once (no restart).
    cols = ["Base model", "Method", "nDCG@5", "Status"]
    df, _ = table(client, "vdr", "nDCG@5", "All", "", ["maintainer-base-x"], [], cols, False)
    assert df["System"].tolist() == ["Pushed directly by a maintainer"]
    csv = pd.read_csv(client.predict("nDCG@5", "All", "", ["maintainer-base-x"], [], cols, False, api_name="/export_csv_vdr"))
    assert csv["name"].tolist() == ["Pushed directly by a maintainer"]
    # A value no system has is refused, saying which control and what it takes.
    with pytest.raises(
        AppError, match=r"Base model: 'no-such-model' is not a choice on the board now \(.*'maintainer-base-x'.* and \d+ more\)"
    ):
        table(client, "vdr", "nDCG@5", "All", "", ["no-such-model"], [], cols, False)
    with pytest.raises(AppError, match=r"Scores on: 'Dataset: nope' is not a choice"):
        table(client, "vdr", "nDCG@5", "Dataset: nope", "", [], [], cols, False)
