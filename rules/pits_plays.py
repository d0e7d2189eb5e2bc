"""The legal plays of a Pits hand against the table.

``legal_plays`` lists every distinct combination the hand can make that beats the table, or every
combination the hand can lead when the table is empty. Distinct means distinct as a record
(kind, length, rank, natural, one_suit): the pair of 7s made of 7S 7H and the one made of 7D 7C
are one entry, while a natural pair of 7s and a pair of 7s using a 2 are two. Each entry carries
one set of the hand's cards that makes it (the one using the fewest wild cards), and those cards
read as that very combination (``combination_readings`` lists it).

The search never walks the subsets of the hand. Same-rank groups come from the count of each
rank. Sequences are scanned window by window (a kind, a number of ranks, a top rank), and a small
dynamic programme over the window's ranks tracks how many wild cards are used and, for single
sequences, which suits appear. A 27-card hand is listed in a few milliseconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rules.cards import AnyCard, Card, Joker, Suit, check_distinct
from rules.pits_beats import Playable
from rules.pits_combos import (
    DEFAULT_PITS_RULES,
    GROUP_KINDS,
    SEQUENCE_HIGH,
    SEQUENCE_KINDS,
    SEQUENCE_LOW,
    SEQUENCE_SPAN,
    Combination,
    PitsKind,
    PitsRank,
    PitsRules,
    combination_readings,
    pits_rank,
    sort_pits_cards,
)

__all__ = ["legal_plays"]

_MIXED: frozenset[Suit] = frozenset(Suit)
"""Suit state of a single sequence whose natural cards hold two or more suits."""
_KIND_ORDER = {kind: index for index, kind in enumerate(PitsKind)}


@dataclass(frozen=True, slots=True)
class _HandIndex:
    """The hand sorted by role: natural cards by rank, 2s, black and red jokers."""

    naturals: dict[PitsRank, tuple[AnyCard, ...]]
    twos: tuple[AnyCard, ...]
    black_jokers: tuple[AnyCard, ...]
    red_jokers: tuple[AnyCard, ...]

    @classmethod
    def of(cls, hand: Sequence[AnyCard]) -> _HandIndex:
        naturals: dict[PitsRank, list[AnyCard]] = {}
        twos: list[AnyCard] = []
        for card in sort_pits_cards(hand):
            rank = pits_rank(card)
            if rank is PitsRank.TWO:
                twos.append(card)
            elif not rank.is_wild:
                naturals.setdefault(rank, []).append(card)
        return cls(
            {rank: tuple(cards) for rank, cards in naturals.items()},
            tuple(twos),
            tuple(card for card in hand if card is Joker.BLACK),
            tuple(card for card in hand if card is Joker.RED),
        )

    @property
    def jokers(self) -> tuple[AnyCard, ...]:
        return self.black_jokers + self.red_jokers

    def wild_pool(self, kind: PitsKind) -> tuple[AnyCard, ...]:
        """The cards that may stand in for others in ``kind``: no 2 in a single sequence."""
        if kind is PitsKind.SEQUENCE:
            return self.jokers
        return self.twos + self.jokers


def _groups(index: _HandIndex, size: int, rules: PitsRules) -> list[Combination]:
    """Every distinct same-rank group of ``size`` cards the hand can make."""
    kind = GROUP_KINDS[size - 1]
    pool = index.wild_pool(kind)
    found: list[Combination] = []
    for rank, cards in index.naturals.items():
        if len(cards) >= size:
            found.append(Combination(kind, size, rank, True, False, cards[:size]))
        used = min(len(cards), size - 1)
        if size >= 2 and 0 < size - used <= len(pool):
            chosen = sort_pits_cards(cards[:used] + pool[: size - used])
            found.append(Combination(kind, size, rank, False, False, chosen))
    for twos in range(min(size, len(index.twos)) + 1):
        for blacks in range(min(size - twos, len(index.black_jokers)) + 1):
            reds = size - twos - blacks
            if reds <= len(index.red_jokers):
                chosen = index.twos[:twos] + index.black_jokers[:blacks] + index.red_jokers[:reds]
                found.append(combination_readings(chosen, rules)[0])
    return found


def _merge_suits(state: frozenset[Suit], card: AnyCard) -> frozenset[Suit]:
    if not isinstance(card, Card) or card.suit in state:
        return state
    merged = state | {card.suit}
    return _MIXED if len(merged) > 1 else merged


def _rank_options(
    cards: tuple[AnyCard, ...], width: int, must_hold_natural: bool
) -> list[tuple[tuple[AnyCard, ...], int]]:
    """Ways to fill one rank of a sequence: (natural cards used, wild cards needed)."""
    if width == 1:
        options: list[tuple[tuple[AnyCard, ...], int]] = [] if must_hold_natural else [((), 1)]
        seen: set[Suit] = set()
        for card in cards:
            if isinstance(card, Card) and card.suit not in seen:
                seen.add(card.suit)
                options.append(((card,), 0))
        return options
    low = 1 if must_hold_natural else 0
    return [(cards[:used], width - used) for used in range(low, min(len(cards), width) + 1)]


def _sequences(
    index: _HandIndex, kind: PitsKind, ranks: int, rules: PitsRules
) -> list[Combination]:
    """Every distinct sequence of ``kind`` over ``ranks`` ranks the hand can make."""
    width = kind.width
    pool = index.wild_pool(kind)
    found: list[Combination] = []
    for top in range(SEQUENCE_LOW + ranks - 1, SEQUENCE_HIGH + 1):
        window = [PitsRank(rank) for rank in range(top - ranks + 1, top + 1)]
        available = sum(min(len(index.naturals.get(rank, ())), width) for rank in window)
        if available + len(pool) < ranks * width:
            continue
        # A sequence reads at its highest top: below A it must hold its lowest rank naturally.
        states: dict[tuple[int, frozenset[Suit]], tuple[AnyCard, ...]] = {(0, frozenset()): ()}
        for rank in window:
            must_hold = rank == window[0] and top < SEQUENCE_HIGH
            options = _rank_options(index.naturals.get(rank, ()), width, must_hold)
            following: dict[tuple[int, frozenset[Suit]], tuple[AnyCard, ...]] = {}
            for (wilds, suits), chosen in states.items():
                for cards, needed in options:
                    if wilds + needed > len(pool):
                        continue
                    after = _merge_suits(suits, cards[0]) if width == 1 and cards else suits
                    following.setdefault((wilds + needed, after), chosen + cards)
            states = following
        for (wilds, suits), chosen in sorted(states.items(), key=lambda item: item[0][0]):
            if width == 1 and rules.joker_takes_suit:
                one_suit = suits is not _MIXED
            else:
                one_suit = width == 1 and wilds == 0 and len(suits) == 1
            cards = sort_pits_cards(chosen + pool[:wilds])
            found.append(
                Combination(kind, ranks * width, PitsRank(top), wilds == 0, one_suit, cards)
            )
    return found


def _shapes(count: int, rules: PitsRules) -> list[tuple[PitsKind, int]]:
    """Every (kind, length) a hand of ``count`` cards could lead."""
    shapes = [(kind, kind.width) for kind in GROUP_KINDS if kind.width <= count]
    for kind in SEQUENCE_KINDS:
        top_ranks = min(SEQUENCE_SPAN, count // kind.width)
        shapes += [
            (kind, ranks * kind.width) for ranks in range(rules.min_sequence_ranks, top_ranks + 1)
        ]
    return shapes


def _combinations(
    index: _HandIndex, kind: PitsKind, length: int, rules: PitsRules
) -> list[Combination]:
    if kind.is_sequence:
        return _sequences(index, kind, length // kind.width, rules)
    return _groups(index, length, rules)


def legal_plays(
    hand: Iterable[AnyCard],
    table: Playable | None = None,
    rules: PitsRules = DEFAULT_PITS_RULES,
) -> tuple[Combination, ...]:
    """Every distinct combination from ``hand`` that beats ``table`` (every lead when it is empty).

    The table may be a combination or cards (cards that read several ways admit plays beating
    any reading). The result is sorted by kind (``PitsKind`` order), length, rank, one suit and
    natural.
    Raises HandError for duplicate cards and CombinationError when the table is no combination.
    """
    cards = tuple(hand)
    check_distinct(cards, rules.decks)
    if isinstance(table, Combination):
        tables: tuple[Combination, ...] = (table,)
    else:
        table_cards = tuple(table or ())
        tables = combination_readings(table_cards, rules) if table_cards else ()
    index = _HandIndex.of(cards)
    if tables:
        shapes = sorted(
            {(target.kind, target.length) for target in tables},
            key=lambda shape: (_KIND_ORDER[shape[0]], shape[1]),
        )
    else:
        shapes = _shapes(len(cards), rules)
    found: dict[Combination, Combination] = {}
    for kind, length in shapes:
        if length > len(cards):
            continue
        for combination in _combinations(index, kind, length, rules):
            if not tables or any(combination.beats(target) for target in tables):
                found.setdefault(combination, combination)
    return tuple(
        sorted(
            found,
            key=lambda item: (
                _KIND_ORDER[item.kind],
                item.length,
                item.rank,
                item.one_suit,
                item.natural,
            ),
        )
    )
