"""Keeping secrets out of everything a judge reports.

A judge knows its own secrets (the API key); every text that leaves the engine — error
messages, log lines, answers kept in results and in the cache — goes through ``redact``, which
replaces each secret with ``[REDACTED]``, and also the value of any ``Authorization: Bearer``,
``api-key`` or ``x-api-key`` header written out in the text (a server body may echo a header
the judge never knew, e.g. a proxy's key).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["Redactor", "REDACTED"]

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
