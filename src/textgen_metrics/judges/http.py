"""The HTTP pieces that the OpenAI-compatible judges (``openai.py``) and the batch APIs
(``batch.py``) share: the aiohttp session of a run, the reading of an error body, what a
request that got no HTTP answer says (or, for a server that cannot be reached, the run's stop),
and the :class:`URLPolicy` of a URL that someone other than the machine's owner typed (a Space's
visitor): no redirect followed, no reply body quoted, and, with ``public_only``, no connection
to an address that is not public, checked when the host name is resolved and again when the
socket is made (a name that resolves to a public address first and a private one later, DNS
rebinding, is refused at the second check)."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import ipaddress
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


@dataclasses.dataclass(frozen=True)
class URLPolicy:
    """How a judge treats a URL that someone other than the machine's owner typed (a Space's
    visitor): redirects are never followed (a 3xx is an error: a redirect could turn the request
    toward a host the typed URL does not name), an error never quotes the reply's body (only its
    HTTP status: the body may be a page the visitor may not read), and with ``public_only`` the
    judge connects to public addresses only (see :func:`public_address`)."""

    public_only: bool = True


_PUBLIC_ONLY = "a URL typed here may name public servers only"


class NonPublicAddress(OSError):
    """A connection refused by a :class:`URLPolicy`: the address is not a public one."""


def public_address(address: str) -> bool:
    """Whether ``address`` (an IPv4 or IPv6 address) is one anyone on the internet may reach:
    not loopback, private, link-local (cloud metadata endpoints: 169.254.169.254), multicast,
    reserved or unspecified; an IPv4 address mapped or embedded in IPv6 is judged as itself."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # an IPv6 zone (fe80::1%eth0) names no other host
    if isinstance(ip, ipaddress.IPv6Address):
        inner = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if inner is not None:
            return public_address(str(inner))
    return ip.is_global and not ip.is_multicast


def _refuse_private(address: str) -> None:
    if not public_address(address):
        raise NonPublicAddress(f"{address} is not a public address; {_PUBLIC_ONLY}")


class _PublicResolver:
    """aiohttp's threaded resolver, the addresses that are not public dropped: a host name that
    resolves to none other is refused (``NonPublicAddress``) before any connection."""

    def __init__(self) -> None:
        import aiohttp

        self._resolver = aiohttp.ThreadedResolver()

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET) -> list[Any]:
        found = await self._resolver.resolve(host, port, family)
        kept = [r for r in found if public_address(r["host"])]
        if not kept:
            raise NonPublicAddress(f"{host} resolves to no public address; {_PUBLIC_ONLY}")
        return kept

    async def close(self) -> None:
        await self._resolver.close()


def public_socket(addr_info: Any) -> socket.socket:
    """aiohttp's socket factory for ``public_only``: the address the socket is about to connect
    to is checked (an IP literal in the URL never meets the resolver; a resolver's answer is
    checked again here, at connect time)."""
    family, type_, proto, _, address = addr_info
    _refuse_private(str(address[0]))
    return socket.socket(family=family, type=type_, proto=proto)


def transport_failure(e: Exception, base_url: str) -> str:
    """What a request that got no HTTP answer says, for the retry log; a server that cannot be
    reached (a refused connection, a host name that does not resolve, an address a
    :class:`URLPolicy` refuses) stops the run at once."""
    import aiohttp

    refused = _refused(e)
    if refused is not None:
        raise JudgeFatalError(f"cannot reach {base_url}: {refused}") from None
    if isinstance(e, aiohttp.ClientConnectorError) and _unreachable(e):
        raise JudgeFatalError(f"cannot reach {base_url} ({_reason(e)}): check the URL and that the server "
                              "is running") from None
    return f"{type(e).__name__}: {_short(str(e)) or 'timed out'}"


def _unreachable(e: Exception) -> bool:
    """A refused connection or a host name that does not resolve: no retry can help."""
    err = getattr(e, "os_error", None) or e.__cause__ or e.__context__
    return isinstance(err, (ConnectionRefusedError, socket.gaierror)) or "Name or service not known" in str(e)


def _refused(e: BaseException) -> str | None:
    """The sentence of a ``NonPublicAddress`` behind ``e`` (aiohttp wraps it, and a happy-eyeballs
    connection that tried several addresses joins their errors into one OSError), else None."""
    seen: set[int] = set()
    err: BaseException | None = e
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if isinstance(err, NonPublicAddress):
            return str(err)
        err = getattr(err, "os_error", None) or err.__cause__ or err.__context__
    if _PUBLIC_ONLY in str(e):
        return f"an address that is not public; {_PUBLIC_ONLY}"
    return None


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
    """One aiohttp session per run; with a ``public_only`` :class:`URLPolicy`, its connector
    resolves and connects to public addresses only."""

    def __init__(self, timeout: float, policy: URLPolicy | None = None) -> None:
        self.timeout = timeout
        self.policy = policy
        self.session: Any = None

    async def __aenter__(self) -> Any:
        import aiohttp

        guard: dict[str, Any] = {}
        if self.policy is not None and self.policy.public_only:
            if "socket_factory" not in inspect.signature(aiohttp.TCPConnector).parameters:
                raise JudgeFatalError("a URL policy of public addresses needs aiohttp 3.12 or later (its connect-time "
                                      "check): pip install -U aiohttp")
            guard = {"resolver": _PublicResolver(), "socket_factory": public_socket}
        self.session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self.timeout),
            connector=aiohttp.TCPConnector(limit=0, **guard),
        )
        return self.session

    async def __aexit__(self, *exc: Any) -> bool:
        await self.session.close()
        return False
