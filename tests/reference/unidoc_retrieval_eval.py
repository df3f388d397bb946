"""What UniDoc-Bench's `src/evaluation/retrieval_eval.py` (public fork huangyao8988/UniDoc-Bench, commit
819a41b) computes for P@10 and R@10, written here from reading it, to test the board's official protocol.

Per question (`match_chunk_or_not`, `find_pages_gt`, `parse_filename`, `evaluate_match_lists`):

- Gold pages are the keys `"<doc>_<page>"` of the used evidence items. A text chunk (metadata a dict with a
  `source` path) gives its doc id as `str(int(...))` of the digits before `_id` (leading zeros lost; "None"
  without them) and its pages from the `pg<n>` numbers of its name (two or more: the range of the last two, or
  the first alone when it runs backwards; one: that page; none: no page). A figure or table (metadata the image
  path) gives its folder as the doc id, kept as a string, and its page: the script looks the path up in the
  element files, which are not published; the page in the name `figure-<page>-<n>.jpg` is that page.
- A retrieved name: doc = the file name up to its first `_` (a string); pages = the integer after that `_`
  (page images `<doc>_<page>.jpg`), else the `pg<n>` numbers (one: that page; two: the range). Anything else
  raises inside the script (it stops); here `Unreadable`, or a miss with `unreadable="miss"` (the board's
  official protocol, which says so in its notes).
- Every candidate is walked (repeats included): it is a "duplicate match" when any of its pages is a gold page,
  and it covers the gold pages not covered yet. P@10 = duplicate matches among the first 10 / the number of
  candidates among the first 10; R@10 = pages covered by the first 10 / gold pages (0 without gold pages).
- A list of exactly two items is joined (`a + b`: the [texts, images] pair of a fusion system); two names
  would be joined into one string, which the spec reads as two candidates instead. An empty list is left out
  (`if match_list:`); the script only ever sees the questions of its input file.
- A domain's value is the mean over its questions; the paper's Avg. the mean of the domain values.
"""

from __future__ import annotations

import re
from statistics import mean


class Unreadable(ValueError):
    """The script stops with an error on this retrieved name."""


def gold_keys(chunk_used: dict) -> set[str]:
    keys: set[str] = set()
    for item in chunk_used.values():
        if not item["used"]:
            continue
        meta = item["metadata"]
        if isinstance(meta, dict) and "source" in meta:
            name = meta["source"].split("/")[-1]
            head = re.match(r"(\d+)_id", name)
            doc = str(int(head.group(1))) if head else "None"
            numbers = re.findall(r"pg(\d+)", name)
            if len(numbers) >= 2:
                a, b = int(numbers[-2]), int(numbers[-1])
                pages = list(range(a, b + 1)) if a <= b else [a]
            else:
                pages = [int(x) for x in numbers]
        else:
            doc = meta.split("/")[-2]
            pages = [int(meta.split("/")[-1].split("-")[1])]
        keys.update(f"{doc}_{p}" for p in pages)
    return keys


def read_name(name: str) -> tuple[str, list[int]]:
    base = name.split("/")[-1]
    doc = base.split("_")[0]
    try:
        return doc, [int(base.split("_")[1].split(".")[0])]
    except (IndexError, ValueError):
        numbers = re.findall(r"pg(\d+)", base)
        if len(numbers) == 1:
            numbers = numbers * 2
        if len(numbers) != 2:
            raise Unreadable(name) from None
        a, b = int(numbers[0]), int(numbers[1])
        return doc, list(range(a, b + 1))


def question_scores(retrieved: list, keys: set[str], k: int = 10, unreadable: str = "raise") -> tuple[float, float] | None:
    """(P@k, R@k) of one question, or None when the script leaves it out (an empty list)."""
    if len(retrieved) == 2 and all(isinstance(x, list) for x in retrieved):
        retrieved = retrieved[0] + retrieved[1]
    if not retrieved:
        return None
    covered: set[str] = set()
    new, hit = [], []
    for name in retrieved:
        try:
            doc, pages = read_name(name)
        except Unreadable:
            if unreadable == "raise":
                raise
            doc, pages = "", []
        fresh = matched = 0
        for p in pages:
            key = f"{doc}_{p}"
            if key in keys:
                matched = 1
                if key not in covered:
                    covered.add(key)
                    fresh += 1
        new.append(fresh)
        hit.append(matched)
    top = hit[:k]
    precision = sum(top) / len(top)
    recall = sum(new[:k]) / len(keys) if keys else 0.0
    return precision, recall


def evaluate(domains: dict[str, list[tuple[list, dict]]], k: int = 10, unreadable: str = "raise") -> dict:
    """{domain: {"precision": mean, "recall": mean, "length": questions scored}, "avg": {...}} over the
    questions each domain's input holds: domains[d] = [(retrieved names, chunk_used), ...]."""
    out: dict = {}
    for domain, items in domains.items():
        scored = [s for retrieved, used in items if (s := question_scores(retrieved, gold_keys(used), k, unreadable))]
        if scored:
            out[domain] = {"precision": mean(p for p, _ in scored), "recall": mean(r for _, r in scored), "length": len(scored)}
    values = [v for d, v in out.items()]
    out["avg"] = {m: mean(v[m] for v in values) for m in ("precision", "recall")}
    return out
