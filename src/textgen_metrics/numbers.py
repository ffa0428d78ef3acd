"""The one number formatter: how every front end (the command line's tables, the HTML report,
the Spaces' tables) and every signature writes a number."""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["format_number", "format_value"]

SHOWN_DIGITS = 4  # significant digits in a table (the JSON keeps them all)


def format_number(value: Any, digits: int = SHOWN_DIGITS) -> str:
    """``digits`` significant digits (``f"{v:.4g}"``); a whole float as the integer it is (a count
    gathered as a float: ``1234.0`` is ``1234``); None as ``n/a``; anything else as ``str``."""
    if value is None:
        return "n/a"
    if isinstance(value, float) and not isinstance(value, bool):
        if not math.isfinite(value):
            return str(value)
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.{digits}g}"
    return str(value)


def format_value(value: Any, digits: int = SHOWN_DIGITS) -> str:
    """A result value for a table: a number by :func:`format_number`, a list or dict as JSON with
    its numbers so rounded, a text as it is."""
    if isinstance(value, (list, tuple, dict)):
        def short(v: Any) -> Any:
            if isinstance(v, float) and math.isfinite(v):
                return float(format_number(v, digits))
            if isinstance(v, (list, tuple)):
                return [short(x) for x in v]
            if isinstance(v, dict):
                return {k: short(x) for k, x in v.items()}
            return v
        return json.dumps(short(value), ensure_ascii=False)
    return format_number(value, digits)
