"""Security headers on every answer, and a content security policy on the page.

:class:`SecurityHeaders` (ASGI middleware that ``create_app`` installs) adds to every HTTP
answer ``X-Content-Type-Options: nosniff`` (a browser never guesses a type other than the one
sent), ``X-Frame-Options: DENY`` (no other site frames the service's pages to trick a click)
and ``Referrer-Policy: no-referrer``. The page (``GET /``) also gets :data:`PAGE_POLICY`: its
scripts, styles, images and connections come from the service itself only (``blob:`` and
``data:`` images are the photos and drawings it shows, ``mediastream:`` the camera), nothing
may frame it and no form posts elsewhere. ``/docs`` is left without a policy: Swagger UI starts
from an inline script.

:class:`HeadAsGet` answers ``HEAD`` wherever ``GET`` is answered (HTTP asks it of every
resource; uptime probes send it): the ``GET`` answer's status and headers, no body.

:class:`VaryByAccept` adds ``Vary: Accept`` to every answer at the paths whose content is
chosen by the ``Accept`` header (``/v1/annotated``: JPEG, PNG, or 406): its errors as well as
its images, since whether it answers 406 depends on that header too.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["COMMON_HEADERS", "PAGE_POLICY", "HeadAsGet", "SecurityHeaders", "VaryByAccept"]

COMMON_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
)
"""The headers every answer gets."""

PAGE_POLICY = (
    "default-src 'self'; img-src 'self' data: blob:; media-src 'self' blob: mediastream:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
"""The page's ``Content-Security-Policy``."""

_PAGES = frozenset({"/", "/index.html"})


class SecurityHeaders:
    """ASGI middleware adding :data:`COMMON_HEADERS` to every HTTP answer and
    :data:`PAGE_POLICY` to the page's."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        page = scope.get("path") in _PAGES

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [item for item in COMMON_HEADERS if item[0] not in present]
                if page:
                    headers.append((b"content-security-policy", PAGE_POLICY.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


class HeadAsGet:
    """ASGI middleware: a ``HEAD`` request runs as ``GET`` and its answer is sent without the
    body (its ``Content-Length`` kept, as HTTP wants of a ``HEAD`` answer)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "HEAD":
            await self.app(scope, receive, send)
            return

        async def without_body(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return  # the body is dropped; only its end is sent
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, without_body)


class VaryByAccept:
    """ASGI middleware adding ``Accept`` to the ``Vary`` header of every HTTP answer at
    ``paths`` (kept once where the route names it already)."""

    def __init__(self, app: ASGIApp, paths: Iterable[str]) -> None:
        self.app = app
        self.paths = frozenset(paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") not in self.paths:
            await self.app(scope, receive, send)
            return

        async def varied(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                varies = [value for name, value in headers if name.lower() == b"vary"]
                named = {item.strip().lower() for value in varies for item in value.split(b",")}
                if not named & {b"accept", b"*"}:
                    headers = [item for item in headers if item[0].lower() != b"vary"]
                    headers.append((b"vary", b", ".join([*varies, b"Accept"])))
                    message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, varied)
