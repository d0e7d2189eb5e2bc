"""Connections under pressure: idle and slow clients time out, their number is bounded below the
descriptor limit, and a flood of accept errors is logged once with a count.

:class:`GuardedHttpToolsProtocol` is uvicorn's httptools protocol with three guards, which
``handreader.service.app.run_server`` installs (``http=`` by import string, so every worker
process builds its own from the environment):

- **header timeout**: a connection must complete a request's headers within
  ``HANDREADER_HEADER_TIMEOUT`` seconds (default :data:`DEFAULT_HEADER_TIMEOUT_S`) of opening or
  of its previous answer, else it is closed: a socket opened and left silent, or headers sent a
  byte at a time, no longer hold a descriptor for ever (uvicorn's keep-alive timeout starts only
  after a first answer, and any byte cancels it). Headers over :data:`MAX_HEADER_BYTES` are
  answered 400 and the connection closed.
- **connection limit**: at most ``HANDREADER_MAX_CONNECTIONS`` open connections a worker
  (default: the descriptor limit less a quarter of it, at most 256, kept for the models, the
  database, the logs and answering ``/health``). A connection past the limit closes the
  connection that has waited longest for a request; when every connection is busy, the new one
  is closed at once. So a crowd of idle sockets never keeps a new client, ``/health`` included,
  from being answered, and accepting never runs out of descriptors.
- **body timeout** (:class:`BodyDeadline`, ASGI middleware that ``create_app`` installs): a
  request's body must arrive within ``HANDREADER_BODY_TIMEOUT`` seconds (default 60: 20 MB at
  under 3 Mbit/s) of its headers, else 408 ``request_timeout``.

:func:`quiet_accept_errors` makes the event loop's "socket.accept() out of system resource"
report (a traceback on every failed accept, hundreds of thousands a minute when descriptors run
out) one line, then one line with a count per :data:`REPEAT_WINDOW_S` seconds; so too uvicorn's
report of a live text message that is not UTF-8 (a traceback each, at any client's will).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import resource
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from handreader.service.requests import RequestTimeoutError
from handreader.service.settings import MAX_TIMEOUT_S

__all__ = [
    "DEFAULT_HEADER_TIMEOUT_S",
    "MAX_HEADER_BYTES",
    "REPEAT_WINDOW_S",
    "BodyDeadline",
    "ConnectionLimits",
    "GuardedHttpToolsProtocol",
    "connection_limits",
    "default_max_connections",
    "quiet_accept_errors",
]

LOG = logging.getLogger("handreader.serve")

DEFAULT_HEADER_TIMEOUT_S = 10.0
"""Seconds a connection has to send a request's headers (a browser sends them at once)."""
MAX_HEADER_BYTES = 64 * 1024
"""Largest request line and headers accepted (browsers send a few kilobytes)."""
REPEAT_WINDOW_S = 10.0
"""A repeated accept error or refused connection is logged at most once in this many seconds."""


def default_max_connections(descriptors: int | None = None) -> int:
    """The connection limit for a descriptor limit (default: this process's soft limit): the
    limit less a quarter of it, at most 256 descriptors kept for everything else."""
    if descriptors is None:
        descriptors = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if descriptors == resource.RLIM_INFINITY:
            descriptors = 65536
    return max(8, descriptors - min(256, descriptors // 4))


class ConnectionLimits:
    """The guards' settings, read once a process from ``HANDREADER_MAX_CONNECTIONS`` and
    ``HANDREADER_HEADER_TIMEOUT``; ValueError names a bad value."""

    def __init__(self, environ: Any = os.environ) -> None:
        connections = environ.get("HANDREADER_MAX_CONNECTIONS", "")
        timeout = environ.get("HANDREADER_HEADER_TIMEOUT", "")
        try:
            self.max_connections = int(connections) if connections else default_max_connections()
            self.header_timeout_s = float(timeout) if timeout else DEFAULT_HEADER_TIMEOUT_S
        except ValueError:
            raise ValueError(
                f"HANDREADER_MAX_CONNECTIONS={connections!r} or HANDREADER_HEADER_TIMEOUT="
                f"{timeout!r} is not a number"
            ) from None
        if self.max_connections < 1 or not 0 < self.header_timeout_s <= MAX_TIMEOUT_S:
            raise ValueError(
                "HANDREADER_MAX_CONNECTIONS and HANDREADER_HEADER_TIMEOUT must be positive "
                f"(the timeout at most {MAX_TIMEOUT_S:g} s), got {connections!r} and {timeout!r}"
            )


@functools.cache
def connection_limits() -> ConnectionLimits:
    """This process's :class:`ConnectionLimits` (read on first use)."""
    return ConnectionLimits()


class _Repeats:
    """Counts a repeated event and says when it is time to log it again."""

    def __init__(self) -> None:
        self.count = 0
        self.logged_at = -REPEAT_WINDOW_S

    def due(self) -> int | None:
        """The count since the last log when a new log is due (then reset), else None."""
        self.count += 1
        now = time.monotonic()
        if now - self.logged_at < REPEAT_WINDOW_S:
            return None
        count, self.count, self.logged_at = self.count, 0, now
        return count


_REFUSED = _Repeats()


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the header timeout, the header size limit and the
    connection limit of the module docstring."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._limits = connection_limits()
        self._waiting_since: float | None = None  # waiting for a request's headers since
        self._header_bytes = 0
        self._parsed_header_bytes = 0
        self._headers_too_large = False
        self._header_timer: asyncio.TimerHandle | None = None

    # waiting for a request: from the connection or the last answer to the headers' end

    def _wait_for_request(self) -> None:
        self._waiting_since = time.monotonic()
        self._header_bytes = 0
        self._cancel_header_timer()
        self._header_timer = self.loop.call_later(
            self._limits.header_timeout_s, self._header_timeout
        )

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._wait_for_request()
        if len(self.connections) > self._limits.max_connections:
            self._make_room()

    def _make_room(self) -> None:
        """Close the connection that has waited longest for a request, or else this one."""
        idle = [
            other
            for other in self.connections
            if isinstance(other, GuardedHttpToolsProtocol)
            and other is not self
            and other._waiting_since is not None
            and not other.transport.is_closing()
        ]
        if idle:
            oldest = min(idle, key=lambda other: other._waiting_since or 0.0)
            oldest.transport.close()
            self.connections.discard(oldest)
            return
        self.transport.close()
        self.connections.discard(self)
        count = _REFUSED.due()
        if count is not None:
            LOG.warning(
                "%d connection(s) refused: all %d connections busy (HANDREADER_MAX_CONNECTIONS)",
                count,
                self._limits.max_connections,
            )

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        self._waiting_since = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        waiting = self._waiting_since is not None
        super().data_received(data)
        if not waiting or self._waiting_since is None or self.transport.is_closing():
            return
        # still no end to the headers: count what they took (a body never counts)
        self._header_bytes += len(data)
        if self._header_bytes > MAX_HEADER_BYTES:
            self._cancel_header_timer()
            self._waiting_since = None
            self.send_400_response(f"Request headers over {MAX_HEADER_BYTES} bytes.")

    def on_header(self, name: bytes, value: bytes) -> None:
        # headers that arrive whole in one read are counted as parsed: over the limit, parsing
        # stops and uvicorn answers 400 (with the message of send_400_response below)
        self._parsed_header_bytes += len(name) + len(value) + 4
        if self._parsed_header_bytes > MAX_HEADER_BYTES:
            self._headers_too_large = True
            raise ValueError("request headers over the limit")
        super().on_header(name, value)

    def send_400_response(self, msg: str) -> None:
        if self._headers_too_large:
            msg = f"Request headers over {MAX_HEADER_BYTES} bytes."
        super().send_400_response(msg)

    def on_headers_complete(self) -> None:
        self._cancel_header_timer()
        self._waiting_since = None
        self._parsed_header_bytes = 0
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # uvicorn armed its keep-alive timer: no pipelined request is waiting, this one is idle
        if self.timeout_keep_alive_task is not None and not self.transport.is_closing():
            self._wait_for_request()

    def handle_websocket_upgrade(self) -> None:
        self._cancel_header_timer()
        self._waiting_since = None
        super().handle_websocket_upgrade()


class BodyDeadline:
    """ASGI middleware: a request body that has not all arrived ``timeout_s`` seconds after the
    request began raises RequestTimeoutError (408) where the application waits for it."""

    def __init__(self, app: ASGIApp, timeout_s: float) -> None:
        self.app = app
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        deadline = time.monotonic() + self.timeout_s
        complete = False

        async def timed() -> Message:
            nonlocal complete
            if complete:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), deadline - time.monotonic())
            except TimeoutError:
                raise RequestTimeoutError(
                    f"the request body did not arrive within {self.timeout_s:g} s"
                ) from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                complete = True
            return message

        await self.app(scope, timed, send)


class _AcceptErrorFilter(logging.Filter):
    """Turns the event loop's accept-error reports into one line, then a count per window."""

    MESSAGE = "socket.accept() out of system resource"

    def __init__(self) -> None:
        super().__init__()
        self.repeats = _Repeats()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if not message.startswith(self.MESSAGE):
            return True
        count = self.repeats.due()
        if count is None:
            return False
        error = record.exc_info[1] if record.exc_info else None
        record.msg = "%s (%s): %d time(s) since the last report; new connections wait"
        record.args = (self.MESSAGE, error or "no descriptor left", count)
        record.exc_info = None
        record.exc_text = None
        return True


class _BadTextFilter(logging.Filter):
    """Turns uvicorn's report of a live text message that is not UTF-8 (the client's mistake:
    the connection is closed with code 1007) into a warning line without a traceback, then a
    count per window, so that no client can fill the log with tracebacks."""

    MESSAGE = "Invalid UTF-8 sequence received from client"

    def __init__(self) -> None:
        super().__init__()
        self.repeats = _Repeats()

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.getMessage().startswith(self.MESSAGE):
            return True
        count = self.repeats.due()
        if count is None:
            return False
        record.msg = "%s: closed with code 1007; %d time(s) since the last report"
        record.args = (self.MESSAGE, count)
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.exc_info = None
        record.exc_text = None
        return True


def quiet_accept_errors() -> None:
    """Install the accept-error filter on the ``asyncio`` logger and the bad-text filter on
    uvicorn's (once a process)."""
    for name, kind in (("asyncio", _AcceptErrorFilter), ("uvicorn.error", _BadTextFilter)):
        logger = logging.getLogger(name)
        if not any(isinstance(existing, kind) for existing in logger.filters):
            logger.addFilter(kind())
