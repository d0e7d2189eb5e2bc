"""One card whose two corners read as twins (10C and 10S) in a group of one card too many is one
uncertain card naming both readings, never two cards (``handreader.tables.grouping``)."""

from __future__ import annotations

import pytest

from handreader.tables.grouping import (
    cards_read_twice,
    group_cards,
    one_card_read_twice,
    twin_codes,
)
from handreader.tables.scoring import HandStatus, Role, score_reading
from vision.detections import CardReading, Reading

NIU_4 = "3H 7S KD 8C 6D"  # Niu 4
NO_NIU = "AS 2S 3S 4S 8S"


def _hand(codes: str, x: float, y: float, confidence: float = 0.97) -> list[CardReading]:
    """A spread hand of index boxes 24 x 40 px, 30 px apart, from (x, y), read as the reader
    reads them (each card knows its index's size)."""
    return [
        CardReading(code, confidence, (x + 30 * i, y, x + 30 * i + 24, y + 40), index_px=40.0)
        for i, code in enumerate(codes.split())
    ]


def _at(code: str, x: float, y: float, confidence: float = 0.9, **more: object) -> CardReading:
    more.setdefault("index_px", 40.0)
    return CardReading(code, confidence, (x, y, x + 24, y + 40), **more)  # type: ignore[arg-type]


# the 6D of a hand from (20, 400) has its index at (140, 400); one card's other corner lies
# down and across from it: 1.5 and 2.2 index heights away (2.7 in all)
OTHER_CORNER = (200.0, 488.0)


@pytest.mark.parametrize(
    ("first", "second", "twins"),
    [
        ("10C", "10S", True),
        ("7H", "7D", True),
        ("9D", "6H", True),
        ("6S", "9C", True),
        ("6D", "9D", True),
        ("10C", "10H", False),  # another colour
        ("6C", "9H", False),
        ("KC", "QC", False),
        ("10C", "10C", False),
        ("JB", "JR", False),
    ],
)
def test_twin_codes(first: str, second: str, twins: bool) -> None:
    assert twin_codes(first, second) is twins
    assert twin_codes(second, first) is twins


def test_a_hands_card_read_again_at_its_other_corner_is_one_uncertain_card() -> None:
    cards = [*_hand(NIU_4, 20, 400), _at("9H", *OTHER_CORNER)]
    (group,) = group_cards(cards)
    assert len(group.cards) == 6  # the other corner lies on the hand
    fused = one_card_read_twice(group.cards, 5)
    assert [card.code for card in fused] == ["3H", "7S", "KD", "8C", "6D"]
    card = fused[4]
    assert card.uncertain and card.corners == 2
    assert card.other_corners == ("9H",)
    assert card.alternatives[0] == ("9H", 0.9)
    assert card.box_xyxy == (140.0, 400.0, 224.0, 528.0)


def test_the_hand_is_whole_but_unverified_and_settles_nobody() -> None:
    reading = Reading(
        (1000, 800),
        (*_hand(NO_NIU, 400, 20), *_hand(NIU_4, 20, 400), _at("9H", *OTHER_CORNER)),
    )
    result = score_reading(reading)
    banker, player = result.hands
    assert banker.role is Role.BANKER and banker.status is HandStatus.SCORED
    assert player.status is HandStatus.UNCERTAIN and len(player.cards) == 5
    assert player.hand is not None and player.hand.label == "Niu 4"  # provisional
    assert player.problem == (
        "unverified: uncertain reading of 6D? (0.97, 9H at another corner); "
        "the score is provisional"
    )
    assert result.players[0].outcome is None and result.banker_net is None
    shown = result.to_dict()["hands"][1]["cards"]  # type: ignore[index]
    doubted = [card for card in shown if card["uncertain"]]
    assert [(card["card"], card["other_corners"]) for card in doubted] == [("6D", ["9H"])]


def test_the_surer_reading_names_the_card() -> None:
    cards = [*_hand(NIU_4, 20, 400, confidence=0.8), _at("9H", *OTHER_CORNER, confidence=0.99)]
    fused = one_card_read_twice(cards, 5)
    assert [card.code for card in fused if card.uncertain] == ["9H"]
    assert [card.other_corners for card in fused if card.uncertain] == [("6D",)]


def test_a_group_of_a_hands_size_is_left_alone() -> None:
    cards = [*_hand("3H 7S KD 8C", 50, 400), _at("8S", *OTHER_CORNER)]
    assert one_card_read_twice(cards, 5) == tuple(cards)


@pytest.mark.parametrize(
    ("sixth", "why"),
    [
        (_at("6H", 170, 400), "side by side, as a row's next card lies"),
        (_at("9H", 140, 640), "farther than a card's corners"),
        (_at("9H", *OTHER_CORNER, uncertain=True), "an uncertain reading"),
        (_at("9H", *OTHER_CORNER, corners=2), "read at two corners already"),
        (_at("6C", *OTHER_CORNER), "no twin of any card"),
    ],
)
def test_other_sixth_cards_keep_the_group_too_many(sixth: CardReading, why: str) -> None:
    cards = [*_hand(NIU_4, 20, 400), sixth]
    assert one_card_read_twice(cards, 5) == tuple(cards), why


def test_two_possible_pairs_decide_nothing() -> None:
    # the sixth card lies where the other corner of either the 9D or the 6D would
    cards = [*_hand("3H 9D KD 8C 6D", 20, 400), _at("6H", *OTHER_CORNER)]
    assert one_card_read_twice(cards, 5) == tuple(cards)
    result = score_reading(Reading((1000, 800), tuple(cards)))
    assert result.hands[0].status is HandStatus.TOO_MANY


# the other corner 4 index heights away, down and across: the grouping cuts it off the hand
FAR_CORNER = (140.0 + 131.0, 400.0 + 92.0)


def test_a_hands_other_corner_cut_off_as_a_stray_card_joins_its_card() -> None:
    cards = [*_hand(NO_NIU, 400, 20), *_hand(NIU_4, 20, 400), _at("9H", *FAR_CORNER)]
    groups = group_cards(cards)
    assert sorted(len(group.cards) for group in groups) == [1, 5, 5]  # a seat of one card
    joined = cards_read_twice(groups, 5)
    assert sorted(len(group.cards) for group in joined) == [5, 5]
    (card,) = [card for group in joined for card in group.cards if card.uncertain]
    assert (card.code, card.other_corners) == ("6D", ("9H",))
    result = score_reading(Reading((1000, 800), tuple(cards)))
    assert [hand.status for hand in result.hands] == [HandStatus.SCORED, HandStatus.UNCERTAIN]
    assert result.hands[result.banker or 0].role is Role.BANKER
    assert result.players[0].outcome is None  # nobody settled on the doubtful card


@pytest.mark.parametrize(
    ("codes", "lone"),
    [
        (NIU_4, _at("6C", *FAR_CORNER)),  # no twin of any card
        (NIU_4, _at("9H", *FAR_CORNER, uncertain=True)),  # set aside, not a seat
        (NIU_4, _at("9H", 330, 400)),  # side by side with the row, not across
        ("7S KD 8C 6D", _at("9H", *FAR_CORNER)),  # it makes the hand: two cards
    ],
)
def test_other_stray_cards_stay_as_they_are(codes: str, lone: CardReading) -> None:
    last = len(codes.split()) - 1  # the row ends with its 6D at (140, 400)
    cards = [*_hand(codes, 140 - 30 * last, 400), lone]
    groups = [group for group in group_cards(cards) if not group.set_aside]
    assert cards_read_twice(groups, 5) == groups


def test_a_stray_card_twin_of_cards_of_two_hands_joins_neither() -> None:
    # the 9H lies where the other corner of the left hand's 6D or the right hand's 9D would
    cards = [*_hand(NIU_4, 20, 400), *_hand("9D AS 2S 3S 4S", 402, 584), _at("9H", *FAR_CORNER)]
    groups = [group for group in group_cards(cards) if not group.set_aside]
    assert sorted(len(group.cards) for group in groups) == [1, 5, 5]
    assert cards_read_twice(groups, 5) == groups
