"""The service on either store (``HANDREADER_DATABASE_URL`` or the SQLite file): ``/health``
reports the store, replicas on one database share one audit trail, and an unreachable database
is a JSON error, not a traceback; a deck calibrated through one replica is read by the others.

Expectations come from the product's requirements ("/health reports the store"; "Any number of
serve.py processes ... serve the same decks and the same audit trail"; "a clear error when the
database is unreachable") and from ``handreader/service/routes/verification.py``'s docstring.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from store_databases import raw
from web_fakes import NIU_TABLE, DeckFakeReader, FakeReader, error_message, fake_client, image_bytes

from handreader.service import app as serve
from handreader.service import deps as service_deps
from handreader.service.routes.decks import DECKS

TOKEN = "floor-operator-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
RIGHT = {"players": [{"seat": 1, "outcome": "win", "payout": 95}, {"seat": 2, "outcome": "win"}]}


def _app() -> Any:
    app = serve.create_app(settings=serve.Settings(models_dir=Path("/nonexistent")))
    app.dependency_overrides[service_deps.get_reader] = lambda: FakeReader(NIU_TABLE)
    return app


def _verify(client: TestClient) -> Any:
    files = {"image": ("round.jpg", image_bytes(), "image/jpeg")}
    data = {"options": json.dumps({"stake": 100, "declared": RIGHT})}
    return client.post("/v1/verify", files=files, data=data, headers=AUTH)


def _store(client: TestClient, headers: dict[str, str] | None = None) -> Any:
    """``/health``'s store once a probe has answered in time: the health probe waits half a
    second and answers ``stale`` past it, which a loaded machine can reach on a first connect."""
    deadline = time.monotonic() + 20
    while True:
        store = client.get("/health", headers=headers).json()["store"]
        if "stale" not in store or time.monotonic() > deadline:
            return store
        time.sleep(0.2)


@pytest.fixture
def configured(location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The service's environment pointing at ``location``."""
    monkeypatch.setenv("HANDREADER_AUDIT_TOKEN", TOKEN)
    if location.startswith("postgresql://"):
        monkeypatch.setenv("HANDREADER_DATABASE_URL", location)
        monkeypatch.setenv("HANDREADER_AUDIT_DB", str(tmp_path / "unused.sqlite3"))
    else:
        monkeypatch.delenv("HANDREADER_DATABASE_URL", raising=False)
        monkeypatch.setenv("HANDREADER_AUDIT_DB", location)
    return location


def test_health_reports_the_store(configured: str) -> None:
    with TestClient(_app()) as client:
        store = _store(client, AUTH)
        anonymous = _store(client)
    backend = "postgresql" if configured.startswith("postgresql://") else "sqlite"
    assert store["backend"] == backend and store["ok"] is True
    assert store["schema_version"] == 1 and store["audit"] == "on"
    assert store["location"] == configured  # no password to hide in the test's URL
    # without the operator token: whether it answers, not where it lives
    assert anonymous == {"backend": backend, "ok": True, "audit": "on"}


def test_health_without_a_token_opens_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HANDREADER_AUDIT_TOKEN", raising=False)
    monkeypatch.delenv("HANDREADER_DATABASE_URL", raising=False)
    path = tmp_path / "audit.sqlite3"
    monkeypatch.setenv("HANDREADER_AUDIT_DB", str(path))
    with TestClient(_app()) as client:
        store = client.get("/health").json()["store"]
    assert store == {"backend": "sqlite", "audit": "off"}  # no path for anyone without a token
    assert not path.exists()


def test_two_replicas_on_one_database_keep_one_trail(configured: str) -> None:
    with TestClient(_app()) as first, TestClient(_app()) as second:
        ids = [_verify(client).json()["record_id"] for client in (first, second, first, second)]
        assert ids == [1, 2, 3, 4]
        for client in (first, second):
            body = client.get("/v1/audit", headers=AUTH).json()
            assert [record["id"] for record in body["records"]] == [1, 2, 3, 4]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_database_is_a_503_and_health_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("psycopg", reason="needs psycopg: pip install -e '.[postgres]'")
    url = f"postgresql://floor:pw@127.0.0.1:{_closed_port()}/audit"
    monkeypatch.setenv("HANDREADER_AUDIT_TOKEN", TOKEN)
    monkeypatch.setenv("HANDREADER_DATABASE_URL", url)
    with TestClient(_app(), raise_server_exceptions=False) as client:
        message = error_message(_verify(client), 503, "store_unavailable")
        assert message.startswith("cannot reach database 'postgresql://floor:***@127.0.0.1:")
        error_message(client.get("/v1/audit", headers=AUTH), 503, "store_unavailable")
        assert client.get("/health").status_code == 200  # reading photos needs no store
        store = _store(client)
        # without the operator token the reason is given in general words only
        assert store == {
            "backend": "postgresql",
            "ok": False,
            "error": "the database does not answer",
            "audit": "on",
        }
        detailed = _store(client, AUTH)
        assert detailed["ok"] is False and "cannot reach database" in detailed["error"]
        assert "pw@" not in json.dumps(detailed)


# --- deck profiles -------------------------------------------------------------------------------


def _card_photo(name: str) -> tuple[str, tuple[str, bytes, str]]:
    return ("photo", (name, image_bytes(320, 240, ".png"), "image/png"))


def test_a_deck_calibrated_through_one_replica_is_used_by_the_other(
    postgres_schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HANDREADER_DATABASE_URL", postgres_schema)
    monkeypatch.setenv("HANDREADER_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("HANDREADER_AUDIT_TOKEN", TOKEN)  # deck writes need the operator token
    DECKS.clear()
    first_reader, second_reader = DeckFakeReader(NIU_TABLE), DeckFakeReader(NIU_TABLE)
    with fake_client(first_reader) as first, fake_client(second_reader) as second:
        files = [_card_photo("a.png"), _card_photo("b.png")]
        made = first.post("/v1/decks/house", files=files, data={"codes": "AS 10H"}, headers=AUTH)
        assert made.status_code == 200, made.text
        assert raw(postgres_schema, "SELECT name FROM deck_profile") == [("house",)]
        assert [deck["name"] for deck in second.get("/v1/decks").json()["decks"]] == ["house"]
        assert second.post("/v1/read?deck=house", content=image_bytes()).status_code == 200
        assert second_reader.deck_calls == ["house"]
        files = [_card_photo("a.png"), _card_photo("b.png"), _card_photo("c.png")]
        again = second.post(
            "/v1/decks/house", files=files, data={"codes": "AS 10H QC"}, headers=AUTH
        )
        assert again.status_code == 200, again.text
        assert first.get("/v1/decks/house").json()["cards"] == 3  # calibrated again: read again
        assert second.delete("/v1/decks/house", headers=AUTH).status_code == 200
        assert first.get("/v1/decks").json()["decks"] == []
    assert raw(postgres_schema, "SELECT name FROM deck_profile") == []
    assert not (tmp_path / "data" / "decks").exists()  # nothing in the data folder
    DECKS.clear()


def test_health_answers_within_a_second_while_the_database_hangs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A frozen database (a probe that does not come back): /health answers from the last
    state known, marked stale, within the probe's second; the next probe is not piled up."""
    import threading
    import time

    from handreader.service.routes.verification import AuditLogHolder, AuditSettings

    holder = AuditLogHolder(AuditSettings(tmp_path / "audit.sqlite3", TOKEN))
    assert holder.describe()["ok"] is True  # a first answer, remembered
    release = threading.Event()
    calls = []

    def frozen() -> dict[str, object]:
        calls.append(1)
        release.wait(10)
        return {"ok": True}

    monkeypatch.setattr(holder, "_probe_store", frozen)
    for _ in range(2):
        started = time.monotonic()
        state = holder.describe(timeout_s=0.3)
        assert time.monotonic() - started < 1.0
        assert state["ok"] is False and state["stale"] is True
        assert state["schema_version"] == 1  # the last state known
    assert len(calls) == 1  # one probe waits on the database, not one per request
    release.set()
    holder.close()
