"""Cross-origin reads (``handreader.service.cors``): a page on an origin the operator lists
(``HANDREADER_ALLOWED_ORIGINS``) may write to the service already; its browser can read the
answers only when they say so. Expectations from the Fetch standard's CORS protocol: a preflight
answered with the methods and headers the page will send, every answer naming the page's origin
(never ``*``), ``Vary: Origin``; an origin not listed gets none of it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from web_fakes import NIU_TABLE, FakeReader, image_bytes

from handreader.service import app as serve
from handreader.service import deps as service_deps

LISTED = "https://tables.example:8443"


def _client(origins: tuple[str, ...]) -> TestClient:
    settings = serve.Settings(models_dir=Path("/nonexistent"), allowed_origins=origins)
    app = serve.create_app(settings=settings)
    app.dependency_overrides[service_deps.get_reader] = lambda: FakeReader(NIU_TABLE)
    return TestClient(app, raise_server_exceptions=False)


@pytest.fixture
def client() -> Iterator[TestClient]:
    with _client((LISTED,)) as running:
        yield running


def test_a_listed_pages_preflight_is_answered_with_what_it_may_send(client: TestClient) -> None:
    answer = client.options(
        "/v1/score",
        headers={
            "Origin": LISTED,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )
    assert answer.status_code == 204
    assert answer.headers["access-control-allow-origin"] == LISTED
    assert "POST" in answer.headers["access-control-allow-methods"]
    allowed = answer.headers["access-control-allow-headers"].lower()
    assert "authorization" in allowed and "content-type" in allowed  # tokens go in a header
    assert answer.headers["vary"] == "Origin"


def test_a_listed_pages_answers_name_its_origin_errors_too(client: TestClient) -> None:
    headers = {"Origin": LISTED}
    scored = client.post("/v1/score", content=image_bytes(), headers=headers)
    assert scored.status_code == 200
    assert scored.headers["access-control-allow-origin"] == LISTED
    assert "Origin" in scored.headers["vary"]
    refused = client.get("/v1/audit", headers=headers)  # audit off here: an error, read too
    assert refused.status_code >= 400
    assert refused.headers["access-control-allow-origin"] == LISTED
    assert "retry-after" in refused.headers["access-control-expose-headers"].lower()


@pytest.mark.parametrize("origin", ["https://evil.example", "null", "https://tables.example"])
def test_an_origin_not_listed_gets_no_cross_origin_answer(client: TestClient, origin: str) -> None:
    preflight = client.options(
        "/v1/score", headers={"Origin": origin, "Access-Control-Request-Method": "POST"}
    )
    assert preflight.status_code == 405  # the routes answer it: no method OPTIONS
    assert "access-control-allow-origin" not in preflight.headers
    read = client.get("/health", headers={"Origin": origin})
    assert read.status_code == 200 and "access-control-allow-origin" not in read.headers
    assert "Origin" in read.headers["vary"]  # a cache keeps it apart from a listed page's


def test_an_answer_without_an_origin_varies_by_it_while_origins_are_listed(
    client: TestClient,
) -> None:
    assert "Origin" in client.get("/health").headers["vary"]


def test_every_origin_when_the_list_says_star_each_named_as_itself() -> None:
    with _client(("*",)) as client:
        answer = client.get("/health", headers={"Origin": "https://anywhere.example"})
        assert answer.headers["access-control-allow-origin"] == "https://anywhere.example"


def test_no_list_no_cross_origin_headers() -> None:
    with _client(()) as client:
        answer = client.get("/health", headers={"Origin": LISTED})
        assert "access-control-allow-origin" not in answer.headers
        assert "Origin" not in answer.headers.get("vary", "")
