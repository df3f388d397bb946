"""numba for the scoring loops, imported at their first call and never at `import leaderboard.*`: the app's
start-up loads every track's gold and must not pay ~0.4 s for it. Without numba a loop runs interpreted (the
same numbers, much slower) or its caller takes its array form (`available`)."""

from __future__ import annotations

import logging
from functools import cache, lru_cache

log = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def numba_module():
    """numba, imported here on first use, or None (a warning logged once)."""
    try:
        import numba
    except ImportError:
        log.warning("numba is not installed: the scoring loops run interpreted (the same numbers, much slower)")
        return None
    return numba


def available() -> bool:
    return numba_module() is not None


@cache
def compiled(function, fastmath: frozenset[str] = frozenset()):
    """`function` compiled by numba (with these `fastmath` flags), or itself (interpreted) if numba is missing.

    cache=True keeps the machine code in __pycache__ beside the function's module, so a new process loads it
    instead of compiling; numba itself falls back to a per-user cache directory (NUMBA_CACHE_DIR, else
    ~/.cache/numba) when that folder is read-only, and when no cache location is writable at all we
    compile without a cache rather than fail.
    """
    numba = numba_module()
    if numba is None:
        return function
    options = {"nogil": True, **({"fastmath": set(fastmath)} if fastmath else {})}  # nogil: threads side by side
    try:
        return numba.njit(cache=True, **options)(function)
    except RuntimeError:  # "cannot cache function ...: no locator available": no writable cache directory
        return numba.njit(**options)(function)
