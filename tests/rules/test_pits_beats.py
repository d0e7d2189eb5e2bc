"""Beating the table in Pits: a table of plays with the expected reason, and property tests.

Rules (seed 001): same kind, same number of cards, higher rank (group rank or sequence top);
between equal combinations the natural one beats the one using wild cards; a single sequence all
of one suit beats any single sequence of two or more suits of the same length. Product choice:
equal in everything, a play does not beat the table.
"""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.cards import AnyCard, Card, Rank, full_deck, parse_cards
from rules.errors import IllegalPlayError
from rules.pits import (
    Combination,
    CombinationError,
    PitsKind,
    PitsRank,
    can_play,
    classify_combination,
    combination_readings,
    legal_plays,
    verify_play,
    why_not,
)

# play, table, expected error (None: legal), source
PLAYS: list[tuple[str, str, str | None, str]] = [
    ("9S", "7H", None, "seed: higher rank"),
    ("7H", "9S", "7 does not beat 9", "seed: higher rank"),
    ("7H", "7S", "single 7 only equals a single 7", "choice: equal does not beat"),
    ("2C", "AS", None, "seed: 2 above A"),
    ("JB", "2C", None, "seed: black joker above 2"),
    ("JR", "JB", None, "seed: red joker above black"),
    ("JB", "JR", "JB does not beat JR", "seed: red joker highest"),
    ("5H 5S", "6H 7H 8H", "a pair cannot beat a sequence", "seed: same kind"),
    ("5H 6S 7D", "4H 4S 4D", "a sequence cannot beat a triple", "seed: same kind"),
    ("5H 6S 7D", "4H 5H 6H 7H", "a 3-card sequence cannot beat a 4-card sequence", "seed: count"),
    (
        "3S 3H 4S 4H 5S 5H 6S 6H",
        "8S 8H 9S 9H 10S 10H",
        "an 8-card double sequence cannot beat a 6-card double sequence",
        "seed: count",
    ),
    ("9H 2S", "9S 9D", "the one without wild cards is stronger", "seed: natural beats wild"),
    ("9H 9C", "9S 2D", None, "seed: natural beats wild"),
    ("9H JB", "9S 2D", "pair of 9s with wild cards only equals", "both wild: no beat"),
    ("10H 2S", "9S 9D", None, "rank first, then natural"),
    ("2S 2H", "2D JB", None, "choice: a pair of 2s is natural, 2 + joker is not"),
    ("2D JB", "KS KH", None, "choice: mixed wilds count at 2"),
    ("JB JR", "2S 2H", None, "choice: JB + JR counts at JB, above 2"),
    ("5H 6S 7D", "3H 4H 5H", "of two or more suits does not beat a sequence all of one suit", ""),
    ("3H 4H 5H", "QS KD AC", None, "seed: one suit beats any mixed sequence"),
    ("3H 4H 5H", "QS QD", "a sequence cannot beat a pair", "seed: same kind"),
    ("6H 7H 8H", "3S 4S 5S", None, "both one suit: rank decides"),
    ("3S 4S 5S", "6H 7H 8H", "a sequence up to 5 does not beat a sequence up to 8", ""),
    ("5H 6S JB", "5C 6D 7H", "the one without wild cards is stronger", "seed: natural first"),
    ("5C 6D 7H", "5H 6S JB", None, "seed: natural first"),
    ("5H 6H JB", "5C 6D 7S", None, "one suit (joker takes the suit) beats natural mixed"),
    (
        "3S 3H 4S 4H 5S 5H",
        "3D 3C 4D 4C 5D 2H",
        None,
        "seed: natural double sequence beats one with a 2",
    ),
    ("4S 4H 5S 5H 6S 6H", "3D 3C 4D 4C 5D 5C", None, "seed: higher top"),
]


@pytest.mark.parametrize(("play", "table", "error", "source"), PLAYS)
def test_verify_play(play: str, table: str, error: str | None, source: str) -> None:
    """Each row: a play on a table and the reason it is illegal (None: legal), with its source."""
    if error is None:
        assert verify_play(parse_cards(play), parse_cards(table)) is not None, source
        assert can_play(parse_cards(play), parse_cards(table)), source
    else:
        with pytest.raises(IllegalPlayError, match=error):
            verify_play(parse_cards(play), parse_cards(table))
        assert not can_play(parse_cards(play), parse_cards(table)), source


def test_empty_table_takes_any_combination() -> None:
    """On an empty table (None or no cards) any combination may lead; no combination may not."""
    assert verify_play(parse_cards("3S 3H 4S 4H 5S 5H"), None).kind is PitsKind.DOUBLE_SEQUENCE
    assert can_play(parse_cards("3S"), ())
    with pytest.raises(CombinationError, match="not a pair"):
        verify_play(parse_cards("3S 4S"), None)
    assert not can_play(parse_cards("3S 4S"), None)


def test_ambiguous_play_follows_the_table() -> None:
    """5 JB JR may follow a triple (as 5 5 5) or a sequence (as 5 6 7), whichever the table is."""
    cards = parse_cards("5H JB JR")
    assert verify_play(cards, parse_cards("4S 4H 4D")).kind is PitsKind.TRIPLE
    assert verify_play(cards, parse_cards("4S 5S 6D")).kind is PitsKind.SEQUENCE
    with pytest.raises(IllegalPlayError, match="a triple cannot beat a pair"):
        verify_play(cards, parse_cards("4S 4H"))
    with pytest.raises(CombinationError, match="is not a triple"):
        verify_play(parse_cards("5H 6S JB"), None, kind=PitsKind.TRIPLE)


def test_why_not_is_none_when_it_beats() -> None:
    """``why_not`` gives no reason for a play that beats the table."""
    nine, seven = classify_combination(parse_cards("9S")), classify_combination(parse_cards("7S"))
    assert why_not(nine, seven) is None
    assert why_not(seven, nine) == "7 does not beat 9"


# --- property tests -----------------------------------------------------------------------------

DECK: tuple[AnyCard, ...] = full_deck(jokers=True)
DENSE_DECK = tuple(
    card
    for card in DECK
    if not isinstance(card, Card)
    or card.rank in (Rank.TWO, Rank.THREE, Rank.FOUR, Rank.FIVE, Rank.QUEEN, Rank.KING, Rank.ACE)
)
"""Few ranks and every wild card: random hands from it hold many combinations."""


@st.composite
def played_combinations(draw: st.DrawFn) -> tuple[AnyCard, ...]:
    """Cards of some combination: one of the legal leads of a random dense hand."""
    hand = draw(st.lists(st.sampled_from(DENSE_DECK), min_size=1, max_size=12, unique=True))
    leads = legal_plays(hand)
    return draw(st.sampled_from(leads)).cards


@given(played_combinations(), st.randoms(use_true_random=False))
@settings(max_examples=150, deadline=None)
def test_card_order_never_changes_the_reading(
    cards: tuple[AnyCard, ...], shuffler: random.Random
) -> None:
    """Property: the readings of a set of cards do not depend on the order the cards come in."""
    shuffled = list(cards)
    shuffler.shuffle(shuffled)
    assert combination_readings(shuffled) == combination_readings(cards)
    assert [r.cards for r in combination_readings(shuffled)] == [
        r.cards for r in combination_readings(cards)
    ]


@given(played_combinations(), played_combinations())
@settings(max_examples=200, deadline=None)
def test_beats_is_antisymmetric(first: tuple[AnyCard, ...], second: tuple[AnyCard, ...]) -> None:
    """Property: of two combinations at most one beats the other, and none beats itself."""
    for one, other in itertools.product(combination_readings(first), combination_readings(second)):
        assert not (one.beats(other) and other.beats(one))
        assert not one.beats(one)
        assert (why_not(one, other) is None) == one.beats(other)


@given(played_combinations())
@settings(max_examples=150, deadline=None)
def test_a_play_never_beats_itself(cards: tuple[AnyCard, ...]) -> None:
    """Property: the same cards never beat themselves on the table (equal does not beat)."""
    assert not can_play(cards, cards)


def test_beats_is_a_strict_order_on_every_shape() -> None:
    """Exhaustive over every key of each shape: beats is irreflexive, antisymmetric, transitive.

    A shape is a kind and a length; its records vary by rank, natural and one_suit.
    """
    records = [
        Combination(kind, kind.width * 3 if kind.is_sequence else kind.width, rank, nat, suit)
        for kind in PitsKind
        for rank in PitsRank
        for nat in (True, False)
        for suit in ((True, False) if kind is PitsKind.SEQUENCE else (False,))
    ]
    for first, second in itertools.product(records, repeat=2):
        assert not (first.beats(second) and second.beats(first))
        if first.beats(second):
            assert all(first.beats(third) for third in records if second.beats(third)), "transitive"
