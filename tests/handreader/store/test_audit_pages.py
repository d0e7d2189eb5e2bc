"""A large audit trail is read a page at a time, on both backends: the CSV export streams in
pages read after the last id (``AuditLog.csv_chunks``), and ``GET /v1/audit`` answers JSON in
pages of at most 1,000 records with the offset of the next page.

Expectations come from ``handreader/store/audit.py``'s and
``handreader/service/routes/verification.py``'s docstrings and from the service's promise
that every input is bounded before it costs memory or time.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from test_audit import TOKEN, record
from web_fakes import NIU_TABLE, FakeReader, error_message

from handreader.service import app as serve
from handreader.service import deps as service_deps
from handreader.store.audit import AuditError, AuditLog

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _ids(text: str) -> list[int]:
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][0] == "id"  # one header, at the top
    return [int(row[0]) for row in rows[1:]]


@pytest.fixture
def seven(location: str) -> AuditLog:
    log = AuditLog(location, token=TOKEN)
    for number in range(7):
        record(log, verdict="mismatch" if number % 2 else "match")
    return log


def test_the_export_streams_in_pages_that_join_to_the_whole(seven: AuditLog) -> None:
    chunks = list(seven.csv_chunks(TOKEN, page_rows=3))
    assert len(chunks) == 3 and [len(_ids(chunks[0]))] == [3]
    assert "".join(chunks) == seven.export_csv(TOKEN)
    assert _ids("".join(chunks)) == [1, 2, 3, 4, 5, 6, 7]
    assert _ids("".join(seven.csv_chunks(TOKEN, page_rows=2, offset=1, limit=4))) == [2, 3, 4, 5]
    matches = seven.csv_chunks(TOKEN, page_rows=2, verdict="match")
    assert _ids("".join(matches)) == [1, 3, 5, 7]
    assert _ids("".join(seven.csv_chunks(TOKEN, limit=0))) == []


def test_the_export_checks_its_token_and_filters_before_the_first_chunk(seven: AuditLog) -> None:
    with pytest.raises(AuditError, match="unknown verdict"):
        seven.csv_chunks(TOKEN, verdict="maybe")  # raised here, not while the chunks are taken
    with pytest.raises(AuditError, match="page_rows must be at least 1"):
        seven.csv_chunks(TOKEN, page_rows=0)


def test_a_record_appended_while_the_export_streams_does_not_shift_its_pages(
    seven: AuditLog,
) -> None:
    chunks = seven.csv_chunks(TOKEN, page_rows=3)
    first = next(chunks)
    record(seven)  # an append between two pages
    assert _ids(first + "".join(chunks)) == [1, 2, 3, 4, 5, 6, 7, 8]


def _client(location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TestClient:
    monkeypatch.setenv("HANDREADER_AUDIT_TOKEN", TOKEN)
    if location.startswith("postgresql://"):
        monkeypatch.setenv("HANDREADER_DATABASE_URL", location)
    else:
        monkeypatch.delenv("HANDREADER_DATABASE_URL", raising=False)
        monkeypatch.setenv("HANDREADER_AUDIT_DB", location)
    app = serve.create_app(settings=serve.Settings(models_dir=tmp_path / "no-models"))
    app.dependency_overrides[service_deps.get_reader] = lambda: FakeReader(NIU_TABLE)
    return TestClient(app)


def test_json_pages_and_the_csv_export_over_http(
    location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = AuditLog(location, token=TOKEN)
    for _ in range(105):
        record(log)
    with _client(location, tmp_path, monkeypatch) as client:
        first: Any = client.get("/v1/audit", headers=AUTH).json()
        assert first["count"] == 105 and len(first["records"]) == 100  # the default page
        assert first["next_offset"] == 100
        rest = client.get("/v1/audit", params={"offset": 100}, headers=AUTH).json()
        assert [r["id"] for r in rest["records"]] == [101, 102, 103, 104, 105]
        assert rest["next_offset"] is None
        page = client.get("/v1/audit", params={"limit": 1000}, headers=AUTH).json()
        assert len(page["records"]) == 105 and page["next_offset"] is None
        too_many = client.get("/v1/audit", params={"limit": 1001}, headers=AUTH)
        assert "at most 1000 records a page" in error_message(too_many, 400, "bad_options")
        exported = client.get("/v1/audit", params={"format": "csv"}, headers=AUTH)
        assert exported.status_code == 200
        assert exported.headers["content-type"].startswith("text/csv")
        assert _ids(exported.text) == list(range(1, 106))  # all of it, by default
        window = client.get(
            "/v1/audit", params={"format": "csv", "offset": 3, "limit": 2}, headers=AUTH
        )
        assert _ids(window.text) == [4, 5]
        bad = client.get("/v1/audit", params={"format": "csv", "verdict": "maybe"}, headers=AUTH)
        assert bad.status_code == 422  # checked before a byte of the export is sent


def test_an_export_holds_the_workers_one_long_read_until_it_ends_or_is_dropped(
    tmp_path: Path,
) -> None:
    """Exports one after another never run at once: the first holds the slot while its
    chunks are taken, and gives it back when they end, are closed or are dropped."""
    from handreader.service.requests import ServerBusyError
    from handreader.service.routes.verification import AuditLogHolder, AuditSettings

    holder = AuditLogHolder(AuditSettings(tmp_path / "audit.sqlite3", TOKEN))
    log = holder.log()
    for _ in range(5):
        record(log)
    export = holder.stream(lambda log: log.csv_chunks(TOKEN, page_rows=2))
    next(export)
    with pytest.raises(ServerBusyError):
        holder.stream(lambda log: log.csv_chunks(TOKEN))
    with pytest.raises(ServerBusyError):
        holder.read(lambda log: log.count(TOKEN))
    assert _ids("".join(["id\r\n", *export])) == [3, 4, 5]  # taken to the end
    assert holder.read(lambda log: log.count(TOKEN)) == 5
    dropped = holder.stream(lambda log: log.csv_chunks(TOKEN, page_rows=2))
    del dropped  # a client gone before its first chunk
    closed = holder.stream(lambda log: log.csv_chunks(TOKEN, page_rows=2))
    closed.close()
    assert holder.read(lambda log: log.count(TOKEN)) == 5
    holder.close()


def test_an_export_the_store_fails_midway_is_cut_off_not_ended(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A store error after the first chunk: one log line, and the answer has no end (the
    server closes the connection), so no client takes a short CSV for the whole trail."""
    import asyncio

    from handreader.service.routes.audit_export import ExportResponse
    from handreader.store.database import StoreError

    def chunks() -> Any:
        yield "id\r\n1\r\n"
        raise StoreError("database 'audit.sqlite3' was removed or replaced while open")

    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    asyncio.run(ExportResponse(chunks(), media_type="text/csv").stream_response(send))
    assert [message["type"] for message in sent] == ["http.response.start", "http.response.body"]
    assert sent[1]["body"] == b"id\r\n1\r\n" and sent[1]["more_body"] is True  # never ended
    assert "export cut off after 7 bytes: database 'audit.sqlite3' was removed" in caplog.text
    assert "Traceback" not in caplog.text
