"""Checks of the inputs and options of the machine-translation metrics (BLEU, chrF, TER): each
error names the argument (and the example)."""

from __future__ import annotations

from typing import Any

from ..errors import OptionError
from ..validation import check_bool as flag
from ..validation import check_references, check_same_length, check_texts

__all__ = ["flag", "whole", "texts_and_references"]


def texts_and_references(predictions: Any, references: Any) -> tuple[list[str], list[list[str]]]:
    """The predictions (a string each) and the references (a list of strings each, from a string
    or a non-empty list), checked; at least one example."""
    predictions = check_texts("predictions", predictions)
    references = check_references("references", references)
    n = check_same_length(predictions=predictions, references=references)
    if n == 0:
        raise ValueError("predictions: no examples; give at least one prediction")
    return predictions, references


def whole(name: str, value: Any, minimum: int = 0) -> int:
    """``value`` as an int of at least ``minimum``; else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        kind = "a positive" if minimum == 1 else "a non-negative" if minimum == 0 else f"an at least {minimum}"
        raise OptionError(f"{name}: {value!r} must be {kind} integer", name)
    return value
