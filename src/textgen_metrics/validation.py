"""Input checks shared by every metric: errors name the argument and the example index."""

__all__ = ["as_list", "check_texts", "check_references", "check_same_length", "check_choice", "check_columns"]


def as_list(name, values):
    """``values`` as a list; a string, bytes, a mapping or a non-iterable is a TypeError."""
    if values is None:
        raise ValueError(f"{name}: missing (got None); pass a list with one entry per example")
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise TypeError(
            f"{name}: expected a list with one entry per example, got {type(values).__name__}"
        )
    return list(values)


def _text_error(name, index, value, what="str"):
    got = "None" if value is None else type(value).__name__
    return TypeError(f"{name}[{index}]: expected {what}, got {got}")


def check_texts(name, values):
    """A list of strings, one per example."""
    values = as_list(name, values)
    for i, v in enumerate(values):
        if not isinstance(v, str):
            raise _text_error(name, i, v)
    return values


def check_references(name, values, allow_empty_list=False):
    """References: each example a string or a non-empty list of strings; returns list[list[str]]."""
    values = as_list(name, values)
    out = []
    for i, v in enumerate(values):
        if isinstance(v, str):
            out.append([v])
            continue
        if v is None or isinstance(v, (bytes, dict)) or not hasattr(v, "__iter__"):
            raise _text_error(name, i, v, "str or list of str")
        refs = list(v)
        if not refs and not allow_empty_list:
            raise ValueError(f"{name}[{i}]: empty list; give at least one string")
        for j, r in enumerate(refs):
            if not isinstance(r, str):
                raise _text_error(f"{name}[{i}]", j, r)
        out.append(refs)
    return out


def check_same_length(**columns):
    """Every column has the same number of examples."""
    lengths = {k: len(v) for k, v in columns.items()}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k}={n}" for k, n in lengths.items())
        raise ValueError(f"inputs differ in length ({desc}); each needs one entry per example")
    return next(iter(lengths.values()), 0)


def check_choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"{name}: {value!r} is not one of {sorted(choices)}")
    return value


def check_columns(columns, inputs, normalize_references=False):
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
            raise ValueError(f"{name}: missing; give {', '.join(columns)} together")
    checked = {}
    for name, kind in columns.items():
        if kind == "text":
            checked[name] = check_texts(name, given[name])
        elif kind == "text_or_list":
            refs = check_references(name, given[name])
            raw = as_list(name, given[name])
            mixed = any(isinstance(v, str) for v in raw) and not all(isinstance(v, str) for v in raw)
            checked[name] = refs if (mixed or normalize_references) else raw
        else:
            values = as_list(name, given[name])
            for i, v in enumerate(values):
                check_texts(f"{name}[{i}]", v)
            checked[name] = values
    check_same_length(**checked)
    return checked
