"""Cross-origin reads for the pages the operator allows (CORS).

A page on another origin that ``HANDREADER_ALLOWED_ORIGINS`` lists may write to the service
(``handreader.service.hosts``) and open its live stream (``handreader.service.origins``); to
read an HTTP answer its browser also needs the service to say so. :class:`CrossOrigin` answers
for those origins only:

- a preflight (``OPTIONS`` with ``Access-Control-Request-Method``) is answered 204 with the
  methods the service has (``GET``, ``HEAD``, ``POST``, ``DELETE``), the request headers a client
  sends (``Authorization``: the tokens travel there, never in cookies; ``Content-Type``;
  ``Accept``) and ``Access-Control-Max-Age``;
- every other answer carries ``Access-Control-Allow-Origin`` (the page's origin, never ``*``,
  so that one list entry never opens the service to another) and exposes the headers a client
  reads (``Retry-After``, ``Content-Disposition``, ``Allow``).

Both carry ``Vary: Origin``, and so does every answer while origins are listed (an answer
without these headers is some origins' only). A page whose origin is not listed gets none of
these (its preflight
goes on to the routes, which answer 405, and its browser keeps the answer from it); the
service's own page needs none. ``*`` in the list allows every origin.
"""

from __future__ import annotations

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from handreader.service.origins import normal_origin

__all__ = ["ALLOWED_HEADERS", "ALLOWED_METHODS", "EXPOSED_HEADERS", "MAX_AGE_S", "CrossOrigin"]

ALLOWED_METHODS = "GET, HEAD, POST, DELETE"
"""Every method a route of the service answers."""

ALLOWED_HEADERS = "Authorization, Content-Type, Accept"
"""The request headers a client of the API sends beyond the ones a browser always may."""

EXPOSED_HEADERS = "Retry-After, Content-Disposition, Allow"
"""The answer headers a client reads beyond the ones a browser always shows."""

MAX_AGE_S = 600
"""How long a browser may keep a preflight's answer."""


class CrossOrigin:
    """ASGI middleware: CORS for the listed ``origins`` (see the module docstring)."""

    def __init__(self, app: ASGIApp, origins: tuple[str, ...] = ()) -> None:
        self.app = app
        self.origins = frozenset(origins)

    def _listed(self, origin: str | None) -> bool:
        if origin is None or not self.origins:
            return False
        try:
            given = normal_origin(origin)
        except ValueError:
            return False
        return given != "null" and ("*" in self.origins or given in self.origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if not self._listed(origin):
            await self.app(scope, receive, self._varied(send) if self.origins else send)
            return
        assert origin is not None  # (listed)
        if scope.get("method") == "OPTIONS" and "access-control-request-method" in headers:
            await self._preflight(origin, send)
            return

        async def with_origin(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer = MutableHeaders(scope=message)
                answer["Access-Control-Allow-Origin"] = origin
                answer["Access-Control-Expose-Headers"] = EXPOSED_HEADERS
                answer.add_vary_header("Origin")
            await send(message)

        await self.app(scope, receive, with_origin)

    @staticmethod
    def _varied(send: Send) -> Send:
        """``send`` adding ``Vary: Origin``: with origins listed, an answer without CORS headers
        is one origin's too, and a cache must not give it to another."""

        async def with_vary(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).add_vary_header("Origin")
            await send(message)

        return with_vary

    @staticmethod
    async def _preflight(origin: str, send: Send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 204,
                "headers": [
                    (b"access-control-allow-origin", origin.encode("latin-1")),
                    (b"access-control-allow-methods", ALLOWED_METHODS.encode()),
                    (b"access-control-allow-headers", ALLOWED_HEADERS.encode()),
                    (b"access-control-max-age", str(MAX_AGE_S).encode()),
                    (b"vary", b"Origin"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})
