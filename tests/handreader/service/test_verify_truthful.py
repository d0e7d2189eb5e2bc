"""What an audit answer promises holds: a 503 for a store that did not answer in time wrote
nothing, even when the database answers later; a server never appends to a trail chained
otherwise than it chains (another operator secret, or a secret set or removed since it
started).

The store is SQLite in a temporary folder, held busy by a second connection; the recognizer is
``web_fakes``' fake.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from web_fakes import NIU_TABLE, FakeReader, image_bytes

from handreader.service import app as serve
from handreader.service import deps as service_deps
from handreader.service.routes import verification as routes

TOKEN = "s3cret-operator-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
RIGHT = {"players": [{"seat": 1, "outcome": "win", "payout": 95}, {"seat": 2, "outcome": "win"}]}


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "audit.sqlite3"
    monkeypatch.setenv("HANDREADER_AUDIT_TOKEN", TOKEN)
    monkeypatch.setenv("HANDREADER_AUDIT_DB", str(path))
    monkeypatch.delenv("HANDREADER_AUDIT_KEY", raising=False)
    return path


def _client() -> TestClient:
    app = serve.create_app(settings=serve.Settings(models_dir=Path("/nonexistent")))
    fake = FakeReader(NIU_TABLE)
    app.dependency_overrides[service_deps.get_reader] = lambda: fake
    return TestClient(app, raise_server_exceptions=False)


@pytest.fixture
def client(database: Path) -> Iterator[TestClient]:
    with _client() as test_client:
        yield test_client


def _verify(client: TestClient) -> Any:
    files = {"image": ("round.jpg", image_bytes(), "image/jpeg")}
    data = {"options": json.dumps({"stake": 100, "declared": RIGHT})}
    return client.post("/v1/verify", files=files, data=data, headers=AUTH)


def _records(database: Path) -> int:
    with sqlite3.connect(database) as connection:
        return int(connection.execute("SELECT count(*) FROM verification").fetchone()[0])


def test_a_verification_answered_503_is_not_recorded_when_the_database_comes_back(
    client: TestClient, database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _verify(client).status_code == 200
    monkeypatch.setattr(routes, "STORE_DEADLINE_S", 0.5)
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the database
    try:
        refused = _verify(client)
    finally:
        time.sleep(0.3)
        holder.execute("ROLLBACK")
        holder.close()
    assert refused.status_code == 503
    assert refused.json()["error"]["message"].endswith("nothing was written")
    time.sleep(1.0)  # the write gets the database now: it must roll back, not commit
    assert _records(database) == 1
    assert _verify(client).status_code == 200 and _records(database) == 2


def test_a_server_never_appends_under_another_operator_secret(
    database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HANDREADER_AUDIT_KEY", "k3y")
    with _client() as first:
        assert _verify(first).status_code == 200
    monkeypatch.setenv("HANDREADER_AUDIT_KEY", "typo-key")
    with _client() as second:
        refused = _verify(second)
    assert refused.status_code == 500 and refused.json()["error"]["code"] == "audit_failed"
    assert "another operator secret" in refused.json()["error"]["message"]
    assert _records(database) == 1


def test_a_running_server_stops_appending_once_the_trail_is_chained_under_a_secret(
    client: TestClient, database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trail is rekeyed by the command line while a server without the secret runs: the
    server refuses its next verification instead of breaking the chain."""
    from handreader import cli

    assert _verify(client).status_code == 200
    monkeypatch.setenv("HANDREADER_AUDIT_KEY", "k3y")
    assert cli.main(["audit", "rekey"]) == 0
    refused = _verify(client)
    assert refused.status_code == 500 and refused.json()["error"]["code"] == "audit_failed"
    assert "chained under the operator secret" in refused.json()["error"]["message"]
    assert cli.main(["audit", "verify"]) == 0


def test_one_long_read_of_the_trail_at_a_time_even_when_its_caller_gave_up(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An export of a large trail takes seconds and memory: a second one while it runs (its
    caller gone or not) is a 503 ``busy``, and the next after it ends is answered."""
    import threading

    from handreader.store.audit import AuditLog

    assert _verify(client).status_code == 200
    release = threading.Event()
    export = AuditLog.csv_chunks

    def slow_export(self: AuditLog, *args: Any, **kwargs: Any) -> Any:
        release.wait(10)
        return export(self, *args, **kwargs)

    monkeypatch.setattr(AuditLog, "csv_chunks", slow_export)
    monkeypatch.setattr(routes, "READ_DEADLINE_S", 0.3)
    first = client.get("/v1/audit?format=csv", headers=AUTH)
    assert first.status_code == 503  # its caller gave up; the export still runs
    second = client.get("/v1/audit", headers=AUTH)
    assert second.status_code == 503 and second.json()["error"]["code"] == "busy"
    release.set()
    for _ in range(50):
        answer = client.get("/v1/audit", headers=AUTH)
        if answer.status_code == 200:
            break
        time.sleep(0.05)
    assert answer.status_code == 200 and answer.json()["count"] == 1


def test_a_log_that_cannot_be_opened_does_not_hold_the_long_read(
    client: TestClient, database: Path
) -> None:
    """A read of the trail while its file cannot be opened answers why, every time; once
    the file is mended the reads are answered (the one-read-at-a-time slot is not kept)."""
    database.write_bytes(b"not a database" * 100)
    for path in ("/v1/audit", "/v1/audit/verify", "/v1/audit?format=csv"):
        answer = client.get(path, headers=AUTH)
        assert answer.status_code == 500 and answer.json()["error"]["code"] == "audit_failed"
    database.unlink()
    assert _verify(client).status_code == 200
    assert client.get("/v1/audit", headers=AUTH).json()["count"] == 1
    assert client.get("/v1/audit/verify", headers=AUTH).status_code == 200
