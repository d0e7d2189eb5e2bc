"""Zheng Shangyou / Pits from a photo or card codes: the play's combination and its verdict.

The cards of the photo are one play (``rules.pits`` reads the combination they make); the table
play they must beat is given as card codes, or is the cards inside a ``table_region`` of the
same photo. A play with a card read below the recognizer's confidence threshold gets its
combination and reason reported, but no verdict (``legal`` is None): the verdict would rest on
a guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from handreader.tables.grouping import Region, assign_regions
from handreader.tables.scoring import TableCard, flag_names
from rules.cards import AnyCard, check_distinct, parse_card, parse_cards
from rules.errors import HandError, IllegalPlayError, RulesError
from rules.pits import (
    DEFAULT_PITS_RULES,
    Combination,
    CombinationError,
    PitsKind,
    PitsRules,
    combination_readings,
    play_readings,
    verify_play,
)
from vision.detections import Reading, ReadingFlag

__all__ = ["PitsResult", "judge_play", "judge_reading"]


@dataclass(frozen=True, slots=True)
class PitsResult:
    """A Pits play judged against the table.

    ``combination`` is the reading of the play that may go on the table (or, when illegal, the
    reading compared); None when the cards are no combination. ``legal`` is None when it cannot
    be decided: no cards, an uncertain card, or a table read from the photo that is no
    combination.
    """

    cards: tuple[TableCard, ...]
    table: tuple[TableCard, ...]
    combination: Combination | None
    readings: tuple[Combination, ...]
    legal: bool | None
    reason: str | None
    flags: ReadingFlag = ReadingFlag.NONE

    def to_dict(self) -> dict[str, object]:
        """JSON of the verdict (see the API documentation)."""
        chosen = self.combination
        return {
            "cards": [card.to_dict() for card in self.cards],
            "table": [card.to_dict() for card in self.table],
            "kind": None if chosen is None else chosen.kind.value,
            "rank": None if chosen is None else chosen.rank.symbol,
            "natural": None if chosen is None else chosen.natural,
            "one_suit": None if chosen is None else chosen.one_suit,
            "description": None if chosen is None else chosen.describe(),
            "readings": [reading.kind.value for reading in self.readings],
            "legal": self.legal,
            "reason": self.reason,
            "flags": flag_names(self.flags),
        }


def _parse_all(cards: Sequence[TableCard]) -> tuple[AnyCard, ...]:
    return tuple(parse_card(card.code) for card in cards)


def judge_play(
    play: Sequence[TableCard],
    table: Sequence[TableCard] = (),
    rules: PitsRules = DEFAULT_PITS_RULES,
    *,
    flags: ReadingFlag = ReadingFlag.NONE,
    table_read: bool = False,
    kind: PitsKind | None = None,
) -> PitsResult:
    """Judge a Pits play against the table play (empty: the play leads); ``kind`` reads the
    play as that kind only, where its cards read several ways (5H JB JR).

    Raises CardError for a card code the rules do not know. A table that is no combination
    raises CombinationError (a ValueError) when given by the caller; when it was read from the
    photo (``table_read``) it is reported instead, with no verdict.
    """
    cards, on_table = tuple(play), tuple(table)
    played, target = _parse_all(cards), _parse_all(on_table)
    doubtful = [card.code for card in cards if card.uncertain]
    if doubtful:
        flags |= ReadingFlag.LOW_CONFIDENCE
    undecided = None if doubtful else False

    def verdict(
        combination: Combination | None,
        readings: tuple[Combination, ...],
        legal: bool | None,
        reason: str | None,
    ) -> PitsResult:
        return PitsResult(cards, on_table, combination, readings, legal, reason, flags)

    tables: tuple[Combination, ...] = ()
    bad_table: str | None = None
    if target:
        try:
            tables = combination_readings(target, rules)
        except CombinationError as error:
            bad_table = f"the table play {error}"  # "<its cards> is no combination: why"
            if not table_read:
                raise CombinationError(bad_table) from None
    if not played:
        return verdict(None, (), None, "no cards in the play")
    try:
        readings = play_readings(played, rules, kind)
    except RulesError as error:  # no combination, or a card repeated
        return verdict(None, (), undecided, str(error))
    if bad_table is not None:
        return verdict(readings[0], readings, None, bad_table)
    try:
        chosen = verify_play(played, target or None, rules, kind)
    except IllegalPlayError as error:
        meeting = [option for option in readings for goal in tables if option.meets(goal)]
        return verdict((meeting or list(readings))[0], readings, undecided, str(error))
    if doubtful:
        return verdict(chosen, readings, None, f"uncertain reading of {', '.join(doubtful)}")
    return verdict(chosen, readings, True, None)


def judge_reading(
    reading: Reading,
    table: Sequence[str] = (),
    table_region: Region | None = None,
    rules: PitsRules = DEFAULT_PITS_RULES,
    copies: int = 1,
    kind: PitsKind | None = None,
) -> PitsResult:
    """Judge the cards of a photo as one Pits play.

    The table play is ``table`` (card codes), or the cards inside ``table_region`` of the same
    photo when given (the play is then the cards outside it; HandError when both are given).
    A card given in ``table`` and also read in the play, more often than ``copies`` (the packs
    in play) allow, is HandError, as it is for card codes. ``kind``: as for :func:`judge_play`.
    """
    cards = reading.cards
    given = parse_cards(list(table))
    on_table = [TableCard(str(card)) for card in given]
    if table_region is not None and given:
        raise HandError("the table play is given twice: as cards and as a region; give one")
    if given:
        played = [card for card in parse_cards([card.code for card in cards]) if card in given]
        check_distinct([*played, *given], copies)
    if table_region is not None:
        found, cards = assign_regions(cards, [table_region], reading.size_wh)
        on_table = [TableCard.from_reading(card) for card in found[0].cards]
    play = [TableCard.from_reading(card) for card in cards]
    read = table_region is not None
    return judge_play(play, on_table, rules, flags=reading.flags, table_read=read, kind=kind)
