"""Pai Gow Poker: setting seven cards into a high and a low hand, the house way, and settling.

The deck is 52 cards and one joker (the "bug", see :mod:`rules.poker_hands`). A player's seven
cards are set into a five-card *high* hand and a two-card *low* hand; the high hand must outrank
the low hand, otherwise the setting is a *foul* (:class:`~rules.errors.IllegalPlayError`).

Settling against the banker (RULES.md section 3): high against high and low against low; a copy
(equal hands) goes to the banker. Winning both is a win, paid even money less the commission
(5% by default); winning one is a push; losing both is a loss.

Rule variants are data: :class:`PaiGowRules` (where the wheel ranks, the commission rate, the
house way: a named :class:`~rules.paigow_ways.HouseWay`, Foxwoods by default).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from itertools import combinations
from typing import Any

from rules.cards import AnyCard, Card, Rank
from rules.errors import HandError, IllegalPlayError, ProfileError
from rules.money import ZERO, json_amount
from rules.paigow_ways import FOXWOODS, HouseWay
from rules.poker_hands import (
    ACE_VALUE,
    PokerCategory,
    PokerHand,
    WheelRank,
    evaluate_five,
    evaluate_two,
    poker_value,
)

__all__ = [
    "PaiGowOutcome",
    "PaiGowResult",
    "PaiGowRules",
    "PaiGowSetting",
    "house_way",
    "set_paigow_hand",
    "settle_paigow",
]


@dataclass(frozen=True, slots=True)
class PaiGowRules:
    """Rule options: where A-2-3-4-5 ranks (default second-highest), the commission on wins and
    the house way that sets the banker's hand (default Foxwoods; see :mod:`rules.paigow_ways`)."""

    wheel: WheelRank = WheelRank.SECOND_HIGHEST
    commission: Decimal = Decimal("0.05")
    house_way: HouseWay = FOXWOODS

    def __post_init__(self) -> None:
        if not Decimal(0) <= self.commission < Decimal(1):
            raise ProfileError(f"commission {self.commission} must lie in [0, 1)")


DEFAULT_RULES = PaiGowRules()


class PaiGowOutcome(enum.Enum):
    """The player's outcome against the banker."""

    WIN = "win"
    PUSH = "push"
    LOSE = "lose"


def _cards_text(cards: Sequence[AnyCard]) -> str:
    return " ".join(str(card) for card in cards)


@dataclass(frozen=True, slots=True)
class PaiGowSetting:
    """A legal setting: the five-card high hand outranks the two-card low hand."""

    high: PokerHand
    low: PokerHand

    @property
    def cards(self) -> tuple[AnyCard, ...]:
        """All seven cards, high hand first."""
        return self.high.cards + self.low.cards

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form: both hands."""
        return {"high": self.high.to_dict(), "low": self.low.to_dict()}


def _check_seven(cards: Sequence[AnyCard]) -> tuple[AnyCard, ...]:
    """Seven distinct cards of one deck with at most one joker."""
    hand = tuple(cards)
    if len(hand) != 7:
        raise HandError(f"expected 7 cards, got {len(hand)}: {_cards_text(hand)!r}")
    jokers = [card for card in hand if not isinstance(card, Card)]
    if len(jokers) > 1:
        raise HandError(f"at most one joker in Pai Gow Poker, got {_cards_text(jokers)!r}")
    seen: set[AnyCard] = set()
    for card in hand:
        if card in seen:
            raise HandError(f"duplicate card {card}: a single deck holds one")
        seen.add(card)
    return hand


def set_paigow_hand(
    high: Sequence[AnyCard], low: Sequence[AnyCard], rules: PaiGowRules = DEFAULT_RULES
) -> PaiGowSetting:
    """Check and rank a given setting.

    Raises HandError for bad cards (count, duplicates, two jokers) and IllegalPlayError for a
    foul (the low hand outranks the high hand).
    """
    for name, cards, count in (("high", high, 5), ("low", low, 2)):
        if len(cards) != count:
            raise HandError(
                f"the {name} hand takes {count} cards, got {len(cards)}: {_cards_text(cards)!r}"
            )
    _check_seven([*high, *low])
    high_hand = evaluate_five(high, rules.wheel)
    low_hand = evaluate_two(low)
    if not high_hand > low_hand:
        raise IllegalPlayError(
            f"foul: the low hand {_cards_text(low_hand.cards)} ({low_hand.description}) "
            f"outranks the high hand {_cards_text(high_hand.cards)} ({high_hand.description})"
        )
    return PaiGowSetting(high_hand, low_hand)


_KING_VALUE = poker_value(Rank.KING)


def _value(card: AnyCard) -> int:
    """Poker value with the joker counted as an ace (for the house way's pair patterns)."""
    return poker_value(card.rank) if isinstance(card, Card) else ACE_VALUE


def _sort_key(card: AnyCard) -> tuple[int, int, str]:
    """Highest value first; a natural card before the joker; then by notation (deterministic)."""
    return (-_value(card), 0 if isinstance(card, Card) else 1, str(card))


_STRAIGHTS_AND_FLUSHES = frozenset(
    (PokerCategory.STRAIGHT, PokerCategory.FLUSH, PokerCategory.STRAIGHT_FLUSH)
)


def _straight_or_flush_setting(
    hand: tuple[AnyCard, ...], rules: PaiGowRules
) -> PaiGowSetting | None:
    """The straight / flush / straight flush setting with the best low hand, if any exists."""
    best: tuple[PokerHand, PokerHand] | None = None
    for indexes in combinations(range(7), 5):
        high = evaluate_five([hand[index] for index in indexes], rules.wheel)
        if high.category not in _STRAIGHTS_AND_FLUSHES:
            continue
        low = evaluate_two([card for index, card in enumerate(hand) if index not in indexes])
        if best is None or (low, high) > best:
            best = (low, high)
    return None if best is None else PaiGowSetting(best[1], best[0])


@dataclass(frozen=True, slots=True)
class _Groups:
    """Seven cards grouped by value (the joker as an ace), each group highest card first.

    ``fives`` .. ``pairs`` hold groups of that size, highest value first; ``singles`` the
    cards of no pair, highest first; ``ordered`` all seven cards by :func:`_sort_key`.
    """

    ordered: tuple[AnyCard, ...]
    fives: tuple[tuple[AnyCard, ...], ...]
    fours: tuple[tuple[AnyCard, ...], ...]
    threes: tuple[tuple[AnyCard, ...], ...]
    pairs: tuple[tuple[AnyCard, ...], ...]
    singles: tuple[AnyCard, ...]

    @classmethod
    def of(cls, ordered: tuple[AnyCard, ...]) -> _Groups:
        groups: dict[int, list[AnyCard]] = {}
        for card in ordered:
            groups.setdefault(_value(card), []).append(card)
        by_size: dict[int, list[tuple[AnyCard, ...]]] = {size: [] for size in range(1, 6)}
        for cards in groups.values():  # values descending, so each list is highest first
            by_size[len(cards)].append(tuple(cards))
        return cls(
            ordered,
            tuple(by_size[5]),
            tuple(by_size[4]),
            tuple(by_size[3]),
            tuple(by_size[2]),
            tuple(cards[0] for cards in by_size[1]),
        )

    @property
    def best_single(self) -> int:
        """The value of the highest single (0 when there is none)."""
        return _value(self.singles[0]) if self.singles else 0

    def split(self, low: Sequence[AnyCard]) -> tuple[list[AnyCard], list[AnyCard]]:
        """High and low cards: ``low`` low, every other card high."""
        taken = set(low)
        return [card for card in self.ordered if card not in taken], list(low)


def _pattern_way(groups: _Groups, way: HouseWay) -> tuple[list[AnyCard], list[AnyCard]]:
    """High and low cards by the pair-pattern rules of :func:`house_way` (rules 2 to 11)."""
    fives, fours, threes, pairs, singles = (
        groups.fives,
        groups.fours,
        groups.threes,
        groups.pairs,
        groups.singles,
    )
    if fives:
        kings = [pair for pair in pairs if _value(pair[0]) == _KING_VALUE]
        return groups.split(kings[0] if kings else fives[0][:2])
    if fours:
        others = threes + pairs
        if others:
            return groups.split(others[0][:2])
        if way.keeps_four_of_a_kind(_value(fours[0][0]), groups.best_single):
            return groups.split(singles[:2])
        return groups.split(fours[0][2:])
    if len(threes) == 2:
        return groups.split(threes[0][:2])
    if threes and pairs:
        kickers = tuple(_value(card) for card in singles)
        if way.keeps_full_house(_value(pairs[0][0]), kickers):
            return groups.split(singles[:2])
        return groups.split(pairs[0])
    if threes:
        if _value(threes[0][0]) == ACE_VALUE:
            return groups.split([threes[0][2], singles[0]])
        return groups.split(singles[:2])
    if len(pairs) == 3:
        return groups.split(pairs[0])
    if len(pairs) == 2:
        higher, lower = (_value(pair[0]) for pair in pairs)
        if way.keeps_two_pair(higher, lower, groups.best_single):
            return groups.split(singles[:2])
        return groups.split(pairs[1])
    if pairs:
        return groups.split(singles[:2])
    return groups.split(singles[1:3])


def _straight_way(groups: _Groups, rules: PaiGowRules) -> PaiGowSetting | None:
    """The straight / flush rule (rule 1 of :func:`house_way`), or None when it does not apply:
    no straight or flush, or a pattern its own rule settles (two pair, a full house or more)."""
    many_pairs = len(groups.pairs) + len(groups.threes) >= 2
    if groups.fives or groups.fours or many_pairs:
        return None
    setting = _straight_or_flush_setting(groups.ordered, rules)
    if setting is None:
        return None
    exception = rules.house_way.pair_and_ace
    if (
        len(groups.pairs) == 1
        and _value(groups.pairs[0][0]) in exception.pairs
        and groups.best_single == ACE_VALUE
    ):
        one_pair = set_paigow_hand(*groups.split(groups.singles[:2]), rules)
        if not exception.only_if_better or one_pair.low > setting.low:
            return one_pair
    return setting


def house_way(cards: Sequence[AnyCard], rules: PaiGowRules = DEFAULT_RULES) -> PaiGowSetting:
    """Set seven cards by the house way of ``rules`` (default Foxwoods); always a legal setting.

    The rules shared by every named way, first that applies; *the way's* marks the points the
    :class:`~rules.paigow_ways.HouseWay` decides. Pair patterns count the joker as an ace.

    1. Straight, flush or straight flush with no pair, one pair or three of a kind: play it high,
       choosing the five cards that leave the best low hand (then the best high hand), so a pair
       goes low whenever the straight or flush survives. Exception (the way's ``pair_and_ace``):
       a pair of 10s to kings and an ace play the one-pair way (rule 10) instead, always or only
       when that gives a better low hand. With two pair the two-pair rule decides.
    2. Five aces: a pair of aces low, three aces high; with a pair of kings, the kings go low
       and the five aces stay high.
    3. Four of a kind with a pair or three of a kind: that pair (from the three of a kind: a
       pair of it) goes low.
    4. Four of a kind alone: kept high with the two highest singles low, or split into a pair in
       each hand, by the rank and the highest single (the way's ``four_of_a_kind``).
    5. Two three of a kinds: a pair of the higher goes low.
    6. Full house: the highest pair goes low, unless the way keeps that full house whole (the
       way's ``full_house_kept``: the singles go low).
    7. Three of a kind: stays high, the two highest singles low; three aces split: a pair of aces
       high, the third ace and the highest single low.
    8. Three pair: the highest pair goes low.
    9. Two pair: both pairs high with the two highest singles low, or split (the lower pair low),
       by the ranks of the pairs and the highest single (the way's ``two_pair``).
    10. One pair: the pair high, the two highest singles low.
    11. No pair: the highest card high, the second and third highest low.

    Ties among equal cards are broken by card notation, so the setting is deterministic.
    """
    hand = _check_seven(cards)
    groups = _Groups.of(tuple(sorted(hand, key=_sort_key)))
    setting = _straight_way(groups, rules)
    if setting is not None:
        return setting
    return set_paigow_hand(*_pattern_way(groups, rules.house_way), rules)


@dataclass(frozen=True, slots=True)
class PaiGowResult:
    """The player's setting against the banker's, and the net amount won (+) or lost (-)."""

    player: PaiGowSetting
    banker: PaiGowSetting
    high_won: bool
    low_won: bool
    outcome: PaiGowOutcome
    stake: Decimal
    net: Decimal

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form; money as numbers."""
        return {
            "player": self.player.to_dict(),
            "banker": self.banker.to_dict(),
            "high": "player" if self.high_won else "banker",
            "low": "player" if self.low_won else "banker",
            "outcome": self.outcome.value,
            "stake": json_amount(self.stake),
            "net": json_amount(self.net),
        }


def settle_paigow(
    player: PaiGowSetting,
    banker: PaiGowSetting,
    stake: Decimal | int = 1,
    rules: PaiGowRules = DEFAULT_RULES,
) -> PaiGowResult:
    """Settle the player's setting against the banker's; copies go to the banker.

    Win both: ``+stake * (1 - commission)``; win one: push (0); lose both: ``-stake``.
    Raises HandError when a card appears in both settings or the stake is not positive.
    """
    stake = Decimal(stake)
    if not stake > 0:
        raise HandError(f"stake {stake} must be positive")
    _check_distinct_settings(player, banker)
    high_won = player.high > banker.high
    low_won = player.low > banker.low
    if high_won and low_won:
        outcome, net = PaiGowOutcome.WIN, stake * (1 - rules.commission)
    elif high_won or low_won:
        outcome, net = PaiGowOutcome.PUSH, ZERO
    else:
        outcome, net = PaiGowOutcome.LOSE, -stake
    return PaiGowResult(player, banker, high_won, low_won, outcome, stake, net)


def _check_distinct_settings(player: PaiGowSetting, banker: PaiGowSetting) -> None:
    """One deck and one joker between the two players."""
    cards = player.cards + banker.cards
    shared = sorted({str(card) for card in player.cards} & {str(card) for card in banker.cards})
    if shared:
        raise HandError(
            f"duplicate card {', '.join(shared)}: in both the player's and banker's hand"
        )
    jokers = [card for card in cards if not isinstance(card, Card)]
    if len(jokers) > 1:
        raise HandError(f"at most one joker in Pai Gow Poker, got {_cards_text(jokers)!r}")
