"""No module outside a track's own files, the registry and the demo generators spells or compares a track's name.

Everything else reads the track declarations (tracks/base.py): a new track is one module plus its demo
generator, and nothing elsewhere silently treats it differently (the way `_judgeable` once judged only
"unidoc"). Comments and docstrings may mention a track as an example or cite its spec; code and string values may not.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from leaderboard.tracks import TRACKS

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "leaderboard"
# Values that name a track for a reason stated here, not by habit.
ALLOWED = {
    # the prompt version is part of every judge cache key: renaming it would throw every stored verdict away
    ("leaderboard/judge/prompts.py", 'PROMPT_VERSION = "unidoc-judge-v2"'),
}


def owned_by_a_track(path: Path) -> bool:
    rel = path.relative_to(PACKAGE)
    parts = rel.parts
    if parts[0] == "tracks" and (rel.stem.split("_")[0] in TRACKS or rel.name == "__init__.py"):
        return True  # a track's own modules (`<track>.py`, `<track>_*.py` such as unidoc_gold.py), and the registry
    return parts[0] == "demo" or rel.name == "demo.py"  # the per-track demo generators (leaderboard/demo/<name>.py)


def sources() -> list[Path]:
    files = [p for p in PACKAGE.rglob("*.py") if not owned_by_a_track(p)]
    return [*files, ROOT / "app.py"]


def docstring_lines(text: str) -> set[int]:
    """First lines of the module's, classes' and functions' docstrings."""
    out = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                out.add(first.lineno)
    return out


def name_tokens(text: str, pattern: re.Pattern) -> list[tuple[int, str]]:
    """(line, source line) of every code or string token that spells a track name; comments and docstrings skipped."""
    lines = text.splitlines()
    docs = docstring_lines(text)
    hits = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.STRING and tok.start[0] in docs:
            continue
        if tok.type in (tokenize.NAME, tokenize.STRING) or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            if pattern.search(tok.string):
                hits.append((tok.start[0], lines[tok.start[0] - 1].strip()))
    return hits


def test_no_module_outside_the_tracks_names_a_track():
    pattern = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(map(re.escape, TRACKS)) + r")(?![A-Za-z0-9])", re.IGNORECASE)
    found = []
    for path in sources():
        rel = str(path.relative_to(ROOT))
        for line, src in name_tokens(path.read_text(encoding="utf-8"), pattern):
            if not any(rel == f and src.startswith(s) for f, s in ALLOWED):
                found.append(f"{rel}:{line}: {src}")
    found = list(dict.fromkeys(found))  # one line may hold several tokens
    assert found == []


def test_the_check_finds_a_name_in_code_and_strings_but_not_in_comments():
    pattern = re.compile(r"(?<![A-Za-z0-9])(unidoc)(?![A-Za-z0-9])", re.IGNORECASE)
    code = '"""Scores unidoc."""\nx = 1  # unidoc as an example\nif t == "unidoc":\n    pass\nunidoc_gold = f"{t}-UNIDOC"\n'
    assert sorted({line for line, _ in name_tokens(code, pattern)}) == [3, 5]
    assert owned_by_a_track(PACKAGE / "tracks" / "vdr.py") and not owned_by_a_track(PACKAGE / "ui" / "views" / "track.py")
