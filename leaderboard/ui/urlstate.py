"""The view in the URL: every tab writes its state as a query string, opening the URL restores it."""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode

# Pushed by the page whenever the hidden state box changes; never a full reload. Every view has a query (its tab
# at least): an empty one is the box before any view wrote it (a select handler in the page passing it on as the
# page starts), and leaves the address bar as it is (the permalink the page's load reads).
REPLACE_STATE_JS = """(q) => {
  if (!q) { return q; }
  if (window.location.search !== "?" + q) { window.history.replaceState(null, "", "?" + q); }
  return q;
}"""


def encode(params: dict) -> str:
    flat = []
    for k, v in params.items():
        if v is None or v == "" or v == []:
            continue
        for item in v if isinstance(v, (list, tuple)) else [v]:
            flat.append((k, str(item)))
    return urlencode(flat)


def decode(query: dict | str) -> dict[str, list[str]]:
    if isinstance(query, str):
        return parse_qs(query.lstrip("?"))
    out: dict[str, list[str]] = {}
    for k in query:
        values = query.getlist(k) if hasattr(query, "getlist") else [query[k]]
        out[k] = [str(v) for v in values]
    return out


def first(params: dict[str, list[str]], key: str, default=None):
    values = params.get(key)
    return values[0] if values else default
