"""`convert unidoc` / `convert futurepedia` on files shaped like the benchmarks' own outputs.

UniDoc-Bench's `src/baselines/*.py` write one JSON object of columns per domain (`question`, `baseline`,
`retrieved_metadata`, plus `contexts`, `retrieved_contexts`, `chunk_used`, ...; no question ids), its scorer also
reads the same rows one per line; NALE's `eval/eval_*.py` write one JSONL file per task and language. The files
here are built from the real gold in ../shared/benchmarks/ (skipped without it) or the bundled demo gold.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from leaderboard import cli, convert, demo
from leaderboard.scoring import check, score_bytes
from leaderboard.tracks import TRACKS
from leaderboard.tracks.futurepedia import LANGS

NAME_KINDS = (
    "text chunk `<doc>_id_<k>_pg<a>[_pg<b>].txt`, page image `<doc>_<page>.jpg|png` or `<doc>_page_<n>.png`, "
    "figure `<doc>/figure-<page>-<n>.jpg`, table `<doc>/table-<page>-<n>.jpg`"
)

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "benchmarks"
DEMO_GOLD = demo.DEMO_DIR / "gold"
SYSTEM = {"name": "baseline run", "paradigm": "mm-fusion"}


def unidoc_gold_dir(which: str) -> Path:
    if which == "demo":
        return DEMO_GOLD / "unidoc"
    if not (REAL / "unidoc").is_dir():
        pytest.skip("the real UniDoc-Bench gold is not in ../shared/benchmarks/unidoc (a user's checkout)")
    return REAL / "unidoc"


@pytest.fixture(params=["real", "demo"])
def unidoc(request):
    path = unidoc_gold_dir(request.param)
    return path, TRACKS["unidoc"].load_gold(path)


def columns(rows: list[dict]) -> dict[str, list]:
    """The baselines' layout: one object of columns, as `json.dump(defaultdict(list))` writes it."""
    out: dict[str, list] = defaultdict(list)
    for row in rows:
        for key, value in row.items():
            out[key].append(value)
    return dict(out)


def baseline_row(q, metadata, answer="an answer") -> dict:
    """A row with every column the scripts write; the contexts make each row large, as real ones are."""
    return {
        "question": q.question,
        "gt": q.answer,
        "baseline": answer,
        "question_type": q.question_type,
        "answer_type": q.answer_type,
        "contexts": ["x" * 20_000, "y" * 20_000],
        "retrieved_contexts": ["chunk text " * 1_000] * 3,
        "retrieved_metadata": metadata,
        "chunk_used": {"chunk_0": {"used": True, "metadata": {"source": "whatever"}}},
        "cost": [0.01, 1.5],
    }


def oracle_metadata(q, i: int):
    """The question's gold pages, named in each of the shapes the baselines write, by turns:
    0 page images `<doc>_<page>.jpg` under a folder; 1 `<doc>_page_<n>.png`; 2 a fusion pair [llama-index
    metadata dicts of text chunks (or page images), page images]; 3 the gold's own source paths."""
    pages = sorted(q.pages)
    images = [f"/data/{q.domain}_images/{d}_{p}.jpg" for d, p in pages]
    kind = i % 4
    if kind == 0:
        return images
    if kind == 1:
        return [f"{d}/{d}_page_{p:04d}.png" for d, p in pages]
    if kind == 2:
        half = len(images) // 2
        texts = [{"file_name": Path(n).name, "file_path": n, "file_type": "text/plain"} for n in images[:half]]
        return [texts, images[half:]]
    return list(q.used_sources)


def names_of(metadata) -> list[str]:
    flat = metadata[0] + metadata[1] if len(metadata) == 2 and all(isinstance(m, list) for m in metadata) else metadata
    return [m["file_name"] if isinstance(m, dict) else m for m in flat]


def matchable(gold) -> list:
    """The gold questions a baseline row can name: those whose text no other question shares (the demo gold
    asks a few twice; such rows are refused, see test_unmatched_and_ambiguous_questions_are_listed_never_guessed)."""
    texts = defaultdict(int)
    for q in gold.questions:
        texts[" ".join(q.question.split())] += 1
    return [q for q in gold.questions if texts[" ".join(q.question.split())] == 1]


def expected_means(gold, per_question: dict[str, float]) -> float:
    """The headline: mean of the domain means, every gold question counted (absent ones 0)."""
    by_domain = defaultdict(list)
    for q in gold.questions:
        by_domain[q.domain].append(per_question.get(q.qid, 0.0))
    return float(np.mean([np.mean(v) for v in by_domain.values()]))


def test_an_oracle_of_the_gold_evidence_in_the_baselines_shapes_scores_recall_1(tmp_path, unidoc):
    gold_dir, gold = unidoc
    files, precision, recall = [], {}, {}
    for domain in sorted({q.domain for q in gold.questions}):
        rows = []
        for i, q in enumerate(x for x in matchable(gold) if x.domain == domain):
            recall[q.qid] = 1.0
            meta = oracle_metadata(q, i)
            rows.append(baseline_row(q, meta))
            top = names_of(meta)[:10]
            # every name is a gold page; a figure path and another of the same page are two candidates
            precision[q.qid] = len(set(n if "/figure-" in n or "/table-" in n else Path(n).name for n in top)) / 10
        path = tmp_path / f"{domain}_paper_sim10.json"
        path.write_text(json.dumps(columns(rows)))
        files.append(path)
    assert max(f.stat().st_size for f in files) > 64 * 1024  # one line far past the JSONL line cap
    data = convert.convert("unidoc", files, SYSTEM, gold=gold)
    checked = check(data, "converted.jsonl", {"unidoc": gold_dir})
    assert checked.ok, checked.errors[:5]
    summary = score_bytes(data, "converted.jsonl", {"unidoc": gold_dir}).summary
    assert summary.status == "scored" and summary.missing == len(gold.questions) - len(recall)
    assert summary.overall["recall@10"] == pytest.approx(expected_means(gold, recall))
    if summary.missing == 0:  # the real gold: every question named, every gold page covered
        assert summary.overall["recall@10"] == pytest.approx(1.0)
    assert summary.overall["precision@10"] == pytest.approx(expected_means(gold, precision))
    records = [json.loads(line) for line in data.splitlines()[1:]]
    assert all(r["answer"] == "an answer" and r["question"] for r in records)
    assert all(
        c["id"] and "/" not in c["id"].replace("/figure-", "").replace("/table-", "") for r in records for c in r["retrieved"]
    )


def test_the_jsonl_variant_with_large_lines_converts_like_the_columns(tmp_path, unidoc):
    gold_dir, gold = unidoc
    rows = [baseline_row(q, oracle_metadata(q, i)) for i, q in enumerate(matchable(gold))]
    lines = tmp_path / "healthcare_paper_sim10.json"  # the scorer reads JSONL under a .json name too
    lines.write_text("".join(json.dumps(r) + "\n" for r in rows))
    table = tmp_path / "all.json"
    table.write_text(json.dumps(columns(rows)))
    jsonl = tmp_path / "all.jsonl"
    jsonl.write_text(lines.read_text())
    assert min(len(line) for line in lines.read_text().splitlines()) > 64 * 1024
    converted = [convert.convert("unidoc", [p], SYSTEM, gold=gold) for p in (lines, table, jsonl)]
    assert converted[0] == converted[1] == converted[2]


def test_two_chunks_of_one_page_count_twice_and_a_repeated_path_once(tmp_path, unidoc):
    gold_dir, gold = unidoc
    rows, recall = [], {}
    for q in matchable(gold):
        doc, page = min(q.pages)
        names = [f"/a/{doc}_id_1_pg{page}.txt", f"/a/{doc}_id_2_pg{page}.txt", f"/elsewhere/{doc}_id_1_pg{page}.txt"]
        rows.append(baseline_row(q, names))
        recall[q.qid] = 1 / len(q.pages)
    run = tmp_path / "run.json"
    run.write_text(json.dumps(columns(rows)))
    data = convert.convert("unidoc", [run], SYSTEM, gold=gold)
    first = json.loads(data.splitlines()[1])
    assert [c["id"] for c in first["retrieved"]] == [Path(n).name for n in names_of(rows[0]["retrieved_metadata"])]
    checked = check(data, "c.jsonl", {"unidoc": gold_dir})
    assert checked.ok and any("repeated candidate" in w for w in checked.warnings)
    summary = score_bytes(data, "c.jsonl", {"unidoc": gold_dir}).summary
    precision = {q: 0.2 for q in recall}  # two distinct chunks hit, the copy misses
    assert summary.overall["precision@10"] == pytest.approx(expected_means(gold, precision))
    assert summary.overall["recall@10"] == pytest.approx(expected_means(gold, recall))


def copy_gold_with_a_twin(tmp_path) -> Path:
    """The demo gold with its first finance question also asked in legal (two gold questions, one text)."""
    root = tmp_path / "gold"
    shutil.copytree(DEMO_GOLD / "unidoc", root)
    finance = json.loads((root / "finance.json").read_text())
    legal = json.loads((root / "legal.json").read_text())
    legal.append(finance[0])
    (root / "legal.json").write_text(json.dumps(legal))
    return root


def test_unmatched_and_ambiguous_questions_are_listed_never_guessed(tmp_path):
    gold_dir = copy_gold_with_a_twin(tmp_path)
    gold = TRACKS["unidoc"].load_gold(gold_dir)
    twin = next(q for q in gold.questions if q.domain == "finance")
    other = next(q for q in gold.questions if q.domain == "crm")
    respaced = baseline_row(other, [f"{d}_{p}.jpg" for d, p in other.pages])
    respaced["question"] = "  " + other.question.replace(" ", " \n\t ") + " "  # whitespace runs differ: a match
    rows = [
        baseline_row(twin, ["1_1.jpg"]),
        baseline_row(other, ["1_1.jpg"]) | {"question": "What is not in the gold?"},
        respaced,
        baseline_row(other, ["notes.pdf", ["a"]]),
    ]
    run = tmp_path / "crm.json"
    run.write_text(json.dumps(columns(rows)))
    with pytest.raises(convert.ConvertError) as err:
        convert.convert("unidoc", [run], SYSTEM, gold=gold)
    text = " ".join(twin.question.split())[:80]
    ids = sorted(q.qid for q in gold.questions if q.question == twin.question)
    assert err.value.problems == [
        f"crm.json row 0: question {text!r} matches 2 gold questions ({', '.join(ids)}): not guessed",
        "crm.json row 1: question 'What is not in the gold?' is not a question of the gold (matched by text, "
        "whitespace collapsed)",
        "crm.json row 3: retrieved_metadata[1]: expected a file name or an object with a file_name or file_path, got list",
        "crm.json row 3: retrieved_metadata[0]: 'notes.pdf' is not a UniDoc-Bench candidate name (text chunk "
        "`<doc>_id_<k>_pg<a>[_pg<b>].txt`, page image `<doc>_<page>.jpg|png` or `<doc>_page_<n>.png`, figure "
        "`<doc>/figure-<page>-<n>.jpg`, table `<doc>/table-<page>-<n>.jpg`)",
        f"crm.json row 3: the same gold question ({other.qid}) as crm.json row 2",
    ]


def test_every_candidate_name_kind_is_read_with_its_name_as_id(tmp_path):
    names = {
        "/x/final_database/finance/0123_id_7_pg5_pg6.txt": ("0123", [5, 6], "text", "0123_id_7_pg5_pg6.txt"),
        "0123_id_8_pg5.txt": ("0123", [5], "text", "0123_id_8_pg5.txt"),
        "/img/0123_5.jpg": ("0123", [5], "image", "0123_5.jpg"),
        "0123_12.png": ("0123", [12], "image", "0123_12.png"),
        "/p/0123/0123_page_0005.png": ("0123", [5], "image", "0123_page_0005.png"),
        "/f/finance_figures/0123/figure-5-2.jpg": ("0123", [5], "image", "0123/figure-5-2.jpg"),
        "0123/table-6-1.jpg": ("0123", [6], "table", "0123/table-6-1.jpg"),
    }
    run = tmp_path / "answers.jsonl"
    run.write_text(json.dumps({"id": "finance-0000", "retrieved": list(names), "answer": "a"}) + "\n")
    record = json.loads(convert.convert("unidoc", [run], SYSTEM).splitlines()[1])
    assert [(c["doc"], c["pages"], c["modality"], c["id"]) for c in record["retrieved"]] == list(names.values())
    run.write_text(json.dumps({"id": "finance-0000", "retrieved": ["0123_0.jpg", "0123_id_1_pg9_pg3.txt"]}) + "\n")
    with pytest.raises(convert.ConvertError) as err:
        convert.convert("unidoc", [run], SYSTEM)
    assert err.value.problems == [
        "answers.jsonl line 1: retrieved[0]: '0123_0.jpg': page 0, but pages are numbered from 1",
        "answers.jsonl line 1: retrieved[1]: page range 9-3 is not one of a document: 0123_id_1_pg9_pg3.txt",
    ]


def test_limits_name_themselves_and_the_option_that_raises_them(tmp_path, monkeypatch, capsys):
    gold = TRACKS["unidoc"].load_gold(DEMO_GOLD / "unidoc")
    rows = [baseline_row(q, [f"{d}_{p}.jpg" for d, p in q.pages]) for q in gold.questions[:3]]
    table = tmp_path / "finance.json"
    table.write_text(json.dumps(columns(rows)))
    lines = tmp_path / "finance.jsonl"
    lines.write_text("".join(json.dumps(r) + "\n" for r in rows))
    size = table.stat().st_size
    with pytest.raises(convert.ConvertError) as err:
        convert.convert("unidoc", [table], SYSTEM, gold=gold, caps=convert.Caps(max_bytes=size - 1))
    assert err.value.problems == [
        f"finance.json: larger than {size - 1:,} bytes, the limit per input file (--max-bytes raises it)"
    ]
    with pytest.raises(convert.ConvertError) as err:
        convert.convert("unidoc", [lines], SYSTEM, gold=gold, caps=convert.Caps(max_line_bytes=1000))
    assert err.value.problems == [
        "finance.jsonl line 1: longer than 1,000 bytes, the limit per line (--max-line-bytes raises it)"
    ]
    out = tmp_path / "o.jsonl"
    args = ["convert", "unidoc", str(table), "--gold", str(DEMO_GOLD / "unidoc"), "--name", "x", "--out", str(out)]
    with pytest.raises(SystemExit) as exit_:
        cli.main([*args, "--max-bytes", "100"])
    assert (exit_.value.code, capsys.readouterr().err.splitlines()) == (
        1,
        ["finance.json: larger than 100 bytes, the limit per input file (--max-bytes raises it)"],
    )
    cli.main([*args, "--field", "paradigm=text"])
    assert "written" in capsys.readouterr().out and check(out.read_bytes(), out.name, {"unidoc": DEMO_GOLD / "unidoc"}).ok
    broken = tmp_path / "broken.json"
    broken.write_text('{"question": ["a",\n "b",, "c"]}')
    with pytest.raises(convert.ConvertError) as err:
        convert.convert("unidoc", [broken], SYSTEM, gold=gold)
    assert err.value.problems == ["broken.json line 2 column 6: not valid JSON (JSON is malformed: invalid character)"]


def test_a_baseline_without_the_gold_says_what_it_needs(tmp_path):
    gold = TRACKS["unidoc"].load_gold(DEMO_GOLD / "unidoc")
    run = tmp_path / "finance.json"
    run.write_text(json.dumps(columns([baseline_row(gold.questions[0], ["1_1.jpg"])])))

    def unreadable():
        raise ValueError("the gold cannot be read (no such folder)")

    with pytest.raises(convert.ConvertError) as err:
        convert.convert("unidoc", [run], SYSTEM, gold=unreadable)
    assert err.value.problems == [
        "1 baseline rows are matched to the gold by their question: the gold cannot be read (no such folder)"
    ]


def test_a_run_on_another_gold_is_said_once_not_per_row(tmp_path, unidoc):
    """Every question of the demo run is unknown to the real gold (and the other way round): one line says
    so, naming the gold read; a bad name is still listed with its row."""
    gold_dir, gold = unidoc
    other_dir = DEMO_GOLD / "unidoc" if gold_dir != DEMO_GOLD / "unidoc" else REAL / "unidoc"
    if not other_dir.is_dir():
        pytest.skip("the real UniDoc-Bench gold is not in ../shared/benchmarks/unidoc (a user's checkout)")
    other = TRACKS["unidoc"].load_gold(other_dir)
    rows = [baseline_row(q, ["1_1.jpg"]) for q in other.questions[:50]] + [baseline_row(other.questions[50], ["x.pdf"])]
    run = tmp_path / "finance.json"
    run.write_text(json.dumps(columns(rows)))
    with pytest.raises(convert.ConvertError) as err:
        convert.convert("unidoc", [run], SYSTEM, gold=gold)
    assert err.value.problems[0] == (
        f"none of the 51 baseline rows has a question of the gold read ({gold.source}): is it the gold the run "
        "was made on? (--gold names it)"
    )
    assert err.value.problems[1:] == [
        f"finance.json row 50: retrieved_metadata[0]: 'x.pdf' is not a UniDoc-Bench candidate name ({NAME_KINDS})"
    ]


# ---- futurepedia: NALE's prediction files ------------------------------------------------------------


@pytest.fixture(params=["real", "demo"])
def futurepedia(request):
    if request.param == "demo":
        path = DEMO_GOLD / "futurepedia"
    elif (REAL / "futurepedia" / "mul_ans_all.json").is_file():
        path = REAL / "futurepedia" / "mul_ans_all.json"
    else:
        pytest.skip("the real Futurepedia gold is not in ../shared/benchmarks/futurepedia (a user's checkout)")
    return path, TRACKS["futurepedia"].load_gold(path)


def nale_line(rid: int, prediction: str, **fields) -> str:
    return json.dumps(
        {"id": rid, "query": "q?", "prediction": prediction, "docs": ["d" * 3000] * 5, **fields}, ensure_ascii=False
    )


def test_nale_prediction_files_score_like_the_board_submission(tmp_path, futurepedia):
    gold_dir, gold = futurepedia
    rng = np.random.default_rng(3)
    board, files = [], []

    def answer(record, lang: str, i: int) -> str:  # the answer itself, a sentence around it, or nothing
        options = [", ".join(record.ori[lang]), f"I think it is {', '.join(record.ori[lang])}.", "insufficient information"]
        return options[(i + int(rng.integers(3))) % 3]

    for lang in ("fr", "ko"):
        lines = []
        for i, r in enumerate(gold.records):
            pred = answer(r, lang, i)
            lines.append(nale_line(r.id, pred, ans=", ".join(r.ori[lang]), ngram_labels=[0.5], noise_rate=0.0))
            board.append({"task": "monolingual", "id": r.id, "query_lang": lang, "prediction": pred})
        path = tmp_path / f"prediction_n_mono_{lang}._m3contriever_{lang}_gpt-4o-mini_noise0.0_chunk5.json"
        path.write_text("\n".join(lines) + "\n")
        files.append(path)
    lines = []
    for i, r in enumerate(gold.records[::2]):
        pred = answer(r, "zh", i)
        lines.append(nale_line(r.id, pred, ans={"fr": r.ori["fr"], "zh": r.ori["zh"]}, ngram=[1.0], code_switch_ngram=[1.0]))
        board.append({"task": "crosslingual", "id": r.id, "query_lang": "fr", "doc_lang": "zh", "prediction": pred})
    cross = tmp_path / "prediction_n_cross._bm25_qlfr_dlzh_Qwen2.5-7B_noise0.0_chunk5.json"
    cross.write_text("\n".join(lines) + "\n")
    lines = []
    for i, r in enumerate(gold.records):
        pred = answer(r, "en", i)
        lines.append(nale_line(i, pred, ans={"en": {"en": "x"}}, lang_ngram={"en": [0.0]}))
        board.append({"task": "selection", "id": r.id, "query_lang": "en", "doc_langs": list(LANGS), "prediction": pred})
    multi = tmp_path / "prediction_n_mul_ans_qlen_multi_conflict_aya-expanse-8b_noise0.0_chunk5.json"
    multi.write_text("\n".join(lines) + "\n")
    data = convert.convert("futurepedia", [*files, cross, multi], {"name": "nale run"})
    expected = json.dumps({"track": "futurepedia", "system": {"name": "nale run"}, "predictions": board}).encode()
    got = score_bytes(data, "c.jsonl", {"futurepedia": gold_dir}).summary
    want = score_bytes(expected, "b.json", {"futurepedia": gold_dir}).summary
    assert got.status == want.status == "scored"
    assert got.overall == want.overall and got.breakdowns == want.breakdowns
    assert {"monolingual", "crosslingual_strict", "selection_entropy"} <= set(got.overall)


def test_nale_files_without_a_readable_name_need_language_and_task(tmp_path, futurepedia):
    gold_dir, gold = futurepedia
    r = gold.records[0]
    run = tmp_path / "my_predictions.json"
    run.write_text(nale_line(r.id, "x", ans={"ja": "a", "ar": "b"}, ngram=[0.0], code_switch_ngram=[0.0]) + "\n")
    with pytest.raises(convert.ConvertError) as err:
        convert.convert("futurepedia", [run], {"name": "x"})
    assert err.value.problems == [
        "my_predictions.json: the file name does not say its language (NALE names it ..._<lang>_... or "
        "..._ql<q>_dl<d>_...): give --language"
    ]
    with pytest.raises(convert.ConvertError) as err:
        convert.convert("futurepedia", [run], {"name": "x"}, languages=["fr-zh"])
    assert err.value.problems == [
        "my_predictions.json line 1: ans holds the languages ja, ar, not fr and zh: is the file misnamed?"
    ]
    record = json.loads(convert.convert("futurepedia", [run], {"name": "x"}, languages=["ja-ar"]).splitlines()[1])
    assert record == {"task": "crosslingual", "id": r.id, "query_lang": "ja", "doc_lang": "ar", "prediction": "x"}
    same = json.loads(convert.convert("futurepedia", [run], {"name": "x"}, languages=["ja"], task="monolingual").splitlines()[1])
    assert same == {"task": "monolingual", "id": r.id, "query_lang": "ja", "prediction": "x"}
