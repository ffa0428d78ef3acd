"""Checks of the inputs and options of the machine-translation metrics (BLEU, chrF, TER): each
error names the argument (and the example)."""

from __future__ import annotations

from typing import Any

from ..errors import OptionError
from ..validation import check_bool as flag

__all__ = ["flag", "whole"]


def whole(name: str, value: Any, minimum: int = 0) -> int:
    """``value`` as an int of at least ``minimum``; else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        kind = "a positive" if minimum == 1 else "a non-negative" if minimum == 0 else f"an at least {minimum}"
        raise OptionError(f"{name}: {value!r} must be {kind} integer", name)
    return value
