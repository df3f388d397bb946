"""What the public endpoints must never do: reach a hidden submission, leak an internal error, hand a spreadsheet a
formula, push a huge record onto a page; and the parameter names API callers rely on.

One app for the module (gradio_client against the real server): the demo board plus a submission whose text
starts like spreadsheet formulas and carries a 30,000-character answer, and one the maintainers hid.
"""

from __future__ import annotations

import csv
import json
import logging
import re
from pathlib import Path

import pandas as pd
import pytest
from gradio_client import Client
from gradio_client.exceptions import AppError

from leaderboard.ui import layout, views

from appserver import place_submission, running_app

DEMO = Path(__file__).resolve().parents[1] / "assets" / "demo" / "submissions" / "unidoc"
FORMULA_NAME = '=HYPERLINK("http://evil.example","click")'
LONG_ANSWER = "evidence " * 3_334  # 30,006 characters: within the spec's 32,768 limit, over the page's 20,000


def _records(name: str) -> list[dict]:
    return [json.loads(line) for line in (DEMO / name).read_text().splitlines()[1:]]


def _jsonl(system: dict, records: list[dict]) -> bytes:
    return "".join(json.dumps(x) + "\n" for x in [{"track": "unidoc", "system": system}, *records]).encode()


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("board")
    records = _records("gme-7b-gpt-4o-mini.jsonl")[:40]
    records[0] = {**records[0], "answer": LONG_ANSWER}
    place_submission(
        data_dir,
        "unidoc",
        "eve",
        _jsonl({"name": FORMULA_NAME, "organization": "@SUM(1+1)", "retriever": "-2+3", "paradigm": "text"}, records),
    )
    hidden = place_submission(
        data_dir,
        "unidoc",
        "mallory",
        _jsonl({"name": "Hidden system", "paradigm": "text"}, _records("jina-clip-v2-retrieval.jsonl")[10:60]),
    )
    flags = {hidden.relative_to(data_dir / "local").as_posix(): {"status": "hidden", "reason": "test"}}
    (data_dir / "local" / "flags.json").write_text(json.dumps(flags))
    with running_app(data_dir) as running:
        yield running


@pytest.fixture(scope="module")
def client(app):
    return Client(app.url, verbose=False, download_files=str(app.data_dir / "downloads"))


def entry(app, name: str):
    return next(e for e in app.board.entries("unidoc") if e.name == name)


def test_hidden_submission_is_reachable_from_no_endpoint(app, client):
    hidden, shown = entry(app, "Hidden system"), entry(app, "Jina-CLIP v2 retrieval only")
    assert hidden.hidden and hidden.status == "scored"  # on the board's books, scored, and hidden
    unit = next(iter(app.board.records(hidden)))

    html, *_ = client.predict(hidden.id, api_name="/detail")
    assert "Hidden system" not in html and "Pick a system" in html
    assert "Jina-CLIP v2 retrieval only" in client.predict(shown.id, api_name="/detail")[0]  # a visible one opens

    assert client.predict(hidden.id, unit, api_name="/record") == ""
    assert client.predict(shown.id, unit, api_name="/record").startswith("{")

    summary, *_ = client.predict("unidoc", hidden.id, shown.id, api_name="/compare")
    assert "Unknown system" in summary and "Hidden system" not in summary
    summary, *_ = client.predict("unidoc", shown.id, hidden.id, api_name="/compare")
    assert "Unknown system" in summary
    assert "Hidden system" not in json.dumps(client.predict("Recall@10", "All", "", [], [], [], ["Id"], api_name="/table_unidoc"))


def test_internal_failure_shows_a_reference_never_the_exception(app, client, monkeypatch, caplog):
    caplog.set_level(logging.ERROR, logger="leaderboard")
    a, b = entry(app, "Jina-CLIP v2 retrieval only"), entry(app, FORMULA_NAME)
    secret_path = str(Path(layout.__file__).resolve())

    def broken(*args, **kwargs):
        raise RuntimeError(f"cache file {secret_path} is corrupt")

    monkeypatch.setattr(app.board, "compare", broken)
    with pytest.raises(AppError) as err:
        client.predict("unidoc", a.id, b.id, api_name="/compare")
    shown = str(err.value)
    ref = re.search(r"Something went wrong \(ref ([0-9a-f]{6})\); the maintainers can find it in the logs", shown)
    assert ref, shown
    for leak in (secret_path, "/work", "RuntimeError", "Traceback", "corrupt"):
        assert leak not in shown
    logged = [r for r in caplog.records if ref.group(1) in r.getMessage()]
    assert logged and logged[0].exc_info and "is corrupt" in str(logged[0].exc_info[1])  # the log has the whole story


def test_csv_export_neutralises_formula_cells(app, client):
    path = client.predict("Recall@10", "All", "", [], [], [], [], api_name="/export_csv_unidoc")
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    row = next(r for r in rows if FORMULA_NAME in r["name"])
    assert row["name"] == "'" + FORMULA_NAME and row["organization"] == "'@SUM(1+1)" and row["retriever"] == "'-2+3"
    for r in rows:  # no cell of any row starts a formula; numbers stay numbers
        assert not any(v.startswith(("=", "+", "@", "\t", "\r")) for v in r.values())
        assert not any(v.startswith("-") and not re.fullmatch(r"-\d+(\.\d+)?(e-?\d+)?", v) for v in r.values())
    assert float(row["recall@10"]) >= 0


def test_csv_cells_keep_genuine_numbers():
    frame = pd.DataFrame(
        {
            "name": ["=1+2", "+cmd", "-2+3", "@x", "\tt", "\rr", "-0.25", "+3", "1e-3", "plain", None],
            "diff": [-0.5, 1.0, -2.0, 0.0, 3.0, -1e-3, 2.0, 1.0, 0.0, -7.25, 1.5],
        }
    )
    out = views.csv_safe(frame)
    assert out["name"].tolist()[:6] == ["'=1+2", "'+cmd", "'-2+3", "'@x", "'\tt", "'\rr"]
    assert out["name"].tolist()[6:10] == ["-0.25", "+3", "1e-3", "plain"] and pd.isna(out["name"].iloc[10])
    assert out["diff"].tolist() == frame["diff"].tolist() and out["diff"].dtype.kind == "f"  # numeric, untouched
    assert frame["name"].iloc[0] == "=1+2"  # the board's own frame is not changed


def test_long_record_is_cut_on_the_page_and_downloadable_whole(app, client):
    e = entry(app, FORMULA_NAME)
    unit = next(u for u, r in app.board.records(e).items() if r.get("answer") == LONG_ANSWER)
    shown = client.predict(e.id, unit, api_name="/record")
    assert shown.startswith("{") and len(shown) < views.RECORD_SHOWN_CHARS + 200
    full = json.dumps(app.board.records(e)[unit], ensure_ascii=False, indent=2)
    assert shown.endswith(f"the first 20,000 of {len(full):,} characters are shown; download the record for the full text")
    update = layout.record_download(app.board, e.id, unit)
    assert update["visible"] is True and Path(update["value"]).read_text(encoding="utf-8") == full
    assert json.loads(Path(update["value"]).read_text(encoding="utf-8"))["answer"] == LONG_ANSWER
    short_unit = next(u for u in app.board.records(e) if u != unit)
    assert "cut:" not in client.predict(e.id, short_unit, api_name="/record")
    assert layout.record_download(app.board, entry(app, "Hidden system").id, unit)["visible"] is False


def test_api_endpoints_and_parameter_names_are_stable(app):
    api = Client(app.url, verbose=False).view_api(return_format="dict", print_info=False)["named_endpoints"]
    # Names are kept; a parameter is only ever added at the end (protocol: the Scores choice, board by default).
    names = {endpoint: [p["parameter_name"] for p in spec["parameters"]] for endpoint, spec in api.items()}
    assert names == {
        "/submit": ["track_name", "path", "sys_name", "organisation", "url", "desc", "user_name"],
        "/table_unidoc": [
            "rank_by",
            "scores_on",
            "search",
            "paradigm",
            "has_results_for",
            "judge",
            "columns",
            "show_reported",
            "rows",
            "protocol",
        ],
        "/export_csv_unidoc": [
            "rank_by",
            "scores_on",
            "search",
            "paradigm",
            "has_results_for",
            "judge",
            "columns",
            "show_reported",
            "protocol",
        ],
        "/table_futurepedia": [
            "rank_by",
            "scores_on",
            "search",
            "generator",
            "has_results_for",
            "columns",
            "show_reported",
            "rows",
            "protocol",
        ],
        "/export_csv_futurepedia": [
            "rank_by",
            "scores_on",
            "search",
            "generator",
            "has_results_for",
            "columns",
            "show_reported",
            "protocol",
        ],
        "/table_vdr": ["rank_by", "scores_on", "search", "model", "method", "columns", "show_reported", "rows", "protocol"],
        "/export_csv_vdr": ["rank_by", "scores_on", "search", "model", "method", "columns", "show_reported", "protocol"],
        "/compare": ["track", "system_a", "system_b"],
        "/detail": ["entry_id"],
        "/record": ["entry_id", "unit_id"],
        "/refresh": [],
    }


def test_api_accepts_the_parameters_by_name(app):
    client = Client(app.url, verbose=False, download_files=str(app.data_dir / "downloads"))
    out = client.predict(
        rank_by="Recall@10",
        scores_on="All",
        search="jina",
        paradigm=[],
        has_results_for=[],
        judge=[],
        columns=["Id"],
        api_name="/table_unidoc",
    )
    value = out.get("value", out) if "__type__" in out else out
    assert [row[value["headers"].index("System")] for row in value["data"]] == ["Jina-CLIP v2 retrieval only"]
