"""Short display text (system names and the like): one normal form, and what makes it unsafe to show.

Two names that look the same on the board must compare equal (NFKC folds
full-width letters, ligatures and compatibility forms; whitespace runs become
one space), and a name must not carry characters that are invisible or that
reorder the text around it (control and format characters: NUL, BEL,
zero-width spaces, bidi overrides).
"""

from __future__ import annotations

import re
import unicodedata

_WHITESPACE = re.compile(r"\s+")
_UNSAFE_CATEGORIES = ("Cc", "Cf")  # control, format


def normalize_text(s: str) -> str:
    """Unicode NFKC, whitespace runs collapsed to one space, trimmed."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", s)).strip()


def text_problem(s: str) -> str | None:
    """Why `s` cannot be shown as plain text (its first control or format character), or None.

    Meant for normalised text: whitespace controls (tab, newline) are spaces by then.
    """
    for pos, ch in enumerate(s):
        if unicodedata.category(ch) in _UNSAFE_CATEGORIES:
            name = unicodedata.name(ch, "")
            label = f"U+{ord(ch):04X}" + (f" {name}" if name else "")
            return f"contains an invisible control or format character ({label}) at position {pos + 1}"
    return None
