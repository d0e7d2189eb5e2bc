"""Grouping the cards of a photo into hands (handreader/tables/grouping.py).

Expectations come from the module's documented rule (cards' bodies linked at ``link_factor``
card widths; oversized groups split at their longest link that leaves whole hands; two groups
too small for a hand that make one together joined; regions by box centre), from the fan of
``tests/fan_scene.py`` (a hand of five held in a fan, scored Niu 7 by seed 002's rule) and from
invariants of any geometric rule: the result does not depend on the order of the cards, nor on
moving or scaling the whole photo.
"""

from __future__ import annotations

import math

import pytest
from fan_scene import FAN_HAND, SIZE_WH, fan_layout, fan_reading
from hypothesis import given, settings
from hypothesis import strategies as st

from handreader.tables.grouping import (
    CardGroup,
    GroupingError,
    Region,
    assign_regions,
    card_body,
    card_distances,
    card_width,
    distance_scale,
    group_cards,
    reading_order,
)
from vision.detections import CardReading

INDEX = 40.0  # index box height in pixels
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
CODES = [rank + suit for suit in "SHD" for rank in RANKS]


def _card(code: str, x: float, y: float, size: float = INDEX) -> CardReading:
    """A card whose index box (size x 0.6 size) has its top-left corner at x, y."""
    return CardReading(code, 0.95, (x, y, x + 0.6 * size, y + size))


def _row(
    codes: list[str], x: float, y: float, step: float = 30.0, angle: float = 0.0,
    size: float = INDEX,
) -> list[CardReading]:  # fmt: skip
    """A spread hand: cards ``step`` pixels apart along ``angle`` (degrees)."""
    dx, dy = math.cos(math.radians(angle)) * step, math.sin(math.radians(angle)) * step
    return [_card(code, x + i * dx, y + i * dy, size) for i, code in enumerate(codes)]


def _codes(groups: tuple[CardGroup, ...]) -> list[list[str]]:
    return [[card.code for card in group.cards] for group in groups]


def test_scale_is_the_median_longer_side() -> None:
    cards = [_card("AS", 0, 0, 10), _card("2S", 0, 0, 40), _card("3S", 0, 0, 100)]
    assert distance_scale(cards) == 40
    assert distance_scale([]) == 1.0


def test_a_card_read_at_one_index_is_a_card_width_square_about_it() -> None:
    card = CardReading("AS", 0.9, (100, 100, 112, 120), index_px=20)
    assert card_width(card) == 50  # 2.5 index heights (CARD_WIDTH_PER_INDEX)
    assert card_body(card) == (81, 85, 131, 135)
    # read at two corners: the box runs across the card and is its body
    whole = CardReading("AS", 0.9, (100, 100, 170, 200), corners=2, index_px=20)
    assert card_body(whole) == (100, 100, 170, 200)


def test_distances_count_the_gap_between_bodies_in_card_widths() -> None:
    left = CardReading("AS", 0.9, (0, 0, 12, 20), index_px=20)
    right = CardReading("2S", 0.9, (100, 0, 112, 20), index_px=20)
    overlapping = CardReading("3S", 0.9, (30, 0, 42, 20), index_px=20)
    distances = card_distances([left, right, overlapping])
    assert distances[0, 1] == pytest.approx(2.0)  # centres 100 px apart: 2 card widths
    assert distances[0, 2] == 1.0  # bodies overlap: no gap
    assert distances[0, 0] == 0.0


def test_a_fanned_hand_is_one_hand() -> None:
    # The top card of the fan is read at two corners: its box runs across the card, and its
    # centre lies more than two index sizes from its neighbour's index (two box sizes was the
    # link distance when tracked cards came without their index size); its body touches it.
    reading = fan_reading(fan_layout(), SIZE_WH)
    top = next(card for card in reading.cards if card.corners == 2)
    neighbour = next(card for card in reading.cards if card.code == FAN_HAND[-2])
    assert math.dist(top.center_xy, neighbour.center_xy) > 2 * neighbour.index_px
    assert card_distances([top, neighbour])[0, 1] == 1.0  # the bodies overlap
    assert _codes(group_cards(reading.cards)) == [sorted_codes(reading.cards)]


def sorted_codes(cards: tuple[CardReading, ...]) -> list[str]:
    return [card.code for card in sorted(cards, key=lambda card: card.center_xy)]


@pytest.mark.parametrize("step", [6.0, 9.0, 12.0, 15.0])
@pytest.mark.parametrize("turn", [-60.0, 0.0, 35.0, 90.0])
def test_fans_of_any_spread_and_turn_are_one_hand(step: float, turn: float) -> None:
    layout = fan_layout(step_degrees=step, base_degrees=turn, pivot=(0.5, 0.5), card_height=0.3)
    reading = fan_reading(layout, SIZE_WH)
    assert len(group_cards(reading.cards)) == 1


def test_two_fans_side_by_side_are_two_hands() -> None:
    codes = ("AH", "2H", "3H", "4H", "5H")
    left = fan_reading(fan_layout(pivot=(0.25, 0.8), card_height=0.3), SIZE_WH).cards
    right = fan_reading(fan_layout(codes=codes, pivot=(0.75, 0.8), card_height=0.3), SIZE_WH)
    groups = group_cards([*left, *right.cards])
    assert [len(group.cards) for group in groups] == [5, 5]
    assert {card.code for card in groups[1].cards} == set(codes)


def test_near_cards_are_measured_by_their_own_size() -> None:
    # A table seen at a slant: the near hand's indices are twice the far hand's, and so are
    # its gaps; one scale for the whole photo would split the near hand or join the far one.
    far = _row(CODES[:5], 0, 0, step=30, size=40)
    near = _row(CODES[5:10], 0, 400, step=60, size=80)
    assert _codes(group_cards([*far, *near])) == [CODES[:5], CODES[5:10]]


def test_two_pieces_that_make_one_hand_are_joined() -> None:
    # 4 cards and 1 card 110 px on (over the 80 px link, within 1.5 times it): one hand
    cards = [*_row(CODES[:4], 0, 0), _card(CODES[4], 3 * 30 + 110, 0)]
    assert _codes(group_cards(cards)) == [CODES[:5]]


def test_pieces_that_make_no_hand_together_stay_apart() -> None:
    # 2 + 2 at the same gap: four cards are no hand either, so nothing is joined
    cards = [*_row(CODES[:2], 0, 0), *_row(CODES[2:4], 30 + 110, 0)]
    assert _codes(group_cards(cards)) == [CODES[:2], CODES[2:4]]
    # 4 + 1 too far apart (200 px: over 1.5 x 80 px)
    cards = [*_row(CODES[:4], 0, 0), _card(CODES[4], 3 * 30 + 200, 0)]
    assert _codes(group_cards(cards)) == [CODES[:4], [CODES[4]]]


def test_the_nearest_pieces_are_joined_first() -> None:
    # 4 cards with a single card on each side, 100 px and 110 px away: the nearer one joins
    cards = [_card("KD", -100, 0), *_row(CODES[:4], 0, 0), _card("QD", 3 * 30 + 110, 0)]
    assert _codes(group_cards(cards)) == [["KD", *CODES[:4]], ["QD"]]


def test_one_hand_of_five() -> None:
    cards = _row(CODES[:5], 100, 100)
    assert _codes(group_cards(cards)) == [CODES[:5]]


def test_banker_and_six_players_spread() -> None:
    # A table laid out as the synthetic "table" layout: banker on top, players in 2 rows of 3.
    banker = _row(CODES[:5], 400, 40)
    players = []
    for seat in range(6):
        column, row = seat % 3, seat // 3
        codes = CODES[5 + 5 * seat : 10 + 5 * seat]
        players.append(_row(codes, 60 + 330 * column, 300 + 200 * row, angle=10 * (seat - 3)))
    cards = banker + [card for hand in players for card in hand]
    groups = group_cards(cards)
    # reading order: the banker's row first, then each row left to right
    assert _codes(groups) == [CODES[:5]] + [CODES[5 + 5 * s : 10 + 5 * s] for s in range(6)]


def test_two_touching_hands_split_at_the_link_between_them() -> None:
    # Two rows whose ends lie 70 px apart: within the link distance (2 x 40 = 80 px), so one
    # cluster of 10; the 70 px link is longer than every 30 px link inside the hands.
    first = _row(CODES[:5], 0, 0)
    second = _row(CODES[5:10], 4 * 30 + 70, 0)
    assert _codes(group_cards(first + second)) == [CODES[:5], CODES[5:10]]


def test_a_stray_card_beside_a_hand_is_its_own_group() -> None:
    cards = [*_row(CODES[:5], 0, 0), _card("KD", 4 * 30 + 60, 0)]
    groups = group_cards(cards)
    assert sorted(map(len, (g.cards for g in groups))) == [1, 5]


def _unsure(code: str, x: float, y: float) -> CardReading:
    return CardReading(code, 0.36, (x, y, x + 0.6 * INDEX, y + INDEX), uncertain=True)


def test_an_uncertain_sixth_card_is_set_aside_not_a_real_one() -> None:
    """Five certain cards and an uncertain reading inside the hand (a picture read as an
    index): the hand stays whole; the uncertain card is a set-aside group, whatever the links
    (plain splitting would cut off the end card at the hand's longest link)."""
    cards = [*_row(CODES[:4], 0, 0), _card(CODES[4], 3 * 30 + 70, 0), _unsure("JH", 45, 10)]
    groups = group_cards(cards)
    hands = [g for g in groups if not g.set_aside]
    aside = [g for g in groups if g.set_aside]
    assert _codes(hands) == [CODES[:5]]
    assert [[c.code for c in g.cards] for g in aside] == [["JH"]]


def test_uncertain_cards_in_a_full_group_stay_when_the_certain_ones_are_no_hand() -> None:
    """Four certain and two uncertain cards: the certain ones are no whole hand, so nothing is
    set aside (two uncertain readings of a real hand are still its cards)."""
    cards = [*_row(CODES[:4], 0, 0), _unsure("JH", 4 * 30, 0), _unsure("QH", 5 * 30, 0)]
    groups = group_cards(cards)
    assert not any(g.set_aside for g in groups)
    assert sum(len(g.cards) for g in groups) == 6


def test_certain_cards_linked_only_through_an_uncertain_one_stay_apart() -> None:
    """Four certain cards and a fifth 150 px away (over the 80 px link distance), linked into
    one cluster only by an uncertain card between them: the uncertain card is set aside, and
    without it the far card is no longer linked to the others."""
    hand = _row(CODES[:4], 0, 0)
    far = _card(CODES[4], 3 * 30 + 150, 0)
    bridge = _unsure("JH", 3 * 30 + 75, 0)
    groups = group_cards([*hand, far, bridge])
    hands = sorted(([c.code for c in g.cards] for g in groups if not g.set_aside), key=len)
    assert hands == [[CODES[4]], CODES[:4]]
    assert [[c.code for c in g.cards] for g in groups if g.set_aside] == [["JH"]]


def test_evenly_spread_cards_are_not_forced_into_a_hand() -> None:
    # Seven cards equally spaced: no link is longer than the typical one, so no split.
    cards = _row(CODES[:7], 0, 0)
    assert _codes(group_cards(cards)) == [CODES[:7]]


def test_far_apart_groups_stay_apart_whatever_their_size() -> None:
    cards = _row(CODES[:3], 0, 0) + _row(CODES[3:5], 600, 0) + _row(CODES[5:9], 0, 600)
    assert _codes(group_cards(cards)) == [CODES[:3], CODES[3:5], CODES[5:9]]


def test_link_factor_decides_what_touches() -> None:
    cards = _row(CODES[:5], 0, 0) + _row(CODES[5:10], 4 * 30 + 100, 0)
    assert len(group_cards(cards, link_factor=2.0)) == 2  # a 100 px gap: over 80 px
    assert len(group_cards(cards, link_factor=3.0)) == 2  # one cluster of 10, split at the gap
    assert len(group_cards(cards, link_factor=0.5)) == 10  # 30 px steps: over 20 px


@pytest.mark.parametrize("factor", [0.0, -1.0, 101.0, math.nan, math.inf])
def test_bad_link_factor(factor: float) -> None:
    with pytest.raises(GroupingError, match="link factor"):
        group_cards(_row(CODES[:5], 0, 0), link_factor=factor)


def test_no_cards_no_groups() -> None:
    assert group_cards([]) == ()
    assert reading_order([]) == ()


def _table() -> list[CardReading]:
    banker = _row(CODES[:5], 400, 40)
    left = _row(CODES[5:10], 50, 400, angle=-20)
    right = _row(CODES[10:15], 600, 380, angle=15)
    stray = [_card("QD", 900, 700)]
    return banker + left + right + stray


@settings(max_examples=60, deadline=None)
@given(st.permutations(list(range(16))))
def test_card_order_never_changes_the_groups(order: list[int]) -> None:
    cards = _table()
    shuffled = [cards[i] for i in order]
    assert _codes(group_cards(shuffled)) == _codes(group_cards(cards))


@settings(max_examples=60, deadline=None)
@given(st.floats(0.25, 8.0), st.floats(-500, 500), st.floats(-500, 500))
def test_moving_or_scaling_the_photo_never_changes_the_groups(
    scale: float, dx: float, dy: float
) -> None:
    # The distance scale follows the boxes, so no pixel constant is involved.
    cards = _table()
    moved = [
        CardReading(
            card.code,
            card.confidence,
            tuple(  # type: ignore[arg-type]
                value * scale + (dx if i % 2 == 0 else dy) for i, value in enumerate(card.box_xyxy)
            ),
        )
        for card in cards
    ]
    assert _codes(group_cards(moved)) == _codes(group_cards(cards))


def test_group_box_and_centre() -> None:
    group = CardGroup(tuple(_row(CODES[:2], 10, 20)))
    assert group.box_xyxy == (10, 20, 40 + 0.6 * INDEX, 20 + INDEX)
    assert group.center_xy == pytest.approx((10 + 15 + 0.3 * INDEX, 20 + INDEX / 2))
    assert CardGroup(()).box_xyxy == (0, 0, 0, 0)


# --- regions -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "fractional", "pixels"),
    [
        ([0, 0, 1, 0.5], True, (0, 0, 800, 300)),
        ([0.25, 0.5, 0.75, 1], True, (200, 300, 600, 600)),
        ([10, 20, 300, 400], False, (10, 20, 300, 400)),
        ([0, 0, 2, 1], False, (0, 0, 2, 1)),  # a number above 1: pixels
    ],
)
def test_region_units(values: list[float], fractional: bool, pixels: tuple[float, ...]) -> None:
    region = Region.parse(values)
    assert region.fractional is fractional
    assert region.pixels((800, 600)) == pixels
    assert region.to_list() == values


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ([0, 0, 1], "4 numbers"),
        ([0, 0, 1, 1, 1], "4 numbers"),
        ([10, 10, 5, 20], "x1 < x2"),
        ([0, 0.5, 1, 0.5], "y1 < y2"),
        ([-1, 0, 5, 5], ">= 0"),
        ([0, 0, math.nan, 1], "finite"),
        (["a", 0, 1, 1], "4 numbers"),
    ],
)
def test_bad_regions(values: list[object], words: str) -> None:
    with pytest.raises(GroupingError, match=words):
        Region.parse(values)  # type: ignore[arg-type]


def test_fractional_region_must_stay_within_one() -> None:
    with pytest.raises(GroupingError, match=r"within 0\.\.1"):
        Region(0, 0, 2, 1, fractional=True)


def test_cards_go_to_the_region_holding_their_centre() -> None:
    cards = _row(CODES[:5], 100, 50) + _row(CODES[5:10], 100, 450) + [_card("KD", 700, 300)]
    top, bottom = Region.parse([0, 0, 1, 0.4]), Region.parse([0, 0.6, 1, 1])
    groups, left_over = assign_regions(cards, [top, bottom], (800, 600))
    assert _codes(groups) == [CODES[:5], CODES[5:10]]
    assert [group.region for group in groups] == [0, 1]
    assert [card.code for card in left_over] == ["KD"]


def test_overlapping_regions_take_the_nearest_centre() -> None:
    card = _card("AS", 290, 90)  # centre (302, 110)
    wide, near = Region(0, 0, 600, 600), Region(200, 0, 400, 200)
    groups, left_over = assign_regions([card], [wide, near], (600, 600))
    assert [len(group.cards) for group in groups] == [0, 1]
    assert left_over == ()


def test_a_lone_uncertain_reading_is_set_aside_before_hands_are_formed() -> None:
    """A 0.27 reading far from every hand (a phone screen at the table's edge) is no seat."""
    cards = [*_row(CODES[:5], 0, 400), _unsure("KC", 600, 0)]
    groups = group_cards(cards)
    assert _codes([g for g in groups if not g.set_aside]) == [CODES[:5]]
    assert [[c.code for c in g.cards] for g in groups if g.set_aside] == [["KC"]]
    # two uncertain readings lying together are set aside alike
    pair = group_cards([*cards, _unsure("9H", 630, 0)])
    assert [sorted(c.code for c in g.cards) for g in pair if g.set_aside] == [["9H", "KC"]]
