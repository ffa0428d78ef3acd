"""The HTTP pieces that the OpenAI-compatible judges (``openai.py``) and the batch APIs
(``batch.py``) share: the aiohttp session of a run, the reading of an error body, and what a
request that got no HTTP answer says (or, for a server that cannot be reached, the run's stop)."""

from __future__ import annotations

import contextlib
import json
import socket
from typing import Any

from .base import JudgeFatalError


def _error_body(text: str) -> Any:
    """An error body as JSON, Gemini's list wrapping (``[{"error": {...}}]``) removed; None
    when it is not JSON."""
    try:
        payload = json.loads(text)
    except ValueError:
        return None
    if isinstance(payload, list) and payload and isinstance(payload[0], dict):
        return payload[0]
    return payload


def _error_message(text: str) -> str:
    """The ``error.message`` of an error body (also Gemini's list-wrapped one), or the body."""
    payload = _error_body(text)
    if isinstance(payload, dict):
        err = payload.get("error", payload)
        if isinstance(err, dict):
            return str(err.get("message") or err.get("detail") or err)
        if isinstance(err, str):
            return err
        detail = payload.get("detail") or payload.get("message")
        if detail:
            return str(detail)
    return text


def transport_failure(e: Exception, base_url: str) -> str:
    """What a request that got no HTTP answer says, for the retry log; a server that cannot be
    reached (a refused connection, a host name that does not resolve) stops the run at once."""
    import aiohttp

    if isinstance(e, aiohttp.ClientConnectorError) and _unreachable(e):
        raise JudgeFatalError(f"cannot reach {base_url} ({_reason(e)}): check the URL and that the server "
                              "is running") from None
    return f"{type(e).__name__}: {_short(str(e)) or 'timed out'}"


def _unreachable(e: Exception) -> bool:
    """A refused connection or a host name that does not resolve: no retry can help."""
    err = getattr(e, "os_error", None) or e.__cause__ or e.__context__
    return isinstance(err, (ConnectionRefusedError, socket.gaierror)) or "Name or service not known" in str(e)


def _reason(e: Exception) -> str:
    err = getattr(e, "os_error", None)
    if isinstance(err, ConnectionRefusedError):
        return "connection refused"
    if isinstance(err, socket.gaierror) or "Name or service not known" in str(e):
        return "unknown host"
    return type(e).__name__


def _short(text: Any, n: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= n else flat[:n] + "..."


class _HTTPClient(contextlib.AbstractAsyncContextManager):  # type: ignore[type-arg]
    """One aiohttp session per run."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.session: Any = None

    async def __aenter__(self) -> Any:
        import aiohttp

        self.session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self.timeout),
            connector=aiohttp.TCPConnector(limit=0),
        )
        return self.session

    async def __aexit__(self, *exc: Any) -> bool:
        await self.session.close()
        return False
