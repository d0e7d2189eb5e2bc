"""Poker hand ranking for Pai Gow Poker: five-card high hands and two-card low hands.

Ranks run 2 < 3 < .. < K < A. A five-card hand falls in one :class:`PokerCategory`; within a
category the hands are ordered by a tie-break tuple of rank values (2 .. 14, ace = 14), most
significant first. :class:`PokerHand` compares on ``(category, tiebreak)`` only, so the best of
several hands is ``max(hands)`` and two hands of equal strength (a "copy") compare equal.

The joker (either ``JB`` or ``JR``; Pai Gow Poker uses one) is the "bug": it counts as an ace, or
as whatever card completes a straight, a flush or a straight flush, whichever ranks the hand
higher. In a flush that is not a straight flush it takes the highest rank the flush lacks. With
four aces it makes five aces, the highest hand. In a two-card hand it is always an ace.

Where the wheel A-2-3-4-5 ranks is a rules choice (:class:`WheelRank`): second-highest straight
(below A-K-Q-J-10, above K-Q-J-10-9), as in most Pai Gow houses, or the lowest straight.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rules.cards import AnyCard, Card, Rank
from rules.errors import HandError

__all__ = [
    "PokerCategory",
    "PokerHand",
    "WheelRank",
    "evaluate_five",
    "evaluate_two",
    "poker_value",
]

ACE_VALUE = 14
"""The value of an ace (and of the joker counted as an ace) in poker order."""


class PokerCategory(enum.IntEnum):
    """Hand categories, weakest first; a two-card hand is only HIGH_CARD or PAIR."""

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8
    FIVE_ACES = 9

    @property
    def label(self) -> str:
        """Lower-case words: ``"two pair"``, ``"straight flush"``."""
        return self.name.lower().replace("_", " ")


class WheelRank(enum.Enum):
    """Where A-2-3-4-5 ranks among straights (and straight flushes)."""

    SECOND_HIGHEST = "second-highest"
    LOWEST = "lowest"


_VALUE_NAMES = {
    2: "2",
    3: "3",
    4: "4",
    5: "5",
    6: "6",
    7: "7",
    8: "8",
    9: "9",
    10: "10",
    11: "J",
    12: "Q",
    13: "K",
    14: "A",
}

_VALUE_PLURALS = {value: f"{name}s" for value, name in _VALUE_NAMES.items()} | {
    11: "jacks",
    12: "queens",
    13: "kings",
    14: "aces",
}

_WHEEL_TOP = 5
"""The top of the wheel A-2-3-4-5 when the ace plays low."""

# Straights named by their top card, weakest first; the tie-break of a straight is its index.
_STRAIGHT_ORDER: dict[WheelRank, tuple[int, ...]] = {
    WheelRank.LOWEST: (5, 6, 7, 8, 9, 10, 11, 12, 13, 14),
    WheelRank.SECOND_HIGHEST: (6, 7, 8, 9, 10, 11, 12, 13, 5, 14),
}
_STRAIGHT_INDEX = {
    wheel: {top: index for index, top in enumerate(order)}
    for wheel, order in _STRAIGHT_ORDER.items()
}


def _window(top: int) -> frozenset[int]:
    """The five rank values of the straight whose top card is ``top`` (5 = the wheel)."""
    if top == _WHEEL_TOP:
        return frozenset((ACE_VALUE, 2, 3, 4, 5))
    return frozenset(range(top - 4, top + 1))


_WINDOWS = {top: _window(top) for top in range(5, 15)}
_WHEEL_VALUES = (ACE_VALUE, 5, 4, 3, 2)


def poker_value(rank: Rank) -> int:
    """The rank's value in poker order: 2..13 for 2..K, 14 for the ace."""
    return ACE_VALUE if rank is Rank.ACE else int(rank)


_POKER_VALUES = {rank: poker_value(rank) for rank in Rank}


@dataclass(frozen=True, slots=True, order=True)
class PokerHand:
    """A ranked hand: ordered by ``(category, tiebreak)``; ``cards`` do not take part.

    ``tiebreak`` holds rank values (2..14) most significant first: the pair then the kickers,
    the two pairs then the kicker, the five ranks of a flush; for a straight or straight flush
    it holds the straight's position in the straight order of the rules (see ``WheelRank``), not
    a rank. A two-card hand is HIGH_CARD ``(high, low)`` or PAIR ``(rank,)``. Comparing a five-card
    hand with a two-card hand uses the same key, so with equal category and equal leading values
    the five-card hand, which has more cards, ranks higher (a split pair is legal in Pai Gow).
    """

    category: PokerCategory
    tiebreak: tuple[int, ...]
    cards: tuple[AnyCard, ...] = field(compare=False)
    top: int = field(compare=False, default=0)
    """Top card value of a straight or straight flush (5 for the wheel); 0 otherwise."""

    @property
    def description(self) -> str:
        """Words for people: ``"pair of 8s"``, ``"straight, 5 high"``, ``"royal flush"``."""
        category = self.category
        if category in (PokerCategory.STRAIGHT, PokerCategory.STRAIGHT_FLUSH):
            # (a straight's tiebreak is its position among straights, not a rank: 0 for the
            # lowest, which names no card)
            if category is PokerCategory.STRAIGHT_FLUSH and self.top == ACE_VALUE:
                return "royal flush"
            return f"{category.label}, {_VALUE_NAMES[self.top]} high"
        values = [_VALUE_PLURALS[value] for value in self.tiebreak]
        if category is PokerCategory.FIVE_ACES:
            return "five aces"
        if category is PokerCategory.PAIR:
            return f"pair of {values[0]}"
        if category is PokerCategory.TWO_PAIR:
            return f"two pair, {values[0]} and {values[1]}"
        if category is PokerCategory.THREE_OF_A_KIND:
            return f"three {values[0]}"
        if category is PokerCategory.FULL_HOUSE:
            return f"full house, {values[0]} over {values[1]}"
        if category is PokerCategory.FOUR_OF_A_KIND:
            return f"four {values[0]}"
        return f"{category.label}, {_VALUE_NAMES[self.tiebreak[0]]} high"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form: cards as notation, category name, description."""
        return {
            "cards": [str(card) for card in self.cards],
            "category": self.category.name.lower(),
            "description": self.description,
        }


def _check_count(cards: Sequence[AnyCard], count: int) -> tuple[AnyCard, ...]:
    cards = tuple(cards)
    if len(cards) != count:
        shown = " ".join(str(card) for card in cards)
        raise HandError(f"expected {count} cards, got {len(cards)}: {shown!r}")
    jokers = [card for card in cards if not isinstance(card, Card)]
    if len(jokers) > 1:
        raise HandError(f"at most one joker in Pai Gow Poker, got {' '.join(map(str, jokers))!r}")
    if len(set(cards)) != len(cards):
        seen: set[AnyCard] = set()
        for card in cards:
            if card in seen:
                raise HandError(f"duplicate card {card}: a single deck holds one")
            seen.add(card)
    return cards


def _group_key(values: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Rank values grouped by count: (counts descending, values in that order)."""
    counts: dict[int, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    groups = sorted([(count, value) for value, count in counts.items()], reverse=True)
    return tuple(count for count, _ in groups), tuple(value for _, value in groups)


_PATTERN_CATEGORY: dict[tuple[int, ...], PokerCategory] = {
    (5,): PokerCategory.FIVE_ACES,
    (4, 1): PokerCategory.FOUR_OF_A_KIND,
    (3, 2): PokerCategory.FULL_HOUSE,
    (3, 1, 1): PokerCategory.THREE_OF_A_KIND,
    (2, 2, 1): PokerCategory.TWO_PAIR,
    (2, 1, 1, 1): PokerCategory.PAIR,
    (1, 1, 1, 1, 1): PokerCategory.HIGH_CARD,
}


def _best_straight_top(values: frozenset[int], wheel: WheelRank) -> int | None:
    """The best straight top whose window holds every value, or None."""
    for top in reversed(_STRAIGHT_ORDER[wheel]):
        if values <= _WINDOWS[top]:
            return top
    return None


def _ranked(
    cards: tuple[AnyCard, ...], values: list[int], flush: bool, wheel: WheelRank
) -> PokerHand:
    """Rank five cards given their values (joker already replaced) and whether they are suited."""
    counts, ordered = _group_key(values)
    category = _PATTERN_CATEGORY[counts]
    if category is PokerCategory.HIGH_CARD:
        # Five distinct values: a straight spans four, or is the wheel.
        top = ordered[0] if ordered[0] - ordered[4] == 4 else None
        if ordered == _WHEEL_VALUES:
            top = _WHEEL_TOP
        if top is not None:
            straight = PokerCategory.STRAIGHT_FLUSH if flush else PokerCategory.STRAIGHT
            return PokerHand(straight, (_STRAIGHT_INDEX[wheel][top],), cards, top)
        if flush:
            return PokerHand(PokerCategory.FLUSH, ordered, cards)
    return PokerHand(category, ordered, cards)


def evaluate_five(
    cards: Sequence[AnyCard], wheel: WheelRank = WheelRank.SECOND_HIGHEST
) -> PokerHand:
    """Rank a five-card hand (at most one joker, no duplicate card); raise HandError otherwise."""
    hand = _check_count(cards, 5)
    naturals = [card for card in hand if isinstance(card, Card)]
    values = [_POKER_VALUES[card.rank] for card in naturals]
    suited = len({card.suit for card in naturals}) == 1
    if len(naturals) == 5:
        return _ranked(hand, values, suited, wheel)
    # The joker: an ace, or the card that completes a straight, flush or straight flush.
    candidates = [_ranked(hand, [*values, ACE_VALUE], False, wheel)]
    distinct = frozenset(values)
    if len(distinct) == 4:
        top = _best_straight_top(distinct, wheel)
        if top is not None:
            straight = PokerCategory.STRAIGHT_FLUSH if suited else PokerCategory.STRAIGHT
            candidates.append(PokerHand(straight, (_STRAIGHT_INDEX[wheel][top],), hand, top))
    if suited:
        missing = max(value for value in range(2, ACE_VALUE + 1) if value not in distinct)
        flush_values = tuple(sorted([*values, missing], reverse=True))
        candidates.append(PokerHand(PokerCategory.FLUSH, flush_values, hand))
    return max(candidates)


def evaluate_two(cards: Sequence[AnyCard]) -> PokerHand:
    """Rank a two-card hand: a pair or two high cards; the joker is an ace."""
    hand = _check_count(cards, 2)
    values = sorted(
        (poker_value(card.rank) if isinstance(card, Card) else ACE_VALUE for card in hand),
        reverse=True,
    )
    if values[0] == values[1]:
        return PokerHand(PokerCategory.PAIR, (values[0],), hand)
    return PokerHand(PokerCategory.HIGH_CARD, (values[0], values[1]), hand)
