"""Calibrated decks in the service: the ``deck`` option of the image endpoints and the live
stream (``handreader.service.routes.decks``), the deck list and calibration from uploads
(``handreader.service.routes.calibrate``), with a fake recognizer (``web_fakes.DeckFakeReader``).

Expectations come from the product's requirements (a deck is chosen by a field in the API; reading
without one is unchanged; a corrupt profile is refused clearly and the default deck still works; a
calibration photo that misses cards or has a card twice gets a clear message naming the positions),
the module docstrings (400 ``bad_options`` naming the deck, 404 for no such deck, 422
``missing_image`` without photos) and ``vision.calibrate_deck`` (the documented orders: one card per
photo S, H, D, C from A to K then JB, JR; a grid of 4 rows S, H, D, C of 13, A to K).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from web_fakes import NIU_TABLE, DeckFakeReader, error_message, fake_client, image_bytes

from handreader.service import app as serve
from handreader.service.routes.decks import DECKS
from handreader.store import decks as store_decks
from vision.calibration import grid_order, new_profile, parse_profile, save_profile

TOKEN = "deck-operator-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
NIUNIU = "niuniu: 52 cards"
"""The deck in play of every Niu Niu profile (one 52-card deck), as the live answers name it."""


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "data"
    monkeypatch.setenv("HANDREADER_DATA", str(folder))
    monkeypatch.setenv("HANDREADER_OPERATOR_TOKEN", TOKEN)  # (writing decks needs it)
    monkeypatch.delenv("HANDREADER_OPEN_DECKS", raising=False)
    DECKS.clear()
    yield folder
    DECKS.clear()


@pytest.fixture
def fake() -> DeckFakeReader:
    return DeckFakeReader(NIU_TABLE)


@pytest.fixture
def client(fake: DeckFakeReader) -> Iterator[TestClient]:
    with fake_client(fake) as test_client:
        test_client.headers["Authorization"] = f"Bearer {TOKEN}"
        yield test_client


def _save_deck(
    name: str, codes: tuple[str, ...] = ("AS", "10H"), sha: str = "fake-classifier"
) -> None:
    rng = np.random.default_rng(len(codes))
    vectors = {}
    for code in codes:
        vector = rng.normal(size=(1, 128)).astype(np.float32)
        vectors[code] = list(vector / np.linalg.norm(vector))
    save_profile(new_profile(name, vectors, sha, []))


def _write_broken(data_dir: Path, name: str = "broken", body: str = "{not json") -> Path:
    folder = data_dir / "decks"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(body)
    return path


IMAGE_ENDPOINTS = [
    ("/v1/read", {}),
    ("/v1/score", {"profile": "trainer"}),
    ("/v1/pits", {}),
    ("/v1/annotated", {}),
    ("/v1/baccarat", {}),
    ("/v1/blackjack", {}),
    ("/v1/paigow", {}),
]
"""Every endpoint that reads a photo, with options it accepts."""


def _post_photo(client: TestClient, path: str, options: dict[str, Any]) -> Any:
    files = {"image": ("table.jpg", image_bytes(), "image/jpeg")}
    return client.post(path, files=files, data={"options": json.dumps(options)})


# --- the deck option -----------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "options"), IMAGE_ENDPOINTS)
def test_a_known_deck_reaches_the_recognizer(
    client: TestClient, fake: DeckFakeReader, path: str, options: dict[str, Any]
) -> None:
    _save_deck("mine")
    response = _post_photo(client, path, {**options, "deck": "mine"})
    assert response.status_code == 200, response.text
    assert fake.deck_calls == ["mine"]


def test_the_deck_as_a_query_parameter_of_a_raw_body(
    client: TestClient, fake: DeckFakeReader
) -> None:
    _save_deck("mine")
    response = client.post("/v1/score?deck=mine&profile=trainer", content=image_bytes())
    assert response.status_code == 200, response.text
    assert fake.deck_calls == ["mine"]


@pytest.mark.parametrize("deck", [None, ""])
@pytest.mark.parametrize(("path", "options"), IMAGE_ENDPOINTS)
def test_without_a_deck_the_recognizer_is_called_as_before(
    client: TestClient, fake: DeckFakeReader, path: str, options: dict[str, Any], deck: Any
) -> None:
    """A profile never changes reading without one (no deck argument at all)."""
    _save_deck("mine")
    assert _post_photo(client, path, {**options, "deck": "mine"}).status_code == 200
    given = options if deck is None else {**options, "deck": deck}
    assert _post_photo(client, path, given).status_code == 200
    assert fake.deck_calls == ["mine", None]


def test_a_deck_reads_the_uncertain_cards_of_the_fake_as_certain(
    client: TestClient, fake: DeckFakeReader
) -> None:
    """The answer follows the deck (the fake's stand-in for a calibrated reading)."""
    _save_deck("mine")
    fake.uncertain = ["KS"]
    plain = client.post("/v1/read", content=image_bytes()).json()
    decked = client.post("/v1/read?deck=mine", content=image_bytes()).json()
    assert [card["uncertain"] for card in plain["cards"] if card["card"] == "KS"] == [True]
    assert not any(card["uncertain"] for card in decked["cards"])


@pytest.mark.parametrize(("path", "options"), IMAGE_ENDPOINTS)
def test_an_unknown_deck_is_a_400_naming_it_and_the_known_decks(
    client: TestClient, fake: DeckFakeReader, path: str, options: dict[str, Any]
) -> None:
    _save_deck("mine")
    message = error_message(
        _post_photo(client, path, {**options, "deck": "nobody"}), 400, "bad_options"
    )
    assert "unknown deck 'nobody'" in message and "known: mine" in message
    assert fake.deck_calls == []  # refused before reading


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("{not json", "corrupt"),
        ('{"format": 9, "name": "broken"}', "format 9"),
        ('{"format": 1, "name": "broken", "model_sha256": "", "created": "", "weight": 0.7, '
         '"temperature": 0.05, "prototypes": {"AS": [[NaN]]}}', "bad prototypes"),
        ('{"format": 1, "name": "broken", "model_sha256": "", "created": "", "weight": 0.7, '
         '"temperature": 0.05, "prototypes": []}', "not listed by card"),
        ('{"format": 1, "prototypes": "abc"}', "not listed by card"),
        ("[" * 200_000 + "]" * 200_000, "corrupt"),
        ("[1, 2]", "not a JSON object"),
    ],
)  # fmt: skip
def test_a_corrupt_deck_is_a_clear_400_and_the_service_goes_on(
    client: TestClient, fake: DeckFakeReader, data_dir: Path, body: str, reason: str
) -> None:
    """A corrupt profile is refused with a clear error; the default deck still works."""
    _save_deck("mine")
    path = _write_broken(data_dir, body=body)
    message = error_message(
        _post_photo(client, "/v1/score", {"deck": "broken"}), 400, "bad_options"
    )
    assert "deck 'broken' cannot be used" in message and reason in message
    assert str(path) not in message  # the server's folders stay private
    assert _post_photo(client, "/v1/score", {}).status_code == 200
    assert _post_photo(client, "/v1/score", {"deck": "mine"}).status_code == 200
    assert fake.deck_calls == [None, "mine"]
    listed = client.get("/v1/decks")  # the listing names it unusable, and lists the rest
    assert listed.status_code == 200, listed.text
    assert "mine" in listed.text and "broken" in listed.text


@pytest.mark.parametrize(
    ("path", "options", "status", "code", "text"),
    [
        ("/v1/read", {"deck": "../etc"}, 400, "bad_options", "bad deck name '../etc'"),
        ("/v1/read", {"deck": 5}, 422, "validation_error", "deck"),
        ("/v1/score", {"deck": 5}, 422, "validation_error", "deck"),
        ("/v1/score", {"deck": "x" * 65}, 422, "validation_error", "deck"),
        ("/v1/pits", {"deck": "a b"}, 400, "bad_options", "bad deck name 'a b'"),
    ],
)
def test_bad_deck_values(
    client: TestClient, path: str, options: dict[str, Any], status: int, code: str, text: str
) -> None:
    assert text in error_message(_post_photo(client, path, options), status, code)


def test_a_deck_with_card_codes_is_refused(client: TestClient) -> None:
    """Card codes are not read: a deck means nothing there (the codes' schema has no deck)."""
    body = {"hands": ["AS 2S 3S 4S 8S", "KS QS 10S 5C 5S"], "deck": "mine"}
    error_message(client.post("/v1/score", json=body), 422, "validation_error")


def test_profiles_are_cached_and_reloaded_when_their_file_changes(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[str] = []

    def counting(text: str, source: str) -> Any:
        loads.append(source)
        return parse_profile(text, source)

    monkeypatch.setattr(store_decks, "parse_profile", counting)  # the folder store's reader
    _save_deck("mine", ("AS",))
    for _ in range(3):
        assert client.post("/v1/read?deck=mine", content=image_bytes()).status_code == 200
    assert len(loads) == 1
    _save_deck("mine", ("AS", "2S", "3S"))  # calibrated again: a new file
    assert client.get("/v1/decks/mine").json()["cards"] == 3
    assert len(loads) == 2


def test_a_recognizer_without_models_is_not_ready_for_a_deck() -> None:
    _save_deck("mine")
    app = serve.create_app(settings=serve.Settings(models_dir=Path("/nonexistent")))
    with TestClient(app) as client:
        response = client.post("/v1/read?deck=mine", content=image_bytes())
        error_message(response, 503, "not_ready")
        files = {"photo": ("AS.png", image_bytes(320, 240, ".png"), "image/png")}
        response = client.post("/v1/decks/new", files=files, headers=AUTH)
        error_message(response, 503, "not_ready")


# --- live ----------------------------------------------------------------------------------------


def _frame(socket: Any) -> dict[str, Any]:
    socket.send_bytes(image_bytes())
    answer: dict[str, Any] = socket.receive_json()
    return answer


def test_live_reads_with_the_deck_and_switches(client: TestClient, fake: DeckFakeReader) -> None:
    _save_deck("mine")
    with client.websocket_connect("/v1/live?deck=mine") as socket:
        for _ in range(3):
            shown = _frame(socket)
        assert len(shown["cards"]) == 15
        socket.send_json({"deck": None})
        assert socket.receive_json() == {
            "ok": True,
            "profile": "trainer",
            "deck": None,
            "in_play": NIUNIU,
            "layout": None,
        }
        assert _frame(socket)["cards"] == []  # a new deck restarts the tracks
        socket.send_json({"deck": "nobody"})
        assert "unknown deck 'nobody'" in socket.receive_json()["error"]["message"]
        _frame(socket)  # the stream goes on, still without a deck
        socket.send_json({"options": {"profile": "classic", "deck": "mine"}})
        assert socket.receive_json() == {
            "ok": True,
            "profile": "classic",
            "deck": "mine",
            "in_play": NIUNIU,
            "layout": None,
        }
        _frame(socket)
    assert fake.deck_calls == ["mine"] * 3 + [None, None, "mine"]


def test_live_with_an_unknown_deck_closes_with_policy_violation(client: TestClient) -> None:
    with client.websocket_connect("/v1/live?deck=nobody") as socket:
        assert socket.receive_json()["error"]["code"] == "bad_options"
        with pytest.raises(WebSocketDisconnect) as closed:
            socket.receive_json()
    assert closed.value.code == 1008


# --- listing -------------------------------------------------------------------------------------


def test_decks_lists_usable_and_unusable_profiles(client: TestClient, data_dir: Path) -> None:
    _save_deck("mine", ("AS", "10H", "JR"))
    _save_deck("older", ("AS",), sha="another-classifier")
    _write_broken(data_dir)
    answer = client.get("/v1/decks").json()
    decks = {deck["name"]: deck for deck in answer["decks"]}
    assert list(decks) == ["broken", "mine", "older"]  # sorted by name
    mine = decks["mine"]
    assert (mine["usable"], mine["cards"], mine["samples"], mine["jokers"]) == (True, 3, 3, ["JR"])
    assert len(mine["missing"]) == 50 and "AS" not in mine["missing"]  # of the 52 standard
    assert mine["models_match"] is True and decks["older"]["models_match"] is False
    assert decks["broken"]["usable"] is False and "corrupt" in decks["broken"]["problem"]
    # the documented orders (vision.calibrate_deck)
    assert answer["card_order"][:2] == ["AS", "2S"] and answer["card_order"][-2:] == ["JB", "JR"]
    assert len(answer["card_order"]) == 54
    assert answer["grid"] == {"rows": 4, "columns": 13, "order": grid_order()}


def test_one_deck_or_404(client: TestClient) -> None:
    _save_deck("mine")
    assert client.get("/v1/decks/mine").json()["cards"] == 2
    assert "no deck 'nobody'" in error_message(client.get("/v1/decks/nobody"), 404, "not_found")


# --- calibration ---------------------------------------------------------------------------------


def _card_photo(name: str, black: bool = False) -> tuple[str, tuple[str, bytes, str]]:
    """A photo of its own for each name (one photo given twice would count once)."""
    image = cv2.imdecode(np.frombuffer(image_bytes(320, 240, ".png"), np.uint8), 1)
    image[0, 0] = [sum(name.encode()) % 256, len(name), 7]
    data = cv2.imencode(".png", image)[1].tobytes()
    if black:
        data = cv2.imencode(".png", np.zeros((240, 320, 3), np.uint8))[1].tobytes()
    return ("photo", (name, data, "image/png"))


def _grid_photo() -> tuple[str, tuple[str, bytes, str]]:
    return ("photo", ("deck.jpg", image_bytes(1400, 700), "image/jpeg"))


def test_calibrate_one_card_per_photo_with_the_codes_given(
    client: TestClient, fake: DeckFakeReader
) -> None:
    files = [_card_photo("a.png"), _card_photo("b.png"), _card_photo("c.png")]
    response = client.post("/v1/decks/new", files=files, data={"codes": "AS, 10h QC"})
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["deck"]["name"] == "new" and answer["deck"]["cards"] == 3
    assert answer["deck"]["samples"] == 6  # two corner indices per photo (the fake's)
    assert answer["deck"]["models_match"] is True
    assert [item["card"] for item in answer["photos"]] == ["AS", "10H", "QC"]
    assert answer["warnings"] == []
    prefix = "data:image/png;base64,"
    assert answer["sheet"].startswith(prefix)
    sheet = cv2.imdecode(
        np.frombuffer(base64.b64decode(answer["sheet"][len(prefix) :]), np.uint8), 1
    )
    assert sheet is not None and sheet.shape[1] == 13 * 72  # 13 tiles a row (calibrate_deck)
    # the new deck is listed and read with at once
    assert [deck["name"] for deck in client.get("/v1/decks").json()["decks"]] == ["new"]
    assert client.post("/v1/read?deck=new", content=image_bytes()).status_code == 200
    assert fake.deck_calls == ["new"]


def test_a_photo_that_reads_as_another_card_for_certain_is_questioned(
    client: TestClient, fake: DeckFakeReader
) -> None:
    """A 4S photo given at the AS step: calibrated as asked (a deck of its own design may read
    wrong), with a warning naming both cards."""
    fake.grid_reads = {1: "4S", 50: "4S"}  # both corners of the one-card photo read 4S
    files = [_card_photo("as.png")]
    answer = client.post("/v1/decks/wrong", files=files, data={"codes": "AS"}).json()
    assert answer["warnings"] == [
        "as.png: taken for AS, but its corners read 4S for certain: is it the photo of AS?"
    ]
    assert answer["deck"]["cards"] == 1


@pytest.mark.parametrize(
    ("names", "cards"),
    [
        (["KD.png", "js_2.jpg"], ["KD", "JS"]),  # named by the file, as on the CLI
        (["one.png", "two.png", "three.png"], ["AS", "2S", "3S"]),  # the documented order
        (["one.png", "QH.png"], ["AS", "QH"]),  # a name wins over the order
    ],
)
def test_calibrate_without_codes_follows_the_cli(
    client: TestClient, names: list[str], cards: list[str]
) -> None:
    response = client.post("/v1/decks/new", files=[_card_photo(name) for name in names])
    assert response.status_code == 200, response.text
    assert [item["card"] for item in response.json()["photos"]] == cards


def test_a_photo_without_an_index_is_left_out_with_a_warning(client: TestClient) -> None:
    files = [_card_photo("AS.png"), _card_photo("2S.png", black=True)]
    answer = client.post("/v1/decks/new", files=files).json()
    assert answer["deck"]["cards"] == 1
    assert answer["warnings"] == ["2S.png: no card index found; 2S left out"]


def test_calibrate_a_grid_of_the_whole_deck(client: TestClient) -> None:
    response = client.post("/v1/decks/grid", files=[_grid_photo()], data={"layout": "grid"})
    assert response.status_code == 200, response.text
    deck = response.json()["deck"]
    assert (deck["cards"], deck["samples"], deck["missing"]) == (52, 104, [])


def test_a_grid_missing_a_card_names_the_photo_and_the_position(
    client: TestClient, fake: DeckFakeReader
) -> None:
    """A calibration photo that misses cards gets a message naming the positions."""
    fake.missing = {13 + 6, 39 + 12}  # the hearts row's 7th place (7H), the last card (KC)
    response = client.post("/v1/decks/grid", files=[_grid_photo()], data={"layout": "grid"})
    message = error_message(response, 400, "bad_options")
    assert "deck.jpg: no card found at row 2, column 7 (7H); row 4, column 13 (KC)" in message
    assert client.get("/v1/decks").json()["decks"] == []  # nothing saved


def test_a_grid_with_a_card_twice_names_both_positions(
    client: TestClient, fake: DeckFakeReader
) -> None:
    """A card twice gets a message naming the positions."""
    fake.grid_reads = {1: "AS"}  # the 2S place holds a second AS
    response = client.post("/v1/decks/grid", files=[_grid_photo()], data={"layout": "grid"})
    message = error_message(response, 400, "bad_options")
    assert "the same card appears twice: AS at row 1, column 1 (AS) and row 1, column 2 (2S)" in (
        message
    )


def test_a_grid_turned_a_half_turn_is_refused_and_a_swapped_pair_named(
    client: TestClient, fake: DeckFakeReader
) -> None:
    """The page and the API share the command's grid checks (vision.calibrate_deck)."""
    fake.grid_reads = {cell: grid_order()[51 - cell] for cell in range(52)}
    response = client.post("/v1/decks/grid", files=[_grid_photo()], data={"layout": "grid"})
    message = error_message(response, 400, "bad_options")
    assert "deck.jpg: the grid is upside down" in message and "turn the photo a half" in message
    assert client.get("/v1/decks").json()["decks"] == []  # nothing saved
    fake.grid_reads = {19: "8H", 20: "7H"}
    response = client.post("/v1/decks/grid", files=[_grid_photo()], data={"layout": "grid"})
    assert response.status_code == 200, response.text
    assert response.json()["warnings"] == [
        "deck.jpg: row 2, column 7 (7H) taken for 7H, but its corners read 8H for certain: "
        "is 8H in the place of 7H?",
        "deck.jpg: row 2, column 8 (8H) taken for 8H, but its corners read 7H for certain: "
        "is 7H in the place of 8H?",
    ]


@pytest.mark.parametrize(
    ("name", "files", "data", "status", "code", "text"),
    [
        ("new", 2, {"codes": "AS"}, 400, "bad_options", "codes gives 1 cards for 2 photos"),
        ("new", 2, {"codes": "AS ZZ"}, 400, "bad_options", "codes, photo 2: "),
        ("new", 1, {"layout": "grid", "codes": "AS"}, 400, "bad_options", "order is fixed"),
        ("new", 2, {"layout": "grid"}, 400, "bad_options", "one photo of the whole deck, got 2"),
        ("new", 1, {"layout": "fan"}, 400, "bad_options", "unknown layout 'fan'"),
        ("a b", 1, {}, 400, "bad_options", "bad deck name 'a b'"),
        ("new", 0, {"codes": "AS"}, 422, "missing_image", "at least one 'photo'"),
        ("new", 55, {}, 400, "bad_options", "55 unnamed photos"),
        ("new", 1, {"replace": "maybe"}, 400, "bad_options", "replace is 'maybe': true or false"),
    ],
)  # fmt: skip
def test_calibration_bad_requests(
    client: TestClient,
    name: str,
    files: int,
    data: dict[str, str],
    status: int,
    code: str,
    text: str,
) -> None:
    photos = [_card_photo(f"photo{index}.png") for index in range(files)]
    if not photos:  # the other endpoints' field name: a multipart body without 'photo'
        photos = [("image", _card_photo("AS.png")[1])]
    response = client.post(f"/v1/decks/{name}", files=photos, data=data)
    assert text in error_message(response, status, code)


def test_calibration_of_a_photo_that_is_no_image_names_it(client: TestClient) -> None:
    files = [("photo", ("notes.txt", b"not an image at all", "text/plain"))]
    message = error_message(client.post("/v1/decks/new", files=files), 415, "unsupported_type")
    assert "notes.txt" in message


def test_calibration_needs_a_multipart_body(client: TestClient) -> None:
    response = client.post("/v1/decks/new", content=image_bytes())
    assert "multipart upload of 'photo' files" in error_message(response, 422, "missing_image")


def test_calibrating_again_replaces_the_deck(client: TestClient, fake: DeckFakeReader) -> None:
    """A deck made again keeping all its cards is replaced, and the answer says what it had."""
    first = client.post("/v1/decks/mine", files=[_card_photo("AS.png")]).json()
    assert first["deck"]["cards"] == 1 and first["replaced"] is None  # a new deck
    assert client.post("/v1/read?deck=mine", content=image_bytes()).status_code == 200
    files = [_card_photo("AS.png"), _card_photo("KH.png")]
    again = client.post("/v1/decks/mine", files=files).json()
    assert again["deck"]["cards"] == 2
    assert again["replaced"] == {
        "name": "mine",
        "cards": 1,
        "created": first["deck"]["created"],
        "problem": None,
    }
    assert client.get("/v1/decks/mine").json()["cards"] == 2  # the cache saw the new file


def _stored(data_dir: Path, name: str) -> bytes:
    return (data_dir / "decks" / f"{name}.json").read_bytes()


@pytest.mark.parametrize("replace", [None, "false", "0", ""])
def test_a_calibration_that_would_lose_cards_is_a_409_and_changes_nothing(
    client: TestClient, data_dir: Path, replace: str | None
) -> None:
    """A 52-card deck became a 1-card deck, silently: now refused as the CLI refuses it
    (handreader.store.decks.judge_replacement: six lost cards named, the rest counted)."""
    made = client.post("/v1/decks/mine", files=[_grid_photo()], data={"layout": "grid"})
    assert made.json()["deck"]["cards"] == 52
    before = _stored(data_dir, "mine")
    data = {} if replace is None else {"replace": replace}
    response = client.post("/v1/decks/mine", files=[_card_photo("AS.png")], data=data)
    assert error_message(response, 409, "deck_exists") == (
        "deck 'mine' has 52 cards; this calibration has 1 and would lose 2S, 3S, 4S, 5S, 6S, 7S "
        "and 45 more: send replace=true to replace it, or calibrate another name"
    )
    assert _stored(data_dir, "mine") == before  # nothing stored changed
    assert client.get("/v1/decks/mine").json()["cards"] == 52


@pytest.mark.parametrize("replace", ["true", "1", "on", "YES"])
def test_a_calibration_that_loses_cards_is_taken_with_replace(
    client: TestClient, data_dir: Path, replace: str
) -> None:
    first = client.post("/v1/decks/mine", files=[_card_photo("AS.png"), _card_photo("KH.png")])
    made = first.json()["deck"]["created"]
    files = [_card_photo("QD.png")]
    error_message(client.post("/v1/decks/mine", files=files), 409, "deck_exists")
    answer = client.post("/v1/decks/mine", files=files, data={"replace": replace}).json()
    assert answer["deck"]["cards"] == 1
    assert answer["replaced"] == {"name": "mine", "cards": 2, "created": made, "problem": None}
    assert list(parse_profile(_stored(data_dir, "mine").decode(), "mine").prototypes) == ["QD"]


def test_a_deck_that_cannot_be_read_is_replaced_only_with_replace(
    client: TestClient, data_dir: Path
) -> None:
    path = _write_broken(data_dir, "mine")
    message = error_message(
        client.post("/v1/decks/mine", files=[_card_photo("AS.png")]), 409, "deck_exists"
    )
    assert message.startswith("deck 'mine' exists but cannot be read (deck profile 'mine' is ")
    assert message.endswith(": send replace=true to replace it, or calibrate another name")
    assert path.read_text() == "{not json"
    files = [_card_photo("AS.png")]
    answer = client.post("/v1/decks/mine", files=files, data={"replace": "true"}).json()
    assert answer["deck"]["cards"] == 1
    replaced = answer["replaced"]
    assert (replaced["cards"], replaced["created"]) == (None, None)
    assert "corrupt" in replaced["problem"]


def test_a_live_stream_follows_its_deck_calibrated_again_or_deleted(
    client: TestClient, fake: DeckFakeReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    from handreader.service.routes import decks as deck_routes

    monkeypatch.setattr(deck_routes, "RECHECK_S", 0.0)
    seen: list[object] = []
    read = fake.read

    def recording(image: Any, deck: object = None) -> Any:
        seen.append(deck)
        return read(image, deck)

    monkeypatch.setattr(fake, "read", recording)
    _save_deck("mine", ("AS", "10H"))
    with client.websocket_connect("/v1/live?deck=mine") as socket:
        _frame(socket)
        _save_deck("mine", ("AS", "10H", "KD"))  # calibrated again, with one card more
        _frame(socket)
        assert [len(getattr(deck, "prototypes", {})) for deck in seen] == [2, 3]
        deck_routes.DECKS.store().delete("mine")
        socket.send_bytes(image_bytes())
        gone = socket.receive_json()["error"]
        assert gone["code"] == "bad_options" and "unknown deck 'mine'" in gone["message"]


def test_a_deck_made_for_other_models_is_a_400_not_a_500() -> None:
    from handreader.service.routes.decks import DeckOptionError, DeckReader
    from vision.calibration import DeckProfileError, new_profile

    class Misfit:
        def read(self, image: Any, deck: object = None) -> Any:
            raise DeckProfileError("made with 3-d embeddings, the classifier gives 128-d")

    profile = new_profile("odd", {"AS": [[1.0, 0.0, 0.0]]}, "sha", [])
    with pytest.raises(DeckOptionError, match="deck 'odd' cannot be used: made with 3-d"):
        DeckReader(Misfit(), profile).read(np.zeros((8, 8, 3), np.uint8))  # type: ignore[arg-type]
