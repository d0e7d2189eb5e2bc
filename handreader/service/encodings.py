"""Request bodies come as they are: a body with a ``Content-Encoding`` other than ``identity``
(gzip, deflate, br...) is refused with 415 ``unsupported_encoding``.

The service reads a body's bytes as the photo or the JSON they are; a compressed body would be
read as its compressed bytes and refused for what it seems to be ("not a supported image ...
first bytes 1f 8b"), which names the wrong problem. :class:`IdentityBodies` (ASGI middleware
that ``create_app`` installs) answers before any route reads the body, with
``Accept-Encoding: identity`` as RFC 9110 (15.5.16) asks of this answer. Photos are compressed
already: a compressed request gains little.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from handreader.service.errors import error_response

__all__ = ["IdentityBodies", "body_encodings"]


def body_encodings(headers: Headers) -> list[str]:
    """The content codings a request's body is said to be in (``identity`` left out), or none
    when it carries no body."""
    has_body = headers.get("content-length", "0").strip() not in ("", "0") or (
        "transfer-encoding" in headers
    )
    if not has_body:
        return []
    named = ",".join(headers.getlist("content-encoding"))
    codings = [coding.strip().lower() for coding in named.split(",")]
    return [coding for coding in codings if coding and coding != "identity"]


class IdentityBodies:
    """ASGI middleware: a request whose body is in a content coding other than ``identity`` is
    answered 415 ``unsupported_encoding`` naming the coding, and its body left unread."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        encodings = body_encodings(Headers(scope=scope))
        if not encodings:
            await self.app(scope, receive, send)
            return
        named = ", ".join(repr(coding[:40]) for coding in encodings[:4])
        response = error_response(
            "unsupported_encoding",
            f"Content-Encoding {named} is not supported: send the body uncompressed",
        )
        response.headers["Accept-Encoding"] = "identity"
        await response(scope, receive, send)
