"""Two real service processes on one PostgreSQL database, clients posting verifications to both,
one of them killed with ``kill -9`` five times and started again: every acknowledged record is in
the audit trail, which is one chain without gaps.

Marked slow (it starts server processes that load the shipped models). Expectation from the store's
promise: "an acknowledged record is never lost, including when a service process is killed with kill
-9, and two service processes on two ports writing to one database keep one gap-free chain".
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from serving import free_port

from handreader.store.audit import AuditLog

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
PHOTO = ROOT / "examples" / "hand.jpg"
TOKEN = "replica-operator-token"
DECLARED = '{"declared": {"players": [{"seat": 1, "outcome": "win"}]}}'


class Replica:
    """``python serve.py --port PORT`` on the shared database, started and killed at will."""

    def __init__(self, url: str) -> None:
        self.port = free_port()
        self.environment = {
            **os.environ,
            "HANDREADER_DATABASE_URL": url,
            "HANDREADER_AUDIT_TOKEN": TOKEN,
            "HANDREADER_WORKERS": "1",
        }
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "serve.py", "--port", str(self.port)],
            cwd=ROOT, env=self.environment,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.process.poll() is None, "serve.py exited on its own"
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        pytest.fail("serve.py did not become healthy within 120 s")

    def kill(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        assert self.process.wait() == -signal.SIGKILL

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()


def test_replicas_killed_with_kill_9_lose_no_acknowledged_record(postgres_schema: str) -> None:
    if not (ROOT / "models" / "manifest.json").is_file():
        pytest.skip("needs the shipped models (models/manifest.json)")
    photo = PHOTO.read_bytes()
    steady, victim = Replica(postgres_schema), Replica(postgres_schema)
    acknowledged: dict[str, list[int]] = {"steady": [], "victim": []}
    unexpected: list[str] = []
    stop = threading.Event()
    lock = threading.Lock()

    def client(name: str, replica: Replica) -> None:
        with httpx.Client(timeout=30) as http:
            while not stop.is_set():
                try:
                    response = http.post(
                        f"{replica.url}/v1/verify",
                        files={"image": ("round.jpg", photo, "image/jpeg")},
                        data={"options": DECLARED},
                        headers={"Authorization": f"Bearer {TOKEN}"},
                    )
                except httpx.TransportError:  # the replica is down: nothing acknowledged
                    time.sleep(0.05)
                    continue
                if response.status_code == 503:  # busy or slow under load: not acknowledged
                    continue
                with lock:
                    if response.status_code != 200:
                        unexpected.append(response.text)
                    else:
                        acknowledged[name].append(int(response.json()["record_id"]))

    rng = np.random.default_rng(20261201)
    threads: list[threading.Thread] = []
    try:
        steady.start()
        victim.start()
        threads = [
            threading.Thread(target=client, args=(name, replica))
            for name, replica in (("steady", steady), ("victim", victim), ("victim", victim))
        ]
        for thread in threads:
            thread.start()
        for _ in range(5):
            before = len(acknowledged["victim"])
            deadline = time.monotonic() + 60
            while len(acknowledged["victim"]) < before + 3 and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(float(rng.uniform(0.0, 0.3)))  # land the kill anywhere in a request
            victim.kill()
            victim.start()
        time.sleep(1.0)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        steady.stop()
        victim.stop()
    with AuditLog(postgres_schema, token=TOKEN) as log:
        ids = [record.record_id for record in log.records(TOKEN)]
        assert log.verify_chain(TOKEN) is None
        assert log.integrity_check(TOKEN) == "ok"
    assert unexpected == []
    assert ids == list(range(1, len(ids) + 1))  # one chain, no gaps
    every = acknowledged["steady"] + acknowledged["victim"]
    assert len(set(every)) == len(every)  # no id acknowledged twice
    assert set(every) <= set(ids)  # no acknowledged record lost
    assert len(acknowledged["steady"]) >= 3 and len(acknowledged["victim"]) >= 10
