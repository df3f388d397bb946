"""`python -m leaderboard convert`: TREC runs, MTEB/BEIR JSON and UniDoc JSONL become submissions that score as the runs do."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from leaderboard import cli, convert, demo
from leaderboard.scoring import check, score_bytes
from leaderboard.tracks import TRACKS
from leaderboard.tracks.unidoc_runs import NAME_KINDS

VDR_GOLD = demo.DEMO_DIR / "gold" / "vdr"
UNIDOC_GOLD = demo.DEMO_DIR / "gold" / "unidoc"


def qrels() -> dict[str, dict[str, dict[str, int]]]:
    gold = TRACKS["vdr"].load_gold(VDR_GOLD)
    return {ds: {q: {d: int(g) for d, g in docs.items()} for q, docs in queries.items()} for ds, queries in gold.qrels.items()}


def random_run(queries: dict, rng: random.Random, skip: float = 0.1) -> dict[str, dict[str, float]]:
    """Some relevant docs and some others per query, a tenth of the queries left out, ties on purpose."""
    docs = sorted({d for rel in queries.values() for d in rel}) + [f"x{i}" for i in range(30)]
    run = {}
    for q, rel in queries.items():
        if rng.random() < skip:
            continue
        picked = rng.sample(docs, 12) + [d for d in rel if rng.random() < 0.5]
        run[q] = {d: float(rng.choice([1, 2, 2, 3, 4.5, 7])) for d in dict.fromkeys(picked)}
    return run


def write_trec(path: Path, run: dict) -> None:
    lines = []
    for q, docs in run.items():
        for rank, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1]), start=1):
            lines.append(f"{q} Q0 {d} {rank} {s} myrun")
    rng = random.Random(1)
    rng.shuffle(lines)  # file order carries no meaning: the score does
    path.write_text("\n".join(lines) + "\n")


def storage(datasets) -> dict:
    return {"storage": {ds: {"vectors": 100, "vectors_uncompressed": 400} for ds in datasets}}


def expected_ndcg(gold: dict, run: dict) -> float:
    """pytrec_eval's nDCG@5 averaged over the dataset's gold queries with a relevant doc (a query not run scores 0)."""
    judged = {q: rel for q, rel in gold.items() if any(g > 0 for g in rel.values())}
    per_query = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.5"}).evaluate({q: run[q] for q in run if q in judged})
    return float(np.mean([per_query.get(q, {}).get("ndcg_cut_5", 0.0) for q in judged]))


@pytest.mark.parametrize("fmt", ["trec", "beir"])
def test_a_run_round_trips_to_the_pytrec_eval_score(tmp_path, fmt):
    gold = qrels()
    rng = random.Random(7)
    datasets = sorted(gold)  # every dataset: the overall number is then their plain mean under any reading
    files, runs = [], {}
    for ds in datasets:
        runs[ds] = random_run(gold[ds], rng)
        path = tmp_path / (ds.replace("/", "__") + (".trec" if fmt == "trec" else ".json"))
        write_trec(path, runs[ds]) if fmt == "trec" else path.write_text(json.dumps(runs[ds]))
        files.append(path)
    system = {"name": "converted", "model": "m", "method": "none", **storage(datasets)}
    data = convert.convert("vdr", files, system)
    summary = score_bytes(data, "converted.jsonl", {}).summary
    assert summary.status == "scored"
    for ds in datasets:
        assert summary.breakdowns["dataset"][ds]["ndcg@5"] == pytest.approx(expected_ndcg(gold[ds], runs[ds]), abs=1e-9)
    every = [expected_ndcg(gold[ds], runs[ds]) for ds in datasets]
    assert summary.overall["ndcg@5"] == pytest.approx(np.mean(every), abs=1e-9)


def test_the_cli_writes_a_checked_submission_with_datasets_named_by_flag(tmp_path, capsys):
    gold = qrels()
    ds = sorted(gold)[0]
    run_file = tmp_path / "whatever.run"
    write_trec(run_file, random_run(gold[ds], random.Random(3), skip=0))
    out = tmp_path / "sub.json.gz"
    system = json.dumps({"model": "m", "method": "prune", **storage([ds])})
    cli.main(["convert", "vdr", str(run_file), "--dataset", ds, "--name", "CLI run", "--system-json", system, "--out", str(out)])
    assert "written" in capsys.readouterr().out
    doc = json.loads(gzip.decompress(out.read_bytes()))
    assert doc["system"]["name"] == "CLI run" and {r["dataset"] for r in doc["predictions"]} == {ds}
    assert check(out.read_bytes(), out.name, {}).ok


def test_trec_problems_are_listed_with_line_numbers(tmp_path):
    run = tmp_path / "vidore__x.trec"
    run.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 1\nq1 Q0 d1 2 1.0 t\nq2 Q0 d3 one nan t\n")
    with pytest.raises(convert.ConvertError) as err:
        convert.convert("vdr", [run], {"name": "x"})
    assert err.value.problems == [
        "vidore__x.trec line 2: expected 6 fields `qid Q0 docid rank score tag`, got 4",
        "vidore__x.trec line 3: document 'd1' repeated for query 'q1'",
        "vidore__x.trec line 4: rank 'one' is not an integer",
        "vidore__x.trec line 4: score 'nan' is not a finite number",
    ]


def test_beir_problems_name_the_query(tmp_path):
    bad = tmp_path / "ds.json"
    bad.write_text('{"q1": {"d1": "high"}, "q2": [1]}')
    with pytest.raises(convert.ConvertError) as err:
        convert.convert("vdr", [bad], {})
    assert err.value.problems == [
        "ds.json query 'q1' document 'd1': score 'high' is not a finite number",
        "ds.json query 'q2': expected {document id: score}, got list",
    ]
    broken = tmp_path / "b.json"
    broken.write_text('{"q1":\n {"d1": 1,}}')
    with pytest.raises(convert.ConvertError, match=r"b.json line 2 column \d+: not valid JSON"):
        convert.convert("vdr", [broken], {})


def test_inputs_are_bounded(tmp_path, monkeypatch):
    run = tmp_path / "ds.trec"
    run.write_text("".join(f"q{i} Q0 d 1 1.0 t\n" for i in range(50)))
    monkeypatch.setattr(convert, "MAX_LINES", 10)
    with pytest.raises(convert.ConvertError, match="more than 10 lines"):
        convert.convert("vdr", [run], {})
    monkeypatch.setattr(convert, "MAX_LINES", 10_000)
    monkeypatch.setattr(convert, "MAX_INPUT_BYTES", 100)
    with pytest.raises(convert.ConvertError, match="larger than 100 bytes"):
        convert.convert("vdr", [run], {})
    with pytest.raises(convert.ConvertError, match="larger than 100 bytes"):
        (tmp_path / "big.json").write_text(json.dumps({"q": {f"d{i}": 1 for i in range(50)}}))
        convert.convert("vdr", [tmp_path / "big.json"], {})
    monkeypatch.setattr(convert, "MAX_INPUT_BYTES", 10**6)
    monkeypatch.setattr(convert, "MAX_LINE_CHARS", 20)
    with pytest.raises(convert.ConvertError, match="ds.trec line 1: longer than 20 bytes"):
        run.write_text("q1 Q0 " + "d" * 100 + " 1 1.0 t\n")
        convert.convert("vdr", [run], {})


def context_name(candidate: dict, k: int) -> str:
    """The UniDoc context file a candidate stands for (text chunk, figure or table)."""
    doc, pages = candidate["doc"], candidate["pages"]
    if candidate.get("modality") == "table":
        return f"{doc}/table-{pages[0]}-{k}.jpg"
    if candidate.get("modality") == "image":
        return f"{doc}/figure-{pages[0]}-{k}.jpg"
    tail = f"_pg{pages[-1]}" if pages[-1] != pages[0] else ""
    return f"finance/{doc}_id_{k}_pg{pages[0]}{tail}.txt"


def test_a_unidoc_jsonl_with_context_file_names_scores_as_the_original(tmp_path):
    original = json.loads(demo.make_submissions("unidoc", UNIDOC_GOLD, 1, seed=5)[0][1])
    lines = []
    for rec in original["predictions"]:
        # single-page image/table candidates only: a figure file names one page
        kept = [c for c in rec["retrieved"] if c.get("modality") in (None, "text") or len(c["pages"]) == 1]
        rec["retrieved"] = kept
        lines.append(
            {"id": rec["id"], "retrieved": [context_name(c, k) for k, c in enumerate(kept)], "answer": rec.get("answer")}
        )
    run = tmp_path / "answers.jsonl"
    run.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    data = convert.convert("unidoc", [run], original["system"])
    converted = score_bytes(data, "c.jsonl", {}).summary
    expected = score_bytes(json.dumps(original).encode(), "o.json", {}).summary
    assert converted.status == expected.status == "scored"
    for key in ("precision@10", "recall@10"):
        assert converted.overall[key] == pytest.approx(expected.overall[key])


def test_a_bad_unidoc_line_is_named(tmp_path):
    run = tmp_path / "answers.jsonl"
    run.write_text('{"id": "finance-0000", "retrieved": ["notes.txt"]}\n{broken\n[1]\n')
    with pytest.raises(convert.ConvertError) as err:
        convert.convert("unidoc", [run], {})
    assert err.value.problems == [
        "answers.jsonl line 2: not valid JSON (Expecting property name enclosed in double quotes at column 2)"
    ]
    run.write_text('{"id": "finance-0000", "retrieved": ["notes.txt"]}\n[1]\n')
    with pytest.raises(convert.ConvertError) as err:
        convert.convert("unidoc", [run], {})
    assert err.value.problems == [
        f"answers.jsonl line 1: retrieved[0]: 'notes.txt' is not a UniDoc-Bench candidate name ({NAME_KINDS})",
        "answers.jsonl line 2: expected an object {id, retrieved, answer} or a baseline row "
        "{question, baseline, retrieved_metadata}",
    ]


MEMORY_PROBE = """
import resource, sys
from pathlib import Path
from leaderboard import convert
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    convert.convert("vdr", [Path(sys.argv[1])], {})
except convert.ConvertError as exc:
    print(exc.count, len(exc.problems), exc.lines[-1])
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
"""


def test_a_million_bad_trec_lines_keep_200_problems_and_count_them_all(tmp_path):
    import subprocess
    import sys

    run = tmp_path / "vidore__x.trec"
    run.write_bytes(b"q1 Q0 d1 1\n" * 1_000_000)  # four fields: every line a problem
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, str(run)], capture_output=True, text=True, cwd=root, timeout=120, check=True
    ).stdout.splitlines()
    assert out[0] == "1000000 200 ... and 999,800 more"
    # every problem kept took ~200 MB more at 1 M lines (2.3 GB at 10 M); 200 lines and a count take nothing
    assert int(out[1]) < 40, f"peak RSS grew by {out[1]} MB reading 1 M bad lines"


def run_cli(capsys, args: list[str]) -> tuple[int, list[str]]:
    with pytest.raises(SystemExit) as exit_:
        cli.main(args)
    return exit_.value.code, capsys.readouterr().err.splitlines()


@pytest.fixture
def one_line_run(tmp_path) -> Path:
    run = tmp_path / "vidore__x.trec"
    run.write_text("q1 Q0 d1 1 2.0 t\n")
    return run


def _cap_memory() -> None:  # an unbounded read must fail in the child, not take the machine's memory
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("--system-json", "--system-json: /dev/zero is larger than 1,048,576 bytes (a system object is a few KB)"),
        ("--gold", "gold: /dev/zero is neither a file nor a folder"),
    ],
)
def test_a_device_as_a_file_argument_is_refused_in_one_line(tmp_path, one_line_run, flag, message):
    import subprocess
    import sys

    args = ["convert", "vdr", str(one_line_run), "--name", "x", flag, "/dev/zero", "--out", str(tmp_path / "o.jsonl")]
    done = subprocess.run(
        [sys.executable, "-m", "leaderboard", *args],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
        timeout=120,
        preexec_fn=_cap_memory,
    )
    assert (done.returncode, done.stderr.splitlines()) == (2, [message])


def test_a_latin1_system_json_is_one_line(capsys, tmp_path, one_line_run):
    system = tmp_path / "system.json"
    system.write_bytes('{\n "name": "Caf\u00e9 RAG"}'.encode("latin-1"))
    code, err = run_cli(
        capsys, ["convert", "vdr", str(one_line_run), "--system-json", str(system), "--out", str(tmp_path / "o.jsonl")]
    )
    assert code == 2 and err == [f"--system-json: {system} line 2: not UTF-8 (byte 0xe9 at offset 15); save it as UTF-8"]
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.parametrize("where", ["folder", "missing folder", "full disk"])
def test_an_unwritable_out_is_one_line(capsys, tmp_path, one_line_run, where):
    out = {"folder": tmp_path, "missing folder": tmp_path / "nope" / "o.jsonl", "full disk": Path("/dev/full")}[where]
    if where == "full disk" and not out.exists():
        pytest.skip("needs /dev/full")
    code, err = run_cli(capsys, ["convert", "vdr", str(one_line_run), "--name", "x", "--no-check", "--out", str(out)])
    expected = {
        "folder": f"--out: {out} is a folder; give a file name (.jsonl, .json, optionally .gz)",
        "missing folder": f"--out: the folder {out.parent} does not exist",
        "full disk": "--out: cannot write /dev/full: No space left on device",
    }[where]
    assert (code, err) == (2, [expected])
