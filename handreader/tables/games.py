"""Baccarat, Blackjack and Pai Gow Poker from card codes or from a photo's reading.

The reports are the rules library's results, bundled as each game answers (``to_dict()`` is
the JSON of the HTTP API and of the commands' ``--json``):

- :func:`baccarat_report`: the coup and, once it is over, each bet settled (only ``bet`` when
  given, all three otherwise). A third card drawn against the tableau is *reported* by the
  coup (``consistent: false`` and ``problem``), not refused.
- :func:`blackjack_report`: the dealer's totals and required action, each player's outcome
  and net (:class:`rules.blackjack.BlackjackRound`).
- :func:`paigow_report`: the player's setting (``set_by``: ``house_way`` or ``given``) and,
  with the banker's seven cards set by the house way, the settled result.

Photos: which cards belong to which side follows the layout. With regions (the two sides'
regions; for Blackjack the dealer's region and optionally one region per player) each card goes
to the region holding its centre. Without regions the cards are grouped by distance
(:mod:`handreader.tables.grouping`), and the side is the group nearest an edge of the image:

- Baccarat: two groups; the Player's is the one nearest ``player_side`` (default ``left``),
  the other the Banker's.
- Blackjack: the dealer's group is the one nearest ``dealer_side`` (default ``top``); every
  other group is a player hand, in reading order (rows from the top, left to right).
- Pai Gow Poker: one group of seven is set by the house way; two groups are the player's
  (nearest ``player_side``, default ``bottom``) and the banker's, both set by the house way
  and settled.

A photo's :class:`GamePhoto` holds the hands found, the cards left over, the result (what the
same cards given as codes would give, or None when the cards read cannot make the game's
hands) and the problem (why there is no result: wrong counts, a joker, duplicates; or, with a
result, the cards read with low confidence, which make it provisional).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Generic, Protocol, TypeVar

from handreader.tables.grouping import (
    DEFAULT_LINK_FACTOR,
    CardGroup,
    Region,
    assign_regions,
    group_cards,
)
from handreader.tables.scoring import NO_CARDS, BankerRule, TableCard, flag_names
from handreader.tables.wording import counted
from rules.baccarat import (
    BaccaratBet,
    BaccaratCoup,
    BaccaratRules,
    BaccaratSettlement,
    evaluate_coup,
    settle_baccarat_bet,
)
from rules.blackjack import BlackjackRound, BlackjackRules, play_blackjack_round
from rules.cards import AnyCard, check_distinct, parse_cards
from rules.errors import RulesError
from rules.paigow import PaiGowResult, PaiGowRules, PaiGowSetting, house_way, settle_paigow
from vision.detections import CardReading, Reading

__all__ = [
    "BaccaratReport",
    "GamePhoto",
    "PaiGowReport",
    "PhotoHand",
    "baccarat_photo",
    "baccarat_report",
    "blackjack_photo",
    "blackjack_report",
    "paigow_photo",
    "paigow_report",
]

NO_SPLIT = 1000
"""A hand size no group reaches: groups of these games are never split by hand size."""


class _Report(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


_R = TypeVar("_R", bound=_Report)


# --- reports -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BaccaratReport:
    """A coup and its bets settled (none while the coup is not over)."""

    coup: BaccaratCoup
    bets: tuple[BaccaratSettlement, ...]

    def to_dict(self) -> dict[str, Any]:
        """``BaccaratCoup.to_dict()`` with ``bets``."""
        return self.coup.to_dict() | {"bets": [settled.to_dict() for settled in self.bets]}


def baccarat_report(
    player: Sequence[AnyCard],
    banker: Sequence[AnyCard],
    rules: BaccaratRules,
    stake: Decimal,
    bet: BaccaratBet | None = None,
) -> BaccaratReport:
    """The coup of these cards and, once it is over, ``bet`` (or every bet) settled;
    IllegalPlayError for a complete coup that breaks the tableau."""
    coup = evaluate_coup(player, banker, rules)
    bets = [bet] if bet is not None else list(BaccaratBet)
    settled = (
        tuple(settle_baccarat_bet(coup, each, stake, rules) for each in bets)
        if coup.complete
        else ()
    )
    return BaccaratReport(coup, settled)


def blackjack_report(
    dealer: Sequence[AnyCard],
    players: Sequence[Sequence[AnyCard]],
    rules: BlackjackRules,
    stake: Decimal,
) -> BlackjackRound:
    """The round: the dealer's hand and action, each player hand settled."""
    return play_blackjack_round(dealer, players, stake, rules)


@dataclass(frozen=True, slots=True)
class PaiGowReport:
    """The player's setting and how it was made; with the banker's cards, the result."""

    set_by: str
    """``house_way`` or ``given``."""
    rules: PaiGowRules
    player: PaiGowSetting
    result: PaiGowResult | None = None

    def to_dict(self) -> dict[str, Any]:
        """``set_by``, ``house_way`` (its name), then the player's setting or the result."""
        named: dict[str, Any] = {"set_by": self.set_by, "house_way": self.rules.house_way.name}
        if self.result is None:
            return named | {"player": self.player.to_dict()}
        return named | self.result.to_dict()


def paigow_report(
    player: PaiGowSetting,
    set_by: str,
    banker: Sequence[AnyCard] | None,
    rules: PaiGowRules,
    stake: Decimal,
) -> PaiGowReport:
    """The player's setting; with the banker's seven cards (set by the house way), settled.
    HandError when a card is in both hands."""
    if banker is None:
        return PaiGowReport(set_by, rules, player)
    check_distinct([*player.cards, *banker])
    result = settle_paigow(player, house_way(banker, rules), stake, rules)
    return PaiGowReport(set_by, rules, player, result)


# --- photos --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PhotoHand:
    """A hand found in a photo: its role, its seat and its cards (left to right)."""

    role: str
    seat: int
    cards: tuple[CardReading, ...]

    def codes(self) -> tuple[AnyCard, ...]:
        """The cards as the rules take them."""
        return parse_cards([card.code for card in self.cards])

    def to_dict(self) -> dict[str, object]:
        """``role``, ``seat``, ``cards`` (as the Niu Niu table gives them) and ``box`` (the
        cards' bounding box, None without cards)."""
        boxes = [card.box_xyxy for card in self.cards]
        box = (
            None
            if not boxes
            else [
                round(min(b[0] for b in boxes), 1),
                round(min(b[1] for b in boxes), 1),
                round(max(b[2] for b in boxes), 1),
                round(max(b[3] for b in boxes), 1),
            ]
        )
        return {
            "role": self.role,
            "seat": self.seat,
            "cards": [TableCard.from_reading(card).to_dict() for card in self.cards],
            "box": box,
        }


@dataclass(frozen=True, slots=True)
class GamePhoto(Generic[_R]):
    """A game read from a photo (see the module docstring)."""

    game: str
    size_wh: tuple[int, int]
    hands: tuple[PhotoHand, ...]
    left_over: tuple[CardReading, ...]
    result: _R | None
    problem: str | None
    flags: list[str]

    def to_dict(self) -> dict[str, Any]:
        """``{"game", "size", "hands", "left_over", "result", "problem", "flags"}``."""
        return {
            "game": self.game,
            "size": list(self.size_wh),
            "hands": [hand.to_dict() for hand in self.hands],
            "left_over": [TableCard.from_reading(card).to_dict() for card in self.left_over],
            "result": None if self.result is None else self.result.to_dict(),
            "problem": self.problem,
            "flags": self.flags,
        }


_Layout = tuple[list[PhotoHand], tuple[CardReading, ...], str | None]
"""The hands of a photo, the cards left over and the problem (None when the layout is clear)."""


def _shown(card: CardReading) -> str:
    return f"{card.code}?" if card.uncertain else card.code


def _clusters(
    cards: Sequence[CardReading], link_factor: float
) -> tuple[list[CardGroup], tuple[CardReading, ...]]:
    """The groups of cards lying together, and the uncertain readings set aside from them
    (``handreader.tables.grouping``: never a hand of their own)."""
    found = group_cards(cards, link_factor=link_factor, hand_size=NO_SPLIT)
    aside = tuple(card for group in found if group.set_aside for card in group.cards)
    return [group for group in found if not group.set_aside], aside


def _two_sides(
    reading: Reading,
    first: tuple[str, Region | None],
    second: tuple[str, Region | None],
    side: BankerRule,
    link_factor: float,
    *,
    alone: bool = False,
) -> _Layout:
    """Two hands of a photo: by the two regions, or the two groups with ``first`` nearest the
    ``side`` edge. ``alone``: a single group is ``first`` on its own (Pai Gow without banker)."""
    (first_role, first_region), (second_role, second_region) = first, second
    if (first_region is None) != (second_region is None):
        raise RulesError(
            f"give the {first_role}'s and the {second_role}'s regions together, or neither"
        )
    if first_region is not None and second_region is not None:
        groups, left_over = assign_regions(
            reading.cards, [first_region, second_region], reading.size_wh
        )
        return (
            [PhotoHand(first_role, 0, groups[0].cards), PhotoHand(second_role, 1, groups[1].cards)],
            left_over,
            None,
        )
    if not reading.cards:
        return [], (), NO_CARDS
    found, aside = _clusters(reading.cards, link_factor)
    if alone and len(found) == 1:
        return [PhotoHand(first_role, 0, found[0].cards)], aside, None
    if len(found) != 2:
        shown = " | ".join(" ".join(_shown(card) for card in group.cards) for group in found)
        return (
            [PhotoHand("hand", seat, group.cards) for seat, group in enumerate(found)],
            aside,
            f"found {counted(len(found), 'group')} of cards "
            f"({shown or 'none'}), expected 2 "
            f"({first_role} and {second_role}): give {first_role}_region and {second_role}_region",
        )
    near = side.pick(found)
    return (
        [
            PhotoHand(first_role, 0, found[near].cards),
            PhotoHand(second_role, 1, found[1 - near].cards),
        ],
        aside,
        None,
    )


def _dealer_and_players(
    reading: Reading,
    dealer_side: BankerRule,
    dealer_region: Region | None,
    player_regions: Sequence[Region],
    link_factor: float,
) -> _Layout:
    """The dealer's hand and the players' of a blackjack photo (see the module docstring)."""
    cards = reading.cards
    dealer: CardGroup | None = None
    if dealer_region is not None:
        found, cards = assign_regions(cards, [dealer_region], reading.size_wh)
        dealer = found[0]
    left_over: tuple[CardReading, ...] = ()
    if player_regions:
        groups, left_over = assign_regions(cards, list(player_regions), reading.size_wh)
        players = list(groups)
    else:
        players, left_over = _clusters(cards, link_factor)
    if dealer is None:
        if not reading.cards:
            return [], (), NO_CARDS
        if len(players) < 2:
            return (
                [PhotoHand("hand", seat, group.cards) for seat, group in enumerate(players)],
                left_over,
                f"found {counted(len(players), 'group')} of cards, expected the dealer's and at "
                "least one player's: give dealer_region",
            )
        dealer = players.pop(dealer_side.pick(players))
    hands = [PhotoHand("dealer", 0, dealer.cards)]
    hands += [PhotoHand("player", seat, group.cards) for seat, group in enumerate(players, start=1)]
    return hands, left_over, None


def _uncertain_note(hands: Sequence[PhotoHand]) -> str | None:
    doubtful = [card for hand in hands for card in hand.cards if card.uncertain]
    if not doubtful:
        return None
    shown = ", ".join(f"{_shown(card)} ({card.confidence:.2f})" for card in doubtful)
    return f"unverified: uncertain reading of {shown}; no result until it is read for certain"


def _photo(
    game: str,
    reading: Reading,
    layout: _Layout,
    score: Callable[[Sequence[PhotoHand]], _R],
) -> GamePhoto[_R]:
    """The game of a photo; ``score(hands)`` gives the result and may raise RulesError, which
    becomes the problem."""
    hands, left_over, problem = layout
    result = None
    if problem is None:
        problem = _uncertain_note(hands)
    if problem is None:
        try:
            result = score(hands)
        except RulesError as error:
            problem = f"the cards read do not make a {game} round: {error}"
    return GamePhoto(
        game,
        reading.size_wh,
        tuple(hands),
        tuple(left_over),
        result,
        problem,
        flag_names(reading.flags),
    )


def baccarat_photo(
    reading: Reading,
    rules: BaccaratRules,
    stake: Decimal,
    bet: BaccaratBet | None = None,
    *,
    player_side: BankerRule | str = BankerRule.LEFT,
    player_region: Region | None = None,
    banker_region: Region | None = None,
    link_factor: float = DEFAULT_LINK_FACTOR,
) -> GamePhoto[BaccaratReport]:
    """The coup of a photo: the Player's and the Banker's cards by region or by side."""
    layout = _two_sides(
        reading,
        ("player", player_region),
        ("banker", banker_region),
        BankerRule(player_side),
        link_factor,
    )

    def report(hands: Sequence[PhotoHand]) -> BaccaratReport:
        player, banker = as_dealt(hands[0].codes(), hands[1].codes(), rules)
        return baccarat_report(player, banker, rules, stake, bet)

    return _photo("baccarat", reading, layout, report)


def _third_card_orders(cards: Sequence[AnyCard]) -> list[tuple[AnyCard, ...]]:
    """A side's cards as they may have been dealt: as read, then each other card taken as the
    third (the first two keeping their order)."""
    if len(cards) != 3:
        return [tuple(cards)]
    others = [(*(c for j, c in enumerate(cards) if j != i), cards[i]) for i in (1, 0)]
    return [tuple(cards), *others]


def as_dealt(
    player: Sequence[AnyCard], banker: Sequence[AnyCard], rules: BaccaratRules
) -> tuple[tuple[AnyCard, ...], tuple[AnyCard, ...]]:
    """The two sides' cards in the order they were dealt. A photo shows each side's cards in
    reading order, but a third card may lie anywhere: casinos lay it sideways, under or beside
    the first two. Of the orders that take one card of a three-card side as its third, the first
    (reading order first) that follows the tableau; reading order when none does, so that the
    coup names its breach. Every such order has the same totals, hence the same result."""
    read = (tuple(player), tuple(banker))
    for player_order in _third_card_orders(player):
        for banker_order in _third_card_orders(banker):
            try:
                if evaluate_coup(player_order, banker_order, rules).consistent:
                    return player_order, banker_order
            except RulesError:  # (a count, a joker or a duplicate: named with the cards as read)
                return read
    return read


def blackjack_photo(
    reading: Reading,
    rules: BlackjackRules,
    stake: Decimal,
    *,
    dealer_side: BankerRule | str = BankerRule.TOP,
    dealer_region: Region | None = None,
    player_regions: Sequence[Region] = (),
    link_factor: float = DEFAULT_LINK_FACTOR,
) -> GamePhoto[BlackjackRound]:
    """The round of a photo: the dealer's hand by region or by side, every other hand a
    player's (by region, or in reading order)."""
    layout = _dealer_and_players(
        reading, BankerRule(dealer_side), dealer_region, player_regions, link_factor
    )
    return _photo(
        "blackjack",
        reading,
        layout,
        lambda hands: blackjack_report(
            hands[0].codes(), [hand.codes() for hand in hands[1:]], rules, stake
        ),
    )


def paigow_photo(
    reading: Reading,
    rules: PaiGowRules,
    stake: Decimal,
    *,
    player_side: BankerRule | str = BankerRule.BOTTOM,
    player_region: Region | None = None,
    banker_region: Region | None = None,
    link_factor: float = DEFAULT_LINK_FACTOR,
) -> GamePhoto[PaiGowReport]:
    """The player's seven cards of a photo set by the house way; with a banker's seven (the
    other side), both set by the house way and settled."""
    layout = _two_sides(
        reading,
        ("player", player_region),
        ("banker", banker_region),
        BankerRule(player_side),
        link_factor,
        alone=True,
    )

    def score(hands: Sequence[PhotoHand]) -> PaiGowReport:
        player = house_way(hands[0].codes(), rules)
        banker = hands[1].codes() if len(hands) > 1 else None
        return paigow_report(player, "house_way", banker, rules, stake)

    return _photo("paigow", reading, layout, score)
