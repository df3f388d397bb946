"""The spec's Limits: records, JSON values, nesting depth, text lengths and the problem list.

Memory figures are taken from a child process (the CLI as a user runs it):
its own peak RSS, read at exit, so other tests' memory never counts.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from leaderboard.problems import SubmissionError
from leaderboard.scoring import Rescorer, check, score_checked
from leaderboard.submission import Limits, parse_envelope, with_system
from leaderboard.tracks import TRACKS

ROOT = Path(__file__).resolve().parents[1]
CLI_PEAK_MB = 700
GOLD = {name: t.load_gold() for name, t in TRACKS.items()}
LIMITS = {name: TRACKS[name].limits(g) for name, g in GOLD.items()}
SYSTEMS = {
    "unidoc": {"name": "s", "paradigm": "text"},
    "futurepedia": {"name": "s"},
    "vdr": {
        "name": "s",
        "model": "m",
        "method": "none",
        "storage": {ds: {"vectors": 1, "vectors_uncompressed": 2} for ds in GOLD["vdr"].qrels},
    },
}
DS = sorted(GOLD["vdr"].judged)[0]
RECORDS = {
    "unidoc": {"id": GOLD["unidoc"].questions[0].qid, "retrieved": [{"doc": "d", "pages": [1]}], "answer": "x"},
    "futurepedia": {"task": "monolingual", "id": GOLD["futurepedia"].records[0].id, "query_lang": "en", "prediction": "x"},
    "vdr": {"dataset": DS, "query_id": GOLD["vdr"].judged[DS][0], "ranking": [{"doc": "a", "score": 1.0}]},
}

# The child's own peak (VmHWM): ru_maxrss survives exec, so it would report the test runner's size when that is larger.
PEAK = (
    "import atexit, re, sys\n"
    "hwm = lambda: int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)) // 1024\n"
    "atexit.register(lambda: print('PEAK_MB', hwm(), file=sys.stderr))\n"
    "from leaderboard.cli import main\n"
    "main(sys.argv[1:])\n"
)


def cli(*args: str) -> tuple[int, str, int]:
    """(exit code, stderr without the peak line, peak RSS in MB) of `python -m leaderboard ARGS` in a child."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", PEAK, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    lines = proc.stderr.splitlines()
    peak = next(int(line.split()[1]) for line in lines if line.startswith("PEAK_MB"))
    return proc.returncode, "\n".join(line for line in lines if not line.startswith("PEAK_MB")), peak


def header(track: str) -> bytes:
    return json.dumps({"track": track, "system": SYSTEMS[track]}).encode()


def write_gz(path: Path, head: bytes, item: bytes, count: int, sep: bytes, tail: bytes) -> Path:
    """`head` + `count` x `item` joined by `sep` + `tail`, gzipped by streaming (the test never holds it whole)."""
    block = 100_000
    with gzip.open(path, "wb", compresslevel=6) as fh:
        fh.write(head)
        for start in range(0, count, block):
            n = min(block, count - start)
            fh.write(sep.join([item] * n) + (sep if start + n < count else b""))
        fh.write(tail)
    return path


def json_gz(path: Path, track: str, item: bytes, count: int) -> Path:
    return write_gz(path, header(track)[:-1] + b', "predictions": [', item, count, b",", b"]}")


def jsonl_gz(path: Path, track: str, item: bytes, count: int) -> Path:
    return write_gz(path, header(track) + b"\n", item, count, b"\n", b"\n")


def assert_refused_lean(path: Path, expected: str) -> None:
    code, err, peak = cli("validate", str(path))
    assert code == 1, err[-500:]
    assert "Traceback" not in err and "Error:" not in err
    assert expected in err, err[:500]
    assert peak < CLI_PEAK_MB, f"peak RSS {peak} MB"


# ---- the {}-bomb and record floods --------------------------------------------------------------

BOMB_ITEMS = 20_000_000  # ~57 MiB of `{},` decompressed, ~58 KB gzipped


def test_empty_object_bomb_json_is_refused_quickly_with_bounded_memory(tmp_path):
    path = json_gz(tmp_path / "bomb.json.gz", "unidoc", b"{}", BOMB_ITEMS)
    assert path.stat().st_size < 200_000
    assert_refused_lean(path, "more than")


def test_empty_object_bomb_jsonl_one_record_per_line(tmp_path):
    path = jsonl_gz(tmp_path / "bomb.jsonl.gz", "unidoc", b"{}", BOMB_ITEMS)
    limit = LIMITS["unidoc"].records
    assert_refused_lean(path, f"line {limit + 2}: more than {limit:,} prediction records")


def test_empty_object_bomb_inside_one_jsonl_record(tmp_path):
    head = header("unidoc") + b'\n{"id": "x", "retrieved": ['
    path = write_gz(tmp_path / "bomb1.jsonl.gz", head, b"{}", BOMB_ITEMS, b",", b"]}\n")
    assert_refused_lean(path, "JSON values")


@pytest.mark.parametrize("track", sorted(RECORDS))
@pytest.mark.parametrize("kind", ["json", "jsonl"])
def test_record_flood_is_refused_with_bounded_memory(tmp_path, track, kind):
    item = json.dumps(RECORDS[track]).encode()
    count = 40_000_000 // len(item)  # ~40 MB of valid-looking records
    make = json_gz if kind == "json" else jsonl_gz
    path = make(tmp_path / f"flood.{kind}.gz", track, item, count)
    assert_refused_lean(path, f"{LIMITS[track].records:,} prediction records")


def test_every_path_uses_the_bounded_reader(tmp_path):
    """The app's Submit path (check), a Hub pull (Rescorer.score_file), detail views (parse_envelope), the form."""
    path = json_gz(tmp_path / "bomb.json.gz", "vdr", b"{}", 2_000_000)
    data = path.read_bytes()
    direct = check(data, path.name)
    assert not direct.ok and "JSON values" in direct.errors[0]
    pulled = Rescorer(tmp_path / "cache").score_file(path)
    assert pulled.summary.status == "invalid" and pulled.summary.errors == direct.errors
    with pytest.raises(SubmissionError, match="JSON values"):
        parse_envelope(data, path.name, limits_of=lambda track: LIMITS["vdr"])
    # the submit form's fields are merged without decoding the predictions
    assert not check(with_system(data, path.name, {"name": "x"}), path.name).ok


def test_a_record_count_at_the_limit_is_read_and_one_past_is_refused():
    limit = LIMITS["unidoc"].records
    questions = GOLD["unidoc"].questions
    records = [{**RECORDS["unidoc"], "id": questions[i % len(questions)].qid} for i in range(limit + 1)]
    at_limit = b"\n".join([header("unidoc"), *(json.dumps(r).encode() for r in records[:limit])])
    checked = check(at_limit, "s.jsonl")  # refused for repeats, but every record was read
    assert checked.records == limit and not any("prediction records" in e for e in checked.errors)
    past = at_limit + b"\n" + json.dumps(records[limit]).encode()
    assert any(f"line {limit + 2}: more than {limit:,} prediction records" in e for e in check(past, "s.jsonl").errors)
    as_json = json.dumps({"track": "unidoc", "system": SYSTEMS["unidoc"], "predictions": records}).encode()
    assert any(f"more than {limit:,} prediction records" in e for e in check(as_json, "s.json").errors)


def test_limits_follow_the_gold():
    assert Limits.for_gold_units(1742).records == 3584  # the spec's example: unidoc's published questions
    assert LIMITS["unidoc"].records == 2 * len(GOLD["unidoc"].questions) + 100


# ---- nesting depth --------------------------------------------------------------------------------


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    "name, content",
    [
        ("deep.json", nested(100_000)),
        (
            "deep.json",
            '{"track": "unidoc", "system": {"name": "s", "paradigm": "text"}, "predictions": [' + nested(100_000) + "]}",
        ),
        ("deep.jsonl", nested(100_000)),
        ("deep.jsonl", header("unidoc").decode() + "\n" + nested(100_000) + "\n"),
        ("deep.jsonl", '{"track": "unidoc", "system": {"name": ' + nested(100_000) + "}}\n"),
    ],
    ids=["json-whole", "json-record", "jsonl-whole", "jsonl-record", "jsonl-header"],
)
def test_a_100k_deep_array_is_a_precise_error(tmp_path, name, content):
    checked = check(content.encode(), name)
    assert not checked.ok and any("nested deeper than 64 levels" in e for e in checked.errors), checked.errors
    path = tmp_path / name
    path.write_text(content)
    code, err, _ = cli("validate", str(path))
    assert code == 1 and "nested deeper than 64 levels" in err and "Traceback" not in err and "Recursion" not in err


def record_with_depth(depth: int) -> dict:
    """A valid unidoc record whose deepest value (an unknown key) sits `depth` levels down, the record included."""
    return {**RECORDS["unidoc"], "note": json.loads(nested(depth - 1))}


@pytest.mark.parametrize("kind", ["jsonl", "json"])
def test_depth_64_is_read_and_65_is_refused(kind):
    def make(depth: int) -> bytes:
        if kind == "jsonl":
            return header("unidoc") + b"\n" + json.dumps(record_with_depth(depth)).encode()
        # in a .json envelope a record is two levels down (object, predictions array)
        return json.dumps(
            {"track": "unidoc", "system": SYSTEMS["unidoc"], "predictions": [record_with_depth(depth - 2)]}
        ).encode()

    assert check(make(64), f"s.{kind}").ok
    refused = check(make(65), f"s.{kind}")
    assert not refused.ok and any("nested deeper than 64 levels" in e for e in refused.errors)


def test_a_deep_line_does_not_hide_the_others():
    lines = [header("unidoc"), nested(70).encode(), json.dumps({**RECORDS["unidoc"], "id": "nope"}).encode()]
    errors = check(b"\n".join(lines), "s.jsonl").errors
    assert errors[0].startswith("line 2: JSON nested deeper") and errors[1].startswith("line 3, id nope")


# ---- every problem listed, and the true total -----------------------------------------------------


def test_three_broken_lines_and_two_semantic_errors_are_all_listed(tmp_path):
    good = [json.dumps({**RECORDS["unidoc"], "id": q.qid}) for q in GOLD["unidoc"].questions[:3]]
    lines = [
        header("unidoc").decode(),
        good[0],
        '{"id": "broken',
        json.dumps({**RECORDS["unidoc"], "id": "nope-1"}),
        "[1, 2",
        good[1],
        "}",
        json.dumps({**RECORDS["unidoc"], "id": GOLD["unidoc"].questions[1].qid}),
        good[2],
    ]
    path = tmp_path / "five.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, err, _ = cli("validate", str(path))
    assert code == 1
    assert err.splitlines() == [
        "line 3: invalid JSON at line 3, column 8: Unterminated string starting at",
        "line 5: invalid JSON at line 5, column 6: Expecting ',' delimiter",
        "line 7: invalid JSON at line 7, column 1: Expecting value",
        "line 4, id nope-1, field id: unknown question id",
        f"line 8, id {GOLD['unidoc'].questions[1].qid}, field id: repeated question id",
    ]


def test_the_list_stops_at_200_and_tells_the_true_total():
    count = 3_000  # records that are not objects: one problem each
    data = json.dumps({"track": "futurepedia", "system": {"name": "s"}, "predictions": [1] * count}).encode()
    checked = check(data, "s.json")
    assert len(checked.errors) == 201 and checked.errors[-1] == f"... and {count - 200:,} more"
    assert checked.error_count == count
    assert score_checked(checked, "x").summary.error_count == count


def test_the_total_counts_problems_not_lines():
    bad = {**RECORDS["unidoc"], "answer": 5, "retrieved": [{"doc": "", "pages": [0]}, {"doc": 3, "pages": [1]}]}
    lines = [header("unidoc")] + [json.dumps({**bad, "id": q.qid}).encode() for q in GOLD["unidoc"].questions]
    checked = check(b"\n".join(lines), "s.jsonl")
    assert checked.error_count == 3 * len(GOLD["unidoc"].questions) > 200  # three problems per line
    assert checked.errors[-1] == f"... and {checked.error_count - 200:,} more"


# ---- text lengths ------------------------------------------------------------------------------------


def one_record(track: str, **fields) -> bytes:
    return header(track) + b"\n" + json.dumps({**RECORDS[track], **fields}).encode()


def vdr_doc(doc: str) -> dict:
    return {"ranking": [{"doc": doc, "score": 1.0}]}


@pytest.mark.parametrize(
    "track, fields, limit, where",
    [
        ("unidoc", {"answer": "a" * 32_768}, 32_768, "answer"),
        ("futurepedia", {"prediction": "p" * 32_768}, 32_768, "prediction"),
        ("unidoc", {"retrieved": [{"doc": "d" * 200, "pages": [1]}]}, 200, "doc"),
        ("vdr", vdr_doc("d" * 200), 200, "doc"),
    ],
)
def test_text_at_its_limit_passes_and_one_more_character_is_refused(track, fields, limit, where, monkeypatch):
    import leaderboard.scoring as scoring

    assert check(one_record(track, **fields), "s.jsonl").ok
    key, value = next(iter(fields.items()))
    longer = json.loads(json.dumps(value).replace("a" * 5, "a" * 6, 1).replace("p" * 5, "p" * 6, 1).replace("d" * 5, "d" * 6, 1))
    data = one_record(track, **{key: longer})
    for path in ("fast", "generic"):
        with monkeypatch.context() as m:
            if path == "generic":
                m.setattr(scoring, "fast_parse", lambda *a, **k: None)
            checked = check(data, "s.jsonl")
        assert not checked.ok and any(f"at most {limit:,} characters" in e and where in e for e in checked.errors), (
            path,
            checked.errors,
        )


@pytest.mark.parametrize("track, field", [("unidoc", "id"), ("vdr", "dataset"), ("vdr", "query_id")])
def test_ids_over_200_characters_are_refused_before_lookup(track, field):
    checked = check(one_record(track, **{field: "i" * 201}), "s.jsonl")
    assert not checked.ok
    assert any(f"field {field}: expected at most 200 characters, got 201" in e for e in checked.errors), checked.errors


# ---- the value count: exact about strings, whatever the chunking -----------------------------------


def decoder_marks(text: str, lines: bool) -> int:
    """Commas, colons, openers and newlines a decoder acts on, counted character by character.

    Counting stops at a backslash outside a string (a syntax error: nothing after it is decoded),
    until the next line in JSONL, where a string also never runs past its line.
    """
    total, inside, escaped, dead = 0, False, False, False
    for ch in text:
        if lines and ch == "\n":
            inside = escaped = dead = False
            total += 1
        elif dead:
            continue
        elif inside:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                inside = False
        elif ch == '"':
            inside = True
        elif ch == "\\":
            dead = True
        elif ch in ",:{[\n":
            total += 1
    return total


@pytest.mark.parametrize("chunk", [3, 7, 1 << 20])
def test_values_outside_strings_are_counted_exactly_across_chunks(chunk, monkeypatch):
    import random

    import leaderboard.submission as submission

    monkeypatch.setattr(submission, "CHUNK", chunk)
    rng = random.Random(chunk)
    for _ in range(1500):
        noise = "".join(rng.choice('ab",:{[\\\n ') for _ in range(rng.randint(0, 60)))  # mostly broken JSON
        tokens = [
            ('"' + "".join(rng.choice(["a", ",", ":", "{", "[", "\\\\", '\\"', " "]) for _ in range(rng.randint(0, 6))) + '"')
            if rng.random() < 0.4
            else rng.choice([",", ":", "{", "[", "1", " ", "\n", "}", "]"])
            for _ in range(rng.randint(0, 12))
        ]
        wellformed = "".join(tokens)  # strings with escapes, no backslash outside them
        for lines in (True, False):
            # never fewer than a decoder could build (memory stays bounded); exact on well-formed text
            assert submission._marks_outside_strings(noise.encode(), lines, 10**9) >= decoder_marks(noise, lines)
            assert submission._marks_outside_strings(wellformed.encode(), lines, 10**9) == decoder_marks(wellformed, lines)


def test_a_text_shorter_than_the_value_limit_is_never_over_it():
    """values_over answers a text shorter than the limit without counting (a value but the first follows a
    byte of its own); at and past the length the count decides, so a text of only marks is over by one."""
    import leaderboard.submission as submission

    for n in (1, 2, 10, 1000):
        marks = b"[" * n  # n + 1 values by the rough count: the most n bytes can hold
        assert submission.rough_values(marks) == n + 1
        assert not submission.values_over(marks, n + 1)
        assert submission.values_over(marks, n) == (True if n < submission.MAX_DEPTH else "depth")
        assert not submission.values_over(marks, n + 2)


# ---- a valid file at the size cap ------------------------------------------------------------------

# the CLI scoring it peaked at 1,246 MB before predictions were normalised in runs (531 MB after); 722 MB since a
# task's two normalisations are held together for its one kernel call (futurepedia_official.FileWork._recalls)
SCORE_PEAK_MB = 900


def test_a_valid_file_of_long_predictions_is_scored_within_its_memory_bound(tmp_path):
    """Every monolingual and cross-lingual unit of the gold answered with a 10,000-character prediction
    (~2,560 of them, 50 MB decompressed, mixed scripts): both protocols are scored and the child's peak stays
    bounded (each normalisation holds one run of texts at a time, a task's code points 4 bytes a character)."""
    gold = GOLD["futurepedia"]
    words = ["Lisbonne", "리스본", "准将", "Pays-Bas", "insufficient information", "ガⅫ", "42"]
    text = (" ".join(words) + " ") * 400
    lines = []
    for task, units in (("monolingual", gold.unit_keys["monolingual"]), ("crosslingual", gold.unit_keys["crosslingual"])):
        for k, unit in enumerate(units):
            rec = {"task": task, "id": unit[0], "query_lang": unit[1], "prediction": text[k % 50 : k % 50 + 10_000]}
            if task == "crosslingual":
                rec["doc_lang"] = unit[2]
            lines.append(json.dumps(rec, ensure_ascii=False).encode())
    path = write_gz(tmp_path / "long.jsonl.gz", header("futurepedia") + b"\n", b"\n".join(lines), 1, b"\n", b"\n")
    code, err, peak = cli("score", str(path), "--json")
    assert code == 0, err[-500:]
    assert peak < SCORE_PEAK_MB, f"peak RSS {peak} MB"
