"""Which web pages may open the live WebSocket: the page's own origin, and those the operator
allows.

A browser sends an ``Origin`` header with every WebSocket handshake, and a WebSocket is not
bound by the same-origin policy: without this check any web site a user visits could stream to
the service from their browser. :func:`origin_allowed` accepts a handshake whose ``Origin`` is
the service's own (scheme, host and port as the ``Host`` header names them), one listed in
``HANDREADER_ALLOWED_ORIGINS`` (comma-separated, ``https://tables.example:8443``; ``*`` allows
every origin), and one without ``Origin`` at all (a program, not a browser: it could send any
header it likes anyway). ``Origin: null`` (a sandboxed frame, a file) is refused unless listed.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

__all__ = ["ORIGINS_ENV", "normal_origin", "origin_allowed", "parse_allowed_origins"]

ORIGINS_ENV = "HANDREADER_ALLOWED_ORIGINS"
"""The environment variable listing the other origins allowed to open ``WS /v1/live``."""

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def normal_origin(text: str) -> str:
    """``scheme://host:port`` in lower case with the port made explicit; ValueError for text
    that is no origin (``null`` is kept as it is)."""
    text = text.strip().lower()
    if text in ("null", "*"):
        return text
    parts = urlsplit(text)
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"{text!r} is no origin: scheme://host[:port]")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        raise ValueError(f"{text!r} is no origin: scheme://host[:port], nothing after it")
    port = parts.port or _DEFAULT_PORTS[parts.scheme]
    return f"{parts.scheme}://{parts.hostname}:{port}"


def parse_allowed_origins(text: str) -> tuple[str, ...]:
    """The origins of a comma-separated list, normalised; ValueError names a bad one."""
    return tuple(normal_origin(item) for item in text.split(",") if item.strip())


def origin_allowed(headers: Mapping[str, str], allowed: tuple[str, ...] = ()) -> bool:
    """Whether a handshake with these headers may connect (see the module docstring)."""
    origin = headers.get("origin")
    if origin is None:
        return True
    if "*" in allowed:
        return True
    try:
        given = normal_origin(origin)
    except ValueError:
        return False
    if given in allowed:
        return True
    if given == "null":
        return False
    scheme = given.split("://", 1)[0]
    host = headers.get("host", "")
    try:
        own = normal_origin(f"{scheme}://{host}") if host else ""
    except ValueError:
        return False
    return given == own
