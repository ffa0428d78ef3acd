"""Input checks shared by every metric: errors name the argument and the example index.

Texts are checked for type and for lone surrogates (``"\\ud800"``, what a file decoded with
``errors="surrogateescape"`` leaves behind): such a string is not valid Unicode, every
tokenizer and encoder downstream fails on it with a message that names neither the argument
nor the example, so it is caught here. Options are checked for type and range: a string where
a boolean belongs (``"False"`` is truthy) is a TypeError, and a non-finite or out-of-range
number (``inf``, ``nan``) a ValueError, each naming the option.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import InputError, InputTypeError, OptionError, OptionTypeError

__all__ = ["as_list", "check_texts", "check_references", "check_reference_sets", "check_same_length",
           "check_columns", "check_bool", "check_number", "check_unicode", "check_text_lists"]


def as_list(name: str, values: Any) -> list[Any]:
    """``values`` as a list; a string, bytes, a mapping or a non-iterable is a TypeError."""
    if values is None:
        raise InputError("missing (got None); pass a list with one entry per example", name)
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise InputTypeError(f"expected a list with one entry per example, got {type(values).__name__}", name)
    return list(values)


def _text_error(name: str, index: int, value: Any, what: str = "str", item: int | None = None) -> InputTypeError:
    got = "None" if value is None else type(value).__name__
    return InputTypeError(f"expected {what}, got {got}", name, index, item)


def _check_unicode(text: str, argument: str, index: int | None = None, item: int | None = None) -> None:
    if text.isascii():  # O(1) in CPython: the common case costs nothing
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InputError(
            f"lone surrogate {text[e.start]!r} at character {e.start}; the text is not valid "
            "Unicode (read the file with errors='replace', or remove the character)", argument, index, item) from None


def check_unicode(label: str, text: str) -> None:
    """A ValueError naming ``label`` and the character index when ``text`` holds a lone
    surrogate (not valid Unicode: it cannot be encoded, tokenised or written out)."""
    _check_unicode(text, label)


def _texts(name: str, values: Any, index: int | None = None) -> list[str]:
    """A list of strings: one per example (``index`` None), or the texts of example ``index``."""
    if index is None:
        texts: list[str] = as_list(name, values)
    elif values is None or isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise _text_error(name, index, values, "list of str")
    else:
        texts = list(values)
    for i, v in enumerate(texts):
        if not isinstance(v, str):
            raise _text_error(name, i, v) if index is None else _text_error(name, index, v, item=i)
        if not v.isascii():
            _check_unicode(v, name, i) if index is None else _check_unicode(v, name, index, i)
    return texts


def check_texts(name: str, values: Any) -> list[str]:
    """A list of strings, one per example."""
    return _texts(name, values)


def _reference_set(name: str, i: int, v: Any, allow_empty_list: bool) -> str | list[str] | tuple[str, ...]:
    """Example ``i``'s references, checked: a str, or a list or tuple of str as given (another
    iterable becomes a list)."""
    if isinstance(v, str):
        if not v.isascii():
            _check_unicode(v, name, i)
        return v
    if v is None or isinstance(v, (bytes, dict)) or not hasattr(v, "__iter__"):
        raise _text_error(name, i, v, "str or list of str")
    refs = v if isinstance(v, (list, tuple)) else list(v)
    if not refs and not allow_empty_list:
        raise InputError("empty list; give at least one string", name, i)
    for j, r in enumerate(refs):
        if not isinstance(r, str):
            raise _text_error(name, i, r, item=j)
        if not r.isascii():
            _check_unicode(r, name, i, j)
    return refs


def check_references(name: str, values: Any, allow_empty_list: bool = False) -> list[list[str]]:
    """References: each example a string or a non-empty list of strings; returns list[list[str]]."""
    out = []
    for i, v in enumerate(as_list(name, values)):
        refs = _reference_set(name, i, v, allow_empty_list)
        out.append([refs] if isinstance(refs, str) else list(refs))
    return out


def check_reference_sets(name: str, values: Any) -> list[str | list[str] | tuple[str, ...]]:
    """As ``check_references``, but each example comes back as given: a str stays a str, a list
    or tuple is not copied. No container per example, so checking a large batch leaves Python's
    garbage collector nothing to count (1,000 one-item lists set off a collection over every
    object made since the last one: a few milliseconds in a process that just imported)."""
    return [_reference_set(name, i, v, False) for i, v in enumerate(as_list(name, values))]


def check_text_lists(name: str, values: Any) -> list[list[str]]:
    """A list of strings per example (possibly empty), each checked."""
    return [_texts(name, v, i) for i, v in enumerate(as_list(name, values))]


def check_same_length(**columns: Sequence[Any]) -> int:
    """Every column has the same number of examples."""
    lengths = {k: len(v) for k, v in columns.items()}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k}={n}" for k, n in lengths.items())
        raise InputError(f"inputs differ in length ({desc}); each needs one entry per example")
    return next(iter(lengths.values()), 0)


def check_bool(name: str, value: Any) -> bool:
    """``value`` as a bool: True, False (numpy's too), or the integers 1 and 0.

    Anything else is a TypeError naming the option, a string above all: ``"False"`` is truthy
    in Python, so ``use_stemmer="False"`` would silently mean True."""
    if isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")):
        return bool(value)
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        raise OptionTypeError(f"{name}: expected True or False, got the string {value!r} "
                              "(a non-empty string would count as True)", name)
    raise OptionTypeError(f"{name}: expected True or False, got {value!r}", name)


def _bound(value: float, limit: float | None, is_open: bool, above: bool) -> bool:
    if limit is None:
        return True
    if above:
        return value > limit if is_open else value >= limit
    return value < limit if is_open else value <= limit


def _range_text(minimum: float | None, maximum: float | None, min_open: bool, max_open: bool) -> str:
    if minimum is not None and maximum is not None:
        return (f"in {'(' if min_open else '['}{minimum:g}, {maximum:g}{')' if max_open else ']'}")
    if minimum is not None:
        return f"{'greater than' if min_open else 'at least'} {minimum:g}"
    if maximum is not None:
        return f"{'less than' if max_open else 'at most'} {maximum:g}"
    return "finite"


def check_number(name: str, value: Any, *, minimum: float | None = None, maximum: float | None = None,
                 min_open: bool = False, max_open: bool = False, integer: bool = False) -> Any:
    """``value`` checked as a finite number within the bounds (``min_open``: the bound itself is
    excluded); ``integer=True`` wants a whole number and returns an int.

    A non-number (a bool or a string too) is a TypeError; ``nan``, an infinity or a value out of
    range is a ValueError; both name the option and the range."""
    what = "an integer" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise OptionTypeError(f"{name}: expected {what}, got {value!r}", name)
    if not isinstance(value, numbers.Integral) and not math.isfinite(value):
        raise OptionError(f"{name}: {value!r} is not a finite number; it must be "
                          f"{_range_text(minimum, maximum, min_open, max_open)}", name)
    if integer:
        if not isinstance(value, numbers.Integral):
            raise OptionTypeError(f"{name}: expected {what}, got {value!r}", name)
        value = int(value)
    if not (_bound(value, minimum, min_open, True) and _bound(value, maximum, max_open, False)):
        raise OptionError(f"{name}: {value!r} must be {_range_text(minimum, maximum, min_open, max_open)}", name)
    return value


def check_columns(columns: Mapping[str, str], inputs: Mapping[str, Any],
                  normalize_references: bool = False) -> dict[str, list[Any]]:
    """Check the given input columns (all declared columns come together) and return them.

    Kinds: ``text`` (a string each), ``text_or_list`` (a string or a non-empty list of strings
    each), ``list`` (a list of strings each, possibly empty). A ``text_or_list`` column comes
    back as lists throughout when ``normalize_references`` or when it mixes strings and lists
    (evaluate picks one feature form from the first example and would otherwise split a later
    plain string into characters).
    """
    given = {k: v for k, v in inputs.items() if v is not None}
    if not given:
        return {}
    for name in columns:
        if name not in given:
            raise InputError(f"missing; give {', '.join(columns)} together", name)
    checked: dict[str, list[Any]] = {}
    for name, kind in columns.items():
        if kind == "text":
            checked[name] = check_texts(name, given[name])
        elif kind == "text_or_list":
            refs = check_references(name, given[name])
            raw = as_list(name, given[name])
            mixed = any(isinstance(v, str) for v in raw) and not all(isinstance(v, str) for v in raw)
            checked[name] = refs if (mixed or normalize_references) else raw
        else:
            check_text_lists(name, given[name])
            checked[name] = as_list(name, given[name])
    check_same_length(**checked)
    return checked
