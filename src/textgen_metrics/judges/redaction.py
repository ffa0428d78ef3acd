"""Keeping secrets out of everything a judge reports.

A judge knows its own secrets (the API key); every text that leaves the engine — error
messages, log lines, answers kept in results and in the cache — goes through ``redact``, which
replaces each secret with ``[REDACTED]``, and also the value of any ``Authorization: Bearer``,
``api-key`` or ``x-api-key`` header written out in the text (a server body may echo a header
the judge never knew, e.g. a proxy's key). An exception that leaves the engine is a copy made by
``redacted_error``: the same chain of causes, every message in it redacted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

__all__ = ["Redactor", "REDACTED", "RedactedError", "redacted_error"]

REDACTED = "[REDACTED]"

_HEADER_VALUES = re.compile(
    r"""(?ix)
    (\bBearer\s+)[^\s"',;]+                                      # Authorization: Bearer <token>
    | ((?:\bx-)?\bapi[-_]?key["']?\s*[:=]\s*["']?)[^\s"',;}]+     # api-key: <key>, "api_key": "<key>"
    """)


def _header_sub(m: re.Match[str]) -> str:
    return (m.group(1) or m.group(2) or "") + REDACTED


class Redactor:
    """``redactor(text)``: ``text`` with every known secret and header value replaced."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self.secrets = sorted({s for s in secrets if isinstance(s, str) and len(s) >= 4}, key=len, reverse=True)

    def __call__(self, text: str | None) -> str | None:
        if not text:
            return text
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return _HEADER_VALUES.sub(_header_sub, text)


class RedactedError(Exception):
    """Stands for an exception that could not be copied with its message redacted (its type
    needs more than a message): ``"<type>: <redacted message>"``."""


_PLAIN = (str, int, float, bool, type(None))


def _copy(error: BaseException, text: str, redact: Callable[[str | None], str | None]) -> BaseException:
    """``error``'s type with its message ``text`` (already redacted), else a RedactedError."""
    kind = type(error)

    def fits(copy: BaseException) -> bool:  # says the same, and nothing to redact in str or repr
        shown = (str(copy), repr(copy))
        return shown[0] == text and all(redact(s) == s for s in shown)

    attempts: list[Callable[[], BaseException]] = []
    if all(isinstance(a, _PLAIN) for a in error.args):  # rebuilt from its arguments, redacted
        attempts.append(lambda: kind(*(redact(a) if isinstance(a, str) else a for a in error.args)))

    def bare() -> BaseException:  # without its __init__ (one that takes more than a message)
        copy = kind.__new__(kind)
        copy.args = (text,)
        return copy

    attempts.append(bare)
    for attempt in attempts:
        try:
            copy = attempt()
            if fits(copy):
                return copy
        except Exception:  # a type that cannot be rebuilt so: the next way
            continue
    name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    return RedactedError(f"{name}: {text}")


def redacted_error(error: BaseException, redact: Callable[[str | None], str | None],
                   _done: dict[int, BaseException] | None = None) -> BaseException:
    """A copy of ``error`` to raise, keep or print: its message and those of every exception in its
    chain (``__cause__``, ``__context__``, notes) passed through ``redact``. Each copy has its
    original's type where that type can be rebuilt from the redacted message (else it is a
    ``RedactedError`` naming the type) and its original's traceback (code locations, not values);
    attributes beyond the message are not copied. The original is left as it is."""
    done = {} if _done is None else _done
    if id(error) in done:
        return done[id(error)]
    try:
        text = redact(str(error)) or ""
    except Exception:  # a __str__ that fails
        text = ""
    copy = _copy(error, text, redact)
    done[id(error)] = copy
    copy.__traceback__ = error.__traceback__
    if error.__cause__ is not None:
        copy.__cause__ = redacted_error(error.__cause__, redact, done)
    if error.__context__ is not None:
        copy.__context__ = redacted_error(error.__context__, redact, done)
    copy.__suppress_context__ = error.__suppress_context__  # after __cause__, which sets it
    notes = getattr(error, "__notes__", None)  # add_note (Python 3.11+)
    if isinstance(notes, list):
        setattr(copy, "__notes__", [redact(str(n)) or "" for n in notes])  # noqa: B010 (3.10: no attribute)
    return copy
