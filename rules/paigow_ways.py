"""Pai Gow Poker house ways as data: the published rules of named houses for setting a hand.

A *house way* is the fixed procedure a casino's dealer follows to set seven cards into a
five-card high hand ("back") and a two-card low hand ("front"). Published ways agree on most
hands and differ on a few: the two-pair table above all, four of a kind, the full house of 2s
with A-K, a pair and an ace beside a straight or flush. :class:`HouseWay` holds those
differences as data; :func:`rules.paigow.house_way` applies a way.

Named ways (sources and the product's readings in ``docs/paigow-house-ways.md``):

- ``foxwoods`` (the default): the Foxwoods house way as published by the Wizard of Odds.
- ``gold-star``: the standard house way taught by the Gold Star School of Gaming (Las Vegas),
  with the Atlantic City two-pair table (Bally's Atlantic City; the same table Son of Dave
  reproduces for Trump Plaza).

Ranks in this module are poker values: 2..10, J = 11, Q = 12, K = 13, A = 14. In every rule the
joker counts as an ace (it can only be an ace outside a straight or flush).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from rules.errors import ProfileError, UnknownProfileError
from rules.poker_hands import ACE_VALUE

__all__ = [
    "ANY_SINGLE",
    "DEFAULT_HOUSE_WAY",
    "FOXWOODS",
    "GOLD_STAR",
    "HOUSE_WAYS",
    "FourOfAKindBand",
    "FullHouseKept",
    "HouseWay",
    "PairAndAce",
    "TwoPairBand",
    "get_house_way",
    "ranks",
]

ACE = ACE_VALUE
KING = 13
JACK = 11
TEN = 10
LOWEST = 2

ANY_SINGLE = LOWEST
"""``keep_with`` that every single meets: the group always stays together."""


def ranks(low: int, high: int) -> range:
    """The poker values ``low`` to ``high``, both included."""
    return range(low, high + 1)


ANY_PAIR = ranks(LOWEST, ACE)


def _check_keep_with(keep_with: int | None, where: str) -> None:
    if keep_with is not None and keep_with not in ANY_PAIR:
        raise ProfileError(f"{where}: keep_with {keep_with!r} is no rank (2..14 or None)")


def _check_span(span: range, where: str) -> None:
    if span.step != 1 or not span or span.start < LOWEST or span.stop - 1 > ACE:
        raise ProfileError(f"{where}: {span!r} is no span of ranks within 2..14")


@dataclass(frozen=True, slots=True)
class TwoPairBand:
    """One line of a two-pair table: a two pair whose higher pair lies in ``higher`` and lower
    pair in ``lower`` keeps both pairs in the high hand when its highest single is at least
    ``keep_with`` (that single and the next go low); otherwise the pairs are split, the lower
    pair low. ``keep_with`` None: always split."""

    higher: range
    lower: range
    keep_with: int | None

    def __post_init__(self) -> None:
        _check_span(self.higher, "two-pair band")
        _check_span(self.lower, "two-pair band")
        _check_keep_with(self.keep_with, "two-pair band")

    def matches(self, higher: int, lower: int) -> bool:
        """Whether this line covers pairs of ``higher`` and ``lower``."""
        return higher in self.higher and lower in self.lower


@dataclass(frozen=True, slots=True)
class FourOfAKindBand:
    """Four of a kind of a rank in ``quads`` with no other pair: kept in the high hand when the
    highest single is at least ``keep_with`` (the two highest singles go low), otherwise split
    into a pair in each hand. ``keep_with`` :data:`ANY_SINGLE`: never split; None: always
    split."""

    quads: range
    keep_with: int | None

    def __post_init__(self) -> None:
        _check_span(self.quads, "four-of-a-kind band")
        _check_keep_with(self.keep_with, "four-of-a-kind band")


@dataclass(frozen=True, slots=True)
class FullHouseKept:
    """An exception to "the pair of a full house goes low": a full house whose pair is of rank
    ``pair`` and whose two singles are ``singles`` (high, low) stays whole; the singles go low."""

    pair: int
    singles: tuple[int, int]

    def __post_init__(self) -> None:
        for value in (self.pair, *self.singles):
            if value not in ANY_PAIR:
                raise ProfileError(f"full-house exception: {value!r} is no rank (2..14)")
        if self.singles[0] <= self.singles[1]:
            raise ProfileError(f"full-house exception: singles {self.singles!r} not high, low")

    def matches(self, pair: int, singles: tuple[int, ...]) -> bool:
        """Whether a full house with pair ``pair`` and singles ``singles`` (high first) stays."""
        return pair == self.pair and singles == self.singles


@dataclass(frozen=True, slots=True)
class PairAndAce:
    """An exception to playing a straight or flush with one pair: with a pair in ``pairs`` and an
    ace single, play the one-pair way instead (the pair high, the ace and the next single low).
    ``only_if_better``: only when that low hand beats the one the straight or flush leaves."""

    pairs: range
    only_if_better: bool

    def __post_init__(self) -> None:
        _check_span(self.pairs, "pair-and-ace exception")


@dataclass(frozen=True, slots=True)
class HouseWay:
    """A named house way: the rules where published ways differ, as data.

    The rules every named way shares are applied by :func:`rules.paigow.house_way` and listed
    there. ``two_pair`` is read top down, the first matching line deciding; it must cover every
    two pair. ``four_of_a_kind`` must cover every rank exactly once.
    """

    name: str
    title: str
    source: str
    two_pair: tuple[TwoPairBand, ...]
    four_of_a_kind: tuple[FourOfAKindBand, ...]
    full_house_kept: tuple[FullHouseKept, ...]
    pair_and_ace: PairAndAce

    def __post_init__(self) -> None:
        where = f"house way {self.name!r}"
        if not self.name or self.name != self.name.strip().lower() or " " in self.name:
            raise ProfileError(f"{where}: a name is lower case without spaces")
        for higher in ANY_PAIR:
            for lower in ranks(LOWEST, higher - 1):
                if not any(band.matches(higher, lower) for band in self.two_pair):
                    raise ProfileError(f"{where}: no two-pair rule for {higher}s and {lower}s")
        for value in ANY_PAIR:
            covering = [band for band in self.four_of_a_kind if value in band.quads]
            if len(covering) != 1:
                raise ProfileError(
                    f"{where}: four {value}s covered by {len(covering)} four-of-a-kind rules, "
                    "expected 1"
                )

    def keeps_two_pair(self, higher: int, lower: int, best_single: int) -> bool:
        """Whether two pair of ``higher`` and ``lower`` stay together with ``best_single``."""
        band = next(band for band in self.two_pair if band.matches(higher, lower))
        return band.keep_with is not None and best_single >= band.keep_with

    def keeps_four_of_a_kind(self, quads: int, best_single: int) -> bool:
        """Whether four of a kind of ``quads`` (no other pair) stays together."""
        band = next(band for band in self.four_of_a_kind if quads in band.quads)
        return band.keep_with is not None and best_single >= band.keep_with

    def keeps_full_house(self, pair: int, singles: tuple[int, ...]) -> bool:
        """Whether a full house with pair ``pair`` and ``singles`` (high first) stays whole."""
        return any(kept.matches(pair, singles) for kept in self.full_house_kept)


FOXWOODS_TWO_PAIR = (
    # Foxwoods goes by the higher pair alone. Aces to jacks: always split.
    TwoPairBand(ranks(JACK, ACE), ANY_PAIR, None),
    # 10s to 7s: both pairs high when an ace can go low, else split.
    TwoPairBand(ranks(7, TEN), ANY_PAIR, ACE),
    # 6s to 3s: both pairs high when a king or an ace can go low, else split.
    TwoPairBand(ranks(3, 6), ANY_PAIR, KING),
)

_LOW_PAIRS = ranks(2, 6)
_MIDDLE_PAIRS = ranks(7, TEN)
_HIGH_PAIRS = ranks(JACK, KING)

ATLANTIC_CITY_TWO_PAIR = (
    # Bally's Atlantic City (and Trump Plaza, as Son of Dave reproduces it) group the pairs as
    # low (2-6), middle (7-10) and high (J-K). A pair of aces with any other pair: always split.
    TwoPairBand(ranks(ACE, ACE), ANY_PAIR, None),
    # Low with low, or low with middle: split unless the hand holds a king or an ace.
    TwoPairBand(_LOW_PAIRS, _LOW_PAIRS, KING),
    TwoPairBand(_MIDDLE_PAIRS, _LOW_PAIRS, KING),
    # Low with high, or middle with middle: split unless the hand holds an ace.
    TwoPairBand(_HIGH_PAIRS, _LOW_PAIRS, ACE),
    TwoPairBand(_MIDDLE_PAIRS, _MIDDLE_PAIRS, ACE),
    # Middle with high, or high with high: always split.
    TwoPairBand(_HIGH_PAIRS, ranks(7, KING), None),
)

FOXWOODS = HouseWay(
    name="foxwoods",
    title="Foxwoods",
    source="https://wizardofodds.com/games/pai-gow-poker/house-way/foxwoods/",
    two_pair=FOXWOODS_TWO_PAIR,
    four_of_a_kind=(
        # Jacks to aces: always split.
        FourOfAKindBand(ranks(JACK, ACE), None),
        # 7s to 10s: kept high when at least a king can go low, else split.
        FourOfAKindBand(ranks(7, TEN), KING),
        # 6s and lower: never split.
        FourOfAKindBand(ranks(2, 6), ANY_SINGLE),
    ),
    # The highest pair that can go low goes low, with no exception.
    full_house_kept=(),
    # A pair of 10s to kings with an ace beside a straight or flush: the ace goes low and the
    # pair high when that improves the low hand.
    pair_and_ace=PairAndAce(ranks(TEN, KING), only_if_better=True),
)
"""The Foxwoods house way (the default)."""

GOLD_STAR = HouseWay(
    name="gold-star",
    title="Gold Star School of Gaming",
    source="http://www.goldstarschool.com/house-ways/",
    two_pair=ATLANTIC_CITY_TWO_PAIR,
    four_of_a_kind=(
        # 2s to 6s: always kept together.
        FourOfAKindBand(ranks(2, 6), ANY_SINGLE),
        # 7s to 10s: split unless an ace can go low.
        FourOfAKindBand(ranks(7, TEN), ACE),
        # Jacks to aces: always split.
        FourOfAKindBand(ranks(JACK, ACE), None),
    ),
    # A full house whose pair is 2s, with an ace and a king beside it, stays whole.
    full_house_kept=(FullHouseKept(2, (ACE, KING)),),
    # A pair of 10s or better with an ace beside a straight or flush: the pair high, the ace low.
    pair_and_ace=PairAndAce(ranks(TEN, KING), only_if_better=False),
)
"""The Gold Star School of Gaming standard house way, with the Atlantic City two-pair table."""

HOUSE_WAYS: Mapping[str, HouseWay] = MappingProxyType(
    {way.name: way for way in (FOXWOODS, GOLD_STAR)}
)
"""The named house ways: ``foxwoods`` (the default) and ``gold-star``."""

DEFAULT_HOUSE_WAY = FOXWOODS.name
"""The house way used when none is named."""


def get_house_way(way: str | HouseWay) -> HouseWay:
    """The house way called ``way`` (a way passes through); ProfileError when unknown."""
    if isinstance(way, HouseWay):
        return way
    try:
        return HOUSE_WAYS[way]
    except (KeyError, TypeError):
        known = ", ".join(HOUSE_WAYS)
        raise UnknownProfileError(f"unknown house way {way!r}: known ways are {known}") from None
