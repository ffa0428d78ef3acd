"""The one number formatter: how every front end (the command line's tables, the HTML report,
the Spaces' tables) and every signature writes a number."""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["format_number", "format_value", "format_readable", "exact_number"]

SHOWN_DIGITS = 4  # significant digits in a table (the JSON keeps them all)
SMALLEST_SHOWN = 1e-4  # a report for people shows a non-zero value closer to 0 as "< 0.0001"


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


def format_readable(value: Any, digits: int = SHOWN_DIGITS, smallest: float = SMALLEST_SHOWN) -> str:
    """A number for a page a person reads: as :func:`format_number`, but never in exponent
    notation. A non-zero value closer to 0 than ``smallest`` reads ``< 0.0001`` (``> -0.0001``
    below 0: BLEU's unsmoothed sentence score of ``3.363e-78`` is not a figure anyone reads);
    a value of ``10 ** digits`` or more reads as the whole number nearest it. Pair it with
    :func:`exact_number` (a tooltip) where the exact value matters."""
    if isinstance(value, bool) or not isinstance(value, float) or not math.isfinite(value):
        return format_number(value, digits)
    if value != 0.0 and abs(value) < smallest:
        limit = format_number(smallest, digits)
        return f"< {limit}" if value > 0 else f"> -{limit}"
    if abs(value) >= 10 ** digits:
        return str(round(value))
    return format_number(value, digits)


def exact_number(value: Any) -> str:
    """Every digit of a number (``repr``: the shortest text that reads back as the same float)."""
    return repr(value) if isinstance(value, float) else format_number(value)
