"""One class per tab of the page: each builds its components, wires its events and restores itself from a permalink.

A tab unit has `id`, `restore_outputs`, `restore(params, tab) -> {component: update}` and `wire(page, tab)`;
layout.build opens a gr.Tab per unit and calls them. Restoring returns components by name, never by position.
"""

from .about import AboutTab
from .common import Page
from .compare import CompareTab
from .submit import SubmitTab
from .system import SystemTab
from .track import TrackTab

__all__ = ["AboutTab", "CompareTab", "Page", "SubmitTab", "SystemTab", "TrackTab"]
