"""Who may write and delete decks, and how many the service keeps
(handreader.service.routes.deck_access, the routes of handreader.service.routes.calibrate).

Expectations from the module's contract: writes need the operator token
(``HANDREADER_OPERATOR_TOKEN``, else ``HANDREADER_AUDIT_TOKEN``), checked before the body is
read; ``HANDREADER_OPEN_DECKS=1`` opens them; names match ``[A-Za-z0-9][A-Za-z0-9_.-]{0,63}``
to the very end; the quota counts decks and their bytes; reading needs no token.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from web_fakes import NIU_TABLE, DeckFakeReader, error_message, fake_client, image_bytes

from handreader.service.routes.decks import DECKS
from vision.calibration import DeckProfileError, list_profiles, profile_path

TOKEN = "deck-writer"
AUDIT_TOKEN = "audit-reader"


@pytest.fixture(autouse=True)
def environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "data"
    monkeypatch.setenv("HANDREADER_DATA", str(folder))
    for name in (
        "HANDREADER_OPERATOR_TOKEN",
        "HANDREADER_AUDIT_TOKEN",
        "HANDREADER_OPEN_DECKS",
        "HANDREADER_MAX_DECKS",
        "HANDREADER_MAX_DECK_STORAGE",
    ):
        monkeypatch.delenv(name, raising=False)
    DECKS.clear()
    yield folder
    DECKS.clear()


def _client(monkeypatch: pytest.MonkeyPatch, **environ: str) -> Iterator[TestClient]:
    for name, value in environ.items():
        monkeypatch.setenv(f"HANDREADER_{name}", value)
    with fake_client(DeckFakeReader(NIU_TABLE)) as client:
        yield client


def _calibrate(client: TestClient, name: str, token: str | None = TOKEN) -> Any:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    photo = ("photo", ("AS.png", image_bytes(320, 240, ".png"), "image/png"))
    return client.post(f"/v1/decks/{name}", files=[photo], headers=headers)


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    yield from _client(monkeypatch, OPERATOR_TOKEN=TOKEN, AUDIT_TOKEN=AUDIT_TOKEN)


def test_anonymous_and_wrong_tokens_write_nothing(client: TestClient) -> None:
    error_message(_calibrate(client, "mine", token=None), 401, "unauthorized")
    error_message(_calibrate(client, "mine", token="guess"), 401, "unauthorized")
    # the operator token wins over the audit token when both are set
    error_message(_calibrate(client, "mine", token=AUDIT_TOKEN), 401, "unauthorized")
    assert list_profiles() == []
    assert _calibrate(client, "mine").status_code == 200
    assert list_profiles() == ["mine"]
    assert client.get("/v1/decks/mine").json()["cards"] == 1  # reading needs no token


def test_the_audit_token_serves_when_no_operator_token_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for client in _client(monkeypatch, AUDIT_TOKEN=AUDIT_TOKEN):
        assert _calibrate(client, "mine", token=AUDIT_TOKEN).status_code == 200


def test_without_any_token_writing_is_off_unless_opened(monkeypatch: pytest.MonkeyPatch) -> None:
    for client in _client(monkeypatch):
        message = error_message(_calibrate(client, "mine", token=None), 403, "forbidden")
        assert "HANDREADER_OPERATOR_TOKEN" in message and "HANDREADER_OPEN_DECKS" in message
    for client in _client(monkeypatch, OPEN_DECKS="1"):
        assert _calibrate(client, "mine", token=None).status_code == 200
        assert client.delete("/v1/decks/mine").status_code == 200


def test_the_token_is_checked_before_the_body_is_read(client: TestClient) -> None:
    # a body that does not parse: refused for the token, never read
    broken = {"content-type": "multipart/form-data; boundary=x"}
    response = client.post("/v1/decks/mine", content=b"--x\r\nnot a part", headers=broken)
    error_message(response, 401, "unauthorized")
    response = client.post(
        "/v1/verify", content=b"--x\r\nnot a part", headers={**broken, "Authorization": "Bearer no"}
    )
    error_message(response, 401, "unauthorized")


@pytest.mark.parametrize("name", ["abc\n", "abc%0A", "-abc", "abc def", "..x", "a;b"])
def test_a_name_must_match_to_its_end(client: TestClient, name: str) -> None:
    error_message(_calibrate(client, name.replace("\n", "%0A")), 400, "bad_options")
    assert list_profiles() == []


def test_a_name_ending_in_a_newline_is_no_profile_name() -> None:
    with pytest.raises(DeckProfileError):
        profile_path("abc\n")


def test_the_number_of_decks_is_limited(monkeypatch: pytest.MonkeyPatch) -> None:
    for client in _client(monkeypatch, OPERATOR_TOKEN=TOKEN, MAX_DECKS="2"):
        for name in ("one", "two"):
            assert _calibrate(client, name).status_code == 200
        message = error_message(_calibrate(client, "three"), 409, "quota_exceeded")
        assert "at most 2 decks" in message
        assert _calibrate(client, "two").status_code == 200
        assert client.delete(
            "/v1/decks/one", headers={"Authorization": f"Bearer {TOKEN}"}
        ).json() == {"deleted": "one"}
        assert _calibrate(client, "three").status_code == 200
        assert list_profiles() == ["three", "two"]


def test_decks_written_at_once_never_pass_the_number_of_decks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each write passes the first check before any is saved; the check made again with the
    save keeps the quota."""
    from concurrent.futures import ThreadPoolExecutor

    for client in _client(monkeypatch, OPEN_DECKS="1", MAX_DECKS="1"):
        names = [f"burst{number}" for number in range(8)]
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(_calibrate, [client] * 8, names, [None] * 8))
        statuses = sorted(answer.status_code for answer in answers)
        assert statuses.count(200) == 1 and set(statuses) == {200, 409}, statuses
        assert len(list_profiles()) == 1


def test_the_storage_of_decks_is_limited(monkeypatch: pytest.MonkeyPatch) -> None:
    for client in _client(monkeypatch, OPERATOR_TOKEN=TOKEN):
        assert _calibrate(client, "probe").status_code == 200
        size = profile_path("probe").stat().st_size
        client.delete("/v1/decks/probe", headers={"Authorization": f"Bearer {TOKEN}"})
    room = str(size * 3 // 2)  # one deck fits, two do not
    for client in _client(monkeypatch, OPERATOR_TOKEN=TOKEN, MAX_DECK_STORAGE=room):
        assert _calibrate(client, "one").status_code == 200
        message = error_message(_calibrate(client, "two"), 409, "quota_exceeded")
        assert re.search(r"the decks take [\d,]+ bytes and this one [\d,]+", message), message
        assert _calibrate(client, "one").status_code == 200  # made again: itself is no other
        assert list_profiles() == ["one"]
    for client in _client(monkeypatch, OPERATOR_TOKEN=TOKEN, MAX_DECK_STORAGE=str(size // 2)):
        client.delete("/v1/decks/one", headers={"Authorization": f"Bearer {TOKEN}"})
        message = error_message(_calibrate(client, "big"), 409, "quota_exceeded")
        assert "most the service keeps is" in message  # one deck alone cannot pass it
        assert list_profiles() == []


def test_delete_needs_the_token_and_a_deck(client: TestClient) -> None:
    assert _calibrate(client, "mine").status_code == 200
    error_message(client.delete("/v1/decks/mine"), 401, "unauthorized")
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert client.delete("/v1/decks/mine", headers=auth).json() == {"deleted": "mine"}
    error_message(client.delete("/v1/decks/mine", headers=auth), 404, "not_found")
    error_message(client.post("/v1/read?deck=mine", content=image_bytes()), 400, "bad_options")
