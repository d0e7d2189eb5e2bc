"""A schema-driven fuzz of the real server: schemathesis generates requests for every operation
of ``/openapi.json`` (valid and invalid ones) and no answer may be a 5xx.

Marked slow (it starts ``python serve.py`` with the shipped models, and sends about 2,000
requests: about two minutes on two cores). The operator token is sent with every request, so
the verification, audit and deck routes are fuzzed past their token check; the data folder is
a temporary one. Each operation gets :data:`CASES` cases, half valid, half invalid (hypothesis
may stop sooner on an operation with few distinct inputs); at least :data:`MINIMUM_CASES` must
run in all.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serving import free_port

schemathesis = pytest.importorskip("schemathesis", reason="needs the test extra: schemathesis")
httpx = pytest.importorskip("httpx")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
TOKEN = "fuzz-operator-token"
CASES = 150
"""Cases asked of hypothesis per operation."""
MINIMUM_CASES = 2_000
"""Cases the whole run must reach."""
SENT: list[tuple[str, int]] = []

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not (ROOT / "models" / "manifest.json").is_file():
        pytest.skip("needs the shipped models (models/manifest.json): without them the image "
                    "endpoints answer 503 not_ready by design")  # fmt: skip
    folder = tmp_path_factory.mktemp("fuzz")
    port = free_port()
    environment = {
        **os.environ,
        "HANDREADER_AUDIT_TOKEN": TOKEN,
        # (checkpoints are checked with it: without it their route answers 503, as documented)
        "HANDREADER_AUDIT_KEY": "fuzz-key",
        "HANDREADER_DATA": str(folder),
        "PYTHONUNBUFFERED": "1",
    }
    environment.pop("HANDREADER_DATABASE_URL", None)
    log = (folder / "server.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "serve.py", "--port", str(port)],
        cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, (folder / "server.log").read_text()[-2000:]
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "serve.py did not answer /health within 120 s"
            time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def _fuzz(operation: Any, mode: Any, server: str, failures: list[str]) -> None:
    """Send ``CASES`` cases of ``operation`` in ``mode``; each 5xx is noted in ``failures``."""

    @settings(
        max_examples=CASES // 2,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        database=None,
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def send(case: Any) -> None:
        response = case.call(base_url=server, headers={"Authorization": f"Bearer {TOKEN}"})
        SENT.append((operation.label, response.status_code))
        if response.status_code >= 500:
            failures.append(
                f"{case.method} {case.formatted_path} -> {response.status_code}: "
                f"{response.text[:300]}"
            )

    # (no invalid request exists for an operation that takes nothing: GET /health)
    with contextlib.suppress(Unsatisfiable):
        send()


def test_no_request_gets_a_5xx(server: str) -> None:
    schema = schemathesis.openapi.from_url(f"{server}/openapi.json")
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15
    for operation in operations:
        for mode in GenerationMode:
            _fuzz(operation, mode, server, failures)
    assert len(SENT) >= MINIMUM_CASES, f"only {len(SENT)} cases were sent"
    assert not failures, "\n".join(failures[:20])
