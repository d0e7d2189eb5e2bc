"""The deck in play over HTTP: the ``game`` and ``decks`` options of every image endpoint, their
defaults (each endpoint's own game) and their errors, and the live stream's deck in play.

A fake recognizer records the deck each read was decoded with (``with_deck_in_play``); what
the deck changes in a reading is tested in tests/vision/test_decoding.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from numpy.typing import NDArray
from web_fakes import (
    NIU_4,
    NIU_TABLE,
    NO_NIU,
    FakeReader,
    error_message,
    fake_client,
    image_bytes,
)

from rules.decks import Deck, deck_for_game
from vision.detections import Reading


class InPlayFake(FakeReader):
    """Reads as :class:`FakeReader`; ``with_deck_in_play`` gives a reader recording its deck
    in ``decks`` at each read (None for a read without one)."""

    def __init__(self) -> None:
        super().__init__(NIU_TABLE)
        self.decks: list[Deck | None] = []
        self.in_play: Deck | None = None

    def copied(self, **changes: object) -> Any:
        """A copy of this fake (of its own class), sharing its records, with ``changes``."""
        other = type(self).__new__(type(self))
        other.__dict__.update(self.__dict__, **changes)
        return other

    def with_deck_in_play(self, deck: Deck | None) -> InPlayFake:
        copy: InPlayFake = self.copied(in_play=deck)
        return copy

    def read(self, image_bgr: NDArray[np.uint8]) -> Reading:
        self.decks.append(self.in_play)
        return super().read(image_bgr)


@pytest.fixture
def fake() -> InPlayFake:
    return InPlayFake()


@pytest.fixture
def client(fake: InPlayFake) -> Iterator[TestClient]:
    with fake_client(fake) as test_client:
        yield test_client


def _post_photo(client: TestClient, path: str, options: dict[str, Any]) -> Any:
    files = {"image": ("table.jpg", image_bytes(), "image/jpeg")}
    return client.post(path, files=files, data={"options": json.dumps(options)})


@pytest.mark.parametrize(
    ("path", "options", "expected", "why"),
    [
        ("/v1/read", {}, None, "reading: any card unless a game is named"),
        ("/v1/read", {"game": "pinochle", "decks": 2}, Deck.pinochle(2), "two pinochle packs"),
        ("/v1/score", {}, Deck.standard(), "Niu Niu: the profile's one deck, no jokers"),
        ("/v1/score", {"decks": 2}, Deck.standard(2), "Niu Niu with two decks"),
        ("/v1/score", {"game": "any"}, None, "any card when asked"),
        ("/v1/annotated", {}, Deck.standard(), "a Niu Niu drawing"),
        ("/v1/annotated?game=pits", {}, deck_for_game("pits"), "a Pits drawing"),
        ("/v1/pits", {}, deck_for_game("pits"), "Pits: 54 cards"),
        ("/v1/baccarat", {}, Deck.standard(8), "Baccarat: the shoe's 8 decks"),
        ("/v1/baccarat", {"decks": 6}, Deck.standard(6), "the shoe's decks option"),
        ("/v1/blackjack", {}, Deck.standard(6), "Blackjack: the shoe's 6 decks"),
        ("/v1/paigow", {}, deck_for_game("paigow"), "Pai Gow Poker: 52 and a joker"),
        ("/v1/paigow", {"game": "any"}, None, "any card when asked"),
    ],
)
def test_each_endpoint_reads_with_its_games_deck(
    client: TestClient,
    fake: InPlayFake,
    path: str,
    options: dict[str, Any],
    expected: Deck | None,
    why: str,
) -> None:
    response = _post_photo(client, path, options)
    assert response.status_code == 200, response.text
    assert fake.decks == [expected], why


def test_the_deck_in_play_as_query_parameters_of_a_raw_body(
    client: TestClient, fake: InPlayFake
) -> None:
    response = client.post("/v1/read?game=niuniu&decks=2", content=image_bytes())
    assert response.status_code == 200, response.text
    assert fake.decks == [Deck.standard(2)]


@pytest.mark.parametrize(
    ("path", "options", "status", "code", "text"),
    [
        ("/v1/read", {"game": "poker"}, 400, "bad_options", "unknown game 'poker'"),
        ("/v1/read", {"decks": 2}, 400, "bad_options", "decks 2 given without a game"),
        ("/v1/score", {"game": "any", "decks": 2}, 400, "bad_options", "no deck is in play"),
        ("/v1/score", {"decks": 0}, 422, "validation_error", "decks"),
        ("/v1/pits", {"decks": 17}, 422, "validation_error", "decks"),
        ("/v1/paigow", {"game": 3}, 422, "validation_error", "game"),
    ],
)
def test_bad_deck_in_play_options(
    client: TestClient,
    fake: InPlayFake,
    path: str,
    options: dict[str, Any],
    status: int,
    code: str,
    text: str,
) -> None:
    message = error_message(_post_photo(client, path, options), status, code)
    assert text in message
    assert fake.decks == []  # refused before the photo is read


TWICE = {NIU_4: (0.1, 0.2), NIU_4 + " ": (0.1, 0.8)}
"""One hand read twice, top and bottom: two copies of each of its five cards."""


def test_a_table_read_with_two_decks_is_scored_with_two_decks() -> None:
    """``decks`` counts the packs both in the reading and at the table: two copies of a card
    are a hand each, not a duplicate that voids both; one deck still refuses them."""
    with fake_client(FakeReader(TWICE)) as client:
        one = _post_photo(client, "/v1/score", {"banker_rule": "top"}).json()
        assert [hand["status"] for hand in one["hands"]] == ["invalid", "invalid"]
        assert "more copies than one deck holds" in one["hands"][0]["problem"]
        two = _post_photo(client, "/v1/score", {"banker_rule": "top", "decks": 2}).json()
        assert [hand["status"] for hand in two["hands"]] == ["scored", "scored"]
        assert two["players"][0]["outcome"] == "tie"  # the same hand each side
        assert two["hands"][0]["problem"] is None


def test_card_codes_take_the_number_of_decks() -> None:
    hands = {"hands": [NIU_4, NIU_4], "banker": 0}
    with fake_client(FakeReader({})) as client:
        error_message(client.post("/v1/score", json=hands), 400, "bad_hand")
        two = client.post("/v1/score", json={**hands, "decks": 2})
        assert two.status_code == 200, two.text
        assert [hand["status"] for hand in two.json()["hands"]] == ["scored", "scored"]
        error_message(client.post("/v1/score", json={**hands, "decks": 0}), 422, "validation_error")


def test_a_recognizer_without_the_deck_reads_as_it_does() -> None:
    """A recognizer with no ``with_deck_in_play`` (a stand-in) is called as before."""
    plain = FakeReader(NIU_TABLE)
    with fake_client(plain) as client:
        assert _post_photo(client, "/v1/score", {}).status_code == 200
    assert plain.sizes == [(640, 480)]


def test_the_live_stream_reads_with_the_deck_in_play(client: TestClient, fake: InPlayFake) -> None:
    """The query's options set it (default: the profile's Niu Niu deck); an options message
    changes it from the next frame on; the answers name it."""
    with client.websocket_connect("/v1/live?decks=2") as socket:
        socket.send_bytes(image_bytes())
        socket.receive_json()
        socket.send_json({"profile": "classic"})
        assert socket.receive_json()["in_play"] == "niuniu: 2 decks of 52 cards"
        socket.send_json({"options": {"game": "any"}})
        assert socket.receive_json()["in_play"] is None
        socket.send_bytes(image_bytes())
        socket.receive_json()
    assert fake.decks == [Deck.standard(2), None]


def _live_aces(socket: Any, frames: int = 3) -> list[bool]:
    """The uncertain flags of the AS cards shown after ``frames`` frames (3 confirm a card)."""
    answer: dict[str, Any] = {}
    for _ in range(frames):
        socket.send_bytes(image_bytes())
        answer = socket.receive_json()
    return [card["uncertain"] for card in answer["cards"] if card["card"] == "AS"]


@pytest.mark.parametrize(
    ("query", "certain_aces", "why"),
    [
        ("", 1, "one deck: the second AS is shown uncertain"),
        ("?decks=2", 2, "two decks hold two AS"),
        ("?game=any", 2, "no deck in play: the cards are shown as tracked"),
    ],
)
def test_the_live_stream_shows_the_cards_decoded_under_the_deck_in_play(
    query: str, certain_aces: int, why: str
) -> None:
    # the second hand's last card is read as AS, like the first hand's first card
    duplicated = FakeReader({NO_NIU: (0.4, 0.05), "KS QS 10S 5C AS": (0.1, 0.6)})
    with fake_client(duplicated) as client, client.websocket_connect(f"/v1/live{query}") as socket:
        aces = _live_aces(socket)
    assert len(aces) == 2 and aces.count(False) == certain_aces, why


def test_a_live_options_message_changes_the_deck_the_cards_shown_are_decoded_under() -> None:
    duplicated = FakeReader({NO_NIU: (0.4, 0.05), "KS QS 10S 5C AS": (0.1, 0.6)})
    with fake_client(duplicated) as client, client.websocket_connect("/v1/live") as socket:
        assert _live_aces(socket).count(False) == 1
        socket.send_json({"options": {"decks": 2}})
        assert socket.receive_json()["in_play"] == "niuniu: 2 decks of 52 cards"
        assert _live_aces(socket).count(False) == 2


class LettersFake(InPlayFake):
    """:class:`InPlayFake` that also records the index letters of each read
    (``with_indices``)."""

    def __init__(self) -> None:
        super().__init__()
        self.letters: list[str | None] = []
        self.indices: str | None = None

    def with_indices(self, indices: str) -> LettersFake:
        copy: LettersFake = self.copied(indices=indices)
        return copy

    def read(self, image_bgr: NDArray[np.uint8]) -> Reading:
        self.letters.append(self.indices)
        return super().read(image_bgr)


@pytest.mark.parametrize(
    ("path", "options", "expected"),
    [
        ("/v1/read", {}, None),
        ("/v1/read", {"indices": "french"}, "french"),
        ("/v1/score", {"indices": "Dutch"}, "Dutch"),
        ("/v1/pits", {"indices": "german"}, "german"),
        ("/v1/baccarat", {"indices": "russian"}, "russian"),
        ("/v1/annotated", {"indices": "english"}, "english"),
    ],
)
def test_each_endpoint_reads_with_the_decks_index_letters(
    path: str, options: dict[str, Any], expected: str | None
) -> None:
    fake = LettersFake()
    with fake_client(fake) as client:
        response = _post_photo(client, path, options)
    assert response.status_code == 200, response.text
    assert fake.letters == [expected]


@pytest.mark.parametrize(
    ("options", "status", "code", "text"),
    [
        ({"indices": "klingon"}, 400, "bad_options", "unknown index letters 'klingon'"),
        ({"indices": 3}, 422, "validation_error", "indices"),
    ],
)
def test_unknown_index_letters_are_refused(
    options: dict[str, Any], status: int, code: str, text: str
) -> None:
    fake = LettersFake()
    with fake_client(fake) as client:
        message = error_message(_post_photo(client, "/v1/score", options), status, code)
    assert text in message
    assert fake.letters == []


def test_the_live_stream_reads_the_index_letters_of_its_options() -> None:
    fake = LettersFake()
    with fake_client(fake) as client, client.websocket_connect("/v1/live?indices=french") as socket:
        socket.send_bytes(image_bytes())
        socket.receive_json()
        socket.send_json({"options": {"indices": "dutch"}})
        socket.receive_json()
        socket.send_bytes(image_bytes())
        socket.receive_json()
        socket.send_json({"options": {"indices": "klingon"}})
        assert "unknown index letters" in socket.receive_json()["error"]["message"]
        socket.send_bytes(image_bytes())  # the letters in use are kept
        socket.receive_json()
    assert fake.letters == ["french", "dutch", "dutch"]
