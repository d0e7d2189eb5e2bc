"""Niu Niu banker game: each player hand against the banker's, and what the bet pays.

Seed 002 (the ``trainer`` profile, wizardofodds.com's Cambodian game): an Equal bet wins or
loses 1x the stake; on a Double bet the *winning* hand sets the multiple (Ultimate 5x, Niu Niu
3x, Niu 7-9 2x, anything else 1x), for a win and for a loss alike; the house takes 5% of the
winnings. Seed example: Double bet 100, Niu Niu beats No Niu: 3 x 100 - 5% = +285; Equal: +95.

Seed 003 (``app``): a winning player is paid on their own pattern (Ultimate 5:1, Niu-Niu 3:1,
Big Point 2:1, Small Point 1:1, High Card 1:1); a loss costs the stake; a tie returns the bet.

Amounts are exact decimals (:mod:`rules.money`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from rules.cards import AnyCard, check_distinct
from rules.errors import RulesError
from rules.money import (
    MAX_AMOUNT,
    PLACES_LIMIT,
    THOUSANDS_SEPARATORS,
    ZERO,
    AmountPrecisionError,
    WrittenNumber,
    to_money,
)
from rules.niuniu import NiuHand, Outcome, banker_outcome, evaluate_hand
from rules.niuniu_profiles import DEFAULT_PROFILE, BetType, NiuProfile, get_profile

__all__ = [
    "PlayerResult",
    "RoundResult",
    "Settlement",
    "parse_amount",
    "parse_bet",
    "parse_stake",
    "play_round",
    "settle",
]


@dataclass(frozen=True, slots=True)
class Settlement:
    """What one player's bet did against the banker.

    Attributes:
        outcome: the player's win, loss or tie (a tie the banker takes is a loss).
        net: the player's gain (> 0), loss (< 0) or 0 for a push, after commission.
        multiple: the multiple of the stake won or lost (0 for a push).
        commission: what the house took from the winnings (0 unless won on a commissioned bet).
        bet: the bet settled.
        stake: the amount bet.
    """

    outcome: Outcome
    net: Decimal
    multiple: int
    commission: Decimal
    bet: BetType
    stake: Decimal


def parse_stake(stake: int | float | str | Decimal) -> Decimal:
    """A positive stake as an exact Decimal (:func:`parse_amount` named ``stake``)."""
    return parse_amount(stake, "stake")


def parse_amount(value: int | float | str | Decimal, name: str) -> Decimal:
    """A positive amount (a stake, a payout ratio) as an exact Decimal
    (:func:`rules.money.to_money`); RulesError naming ``name`` and the value otherwise."""
    if isinstance(value, WrittenNumber):
        shown = value.text  # as written: 1e-400, 1.00000000000000001
    else:
        shown = str(value) if isinstance(value, Decimal) else repr(value)  # never Decimal(...)
    # before the number: Decimal would take "1_000" as 1000, a separator the text refuses
    if isinstance(value, str) and any(mark in value.strip() for mark in THOUSANDS_SEPARATORS):
        raise RulesError(
            f"{name} must be a number without thousands separators (1000, 2.5), got {shown}"
        )
    try:
        amount = to_money(value)
    except ValueError as error:
        if "out of range" in str(error) and not str(value).strip().startswith("-"):
            largest = f"{MAX_AMOUNT:,}"
            raise RulesError(f"{name} {shown} is over the largest amount, {largest}") from None
        if isinstance(error, AmountPrecisionError):
            raise RulesError(f"{name} {shown} is written too finely: {PLACES_LIMIT}") from None
        raise RulesError(f"{name} must be a positive number, got {shown}") from None
    if amount <= 0:
        raise RulesError(f"{name} must be a positive number, got {shown}")
    return amount


def parse_bet(bet: BetType | str | None) -> BetType | None:
    """A bet type from its name (``"equal"``, ``"double"``); None stays None (the default)."""
    if bet is None or isinstance(bet, BetType):
        return bet
    try:
        return BetType(bet.strip().lower())
    except ValueError:
        known = ", ".join(b.value for b in BetType)
        raise RulesError(f"unknown bet {bet!r}: known bets are {known}") from None


def settle(
    banker: NiuHand,
    player: NiuHand,
    bet: BetType | str | None = None,
    stake: int | float | str | Decimal = 1,
) -> Settlement:
    """Settle ``player``'s bet against ``banker`` under the player's profile.

    ``bet`` defaults to the profile's default bet; a bet the profile does not offer is a
    ProfileError; a stake that is not a positive number is a RulesError.
    """
    profile = player.profile
    bet_type = parse_bet(bet) or profile.default_bet
    rule = profile.bet_rule(bet_type)
    amount = parse_stake(stake)
    outcome = banker_outcome(banker, player)
    if outcome is Outcome.WIN:
        multiple = rule.win_table.multiple(player.score)
        winnings = amount * multiple
        commission = winnings * profile.commission_rate if rule.commissioned else ZERO
        net = winnings - commission
    elif outcome is Outcome.LOSE:
        multiple = rule.loss_table.multiple(banker.score)
        commission = ZERO
        net = -amount * multiple
    else:
        multiple, commission, net = 0, ZERO, ZERO
    return Settlement(outcome, net, multiple, commission, bet_type, amount)


@dataclass(frozen=True, slots=True)
class PlayerResult:
    """One player's hand and its settlement against the banker."""

    hand: NiuHand
    settlement: Settlement


@dataclass(frozen=True, slots=True)
class RoundResult:
    """A banker game round: the banker's hand and every player's result, in seat order."""

    banker: NiuHand
    players: tuple[PlayerResult, ...]


def play_round(
    banker: Iterable[AnyCard] | str,
    players: Sequence[Iterable[AnyCard] | str],
    profile: str | NiuProfile = DEFAULT_PROFILE,
    bet: BetType | str | None = None,
    stake: int | float | str | Decimal = 1,
) -> RoundResult:
    """Score the banker's and the players' hands and settle every player's bet.

    All hands come from the profile's decks: a card dealt more often than they hold is a
    HandError (so in a one-deck game no card may appear twice in the round).
    """
    rules = get_profile(profile)
    if not players:
        raise RulesError("a round needs at least one player hand")
    banker_hand = evaluate_hand(banker, rules)
    player_hands = [evaluate_hand(hand, rules) for hand in players]
    check_distinct(
        [card for hand in (banker_hand, *player_hands) for card in hand.cards], rules.decks
    )
    results = tuple(
        PlayerResult(hand, settle(banker_hand, hand, bet, stake)) for hand in player_hands
    )
    return RoundResult(banker_hand, results)
