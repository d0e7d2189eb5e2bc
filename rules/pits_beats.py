"""Whether a Pits play beats the combination on the table, and why not.

Rules (seed 001): the next players must play the same kind of combination, with the same number
of cards and a higher rank (for same-rank groups the rank of the group, for sequences the top
rank). Between equal combinations (same kind, length and rank) one without wild cards beats one
that uses them. A single sequence all of one suit beats any single sequence of two or more suits
of the same length. Equal in everything, a play does not beat the table.
"""

from __future__ import annotations

from collections.abc import Iterable

from rules.cards import AnyCard
from rules.errors import IllegalPlayError
from rules.pits_combos import (
    DEFAULT_PITS_RULES,
    Combination,
    CombinationError,
    PitsKind,
    PitsRules,
    classify_combination,
    combination_readings,
)

__all__ = ["Playable", "can_play", "play_readings", "verify_play", "why_not"]

Playable = Combination | Iterable[AnyCard]
"""A play or a table: a combination already read, or the cards themselves."""


def play_readings(
    play: Playable, rules: PitsRules = DEFAULT_PITS_RULES, kind: PitsKind | None = None
) -> tuple[Combination, ...]:
    """The readings of a play: the combination itself, the asked ``kind``, or every reading.

    Raises CombinationError when the cards are no combination (or not that kind).
    """
    if isinstance(play, Combination):
        if kind is not None and play.kind is not kind:
            raise CombinationError(f"{_named(play)} is not a {kind.words}")
        return (play,)
    cards = tuple(play)
    if kind is not None:
        return (classify_combination(cards, rules, kind),)
    return combination_readings(cards, rules)


def _article(length: int) -> str:
    spoken = str(length)
    return "an" if spoken.startswith("8") or spoken in ("11", "18") else "a"


def _named(combination: Combination) -> str:
    """The combination in words with its article: ``a pair of 9s``, ``an 8-card sequence ...``."""
    text = combination.describe()
    spoken = text.split("-", 1)[0] if combination.kind.is_sequence else ""
    return f"{_article(int(spoken)) if spoken.isdigit() else 'a'} {text}"


def _mismatch(play: Combination, table: Combination) -> str:
    """Why two combinations of different kinds or lengths cannot meet."""
    if play.kind is not table.kind:
        return f"a {play.kind.words} cannot beat a {table.kind.words}"
    return (
        f"{_article(play.length)} {play.length}-card {play.kind.words} cannot beat "
        f"{_article(table.length)} {table.length}-card {table.kind.words}"
    )


def why_not(play: Combination, table: Combination) -> str | None:
    """The reason ``play`` does not beat ``table``, or None when it does."""
    if play.beats(table):
        return None
    if not play.meets(table):
        return _mismatch(play, table)
    if table.one_suit and not play.one_suit:
        return (
            f"a {play.kind.words} of two or more suits does not beat "
            f"a {table.kind.words} all of one suit"
        )
    if play.rank < table.rank:
        if play.kind.is_sequence:
            return (
                f"a {play.kind.words} up to {play.rank.symbol} does not beat "
                f"a {table.kind.words} up to {table.rank.symbol}"
            )
        return f"{play.rank.symbol} does not beat {table.rank.symbol}"
    if table.natural and not play.natural:
        return (
            f"{_named(play)} does not beat {_named(table)}: between equal combinations "
            "the one without wild cards is stronger"
        )
    return f"{_named(play)} only equals {_named(table)}: a play must be stronger than the table"


def verify_play(
    play: Playable,
    table: Playable | None = None,
    rules: PitsRules = DEFAULT_PITS_RULES,
    kind: PitsKind | None = None,
) -> Combination:
    """Return the reading of ``play`` that may go on ``table``, or raise IllegalPlayError.

    An empty table (None or no cards) takes any combination. Otherwise some reading of the play
    must beat some reading of the table (cards that read several ways, like 5 JB JR, may follow a
    triple or a sequence); ``kind`` restricts the play to one reading. The error's message says
    why in plain words ("a pair cannot beat a sequence", "7 does not beat 9"). CombinationError,
    a subclass, means the play is no combination at all; the table must be one.
    """
    plays = play_readings(play, rules, kind)
    if table is None:
        return plays[0]
    if isinstance(table, Combination):
        tables: tuple[Combination, ...] = (table,)
    else:
        table_cards = tuple(table)
        if not table_cards:
            return plays[0]
        tables = combination_readings(table_cards, rules)
    meeting = [(option, target) for target in tables for option in plays if option.meets(target)]
    for option, target in meeting:
        if option.beats(target):
            return option
    option, target = meeting[0] if meeting else (plays[0], tables[0])
    raise IllegalPlayError(why_not(option, target) or "the play does not beat the table")


def can_play(
    play: Playable,
    table: Playable | None = None,
    rules: PitsRules = DEFAULT_PITS_RULES,
    kind: PitsKind | None = None,
) -> bool:
    """True when ``verify_play`` accepts the play; False for an illegal play or no combination."""
    try:
        verify_play(play, table, rules, kind)
    except IllegalPlayError:
        return False
    return True
