"""Deterministic synthetic demo data: gold files and submissions, one generator module per track.

Nothing here comes from the real benchmarks. The gold files share only their
schemas (field names, id and path formats, value shapes) with the published
files; every question, answer, fact and qrel is built from small templates and
vocabularies with seeded generators, so one seed always gives byte-identical
files. The lists a track publishes (domains, languages, datasets, ...) come from
its module in leaderboard/tracks/, never a copy.

Submissions are generated from the gold files on disk (never from in-memory
state), so the same code makes the bundled demo systems and, for benchmarks,
any number of extra submissions against bigger synthetic (or real) gold. Each
generator reads that gold back with its own small reader, on purpose not the
scorer's: see the comment at each reader.

    python -m leaderboard demo [--out DIR]   # regenerates assets/demo
    python -m leaderboard.demo [OUT_DIR]     # the same

The registry: `GENERATORS` maps a track name to its `DemoGenerator` (see
demo/common.py for what one holds), and `make_gold` / `make_submissions` /
`write_demo` look the track up there; a track without a generator is an error,
never another track's data. To give a new track demo data, write
`leaderboard/demo/<track>.py` ending in

    GENERATOR = DemoGenerator(TRACK, make_gold, demo_submissions, bench_submissions,
                              benchmark="...", gold_layout="...")

and add the module to the one tuple `_BUILT_IN` below. A track defined outside
the package (a plugin, a test) registers its generator with the one call
`leaderboard.demo.register(GENERATOR)` instead (in a test, scope it with
`monkeypatch.setitem(leaderboard.demo.GENERATORS, name, generator)` so that
later `write_demo` calls do not see it).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from . import futurepedia, unidoc, vdr
from .common import DemoGenerator, Submission, rng_for, write

DEMO_DIR = Path(__file__).resolve().parents[2] / "assets" / "demo"

_BUILT_IN = (unidoc, futurepedia, vdr)  # one entry per track, in the order the demo README lists them
GENERATORS: dict[str, DemoGenerator] = {module.GENERATOR.track: module.GENERATOR for module in _BUILT_IN}
TRACKS = tuple(GENERATORS)  # the built-in tracks, as before the registry (GENERATORS also holds registered ones)

# Names importable from leaderboard.demo before it became a package, kept for their callers.
UNIDOC_DOMAINS, UNIDOC_ANSWER_TYPES = unidoc.UNIDOC_DOMAINS, unidoc.UNIDOC_ANSWER_TYPES
LANGS = futurepedia.LANGS
VIDORE_V1, VIDORE_V2, qrels_filename = vdr.VIDORE_V1, vdr.VIDORE_V2, vdr.qrels_filename

SIZES = ("demo", "bench")


def register(generator: DemoGenerator) -> DemoGenerator:
    """Add a track's demo generator; a second generator for one track is an error, not a replacement."""
    if generator.track in GENERATORS:
        raise ValueError(f"a demo generator for track {generator.track!r} is already registered")
    GENERATORS[generator.track] = generator
    return generator


def generator_for(track: str) -> DemoGenerator:
    try:
        return GENERATORS[track]
    except KeyError:
        known = ", ".join(GENERATORS) or "none"
        raise ValueError(
            f"no demo generator for track {track!r} (registered: {known}); "
            "a new track registers one, see leaderboard/demo/__init__.py"
        ) from None


def make_gold(track: str, out_dir: Path, seed: int = 0, *, size: str = "demo") -> Path:
    """Write synthetic gold for `track` into `out_dir`; return the path to pass as `--gold`.

    size="demo": the bundled sizes (12 questions per unidoc domain, 40 Futurepedia
    records, 8 ViDoRe datasets of 30-36 queries over 200 pages). size="bench":
    unidoc with the published 1,742 questions (per-domain counts as published),
    197 Futurepedia records, and the 10 ViDoRe-V1 datasets x 500 queries over
    1,000 pages. Unidoc and vdr return `out_dir`, futurepedia the answers file.
    """
    if size not in SIZES:
        raise ValueError(f"size must be 'demo' or 'bench', not {size!r}")
    return generator_for(track).make_gold(Path(out_dir), seed, size)


def make_submissions(
    track: str, gold_dir: Path, n: int, seed: int = 0, *, questions_per_domain: int | None = None
) -> list[tuple[str, bytes]]:
    """`n` distinct synthetic submissions `(filename, file bytes)` valid against the gold in `gold_dir`.

    `gold_dir` is what `--gold` takes (unidoc: the folder of domain files;
    futurepedia: the answers file or its folder; vdr: the folder of .qrels).
    Files are mostly .jsonl, every 10th .json and every 10th (offset 5)
    .jsonl.gz. Unidoc: `questions_per_domain` makes each submission answer only
    the first k questions of each domain (smaller files; the rest count as
    missing). Vdr rankings hold 100 documents.
    """
    generator = generator_for(track)
    options = {} if questions_per_domain is None else {"questions_per_domain": questions_per_domain}
    unknown = sorted(set(options) - generator.options)
    if unknown:
        raise ValueError(f"{', '.join(unknown)} does not apply to the {track} track")
    rng = rng_for(seed, "bench", track)
    exts = [".json" if i % 10 == 0 else ".jsonl.gz" if i % 10 == 5 else ".jsonl" for i in range(n)]
    return generator.bench_submissions(Path(gold_dir), exts, rng, seed, **options)


def _readme(generators: list[DemoGenerator]) -> str:
    benchmarks = [g.benchmark for g in generators]
    named = ", ".join(benchmarks[:-1]) + " and " + benchmarks[-1] if len(benchmarks) > 1 else "".join(benchmarks)
    return (
        "# Demo data (synthetic)\n\n"
        "Generated by `python -m leaderboard.demo` (`leaderboard/demo/`, seed 0);\n"
        "do not edit by hand, regenerate instead. Every question, answer, fact and\n"
        "qrel is synthetic: the files share only their schemas with the published\n"
        f"{named} gold files.\n\n"
        + "".join(f"- {g.gold_layout}\n" for g in generators)
        + "- `submissions/<track>/`: demo systems in the submission envelope\n"
    )


def write_demo(out_dir: Path, seed: int = 0) -> None:
    """Write the bundled demo: README.md, gold/<track>/..., submissions/<track>/... for every registered track.

    The gold/<track> and submissions/<track> folders are replaced, so a
    regeneration never leaves stale files behind.
    """
    out_dir = Path(out_dir)
    generators = list(GENERATORS.values())
    write(out_dir / "README.md", _readme(generators).encode())
    for generator in generators:
        track = generator.track
        for sub in ("gold", "submissions"):
            shutil.rmtree(out_dir / sub / track, ignore_errors=True)
        gold = make_gold(track, out_dir / "gold" / track, seed, size="demo")
        for name, data in generator.demo_submissions(gold, seed):
            write(out_dir / "submissions" / track / name, data)


__all__ = [
    "DEMO_DIR",
    "GENERATORS",
    "LANGS",
    "SIZES",
    "TRACKS",
    "UNIDOC_ANSWER_TYPES",
    "UNIDOC_DOMAINS",
    "VIDORE_V1",
    "VIDORE_V2",
    "DemoGenerator",
    "Submission",
    "generator_for",
    "make_gold",
    "make_submissions",
    "qrels_filename",
    "register",
    "write_demo",
]
