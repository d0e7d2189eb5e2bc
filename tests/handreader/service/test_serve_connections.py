"""The real server under connection pressure: ``python serve.py`` on loopback with a low
descriptor limit, a crowd of idle sockets, headers and bodies sent a byte at a time, and a
refused token on a kept-alive connection.

Marked slow (it starts a process). The server runs without models (``/health`` answers 503
``not_ready``, which is an answer: what is checked is that it answers). Expectations from
``handreader.service.connections``: a worker keeps at most its descriptor limit less a quarter
(256 -> 192 connections), a new connection closes the one idle longest, headers must arrive
within ``HANDREADER_HEADER_TIMEOUT`` (2 s here) and a body within ``HANDREADER_BODY_TIMEOUT``
(2 s here).
"""

from __future__ import annotations

import http.client
import os
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from serving import free_port

ROOT = Path(__file__).resolve().parents[3]
DESCRIPTORS = 256
TOKEN = "connections-test-token"

pytestmark = pytest.mark.slow


def _low_descriptor_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (DESCRIPTORS, DESCRIPTORS))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, Path]]:
    port = free_port()
    folder = tmp_path_factory.mktemp("connections")
    log = folder / "server.log"
    (folder / "manifest.json").write_text("{}")  # no models: the server starts and answers 503
    environment = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "HANDREADER_HEADER_TIMEOUT": "2",
        "HANDREADER_BODY_TIMEOUT": "2",
        "HANDREADER_AUDIT_TOKEN": TOKEN,
        "HANDREADER_DATA": str(folder / "data"),
    }
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "serve.py", "--port", str(port), "--models", str(folder)],
            cwd=ROOT, env=environment, stdout=output, stderr=subprocess.STDOUT,
            preexec_fn=_low_descriptor_limit,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, log.read_text()[-2000:]
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code in (200, 503):
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "serve.py did not answer /health within 60 s"
            time.sleep(0.2)
        yield url, port, log
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def _health_seconds(url: str) -> float:
    start = time.perf_counter()
    response = httpx.get(f"{url}/health", timeout=5)
    assert response.status_code in (200, 503)
    return time.perf_counter() - start


def test_300_idle_sockets_leave_health_answering(server: tuple[str, int, Path]) -> None:
    url, port, log = server
    before = len(log.read_text().splitlines())
    idle = []
    try:
        for _ in range(300):  # more than the 256 descriptors the server may have
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        time.sleep(0.5)
        assert _health_seconds(url) < 1.0
    finally:
        for connection in idle:
            connection.close()
    time.sleep(0.5)
    assert _health_seconds(url) < 1.0
    # no flood of accept errors: a few lines at most
    assert len(log.read_text().splitlines()) - before < 20


def test_a_silent_or_slow_client_is_closed_after_the_header_timeout(
    server: tuple[str, int, Path],
) -> None:
    _, port, _ = server
    with socket.create_connection(("127.0.0.1", port), timeout=10) as silent:
        start = time.monotonic()
        assert silent.recv(1024) == b""  # closed by the server, without an answer
        assert 1.5 < time.monotonic() - start < 6
    with socket.create_connection(("127.0.0.1", port), timeout=10) as slow:
        start = time.monotonic()
        closed = False
        for byte in b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 40:
            try:
                slow.sendall(bytes([byte]))
            except OSError:
                closed = True
                break
            time.sleep(0.1)
            if time.monotonic() - start > 8:
                break
        if not closed:
            slow.settimeout(5)
            try:
                closed = slow.recv(1024) == b""
            except OSError:
                closed = True
        assert closed and time.monotonic() - start < 8


def test_a_slow_body_is_answered_408(server: tuple[str, int, Path]) -> None:
    _, port, _ = server
    with socket.create_connection(("127.0.0.1", port), timeout=10) as slow:
        start = time.monotonic()
        slow.sendall(
            b"POST /v1/read HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\n"
            b"Content-Length: 100000\r\n\r\n" + b"\x89PNG"
        )
        answer = b""
        while b"}}" not in answer and (chunk := slow.recv(4096)):
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b'"request_timeout"' in answer
        assert time.monotonic() - start < 6


def test_a_refused_token_keeps_the_connection(server: tuple[str, int, Path]) -> None:
    _, port, log = server
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        for _ in range(3):  # the same kept-alive connection each time
            connection.request("GET", "/v1/audit", headers={"Authorization": "Bearer wrong"})
            response = connection.getresponse()
            assert response.status == 401
            response.read()
        connection.request("GET", "/v1/trainer/deal")
        assert connection.getresponse().status == 200
    finally:
        connection.close()
    assert "Traceback" not in log.read_text()


def test_headers_are_limited_but_bodies_are_not_headers(server: tuple[str, int, Path]) -> None:
    _, port, _ = server
    with socket.create_connection(("127.0.0.1", port), timeout=10) as endless:
        endless.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: " + b"a" * 70_000)
        answer = endless.recv(4096)
        assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    for parts in ([70_000], [60_000, 10_000]):  # whole headers in one write, or two
        with socket.create_connection(("127.0.0.1", port), timeout=10) as whole:
            for index, size in enumerate(parts):
                line = f"X-Part-{index}: ".encode() + b"a" * size + b"\r\n"
                start = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n" if index == 0 else b""
                whole.sendall(start + line)
            whole.sendall(b"\r\n")
            answer = whole.recv(4096)
            assert answer.startswith(b"HTTP/1.1 400"), (parts, answer[:200])
            assert b"Request headers over 65536 bytes." in answer
    # a body of 300 kB sent with its headers in one write is a body, not headers
    body = b"\x89PNG\r\n\x1a\n" + bytes(300_000)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", "/v1/read", body=body, headers={"Content-Type": "image/png"})
        response = connection.getresponse()
        assert response.status != 400 or b"headers" not in response.read()
    finally:
        connection.close()


def test_a_client_gone_mid_upload_is_one_line_not_a_traceback(
    server: tuple[str, int, Path],
) -> None:
    """A phone that loses its connection while sending a body: the server logs one line
    naming it, not a traceback, and goes on answering."""
    _, port, log = server
    for path, kind in (("/v1/score", "image/jpeg"), ("/v1/read", "image/jpeg")):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as gone:
            gone.sendall(
                f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {kind}; "
                "boundary=b\r\nContent-Length: 100000\r\n\r\n".encode()
                + b"{" * 5000
            )
            time.sleep(0.3)
    deadline = time.monotonic() + 10
    while log.read_text().count("closed the connection before") < 1:
        assert time.monotonic() < deadline, log.read_text()[-2000:]
        time.sleep(0.1)
    assert "Traceback" not in log.read_text() and "ClientDisconnect" not in log.read_text()
    assert httpx.get(f"http://127.0.0.1:{port}/v1/trainer/deal", timeout=5).status_code == 200


def _answers(connection: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (or 10 s pass)."""
    received = b""
    try:
        while chunk := connection.recv(65536):
            received += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return received


def test_a_body_over_the_limit_is_answered_413_and_the_connection_closed(
    server: tuple[str, int, Path],
) -> None:
    # The body's unread bytes must never be parsed as a next request (which used to come back
    # as "400 Request headers over 65536 bytes" on the same connection)
    _, port, _ = server
    body = b"\xff\xd8\xff" + bytes(21 * 1024 * 1024)  # over the 20 MiB limit
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(
            b"POST /v1/read HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/jpeg\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)
        )
        try:
            for start in range(0, len(body), 1 << 20):
                connection.sendall(body[start : start + (1 << 20)])
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed while sending: what is checked is what came back
        answer = _answers(connection)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:300]
    assert b"connection: close" in answer.lower()
    assert answer.count(b"HTTP/1.1") == 1, answer[:600]
