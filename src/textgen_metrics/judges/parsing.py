"""One parser for every judge backend: find the JSON in an answer, repair common damage,
validate it against the request's schema.

Repairs: code fences and prose around the JSON, trailing commas, a missing closing quote or
brackets at the end (an answer cut by ``max_tokens``), Python literals (True/False/None).
Validation covers the JSON-schema subset the metrics use: ``type``, ``properties``,
``required``, ``additionalProperties: false``, ``items``, ``enum``, ``minItems``, ``maxItems``.
A wrong number of items is an error, never padded or cut.
"""

import json
import re

__all__ = ["JudgeParseError", "extract_json", "validate", "parse_answer"]


class JudgeParseError(ValueError):
    """The judge's answer is not valid JSON for the schema (the message says why)."""


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",(\s*[\]}])")


def _candidates(text):
    """Substrings that may hold the JSON value, most likely first."""
    for m in _FENCE.finditer(text):
        yield m.group(1).strip()
    # an unterminated fence (a cut answer)
    if "```" in text:
        yield text.split("```", 1)[1].lstrip("json").lstrip("JSON").strip()
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if starts:
        yield text[min(starts):].strip()
    yield text.strip()


def _balance(s):
    """Close an unterminated string and the brackets left open at the end of ``s``."""
    stack = []
    in_str = False
    escape = False
    for i, ch in enumerate(s):
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if stack and stack[-1] == ch:
                stack.pop()
                if not stack:
                    return s[: i + 1]  # the first complete value; ignore what follows
            else:
                s = s[:i]  # a stray closing bracket: cut there and close what is open
                break
    out = s
    if in_str:
        out += '"'
    out = re.sub(r"[,:]\s*$", "", out.rstrip())
    return out + "".join(reversed(stack))


def _loads(s):
    try:
        return json.loads(s)
    except json.JSONDecodeError:
        pass
    fixed = _TRAILING_COMMA.sub(r"\1", s)
    fixed = re.sub(r"\bTrue\b", "true", re.sub(r"\bFalse\b", "false", re.sub(r"\bNone\b", "null", fixed)))
    try:
        return json.loads(fixed)
    except json.JSONDecodeError:
        pass
    balanced = _TRAILING_COMMA.sub(r"\1", _balance(fixed))
    return json.loads(balanced)


def extract_json(text):
    """The first JSON object or array in ``text``, repaired if needed; JudgeParseError if none."""
    if not isinstance(text, str):
        raise JudgeParseError(f"the answer is {type(text).__name__}, not text")
    if not text.strip():
        raise JudgeParseError("the answer is empty")
    last = None
    for cand in _candidates(text):
        if not cand or cand[0] not in "{[":
            continue
        try:
            return _loads(cand)
        except (json.JSONDecodeError, ValueError) as e:
            last = e
    detail = f" ({last.msg} at position {last.pos})" if isinstance(last, json.JSONDecodeError) else ""
    raise JudgeParseError(f"no valid JSON object in the answer{detail}")


_TYPES = {
    "object": dict, "array": list, "string": str, "boolean": bool,
    "integer": int, "number": (int, float), "null": type(None),
}


def validate(value, schema, path="$"):
    """Raise JudgeParseError naming the path when ``value`` does not fit ``schema``."""
    expected = schema.get("type")
    if expected is not None:
        types = expected if isinstance(expected, list) else [expected]
        ok = False
        for t in types:
            py = _TYPES[t]
            if isinstance(value, py) and not (t in ("integer", "number") and isinstance(value, bool)):
                ok = True
        if not ok:
            raise JudgeParseError(f"{path}: expected {expected}, got {type(value).__name__}")
    if "enum" in schema and value not in schema["enum"]:
        raise JudgeParseError(f"{path}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                raise JudgeParseError(f"{path}: missing key {key!r}")
        if schema.get("additionalProperties") is False:
            extra = [k for k in value if k not in props]
            if extra:
                raise JudgeParseError(f"{path}: unexpected key {extra[0]!r}")
        for key, sub in props.items():
            if key in value:
                validate(value[key], sub, f"{path}.{key}")
    if isinstance(value, list):
        lo, hi = schema.get("minItems"), schema.get("maxItems")
        if lo is not None and hi is not None and lo == hi and len(value) != lo:
            raise JudgeParseError(f"{path}: expected exactly {lo} items, got {len(value)}")
        if lo is not None and len(value) < lo:
            raise JudgeParseError(f"{path}: expected at least {lo} items, got {len(value)}")
        if hi is not None and len(value) > hi:
            raise JudgeParseError(f"{path}: expected at most {hi} items, got {len(value)}")
        if "items" in schema:
            for i, item in enumerate(value):
                validate(item, schema["items"], f"{path}[{i}]")
    return value


def parse_answer(text, schema=None):
    """Extract, repair and validate a judge answer."""
    value = extract_json(text)
    if schema is not None:
        validate(value, schema)
    return value
