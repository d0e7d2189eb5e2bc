"""Niu Niu house rules as data: score names, special hands, multiplier tables and profiles.

A :class:`NiuProfile` is a frozen record of every option the sources disagree on (RULES.md
section 1, seeds 000, 002 and 003). The scoring, comparison and settlement code reads these
fields; it never tests a profile's name. Three profiles come from the seeds:

``classic`` (seed 000, French)
    Niu Niu > Niu 9 > .. > Niu 1 > No Niu; no special hands; equal ranks tie (option:
    ``tie_break=TieBreak.HIGH_CARD``). The seed names no payouts: this product settles
    an equal bet 1:1 and a double bet on the ``standard`` table, without commission.
``trainer`` (seed 002, Arabic, the Cambodian casino game of wizardofodds.com)
    Ultimate (five J/Q/K) > Niu Niu > .. > No Niu; equal ranks go to the highest card by
    rank (K > Q > J > 10 .. 2 > A), then by that card's suit (S > H > C > D); Equal bet 1x and
    Double bet on the ``double`` table, 5% commission on winnings.
``app`` (seed 003, Arabic, the "Niu-Niu Poker" app)
    Ultimate > Niu-Niu > Big Point (Niu 9..7) > Small Point (Niu 6..1) > High Card; equal
    patterns compare the two-card points (High Card too: the best two cards of a hand without
    bull, ``no_bull_points``), still equal is a push; one bet, paid on the
    player's winning pattern (``app`` table), a loss costs the stake.

Use :meth:`NiuProfile.replace` to switch house options, e.g.
``get_profile("classic").replace(special_hands=ALL_SPECIAL_HANDS, decks=2)``.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import Any

from rules.cards import MAX_PACKS, Suit
from rules.errors import ProfileError, UnknownProfileError
from rules.money import ZERO, to_money

__all__ = [
    "ALL_SPECIAL_HANDS",
    "DEFAULT_PROFILE",
    "MULTIPLIER_TABLES",
    "NIU_PROFILES",
    "ORDINARY_SCORES",
    "SUIT_ORDER_SHCD",
    "SUIT_ORDER_SHDC",
    "BetRule",
    "BetType",
    "MultiplierTable",
    "NiuProfile",
    "NiuScore",
    "TieBreak",
    "TieRule",
    "get_profile",
    "get_table",
]


class NiuScore(enum.Enum):
    """The score of a hand; the value is the name used in JSON and on the command line."""

    NO_NIU = "no_niu"
    NIU_1 = "niu_1"
    NIU_2 = "niu_2"
    NIU_3 = "niu_3"
    NIU_4 = "niu_4"
    NIU_5 = "niu_5"
    NIU_6 = "niu_6"
    NIU_7 = "niu_7"
    NIU_8 = "niu_8"
    NIU_9 = "niu_9"
    NIU_NIU = "niu_niu"
    DOUBLE_OX = "double_ox"
    FOUR_FACE = "four_face"
    ULTIMATE = "ultimate"
    BOMB = "bomb"
    FIVE_SMALL = "five_small"

    @property
    def label(self) -> str:
        """A readable name: ``"Niu 4"``, ``"No Niu"``, ``"Ultimate"``."""
        return _LABELS[self]

    @property
    def is_special(self) -> bool:
        """True for the hands a profile may put above Niu Niu (not the ordinary scores)."""
        return self in ALL_SPECIAL_HANDS

    @classmethod
    def for_points(cls, points: int) -> NiuScore:
        """The ordinary score of a hand with a bull whose last two cards end in ``points``."""
        if not 0 <= points <= 9:
            raise ValueError(f"points must be 0..9, got {points!r}")
        return ORDINARY_SCORES[10 if points == 0 else points]


_LABELS: dict[NiuScore, str] = {
    NiuScore.NO_NIU: "No Niu",
    **{NiuScore(f"niu_{points}"): f"Niu {points}" for points in range(1, 10)},
    NiuScore.NIU_NIU: "Niu Niu",
    NiuScore.DOUBLE_OX: "Double ox",
    NiuScore.FOUR_FACE: "Four face",
    NiuScore.ULTIMATE: "Ultimate",
    NiuScore.BOMB: "Bomb",
    NiuScore.FIVE_SMALL: "Five small",
}

ORDINARY_SCORES: tuple[NiuScore, ...] = (
    NiuScore.NO_NIU,
    *(NiuScore(f"niu_{points}") for points in range(1, 10)),
    NiuScore.NIU_NIU,
)
"""No Niu, Niu 1 .. Niu 9, Niu Niu: index ``i`` is the ordinary score of strength ``i``."""

ALL_SPECIAL_HANDS: tuple[NiuScore, ...] = (
    NiuScore.FIVE_SMALL,
    NiuScore.BOMB,
    NiuScore.ULTIMATE,
    NiuScore.FOUR_FACE,
)
"""The special hands in the usual order of Chinese app rules, strongest first (RULES.md):
five small bull (five cards under 5, total <= 10) > bomb (four of a kind) > five face cards >
four face cards + one 10."""

SUIT_ORDER_SHCD: tuple[Suit, ...] = (Suit.SPADES, Suit.HEARTS, Suit.CLUBS, Suit.DIAMONDS)
"""Spades > hearts > clubs > diamonds: the default (seed 002)."""

SUIT_ORDER_SHDC: tuple[Suit, ...] = (Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS)
"""Spades > hearts > diamonds > clubs: the house variant."""


class TieBreak(enum.Enum):
    """What decides between two hands of equal score."""

    NONE = "none"
    """Nothing: equal scores are equal hands (seed 000 default, seed 003)."""
    HIGH_CARD = "high_card"
    """The highest card of each hand by rank K > .. > 2 > A, then that card's suit (seed 002)."""


class TieRule(enum.Enum):
    """What a banker game does with a player hand exactly as strong as the banker's."""

    PUSH = "push"
    """A tie: the player's bet is returned."""
    BANKER_WINS = "banker_wins"
    """The banker takes the tie as a win."""


class BetType(enum.Enum):
    """The bets of the banker game (seed 002): 1x, or a multiple set by the winning hand."""

    EQUAL = "equal"
    DOUBLE = "double"


@dataclass(frozen=True, slots=True)
class MultiplierTable:
    """How many times the stake a hand pays, by score; scores not listed pay ``default``."""

    name: str
    multiples: Mapping[NiuScore, int]
    default: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "multiples", MappingProxyType(dict(self.multiples)))
        bad = {score: value for score, value in self.multiples.items() if value < 1}
        if self.default < 1 or bad:
            raise ProfileError(f"multiplier table {self.name!r}: multiples must be >= 1, got {bad}")

    def __hash__(self) -> int:
        return hash((self.name, tuple(sorted((s.value, m) for s, m in self.multiples.items()))))

    def multiple(self, score: NiuScore) -> int:
        """The multiple of the stake that a hand of this score pays."""
        return self.multiples.get(score, self.default)


def _points(low: int, high: int, multiple: int) -> dict[NiuScore, int]:
    return {NiuScore(f"niu_{points}"): multiple for points in range(low, high + 1)}


MULTIPLIER_TABLES: Mapping[str, MultiplierTable] = MappingProxyType(
    {
        table.name: table
        for table in (
            MultiplierTable("flat", {}),
            # Seed 002 (wizardofodds, Cambodia), Double bet: Ultimate 5x, Niu Niu 3x, Niu 7-9 2x,
            # anything else 1x. The seed's game has no other special hand; when a house enables
            # them they pay as on the ``standard`` table rather than 1x.
            MultiplierTable(
                "double",
                {
                    **_points(7, 9, 2),
                    NiuScore.NIU_NIU: 3,
                    NiuScore.DOUBLE_OX: 3,
                    NiuScore.FOUR_FACE: 4,
                    NiuScore.ULTIMATE: 5,
                    NiuScore.BOMB: 5,
                    NiuScore.FIVE_SMALL: 5,
                },
            ),
            # RULES.md example: 1x No Niu .. Niu 6, 2x Niu 7-9, 3x Niu Niu, 4x four face,
            # 5x five face. Bomb, five small and double ox are not in the example: this product
            # pays them like the neighbouring hands (5x, 5x, 3x).
            MultiplierTable(
                "standard",
                {
                    **_points(7, 9, 2),
                    NiuScore.NIU_NIU: 3,
                    NiuScore.DOUBLE_OX: 3,
                    NiuScore.FOUR_FACE: 4,
                    NiuScore.ULTIMATE: 5,
                    NiuScore.BOMB: 5,
                    NiuScore.FIVE_SMALL: 5,
                },
            ),
            # "Super" tables: Niu n pays n x, Niu Niu 10x; special hands pay the Niu Niu rate.
            MultiplierTable(
                "super",
                {
                    **{NiuScore(f"niu_{points}"): points for points in range(1, 10)},
                    NiuScore.NIU_NIU: 10,
                    NiuScore.DOUBLE_OX: 10,
                    NiuScore.FOUR_FACE: 10,
                    NiuScore.ULTIMATE: 10,
                    NiuScore.BOMB: 10,
                    NiuScore.FIVE_SMALL: 10,
                },
            ),
            # Seed 003 payout on the player's winning pattern: Ultimate 5:1, Niu-Niu 3:1,
            # Big Point (7-9) 2:1, Small Point (1-6) 1:1, High Card 1:1.
            MultiplierTable(
                "app",
                {**_points(7, 9, 2), NiuScore.NIU_NIU: 3, NiuScore.ULTIMATE: 5},
            ),
        )
    }
)
"""The named multiplier tables: ``flat``, ``double``, ``standard``, ``super``, ``app``."""


def get_table(name: str) -> MultiplierTable:
    """The multiplier table called ``name``; ProfileError when there is none."""
    try:
        return MULTIPLIER_TABLES[name]
    except KeyError:
        known = ", ".join(MULTIPLIER_TABLES)
        raise UnknownProfileError(
            f"unknown multiplier table {name!r}: known tables are {known}"
        ) from None


@dataclass(frozen=True, slots=True)
class BetRule:
    """How one bet settles.

    A player win pays ``win_table`` looked up by the *player's* hand (or by the winning hand,
    which is the same); a player loss costs ``loss_table`` looked up by the *banker's* hand.
    ``commissioned`` bets pay the profile's commission on the winnings.
    """

    win_table: MultiplierTable
    loss_table: MultiplierTable
    commissioned: bool


@dataclass(frozen=True, slots=True)
class NiuProfile:
    """Every Niu Niu house option; scoring and settlement read these fields, never ``name``.

    Attributes:
        name: the profile's name, for display only.
        special_hands: enabled special hands, strongest first; all rank above Niu Niu.
        ten_is_face: count 10 as a face card for ``ultimate`` (five face) and ``four_face``.
        suit_order: the suits strongest first, used by ``TieBreak.HIGH_CARD``.
        tie_break: what decides between equal scores.
        ties: in a banker game, what a full tie means: push, or a banker win.
        swap_three_six: Malaysian Ngau: a 3 may count as 6 and a 6 as 3, whichever helps.
        triple_bull: Malaysian Ngau: three cards of one rank also make a bull.
        double_ox: Malaysian Ngau: last two cards forming a pair rank above Niu Niu (and below
            the special hands); between two such hands the higher pair wins.
        no_bull_points: two hands without a bull compare the best last digit that two of
            their cards make (0 lowest). Seed 003: the player splits 3 + 2 freely, equal
            patterns compare the two-card points, and High Card pays 1:1, so High Card can win.
        decks: how many 52-card decks the game uses; a card may appear that many times.
        bets: the bets offered and how each settles.
        default_bet: the bet used when none is named.
        commission_rate: the share of the winnings a commissioned bet pays to the house.
    """

    name: str
    special_hands: tuple[NiuScore, ...] = ()
    ten_is_face: bool = False
    suit_order: tuple[Suit, ...] = SUIT_ORDER_SHCD
    tie_break: TieBreak = TieBreak.NONE
    ties: TieRule = TieRule.PUSH
    swap_three_six: bool = False
    triple_bull: bool = False
    double_ox: bool = False
    no_bull_points: bool = False
    decks: int = 1
    bets: Mapping[BetType, BetRule] = field(default_factory=dict)
    default_bet: BetType = BetType.EQUAL
    commission_rate: Decimal = ZERO

    def __post_init__(self) -> None:
        object.__setattr__(self, "bets", MappingProxyType(dict(self.bets)))
        object.__setattr__(self, "special_hands", tuple(self.special_hands))
        object.__setattr__(self, "suit_order", tuple(self.suit_order))
        where = f"profile {self.name!r}"
        try:
            object.__setattr__(self, "commission_rate", to_money(self.commission_rate))
        except ValueError:
            raise ProfileError(
                f"{where}: commission rate must be a number, got {self.commission_rate!r}"
            ) from None
        not_special = [s.value for s in self.special_hands if s not in ALL_SPECIAL_HANDS]
        if not_special:
            raise ProfileError(f"{where}: not special hands: {not_special}")
        if len(set(self.special_hands)) != len(self.special_hands):
            raise ProfileError(f"{where}: special hand listed twice in {self.special_hands!r}")
        if sorted(s.value for s in self.suit_order) != sorted(s.value for s in Suit):
            raise ProfileError(
                f"{where}: suit order must list each suit once, got {self.suit_order!r}"
            )
        if not isinstance(self.decks, int) or self.decks < 1:
            raise ProfileError(f"{where}: decks must be a whole number >= 1, got {self.decks!r}")
        if self.decks > MAX_PACKS:
            raise ProfileError(f"{where}: decks must be at most {MAX_PACKS}, got {self.decks!r}")
        if not 0 <= self.commission_rate < 1:
            raise ProfileError(
                f"{where}: commission rate must be in [0, 1), got {self.commission_rate}"
            )
        if self.bets and self.default_bet not in self.bets:
            raise ProfileError(f"{where}: default bet {self.default_bet.value!r} is not offered")

    def __hash__(self) -> int:
        values = [getattr(self, item.name) for item in dataclasses.fields(self)]
        return hash(tuple(tuple(v.items()) if isinstance(v, Mapping) else v for v in values))

    def replace(self, **changes: Any) -> NiuProfile:
        """A copy with some options changed (validated like a new profile)."""
        return dataclasses.replace(self, **changes)

    @property
    def score_order(self) -> tuple[NiuScore, ...]:
        """Every score this profile can give, weakest first."""
        order = list(ORDINARY_SCORES)
        if self.double_ox:
            order.append(NiuScore.DOUBLE_OX)
        order.extend(reversed(self.special_hands))
        return tuple(order)

    def tier(self, score: NiuScore) -> int:
        """The position of ``score`` in :attr:`score_order` (0 = No Niu); ProfileError if absent."""
        try:
            return self.score_order.index(score)
        except ValueError:
            raise ProfileError(f"profile {self.name!r} has no score {score.value!r}") from None

    def suit_strength(self, suit: Suit) -> int:
        """3 for the strongest suit of :attr:`suit_order` down to 0 for the weakest."""
        return 3 - self.suit_order.index(suit)

    def bet_rule(self, bet: BetType | None = None) -> BetRule:
        """How ``bet`` (default: :attr:`default_bet`) settles; ProfileError if not offered."""
        chosen = self.default_bet if bet is None else bet
        try:
            return self.bets[chosen]
        except KeyError:
            offered = ", ".join(b.value for b in self.bets) or "none"
            raise ProfileError(
                f"profile {self.name!r} offers no {chosen.value!r} bet (offered: {offered})"
            ) from None


_FLAT = MULTIPLIER_TABLES["flat"]

NIU_PROFILES: Mapping[str, NiuProfile] = MappingProxyType(
    {
        profile.name: profile
        for profile in (
            NiuProfile(
                name="classic",
                bets={
                    BetType.EQUAL: BetRule(_FLAT, _FLAT, commissioned=False),
                    BetType.DOUBLE: BetRule(
                        MULTIPLIER_TABLES["standard"], MULTIPLIER_TABLES["standard"], False
                    ),
                },
            ),
            NiuProfile(
                name="trainer",
                special_hands=(NiuScore.ULTIMATE,),
                tie_break=TieBreak.HIGH_CARD,
                bets={
                    BetType.EQUAL: BetRule(_FLAT, _FLAT, commissioned=True),
                    BetType.DOUBLE: BetRule(
                        MULTIPLIER_TABLES["double"], MULTIPLIER_TABLES["double"], True
                    ),
                },
                commission_rate=Decimal("0.05"),
            ),
            NiuProfile(
                name="app",
                special_hands=(NiuScore.ULTIMATE,),
                no_bull_points=True,
                bets={BetType.EQUAL: BetRule(MULTIPLIER_TABLES["app"], _FLAT, False)},
            ),
        )
    }
)
"""The profiles of the seeds: ``classic`` (000), ``trainer`` (002), ``app`` (003)."""


DEFAULT_PROFILE = "trainer"
"""The profile used when none is named: the rules the seed 002 trainer uses (the product's own)."""


def get_profile(profile: str | NiuProfile) -> NiuProfile:
    """The profile called ``profile`` (a profile passes through); ProfileError if unknown."""
    if isinstance(profile, NiuProfile):
        return profile
    try:
        return NIU_PROFILES[profile]
    except (KeyError, TypeError):
        known = ", ".join(NIU_PROFILES)
        raise UnknownProfileError(
            f"unknown Niu Niu profile {profile!r}: known are {known}"
        ) from None
