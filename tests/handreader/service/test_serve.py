"""The HTTP API (serve.py) with a fake recognizer: every endpoint, every way to send a request.

The fake reader replaces ``get_reader`` through FastAPI's dependency overrides, so these tests
check the service, not the models' accuracy. Expectations come from the endpoint documentation
in serve.py, the seed 002 payout example (Double bet 100, Niu Niu beats No Niu: +285) and the
service's contract (the annotated image decodes and has the input's size).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient
from numpy.typing import NDArray

from handreader.service import app as serve
from handreader.service import deps as service_deps
from handreader.service import errors as service_errors
from vision.detections import CardReading, Reading

NO_NIU = "AS 2S 3S 4S 8S"
NIU_NIU = "KS QS 10S 5C 5S"
NIU_4 = "3H 7S KD 8C 6D"


class FakeReader:
    """Reads the same hands from any image: each hand a row of index boxes at a place given in
    fractions of the image, so any image size works. Remembers the images it was given."""

    def __init__(self, hands: dict[str, tuple[float, float]], uncertain: str = "") -> None:
        self.hands = hands
        self.uncertain = uncertain.split()
        self.seen: list[tuple[tuple[int, ...], str]] = []

    def read(self, image_bgr: NDArray[np.uint8]) -> Reading:
        self.seen.append((image_bgr.shape, str(image_bgr.dtype)))
        height, width = image_bgr.shape[:2]
        step, size = width * 0.03, height * 0.05
        cards = []
        for codes, (fx, fy) in self.hands.items():
            for i, code in enumerate(codes.split()):
                x, y = fx * width + i * step, fy * height
                cards.append(
                    CardReading(
                        code, 0.95, (x, y, x + 0.6 * size, y + size),
                        uncertain=code in self.uncertain,
                    )
                )  # fmt: skip
        return Reading((width, height), tuple(cards))


TABLE = {NO_NIU: (0.4, 0.05), NIU_NIU: (0.1, 0.6), NIU_4: (0.6, 0.6)}


def _jpeg(width: int = 640, height: int = 480) -> bytes:
    rng = np.random.default_rng(1)
    image = rng.integers(60, 120, (height, width, 3), dtype=np.uint8)
    return cv2.imencode(".jpg", image)[1].tobytes()


@pytest.fixture
def fake() -> FakeReader:
    return FakeReader(TABLE)


@pytest.fixture
def client(fake: FakeReader) -> Iterator[TestClient]:
    app = serve.create_app(settings=serve.Settings(models_dir=Path("/nonexistent")))
    app.dependency_overrides[service_deps.get_reader] = lambda: fake
    with TestClient(app) as test_client:
        yield test_client


# --- health --------------------------------------------------------------------------------------


def test_health_ok_with_a_reader(client: TestClient) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["models"]) == ("ok", {})
    assert body["store"]["backend"] in ("sqlite", "postgresql")  # tests/handreader/store: more


def test_health_503_and_image_endpoints_503_without_models(tmp_path: Path) -> None:
    # The lifespan loads the models from an empty folder: they are missing.
    app = serve.create_app(settings=serve.Settings(models_dir=tmp_path))
    with TestClient(app) as test_client:
        health = test_client.get("/health")
        assert health.status_code == 503
        assert health.json()["error"]["code"] == "not_ready"
        assert "its models did not load" in health.json()["error"]["message"]
        assert str(tmp_path) not in health.text  # no path of the server's in an answer
        read = test_client.post("/v1/read", content=_jpeg())
        assert read.status_code == 503 and read.json()["error"]["code"] == "not_ready"
        # card codes need no models
        codes = test_client.post("/v1/score", json={"hands": [NO_NIU, NIU_NIU]})
        assert codes.status_code == 200


def test_a_reader_given_to_the_factory_is_used(fake: FakeReader) -> None:
    with TestClient(serve.create_app(reader=fake)) as test_client:
        assert test_client.get("/health").status_code == 200
        assert test_client.post("/v1/read", content=_jpeg()).status_code == 200
    assert len(fake.seen) == 1


# --- read ----------------------------------------------------------------------------------------


def test_read_raw_body(client: TestClient, fake: FakeReader) -> None:
    response = client.post("/v1/read", content=_jpeg(), headers={"content-type": "image/jpeg"})
    assert response.status_code == 200
    body = response.json()
    assert body["size"] == [640, 480]
    assert [card["card"] for card in body["cards"]][:5] == NO_NIU.split()
    assert set(body["timings_ms"]) == {"decode", "read"}
    assert fake.seen == [((480, 640, 3), "uint8")]


def test_read_multipart(client: TestClient) -> None:
    files = {"image": ("table.jpg", _jpeg(320, 240), "image/jpeg")}
    response = client.post("/v1/read", files=files)
    assert response.status_code == 200 and response.json()["size"] == [320, 240]


def test_read_ignores_a_lying_content_type(client: TestClient) -> None:
    # The type comes from the bytes: a JPEG labelled as a PNG named .txt is read as a JPEG.
    files = {"image": ("notes.txt", _jpeg(), "image/png")}
    assert client.post("/v1/read", files=files).status_code == 200


@pytest.mark.parametrize("path", ["/v1/read", "/v1/score"])
def test_a_photo_sent_as_json_is_read_as_the_photo_its_bytes_say(
    client: TestClient, path: str
) -> None:
    # api.md: an image's type is told from its bytes, never from a header; a photo over the
    # JSON limit (64 KiB) sent as application/json is no 413, a small PNG no malformed_json
    big = cv2.imencode(".jpg", np.random.default_rng(5).integers(0, 255, (480, 640, 3), np.uint8))
    photo = big[1].tobytes()
    assert len(photo) > 64 * 1024
    for body in (photo, cv2.imencode(".png", np.full((240, 320, 3), 90, np.uint8))[1].tobytes()):
        answer = client.post(path, content=body, headers={"content-type": "application/json"})
        assert answer.status_code == 200, answer.text
        assert answer.json()["size"] in ([640, 480], [320, 240])


def test_json_over_its_limit_is_still_refused_by_its_length_and_its_bytes(
    client: TestClient,
) -> None:
    codes = b'{"hands": [' + b'"AS 2S 3S 4S 5S", ' * 5000 + b'"AS 2S 3S 4S 5S"]}'
    assert len(codes) > 64 * 1024
    answer = client.post("/v1/score", content=codes, headers={"content-type": "application/json"})
    assert answer.status_code == 413 and "65,536 bytes" in answer.json()["error"]["message"]


# --- score ---------------------------------------------------------------------------------------


def test_score_card_codes(client: TestClient) -> None:
    body = {"hands": [NO_NIU, NIU_NIU.split()], "banker": 0, "bet": "double", "stake": 100}
    response = client.post("/v1/score", json=body)
    assert response.status_code == 200
    result = response.json()
    assert result["banker"] == 0 and result["size"] is None
    assert result["players"][0]["outcome"] == "win"
    assert result["players"][0]["net"] == 285  # seed 002
    assert result["hands"][1]["score"]["bull"] == ["KS", "QS", "10S"]


@pytest.mark.parametrize("stake", [-1, 0, "-5"])
def test_a_stake_that_is_not_positive_is_named_in_words(client: TestClient, stake: object) -> None:
    body = {"hands": [NO_NIU, NIU_NIU], "stake": stake}
    response = client.post("/v1/score", json=body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "bad_options"
    assert error["message"].startswith("stake must be a positive number, got ")


def test_a_blank_photo_says_no_cards_were_found(client: TestClient, fake: FakeReader) -> None:
    fake.hands = {}
    result = client.post("/v1/score", content=_jpeg()).json()
    assert result["hands"] == [] and result["problem"] == "no cards found"


def test_score_card_codes_trainer(client: TestClient) -> None:
    body = {"hands": [NIU_4, NO_NIU, NIU_NIU], "mode": "trainer"}
    result = client.post("/v1/score", json=body).json()
    assert result["winners"] == [2] and result["places"] == [2, 3, 1] and result["tie"] is False


def test_score_image_multipart_with_options(client: TestClient) -> None:
    files = {"image": ("table.jpg", _jpeg(), "image/jpeg")}
    data = {"options": json.dumps({"bet": "double", "stake": 100})}
    response = client.post("/v1/score", files=files, data=data)
    assert response.status_code == 200
    result = response.json()
    assert result["size"] == [640, 480]
    assert [hand["role"] for hand in result["hands"]] == ["banker", "player", "player"]
    assert [player["net"] for player in result["players"]] == [285, 95]
    assert result["banker_net"] == -380
    assert set(result["timings_ms"]) == {"decode", "read", "score"}


def test_score_multipart_options_by_name_as_the_querys(client: TestClient) -> None:
    # a text field beside the image is an option by name, as in the query; the options field
    # wins where both name one
    files = {"image": ("table.jpg", _jpeg(), "image/jpeg")}
    by_name = client.post("/v1/score", files=files, data={"bet": "double", "stake": "100"})
    assert by_name.status_code == 200, by_name.text
    assert [player["net"] for player in by_name.json()["players"]] == [285, 95]
    both = {"stake": "5", "options": json.dumps({"bet": "double", "stake": 100})}
    assert [
        p["net"] for p in client.post("/v1/score", files=files, data=both).json()["players"]
    ] == [
        285,
        95,
    ]
    unknown = client.post("/v1/score", files=files, data={"stakes": "100"})
    assert unknown.status_code == 422 and "stakes" in unknown.json()["error"]["message"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ([("options", "{}"), ("options", '{"stake": 5}')], "several 'options' fields"),
        ([("stake", "5"), ("stake", "6")], "several 'stake' fields"),
    ],
)
def test_a_multipart_field_given_twice_is_refused_not_the_last_taken(
    client: TestClient, fields: list[tuple[str, str]], message: str
) -> None:
    boundary = "b0undary"
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields
    ]
    image = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="image"; filename="t.jpg"\r\n'
            "Content-Type: image/jpeg\r\n\r\n"
        ).encode()
        + _jpeg()
        + b"\r\n"
    )
    body = b"".join(parts) + image + f"--{boundary}--\r\n".encode()
    answer = client.post(
        "/v1/score",
        content=body,
        headers={"content-type": f"multipart/form-data; boundary={boundary}"},
    )
    assert answer.status_code == 400 and message in answer.json()["error"]["message"]


def test_score_raw_image_with_query_options(client: TestClient) -> None:
    response = client.post(
        "/v1/score?mode=trainer&profile=classic", content=_jpeg(),
        headers={"content-type": "application/octet-stream"},
    )  # fmt: skip
    result = response.json()
    assert response.status_code == 200
    assert result["mode"] == "trainer" and result["profile"] == "classic"
    assert result["winners"] == [1]  # the Niu Niu hand, second in reading order


def test_score_regions_by_name_in_the_query_as_json_lists(client: TestClient) -> None:
    # api.md: options come as query parameters each by name; a region is a list, given as JSON
    params = {"banker_region": "[0, 0.5, 1, 1]", "player_regions": "[[0, 0, 1, 0.4]]"}
    by_name = client.post("/v1/score", params=params, content=_jpeg())
    options = {"banker_region": [0, 0.5, 1, 1], "player_regions": [[0, 0, 1, 0.4]]}
    as_one = client.post("/v1/score", params={"options": json.dumps(options)}, content=_jpeg())
    assert by_name.status_code == 200, by_name.text
    assert by_name.json()["hands"] == as_one.json()["hands"]
    broken = client.post("/v1/score", params={"banker_region": "[0, 0.5"}, content=_jpeg())
    assert broken.status_code == 400
    assert "banker_region is not a valid JSON list" in broken.json()["error"]["message"]


def test_score_regions_in_the_options_query(client: TestClient) -> None:
    options = {"banker_region": [0, 0.5, 1, 1], "player_regions": [[0, 0, 1, 0.4]]}
    response = client.post("/v1/score", params={"options": json.dumps(options)}, content=_jpeg())
    result = response.json()
    assert response.status_code == 200
    banker = result["hands"][result["banker"]]
    assert banker["status"] == "too_many" and len(banker["cards"]) == 10  # two hands in it
    assert result["problem"] == "the banker's hand has too many cards: no player can be settled"


def test_score_uncertain_card(client: TestClient) -> None:
    client.app.dependency_overrides[service_deps.get_reader] = lambda: FakeReader(TABLE, "KD")  # type: ignore[attr-defined]
    result = client.post("/v1/score", content=_jpeg()).json()
    assert result["hands"][2]["status"] == "uncertain"
    assert result["players"][1]["outcome"] is None
    assert "low_confidence" in result["flags"]


# --- pits ----------------------------------------------------------------------------------------


def test_pits_codes(client: TestClient) -> None:
    response = client.post("/v1/pits", json={"play": "7H 7S", "table": ["5H", "5D"]})
    assert response.status_code == 200
    assert response.json()["legal"] is True and response.json()["kind"] == "pair"


def test_pits_codes_illegal_play_is_a_verdict_not_an_error(client: TestClient) -> None:
    response = client.post("/v1/pits", json={"play": "7H 7S", "table": "9H 9D"})
    assert response.status_code == 200
    assert response.json()["legal"] is False
    assert response.json()["reason"] == "7 does not beat 9"


def test_pits_kind_reads_a_play_of_several_readings_as_that_kind_as_the_cli_does(
    client: TestClient,
) -> None:
    from handreader.cli.pits import judge

    lead = client.post("/v1/pits", json={"play": "5H JB JR"}).json()
    assert lead["kind"] == "triple" and lead["readings"] == ["triple", "sequence"]
    answer = client.post("/v1/pits", json={"play": "5H JB JR", "kind": "sequence"}).json()
    assert answer["kind"] == "sequence" and answer["legal"] is True
    assert answer["description"] == judge("5H JB JR", "", "sequence")["description"]
    refused = client.post("/v1/pits", json={"play": "5H JB JR", "kind": "pair"}).json()
    assert refused["legal"] is False
    assert refused["reason"] == "5H JB JR is not a pair: a pair holds 2 cards, not 3"
    fake = FakeReader({"5H JB JR": (0.3, 0.5)})
    client.app.dependency_overrides[service_deps.get_reader] = lambda: fake  # type: ignore[attr-defined]
    photo = client.post("/v1/pits?kind=sequence", content=_jpeg()).json()
    assert photo["kind"] == "sequence" and photo["legal"] is True


def test_pits_image_with_table_codes(client: TestClient) -> None:
    fake = FakeReader({"9H 9D": (0.3, 0.5)})
    client.app.dependency_overrides[service_deps.get_reader] = lambda: fake  # type: ignore[attr-defined]
    response = client.post("/v1/pits?table=5H%205D", content=_jpeg())
    assert response.status_code == 200
    assert response.json()["legal"] is True and response.json()["description"] == "pair of 9s"


@pytest.mark.parametrize("path", ["/v1/pits", "/v1/annotated?game=pits&"])
def test_pits_image_that_plays_a_card_given_as_the_table_is_refused(
    client: TestClient, path: str
) -> None:
    fake = FakeReader({"KC KD KS KH": (0.3, 0.5)})
    client.app.dependency_overrides[service_deps.get_reader] = lambda: fake  # type: ignore[attr-defined]
    query = "table=KH" if "?" in path else "?table=KH"
    answer = client.post(f"{path}{query}", content=_jpeg())
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "bad_hand"
    assert "duplicate card KH" in answer.json()["error"]["message"]
    two_packs = client.post(f"{path}{query}&decks=2", content=_jpeg())
    assert two_packs.status_code == 200


def test_pits_image_with_table_region(client: TestClient) -> None:
    reader = FakeReader({"9H 9D": (0.3, 0.1), "JH JS": (0.3, 0.7)})
    client.app.dependency_overrides[service_deps.get_reader] = lambda: reader  # type: ignore[attr-defined]
    files = {"image": ("p.jpg", _jpeg(), "image/jpeg")}
    data = {"options": json.dumps({"table_region": [0, 0, 1, 0.4]})}
    result = client.post("/v1/pits", files=files, data=data).json()
    assert [card["card"] for card in result["table"]] == ["9H", "9D"]
    assert result["legal"] is True and result["description"] == "pair of jacks"


# --- annotated -----------------------------------------------------------------------------------


def _decoded(content: bytes) -> NDArray[np.uint8]:
    image = cv2.imdecode(np.frombuffer(content, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None
    return np.asarray(image, dtype=np.uint8)


@pytest.mark.parametrize(
    ("query", "accept", "media"),
    [
        ("", None, "image/jpeg"),
        ("?format=png", None, "image/png"),
        ("?format=jpeg", "image/png", "image/jpeg"),  # the query wins over Accept
        ("", "image/png", "image/png"),
        ("", "image/webp;q=1, image/png;q=0.9, image/jpeg;q=0.5", "image/png"),
        ("", "image/png;q=0.2, image/*;q=0.8", "image/jpeg"),
        ("", "*/*", "image/jpeg"),
    ],
)
def test_annotated_format(client: TestClient, query: str, accept: str | None, media: str) -> None:
    headers = {"accept": accept} if accept else {}
    response = client.post(f"/v1/annotated{query}", content=_jpeg(500, 300), headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == media
    assert _decoded(response.content).shape == (300, 500, 3)  # the input's size


def test_annotated_draws_the_result(client: TestClient) -> None:
    plain = np.full((300, 500, 3), 100, np.uint8)
    data = cv2.imencode(".png", plain)[1].tobytes()
    drawn = _decoded(client.post("/v1/annotated?format=png", content=data).content)
    assert drawn.shape == plain.shape
    assert (np.abs(drawn.astype(int) - plain).sum(axis=2) > 30).mean() > 0.01


def test_annotated_pits(client: TestClient) -> None:
    fake = FakeReader({"9H 9D": (0.3, 0.5)})
    client.app.dependency_overrides[service_deps.get_reader] = lambda: fake  # type: ignore[attr-defined]
    response = client.post("/v1/annotated?game=pits&table=5H%205D", content=_jpeg(400, 400))
    assert response.status_code == 200 and _decoded(response.content).shape == (400, 400, 3)


# --- documentation -------------------------------------------------------------------------------


def test_openapi_documents_bodies_examples_and_errors(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    assert {"/health", "/v1/read", "/v1/score", "/v1/pits", "/v1/annotated"} <= set(spec["paths"])
    score = spec["paths"]["/v1/score"]["post"]
    content = score["requestBody"]["content"]
    assert {"application/json", "multipart/form-data", "image/jpeg"} <= set(content)
    examples = content["application/json"]["examples"]
    assert examples["example 1"]["value"]["hands"][1] == "3H 7S KD 8C 6D"
    assert {"200", "400", "413", "415", "422", "503"} <= set(score["responses"])
    options = content["multipart/form-data"]["schema"]["properties"]["options"]
    assert "banker_region" in options["contentSchema"]["properties"]
    assert json.loads(options["example"]) == {"profile": "trainer", "bet": "double", "stake": 100}
    read = spec["paths"]["/v1/read"]["post"]["requestBody"]["content"]["multipart/form-data"]
    read_options = read["schema"]["properties"]["options"]["contentSchema"]["properties"]
    # a calibrated deck, the deck in play, the letters of its indices
    assert set(read_options) == {"deck", "game", "decks", "indices"}
    assert client.get("/docs").status_code == 200


def test_every_error_code_is_documented() -> None:
    for code, status in service_errors.ERROR_STATUS.items():
        assert f"``{code}``" in (serve.__doc__ or ""), code
        assert 400 <= status < 600


def test_routes_document_their_errors_from_the_one_table(client: TestClient) -> None:
    """Every documented error status of every route is described by the error codes that
    ``ERROR_STATUS`` answers with it (FastAPI's own 422 aside)."""
    spec = client.get("/openapi.json").json()
    documented = 0
    for path, methods in spec["paths"].items():
        for method, operation in methods.items():
            for status, response in operation["responses"].items():
                if int(status) < 400 or response["description"] == "Validation Error":
                    continue
                codes = response["description"].removeprefix("error codes: ").split(", ")
                assert response["description"].startswith("error codes: "), (path, method)
                assert {service_errors.ERROR_STATUS[code] for code in codes} == {int(status)}
                documented += 1
    assert documented >= 30  # the photo, game, verification, deck and trainer routes
    games = spec["paths"]["/v1/paigow"]["post"]["responses"]
    assert {"400", "413", "415", "422", "500", "503"} <= set(games)
    assert "401" in spec["paths"]["/v1/audit"]["get"]["responses"]
    with pytest.raises(KeyError, match="HTTP 299"):
        service_errors.error_responses(299)


# --- settings ------------------------------------------------------------------------------------


def test_settings_from_the_environment() -> None:
    settings = serve.Settings.from_env(
        {"HANDREADER_MAX_BYTES": "1000", "HANDREADER_READ_TIMEOUT": "2.5",
         "HANDREADER_MODELS": "/m"}
    )  # fmt: skip
    assert settings.max_bytes == 1000 and settings.read_timeout_s == 2.5
    assert settings.models_dir == Path("/m")
    assert serve.Settings.from_env({}) == serve.Settings()


@pytest.mark.parametrize("value", ["ten", "-1", "0"])
def test_bad_settings_in_the_environment(value: str) -> None:
    with pytest.raises(ValueError, match="HANDREADER_MAX_PIXELS"):
        serve.Settings.from_env({"HANDREADER_MAX_PIXELS": value})


def test_server_arguments_default_to_the_environment() -> None:
    import argparse

    from handreader.cli.serve import add_server_arguments
    from handreader.service.settings import server_numbers

    environ = {"HANDREADER_PORT": "9001", "HANDREADER_WORKERS": "2"}
    parser = argparse.ArgumentParser()
    add_server_arguments(parser, environ)
    args = parser.parse_args([])
    server_numbers(args, environ)  # the numbers from the environment once the flags are read
    assert (args.host, args.port, args.workers) == ("127.0.0.1", 9001, 2)
    args = parser.parse_args(["--port", "8100", "--host", "0.0.0.0"])
    server_numbers(args, environ)
    assert (args.host, args.port, args.workers) == ("0.0.0.0", 8100, 2)


def test_the_cli_knows_serve() -> None:
    from handreader.cli import build_parser

    args = build_parser().parse_args(["serve", "--port", "8123", "--workers", "2"])
    assert args.port == 8123 and args.workers == 2


def test_listener_for_several_workers_is_tcp() -> None:
    # uvicorn binds the workers' socket with protocol 0, which leaves Nagle's algorithm on for
    # every connection (Kludex/uvicorn#3149: ~40 ms per keep-alive response).
    import socket

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    address = listener.getsockname()
    fixed = serve._tcp_listener(listener)
    try:
        assert fixed.proto == socket.IPPROTO_TCP
        assert fixed.getsockname() == address  # the same bound socket
    finally:
        fixed.close()


@pytest.mark.parametrize(("port", "words"), [("99999", "99999 is not a port"), ("x", "'x'")])
def test_a_bad_port_is_one_error_line_not_a_traceback(
    port: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from handreader import cli

    with pytest.raises(SystemExit) as stopped:
        cli.main(["serve", "--port", port])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.splitlines()[-1].startswith("handreader serve: error: argument --port: ")
    assert words in err


def test_a_json_body_over_64_kib_is_refused_before_it_is_parsed(client: TestClient) -> None:
    from handreader.service.requests import JSON_LIMIT

    assert JSON_LIMIT == 64 * 1024
    nested = "[" * 30 + "]" * 30
    body = '{"hands": [' + ",".join([nested] * 3000) + "]}"
    assert len(body) > JSON_LIMIT
    response = client.post("/v1/score", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 413 and response.json()["error"]["code"] == "too_large"


def test_a_jpeg_scan_bomb_is_refused_with_a_clear_413(client: TestClient) -> None:
    """Thousands of scans in a small JPEG: refused from its header walk, nothing decoded."""
    data = cv2.imencode(".jpg", np.full((480, 640, 3), 99, np.uint8))[1].tobytes()
    scan = bytes([0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x01, 0x01, 0x10, 0x00])
    bomb = data[:-2] + scan * 6000 + b"\xff\xd9"
    for route in ("/v1/read", "/v1/score"):
        response = client.post(route, content=bomb, headers={"content-type": "image/jpeg"})
        assert response.status_code == 413
        error = response.json()["error"]
        assert error["code"] == "too_many_scans" and "6,001 scans" in error["message"]


@pytest.mark.parametrize(
    "params",
    [
        {"link_factor": "nan"},
        {"options": '{"link_factor": NaN}'},
        {"options": '{"banker_region": [0, 0, NaN, 1]}'},
        {"banker_region": "[0, 0, Infinity, 1]"},
    ],
)
def test_a_number_that_is_not_finite_is_named_so_not_by_its_range(
    client: TestClient, params: dict[str, str]
) -> None:
    answer = client.post("/v1/score", params=params, content=_jpeg())
    assert answer.status_code == 422
    message = answer.json()["error"]["message"]
    assert "finite number" in message and "less than" not in message, message


def test_a_query_parameter_given_twice_is_refused_not_the_last_taken(client: TestClient) -> None:
    answer = client.post("/v1/score?profile=app&profile=classic", content=_jpeg())
    assert answer.status_code == 400
    assert "profile is given more than once" in answer.json()["error"]["message"]


def test_the_options_query_parameter_wins_over_one_by_name_as_in_a_multipart_body(
    client: TestClient,
) -> None:
    params = {"stake": "5", "options": json.dumps({"bet": "double", "stake": 100})}
    answer = client.post("/v1/score", params=params, content=_jpeg())
    assert [player["net"] for player in answer.json()["players"]] == [285, 95]


def test_the_live_stream_takes_a_list_option_by_name_in_its_query(client: TestClient) -> None:
    query = "banker_region=[0,0.5,1,1]&player_regions=[[0,0,1,0.4]]"
    with client.websocket_connect(f"/v1/live?{query}") as socket:
        socket.send_bytes(_jpeg())
        answer = socket.receive_json()
    assert "error" not in answer, answer
