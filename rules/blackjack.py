"""Blackjack (twenty-one): hand totals, the dealer's required action, settling each player hand.

Card values (RULES.md section 3): 2..10 face value, J / Q / K = 10, A = 1 or 11. A hand's *hard*
total counts every ace as 1; when one ace can count 11 without passing 21 the hand is *soft* and
its total is the hard total + 10. An ace and a ten-value card as the first two cards are a
*blackjack* (paid 3:2), which ends the hand; a total over 21 is a *bust*. The dealer stands on
17; the option ``dealer_hits_soft_17`` makes the dealer hit a soft 17.

Settling a player hand against the dealer, in this order:

1. A player bust loses, even if the dealer busts too.
2. A player blackjack pushes against a dealer blackjack and otherwise wins 3:2. It is decided as
   soon as the dealer holds two cards, or at once when the dealer's upcard is a 2 to 9: with such
   a card the dealer cannot make a blackjack.
3. A dealer blackjack beats every other hand, a 21 in three or more cards included.
4. Otherwise, once the dealer stands: a dealer bust loses to the player; else the higher total
   wins and equal totals push.

Splits, doubles, insurance and surrender are not modelled: a doubled hand is settled by passing
its doubled stake. Rule variants are data (:class:`BlackjackRules`).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from rules.cards import MAX_PACKS, AnyCard, Card, Rank, check_distinct
from rules.errors import HandError, IllegalPlayError, ProfileError
from rules.money import ZERO, json_amount

__all__ = [
    "BlackjackHand",
    "BlackjackOutcome",
    "BlackjackRound",
    "BlackjackRules",
    "BlackjackSettlement",
    "DealerAction",
    "blackjack_value",
    "dealer_action",
    "evaluate_blackjack_hand",
    "play_blackjack_round",
    "settle_blackjack_hand",
]

BLACKJACK = 21
DEALER_STANDS = 17


@dataclass(frozen=True, slots=True)
class BlackjackRules:
    """Rule options: whether the dealer hits soft 17, the blackjack payout, the number of decks."""

    dealer_hits_soft_17: bool = False
    blackjack_pays: Decimal = Decimal("1.5")
    decks: int = 6

    def __post_init__(self) -> None:
        if not self.blackjack_pays > 0:
            raise ProfileError(f"blackjack payout {self.blackjack_pays} must be positive")
        if not 1 <= self.decks <= MAX_PACKS:
            raise ProfileError(f"decks {self.decks} must be 1 to {MAX_PACKS}")


DEFAULT_RULES = BlackjackRules()


class DealerAction(enum.Enum):
    """What the dealer must do with the cards held."""

    HIT = "hit"
    STAND = "stand"


class BlackjackOutcome(enum.Enum):
    """A player hand's outcome against the dealer."""

    BLACKJACK = "blackjack"
    WIN = "win"
    PUSH = "push"
    LOSE = "lose"


def _cards_text(cards: Sequence[AnyCard]) -> str:
    return " ".join(str(card) for card in cards)


def blackjack_value(card: AnyCard) -> int:
    """The card's value with the ace counted as 1: A = 1, 2..10 face, J / Q / K = 10."""
    if not isinstance(card, Card):
        raise HandError(f"joker {card} has no value in blackjack")
    return min(int(card.rank), 10)


@dataclass(frozen=True, slots=True)
class BlackjackHand:
    """A hand's totals: ``total`` is the best total (soft when an ace counts 11)."""

    cards: tuple[Card, ...]
    hard_total: int
    total: int
    soft: bool
    blackjack: bool
    bust: bool

    @property
    def description(self) -> str:
        """Words for people: ``"blackjack"``, ``"soft 18"``, ``"hard 17"``, ``"bust (24)"``."""
        if self.blackjack:
            return "blackjack"
        if self.bust:
            return f"bust ({self.total})"
        return f"{'soft' if self.soft else 'hard'} {self.total}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "cards": [str(card) for card in self.cards],
            "hard_total": self.hard_total,
            "total": self.total,
            "soft": self.soft,
            "blackjack": self.blackjack,
            "bust": self.bust,
            "description": self.description,
        }


def evaluate_blackjack_hand(cards: Sequence[AnyCard]) -> BlackjackHand:
    """Totals of one or more cards; raise HandError for an empty hand or a joker."""
    hand = tuple(cards)
    if not hand:
        raise HandError("a blackjack hand needs at least 1 card, got 0")
    hard = sum(blackjack_value(card) for card in hand)
    naturals = tuple(card for card in hand if isinstance(card, Card))
    has_ace = any(card.rank is Rank.ACE for card in naturals)
    soft = has_ace and hard + 10 <= BLACKJACK
    total = hard + 10 if soft else hard
    blackjack = len(hand) == 2 and total == BLACKJACK
    return BlackjackHand(naturals, hard, total, soft, blackjack, total > BLACKJACK)


def dealer_action(
    cards: Sequence[AnyCard] | BlackjackHand, rules: BlackjackRules = DEFAULT_RULES
) -> DealerAction:
    """The dealer's required action: hit under 17 (and on soft 17 when the rules say so),
    hit while holding a single card, otherwise stand (a bust or a blackjack stands)."""
    hand = cards if isinstance(cards, BlackjackHand) else evaluate_blackjack_hand(cards)
    if len(hand.cards) < 2 or hand.total < DEALER_STANDS:
        return DealerAction.HIT
    if hand.total == DEALER_STANDS and hand.soft and rules.dealer_hits_soft_17:
        return DealerAction.HIT
    return DealerAction.STAND


def _check_dealer_draws(dealer: BlackjackHand, rules: BlackjackRules) -> None:
    """Raise IllegalPlayError when the dealer drew a card after a total that stands."""
    for count in range(2, len(dealer.cards)):
        before = evaluate_blackjack_hand(dealer.cards[:count])
        if dealer_action(before, rules) is DealerAction.STAND:
            drawn = dealer.cards[count]
            raise IllegalPlayError(
                f"dealer drew {drawn} on {before.description} "
                f"({_cards_text(before.cards)}): the dealer stands there"
            )


@dataclass(frozen=True, slots=True)
class BlackjackSettlement:
    """One player hand against the dealer: the outcome, or None while the dealer must still
    draw; ``net`` is the amount won (+) or lost (-), None while undecided."""

    hand: BlackjackHand
    stake: Decimal
    outcome: BlackjackOutcome | None
    net: Decimal | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form; money as numbers, undecided as null."""
        return {
            "hand": self.hand.to_dict(),
            "stake": json_amount(self.stake),
            "outcome": None if self.outcome is None else self.outcome.value,
            "net": None if self.net is None else json_amount(self.net),
        }


def _may_be_blackjack(upcard: Card) -> bool:
    """Whether a dealer showing ``upcard`` can still make a blackjack: only an ace or a
    ten-value card can; a 2 to 9 cannot."""
    return blackjack_value(upcard) in (1, 10)


def _outcome(
    player: BlackjackHand, dealer: BlackjackHand, rules: BlackjackRules
) -> BlackjackOutcome | None:
    dealer_blackjack = dealer.blackjack
    if player.bust:
        return BlackjackOutcome.LOSE
    if len(dealer.cards) < 2:
        if player.blackjack and not _may_be_blackjack(dealer.cards[0]):
            return BlackjackOutcome.BLACKJACK
        return None
    if player.blackjack:
        return BlackjackOutcome.PUSH if dealer_blackjack else BlackjackOutcome.BLACKJACK
    if dealer_blackjack:
        return BlackjackOutcome.LOSE
    if dealer_action(dealer, rules) is DealerAction.HIT:
        return None
    if dealer.bust or player.total > dealer.total:
        return BlackjackOutcome.WIN
    if player.total == dealer.total:
        return BlackjackOutcome.PUSH
    return BlackjackOutcome.LOSE


def _net(outcome: BlackjackOutcome, stake: Decimal, rules: BlackjackRules) -> Decimal:
    if outcome is BlackjackOutcome.BLACKJACK:
        return stake * rules.blackjack_pays
    if outcome is BlackjackOutcome.WIN:
        return stake
    if outcome is BlackjackOutcome.PUSH:
        return ZERO
    return -stake


def _stake(stake: Decimal | int) -> Decimal:
    amount = Decimal(stake)
    if not amount > 0:
        raise HandError(f"stake {stake} must be positive")
    return amount


def settle_blackjack_hand(
    player: Sequence[AnyCard],
    dealer: Sequence[AnyCard],
    stake: Decimal | int = 1,
    rules: BlackjackRules = DEFAULT_RULES,
) -> BlackjackSettlement:
    """Settle one player hand (2+ cards) against the dealer's cards (1+ cards).

    Raises as :func:`play_blackjack_round`.
    """
    return play_blackjack_round(dealer, [player], stake, rules).players[0]


@dataclass(frozen=True, slots=True)
class BlackjackRound:
    """The dealer's hand and required action, and each player hand settled against it."""

    dealer: BlackjackHand
    action: DealerAction
    players: tuple[BlackjackSettlement, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "dealer": self.dealer.to_dict() | {"action": self.action.value},
            "players": [settlement.to_dict() for settlement in self.players],
        }


def play_blackjack_round(
    dealer: Sequence[AnyCard],
    players: Sequence[Sequence[AnyCard]],
    stake: Decimal | int = 1,
    rules: BlackjackRules = DEFAULT_RULES,
) -> BlackjackRound:
    """Read the dealer's cards and settle every player hand (same stake each) against them.

    Raises HandError for too few cards (a player hand needs 2, the dealer 1), no player hand,
    a joker, more copies of a card than ``rules.decks`` hold, or a stake that is not positive;
    IllegalPlayError when the dealer drew past a stand, or a player hand drew after busting or
    after a blackjack (its first two cards: splits are not modelled, so no later ace and ten is
    one).
    """
    amount = _stake(stake)
    if not players:
        raise HandError("at least one player hand is needed, got 0")
    dealer_hand = evaluate_blackjack_hand(dealer)
    player_hands: list[BlackjackHand] = []
    for number, cards in enumerate(players, start=1):
        if len(cards) < 2:
            raise HandError(
                f"player hand {number} needs at least 2 cards, got {len(cards)}: "
                f"{_cards_text(cards)!r}"
            )
        hand = evaluate_blackjack_hand(cards)
        for count in range(2, len(hand.cards)):
            before = evaluate_blackjack_hand(hand.cards[:count])
            if before.bust or before.blackjack:
                ended = "busting" if before.bust else "a blackjack"
                raise IllegalPlayError(
                    f"player hand {number} drew {hand.cards[count]} after {ended} "
                    f"({_cards_text(hand.cards[:count])})"
                )
        player_hands.append(hand)
    check_distinct([*dealer, *(card for cards in players for card in cards)], rules.decks)
    _check_dealer_draws(dealer_hand, rules)
    settlements = []
    for hand in player_hands:
        outcome = _outcome(hand, dealer_hand, rules)
        net = None if outcome is None else _net(outcome, amount, rules)
        settlements.append(BlackjackSettlement(hand, amount, outcome, net))
    return BlackjackRound(dealer_hand, dealer_action(dealer_hand, rules), tuple(settlements))
