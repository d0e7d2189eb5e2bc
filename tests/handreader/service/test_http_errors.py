"""Errors of the HTTP exchange itself, told in words: an unknown path or method names what was
asked and what is answered, a compressed body is refused for its encoding (not misread as a
photo), and every answer of the content-negotiated drawing says it varies with ``Accept``.

Expectations: docs/api.md's error table (``not_found``, ``method_not_allowed``,
``unsupported_encoding``), RFC 9110 (15.5.16: a 415 for a content coding names the codings
accepted in ``Accept-Encoding``; 12.5.5: ``Vary`` names the headers the answer was chosen by).
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Iterator

import pytest
from fastapi.testclient import TestClient
from web_fakes import NIU_TABLE, FakeReader, error_message, fake_client, image_bytes

CODES = b'{"hands": ["KS QS 10S 5C 5S", "3H 7S KD 8C 6D"]}'


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with fake_client(FakeReader(NIU_TABLE)) as running:
        yield running


# --- 404 and 405 ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "said"),
    [
        ("GET", "/v1/nope", "no such endpoint: GET /v1/nope"),
        ("POST", "/v1/scores", "no such endpoint: POST /v1/scores"),
        ("GET", "/v1/read/", "no such endpoint: GET /v1/read/"),  # no redirect for the slash
    ],
)
def test_an_unknown_path_is_named(client: TestClient, method: str, path: str, said: str) -> None:
    assert error_message(client.request(method, path), 404, "not_found") == said


def test_a_long_unknown_path_is_not_echoed_whole(client: TestClient) -> None:
    message = error_message(client.get("/v1/" + "a" * 10_000), 404, "not_found")
    assert message.startswith("no such endpoint: GET /v1/aaa") and len(message) < 300


def test_a_route_that_names_its_missing_thing_keeps_its_words(client: TestClient) -> None:
    assert error_message(client.get("/v1/decks/none-such"), 404, "not_found") == (
        "no deck 'none-such'"
    )


@pytest.mark.parametrize(
    ("method", "path", "said", "allowed"),
    [
        ("PUT", "/v1/score", "method PUT is not allowed on /v1/score; allowed: POST", "POST"),
        (
            "DELETE",
            "/health",
            "method DELETE is not allowed on /health; allowed: GET, HEAD",
            "GET, HEAD",
        ),
        (
            "PUT",
            "/v1/decks/mine",
            "method PUT is not allowed on /v1/decks/mine; allowed: DELETE, GET, HEAD, POST",
            "DELETE, GET, HEAD, POST",
        ),
    ],
)
def test_a_wrong_method_is_named_with_the_methods_allowed(
    client: TestClient, method: str, path: str, said: str, allowed: str
) -> None:
    answer = client.request(method, path)
    assert error_message(answer, 405, "method_not_allowed") == said
    assert answer.headers["allow"] == allowed


# --- compressed bodies ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [("gzip", gzip.compress), ("deflate", zlib.compress), ("br", lambda data: data)],
)
def test_a_compressed_photo_is_refused_for_its_encoding(
    client: TestClient, encoding: str, compress: Callable[[bytes], bytes]
) -> None:
    answer = client.post(
        "/v1/read", content=compress(image_bytes()), headers={"content-encoding": encoding}
    )
    message = error_message(answer, 415, "unsupported_encoding")
    assert f"Content-Encoding '{encoding}'" in message and "first bytes" not in message
    assert answer.headers["accept-encoding"] == "identity"


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/v1/score", "application/json"),
        ("/v1/trainer/check", "application/json"),
        ("/v1/audit/verify", "application/json"),
        ("/v1/read", "multipart/form-data; boundary=x"),
    ],
)
def test_a_compressed_body_is_refused_on_every_route(
    client: TestClient, path: str, content_type: str
) -> None:
    answer = client.post(
        path,
        content=gzip.compress(CODES),
        headers={"content-encoding": "gzip", "content-type": content_type},
    )
    assert "'gzip' is not supported" in error_message(answer, 415, "unsupported_encoding")


def test_an_identity_encoding_is_read_as_sent(client: TestClient) -> None:
    for encoding in ("identity", "Identity", ""):
        answer = client.post(
            "/v1/score",
            content=CODES,
            headers={"content-encoding": encoding, "content-type": "application/json"},
        )
        assert answer.status_code == 200, (encoding, answer.text)


def test_a_request_without_a_body_is_not_refused_for_its_encoding(client: TestClient) -> None:
    assert client.get("/health", headers={"content-encoding": "gzip"}).status_code == 200


# --- Vary on the drawing -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "headers", "status"),
    [
        ("", {"accept": "image/png"}, 200),
        ("", {"accept": "application/json"}, 406),
        ("?format=gif", {}, 400),
        ("?game=cribbage", {}, 400),
    ],
)
def test_every_answer_of_the_drawing_varies_with_accept(
    client: TestClient, query: str, headers: dict[str, str], status: int
) -> None:
    answer = client.post(f"/v1/annotated{query}", content=image_bytes(), headers=headers)
    assert answer.status_code == status, answer.text
    assert answer.headers.get_list("vary") == ["Accept"]


def test_the_drawing_varies_with_accept_on_a_body_refused_and_a_wrong_method(
    client: TestClient,
) -> None:
    refused = client.post("/v1/annotated", content=b"x" * 10, headers={"content-type": "text/x"})
    assert refused.status_code == 415 and refused.headers["vary"] == "Accept"
    assert client.get("/v1/annotated").headers["vary"] == "Accept"
    assert "vary" not in client.post("/v1/score", content=CODES).headers


def test_a_bad_query_parameter_is_named_as_the_client_wrote_it(client: TestClient) -> None:
    # the validator's place is ("query", "hands"): the client wrote hands=, not query.hands
    message = error_message(
        client.get("/v1/trainer/deal", params={"hands": "x"}), 422, "validation_error"
    )
    assert message.startswith("hands: ") and "query." not in message, message
