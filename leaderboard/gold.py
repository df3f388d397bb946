"""Which gold each track is scored against: the bundled demo, a local path, or Hub datasets.

The bundled demo submissions were made for the demo gold: they join the board only for the
tracks scored against it (`demo_tracks`); next to real gold they would score 0 on most units.
`gold_label` says in a few words what the status line shows for each track.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .tracks import TRACKS, Track

DEMO = "demo"


def uses_demo_gold(track: Track, source) -> bool:
    """True when `source` (a track's gold setting) is unset or names the bundled demo gold itself."""
    if source is None or not str(source).strip():
        return True
    try:
        return Path(str(source).strip()).resolve() == track.demo_gold.resolve()
    except (OSError, ValueError):
        return False


def demo_tracks(gold: Mapping[str, str | None]) -> frozenset[str]:
    """The tracks whose demo submissions belong on the board: those scored against the demo gold."""
    return frozenset(name for name, track in TRACKS.items() if uses_demo_gold(track, gold.get(name)))


def gold_label(track: Track, source) -> str:
    """`demo`, a local path (its last two parts: the server's layout is not shown), or the track's words for
    a dataset id (Hub datasets at their commits). Never loads anything: the status line asks often."""
    if uses_demo_gold(track, source):
        return DEMO
    text = str(source).strip()
    path = Path(text)
    if path.exists():
        label = "local " + "/".join(path.resolve().parts[-2:])
    else:
        try:
            label = track.gold_label(text)
        except ValueError:  # a setting the scorer refuses (and reports): shown as given, cut short
            return f"{text[:80]} (invalid)"
    note = track.gold_note(text)
    return f"{label} ({note})" if note else label


def gold_labels(gold: Mapping[str, str | None]) -> dict[str, str]:
    return {name: gold_label(track, gold.get(name)) for name, track in TRACKS.items()}
