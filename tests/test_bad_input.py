"""Malformed submissions: every one yields exit 1 and a precise message, never a traceback."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leaderboard.cli import main
from leaderboard.scoring import check
from leaderboard.tracks import TRACKS

UNIDOC = TRACKS["unidoc"].load_gold()
QID = UNIDOC.questions[0].qid
FP = TRACKS["futurepedia"].load_gold()
FP_ID = FP.records[0].id
VDR = TRACKS["vdr"].load_gold()
DS = sorted(VDR.judged)[0]
QUERY = VDR.judged[DS][0]


def unidoc_file(records, system=None) -> str:
    header = {"track": "unidoc", "system": system or {"name": "sys", "paradigm": "text"}}
    return "\n".join(json.dumps(r) if not isinstance(r, str) else r for r in [header, *records]) + "\n"


def good_unidoc_record(qid=QID, **over):
    rec = {"id": qid, "retrieved": [{"doc": "d1", "pages": [1, 2], "modality": "text"}], "answer": "x"}
    rec.update(over)
    return rec


def vdr_file(records, system=None) -> str:
    system = system or {"name": "v", "model": "m", "method": "none", "storage": {DS: {"vectors": 10, "vectors_uncompressed": 10}}}
    return (
        "\n".join(json.dumps(r) if not isinstance(r, str) else r for r in [{"track": "vdr", "system": system}, *records]) + "\n"
    )


def run_cli(capsys, args) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(args)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return exc.value.code, err


def write(tmp_path: Path, name: str, content) -> str:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(path)


CASES = {
    "truncated json": ("s.json", '{"track": "unidoc", "system": {"name": ', "invalid JSON at line 1"),
    "truncated jsonl line": ("s.jsonl", unidoc_file(['{"id": "x", "retr']), "line 2: invalid JSON at line 2"),
    "not an object": ("s.json", "[1, 2]", "expected a JSON object"),
    "unknown track": ("s.jsonl", '{"track": "nope", "system": {"name": "a"}}\n{"id": 1}\n', "unknown track 'nope'"),
    "missing name": (
        "s.jsonl",
        unidoc_file([good_unidoc_record()], {"paradigm": "text"}),
        "field system.name: required field is missing",
    ),
    "bad paradigm": (
        "s.jsonl",
        unidoc_file([good_unidoc_record()], {"name": "a", "paradigm": "magic"}),
        "field system.paradigm: expected one of",
    ),
    "javascript link": (
        "s.jsonl",
        unidoc_file([good_unidoc_record()], {"name": "a", "paradigm": "text", "link": "javascript:alert(1)"}),
        "field system.link: expected an http:// or https:// URL",
    ),
    "id of wrong type": ("s.jsonl", unidoc_file([good_unidoc_record(qid=7)]), "line 2, field id: expected a string id"),
    "unknown id": (
        "s.jsonl",
        unidoc_file([good_unidoc_record(qid="finance-9999")]),
        "line 2, id finance-9999, field id: unknown question id",
    ),
    "duplicate id": (
        "s.jsonl",
        unidoc_file([good_unidoc_record(), good_unidoc_record()]),
        f"line 3, id {QID}, field id: repeated question id",
    ),
    "pages out of order": (
        "s.jsonl",
        unidoc_file([good_unidoc_record(retrieved=[{"doc": "d", "pages": [6, 5]}])]),
        "field retrieved[0]: pages: start 6 is after end 5",
    ),
    "page as string": (
        "s.jsonl",
        unidoc_file([good_unidoc_record(retrieved=[{"doc": "d", "pages": ["5"]}])]),
        "pages: expected [start, end] or [page] of integers >= 1",
    ),
    "answer not a string": ("s.jsonl", unidoc_file([good_unidoc_record(answer=["a"])]), "field answer: expected a string"),
    "misaligned question": (
        "s.jsonl",
        unidoc_file([good_unidoc_record(question="What is 2+2?")]),
        "question text does not match",
    ),
    "no predictions": ("s.jsonl", unidoc_file([]), "file: the submission has no prediction"),
    "empty file": ("s.jsonl", "", "file: file is empty"),
    "NaN literal": (
        "s.jsonl",
        vdr_file([f'{{"dataset": "{DS}", "query_id": "{QUERY}", "ranking": [{{"doc": "a", "score": NaN}}]}}']),
        "NaN is not allowed",
    ),
    "infinite score": (
        "s.jsonl",
        vdr_file([f'{{"dataset": "{DS}", "query_id": "{QUERY}", "ranking": [{{"doc": "a", "score": 1e999}}]}}']),
        "score: expected finite numbers",
    ),
    "score as string": (
        "s.jsonl",
        vdr_file([{"dataset": DS, "query_id": QUERY, "ranking": [{"doc": "a", "score": "1"}]}]),
        "score: expected finite numbers",
    ),
    "duplicate doc in ranking": (
        "s.jsonl",
        vdr_file([{"dataset": DS, "query_id": QUERY, "ranking": [{"doc": "a", "score": 1}, {"doc": "a", "score": 0}]}]),
        "a doc appears twice",
    ),
    "no storage for dataset": (
        "s.jsonl",
        vdr_file(
            [{"dataset": DS, "query_id": QUERY, "ranking": [{"doc": "a", "score": 1}]}],
            {"name": "v", "model": "m", "method": "none", "storage": {"other": {"vectors": 1, "vectors_uncompressed": 2}}},
        ),
        f"dataset {DS} has predictions but no storage entry",
    ),
    "vectors above uncompressed": (
        "s.jsonl",
        vdr_file(
            [{"dataset": DS, "query_id": QUERY, "ranking": [{"doc": "a", "score": 1}]}],
            {"name": "v", "model": "m", "method": "prune", "storage": {DS: {"vectors": 5, "vectors_uncompressed": 2}}},
        ),
        "expected 0 < vectors <= vectors_uncompressed",
    ),
    "futurepedia id as string": (
        "s.jsonl",
        '{"track": "futurepedia", "system": {"name": "f"}}\n'
        + json.dumps({"task": "monolingual", "id": str(FP_ID), "query_lang": "en", "prediction": "x"})
        + "\n",
        "field id: expected an integer id",
    ),
    "futurepedia repeated unit": (
        "s.jsonl",
        '{"track": "futurepedia", "system": {"name": "f"}}\n'
        + 2 * (json.dumps({"task": "monolingual", "id": FP_ID, "query_lang": "en", "prediction": "x"}) + "\n"),
        "repeated monolingual unit",
    ),
    "crosslingual same language": (
        "s.jsonl",
        '{"track": "futurepedia", "system": {"name": "f"}}\n'
        + json.dumps({"task": "crosslingual", "id": FP_ID, "query_lang": "en", "doc_lang": "en", "prediction": "x"})
        + "\n",
        "crosslingual doc_lang must differ",
    ),
    "wrong extension": ("s.txt", "{}", "unsupported file name"),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("command", ["validate", "score"])
def test_malformed_file_gives_exit_1_and_a_precise_message(tmp_path, capsys, case, command):
    name, content, expected = CASES[case]
    code, err = run_cli(capsys, [command, write(tmp_path, name, content)])
    assert code == 1
    assert expected in err, err


def test_every_problem_is_listed_not_just_the_first(tmp_path, capsys):
    content = unidoc_file([good_unidoc_record(qid="nope-1"), good_unidoc_record(retrieved="x"), good_unidoc_record(answer=3)])
    code, err = run_cli(capsys, ["validate", write(tmp_path, "s.jsonl", content)])
    assert code == 1 and err.count("\n") == 3
    assert "line 2" in err and "line 3" in err and "line 4" in err


def test_non_utf8_bytes(tmp_path, capsys):
    content = unidoc_file([good_unidoc_record()]).encode() + b'{"id": "\xff\xfe"}\n'
    code, err = run_cli(capsys, ["validate", write(tmp_path, "s.jsonl", content)])
    assert code == 1 and "not UTF-8: byte 0xff" in err and "line 3" in err


def test_file_over_the_size_cap_is_refused_without_reading_it_whole(tmp_path, capsys):
    path = tmp_path / "big.jsonl"
    with open(path, "wb") as fh:  # 200 MB, sparse on disk
        fh.truncate(200 * 1024 * 1024)
    code, err = run_cli(capsys, ["validate", str(path)])
    assert code == 1 and "over the size cap of 134,217,728 bytes" in err


def test_gzip_bomb_stops_at_the_cap(tmp_path, capsys):
    path = tmp_path / "bomb.jsonl.gz"
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip container
    chunk = b" " * (1 << 20)
    with open(path, "wb") as fh:
        for _ in range(200):  # 200 MiB of spaces in ~200 KB
            fh.write(comp.compress(chunk))
        fh.write(comp.flush())
    assert path.stat().st_size < 1_000_000
    code, err = run_cli(capsys, ["validate", str(path)])
    assert code == 1 and "decompressed content exceeds the size cap" in err


def test_corrupt_gzip(tmp_path, capsys):
    code, err = run_cli(capsys, ["validate", write(tmp_path, "s.jsonl.gz", gzip.compress(b"abc")[:-6])])
    assert code == 1 and "not a valid gzip file" in err


def test_valid_file_passes_and_warns_on_repeats(tmp_path, capsys):
    cand = {"doc": "d", "pages": [1]}
    content = unidoc_file([good_unidoc_record(retrieved=[cand, cand])])
    main(["validate", write(tmp_path, "s.jsonl", content)])
    out = capsys.readouterr()
    assert "valid: track unidoc, 1 predictions" in out.out
    assert "repeated candidate" in out.err


VALID = unidoc_file([good_unidoc_record(), good_unidoc_record(UNIDOC.questions[1].qid)]).encode()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_files_never_raise(data):
    """Byte flips, truncations and insertions anywhere: a verdict, never an exception."""
    raw = bytearray(VALID)
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        pos = data.draw(st.integers(0, max(0, len(raw) - 1)))
        if op == "flip" and raw:
            raw[pos] = data.draw(st.integers(0, 255))
        elif op == "cut":
            del raw[pos:]
        else:
            raw[pos:pos] = data.draw(st.sampled_from([b"NaN", b"null", b"[", b"}", b'"', b"\n", b"-1", b"1e999", b"\xc3"]))
    checked = check(bytes(raw), "s.jsonl")
    assert checked.ok or checked.errors


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["unidoc", "futurepedia", "vdr"]),
    st.sampled_from(
        [
            "id",
            "retrieved",
            "answer",
            "task",
            "query_lang",
            "doc_lang",
            "doc_langs",
            "prediction",
            "dataset",
            "query_id",
            "ranking",
            "question",
        ]
    ),
    json_values,
)
def test_wrong_types_in_any_field_never_raise(track, field, value):
    base = {
        "unidoc": good_unidoc_record(),
        "futurepedia": {"task": "selection", "id": FP_ID, "query_lang": "en", "doc_langs": ["en", "fr"], "prediction": "x"},
        "vdr": {"dataset": DS, "query_id": QUERY, "ranking": [{"doc": "a", "score": 1.0}]},
    }[track]
    system = {
        "name": "s",
        "paradigm": "text",
        "model": "m",
        "method": "none",
        "storage": {DS: {"vectors": 1, "vectors_uncompressed": 2}},
    }
    content = json.dumps({"track": track, "system": system, "predictions": [{**base, field: value}]})
    checked = check(content.encode(), "s.json")
    assert checked.ok or checked.errors
