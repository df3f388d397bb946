"""The track registry: the one place that lists the tracks."""

from __future__ import annotations

from .base import Axis, Gold, Metric, Scores, SystemField, Track
from .futurepedia import FuturepediaTrack
from .unidoc import UnidocTrack
from .vdr import VdrTrack

TRACKS: dict[str, Track] = {t.name: t for t in (UnidocTrack(), FuturepediaTrack(), VdrTrack())}


def get_track(name: str) -> Track:
    try:
        return TRACKS[name]
    except KeyError:
        raise KeyError(f"unknown track {name!r}: expected one of {', '.join(TRACKS)}") from None


__all__ = ["Axis", "Gold", "Metric", "Scores", "SystemField", "TRACKS", "Track", "get_track"]
