"""How many live streams a worker holds, and for how long a silent one is kept.

A live stream (``WS /v1/live``) holds its connection for as long as the client keeps it open,
and uvicorn's connection limit cannot close it to make room the way it closes an idle HTTP
connection (``handreader.service.connections``). So a worker admits at most half its
connection limit in live streams, the other half always left to HTTP (``/health``, photos,
the dealer's checks), and at most a quarter of those from one client address; a stream past
either is answered ``{"error": {"code": "busy", ...}}`` and closed with code 1013 (try again
later). A stream that sends neither a frame nor a message for ``HANDREADER_LIVE_IDLE_TIMEOUT``
seconds (default 60; the page sends frames without pause while its camera runs) is answered
``{"error": {"code": "request_timeout", ...}}`` and closed with code 1000. A program holding
hundreds of silent sockets thus takes neither the HTTP service nor, for long, the live one.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import cast

from starlette.requests import HTTPConnection

from handreader.service.connections import connection_limits

__all__ = ["LiveStreams", "live_streams_for"]


class LiveStreams:
    """The live streams a worker holds, by client address; thread-safe."""

    def __init__(self, most: int, per_client: int) -> None:
        self.most = most
        self.per_client = per_client
        self._open: Counter[str] = Counter()
        self._lock = threading.Lock()

    @classmethod
    def for_limit(cls, max_connections: int) -> LiveStreams:
        """Half of ``max_connections`` in all, a quarter of that from one address."""
        most = max(1, max_connections // 2)
        return cls(most, max(1, most // 4))

    def admit(self, client: str) -> str | None:
        """Count a new stream of ``client``: None when admitted, else why it is refused (then
        it is not counted)."""
        with self._lock:
            if self._open.total() >= self.most:
                return (
                    f"this worker holds its {self.most} live streams (half its connections, "
                    "HANDREADER_MAX_CONNECTIONS): try again later"
                )
            if self._open[client] >= self.per_client:
                return (
                    f"this address holds {self.per_client} live streams, the most one address "
                    "may: close one, or try again later"
                )
            self._open[client] += 1
            return None

    def leave(self, client: str) -> None:
        """An admitted stream of ``client`` closed."""
        with self._lock:
            self._open[client] -= 1
            if self._open[client] <= 0:
                del self._open[client]

    def count(self) -> int:
        """The streams open now."""
        with self._lock:
            return self._open.total()


_CREATING = threading.Lock()


def live_streams_for(connection: HTTPConnection) -> LiveStreams:
    """The :class:`LiveStreams` of the app serving ``connection`` (one per app, so per
    worker), made on first use from the worker's connection limit."""
    state = connection.app.state
    with _CREATING:
        streams = getattr(state, "live_streams", None)
        if streams is None:
            streams = LiveStreams.for_limit(connection_limits().max_connections)
            state.live_streams = streams
    return cast(LiveStreams, streams)
