"""docs/ARCHITECTURE.md stays true: the import graph of leaderboard/ and app.py, read from the source (imports
inside functions included, relative ones resolved), has no cycle and no import against the documented layer
order; and nothing below the entry points reads the environment (leaderboard/settings.py is built from it there).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "leaderboard"
# Reading the environment is the entry points' job (and environment.py's, for the default data folder).
ENV_READERS = {"app.py", "leaderboard/cli.py", "leaderboard/environment.py"}
# The one cycle another branch removes (admission.py; PR review receives its collaborators as arguments).


def modules(root: Path = ROOT) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package) for every module of the package, and app.py."""
    found = {"app": (root / "app.py", False)}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def imports_of(name: str, path: Path, is_package: bool, known: set[str]) -> set[str]:
    """The package's modules `name` imports, anywhere in its source (a name imported from a package counts as
    its submodule when there is one: `from . import views` is leaderboard.ui.views)."""
    targets: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets += [f"{module}.{a.name}" if f"{module}.{a.name}" in known else module for a in node.names]
    found = set()
    for target in targets:
        while target and target not in known:  # a name inside a module: the module
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    mods = modules(root)
    return {name: imports_of(name, path, is_pkg, set(mods)) for name, (path, is_pkg) in mods.items()}


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
    return found


def declared_layers(doc: Path = ROOT / "docs" / "ARCHITECTURE.md") -> list[tuple[str, list[str]]]:
    """The ```layers block: `layer: module, package.*, ...` lines, lowest first."""
    block = re.search(r"```layers\n(.*?)```", doc.read_text(encoding="utf-8"), re.S)
    assert block, f"{doc} has no ```layers block"
    layers = []
    for line in block.group(1).strip().splitlines():
        layer, _, members = line.partition(":")
        layers.append((layer.strip(), [m.strip() for m in members.split(",") if m.strip()]))
    return layers


def layer_of(graph: dict[str, set[str]], layers: list[tuple[str, list[str]]]) -> dict[str, int]:
    """Each module's layer number; a module matched by no entry or by two is an error naming it."""
    where: dict[str, list[int]] = {}
    for number, (_, members) in enumerate(layers):
        for member in members:
            hits = [m for m in graph if m == member.removesuffix(".*") or (member.endswith(".*") and m.startswith(member[:-1]))]
            assert hits, f"docs/ARCHITECTURE.md lists {member!r}, which matches no module"
            for m in hits:
                where.setdefault(m, []).append(number)
    missing = sorted(set(graph) - set(where))
    assert not missing, f"put these modules in a layer of docs/ARCHITECTURE.md: {missing}"
    twice = {m: [layers[n][0] for n in ns] for m, ns in where.items() if len(set(ns)) > 1}
    assert not twice, f"modules in two layers of docs/ARCHITECTURE.md: {twice}"
    return {m: ns[0] for m, ns in where.items()}


def upward_imports(graph: dict[str, set[str]], layers: list[tuple[str, list[str]]]) -> list[str]:
    level = layer_of(graph, layers)
    return sorted(
        f"{m} ({layers[level[m]][0]}) -> {t} ({layers[level[t]][0]})"
        for m, targets in graph.items()
        for t in targets
        if level[t] > level[m]
    )


GRAPH = import_graph()


def test_the_graph_sees_every_kind_of_import():
    # module level, relative, a submodule imported by name from its package, and an import inside a function
    assert "leaderboard.summarise" in GRAPH["leaderboard.tracks.base"]
    assert "leaderboard.ui.views" in GRAPH["leaderboard.ui.tabs.track"]  # `from .. import views`
    assert "leaderboard.convert" in GRAPH["leaderboard.cli"]  # imported inside main()
    assert {"leaderboard.service", "leaderboard.settings", "leaderboard.ui"} <= GRAPH["app"]


def test_the_checks_catch_a_cycle_and_an_upward_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [frozenset("abc")]
    layers = [("low", ["a", "b", "c", "e"]), ("high", ["d"])]
    assert upward_imports(graph, layers) == []
    assert upward_imports({**graph, "e": {"d"}}, layers) == ["e (low) -> d (high)"]


def test_no_import_against_the_layer_order():
    wrong = upward_imports(GRAPH, declared_layers())
    assert not wrong, "imports against the layer order of docs/ARCHITECTURE.md:\n" + "\n".join(wrong)


def test_no_import_cycle():
    found = [sorted(c) for c in cycles(GRAPH)]
    assert not found, f"import cycles: {found}"


def environment_reads(path: Path) -> list[str]:
    """Where a file reads or writes the process environment: os.environ, os.getenv / putenv / unsetenv, and those
    names imported from os."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "putenv", "unsetenv", "environb"):
            hits.append(f"{path.relative_to(ROOT)}:{node.lineno} os.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            hits += [f"{path.relative_to(ROOT)}:{node.lineno} from os import {a.name}" for a in node.names if "env" in a.name]
    return hits


def test_only_the_entry_points_read_the_environment():
    hits = [
        hit
        for path, _ in modules().values()
        if path.relative_to(ROOT).as_posix() not in ENV_READERS
        for hit in environment_reads(path)
    ]
    assert not hits, "read the environment in app.py / cli.py and pass the Settings down:\n" + "\n".join(hits)
    assert environment_reads(ROOT / "leaderboard" / "cli.py")  # the scan sees a read where there is one


def test_environment_imports_nothing_of_the_package():
    assert GRAPH["leaderboard.environment"] == set()
