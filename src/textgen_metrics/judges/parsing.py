"""One parser for every judge backend: find the JSON in an answer, repair formatting damage,
validate it against the request's schema.

- A ``<think>...</think>`` block (reasoning models) and Markdown code fences are removed first;
  prose before the first ``{`` or ``[`` is skipped.
- The JSON is read by the ``json-repair`` library, which copes with what small models write:
  single quotes, raw newlines inside strings, trailing commas, Python literals
  (``True``/``None``), unquoted keys. It is a parser, so text inside strings is never rewritten.
  (The engine never hands it an answer that the server cut off at its token limit: those are
  asked again or rejected before parsing, so closing brackets never turns a fragment into data.)
- Validation covers the JSON-schema subset the metrics use (``type``, ``properties``,
  ``required``, ``items``, ``enum``, ``minItems``, ``maxItems``). Enum values are matched after
  trimming, dropping a final full stop and case-folding (``"Yes"``, ``" YES."`` are ``"yes"``);
  keys the schema does not name are dropped, not fatal (valor's own examples carry extra keys).
  A wrong number of items is an error, never padded or cut. Every error names the path, so a
  re-ask can show the judge exactly what to fix.
- Verdicts keyed by item number (an object schema whose properties are ``"1"`` .. ``"n"``, closed
  with ``additionalProperties: false``): every number is required, a number that names no item is
  an error (not dropped as other unknown keys are), a key written ``" 2"`` or ``"02"`` is read as
  ``"2"``, and a list of ``{"index": k, ...}`` entries with each index once is read as the same
  object (the shape of earlier prompts, which small models still write). A key written twice in
  a well-formed answer is an error: which of the two is the verdict cannot be told.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["JudgeParseError", "JudgeRunawayError", "extract_json", "validate", "parse_answer", "strip_reasoning"]


class JudgeParseError(ValueError):
    """The judge's answer is not valid JSON for the schema (the message says why)."""


class JudgeRunawayError(JudgeParseError):
    """The judge's answer repeats itself (a list longer than its text could hold): asked again
    from the start, without the looping answer, which a model shown it tends to continue."""


_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_OPEN_THINK = re.compile(r"^\s*<(think|thinking|reasoning)>.*", re.S | re.I)
_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n?(.*?)```", re.S)


def strip_reasoning(text: str) -> str:
    """``text`` without reasoning blocks (``<think>...</think>``) and code-fence markers."""
    text = _THINK.sub("", text)
    if _OPEN_THINK.match(text):  # a think block never closed: nothing after it is an answer
        return ""
    fenced = _FENCE.search(text)
    if fenced:
        return fenced.group(1)
    return text


def extract_json(text: Any) -> Any:
    """The first JSON object or array in ``text``, read leniently; JudgeParseError if none."""
    if not isinstance(text, str):
        raise JudgeParseError(f"the answer is {type(text).__name__}, not text")
    body = strip_reasoning(text)
    if not body.strip():
        raise JudgeParseError("the answer is empty" if not text.strip() else
                              "the answer holds no JSON after its reasoning block")
    starts = [i for i in (body.find("{"), body.find("[")) if i >= 0]
    if not starts:
        raise JudgeParseError("no JSON object in the answer")
    candidate = body[min(starts):]
    try:  # a well-formed value: the first one, whatever follows it
        value, _ = _DECODER.raw_decode(candidate)
        return value
    except _RepeatedKey as e:
        raise JudgeParseError(str(e)) from None
    except ValueError:
        pass
    import json_repair

    try:
        value = json_repair.loads(candidate)
    except Exception as e:  # json-repair gives up on some inputs with an internal error
        raise JudgeParseError(f"no valid JSON object in the answer ({type(e).__name__})") from None
    if not isinstance(value, (dict, list)):
        raise JudgeParseError("no valid JSON object in the answer")
    return value


class _RepeatedKey(ValueError):
    pass


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _RepeatedKey(f"the key {key!r} is written twice in one object; write each key once")
        out[key] = value
    return out


_DECODER = json.JSONDecoder(object_pairs_hook=_no_repeated_keys)

_TYPES: dict[str, Any] = {
    "object": dict, "array": list, "string": str, "boolean": bool,
    "integer": int, "number": (int, float), "null": type(None),
}


def _fold(value: str) -> str:
    return value.strip().rstrip(".").strip().casefold()


def _check_type(value: Any, expected: Any, path: str) -> None:
    types = expected if isinstance(expected, list) else [expected]
    for t in types:
        if isinstance(value, _TYPES[t]) and not (t in ("integer", "number") and isinstance(value, bool)):
            return
    raise JudgeParseError(f"{path}: expected {expected}, got {type(value).__name__}")


def validate(value: Any, schema: Mapping[str, Any], path: str = "$") -> Any:
    """``value`` checked against ``schema`` and normalised (enum case, unknown keys dropped);
    JudgeParseError naming the path when it does not fit."""
    if "enum" in schema:
        choices = list(schema["enum"])
        if isinstance(value, str):
            folded = {_fold(str(c)): c for c in choices}
            value = folded.get(_fold(value), value)  # "Yes", " YES." -> "yes"; "4" -> 4
        elif isinstance(value, float) and value.is_integer() and int(value) in choices:
            value = int(value)
        if isinstance(value, bool) or value not in choices:
            raise JudgeParseError(f"{path}: {value!r} is not one of {choices}")
    item_map = _is_item_map(schema)
    if item_map:
        value = _as_item_map(value, path)
    expected = schema.get("type")
    if expected is not None:
        _check_type(value, expected, path)
    if isinstance(value, dict):
        props = schema.get("properties", {})
        closed = schema.get("additionalProperties") is False
        if item_map:
            value = {_item_key(k): v for k, v in value.items()}
        for key in schema.get("required", []):
            if key not in value:
                raise JudgeParseError(f"{path}: missing key {key!r}")
        out = {}
        for key, item in value.items():
            if key in props:
                out[key] = validate(item, props[key], f"{path}.{key}")
            elif item_map:
                numbers = f"1 to {len(props)}" if props else "none"
                raise JudgeParseError(f"{path}: {key!r} names no numbered item (the items are {numbers})")
            elif not props and not closed:
                out[key] = item
        return out
    if isinstance(value, list):
        lo, hi = schema.get("minItems"), schema.get("maxItems")
        if lo is not None and hi is not None and lo == hi and len(value) != lo:
            raise JudgeParseError(f"{path}: expected exactly {lo} items, got {len(value)}")
        if lo is not None and len(value) < lo:
            raise JudgeParseError(f"{path}: expected at least {lo} items, got {len(value)}")
        if hi is not None and len(value) > hi:
            raise JudgeParseError(f"{path}: expected at most {hi} items, got {len(value)}")
        if "items" in schema:
            return [validate(item, schema["items"], f"{path}[{i}]") for i, item in enumerate(value)]
    return value


def _is_item_map(schema: Mapping[str, Any]) -> bool:
    """An object of verdicts keyed by item number ``"1"`` .. ``"n"`` (closed; n may be 0)."""
    return (schema.get("type") == "object" and schema.get("additionalProperties") is False
            and all(k.isdigit() for k in schema.get("properties", {})))


def _item_key(key: str) -> str:
    """``" 2"``, ``"02"`` -> ``"2"``; other keys as they are."""
    stripped = key.strip()
    return str(int(stripped)) if stripped.isdigit() else key


def _as_item_map(value: Any, path: str) -> Any:
    """A list of ``{"index": k, ...}`` entries as the object ``{"k": {...}}`` (each index once)."""
    if not isinstance(value, list):
        return value
    out: dict[str, Any] = {}
    for i, entry in enumerate(value):
        index = entry.get("index") if isinstance(entry, dict) else None
        if isinstance(index, str) and index.strip().isdigit():
            index = int(index)
        if isinstance(index, bool) or not isinstance(index, int):
            raise JudgeParseError(f"{path}: write an object keyed by item number, e.g. {{\"1\": {{...}}}} "
                                  f"(entry {i} of the list has no item number)")
        if str(index) in out:
            raise JudgeParseError(f"{path}: item {index} has two verdicts; give exactly one per numbered item")
        out[str(index)] = {k: v for k, v in entry.items() if k != "index"}
    return out


def parse_answer(text: Any, schema: Mapping[str, Any] | None = None) -> Any:
    """Extract, repair and validate a judge answer."""
    value = extract_json(text)
    if schema is not None:
        value = validate(value, schema)
    return value
