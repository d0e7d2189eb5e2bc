"""A lean HTTP/1.1 load client on loopback, for ``benchmarks/bench_service.py``.

:class:`Connection` keeps one keep-alive connection and sends prepared requests, parsing no
more of an answer than its status line and ``Content-Length``; :func:`client_run` sends one
request many times over it, timing each, as one client process of the load.
"""

from __future__ import annotations

import http.client
import socket
import time

__all__ = ["Connection", "client_run", "free_port"]


def free_port() -> int:
    """A TCP port of 127.0.0.1 that is free now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Connection:
    """One keep-alive HTTP/1.1 connection to 127.0.0.1 that sends prepared requests.

    Leaner than ``http.client`` (the request is encoded once; the answer's status line and
    ``Content-Length`` are all that is parsed), so that the load generator, which shares the
    machine's cores with the server, takes little of their time. An answer without
    ``Content-Length`` or a connection closed early raises ``http.client.HTTPException``.
    """

    def __init__(self, port: int, timeout_s: float = 60) -> None:
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = bytearray()

    @staticmethod
    def request(path: str, body: bytes, content_type: str) -> bytes:
        """The bytes of ``POST path`` with ``body``."""
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        return head.encode("ascii") + body

    def _receive(self) -> None:
        chunk = self.socket.recv(65536)
        if not chunk:
            raise http.client.RemoteDisconnected("the server closed the connection")
        self.buffer += chunk

    def exchange(self, request: bytes) -> tuple[int, bytes]:
        """Send ``request``; the answer's status and body."""
        self.socket.sendall(request)
        while (end := self.buffer.find(b"\r\n\r\n")) < 0:
            self._receive()
        head = bytes(self.buffer[:end]).split(b"\r\n")
        del self.buffer[: end + 4]
        status = int(head[0].split(b" ", 2)[1])
        length = None
        for line in head[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if length is None:
            raise http.client.HTTPException(f"answer {head[0]!r} without Content-Length")
        while len(self.buffer) < length:
            self._receive()
        body = bytes(self.buffer[:length])
        del self.buffer[:length]
        return status, body

    def close(self) -> None:
        """Close the socket."""
        self.socket.close()


def client_run(
    port: int, body: bytes, content_type: str, count: int, deadline: float
) -> tuple[list[float], dict[str, int], tuple[float, float]]:
    """One keep-alive connection sending ``count`` requests: latencies (s), statuses, and the
    monotonic clock (system-wide) at the first request and after the last answer."""
    request = Connection.request("/v1/score", body, content_type)
    connection = Connection(port)
    latencies: list[float] = []
    statuses: dict[str, int] = {}
    began = time.monotonic()
    for _ in range(count):
        if time.monotonic() > deadline:
            break
        start = time.perf_counter()
        try:
            status = str(connection.exchange(request)[0])
        except (OSError, ValueError, http.client.HTTPException) as error:
            status = type(error).__name__
            connection.close()
            connection = Connection(port)
        latencies.append(time.perf_counter() - start)
        statuses[status] = statuses.get(status, 0) + 1
    ended = time.monotonic()
    connection.close()
    return latencies, statuses, (began, ended)
