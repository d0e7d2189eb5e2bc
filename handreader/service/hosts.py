"""Which ``Host`` names the service answers, and which pages may write to it.

**DNS rebinding.** A web page on ``evil.example`` can make its name resolve to 127.0.0.1 and
then talk to a service on the visitor's loopback as if it were its own origin; the one thing it
cannot change is the ``Host`` header, which names ``evil.example``. :class:`HostCheck` answers
only requests (and WebSocket handshakes) whose ``Host`` is allowed: by default the loopback
names (``localhost``, ``127.0.0.1``, ``[::1]``) and the address the service listens on, plus the
names in ``HANDREADER_ALLOWED_HOSTS`` (comma-separated; ``*`` turns the check off). A service
listening on every address (``--host 0.0.0.0``) also answers any IP address as its ``Host``
(phones reach it by the machine's addresses; a rebinding page's ``Host`` is its own name, never
an address), and names only when listed. Anything else is answered 400 ``bad_host``, and a
WebSocket handshake is refused.

**Cross-site writes.** A browser sends ``Origin`` with every cross-site ``POST``, ``PUT``,
``PATCH`` and ``DELETE``, including a plain form's, and no site can forge it. Such a request
whose ``Origin`` is neither the service's own (its ``Host``) nor one of
``HANDREADER_ALLOWED_ORIGINS`` is answered 403 ``forbidden`` before any route runs: a page
elsewhere can neither write a deck nor log a verification through a visitor's browser.
Programs (no ``Origin``) are unaffected.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping

from starlette.types import ASGIApp, Receive, Scope, Send

from handreader.service.origins import origin_allowed

__all__ = [
    "ANY_ADDRESS",
    "BIND_ENV",
    "HOSTS_ENV",
    "LOOPBACK_NAMES",
    "HostCheck",
    "allowed_hosts",
    "host_allowed",
    "host_name",
]

HOSTS_ENV = "HANDREADER_ALLOWED_HOSTS"
"""The environment variable naming the other host names the service answers."""

BIND_ENV = "HANDREADER_BIND_HOST"
"""Set by ``handreader serve`` for its workers: the address the service listens on."""

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
ANY_ADDRESS = "<any IP address>"
"""In a set of allowed hosts: every ``Host`` that is an IP address (a service on every
address)."""

_EVERY_ADDRESS = frozenset({"0.0.0.0", "::", ""})
_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def host_name(header: str) -> str:
    """The name of a ``Host`` header without its port, lower case (``[::1]:8000`` is
    ``::1``)."""
    text = header.strip().lower()
    if text.startswith("["):
        return text[1 : text.find("]")] if "]" in text else text
    return text.rsplit(":", 1)[0] if text.count(":") == 1 else text


def allowed_hosts(environ: Mapping[str, str]) -> frozenset[str] | None:
    """The host names to answer (see the module docstring); None to answer every name."""
    listed = {host_name(item) for item in environ.get(HOSTS_ENV, "").split(",") if item.strip()}
    if "*" in listed:
        return None
    bind = environ.get(BIND_ENV)
    if bind is None and not listed:
        return None  # an app made in a program or a test: no bind address to go by
    names = set(LOOPBACK_NAMES) | listed
    if bind is not None:
        names.add(ANY_ADDRESS if host_name(bind) in _EVERY_ADDRESS else host_name(bind))
    return frozenset(names)


def host_allowed(name: str, hosts: frozenset[str] | None) -> bool:
    """Whether the host ``name`` (:func:`host_name`) is answered under ``hosts``."""
    if hosts is None or name in hosts:
        return True
    if ANY_ADDRESS not in hosts:
        return False
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostCheck:
    """ASGI middleware: refuse requests and handshakes to a host name not allowed, and
    cross-site writes (the module docstring)."""

    def __init__(
        self, app: ASGIApp, hosts: frozenset[str] | None, origins: tuple[str, ...] = ()
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.origins = origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {
            name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in scope.get("headers", [])
        }
        host = headers.get("host", "")
        if not host_allowed(host_name(host), self.hosts):
            await self._refuse(scope, send, 400, "bad_host", f"host {host!r} is not served here")
            return
        writes = scope["type"] == "http" and scope.get("method") in _WRITES
        if writes and not origin_allowed(headers, self.origins):
            origin = headers.get("origin")
            message = f"a write from another site ({origin!r}) is refused"
            await self._refuse(scope, send, 403, "forbidden", message)
            return
        await self.app(scope, receive, send)

    @staticmethod
    async def _refuse(scope: Scope, send: Send, status: int, code: str, message: str) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = json.dumps({"error": {"code": code, "message": message}}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
