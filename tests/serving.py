"""Helpers for tests that start the service as a real process: a free port to give it, and the
wait until it answers."""

from __future__ import annotations

import socket
import subprocess
import time

import httpx
import pytest

__all__ = ["free_port", "wait_until_serving"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_serving(process: subprocess.Popen[bytes], port: int, timeout_s: float = 90) -> None:
    """Return once ``/health`` on ``port`` answers at all (200 or 503); fail the test if the
    process ends first or ``timeout_s`` pass."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code:
                return
        except httpx.TransportError:
            if time.monotonic() > deadline or process.poll() is not None:
                pytest.fail(f"the service did not start: {process.args}")
            time.sleep(0.2)
