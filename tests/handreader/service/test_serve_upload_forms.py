"""Uploads the multipart parser refuses or misreads are told in the client's terms.

Cases (each once refused with a message that did not say what was wrong): an 8,000-character
file name ("Invalid multipart data."; python-multipart takes part header lines up to 4,224
bytes: ``handreader.service.multipart_hints``), a form sent with ``Content-Type:
application/json`` (a 413 for the JSON limit) or ``image/jpeg`` (a 415 quoting ``2d 2d 2d``:
the boundary's dashes), and a file named only by RFC 5987 ``filename*=`` (called text without
a file name). Statuses: docs/api.md's error table.
"""

from __future__ import annotations

from collections.abc import Iterator

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient
from web_fakes import NIU_TABLE, FakeReader, error_message, fake_client

from handreader.service.multipart_hints import boundary

BOUNDARY = "pT7x9boundary"


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with fake_client(FakeReader(NIU_TABLE)) as running:
        yield running


def _photo(size: int = 300) -> bytes:
    rng = np.random.default_rng(0)  # noisy: over 64 KB encoded, as a phone photo is
    image = rng.integers(0, 256, (size, size, 3), dtype=np.uint8)
    ok, buffer = cv2.imencode(".jpg", image)
    assert ok
    return buffer.tobytes()


def _form(disposition: str, data: bytes) -> bytes:
    return (
        (
            f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\n"
            "Content-Type: image/jpeg\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{BOUNDARY}--\r\n".encode()
    )


def _post(client: TestClient, body: bytes, content_type: str) -> object:
    return client.post("/v1/read", content=body, headers={"Content-Type": content_type})


FORM_TYPE = f"multipart/form-data; boundary={BOUNDARY}"


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        (FORM_TYPE, BOUNDARY.encode()),
        ('multipart/form-data; BOUNDARY="a b:c"; charset=utf-8', b"a b:c"),  # RFC 2046 bchars
        ("multipart/form-data; boundary=x; charset=utf-8", b"x"),
        ("multipart/form-data; boundary=abc ; charset=utf-8", b"abc"),  # spaces: not the token's
        ("multipart/form-data; boundary=abc  ", b"abc"),
        ('multipart/form-data; boundary="abc " ; charset=utf-8', b"abc "),  # quoted: kept
        ("multipart/form-data", None),  # the parser names that itself
    ],
)
def test_the_boundary_is_read_from_the_content_type(
    content_type: str, expected: bytes | None
) -> None:
    # one reading for the closing delimiter's check and for the part headers' hints
    assert boundary(content_type) == expected


def test_a_long_file_name_is_named_as_too_long(client: TestClient) -> None:
    body = _form(f'form-data; name="image"; filename="{"n" * 8000}.jpg"', _photo())
    message = error_message(_post(client, body, FORM_TYPE), 400, "malformed_multipart")
    assert "Content-Disposition) of 8," in message and "over the limit of 4,224" in message
    assert "file name" in message


def test_a_file_name_of_4000_characters_is_read(client: TestClient) -> None:
    body = _form(f'form-data; name="image"; filename="{"n" * 4000}.jpg"', _photo())
    assert _post(client, body, FORM_TYPE).status_code == 200  # type: ignore[attr-defined]


@pytest.mark.parametrize("content_type", ["application/json", "image/jpeg"])
def test_a_form_sent_under_another_type_is_named(client: TestClient, content_type: str) -> None:
    body = _form('form-data; name="image"; filename="hand.jpg"', _photo())
    assert len(body) > 65_536  # over the JSON limit: the size was what used to be told
    message = error_message(_post(client, body, content_type), 415, "unsupported_type")
    assert "multipart form" in message and f"Content-Type: {content_type}" in message


def test_a_file_named_only_by_rfc_5987_is_told_so(client: TestClient) -> None:
    for data in (_photo(), _photo(40)):  # over and under the 64 KB of a text field
        body = _form("form-data; name=\"image\"; filename*=UTF-8''h%C3%A9.jpg", data)
        message = error_message(_post(client, body, FORM_TYPE), 422, "missing_image")
        assert "filename*=" in message and 'filename="photo.jpg"' in message
