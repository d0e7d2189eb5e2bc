"""The service benchmark's HTTP client (``benchmarks/loopback_client.py``): what it counts must be
what the server said.

A tiny server on a loopback port answers with canned bytes, cut where a real server may cut
them (the status line and headers in one segment, the body in another; two answers in one).
Expectations come from HTTP/1.1 message framing (RFC 9112: the body is ``Content-Length``
bytes after the blank line) and from the benchmark's contract (a broken answer is counted as an
error by its exception's name, never as a 200).
"""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Sequence
from types import ModuleType

import pytest
from benchmark_modules import load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("loopback_client")


def _answer(status: str, body: bytes, length: bool = True) -> bytes:
    head = f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
    if length:
        head += f"content-length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body


class CannedServer:
    """A loopback server for one connection: for each request received, sends the next entry of
    ``script`` (its pieces one ``sendall`` each, a little apart); after the last entry, closes
    the connection. ``received`` keeps the requests as they arrived."""

    def __init__(self, script: Sequence[Sequence[bytes]]) -> None:
        self.script = script
        self.received: list[bytes] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        connection, _ = self.listener.accept()
        with connection:
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            data = b""
            for pieces in self.script:
                while b"\r\n\r\n" not in data:
                    data += connection.recv(65536)
                head, _, data = data.partition(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                while len(data) < length:
                    data += connection.recv(65536)
                self.received.append(head + b"\r\n\r\n" + data[:length])
                data = data[length:]
                for piece in pieces:
                    connection.sendall(piece)
                    threading.Event().wait(0.02)  # let the pieces arrive apart

    def close(self) -> None:
        self.thread.join(timeout=5)
        self.listener.close()


def test_request_bytes_frame_the_body(bench: ModuleType) -> None:
    request = bench.Connection.request("/v1/score", b'{"hands": []}', "application/json")
    head, _, body = request.partition(b"\r\n\r\n")
    assert head.startswith(b"POST /v1/score HTTP/1.1\r\n")
    assert b"Content-Length: 13" in head and body == b'{"hands": []}'


def test_answers_cut_anywhere_are_read_whole(bench: ModuleType) -> None:
    first = _answer("200 OK", b'{"a": 1}')
    second = _answer("400 Bad Request", b'{"error": {}}')
    third = _answer("200 OK", b"x" * 100_000)
    server = CannedServer(
        [
            (first[:10], first[10:-3], first[-3:]),  # the status line and the body cut apart
            (second + third,),  # two answers in one segment
            (),  # nothing more: the third answer is already there
        ]
    )
    connection = bench.Connection(server.port, timeout_s=5)
    request = bench.Connection.request("/v1/score", b"{}", "application/json")
    assert connection.exchange(request) == (200, b'{"a": 1}')
    assert connection.exchange(request) == (400, b'{"error": {}}')
    assert connection.exchange(request) == (200, b"x" * 100_000)
    connection.close()
    server.close()
    assert len(server.received) == 3
    assert all(item.endswith(b"\r\n\r\n{}") for item in server.received)


@pytest.mark.parametrize(
    ("pieces", "error"),
    [
        ((_answer("200 OK", b"{}", length=False),), http.client.HTTPException),
        ((_answer("200 OK", b'{"a": 1}')[:-2],), http.client.RemoteDisconnected),
        ((), http.client.RemoteDisconnected),
    ],
    ids=["no content-length", "closed inside the body", "closed before answering"],
)
def test_broken_answers_raise(
    bench: ModuleType, pieces: tuple[bytes, ...], error: type[Exception]
) -> None:
    server = CannedServer([pieces])
    connection = bench.Connection(server.port, timeout_s=5)
    with pytest.raises(error):
        connection.exchange(bench.Connection.request("/v1/score", b"{}", "application/json"))
    connection.close()
    server.close()
