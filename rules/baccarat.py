"""Baccarat (punto banco): totals, the third-card tableau, the result of a coup and its payouts.

Card points (RULES.md section 3): A = 1, 2..9 face value, 10 / J / Q / K = 0; a total is the last
digit of the sum. Player and Banker get two cards each; a *natural* 8 or 9 on either side ends the
coup. Otherwise the Player draws on 0-5 and stands on 6-7. The Banker then follows the tableau
(:func:`banker_draws`): when the Player stood, the Banker draws on 0-5; when the Player drew, the
Banker draws on 0-2, on 3 unless the Player's third card was an 8, on 4 if it was 2-7, on 5 if
4-7, on 6 if 6-7, and stands on 7. The higher total wins; equal totals tie.

Bets: Player pays 1:1, Banker 0.95:1 (1:1 less a 5% commission), Tie 8:1; Player and Banker bets
push on a tie. These are options of :class:`BaccaratRules`.

:func:`evaluate_coup` reads the cards dealt so far (two or three per side) and reports the totals,
who must draw now, whether the cards follow the tableau (``problem`` names the first breach),
and the result once the coup is over. :func:`settle_baccarat_bet` pays one bet on a finished coup.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from rules.cards import MAX_PACKS, AnyCard, Card, check_distinct
from rules.errors import HandError, IllegalPlayError, ProfileError
from rules.money import ZERO, json_amount

__all__ = [
    "BaccaratBet",
    "BaccaratBetOutcome",
    "BaccaratCoup",
    "BaccaratResult",
    "BaccaratRules",
    "BaccaratSettlement",
    "baccarat_points",
    "baccarat_total",
    "banker_draws",
    "evaluate_coup",
    "player_draws",
    "settle_baccarat_bet",
]

NATURAL = 8
"""A two-card total of 8 or 9 is a natural."""


@dataclass(frozen=True, slots=True)
class BaccaratRules:
    """Rule options: Banker commission, Tie payout, whether Player/Banker bets push on a tie,
    and the number of decks in the shoe (for the duplicate-card check)."""

    banker_commission: Decimal = Decimal("0.05")
    tie_pays: Decimal = Decimal(8)
    push_on_tie: bool = True
    decks: int = 8

    def __post_init__(self) -> None:
        if not Decimal(0) <= self.banker_commission < Decimal(1):
            raise ProfileError(f"banker commission {self.banker_commission} must lie in [0, 1)")
        if not self.tie_pays > 0:
            raise ProfileError(f"tie payout {self.tie_pays} must be positive")
        if not 1 <= self.decks <= MAX_PACKS:
            raise ProfileError(f"decks {self.decks} must be 1 to {MAX_PACKS}")


DEFAULT_RULES = BaccaratRules()


class BaccaratResult(enum.Enum):
    """Who won the coup."""

    PLAYER = "player"
    BANKER = "banker"
    TIE = "tie"


class BaccaratBet(enum.Enum):
    """The three bets on a coup."""

    PLAYER = "player"
    BANKER = "banker"
    TIE = "tie"


class BaccaratBetOutcome(enum.Enum):
    """A bet's fate."""

    WIN = "win"
    PUSH = "push"
    LOSE = "lose"


def _cards_text(cards: Sequence[AnyCard]) -> str:
    return " ".join(str(card) for card in cards)


def baccarat_points(card: AnyCard) -> int:
    """The card's points: A = 1, 2..9 face value, 10 / J / Q / K = 0; HandError for a joker."""
    if not isinstance(card, Card):
        raise HandError(f"joker {card} has no value in baccarat")
    return int(card.rank) % 10 if card.rank <= 10 else 0


def baccarat_total(cards: Sequence[AnyCard]) -> int:
    """The last digit of the points of ``cards``."""
    return sum(baccarat_points(card) for card in cards) % 10


def player_draws(player_total: int) -> bool:
    """Whether the Player, without a natural on either side, draws on this two-card total."""
    _check_total(player_total, "player")
    return player_total <= 5


# Banker two-card total -> the Player third-card points on which the Banker draws.
_BANKER_DRAWS_ON: dict[int, frozenset[int]] = {
    0: frozenset(range(10)),
    1: frozenset(range(10)),
    2: frozenset(range(10)),
    3: frozenset(range(10)) - {8},
    4: frozenset(range(2, 8)),
    5: frozenset(range(4, 8)),
    6: frozenset((6, 7)),
    7: frozenset(),
}


def banker_draws(banker_total: int, player_third: int | None) -> bool:
    """The tableau: whether the Banker, without a natural on either side, draws a third card.

    ``player_third`` is the points (0-9) of the Player's third card, or None when the Player
    stood; then the Banker draws on 0-5. A total of 8 or 9 (a natural) never draws.
    """
    _check_total(banker_total, "banker")
    if banker_total >= NATURAL:
        return False
    if player_third is None:
        return banker_total <= 5
    if player_third not in range(10):
        raise HandError(f"player third card points {player_third!r} must be 0-9")
    return player_third in _BANKER_DRAWS_ON[banker_total]


def _check_total(total: int, side: str) -> None:
    if total not in range(10):
        raise HandError(f"{side} total {total!r} must be 0-9")


@dataclass(frozen=True, slots=True)
class BaccaratCoup:
    """A coup as dealt so far.

    Totals count every card dealt. ``player_must_draw`` / ``banker_must_draw``: that side must
    take its third card now (the Banker only once the Player's draw is settled). ``problem`` is
    None when the cards follow the tableau, else the first breach in words; ``result`` is set
    only when the coup is over and consistent.
    """

    player: tuple[Card, ...]
    banker: tuple[Card, ...]
    player_total: int
    banker_total: int
    player_natural: bool
    banker_natural: bool
    player_must_draw: bool
    banker_must_draw: bool
    problem: str | None
    result: BaccaratResult | None

    @property
    def consistent(self) -> bool:
        """True when the cards dealt follow the drawing rules."""
        return self.problem is None

    @property
    def complete(self) -> bool:
        """True when the coup is over and consistent (it has a result)."""
        return self.result is not None

    def verify(self) -> None:
        """Raise IllegalPlayError naming the problem when the coup breaks the tableau."""
        if self.problem is not None:
            raise IllegalPlayError(self.problem)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "player": {
                "cards": [str(card) for card in self.player],
                "total": self.player_total,
                "natural": self.player_natural,
                "must_draw": self.player_must_draw,
            },
            "banker": {
                "cards": [str(card) for card in self.banker],
                "total": self.banker_total,
                "natural": self.banker_natural,
                "must_draw": self.banker_must_draw,
            },
            "consistent": self.consistent,
            "problem": self.problem,
            "complete": self.complete,
            "result": None if self.result is None else self.result.value,
        }


def _check_side(cards: Sequence[AnyCard], side: str) -> tuple[Card, ...]:
    hand = tuple(cards)
    if len(hand) not in (2, 3):
        raise HandError(f"{side} needs 2 or 3 cards, got {len(hand)}: {_cards_text(hand)!r}")
    for card in hand:
        baccarat_points(card)  # rejects a joker
    return tuple(card for card in hand if isinstance(card, Card))


def _problem(player: tuple[Card, ...], banker: tuple[Card, ...]) -> tuple[str | None, bool, bool]:
    """The first breach of the drawing rules, and who must draw now: (problem, player, banker)."""
    player_two, banker_two = baccarat_total(player[:2]), baccarat_total(banker[:2])
    if player_two >= NATURAL or banker_two >= NATURAL:
        side, total = ("player", player_two) if player_two >= NATURAL else ("banker", banker_two)
        for name, cards in (("player", player), ("banker", banker)):
            if len(cards) == 3:
                return (
                    f"{name} drew a third card ({cards[2]}) after a {side} natural {total}: "
                    "a natural ends the coup",
                    False,
                    False,
                )
        return None, False, False
    if len(player) == 3 and not player_draws(player_two):
        return (
            f"player drew a third card ({player[2]}) on {player_two}: the player stands on 6-7",
            False,
            False,
        )
    if len(player) == 2 and player_draws(player_two):
        if len(banker) == 3:
            return (
                f"banker drew a third card ({banker[2]}) before the player's: "
                f"the player draws first on {player_two}",
                False,
                False,
            )
        return None, True, False
    third = baccarat_points(player[2]) if len(player) == 3 else None
    should_draw = banker_draws(banker_two, third)
    if len(banker) == 3 and not should_draw:
        after = (
            "after the player stood"
            if third is None
            else f"after the player's third card {player[2]} ({third} points)"
        )
        return (
            f"banker drew a third card ({banker[2]}) on {banker_two} {after}: the banker stands",
            False,
            False,
        )
    return None, False, len(banker) == 2 and should_draw


def evaluate_coup(
    player: Sequence[AnyCard], banker: Sequence[AnyCard], rules: BaccaratRules = DEFAULT_RULES
) -> BaccaratCoup:
    """Read a coup dealt so far: two or three cards a side.

    Raises HandError for a wrong count, a joker or more copies of a card than ``rules.decks``
    hold. A breach of the drawing rules does not raise: it is reported in ``problem`` (call
    ``verify()`` on the result to raise it as IllegalPlayError).
    """
    player_cards = _check_side(player, "player")
    banker_cards = _check_side(banker, "banker")
    check_distinct([*player_cards, *banker_cards], rules.decks)
    problem, player_must, banker_must = _problem(player_cards, banker_cards)
    player_total, banker_total = baccarat_total(player_cards), baccarat_total(banker_cards)
    result = None
    if problem is None and not player_must and not banker_must:
        if player_total > banker_total:
            result = BaccaratResult.PLAYER
        elif banker_total > player_total:
            result = BaccaratResult.BANKER
        else:
            result = BaccaratResult.TIE
    return BaccaratCoup(
        player=player_cards,
        banker=banker_cards,
        player_total=player_total,
        banker_total=banker_total,
        player_natural=baccarat_total(player_cards[:2]) >= NATURAL,
        banker_natural=baccarat_total(banker_cards[:2]) >= NATURAL,
        player_must_draw=player_must,
        banker_must_draw=banker_must,
        problem=problem,
        result=result,
    )


@dataclass(frozen=True, slots=True)
class BaccaratSettlement:
    """One bet on a finished coup: its outcome and the net amount won (+) or lost (-)."""

    bet: BaccaratBet
    stake: Decimal
    outcome: BaccaratBetOutcome
    net: Decimal

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form; money as numbers."""
        return {
            "bet": self.bet.value,
            "stake": json_amount(self.stake),
            "outcome": self.outcome.value,
            "net": json_amount(self.net),
        }


def settle_baccarat_bet(
    coup: BaccaratCoup,
    bet: BaccaratBet,
    stake: Decimal | int = 1,
    rules: BaccaratRules = DEFAULT_RULES,
) -> BaccaratSettlement:
    """Pay one bet on a finished coup: Player 1:1, Banker 1:1 less commission, Tie ``tie_pays``:1.

    On a tie, Player and Banker bets push (or lose when ``rules.push_on_tie`` is False).
    Raises IllegalPlayError when the coup breaks the tableau or is not over, HandError for a
    stake that is not positive.
    """
    amount = Decimal(stake)
    if not amount > 0:
        raise HandError(f"stake {stake} must be positive")
    coup.verify()
    if coup.result is None:
        who = "player" if coup.player_must_draw else "banker"
        raise IllegalPlayError(f"the coup is not over: the {who} must draw a third card")
    if bet is BaccaratBet.TIE:
        if coup.result is BaccaratResult.TIE:
            return BaccaratSettlement(bet, amount, BaccaratBetOutcome.WIN, amount * rules.tie_pays)
        return BaccaratSettlement(bet, amount, BaccaratBetOutcome.LOSE, -amount)
    if coup.result is BaccaratResult.TIE:
        if rules.push_on_tie:
            return BaccaratSettlement(bet, amount, BaccaratBetOutcome.PUSH, ZERO)
        return BaccaratSettlement(bet, amount, BaccaratBetOutcome.LOSE, -amount)
    if coup.result.value != bet.value:
        return BaccaratSettlement(bet, amount, BaccaratBetOutcome.LOSE, -amount)
    win = amount * (1 - rules.banker_commission) if bet is BaccaratBet.BANKER else amount
    return BaccaratSettlement(bet, amount, BaccaratBetOutcome.WIN, win)
