"""An answer's JSON schema as a hosted API is sent it, with each repeated part defined once.

A verdict schema names every numbered item (``"1"``, ``"2"``, ...) with the same verdict object;
written out, each item costs about 45 prompt tokens (o200k_base), since OpenAI and Anthropic put
the schema into the prompt. ``define_once`` moves every object schema that occurs more than once
into ``$defs`` and points each occurrence at it with a ``$ref``: two items cost 114 tokens
instead of 129, three 128 instead of 174, five 156 instead of 264. The schema accepts exactly the
same answers. ``$defs`` and local ``$ref`` are part of OpenAI's strict structured-output subset
and of Anthropic's tool schemas; llama.cpp's, vLLM's and xgrammar's grammars resolve them too,
but the local dialects are sent the schema written out (their tokens cost nothing, and a grammar
converter that skips ``$ref`` would lose the item bounds). ``inline_definitions`` is the inverse
(what a server reads).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

__all__ = ["define_once", "inline_definitions"]

_PREFIX = "#/$defs/"


def _key(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"))


def define_once(schema: Any) -> Any:
    """``schema`` with every object schema that occurs twice or more (by value) defined once in
    ``$defs`` (``item``, ``item2``, ... in the order first met) and referenced where it stood (a
    repeated part inside a repeated one gets its own definition too). The root stays an object
    schema. A schema with no repeated object, or one with ``$defs`` of its own, comes back
    unchanged."""
    if not isinstance(schema, dict) or "$defs" in schema:
        return schema
    seen: Counter[str] = Counter()

    def count(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and node is not schema:
                seen[_key(node)] += 1
            for value in node.values():
                count(value)
        elif isinstance(node, list):
            for value in node:
                count(value)

    count(schema)
    names: dict[str, str] = {}
    defs: dict[str, Any] = {}

    def replace(node: Any) -> Any:
        if isinstance(node, dict):
            key = _key(node) if node.get("type") == "object" and node is not schema else None
            if key is not None and seen[key] > 1:
                if key not in names:
                    names[key] = f"item{len(names) + 1}" if names else "item"
                    defs[names[key]] = {k: replace(v) for k, v in node.items()}
                return {"$ref": _PREFIX + names[key]}
            return {k: replace(v) for k, v in node.items()}
        if isinstance(node, list):
            return [replace(v) for v in node]
        return node

    body = replace(schema)
    return {"$defs": defs, **body} if defs else schema


def inline_definitions(schema: Any) -> Any:
    """``schema`` with every local ``$ref`` (``#/$defs/name``) replaced by its definition and
    ``$defs`` dropped: the schema ``define_once`` was given."""
    if not isinstance(schema, dict):
        return schema
    defs = schema.get("$defs", {})

    def expand(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(_PREFIX) and len(node) == 1:
                return expand(defs[ref[len(_PREFIX):]])
            return {k: expand(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [expand(v) for v in node]
        return node

    return expand(schema)
