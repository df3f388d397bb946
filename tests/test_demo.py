"""The bundled demo data: deterministic, true to the published gold schemas, and
every submission valid against its gold, with systems that really differ.

Checks here are self-contained (a few lines of metric code each) so they do
not depend on the scoring modules they help to test; from the track modules
they take only the published lists (domains, languages, datasets, ...).
"""

from __future__ import annotations

import ast
import gzip
import importlib
import json
import math
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from leaderboard import demo
from leaderboard.demo.common import DemoGenerator, write
from leaderboard.tracks import TRACKS
from leaderboard.tracks import futurepedia as fp_track
from leaderboard.tracks import unidoc as unidoc_track
from leaderboard.tracks import vdr as vdr_track

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "assets" / "demo"
LANGS = demo.LANGS
QUESTION_KEYS = ["rewritten_question_obscured", "complete_answer", "chunk_used", "question_type", "answer_type"]
QUESTION_TYPES = {
    "factual_retrieval",
    "comparison",
    "causal_reasoning",
    "summarization",
    "temporal_comparison",
    "comparative_analysis",
}
TEXT_SOURCE = re.compile(r"/(\w+)_database/(\d+)_id_\d+_pg(\d+)(?:_pg(\d+))?\.txt$")
FIGURE_SOURCE = re.compile(r"/(\w+)_figures/(\d+)/(figure|table)-(\d+)-\d+\.jpg$")


def tree(root: Path) -> dict[str, bytes]:
    """The generated files under `root`: the generators' vocabularies (assets/demo/vocab/, their input) are not."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] != "vocab"
    }


def assert_same_tree(got: Path, want: Path, hint: str = "") -> None:
    a, b = tree(got), tree(want)
    assert sorted(a) == sorted(b), hint
    assert [k for k in a if a[k] != b[k]] == [], hint


def read_submission(name: str, data: bytes) -> tuple[dict, list[dict]]:
    if name.endswith(".gz"):
        assert data[4:8] == b"\0\0\0\0", "gzip mtime must be 0 for byte-identical files"
        data = gzip.decompress(data)
    text = data.decode("utf-8")
    if name.endswith((".json", ".json.gz")):
        doc = json.loads(text)
        return doc, doc["predictions"]
    header, *records = [json.loads(line) for line in text.splitlines() if line.strip()]
    return header, records


def submissions(track: str, root: Path = ASSETS) -> list[tuple[str, dict, list[dict]]]:
    out = []
    for path in sorted((root / "submissions" / track).iterdir()):
        header, records = read_submission(path.name, path.read_bytes())
        out.append((path.name, header["system"], records))
        assert header["track"] == track
    return out


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    demo.write_demo(out)
    return out


# --------------------------------------------------------------------------- determinism, size


def test_generation_is_byte_identical(fresh, tmp_path):
    demo.write_demo(tmp_path)
    assert_same_tree(tmp_path, fresh)


def test_committed_demo_is_a_fresh_generation(fresh):
    assert_same_tree(ASSETS, fresh, "assets/demo is stale: run `python -m leaderboard.demo`")


def test_cli_and_module_entry_points_reproduce_the_bundled_demo(tmp_path, capsys):
    from leaderboard import cli

    cli.main(["demo", "--out", str(tmp_path / "cli")])
    assert "demo data written" in capsys.readouterr().out
    assert_same_tree(ASSETS, tmp_path / "cli", "`python -m leaderboard demo` no longer reproduces assets/demo")
    subprocess.run([sys.executable, "-m", "leaderboard.demo", str(tmp_path / "module")], cwd=ROOT, check=True)
    assert_same_tree(ASSETS, tmp_path / "module", "`python -m leaderboard.demo` no longer reproduces assets/demo")


def test_regeneration_removes_stale_files(tmp_path):
    stale = tmp_path / "submissions" / "vdr" / "old-system.jsonl"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    demo.write_demo(tmp_path)
    assert not stale.exists()


def test_demo_stays_small():
    assert sum(len(b) for b in tree(ASSETS).values()) < 4 * 1024 * 1024


def test_formats_mix():
    exts = Counter(re.sub(r"^[^.]*", "", p.name) for p in (ASSETS / "submissions").rglob("*.*"))
    assert exts[".json"] >= 1 and exts[".jsonl.gz"] >= 1
    assert exts[".jsonl"] > exts[".json"] + exts[".jsonl.gz"]


# --------------------------------------------------------------------------- unidoc gold


def unidoc_gold(root: Path) -> dict[str, dict]:
    out = {}
    for domain in demo.UNIDOC_DOMAINS:
        for i, q in enumerate(json.loads((root / f"{domain}.json").read_text(encoding="utf-8"))):
            out[f"{domain}-{i:04d}"] = q
    return out


def test_unidoc_gold_schema():
    gold_dir = ASSETS / "gold" / "unidoc"
    assert sorted(p.stem for p in gold_dir.iterdir()) == sorted(demo.UNIDOC_DOMAINS)
    spans, qtypes = set(), Counter()
    for qid, q in unidoc_gold(gold_dir).items():
        domain = qid.rsplit("-", 1)[0]
        assert list(q) == QUESTION_KEYS, qid
        assert q["question_type"] in QUESTION_TYPES
        qtypes[q["question_type"]] += 1
        assert isinstance(q["rewritten_question_obscured"], str)
        assert isinstance(q["complete_answer"], (str, dict))
        docs, used_kinds, facts = set(), set(), []
        for key, item in q["chunk_used"].items():
            kind = re.fullmatch(r"(chunk|img|tab)_\d+", key).group(1)
            assert isinstance(item["used"], bool)
            if kind == "chunk":
                assert list(item["metadata"]) == ["source"]
                m = TEXT_SOURCE.search(item["metadata"]["source"])
                spans.add(int(m.group(4) or m.group(3)) - int(m.group(3)))
            else:
                m = FIGURE_SOURCE.search(item["metadata"])
                assert m.group(3) == ("figure" if kind == "img" else "table")
            assert m.group(1) == domain
            docs.add(m.group(2))
            if item["used"]:
                used_kinds.add(kind)
                assert item["facts"] and all(isinstance(f, str) and f for f in item["facts"])
                facts += item["facts"]
            elif kind == "chunk":
                assert "facts" not in item  # as published: unused text chunks have no facts key
            else:
                assert item["facts"] == []
        assert len(docs) == 1, f"{qid}: evidence from one document"
        assert 1 <= sum(i["used"] for i in q["chunk_used"].values()) <= 6
        expected = {"text_only": {"chunk"}, "image_only": {"img"}}.get(q["answer_type"])
        if expected:
            assert used_kinds == expected, qid
        elif q["answer_type"] == "table_required":
            assert "tab" in used_kinds
        else:
            assert {"chunk", "img"} <= used_kinds
        answer_words = set(re.findall(r"\w+", json.dumps(q["complete_answer"]).lower()))
        assert len(answer_words & set(re.findall(r"\w+", " ".join(facts).lower()))) >= 3, qid
    assert {0, 1} <= spans  # one- and two-page text chunks
    assert {"temporal_comparison", "comparative_analysis"} <= set(qtypes)


def test_unidoc_gold_covers_every_answer_type_per_domain():
    gold = unidoc_gold(ASSETS / "gold" / "unidoc")
    for domain in demo.UNIDOC_DOMAINS:
        types = Counter(q["answer_type"] for qid, q in gold.items() if qid.startswith(domain + "-"))
        assert set(types) == set(demo.UNIDOC_ANSWER_TYPES) and sum(types.values()) == 12
    assert sum(isinstance(q["complete_answer"], dict) for q in gold.values()) == 1


# --------------------------------------------------------------------------- futurepedia gold

SCRIPTS = {"zh": r"[\u4e00-\u9fff]", "ja": r"[\u3040-\u30ff\u4e00-\u9fff]", "ko": r"[\uac00-\ud7a3]", "ar": r"[\u0600-\u06ff]"}


def test_futurepedia_gold_schema():
    records = json.loads((ASSETS / "gold" / "futurepedia" / "demo_answers.json").read_text(encoding="utf-8"))
    assert [r["id"] for r in records] == list(range(len(records))) and 35 <= len(records) <= 45
    multi = lists = short = commas = 0
    for r in records:
        assert list(r) == ["id", "ori_ans", "new_ans"]
        assert list(r["ori_ans"]) == list(LANGS)
        assert set(LANGS) <= set(r["new_ans"])
        for lang, value in r["ori_ans"].items():
            assert isinstance(value, str) and value
            multi += ", " in value
            short += len(value) < 3
            if lang in SCRIPTS:
                assert re.search(SCRIPTS[lang], value) or value[:4].isdigit(), (r["id"], lang, value)
        for answers in r["new_ans"].values():
            assert list(answers) == list(LANGS)
            for value in answers.values():
                if isinstance(value, list):
                    lists += 1
                    assert value and all(isinstance(v, str) and v for v in value)
                else:
                    commas += ", " in value
    assert multi and lists and short and commas
    assert any(set(r["new_ans"]) - set(LANGS) for r in records)  # an extra language the loader ignores


# --------------------------------------------------------------------------- vdr gold


def read_qrels(root: Path) -> dict[str, dict[str, dict[str, int]]]:
    out = {}
    for path in sorted(root.glob("*.qrels")):
        qrels: dict[str, dict[str, int]] = defaultdict(dict)
        for line in path.read_text(encoding="utf-8").splitlines():
            qid, zero, doc, grade = line.split(" ")
            assert zero == "0"
            qrels[qid][doc] = int(grade)
        out[path.stem.replace("__", "/")] = dict(qrels)
    return out


def test_vdr_gold_schema():
    gold = read_qrels(ASSETS / "gold" / "vdr")
    assert 6 <= len(gold) <= 8 and set(demo.VIDORE_V2) <= set(gold) and set(gold) <= set(demo.VIDORE_V1 + demo.VIDORE_V2)
    for dataset, qrels in gold.items():
        assert 30 <= len(qrels) <= 40
        assert all(any(g > 0 for g in docs.values()) for docs in qrels.values())
        grades = {g for docs in qrels.values() for g in docs.values()}
        if dataset in demo.VIDORE_V1:
            assert grades == {1}, dataset  # binary, as ViDoRe-V1
        else:
            assert {1, 2} <= grades <= {0, 1, 2}, dataset  # graded, as ViDoRe-V2


# --------------------------------------------------------------------------- submissions: validity


def check_unidoc(gold: dict[str, dict], subs) -> None:
    for name, system, records in subs:
        assert 1 <= len(system["name"]) <= 80 and system["link"].startswith("https://")
        assert system["paradigm"] in unidoc_track.PARADIGMS
        ids = [r["id"] for r in records]
        assert records and len(ids) == len(set(ids)) and set(ids) <= set(gold), name
        for r in records:
            assert "question" not in r or r["question"] == gold[r["id"]]["rewritten_question_obscured"]
            assert "answer" not in r or isinstance(r["answer"], str) and r["answer"]
            seen = set()
            for c in r["retrieved"]:
                assert isinstance(c["doc"], str) and c["modality"] in {"text", "image", "table"}
                pages = c["pages"]
                assert len(pages) in (1, 2) and all(type(p) is int and p >= 1 for p in pages) and pages[0] <= pages[-1]
                seen.add((c["doc"], tuple(pages), c["modality"]))
            assert len(seen) == len(r["retrieved"]) == 10, "no repeated candidates"


def check_futurepedia(records_gold: list[dict], subs) -> None:
    ids = {r["id"] for r in records_gold}
    for name, system, records in subs:
        assert 1 <= len(system["name"]) <= 80 and system["link"].startswith("https://")
        units = Counter()
        for r in records:
            assert type(r["id"]) is int and r["id"] in ids and r["query_lang"] in LANGS
            assert isinstance(r["prediction"], str) and r["prediction"]
            if r["task"] == "monolingual":
                assert r.get("doc_lang", r["query_lang"]) == r["query_lang"]
                units[("monolingual", r["id"], r["query_lang"])] += 1
            elif r["task"] == "crosslingual":
                assert r["doc_lang"] in LANGS and r["doc_lang"] != r["query_lang"]
                units[("crosslingual", r["id"], r["query_lang"], r["doc_lang"])] += 1
            else:
                assert r["task"] == "selection"
                docs = r["doc_langs"]
                assert 2 <= len(docs) <= 4 and len(set(docs)) == len(docs) and set(docs) <= set(LANGS)
                units[("selection", r["id"], r["query_lang"])] += 1
        assert set(units.values()) == {1}, f"{name}: repeated unit"
        per_task = Counter(u[0] for u in units)
        full = {"monolingual": 8, "crosslingual": 56, "selection": 8}
        assert per_task and all(per_task[t] == full[t] * len(ids) for t in per_task), name


def check_vdr(gold: dict[str, dict[str, dict[str, int]]], subs) -> None:
    for name, system, records in subs:
        assert {"model", "method", "storage"} <= set(system) and system["link"].startswith("https://")
        datasets = {r["dataset"] for r in records}
        assert datasets and datasets <= set(gold) and set(system["storage"]) == datasets, name
        for s in system["storage"].values():
            assert 0 < s["vectors"] <= s["vectors_uncompressed"]
        keys = [(r["dataset"], r["query_id"]) for r in records]
        assert len(keys) == len(set(keys)), name
        for r in records:
            assert r["query_id"] in gold[r["dataset"]]
            docs = [x["doc"] for x in r["ranking"]]
            assert 1 <= len(docs) <= 100 and len(set(docs)) == len(docs)
            assert all(isinstance(x["score"], float) and math.isfinite(x["score"]) for x in r["ranking"])


def test_demo_submissions_are_valid():
    check_unidoc(unidoc_gold(ASSETS / "gold" / "unidoc"), submissions("unidoc"))
    fp_gold = json.loads((ASSETS / "gold" / "futurepedia" / "demo_answers.json").read_text(encoding="utf-8"))
    check_futurepedia(fp_gold, submissions("futurepedia"))
    check_vdr(read_qrels(ASSETS / "gold" / "vdr"), submissions("vdr"))


def test_demo_submission_counts_and_special_cases():
    unidoc = submissions("unidoc")
    assert 5 <= len(unidoc) <= 8
    assert sum(all("answer" not in r for r in recs) for _, _, recs in unidoc) == 1  # retrieval-only
    n_questions = len(unidoc_gold(ASSETS / "gold" / "unidoc"))
    coverage = sorted(len(recs) / n_questions for _, _, recs in unidoc)
    assert 0.7 <= coverage[0] <= 0.9 and coverage[1] == 1.0  # exactly one partial run
    fp = submissions("futurepedia")
    assert 5 <= len(fp) <= 8 and any({r["task"] for r in recs} == {"monolingual"} for _, _, recs in fp)
    vdr = submissions("vdr")
    # Every method the track names has a demo system, except the catch-all "other".
    assert 10 <= len(vdr) <= 14 and {s["method"] for _, s, _ in vdr} == set(vdr_track.METHODS) - {"other"}
    ties = sum(len({x["score"] for x in r["ranking"]}) < len(r["ranking"]) for _, _, recs in vdr for r in recs)
    assert ties > 0


# --------------------------------------------------------------------------- submissions: strengths differ


def unidoc_recall(gold: dict[str, dict], records: list[dict]) -> dict[str, float]:
    """Mean recall@10 per answer type, over all gold questions (missing ones score 0)."""
    sums = Counter()
    by_id = {r["id"]: r for r in records}
    for qid, q in gold.items():
        contexts = set()
        for item in q["chunk_used"].values():
            if item["used"]:
                source = item["metadata"]["source"] if isinstance(item["metadata"], dict) else item["metadata"]
                m = TEXT_SOURCE.search(source)
                if m:
                    contexts.add((m.group(2), int(m.group(3)), int(m.group(4) or m.group(3))))
                else:
                    m = FIGURE_SOURCE.search(source)
                    contexts.add((m.group(2), int(m.group(4)), int(m.group(4))))
        cands = by_id[qid]["retrieved"][:10] if qid in by_id else []
        hit = sum(any(c["doc"] == d and c["pages"][0] <= b and a <= c["pages"][-1] for c in cands) for d, a, b in contexts)
        sums[q["answer_type"]] += hit / len(contexts)
        sums["all"] += hit / len(contexts)
    counts = Counter(q["answer_type"] for q in gold.values())
    counts["all"] = len(gold)
    return {k: sums[k] / counts[k] for k in counts}


def test_unidoc_systems_have_different_strengths():
    gold = unidoc_gold(ASSETS / "gold" / "unidoc")
    recall = {
        system["paradigm"] + ("/answers" if "answer" in recs[0] else ""): unidoc_recall(gold, recs)
        for _, system, recs in submissions("unidoc")
        if len(recs) == len(gold)
    }
    text, image = recall["text/answers"], recall["image/answers"]
    assert text["text_only"] > text["image_only"] + 0.4
    assert image["image_only"] > image["text_only"] + 0.1
    assert recall["mm-fusion/answers"]["all"] == max(r["all"] for r in recall.values())


def ndcg5(qrels: dict[str, int], ranking: list[dict]) -> float:
    ranked = sorted(ranking, key=lambda x: (x["score"], x["doc"]), reverse=True)[:5]
    dcg = sum(qrels.get(x["doc"], 0) / math.log2(i + 2) for i, x in enumerate(ranked))
    ideal = sorted((g for g in qrels.values() if g > 0), reverse=True)[:5]
    return dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal))


def test_vdr_accuracy_falls_with_compression():
    gold = read_qrels(ASSETS / "gold" / "vdr")
    curve = {}
    for _, system, records in submissions("vdr"):
        if system["model"] == "colqwen2-v1.0" and system["method"] in ("none", "merge"):
            by_key = {(r["dataset"], r["query_id"]): r["ranking"] for r in records}
            per_dataset = [sum(ndcg5(q, by_key[(d, qid)]) for qid, q in gold[d].items()) / len(gold[d]) for d in gold]
            curve[system["compression_target"]] = sum(per_dataset) / len(per_dataset)
    values = [curve[k] for k in sorted(curve)]
    assert len(values) >= 3 and values == sorted(values, reverse=True)


def _listing(value) -> str:
    return value if isinstance(value, str) else ", ".join(value)


def test_futurepedia_english_bias_shows():
    gold = {r["id"]: r for r in json.loads((ASSETS / "gold" / "futurepedia" / "demo_answers.json").read_text(encoding="utf-8"))}
    english_answers = {}
    for _, system, records in submissions("futurepedia"):
        selection = [r for r in records if r["task"] == "selection"]
        if selection:
            english_answers[system["name"]] = sum(
                _listing(gold[r["id"]]["new_ans"]["en"]["en"]) in r["prediction"] for r in selection
            ) / len(selection)
    biased = max(english_answers, key=english_answers.get)
    assert "EN-Pivot" in biased and english_answers[biased] > 1.5 * sorted(english_answers.values())[-2]


# --------------------------------------------------------------------------- bench generation


def parsed(subs: list[tuple[str, bytes]]) -> list[tuple[str, dict, list[dict]]]:
    out = []
    for name, data in subs:
        header, records = read_submission(name, data)
        out.append((name, header["system"], records))
    return out


def test_make_submissions_valid_distinct_and_deterministic():
    gold = ASSETS / "gold"
    unidoc = demo.make_submissions("unidoc", gold / "unidoc", 6, seed=3)
    assert unidoc == demo.make_submissions("unidoc", gold / "unidoc", 6, seed=3)
    fp = demo.make_submissions("futurepedia", gold / "futurepedia", 6, seed=3)
    vdr = demo.make_submissions("vdr", gold / "vdr", 6, seed=3)
    for subs in (unidoc, fp, vdr):
        names = [n for n, _ in subs]
        assert len(set(names)) == 6 and {n.split(".", 1)[1] for n in names} == {"json", "jsonl", "jsonl.gz"}
        assert len({system["name"] for _, system, _ in parsed(subs)}) == 6
    check_unidoc(unidoc_gold(gold / "unidoc"), parsed(unidoc))
    fp_gold = json.loads((gold / "futurepedia" / "demo_answers.json").read_text(encoding="utf-8"))
    check_futurepedia(fp_gold, parsed(fp))
    check_vdr(read_qrels(gold / "vdr"), parsed(vdr))
    for _, _, records in parsed(vdr):
        assert all(len(r["ranking"]) == 100 for r in records)


def test_make_submissions_questions_per_domain():
    subs = demo.make_submissions("unidoc", ASSETS / "gold" / "unidoc", 2, questions_per_domain=3)
    for name, data in subs:
        ids = {r["id"] for r in read_submission(name, data)[1]}
        assert ids and all(int(i.rsplit("-", 1)[1]) < 3 for i in ids)
    with pytest.raises(ValueError):
        demo.make_submissions("vdr", ASSETS / "gold" / "vdr", 1, questions_per_domain=3)


def test_bench_gold_sizes(tmp_path):
    path = demo.make_gold("unidoc", tmp_path / "unidoc", size="bench")
    gold = unidoc_gold(path)
    counts = Counter(qid.rsplit("-", 1)[0] for qid in gold)
    assert counts == Counter(demo.UNIDOC_DOMAINS) and len(gold) == 1742
    assert {qid for qid, q in gold.items() if isinstance(q["complete_answer"], dict)} == {"education-0104", "healthcare-0060"}
    path = demo.make_gold("futurepedia", tmp_path / "futurepedia", size="bench")
    assert len(json.loads(path.read_text(encoding="utf-8"))) == 197
    qrels = read_qrels(demo.make_gold("vdr", tmp_path / "vdr", size="bench"))
    assert sorted(qrels) == sorted(demo.VIDORE_V1) and {len(q) for q in qrels.values()} == {500}


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError):
        demo.make_gold("vdr", tmp_path, size="huge")
    assert not any(tmp_path.iterdir())


# --------------------------------------------------------------------------- the registry, the track modules


def test_every_track_has_a_demo_generator():
    assert set(demo.GENERATORS) == set(TRACKS)
    assert all(name == g.track for name, g in demo.GENERATORS.items())


def test_an_unknown_track_is_an_error_not_another_tracks_data(tmp_path):
    # Before the registry, a track without a generator of its own silently got vdr submissions.
    for call in (
        lambda: demo.make_gold("nope", tmp_path),
        lambda: demo.make_submissions("nope", tmp_path, 1),
        lambda: demo.make_submissions("nope", tmp_path, 1, questions_per_domain=2),
    ):
        with pytest.raises(ValueError, match="no demo generator for track 'nope'"):
            call()
    assert not any(tmp_path.iterdir())


def _toy_gold(out_dir: Path, seed: int, size: str) -> Path:
    write(out_dir / "toy.json", json.dumps({"seed": seed, "size": size}).encode())
    return out_dir


def _toy_submissions(gold: Path, exts: list[str], rng, seed: int) -> list[tuple[str, bytes]]:
    return [(f"toy-{i}{ext}", f"{rng.random()} {seed}".encode()) for i, ext in enumerate(exts)]


def test_a_registered_generator_is_looked_up_by_its_track(tmp_path, monkeypatch):
    monkeypatch.setattr(demo, "GENERATORS", dict(demo.GENERATORS))  # keep the registration inside this test
    toy = DemoGenerator(
        "toy",
        _toy_gold,
        lambda gold, seed: [("toy-system.jsonl", b"{}\n")],
        _toy_submissions,
        benchmark="Toy-Bench",
        gold_layout="`gold/toy/toy.json`: one toy file",
    )
    assert demo.register(toy) is toy
    with pytest.raises(ValueError, match="already registered"):
        demo.register(toy)
    demo.write_demo(tmp_path)
    assert json.loads((tmp_path / "gold" / "toy" / "toy.json").read_bytes()) == {"seed": 0, "size": "demo"}
    assert (tmp_path / "submissions" / "toy" / "toy-system.jsonl").read_bytes() == b"{}\n"
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert "UniDoc-Bench, Futurepedia, ViDoRe and Toy-Bench gold files" in readme.replace("\n", " ")
    assert "- `gold/toy/toy.json`: one toy file\n- `submissions/<track>/`" in readme
    assert_same_tree(tmp_path / "gold" / "vdr", ASSETS / "gold" / "vdr")  # the other tracks are untouched
    gold = demo.make_gold("toy", tmp_path / "bench", 4, size="bench")
    subs = demo.make_submissions("toy", gold, 6, seed=4)
    assert [name for name, _ in subs] == [
        "toy-0.json",
        "toy-1.jsonl",
        "toy-2.jsonl",
        "toy-3.jsonl",
        "toy-4.jsonl",
        "toy-5.jsonl.gz",
    ]
    assert subs == demo.make_submissions("toy", gold, 6, seed=4) != demo.make_submissions("toy", gold, 6, seed=5)
    with pytest.raises(ValueError, match="questions_per_domain does not apply to the toy track"):
        demo.make_submissions("toy", gold, 1, questions_per_domain=2)


def test_generated_gold_uses_the_tracks_published_lists():
    gold = unidoc_gold(ASSETS / "gold" / "unidoc")
    assert tuple(demo.UNIDOC_DOMAINS) == unidoc_track.DOMAINS
    for domain in unidoc_track.DOMAINS:
        questions = [q for qid, q in gold.items() if qid.startswith(domain + "-")]
        groups = {unidoc_track.QUESTION_TYPE_GROUP[q["question_type"]] for q in questions}
        assert groups == set(unidoc_track.QUESTION_TYPES), domain  # every group in every domain
        answer_types = {unidoc_track.ANSWER_TYPE_NAME[q["answer_type"]] for q in questions}
        assert answer_types == set(unidoc_track.ANSWER_TYPES), domain
    assert demo.LANGS == fp_track.LANGS
    for table in (
        demo.futurepedia._ADJECTIVES,
        demo.futurepedia._NOUNS,
        demo.futurepedia._TYPES,
        *demo.futurepedia._CATEGORIES.values(),
    ):
        assert all(len(row) == len(fp_track.LANGS) for row in table)  # one word per track language
    tasks = {t for _, system, _ in submissions("futurepedia") for t in system["tasks"]}
    assert tasks == set(fp_track.TASKS)
    datasets = set(read_qrels(ASSETS / "gold" / "vdr"))
    assert set(vdr_track.FAMILIES["ViDoRe-V2"]) <= datasets <= {d for f in vdr_track.FAMILIES.values() for d in f}


def leaves(value):
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from leaves(item)
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from leaves(item)
    else:
        yield value


def test_demo_readers_share_no_code_with_the_scorer():
    """The demo takes published lists from the track modules, never their parsing code.

    A submission built from the scorer's own reading of the gold would agree with
    the scorer even where the scorer misreads the gold; the demo's readers stay its own.
    """
    imported = []
    for path in sorted((ROOT / "leaderboard" / "demo").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            names = [a.name for a in node.names]
            module = getattr(node, "module", None) or ""
            if not any("tracks" in x for x in (module, *names)):
                continue
            assert isinstance(node, ast.ImportFrom) and node.level == 2 and module.startswith("tracks."), path.name
            track_module = importlib.import_module(f"leaderboard.{module}")
            imported += [(path.name, name, getattr(track_module, name)) for name in names]
    assert {"DOMAINS", "LANGS", "FAMILIES"} <= {name for _, name, _ in imported}
    for filename, name, value in imported:
        # Published lists: names, or mappings between names; no functions, patterns or classes.
        assert name.isupper() and not name.startswith("_") and isinstance(value, (tuple, dict)), f"{filename}: {name}"
        assert all(isinstance(leaf, str) for leaf in leaves(value)), f"{filename}: {name}"
