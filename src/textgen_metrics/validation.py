"""Input checks shared by every metric: errors name the argument and the example index."""

__all__ = ["as_list", "check_texts", "check_references", "check_same_length", "check_choice"]


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
