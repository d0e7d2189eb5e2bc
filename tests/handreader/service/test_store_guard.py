"""The deck store on a shared database as the service uses it (handreader.service.store_guard):
every call within its deadline, and no database user or host in what anyone may be answered.

The inner store is a stand-in that stalls or fails as a database would; one test goes through
``GET /v1/decks`` with a PostgreSQL URL on which nothing listens.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from handreader.service import app as serve
from handreader.service.store_guard import GuardedDeckStore
from handreader.store.database import StoreFullError, StoreUnavailableError
from handreader.store.decks import DeckStore, QuotaCheck, SavedDeck
from vision.calibration import DeckProfile, DeckProfileError

SECRET_PLACE = "cannot reach database 'postgresql://floor:***@10.1.2.3:5432/cards': password "
SECRET_PLACE += 'authentication failed for user "floor"'


class Standin(DeckStore):
    """Answers ``names`` after ``stall`` seconds, or raises ``error``."""

    def __init__(self, stall: float = 0.0, error: Exception | None = None) -> None:
        self.stall, self.error = stall, error

    @property
    def location(self) -> str:
        return "standin"

    def names(self) -> list[str]:
        time.sleep(self.stall)
        if self.error is not None:
            raise self.error
        return ["floordeck"]

    def stamp(self, name: str) -> str | None:
        return self.names() and None

    def _load(self, name: str) -> DeckProfile | None:
        return None

    def usage(self) -> dict[str, int]:
        return {}

    def save(
        self, profile: DeckProfile, replace: bool = False, quota: QuotaCheck | None = None
    ) -> SavedDeck:
        return SavedDeck("standin", None)

    def delete(self, name: str) -> bool:
        return False


def test_a_stalled_database_is_a_503_in_time() -> None:
    guarded = GuardedDeckStore(lambda: Standin(stall=3.0), "standin", deadline_s=0.3)
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError, match=r"did not answer within 0\.3 s"):
        guarded.names()
    assert time.monotonic() - started < 1.5


def test_an_error_names_neither_the_user_nor_the_host_and_is_logged_whole(
    caplog: pytest.LogCaptureFixture,
) -> None:
    guarded = GuardedDeckStore(
        lambda: Standin(error=StoreUnavailableError(SECRET_PLACE)), "postgresql://..."
    )
    with (
        caplog.at_level(logging.WARNING, logger="handreader.serve"),
        pytest.raises(StoreUnavailableError) as refused,
    ):
        guarded.names()
    message = str(refused.value)
    assert message == "the deck store's database cannot be reached (the server's log says why)"
    assert "floor" in caplog.text and "10.1.2.3" in caplog.text


@pytest.mark.parametrize(
    "error",
    [StoreFullError("the store's disk is full: nothing was written"), DeckProfileError("bad")],
)
def test_a_full_disk_and_a_bad_deck_pass_as_they_are(error: Exception) -> None:
    guarded = GuardedDeckStore(lambda: Standin(error=error), "standin")
    with pytest.raises(type(error)) as raised:
        guarded.names()
    assert raised.value is error


def test_opening_is_a_call_too() -> None:
    def unreachable() -> DeckStore:
        raise StoreUnavailableError(SECRET_PLACE)

    guarded = GuardedDeckStore(unreachable, "postgresql://floor@10.1.2.3/cards")
    with pytest.raises(StoreUnavailableError, match="cannot be reached") as refused:
        guarded.names()
    assert "floor" not in str(refused.value)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_anyone_asking_for_the_decks_learns_no_database_user_or_host(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("psycopg")
    url = f"postgresql://floor:hunter2@127.0.0.1:{_closed_port()}/cards"
    monkeypatch.setenv("HANDREADER_DATABASE_URL", url)
    app = serve.create_app(settings=serve.Settings(models_dir=Path("/nonexistent")))
    with TestClient(app, raise_server_exceptions=False) as client:
        answers = [client.get("/v1/decks") for _ in range(2)]  # opening, then opening again
    for answer in answers:
        assert answer.status_code == 503, answer.text
        assert answer.json()["error"]["code"] == "store_unavailable"
        for secret in ("floor", "127.0.0.1", "hunter2", "cards"):
            assert secret not in answer.text


def test_a_pool_thread_is_not_held_past_the_deadline_by_a_stall() -> None:
    """Calls that stall fill at most the guard's own pool; the caller is answered each time."""
    release = threading.Event()

    class Held(Standin):
        def names(self) -> list[str]:
            release.wait(5)
            return []

    guarded = GuardedDeckStore(Held, "standin", deadline_s=0.2)
    for _ in range(3):
        with pytest.raises(StoreUnavailableError):
            guarded.names()
    release.set()
