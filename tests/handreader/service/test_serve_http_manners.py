"""What HTTP asks of every service, beyond each endpoint's own answer: ``HEAD`` wherever ``GET``
is answered, an ``Allow`` header naming every method of a path, ``Vary`` where the answer
depends on a header, and errors that say what the client should send instead."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from web_fakes import NIU_TABLE, FakeReader, error_message, fake_client, image_bytes


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with fake_client(FakeReader(NIU_TABLE)) as running:
        yield running


@pytest.mark.parametrize("path", ["/health", "/", "/docs", "/v1/decks", "/openapi.json"])
def test_head_is_answered_wherever_get_is(client: TestClient, path: str) -> None:
    got, head = client.get(path), client.head(path)
    assert got.status_code == head.status_code == 200
    assert head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]
    assert head.headers["content-length"] == str(len(got.content))


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/v1/decks/mine", "DELETE, GET, HEAD, POST"),  # three routes share the path
        ("GET", "/v1/score", "POST"),
        ("HEAD", "/v1/score", "POST"),
        ("DELETE", "/health", "GET, HEAD"),
    ],
)
def test_a_wrong_method_is_told_every_method_of_the_path(
    client: TestClient, method: str, path: str, allowed: str
) -> None:
    answer = client.request(method, path)
    assert answer.status_code == 405
    assert answer.headers["allow"] == allowed


def test_the_drawing_varies_with_the_accept_header(client: TestClient) -> None:
    answer = client.post("/v1/annotated", content=image_bytes(), headers={"accept": "image/png"})
    assert answer.status_code == 200 and answer.headers["content-type"] == "image/png"
    assert answer.headers["vary"] == "Accept"


def test_json_sent_without_its_type_is_told_to_say_so(client: TestClient) -> None:
    answer = client.post(
        "/v1/score",
        content=b' {"hands": ["3H 7S KD 8C 6D"]}',
        headers={"content-type": "text/plain"},
    )
    assert "Content-Type: application/json" in error_message(answer, 415, "unsupported_type")


def test_a_multipart_body_cut_short_is_named_so_not_a_missing_image(client: TestClient) -> None:
    part = b'--xx\r\nContent-Disposition: form-data; name="image"; filename="a.jpg"\r\n\r\n'
    headers = {"Content-Type": "multipart/form-data; boundary=xx"}
    cut = client.post("/v1/read", content=part + image_bytes(), headers=headers)
    assert "ends before its closing boundary" in error_message(cut, 400, "malformed_multipart")
    whole = client.post(
        "/v1/read", content=part + image_bytes() + b"\r\n--xx--\r\n", headers=headers
    )
    assert whole.status_code == 200
    other = b'--xx\r\nContent-Disposition: form-data; name="other"\r\n\r\nx\r\n--xx--\r\n'
    answer = client.post("/v1/read", content=other, headers=headers)
    assert "without an 'image' field" in error_message(answer, 422, "missing_image")


def test_two_photos_in_one_multipart_body_are_refused(client: TestClient) -> None:
    files = [("image", ("a.jpg", image_bytes(), "image/jpeg"))] * 2
    answer = client.post("/v1/read", files=files)
    assert "several 'image' fields" in error_message(answer, 400, "malformed_multipart")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"hands": ["3H 7S KD 8C 6D"], "stake": [1]},
            "stake: Input should be a valid number or text",
        ),
        # a hand is codes in a list or in one text: the message is the member the value meant
        (
            {"hands": ["KS QS JS 10S 9S" + " " * 400]},
            "hands.0: String should have at most 400 characters",
        ),
        (
            {"hands": [[1, 2, "3H"]]},
            "hands.0.0, hands.0.1: Input should be a valid string",
        ),
        ({"hands": [5]}, "hands.0: Input should be a valid list or a valid string"),
        (
            {"hands": ["3H 7S KD 8C 6D", "2S 4S 5S 9S QH"], "pick": 3},
            "pick 3 is no hand: hands are 0..1",
        ),
    ],
)
def test_validation_messages_name_the_field_as_the_request_does(
    client: TestClient, body: dict[str, object], message: str
) -> None:
    path = "/v1/trainer/check" if "pick" in body else "/v1/score"
    assert error_message(client.post(path, json=body), 422, "validation_error") == message


def test_a_trailing_slash_is_no_redirect_that_sends_the_photo_twice(client: TestClient) -> None:
    answer = client.post("/v1/read/", content=image_bytes(), follow_redirects=False)
    error_message(answer, 404, "not_found")
    assert client.post("/v1/read", content=image_bytes()).status_code == 200


def test_a_bad_deck_name_says_what_a_name_is() -> None:
    from vision.calibration import DeckProfileError, load_profile

    with pytest.raises(DeckProfileError, match="a letter or digit, then letters, digits"):
        load_profile("..")


def test_json_sent_to_an_endpoint_that_reads_photos_is_told_to_send_a_photo(
    client: TestClient,
) -> None:
    for path in ("/v1/read", "/v1/annotated"):
        answer = client.post(path, json={"hands": ["3H 7S KD 8C 6D"]})
        assert "reads a photo, not JSON" in error_message(answer, 415, "unsupported_type")


def _part_without_a_file_name(data: bytes) -> tuple[bytes, dict[str, str]]:
    body = (
        b'--b\r\nContent-Disposition: form-data; name="image"\r\n'
        b"Content-Type: image/jpeg\r\n\r\n" + data + b"\r\n--b--\r\n"
    )
    return body, {"content-type": "multipart/form-data; boundary=b"}


@pytest.mark.parametrize("size", [2_000, 100_000])  # under and over a text field's 64 KB
def test_a_photo_sent_as_a_text_field_is_told_to_come_as_a_file(
    client: TestClient, size: int
) -> None:
    photo = image_bytes()
    body, headers = _part_without_a_file_name((photo * (size // len(photo) + 1))[:size])
    answer = client.post("/v1/read", content=body, headers=headers)
    assert "curl -F image=@photo.jpg" in error_message(answer, 422, "missing_image")
