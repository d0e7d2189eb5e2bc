"""The page's files, the trainer endpoints and the live WebSocket
(handreader.service.routes.reading), with a fake recognizer through the dependency
override of ``handreader.service.deps.get_reader``.

Expectations: seed 002 (the trainer's rules: Niu Niu beats No Niu; equal scores are decided by the
highest card, rank K..A then suit spades, hearts, clubs, diamonds), vision/tracking.py (a card is
shown after 3 consecutive read frames and forgotten on reset), the product's requirements (plain
files, nothing fetched from elsewhere; errors as ``{"error": {"code", "message"}}``, never a 500).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.websockets import WebSocketDisconnect
from web_fakes import NIU_TABLE, FakeReader, error_message, fake_client, image_bytes

from handreader.service import app as serve
from handreader.service.routes.reading import STATIC_DIR, deal_hands
from rules.cards import CARD_CLASSES, parse_card
from rules.niuniu import rank_hands
from rules.niuniu_profiles import get_profile

NIUNIU = "niuniu: 52 cards"
"""The deck in play of every Niu Niu profile (one 52-card deck), as the live answers name it."""


@pytest.fixture
def fake() -> FakeReader:
    return FakeReader(NIU_TABLE)


@pytest.fixture
def client(fake: FakeReader) -> Iterator[TestClient]:
    with fake_client(fake) as test_client:
        yield test_client


# --- the page ------------------------------------------------------------------------------------


def test_the_page_is_served_at_the_root(client: TestClient) -> None:
    response = client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    for mode in ("photo", "live", "trainer", "verify"):
        assert f'id="mode-{mode}"' in response.text


def _page_files() -> list[Path]:
    return sorted(path for path in STATIC_DIR.iterdir() if path.is_file())


def test_every_file_the_page_names_is_served(client: TestClient) -> None:
    html = (STATIC_DIR / "index.html").read_text()
    named = set(re.findall(r'(?:src|href)="/static/([^"]+)"', html))
    for script in STATIC_DIR.glob("*.js"):
        named |= set(re.findall(r'from "\./([^"]+)"', script.read_text()))
    assert {
        "app.js",
        "style.css",
        "photo.js",
        "live.js",
        "trainer.js",
        "verify.js",
        "draw.js",
    } <= named
    assert "favicon.svg" in named
    types = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
    for name in named:
        response = client.get(f"/static/{name}")
        assert response.status_code == 200, name
        assert response.headers["content-type"].startswith(types[Path(name).suffix])


@pytest.mark.parametrize("path", _page_files(), ids=lambda path: path.name)
def test_the_page_fetches_nothing_from_elsewhere(path: Path) -> None:
    # No CDN, no fonts or scripts from other hosts: every URL in the files is relative.
    text = path.read_text()
    assert not re.search(r"""(?:src|href|from|import|url)\s*[=(]?\s*["']?(?:https?:)?//""", text)
    assert "@import" not in text


@pytest.mark.parametrize(
    "name", ["nope.js", "index.html.bak", ".hidden", "app.exe", "..%2Fserve.py"]
)
def test_unknown_page_files_are_404(client: TestClient, name: str) -> None:
    error_message(client.get(f"/static/{name}"), 404, "not_found")


# --- trainer: dealing ----------------------------------------------------------------------------


@pytest.mark.parametrize("count", [2, 3, 4])
def test_deal_gives_distinct_cards_and_repeats_with_a_seed(client: TestClient, count: int) -> None:
    body = client.get("/v1/trainer/deal", params={"hands": count, "seed": 42}).json()
    assert body["profile"] == "trainer" and body["seed"] == 42
    cards = [card for hand in body["hands"] for card in hand]
    assert len(body["hands"]) == count and all(len(hand) == 5 for hand in body["hands"])
    assert len(set(cards)) == len(cards)  # one deck (seed 002: a standard 52-card deck)
    assert all(card in CARD_CLASSES and card not in ("JR", "JB") for card in cards)
    again = client.get("/v1/trainer/deal", params={"hands": count, "seed": 42}).json()
    assert again["hands"] == body["hands"]


def test_deal_without_a_seed_returns_the_seed_it_drew(client: TestClient) -> None:
    first = client.get("/v1/trainer/deal").json()
    assert len(first["hands"]) == 3  # the default
    replay = client.get("/v1/trainer/deal", params={"seed": first["seed"]}).json()
    assert replay["hands"] == first["hands"]


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**63 - 1), count=st.integers(2, 4))
def test_dealt_hands_are_distinct_cards_of_one_deck(seed: int, count: int) -> None:
    hands = deal_hands(count, get_profile("trainer"), np.random.default_rng(seed))
    cards = [parse_card(code) for hand in hands for code in hand]
    assert len(cards) == 5 * count == len(set(cards))
    rank_hands([" ".join(hand) for hand in hands], "trainer")  # the rules accept the deal


@pytest.mark.parametrize(
    ("params", "status", "code"),
    [
        ({"hands": 1}, 422, "validation_error"),
        ({"hands": 5}, 422, "validation_error"),
        ({"hands": "three"}, 422, "validation_error"),
        ({"seed": -1}, 422, "validation_error"),
        ({"seed": 2**63}, 422, "validation_error"),
        ({"profile": "casino"}, 400, "unknown_profile"),
        ({"hand": 3}, 400, "bad_options"),  # a mistyped name is no default deal
        ([("hands", 2), ("hands", 4)], 400, "bad_options"),  # nor is the last of two
    ],
)
def test_deal_bad_input(client: TestClient, params: Any, status: int, code: str) -> None:
    error_message(client.get("/v1/trainer/deal", params=params), status, code)


# --- trainer: checking ---------------------------------------------------------------------------

# Seed 002, example 4: two hands of Niu 7 whose highest cards are kings; spades beat hearts.
KING_OF_SPADES_NIU_7 = "KS 9H AD 5C 2D"  # K+9+A = 20, 5+2 = 7
KING_OF_HEARTS_NIU_7 = "KH 8S 2H 4C 3D"  # K+8+2 = 20, 4+3 = 7


def test_check_a_right_pick_with_the_reading(client: TestClient) -> None:
    # Seed 002, example 2: Niu Niu beats No Niu.
    body = client.post(
        "/v1/trainer/check", json={"hands": ["AS 2S 3S 4S 8S", "KS QS 10S 5C 5S"], "pick": 1}
    ).json()
    assert body["correct"] is True and body["winners"] == [1] and body["tie"] is False
    assert body["places"] == [2, 1] and body["tie_break"] is None
    niu_niu = body["hands"][1]["score"]
    assert niu_niu["label"] == "Niu Niu"
    assert sorted(niu_niu["bull"]) == ["10S", "KS", "QS"] and sorted(niu_niu["rest"]) == [
        "5C",
        "5S",
    ]
    assert (
        body["hands"][0]["score"]["label"] == "No Niu" and body["hands"][0]["score"]["bull"] is None
    )


def test_check_explains_the_high_card_tie_break(client: TestClient) -> None:
    hands = [KING_OF_HEARTS_NIU_7, "3H 7S KD 8C 6D", KING_OF_SPADES_NIU_7]
    wrong = client.post("/v1/trainer/check", json={"hands": hands, "pick": 0}).json()
    assert wrong["correct"] is False and wrong["winners"] == [2]
    assert [hand["score"]["label"] for hand in wrong["hands"]] == ["Niu 7", "Niu 4", "Niu 7"]
    tie_break = wrong["tie_break"]
    assert tie_break["by"] == "high_card" and tie_break["hands"] == [0, 2]
    assert tie_break["high_cards"] == ["KH", "KS"]
    assert "KS (hand C) beats KH (hand A)" in tie_break["text"]
    right = client.post("/v1/trainer/check", json={"hands": hands, "pick": 2}).json()
    assert right["correct"] is True


def test_check_under_a_profile_without_tie_break_shares_first_place(client: TestClient) -> None:
    # classic (seed 000): equal scores tie; any of the tied hands is a right pick
    hands = [KING_OF_HEARTS_NIU_7, KING_OF_SPADES_NIU_7]
    body = client.post(
        "/v1/trainer/check", json={"hands": hands, "pick": 0, "profile": "classic"}
    ).json()
    assert body["winners"] == [0, 1] and body["tie"] is True and body["correct"] is True
    assert body["tie_break"]["by"] is None and "breaks no tie" in body["tie_break"]["text"]


CHECK_BAD = [
    ({"hands": ["AS 2S 3S 4S 8S"], "pick": 0}, 422, "validation_error"),
    ({"hands": ["AS 2S 3S 4S 8S"] * 5, "pick": 0}, 422, "validation_error"),
    ({"hands": ["AS 2S 3S 4S 8S", "KS QS 10S 5C 5S"], "pick": 2}, 422, "validation_error"),
    ({"hands": ["AS 2S 3S 4S 8S", "KS QS 10S 5C 5S"], "pick": -1}, 422, "validation_error"),
    ({"hands": ["AS 2S 3S 4S 8S", "KS QS 10S 5C 5S"]}, 422, "validation_error"),
    ({"hands": ["AS 2S 3S 4S ZZ", "KS QS 10S 5C 5S"], "pick": 0}, 400, "bad_card"),
    ({"hands": ["AS 2S 3S 4S", "KS QS 10S 5C 5S"], "pick": 0}, 400, "bad_hand"),
    ({"hands": ["AS 2S 3S 4S 8S", "AS QS 10S 5C 5H"], "pick": 0}, 400, "bad_hand"),
    ({"hands": ["AS 2S 3S 4S JR", "KS QS 10S 5C 5S"], "pick": 0}, 400, "bad_hand"),
    ({"hands": ["AS 2S 3S 4S 8S", "KS QS 10S 5C 5S"], "pick": 0, "profile": "x"}, 400,
     "unknown_profile"),
    ({"hands": ["AS 2S 3S 4S 8S", "KS QS 10S 5C 5S"], "pick": 0, "extra": 1}, 422,
     "validation_error"),
]  # fmt: skip


@pytest.mark.parametrize(("payload", "status", "code"), CHECK_BAD)
def test_check_bad_input(
    client: TestClient, payload: dict[str, Any], status: int, code: str
) -> None:
    error_message(client.post("/v1/trainer/check", json=payload), status, code)


def test_check_malformed_json_is_a_json_error(client: TestClient) -> None:
    response = client.post(
        "/v1/trainer/check", content=b"{", headers={"content-type": "application/json"}
    )
    error_message(response, 400, "malformed_json")  # (as every other JSON body of the API)


# --- live ----------------------------------------------------------------------------------------


def _frame(socket: Any, data: bytes | None = None) -> dict[str, Any]:
    socket.send_bytes(data if data is not None else image_bytes())
    answer: dict[str, Any] = socket.receive_json()
    return answer


def test_live_frames_are_tracked_and_scored(client: TestClient, fake: FakeReader) -> None:
    with client.websocket_connect("/v1/live?profile=trainer&stake=100") as socket:
        first = _frame(socket)
        # vision/tracking.py: a card is shown after 3 consecutive read frames
        assert first["frame"] == 0 and first["cards"] == [] and first["size"] == [640, 480]
        _frame(socket)
        third = _frame(socket)
    assert fake.sizes == [(640, 480)] * 3  # each JPEG frame was decoded and read
    assert len(third["cards"]) == 15
    table = third["table"]
    assert table["profile"] == "trainer" and table["banker"] == 0
    assert [hand["score"]["label"] for hand in table["hands"]] == ["No Niu", "Niu Niu", "Niu 4"]
    assert [(p["outcome"], p["net"]) for p in table["players"]] == [("win", 95), ("win", 95)]
    assert set(third["ms"]) >= {"read", "track", "score", "total"}


def test_each_live_connection_reads_through_its_own_stream_reader(
    client: TestClient, fake: FakeReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recognizer offering ``for_stream`` (the real Reader: a memory of the video's last
    frame) gives each connection a new one: two cameras never share a memory."""
    made: list[FakeReader] = []

    def for_stream() -> FakeReader:
        stream = FakeReader(fake.hands)
        made.append(stream)
        return stream

    monkeypatch.setattr(fake, "for_stream", for_stream, raising=False)
    for _ in range(2):
        with client.websocket_connect("/v1/live") as socket:
            _frame(socket)
            _frame(socket)
    assert [stream.sizes for stream in made] == [[(640, 480)] * 2] * 2
    assert fake.sizes == []  # every frame went through a connection's stream reader


def test_live_control_messages(client: TestClient) -> None:
    with client.websocket_connect("/v1/live") as socket:
        for _ in range(3):
            shown = _frame(socket)
        assert shown["table"]["profile"] == "trainer"  # the default profile
        socket.send_json({"profile": "classic"})
        assert socket.receive_json() == {
            "ok": True,
            "profile": "classic",
            "deck": None,
            "in_play": NIUNIU,
            "layout": None,
        }
        assert _frame(socket)["table"]["profile"] == "classic"
        socket.send_json({"options": {"profile": "app", "mode": "trainer"}})
        assert socket.receive_json() == {
            "ok": True,
            "profile": "app",
            "deck": None,
            "in_play": NIUNIU,
            "layout": None,
        }
        assert _frame(socket)["table"]["mode"] == "trainer"
        socket.send_json({"reset": True})
        assert socket.receive_json()["ok"] is True
        assert _frame(socket)["cards"] == []  # the tracks were forgotten


def test_live_a_profile_without_the_streams_bet_is_refused(client: TestClient) -> None:
    with client.websocket_connect("/v1/live?profile=classic&bet=double") as socket:
        socket.send_json({"profile": "app"})  # app offers no double bet
        refused = socket.receive_json()
        assert refused["error"]["code"] == "bad_options"
        assert "offers no 'double' bet" in refused["error"]["message"]
        assert _frame(socket)["table"]["profile"] == "classic"  # the stream goes on unchanged


def test_live_lock_holds_the_hands_shown_to_their_regions(client: TestClient) -> None:
    with client.websocket_connect("/v1/live") as socket:
        socket.send_json({"lock": True})
        refused = socket.receive_json()["error"]
        assert refused["code"] == "bad_options" and "no hands to lock yet" in refused["message"]
        for _ in range(3):
            shown = _frame(socket)
        assert shown["layout"] is None
        socket.send_json({"lock": True})
        answer = socket.receive_json()
        layout = answer["layout"]
        assert answer["ok"] is True and layout["banker"] is not None
        assert len(layout["players"]) == len(shown["table"]["hands"]) - 1 == 2
        assert all(
            0 <= value <= 1 for box in [layout["banker"], *layout["players"]] for value in box
        )
        locked = _frame(socket)
        assert locked["layout"] == layout
        assert [hand["score"]["label"] for hand in locked["table"]["hands"]] == [
            hand["score"]["label"] for hand in shown["table"]["hands"]
        ]
        socket.send_json({"lock": "yes"})
        refused = socket.receive_json()["error"]
        assert refused == {
            "code": "bad_options",
            "message": 'lock must be true or false, got "yes"',
        }
        for written in ("1.00000000000000001", "1e400", "1e-400", "-1e400"):  # as written
            socket.send_text(f'{{"reset": {written}}}')  # not 1.0, Infinity, 0.0
            assert socket.receive_json()["error"] == {
                "code": "bad_options",
                "message": f"reset must be true or false, got {written}",
            }
        socket.send_text('{"lock": 0.10000000000000001}')  # a double's 17 digits: that double
        assert socket.receive_json()["error"]["message"] == "lock must be true or false, got 0.1"
        socket.send_json({"lock": True, "reset": True})  # nothing would be shown to lock
        assert "restarts the tracks" in socket.receive_json()["error"]["message"]
        assert _frame(socket)["layout"] == layout
        socket.send_json({"lock": False})
        assert socket.receive_json()["layout"] is None
        assert _frame(socket)["layout"] is None


@pytest.mark.parametrize(
    "refused",
    [
        {"profile": "classic", "lock": "yes"},
        {"options": {"profile": "app", "game": "pits"}, "deck": "NOPE"},
        {"options": {"profile": "classic"}, "profile": "nope"},
        {"profile": "classic", "reset": "no"},
        {"options": {"profile": "classic"}, "lock": True, "reset": True},
    ],
)
def test_live_a_refused_control_message_changes_nothing(
    client: TestClient, refused: dict[str, Any]
) -> None:
    """A control message answered with an error leaves the profile, the deck in play, the
    letters and the tracks as they were."""
    with client.websocket_connect("/v1/live") as socket:
        for _ in range(3):
            shown = _frame(socket)
        socket.send_json({})
        state = socket.receive_json()
        socket.send_json(refused)
        assert set(socket.receive_json()) == {"error"}
        socket.send_json({})
        assert socket.receive_json() == state
        after = _frame(socket)
        assert after["cards"] and len(after["cards"]) == len(shown["cards"])  # tracks kept
        assert after["table"]["profile"] == shown["table"]["profile"] == "trainer"


@pytest.mark.parametrize(
    ("send", "code"),
    [
        (b"not an image", "unsupported_type"),
        (b"", "empty"),
        ("{not json", "malformed_json"),
        ("[1, 2]", "malformed_json"),
        ('{"profile": "casino"}', "unknown_profile"),
        ('{"options": {"bet": "triple"}}', "bad_options"),
        ('{"options": {"stake": -1}}', "bad_options"),  # refused in words
        ('{"reset": "' + "x" * 5000 + '"}', "too_large"),  # over the 4 KB of a control message
        ('{"options": 5}', "malformed_json"),
        ('{"profil": "classic"}', "bad_options"),  # a typo is no command done
        ("null", "malformed_json"),
        ('{"reset": "no"}', "bad_options"),  # not taken for true
    ],
)
def test_live_bad_messages_are_answered_and_the_stream_goes_on(
    client: TestClient, send: bytes | str, code: str
) -> None:
    with client.websocket_connect("/v1/live") as socket:
        if isinstance(send, bytes):
            socket.send_bytes(send)
        else:
            socket.send_text(send)
        answer = socket.receive_json()
        assert set(answer) == {"error"} and answer["error"]["code"] == code
        assert answer["error"]["message"]
        assert "NoneType" not in answer["error"]["message"]  # named in JSON's words: null
        assert _frame(socket)["frame"] == 0  # the stream goes on


def test_live_recognizer_failure_is_reported(client: TestClient, fake: FakeReader) -> None:
    def broken(image: Any) -> Any:
        raise RuntimeError("the model fell over")

    fake.read = broken  # type: ignore[method-assign,assignment]
    with client.websocket_connect("/v1/live") as socket:
        answer = _frame(socket)
    assert answer["error"]["code"] == "recognizer_failed"
    assert "the model fell over" in answer["error"]["message"]


@pytest.mark.parametrize(
    ("query", "code"),
    [("profile=casino", "unknown_profile"), ("mode=poker", "validation_error"),
     ("options=%7Bnope", "malformed_json"), ("banker_rule=middle", "validation_error")],
)  # fmt: skip
def test_live_bad_query_closes_with_policy_violation(
    client: TestClient, query: str, code: str
) -> None:
    with client.websocket_connect(f"/v1/live?{query}") as socket:
        assert socket.receive_json()["error"]["code"] == code
        with pytest.raises(WebSocketDisconnect) as closed:
            socket.receive_json()
    assert closed.value.code == 1008


def test_live_options_as_json_in_the_query(client: TestClient) -> None:
    query = '{"profile": "classic", "banker_region": [0, 0, 1, 0.3]}'
    with client.websocket_connect("/v1/live", params={"options": query}) as socket:
        for _ in range(3):
            answer = _frame(socket)
    assert answer["table"]["profile"] == "classic" and answer["table"]["banker"] == 0


def test_live_without_models_reports_not_ready() -> None:
    app = serve.create_app(settings=serve.Settings(models_dir=Path("/nonexistent")))
    with TestClient(app) as client, client.websocket_connect("/v1/live") as socket:
        assert _frame(socket)["error"]["code"] == "not_ready"
