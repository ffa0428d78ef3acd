"""Checks of the options of the machine-translation metrics (BLEU, chrF, TER): each error names
the option."""

from __future__ import annotations

from typing import Any

__all__ = ["flag", "whole"]


def flag(name: str, value: Any) -> bool:
    """``value`` as a bool; a string or any other non-boolean is a TypeError naming ``name``
    (``"False"`` would otherwise count as true)."""
    if isinstance(value, bool):
        return value
    if type(value).__name__ == "bool_":  # numpy's booleans
        return bool(value)
    raise TypeError(f"{name}: expected True or False, got {value!r}")


def whole(name: str, value: Any, minimum: int = 0) -> int:
    """``value`` as an int of at least ``minimum``; else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        kind = "a positive" if minimum == 1 else "a non-negative" if minimum == 0 else f"an at least {minimum}"
        raise ValueError(f"{name}: {value!r} must be {kind} integer")
    return value
