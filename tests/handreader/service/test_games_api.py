"""``POST /v1/baccarat``, ``/v1/blackjack``, ``/v1/paigow`` (handreader.service.routes.games)
with a fake recognizer: card codes, photos laid out by side, options, and every bad input as a
4xx JSON error (never a 500).

Expectations come from RULES.md section 3 (baccarat points and tableau, Banker commission 5%,
Tie 8:1 and pushes; blackjack 3:2, soft 17; Pai Gow Poker win both less 5%, one each a push,
copies to the banker, the wheel's place as an option), and from the layout rules documented
in handreader/tables/games.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from web_fakes import FakeReader, error_message, fake_client, image_bytes

from handreader.service import app as serve


@pytest.fixture
def fake() -> FakeReader:
    return FakeReader({})


@pytest.fixture
def client(fake: FakeReader) -> Iterator[TestClient]:
    with fake_client(fake) as test_client:
        yield test_client


def _photo(client: TestClient, game: str, options: dict[str, Any] | None = None) -> Any:
    files = {"image": ("table.jpg", image_bytes(), "image/jpeg")}
    data = {"options": json.dumps(options or {})}
    response = client.post(f"/v1/{game}", files=files, data=data)
    assert response.status_code == 200, response.text
    return response.json()


# --- baccarat ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("player", "banker", "totals", "result", "draws"),
    [
        # naturals end the coup (RULES.md: 8 or 9 on two cards)
        ("8H AS", "KD 7C", (9, 7), "player", (False, False)),
        ("4H 3C", "8D KS", (7, 8), "banker", (False, False)),
        # player 4 draws; banker 6 draws after a player third card of 6 or 7 only
        ("9H 5C 3D", "KD 6S", (7, 6), "player", (False, False)),
        ("9H 5C 6D", "KD 6S", (0, 6), None, (False, True)),
        ("9H 5C 6D", "KD 6S 2C", (0, 8), "banker", (False, False)),
        # player stands on 7; banker 5 then draws
        ("4H 3C", "5D KS", (7, 5), None, (False, True)),
        # player 3 must draw first
        ("AH 2C", "5D KS", (3, 5), None, (True, False)),
        ("9H KD", "9S QC", (9, 9), "tie", (False, False)),
    ],
)
def test_baccarat_codes_follow_the_tableau(
    client: TestClient,
    player: str,
    banker: str,
    totals: tuple[int, int],
    result: str | None,
    draws: tuple[bool, bool],
) -> None:
    body = client.post("/v1/baccarat", json={"player": player, "banker": banker}).json()
    assert (body["player"]["total"], body["banker"]["total"]) == totals
    assert body["result"] == result
    assert (body["player"]["must_draw"], body["banker"]["must_draw"]) == draws
    assert body["consistent"] is True
    assert len(body["bets"]) == (3 if result else 0)  # bets settle once the coup is over


def test_baccarat_bets_and_house_options(client: TestClient) -> None:
    def nets(payload: dict[str, Any]) -> dict[str, float]:
        body = client.post("/v1/baccarat", json=payload).json()
        return {bet["bet"]: bet["net"] for bet in body["bets"]}

    banker_wins = {"player": "4H 3C", "banker": "8D KS", "stake": 100}
    assert nets(banker_wins) == {"player": -100, "banker": 95, "tie": -100}  # 5% commission
    assert nets({**banker_wins, "commission": 0})["banker"] == 100
    tie = {"player": "9H KD", "banker": "9S QC", "stake": 10}
    assert nets(tie) == {"player": 0, "banker": 0, "tie": 80}  # pushes; Tie pays 8:1
    assert nets({**tie, "tie_pays": 9, "push_on_tie": False}) == {
        "player": -10, "banker": -10, "tie": 90,
    }  # fmt: skip
    only = client.post("/v1/baccarat", json={**banker_wins, "bet": "banker"}).json()["bets"]
    assert [bet["bet"] for bet in only] == ["banker"]


def test_baccarat_reports_a_draw_against_the_tableau(client: TestClient) -> None:
    # the banker stands on 6 after a player third card of 3 (tableau): a third card is a breach
    body = client.post("/v1/baccarat", json={"player": "9H 5C 3D", "banker": "KD 6S 2C"}).json()
    assert body["consistent"] is False and body["result"] is None and body["bets"] == []
    assert "banker drew a third card (2C) on 6" in body["problem"]


BACCARAT_BAD = [
    ({"player": "9H 5C"}, 422, "validation_error"),
    ({"player": "9H 5C 3D 2D", "banker": "KD 6S"}, 400, "bad_hand"),
    ({"player": "9H JR", "banker": "KD 6S"}, 400, "bad_hand"),
    ({"player": "9H 1C", "banker": "KD 6S"}, 400, "bad_card"),
    ({"player": "9H 5C", "banker": "9H 6S", "decks": 1}, 400, "bad_hand"),
    ({"player": "9H 5C", "banker": "KD 6S", "bet": "dragon"}, 422, "validation_error"),
    ({"player": "9H 5C", "banker": "KD 6S", "stake": 0}, 400, "bad_options"),
    ({"player": "9H 5C", "banker": "KD 6S", "stake": "ten"}, 400, "bad_options"),
    ({"player": "9H 5C", "banker": "KD 6S", "stake": [10]}, 422, "validation_error"),
    ({"player": "9H 5C", "banker": "KD 6S", "tie_pays": "1e16"}, 400, "bad_options"),
    ({"player": "9H 5C", "banker": "KD 6S", "commission": 1}, 422, "validation_error"),
    ({"player": "9H 5C", "banker": "KD 6S", "decks": 0}, 422, "validation_error"),
    ({"player": "9H 5C", "banker": "KD 6S", "colour": "red"}, 422, "validation_error"),
    ({"player": 7, "banker": "KD 6S"}, 422, "validation_error"),
]


@pytest.mark.parametrize(("payload", "status", "code"), BACCARAT_BAD)
def test_baccarat_bad_input(
    client: TestClient, payload: dict[str, Any], status: int, code: str
) -> None:
    error_message(client.post("/v1/baccarat", json=payload), status, code)


def test_baccarat_photo_sides_by_layout(client: TestClient, fake: FakeReader) -> None:
    fake.hands = {"9H 5C 3D": (0.1, 0.4), "KD 6S": (0.7, 0.4)}
    body = _photo(client, "baccarat", {"stake": 100})
    # default: the Player's group is the one nearest the left edge
    assert [hand["role"] for hand in body["hands"]] == ["player", "banker"]
    assert [card["card"] for card in body["hands"][0]["cards"]] == ["9H", "5C", "3D"]
    assert body["result"]["result"] == "player" and body["problem"] is None
    assert body["size"] == [640, 480] and "timings_ms" in body
    flipped = _photo(client, "baccarat", {"player_side": "right"})
    assert [card["card"] for card in flipped["hands"][0]["cards"]] == ["KD", "6S"]
    # Player K+6 = 6 stands; Banker 9+5 = 4 draws on 0-5 (3 -> 7): the Banker wins
    assert flipped["result"]["result"] == "banker" and flipped["problem"] is None
    # regions decide when given (fractions of the image)
    regions = {"player_region": [0.5, 0, 1, 1], "banker_region": [0, 0, 0.5, 1]}
    by_region = _photo(client, "baccarat", regions)
    assert [card["card"] for card in by_region["hands"][1]["cards"]] == ["9H", "5C", "3D"]


def test_baccarat_photo_that_is_no_coup_is_reported(client: TestClient, fake: FakeReader) -> None:
    fake.hands = {"9H 5C": (0.1, 0.4), "KD 6S": (0.5, 0.4), "2C 3C": (0.8, 0.8)}
    body = _photo(client, "baccarat")
    assert body["result"] is None and "found 3 groups" in body["problem"]
    assert [hand["role"] for hand in body["hands"]] == ["hand", "hand", "hand"]
    fake.hands = {"9H 5C 3D 4D": (0.1, 0.4), "KD 6S": (0.7, 0.4)}
    body = _photo(client, "baccarat")
    assert body["result"] is None and "player needs 2 or 3 cards, got 4" in body["problem"]


@pytest.mark.parametrize("game", ["baccarat", "blackjack", "paigow"])
def test_a_blank_photo_says_no_cards_found_not_to_give_regions(
    client: TestClient, fake: FakeReader, game: str
) -> None:
    fake.hands = {}
    body = _photo(client, game)
    assert body["problem"] == "no cards found" and body["hands"] == []


def test_read_says_no_cards_found_for_a_blank_photo(client: TestClient, fake: FakeReader) -> None:
    fake.hands = {}
    blank = client.post("/v1/read", content=image_bytes()).json()
    assert blank["cards"] == [] and blank["problem"] == "no cards found"
    fake.hands = {"9H 5C": (0.1, 0.4)}
    assert client.post("/v1/read", content=image_bytes()).json()["problem"] is None


def test_baccarat_photo_with_an_uncertain_card_is_unverified(
    client: TestClient, fake: FakeReader
) -> None:
    fake.hands = {"9H 5C 3D": (0.1, 0.4), "KD 6S": (0.7, 0.4)}
    fake.uncertain = ["6S"]
    body = _photo(client, "baccarat")
    assert body["result"] is None  # an uncertain card never decides the coup
    assert body["problem"].startswith("unverified: uncertain reading of 6S?")
    banker = next(hand for hand in body["hands"] if hand["role"] == "banker")
    assert [card["uncertain"] for card in banker["cards"]] == [False, True]


@pytest.mark.parametrize(
    ("options", "status", "code"),
    [
        ({"player_region": [0, 0, 0.5, 1]}, 400, "bad_options"),  # one region alone
        ({"player_region": [0.5, 0, 0.2, 1], "banker_region": [0, 0, 1, 1]}, 400, "bad_options"),
        ({"player_side": "middle"}, 422, "validation_error"),
        ({"link_factor": 0}, 422, "validation_error"),
    ],
)
def test_baccarat_photo_bad_options(
    client: TestClient, fake: FakeReader, options: dict[str, Any], status: int, code: str
) -> None:
    fake.hands = {"9H 5C 3D": (0.1, 0.4), "KD 6S": (0.7, 0.4)}
    files = {"image": ("t.jpg", image_bytes(), "image/jpeg")}
    response = client.post("/v1/baccarat", files=files, data={"options": json.dumps(options)})
    error_message(response, status, code)


def test_photo_errors_of_the_image_itself(client: TestClient) -> None:
    for game in ("baccarat", "blackjack", "paigow"):
        error_message(client.post(f"/v1/{game}", content=b"not an image"), 415, "unsupported_type")
        files = {"image": ("t.jpg", b"", "image/jpeg")}
        error_message(client.post(f"/v1/{game}", files=files), 400, "empty")
        broken = client.post(
            f"/v1/{game}", content=b"{", headers={"content-type": "application/json"}
        )
        error_message(broken, 400, "malformed_json")


def test_photo_without_models_is_not_ready() -> None:
    app = serve.create_app(settings=serve.Settings(models_dir=Path("/nonexistent")))
    with TestClient(app) as client:
        error_message(client.post("/v1/blackjack", content=image_bytes()), 503, "not_ready")
        # card codes need no models
        ok = client.post("/v1/blackjack", json={"dealer": "10S 7H", "players": ["9C 9D"]})
        assert ok.status_code == 200


# --- blackjack -----------------------------------------------------------------------------------


def test_blackjack_codes_settle_each_player(client: TestClient) -> None:
    body = client.post(
        "/v1/blackjack",
        json={"dealer": "10S 7H", "players": ["AS KD", "9C 9D 3H", "10H 6C 9S", "8C 9H"],
              "stake": 10},
    ).json()  # fmt: skip
    assert body["dealer"]["total"] == 17 and body["dealer"]["action"] == "stand"
    outcomes = [(player["outcome"], player["net"]) for player in body["players"]]
    # blackjack 3:2; 21 beats 17; a bust loses; 17 against 17 pushes... 8+9 = 17
    assert outcomes == [("blackjack", 15), ("win", 10), ("lose", -10), ("push", 0)]
    assert body["players"][0]["hand"]["soft"] is True


def test_blackjack_soft_17_is_a_house_option(client: TestClient) -> None:
    stands = client.post("/v1/blackjack", json={"dealer": "AH 6D", "players": ["10S 8C"]}).json()
    assert stands["dealer"]["description"] == "soft 17" and stands["dealer"]["action"] == "stand"
    assert stands["players"][0]["outcome"] == "win"
    hits = client.post(
        "/v1/blackjack", json={"dealer": "AH 6D", "players": ["10S 8C"], "hit_soft_17": True}
    ).json()
    assert hits["dealer"]["action"] == "hit" and hits["players"][0]["outcome"] is None


BLACKJACK_BAD = [
    ({"dealer": "10S 7H", "players": []}, 422, "validation_error"),
    ({"dealer": "10S 7H"}, 422, "validation_error"),
    ({"dealer": "10S 7H", "players": ["AS"]}, 400, "bad_hand"),
    ({"dealer": "", "players": ["AS KD"]}, 400, "bad_hand"),
    ({"dealer": "10S 7H", "players": ["AS JB"]}, 400, "bad_hand"),
    ({"dealer": "10S 7H 5C", "players": ["10H 8C"]}, 400, "illegal_play"),
    ({"dealer": "10S 7H", "players": ["10H 8C 5D 2C"]}, 400, "illegal_play"),
    ({"dealer": "10S 7H", "players": ["AD KC 5H"]}, 400, "illegal_play"),
    ({"dealer": "10S 7H", "players": ["10H 8C"], "blackjack_pays": -1}, 400, "bad_options"),
    ({"dealer": "10S 7H", "players": ["10H 8C"], "blackjack_pays": True}, 422, "validation_error"),
    ({"dealer": "10S 7H", "players": ["10H 8C"] * 8}, 422, "validation_error"),
]


@pytest.mark.parametrize(("payload", "status", "code"), BLACKJACK_BAD)
def test_blackjack_bad_input(
    client: TestClient, payload: dict[str, Any], status: int, code: str
) -> None:
    error_message(client.post("/v1/blackjack", json=payload), status, code)


def test_blackjack_photo_dealer_on_top_players_in_reading_order(
    client: TestClient, fake: FakeReader
) -> None:
    fake.hands = {"10S 7H": (0.4, 0.05), "9C 9D 3H": (0.6, 0.6), "AS KD": (0.1, 0.6)}
    body = _photo(client, "blackjack")
    roles = [(hand["role"], hand["seat"]) for hand in body["hands"]]
    assert roles == [("dealer", 0), ("player", 1), ("player", 2)]
    assert [card["card"] for card in body["hands"][1]["cards"]] == ["AS", "KD"]  # left first
    assert [player["outcome"] for player in body["result"]["players"]] == ["blackjack", "win"]
    # the dealer nearest the bottom instead: the lower-right hand
    flipped = _photo(client, "blackjack", {"dealer_side": "bottom"})
    assert flipped["hands"][0]["role"] == "dealer"
    # a single group cannot be a round
    fake.hands = {"10S 7H": (0.4, 0.05)}
    alone = _photo(client, "blackjack")
    assert alone["result"] is None and "dealer_region" in alone["problem"]
    # with a dealer region, the other cards are the players
    fake.hands = {"10S 7H": (0.4, 0.05), "AS KD": (0.1, 0.6)}
    region = _photo(client, "blackjack", {"dealer_region": [0, 0, 1, 0.3]})
    assert region["result"]["players"][0]["outcome"] == "blackjack"


# --- pai gow poker -------------------------------------------------------------------------------


def test_paigow_house_way_and_settling(client: TestClient) -> None:
    body = client.post("/v1/paigow", json={"cards": "AS KD 9C 9D 5H 3S JR"}).json()
    # one pair (the joker as an ace pairs the ace): the pair high, two highest singles low
    assert body["set_by"] == "house_way"
    assert set(body["player"]["high"]["cards"]) | set(body["player"]["low"]["cards"]) == {
        "AS", "KD", "9C", "9D", "5H", "3S", "JR",
    }  # fmt: skip
    settled = client.post(
        "/v1/paigow",
        json={"cards": "AS KD 9C 9D 5H 3S JR", "banker": "QS QH 8D 7C 4S 3D 2H", "stake": 100},
    ).json()
    assert (settled["high"], settled["low"], settled["outcome"], settled["net"]) == (
        "player", "player", "win", 95,
    )  # fmt: skip  # win both: even money less 5%


@pytest.mark.parametrize(
    ("wheel", "high", "outcome", "net"),
    [("second-highest", "player", "push", 0), ("lowest", "banker", "lose", -1)],
)
def test_paigow_wheel_rank_is_an_option(
    client: TestClient, wheel: str, high: str, outcome: str, net: int
) -> None:
    # player A-2-3-4-5 against the banker's 6-high straight (house way), low hands K-Q each:
    # the copy goes to the banker; the wheel's place decides the high hands
    body = client.post(
        "/v1/paigow",
        json={"high": "AS 2D 3C 4H 5S", "low": "KD QC", "banker": "6H 5C 4D 3S 2H KS QH",
              "wheel": wheel},
    ).json()  # fmt: skip
    assert body["banker"]["high"]["description"] == "straight, 6 high"
    assert (body["high"], body["low"], body["outcome"], body["net"]) == (
        high, "banker", outcome, net,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("way", "high", "low"),
    [
        # kings and 4s with an ace: Foxwoods splits a higher pair of jacks or better;
        # the Atlantic City table of the gold-star way keeps a low and a high pair with an ace
        (None, "pair of kings", "pair of 4s"),
        ("foxwoods", "pair of kings", "pair of 4s"),
        ("gold-star", "two pair, kings and 4s", "high card, A high"),
    ],
)
def test_paigow_house_way_is_an_option(
    client: TestClient, way: str | None, high: str, low: str
) -> None:
    payload: dict[str, Any] = {"cards": "KS KD 4C 4H AD 3C 8S", "banker": "QS QH 8D 7C 4S 3D 2H"}
    if way is not None:
        payload["house_way"] = way
    body = client.post("/v1/paigow", json=payload).json()
    assert body["house_way"] == (way or "foxwoods")
    setting = body["player"]
    assert (setting["high"]["description"], setting["low"]["description"]) == (high, low)


def test_paigow_unknown_house_way_is_named(client: TestClient) -> None:
    payload = {"cards": "AS KD 9C 9D 5H 3S JR", "house_way": "bellagio"}
    message = error_message(client.post("/v1/paigow", json=payload), 400, "unknown_profile")
    assert message == "unknown house way 'bellagio': known ways are foxwoods, gold-star"
    files = {"image": ("table.jpg", image_bytes(), "image/jpeg")}
    photo = client.post(
        "/v1/paigow", files=files, data={"options": json.dumps({"house_way": "bellagio"})}
    )
    assert "bellagio" in error_message(photo, 400, "unknown_profile")


PAIGOW_BAD = [
    ({"high": "KD QC 3C 4H 5S", "low": "AS AD"}, 400, "illegal_play"),  # foul
    ({"cards": "AS KD 9C 9D 5H 3S JR", "high": "AS KD 9C 9D 5H"}, 400, "bad_hand"),
    ({}, 400, "bad_hand"),
    ({"high": "AS KD 9C 9D 5H"}, 400, "bad_hand"),
    ({"cards": "AS KD 9C 9D 5H 3S"}, 400, "bad_hand"),
    ({"cards": "AS KD 9C 9D 5H 3S JR JB"}, 400, "bad_hand"),
    ({"cards": "AS KD 9C 9D 5H 3S JR", "banker": "AS QH 8D 7C 4S 3D 2H"}, 400, "bad_hand"),
    ({"cards": "AS KD 9C 9D 5H 3S XX"}, 400, "bad_card"),
    ({"cards": "AS KD 9C 9D 5H 3S JR", "wheel": "middle"}, 422, "validation_error"),
    ({"cards": "AS KD 9C 9D 5H 3S JR", "commission": -0.1}, 422, "validation_error"),
]


@pytest.mark.parametrize(("payload", "status", "code"), PAIGOW_BAD)
def test_paigow_bad_input(
    client: TestClient, payload: dict[str, Any], status: int, code: str
) -> None:
    error_message(client.post("/v1/paigow", json=payload), status, code)


def test_paigow_photo_one_or_two_groups(client: TestClient, fake: FakeReader) -> None:
    fake.hands = {"AS KD 9C 9D 5H 3S JR": (0.1, 0.7)}
    alone = _photo(client, "paigow")
    assert alone["result"]["set_by"] == "house_way" and "banker" not in alone["result"]
    fake.hands = {"AS KD 9C 9D 5H 3S JR": (0.1, 0.7), "QS QH 8D 7C 4S 3D 2H": (0.1, 0.1)}
    both = _photo(client, "paigow", {"stake": 100})
    # the player's group is the one nearest the bottom (default)
    assert [hand["role"] for hand in both["hands"]] == ["player", "banker"]
    assert both["result"]["outcome"] == "win" and both["result"]["net"] == 95
    assert both["result"]["house_way"] == "foxwoods"
