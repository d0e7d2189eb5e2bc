"""Wrong operator tokens: slowed, then refused per address, logged in groups
(handreader.service.token_guard), alone and through the service."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from web_fakes import NIU_TABLE, FakeReader, error_message

from handreader.service import app as serve
from handreader.service import deps as service_deps
from handreader.service.token_guard import (
    FIRST_DELAY_S,
    MAX_DELAY_S,
    TokenGuard,
    TooManyAttemptsError,
)

TOKEN = "s3cret-operator-token"


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_first_refusals_wait_nothing_then_twice_as_long_each_up_to_the_cap() -> None:
    guard = TokenGuard(free=5, clock=_Clock())
    delays = [guard.refused("10.0.0.7", "GET /v1/audit").delay_s for _ in range(12)]
    assert delays[:5] == [0.0] * 5
    assert delays[5:9] == [FIRST_DELAY_S, 2 * FIRST_DELAY_S, 4 * FIRST_DELAY_S, MAX_DELAY_S]
    assert delays[9:] == [MAX_DELAY_S] * 3
    assert guard.refused("10.0.0.8", "GET /v1/audit").delay_s == 0.0  # another address


def test_an_address_past_the_limit_is_held_off_until_the_window_moves_on() -> None:
    clock = _Clock()
    guard = TokenGuard(window_s=60.0, lock_after=30, clock=clock)
    for second in range(30):
        guard.check("10.0.0.7")
        clock.now = 1000.0 + second
        guard.refused("10.0.0.7", "GET /v1/audit")
    with pytest.raises(TooManyAttemptsError, match="try again in 31 s") as held:
        guard.check("10.0.0.7")
    assert held.value.retry_after_s == 31 and held.value.code == "too_many_attempts"
    guard.check("10.0.0.9")  # others are not held off
    clock.now = 1000.0 + 60.5  # the first refusal has left the window
    guard.check("10.0.0.7")


def test_tokens_checked_together_get_no_more_refusals_than_the_limit() -> None:
    """Requests sent at once all pass the check before any is refused: those counted past the
    limit are held off (429) instead, and are not counted."""
    clock = _Clock()
    guard = TokenGuard(window_s=60.0, free=100, lock_after=30, clock=clock)
    for _ in range(300):
        guard.check("10.0.0.7")
    refusals = []
    for second in range(300):
        clock.now = 1000.0 + second / 100
        refusals.append(guard.refused("10.0.0.7", "GET /v1/audit"))
    assert [refusal.retry_after_s for refusal in refusals[:30]] == [None] * 30
    # the first refusal, at 1000.00, leaves the window at 1060: 60 s after 1000.30, 58 after 1002.99
    assert [refusals[index].retry_after_s for index in (30, 299)] == [60, 58]
    assert all(refusal.retry_after_s in (58, 59, 60) for refusal in refusals[30:])
    assert all(refusal.delay_s == 0.0 for refusal in refusals[30:])
    clock.now = 1060.5  # the whole burst has left the window
    assert guard.refused("10.0.0.7", "GET /v1/audit").retry_after_s is None


def test_refusals_are_logged_once_then_in_groups() -> None:
    guard = TokenGuard(log_every=100, lock_after=10_000, clock=_Clock())
    lines = [guard.refused("10.0.0.7", "GET /v1/audit: wrong token").line for _ in range(1000)]
    logged = [line for line in lines if line is not None]
    assert logged[0] == "GET /v1/audit: wrong token from 10.0.0.7 refused"
    assert len(logged) == 1 + 9  # the first, then one line for every hundred after it
    assert logged[1].startswith("100 more wrong operator tokens from 10.0.0.7 (101 in the last")


def _client(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, guard: TokenGuard) -> TestClient:
    monkeypatch.setenv("HANDREADER_AUDIT_TOKEN", TOKEN)
    monkeypatch.setenv("HANDREADER_AUDIT_DB", str(tmp_path / "audit.sqlite3"))
    app = serve.create_app(settings=serve.Settings(models_dir=Path("/nonexistent")))
    app.dependency_overrides[service_deps.get_reader] = lambda: FakeReader(NIU_TABLE)
    app.state.token_guard = guard
    return TestClient(app, raise_server_exceptions=False)


def test_the_service_slows_then_holds_off_a_guessing_address(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    guard = TokenGuard(free=1, lock_after=3, log_every=100)
    wrong = {"Authorization": "Bearer guess"}
    with _client(monkeypatch, tmp_path, guard) as client, caplog.at_level(logging.INFO):
        error_message(client.get("/v1/audit", headers=wrong), 401, "unauthorized")
        started = time.monotonic()
        error_message(client.get("/v1/audit", headers=wrong), 401, "unauthorized")
        assert time.monotonic() - started >= FIRST_DELAY_S * 0.9  # the second one waited
        error_message(client.get("/v1/audit", headers=wrong), 401, "unauthorized")
        # held off before its token is compared, the right one too
        right = {"Authorization": f"Bearer {TOKEN}"}
        for headers in (wrong, right):
            response = client.get("/v1/audit", headers=headers)
            message = error_message(response, 429, "too_many_attempts")
            assert message.startswith("too many wrong operator tokens from this address")
            assert 1 <= int(response.headers["Retry-After"]) <= 60
        deck = client.post("/v1/decks/house", content=b"x", headers=wrong)
        error_message(deck, 429, "too_many_attempts")
        assert client.get("/health").status_code == 200  # no token: not held off
    refused = [record.getMessage() for record in caplog.records if "refused" in record.getMessage()]
    assert refused == [
        "GET /v1/audit: wrong operator token for the audit log from testclient refused"
    ]


def test_a_right_token_is_not_slowed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    guard = TokenGuard(free=0)
    with _client(monkeypatch, tmp_path, guard) as client:
        answer: Any = client.get("/v1/audit", headers={"Authorization": f"Bearer {TOKEN}"})
        assert answer.status_code == 200


def test_requests_without_a_token_are_refused_but_never_lock_the_operator_out(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Behind a proxy every client shares its address: a crowd asking without a token guesses
    nothing, and must not hold off the operator's right token."""
    guard = TokenGuard(free=1, lock_after=3, log_every=100)
    with _client(monkeypatch, tmp_path, guard) as client:
        for _ in range(10):
            error_message(client.get("/v1/audit"), 401, "unauthorized")
            error_message(client.post("/v1/decks/house", content=b"x"), 401, "unauthorized")
        answer = client.get("/v1/audit", headers={"Authorization": f"Bearer {TOKEN}"})
        assert answer.status_code == 200, answer.text


class _Unchecked(TokenGuard):
    """Every request passes the check, as requests sent at once do before any is refused."""

    def check(self, client: str) -> None:
        return None


def test_a_token_refused_past_the_limit_is_answered_429_at_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    guard = _Unchecked(free=100, lock_after=2)
    wrong = {"Authorization": "Bearer guess"}
    with _client(monkeypatch, tmp_path, guard) as client:
        for _ in range(2):
            error_message(client.get("/v1/audit", headers=wrong), 401, "unauthorized")
        response = client.get("/v1/audit", headers=wrong)
        assert "try again in" in error_message(response, 429, "too_many_attempts")
        assert 1 <= int(response.headers["Retry-After"]) <= 60


def test_health_counts_wrong_tokens_and_compares_none_from_an_address_held_off(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``/health`` answers 200 with or without the token, its store's place only to the
    operator: a guesser held off learns nothing there either."""
    guard = TokenGuard(free=100, lock_after=3)
    right = {"Authorization": f"Bearer {TOKEN}"}
    with _client(monkeypatch, tmp_path, guard) as client:
        assert "location" in client.get("/health", headers=right).json()["store"]
        for _ in range(3):
            answer = client.get("/health", headers={"Authorization": "Bearer guess"})
            assert answer.status_code == 200 and "location" not in answer.json()["store"]
        held = client.get("/health", headers=right)  # held off: the token is not compared
        assert held.status_code == 200 and "location" not in held.json()["store"]
        error_message(client.get("/v1/audit", headers=right), 429, "too_many_attempts")


def test_health_takes_the_deck_writing_token_as_an_operators_never_as_a_guess(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The docs invite a monitor to poll ``/health`` with the operator token: the deck-writing
    one (``HANDREADER_OPERATOR_TOKEN``) is an operator's as the audit log's is, so polling with
    it shows the store's place and never locks the operator out of the log or the decks."""
    monkeypatch.setenv("HANDREADER_OPERATOR_TOKEN", "deck-operator")
    guard = TokenGuard(free=100, lock_after=3)
    decks = {"Authorization": "Bearer deck-operator"}
    with _client(monkeypatch, tmp_path, guard) as client:
        for _ in range(10):  # more than the guard's lock_after
            answer = client.get("/health", headers=decks)
            assert answer.status_code == 200 and "location" in answer.json()["store"]
        audit = client.get("/v1/audit", headers={"Authorization": f"Bearer {TOKEN}"})
        assert audit.status_code == 200, audit.text


def test_a_refusal_logs_the_clients_text_printable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A path with an escape sequence or a line separator never reaches the log raw."""
    guard = TokenGuard(log_every=100)
    with _client(monkeypatch, tmp_path, guard) as client, caplog.at_level(logging.INFO):
        path = "/v1/decks/x%1B[2K%0B%C2%85%E2%80%A8end"
        answer = client.delete(path, headers={"Authorization": "Bearer guess"})
        assert answer.status_code == 401
    (line,) = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert line.isprintable(), repr(line)
    assert "x\\x1b[2K\\x0b\\x85\\u2028end" in line
