"""Keeping secrets out of everything a judge reports.

A judge knows its own secrets (the API key, the password of a URL it was given); every text that
leaves the engine — error messages, log lines, answers and their logprob tokens kept in results
and in the cache — goes through ``redact``, which replaces each secret with ``[REDACTED]``, and
also:

- the secret's other spellings: any letter case, with or without a ``Bearer``/``Basic``
  prefix, percent-encoded (``quote``, ``quote_plus``), and base64 (standard and URL-safe, at any
  of the three byte alignments a secret can have inside a longer base64 text: the HTTP Basic
  header of ``user:password``, a server that base64-encodes what it echoes);
- the value of any ``Authorization: Bearer``/``Basic``, ``api-key`` or ``x-api-key`` header
  written out in the text (a server body may echo a header the judge never knew, e.g. a proxy's
  key);
- the credentials of any URL in the text (``http://user:pass@host/v1`` becomes
  ``http://***@host/v1``: :func:`mask_url_credentials`), known to the judge or not.

An exception that leaves the engine is a copy made by ``redacted_error``: the same chain of
causes, every message in it redacted.
"""

from __future__ import annotations

import base64
import bisect
import itertools
import json
import re
import urllib.parse
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["Redactor", "REDACTED", "RedactedError", "redacted_error", "mask_url_credentials",
           "url_credentials", "secret_spellings"]

REDACTED = "[REDACTED]"
MASK = "***"

_HEADER_VALUES = re.compile(
    r"""(?ix)
    (\bBearer\s+)[^\s"',;]+                                      # Authorization: Bearer <token>
    | (\bAuthorization["']?\s*[:=]\s*["']?Basic\s+)[A-Za-z0-9+/=_-]+  # Authorization: Basic <user:pass>
    | ((?:\bx-)?\bapi[-_]?key["']?\s*[:=]\s*["']?)[^\s"',;}]+     # api-key: <key>, "api_key": "<key>"
    """)

_HEADER_HINTS = ("bearer", "authorization", "key")  # one is in every text _HEADER_VALUES matches

# scheme://userinfo@ (the userinfo up to the authority's last "@", as urllib.parse reads it)
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/?#\"'<>\\]+@")

_PREFIXES = re.compile(r"(?i)^(?:bearer|basic)\s+")
_MIN_SECRET = 4  # shorter strings are not redacted (they would cut ordinary words)
_MIN_ENCODED = 8  # a base64 piece shorter than this would match ordinary text


def _header_sub(m: re.Match[str]) -> str:
    return (m.group(1) or m.group(2) or m.group(3) or "") + REDACTED


def mask_url_credentials(text: str) -> str:
    """``text`` with the user and password of every URL in it masked: ``http://***@host/v1``."""
    return _URL_USERINFO.sub(lambda m: m.group(1) + MASK + "@", text) if "@" in text else text


def url_credentials(url: object) -> list[str]:
    """The secrets a URL carries in its userinfo: the password, and ``user:password`` (what an
    HTTP Basic header encodes); none for a URL without a password (a user name alone is shown
    masked, not treated as a secret)."""
    if not isinstance(url, str) or "@" not in url:
        return []
    try:
        parts = urllib.parse.urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:  # not a URL (a bad port...): nothing to take from it
        return []
    if not password:
        return []
    decoded = urllib.parse.unquote(password)
    return sorted({password, decoded, f"{urllib.parse.unquote(user or '')}:{decoded}"})


def _base64_pieces(raw: bytes) -> set[str]:
    """The base64 text that ``raw`` becomes inside any longer base64 text: for each of the three
    alignments, the whole 3-byte groups' encoding (standard and URL-safe)."""
    out = set()
    for offset in range(3):
        part = raw[offset:]
        part = part[:len(part) // 3 * 3]
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            piece = encode(part).decode("ascii")
            if len(piece) >= _MIN_ENCODED:
                out.add(piece)
    whole = base64.b64encode(raw).decode("ascii")
    if len(whole) >= _MIN_ENCODED:
        out.add(whole)
    return out


def secret_spellings(secret: str) -> set[str]:
    """``secret`` as a server or a log may write it: with and without a ``Bearer``/``Basic``
    prefix, percent-encoded, base64-encoded (letter case is the matcher's: any)."""
    bare = _PREFIXES.sub("", secret.strip())
    out = {s for s in (secret, bare) if len(s) >= _MIN_SECRET}
    for s in list(out):
        out.update({urllib.parse.quote(s, safe=""), urllib.parse.quote_plus(s)})
        out.update(_base64_pieces(s.encode("utf-8", "surrogatepass")))
    return {s for s in out if len(s) >= _MIN_SECRET}


class Redactor:
    """``redactor(text)``: ``text`` with every known secret (in each of its spellings), header
    value and URL credential replaced."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self.secrets = sorted({s for s in secrets if isinstance(s, str) and len(s.strip()) >= _MIN_SECRET},
                              key=len, reverse=True)
        spellings = sorted({v for s in self.secrets for v in secret_spellings(s)}, key=len, reverse=True)
        # one pass over the text, longest spelling first, any letter case
        self._pattern = re.compile("|".join(map(re.escape, spellings)), re.IGNORECASE) if spellings else None
        # each spelling also as a JSON string writes it (a quote or backslash escaped): what
        # ``logprobs`` looks for in the JSON text of a whole logprob list
        self._folded = sorted({f.casefold() for s in spellings for f in (s, json.dumps(s)[1:-1])})

    def __call__(self, text: str | None) -> str | None:
        if not text:
            return text
        # the regular expressions run only where a plain search finds what they look for: most
        # texts (an answer, each logprob token) hold none of it, and a search costs far less
        folded = text.casefold()
        if self._pattern is not None and any(s in folded for s in self._folded):
            text = self._pattern.sub(REDACTED, text)
        if any(hint in folded for hint in _HEADER_HINTS):
            text = _HEADER_VALUES.sub(_header_sub, text)
        return mask_url_credentials(text)

    def _nothing_in(self, text: str) -> bool:
        """Whether ``text`` holds nothing this redactor would replace (no secret's spelling, no
        header name, no URL credential), by plain searches."""
        folded = text.casefold()
        return "@" not in folded and not any(s in folded for s in (*self._folded, *_HEADER_HINTS))

    def _spans(self, text: str) -> list[tuple[int, int]]:
        """Where ``__call__`` would replace something in ``text``: (start, end) of each secret,
        header value and URL credential."""
        spans = [m.span() for m in self._pattern.finditer(text)] if self._pattern is not None else []
        for m in _HEADER_VALUES.finditer(text):
            prefix = m.group(1) or m.group(2) or m.group(3) or ""
            spans.append((m.start() + len(prefix), m.end()))
        spans.extend((m.end(1), m.end()) for m in _URL_USERINFO.finditer(text))
        return spans

    def logprobs(self, logprobs: Any) -> Any:
        """``logprobs`` (``[{"token", "logprob", "top_logprobs": [...]}, ...]``, or whatever a
        callable judge returned) with every string redacted, and every token that is part of a
        secret spread over several tokens (``"sk"``, ``"-abc"``...) replaced by ``[REDACTED]``:
        the answer's tokens are read as one text, the way a reader of the cache would join them."""
        try:
            whole = json.dumps(logprobs, ensure_ascii=False)
        except (TypeError, ValueError):  # not JSON (a function judge's own objects): every string is looked at
            whole = None
        if isinstance(logprobs, list) and logprobs and all(
                isinstance(t, dict) and isinstance(t.get("token"), str) for t in logprobs):
            tokens = [t["token"] for t in logprobs]
            if whole is not None and self._nothing_in(whole) and self._nothing_in("".join(tokens)):
                return logprobs  # the usual case, at the cost of two searches instead of one per string
            ends = list(itertools.accumulate(len(t) for t in tokens))
            hidden: set[int] = set()
            for start, end in self._spans("".join(tokens)):
                first = bisect.bisect_right(ends, start)  # the token holding the span's first character
                hidden.update(range(first, bisect.bisect_left(ends, end) + 1))
            return [{**self._scrub(entry), "token": REDACTED} if i in hidden else self._scrub(entry)
                    for i, entry in enumerate(logprobs)]
        return logprobs if whole is not None and self._nothing_in(whole) else self._scrub(logprobs)

    def _scrub(self, value: Any) -> Any:
        """``value`` (JSON-like) with every string in it redacted, the names of a dict's fields too."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {self._scrub(k): self._scrub(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._scrub(v) for v in value]
        return value


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
