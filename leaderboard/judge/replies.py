"""Strict parsing of judge replies: JSON only, schema-checked, ids complete.

Anything off (prose around the JSON, a missing id, a string where a boolean
belongs, NaN) raises MalformedReply; the client retries a bounded number of
times and then records a judge failure. Nothing is ever guessed or repaired.
"""

from __future__ import annotations

import json
from typing import Any


class MalformedReply(ValueError):
    pass


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
}
_KNOWN = {"type", "properties", "required", "additionalProperties", "items"}


def check_schema(schema: dict[str, Any], value: Any, path: str = "$") -> None:
    """Validate `value` against the JSON-schema subset used in prompts.py (no dependency needed)."""
    unknown = set(schema) - _KNOWN
    if unknown:  # a keyword we do not enforce must not be silently ignored
        raise ValueError(f"unsupported schema keyword(s) {sorted(unknown)}")
    kind = schema["type"]
    ok = isinstance(value, _TYPES[kind]) and not (kind == "integer" and isinstance(value, bool))
    if not ok:
        raise MalformedReply(f"{path}: expected {kind}, got {type(value).__name__}")
    if kind == "object":
        props = schema.get("properties", {})
        missing = [k for k in schema.get("required", []) if k not in value]
        if missing:
            raise MalformedReply(f"{path}: missing {missing}")
        if schema.get("additionalProperties") is False and set(value) - set(props):
            raise MalformedReply(f"{path}: unexpected {sorted(set(value) - set(props))}")
        for key, sub in props.items():
            if key in value:
                check_schema(sub, value[key], f"{path}.{key}")
    elif kind == "array":
        for i, item in enumerate(value):
            check_schema(schema["items"], item, f"{path}[{i}]")


def _reject_constant(name: str) -> Any:
    raise MalformedReply(f"non-standard JSON constant {name}")


def parse_json_object(content: str | None, schema: dict[str, Any]) -> dict[str, Any]:
    if content is None or not content.strip():
        raise MalformedReply("empty reply")
    try:
        value = json.loads(content, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise MalformedReply(f"not JSON: {e.msg} at {e.pos}") from None
    check_schema(schema, value)
    return value


def _by_id(entries: list[dict[str, Any]], key: str, n: int) -> list[bool]:
    ids = [e["id"] for e in entries]
    if sorted(ids) != list(range(1, n + 1)):
        raise MalformedReply(f"ids must be exactly 1..{n} once each, got {ids[:50]}")
    return [e[key] for e in sorted(entries, key=lambda e: e["id"])]


def _clean_facts(facts: list[str]) -> list[str]:
    return [f.strip() for f in facts if f.strip()]


def gold_facts(value: dict[str, Any]) -> list[str]:
    facts = _clean_facts(value["facts"])
    if not facts:  # a non-empty gold answer always states something
        raise MalformedReply("no gold fact extracted")
    return facts


def response_check(value: dict[str, Any], n_gold: int) -> tuple[list[str], list[bool]]:
    return _clean_facts(value["response_facts"]), _by_id(value["gold_facts"], "stated", n_gold)


def fact_support(value: dict[str, Any], n_facts: int) -> list[bool]:
    return _by_id(value["response_facts"], "supported", n_facts)
