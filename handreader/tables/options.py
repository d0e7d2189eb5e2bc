"""How a Niu Niu table is to be read and scored: banker game or trainer, the banker rule or
regions, the profile, the bet and stake, the grouping (:class:`TableOptions`), re-exported by
:mod:`handreader.tables.scoring`."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TypeVar

from handreader.tables.grouping import DEFAULT_LINK_FACTOR, CardGroup, Region
from rules.errors import RulesError
from rules.niuniu_profiles import DEFAULT_PROFILE, BetType, NiuProfile, get_profile
from rules.settlement import parse_bet, parse_stake

__all__ = ["BankerRule", "TableMode", "TableOptions"]


class TableMode(enum.Enum):
    """Banker game (players against the banker) or trainer (rank 2 to 4 hands)."""

    BANKER = "banker"
    TRAINER = "trainer"


class BankerRule(enum.Enum):
    """Which group of a photo is the banker's when no banker region is given."""

    TOP = "top"
    BOTTOM = "bottom"
    LEFT = "left"
    RIGHT = "right"

    def pick(self, groups: Sequence[CardGroup]) -> int:
        """The index of the group nearest this edge of the image (by mean card centre); a group
        without cards (an empty region) only when every group is empty."""
        axis = 1 if self in (BankerRule.TOP, BankerRule.BOTTOM) else 0
        sign = 1.0 if self in (BankerRule.TOP, BankerRule.LEFT) else -1.0
        return min(
            range(len(groups)),
            key=lambda i: (not groups[i].cards, sign * groups[i].center_xy[axis]),
        )


_E = TypeVar("_E", bound=enum.Enum)


def _enum(kind: type[_E], value: _E | str, what: str) -> _E:
    if isinstance(value, kind):
        return value
    try:
        return kind(str(value).strip().lower())
    except ValueError:
        known = ", ".join(str(member.value) for member in kind)
        raise RulesError(f"unknown {what} {value!r}: known are {known}") from None


@dataclass(frozen=True, slots=True)
class TableOptions:
    """How to read a table: profile, mode, banker rule or regions, bet and stake, grouping.

    ``player_regions``, when given, define the hands (one per region, in seat order; cards in
    no region are left over); ``banker_region`` defines the banker's hand (the other cards are
    then clustered into players unless ``player_regions`` are given too).
    """

    profile: NiuProfile = field(default_factory=lambda: get_profile(DEFAULT_PROFILE))
    mode: TableMode = TableMode.BANKER
    banker: BankerRule = BankerRule.TOP
    banker_region: Region | None = None
    player_regions: tuple[Region, ...] = ()
    bet: BetType | None = None
    stake: Decimal = Decimal(1)
    link_factor: float = DEFAULT_LINK_FACTOR

    def __post_init__(self) -> None:
        # made or replaced (another profile for a live stream): never a bet the profile lacks
        if self.bet is not None:
            self.profile.bet_rule(self.bet)  # ProfileError when the profile does not offer it

    @classmethod
    def create(
        cls,
        *,
        profile: str | NiuProfile = DEFAULT_PROFILE,
        mode: TableMode | str = TableMode.BANKER,
        banker: BankerRule | str = BankerRule.TOP,
        banker_region: Region | None = None,
        player_regions: Sequence[Region] = (),
        bet: BetType | str | None = None,
        stake: int | float | str | Decimal = 1,
        link_factor: float = DEFAULT_LINK_FACTOR,
        decks: int | None = None,
    ) -> TableOptions:
        """Options from names and numbers; RulesError (a ValueError) names the bad one.
        ``decks``, when given, is the number of 52-card decks dealt from instead of the
        profile's (how many times a card may lie on the table)."""
        rules = get_profile(profile)
        if decks is not None:
            rules = rules.replace(decks=decks)
        bet_type = parse_bet(bet)
        return cls(
            profile=rules,
            mode=_enum(TableMode, mode, "mode"),
            banker=_enum(BankerRule, banker, "banker rule"),
            banker_region=banker_region,
            player_regions=tuple(player_regions),
            bet=bet_type,
            stake=parse_stake(stake),
            link_factor=link_factor,
        )
