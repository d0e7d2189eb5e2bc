"""Host names and cross-site writes (handreader.service.hosts): DNS rebinding and form posts
from other sites are refused before any route runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from handreader.service import app as serve
from handreader.service.hosts import (
    ANY_ADDRESS,
    LOOPBACK_NAMES,
    allowed_hosts,
    host_allowed,
    host_name,
)


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, None),  # an app made in a program: no bind address to go by
        ({"HANDREADER_BIND_HOST": "127.0.0.1"}, LOOPBACK_NAMES),
        # every address: any IP address reaches it, names only when listed
        ({"HANDREADER_BIND_HOST": "0.0.0.0"}, LOOPBACK_NAMES | {ANY_ADDRESS}),
        ({"HANDREADER_BIND_HOST": "10.0.0.5"}, LOOPBACK_NAMES | {"10.0.0.5"}),
        ({"HANDREADER_BIND_HOST": "0.0.0.0", "HANDREADER_ALLOWED_HOSTS": "Tables.Example"},
         LOOPBACK_NAMES | {"tables.example", ANY_ADDRESS}),
        ({"HANDREADER_BIND_HOST": "127.0.0.1", "HANDREADER_ALLOWED_HOSTS": "*"}, None),
    ],
)  # fmt: skip
def test_the_names_answered(environ: dict[str, str], expected: frozenset[str] | None) -> None:
    assert allowed_hosts(environ) == expected


def test_a_service_on_every_address_answers_addresses_not_rebound_names() -> None:
    """The documented phone setup (``--host 0.0.0.0``): a phone asks by the machine's address;
    a rebinding page's ``Host`` is its own name."""
    hosts = allowed_hosts({"HANDREADER_BIND_HOST": "0.0.0.0"})
    for name in ("192.168.1.20", "10.0.0.5", "fe80::1", "localhost"):
        assert host_allowed(name, hosts), name
    for name in ("rebind.attacker.example", "192.168.1.20.nip.io", ""):
        assert not host_allowed(name, hosts), name
    assert host_allowed("anything.example", None)  # the check turned off


def test_host_names_lose_their_port() -> None:
    assert host_name("LOCALHOST:8000") == "localhost"
    assert host_name("[::1]:8000") == "::1" and host_name("127.0.0.1") == "127.0.0.1"


@pytest.fixture
def app() -> object:
    settings = serve.Settings(models_dir=Path("/nonexistent"), allowed_hosts=LOOPBACK_NAMES)
    return serve.create_app(settings=settings)


def test_a_rebound_name_is_refused_and_loopback_served(app: object) -> None:
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:  # type: ignore[arg-type]
        assert client.get("/health").status_code in (200, 503)
        evil = client.get("/health", headers={"host": "evil.example"})
        assert evil.status_code == 400 and evil.json()["error"]["code"] == "bad_host"
        assert "'evil.example'" in evil.json()["error"]["message"]
        with (
            pytest.raises(WebSocketDisconnect),
            client.websocket_connect(
                "/v1/live", headers={"host": "evil.example", "origin": "http://evil.example"}
            ) as socket,
        ):
            socket.receive_text()


def test_a_write_from_another_site_is_refused_before_any_route(app: object) -> None:
    body = {"hands": ["3H 7S KD 8C 6D", "KS QS 10S 5C 5S"]}
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:  # type: ignore[arg-type]
        foreign = client.post("/v1/score", json=body, headers={"origin": "https://evil.example"})
        assert foreign.status_code == 403 and foreign.json()["error"]["code"] == "forbidden"
        deck = client.post(
            "/v1/decks/mine", files={"photos": ("a.jpg", b"x", "image/jpeg")},
            headers={"origin": "https://evil.example"},
        )  # fmt: skip
        assert deck.status_code == 403
        own = client.post("/v1/score", json=body, headers={"origin": "http://127.0.0.1:8000"})
        assert own.status_code == 200
        assert client.post("/v1/score", json=body).status_code == 200  # a program: no Origin
