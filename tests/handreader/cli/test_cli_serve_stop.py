"""How ``handreader serve`` ends on a signal, with a real server process on loopback.

Marked slow (it starts processes). Expectations: docs/cli.md ("Ctrl-C stops any command with one
line and exit status 130"), and SIGTERM ending the server as uvicorn ends it (docs/deployment.md):
one worker re-raises the signal after its shutdown, the supervisor of several returns 0.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from serving import free_port, wait_until_serving

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.slow


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stopped_server(
    workers: int, stop: signal.Signals, data: Path, sigint_ignored: bool = False
) -> tuple[int, str]:
    """Start ``handreader serve`` with ``workers`` workers (with SIGINT ignored, as a script's
    background job starts, when ``sigint_ignored``), send ``stop`` once it answers
    ``/health``; the exit status and what it wrote on stderr."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "handreader.cli", "serve", "--port", str(port),
         "--workers", str(workers)],
        cwd=ROOT, env={**os.environ, "HANDREADER_DATA": str(data)},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        preexec_fn=_ignore_sigint if sigint_ignored else None,
    )  # fmt: skip
    try:
        wait_until_serving(process, port)
        process.send_signal(stop)
        _, errors = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, errors.decode(errors="replace")


@pytest.mark.parametrize("sigint_ignored", [False, True])
@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_stops_the_server_with_one_line_and_exit_status_130(
    tmp_path: Path, workers: int, sigint_ignored: bool
) -> None:
    status, errors = _stopped_server(workers, signal.SIGINT, tmp_path, sigint_ignored)
    assert status == 130, errors[-2000:]
    assert "Traceback" not in errors, errors[-2000:]
    assert errors.splitlines()[-1] == "handreader serve: interrupted"
    assert errors.count("interrupted") == 1


@pytest.mark.parametrize(("workers", "expected"), [(1, -signal.SIGTERM), (2, 0)])
def test_sigterm_ends_the_server_as_uvicorn_ends_it(
    tmp_path: Path, workers: int, expected: int
) -> None:
    status, errors = _stopped_server(workers, signal.SIGTERM, tmp_path)
    assert status == expected, errors[-2000:]
    assert "Traceback" not in errors and "interrupted" not in errors, errors[-2000:]
