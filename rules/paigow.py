"""Pai Gow Poker: setting seven cards into a high and a low hand, the house way, and settling.

The deck is 52 cards and one joker (the "bug", see :mod:`rules.poker_hands`). A player's seven
cards are set into a five-card *high* hand and a two-card *low* hand; the high hand must outrank
the low hand, otherwise the setting is a *foul* (:class:`~rules.errors.IllegalPlayError`).

Settling against the banker (RULES.md section 3): high against high and low against low; a copy
(equal hands) goes to the banker. Winning both is a win, paid even money less the commission
(5% by default); winning one is a push; losing both is a loss.

Rule variants are data: :class:`PaiGowRules` (where the wheel ranks, the commission rate).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from itertools import combinations
from typing import Any

from rules.cards import AnyCard, Card
from rules.errors import HandError, IllegalPlayError, ProfileError
from rules.money import ZERO, json_amount
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
    """Rule options: where A-2-3-4-5 ranks (default second-highest) and the commission on wins."""

    wheel: WheelRank = WheelRank.SECOND_HIGHEST
    commission: Decimal = Decimal("0.05")

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
    _check_seven([*high, *low])
    high_hand = evaluate_five(high, rules.wheel)
    low_hand = evaluate_two(low)
    if not high_hand > low_hand:
        raise IllegalPlayError(
            f"foul: the low hand {_cards_text(low_hand.cards)} ({low_hand.description}) "
            f"outranks the high hand {_cards_text(high_hand.cards)} ({high_hand.description})"
        )
    return PaiGowSetting(high_hand, low_hand)


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


def _pair_way(hand: tuple[AnyCard, ...]) -> tuple[list[AnyCard], list[AnyCard]]:
    """High and low cards by the pair-pattern rules of :func:`house_way` (joker = ace)."""
    ordered = sorted(hand, key=_sort_key)
    groups: dict[int, list[AnyCard]] = {}
    for card in ordered:
        groups.setdefault(_value(card), []).append(card)
    by_size: dict[int, list[list[AnyCard]]] = {size: [] for size in range(1, 6)}
    for cards in groups.values():  # values descending, so each list is highest first
        by_size[len(cards)].append(cards)
    singles = [cards[0] for cards in by_size[1]]
    fives, fours, threes, pairs = by_size[5], by_size[4], by_size[3], by_size[2]

    def rest(*used: Sequence[AnyCard]) -> list[AnyCard]:
        taken = {card for cards in used for card in cards}
        return [card for card in ordered if card not in taken]

    if fives:
        low = fives[0][:2]
        return rest(low), low
    if fours:
        quads = fours[0]
        others = threes + pairs
        if others:
            low = others[0][:2]
        elif _value(quads[0]) <= 10:
            low = singles[:2]
        else:
            low = quads[2:]
        return rest(low), low
    if len(threes) == 2:
        low = threes[0][:2]
        return rest(low), low
    if threes and pairs:
        low = pairs[0]
        return rest(low), low
    if threes:
        aces = _value(threes[0][0]) == ACE_VALUE
        low = [threes[0][2], singles[0]] if aces else singles[:2]
        return rest(low), low
    if len(pairs) == 3:
        low = pairs[0]
        return rest(low), low
    if len(pairs) == 2:
        if _value(pairs[0][0]) <= 6 and _value(singles[0]) == ACE_VALUE:
            low = singles[:2]
        else:
            low = pairs[1]
        return rest(low), low
    if pairs:
        low = singles[:2]
        return rest(low), low
    low = singles[1:3]
    return rest(low), low


def house_way(cards: Sequence[AnyCard], rules: PaiGowRules = DEFAULT_RULES) -> PaiGowSetting:
    """Set seven cards by this product's simplified house way; the result is always legal.

    Pair patterns count the joker as an ace. The rules, first that applies:

    1. Straight, flush or straight flush available (and no full house, four of a kind or five
       aces): play it in the high hand, choosing the five cards that leave the best low hand
       (then the best high hand). With two pair, three pair or three of a kind as well, do so
       only when that low hand is a pair; otherwise fall through to the pair rules below.
    2. Five aces: a pair of aces in the low hand, the rest high.
    3. Four of a kind: with another pair (or three of a kind) as well, the highest such pair goes
       low; otherwise four 2s to 10s stay together with the two highest other cards low, and four
       jacks or better split into two pairs (a pair in each hand).
    4. Two three of a kinds: a pair of the higher rank goes low.
    5. Full house: the (highest) pair goes low, the three of a kind stays high.
    6. Three of a kind: stays high, the two highest other cards go low; three aces split: a pair
       of aces high, the third ace and the highest other card low.
    7. Three pair: the highest pair goes low.
    8. Two pair: split (higher pair high, lower pair low), except when the higher pair is 6s or
       lower and there is an ace single: both pairs high, the ace and the next single low.
    9. One pair: the pair high, the two highest singles low.
    10. No pair: the highest card high, the second and third highest low.

    Ties among equal cards are broken by card notation, so the setting is deterministic.
    """
    hand = _check_seven(cards)
    ordered = tuple(sorted(hand, key=_sort_key))
    best_five = max(evaluate_five(five, rules.wheel) for five in combinations(ordered, 5))
    if best_five.category in _STRAIGHTS_AND_FLUSHES:
        setting = _straight_or_flush_setting(ordered, rules)
        assert setting is not None  # the best five cards are one
        values = [_value(card) for card in ordered]
        most = max(values.count(value) for value in values)
        pairs = sum(1 for value in set(values) if values.count(value) == 2)
        many_pairs = most >= 3 or pairs >= 2
        if not many_pairs or setting.low.category is PokerCategory.PAIR:
            return setting
    high, low = _pair_way(ordered)
    return set_paigow_hand(high, low, rules)


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
