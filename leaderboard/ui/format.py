"""Formatting and safety for anything shown on the page.

Text from submissions (names, descriptions, links, answers) is data: it is
escaped before it reaches any HTML, and a link is only ever a link when it is
http(s).
"""

from __future__ import annotations

import html
import math
import re

from ..metrics.stats import RESAMPLES

# Okabe-Ito: distinguishable with the common colour-vision deficiencies; every chart uses it.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
_URL = re.compile(r"^https?://[^\s<>\"']+$", re.IGNORECASE)


def num(value, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.{digits}f}"


def ci_text(low, high, digits: int = 3) -> str:
    if low is None or high is None or (isinstance(low, float) and math.isnan(low)):
        return ""
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def p_text(p: float, resamples: int = RESAMPLES) -> str:
    """A paired bootstrap's two-sided p-value: twice its smaller tail share of `resamples` replicates, so 0.0
    says only that no replicate crossed 0 (p below 2 / resamples), not that p is 0."""
    return f"< {2 / resamples:.3f}" if p == 0 else f"{p:.3f}"


def esc(text) -> str:
    """Escape for HTML (and for Plotly labels, which read a subset of HTML tags)."""
    return html.escape("" if text is None else str(text), quote=True)


def safe_url(url) -> str | None:
    return url if isinstance(url, str) and _URL.match(url) else None


def link_html(url, label=None) -> str:
    good = safe_url(url)
    text = esc(label if label is not None else url)
    if good is None:
        return text
    return f'<a href="{esc(good)}" target="_blank" rel="noopener noreferrer nofollow">{text}</a>'


def short(text, limit: int = 80) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
