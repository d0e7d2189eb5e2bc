"""Reading cards as Pits combinations: tables of cases with expected readings or errors.

Expectations come from seed 001 (quoted in tests/test_pits_seed.py) and the product's choices of
RULES.md section 2: a 2 or joker played as itself is natural; a group only of mixed wild cards
counts at its lowest card and is not natural; sequences do not wrap; wild cards take the best
(highest) reading.
"""

from __future__ import annotations

import pytest

from rules.cards import parse_cards
from rules.errors import HandError, ProfileError
from rules.pits import (
    Combination,
    CombinationError,
    MixedWildRank,
    PitsKind,
    PitsRank,
    PitsRules,
    classify_combination,
    combination_readings,
)

R = PitsRank
K = PitsKind

# cards, kind, length, rank, natural, one_suit, why
READINGS = [
    ("7H", K.SINGLE, 1, R.SEVEN, True, False, "seed: single"),
    ("AS", K.SINGLE, 1, R.ACE, True, False, "A ranks 14, above K"),
    ("2C", K.SINGLE, 1, R.TWO, True, False, "choice: a 2 played as itself is natural"),
    ("JB", K.SINGLE, 1, R.BLACK_JOKER, True, False, "choice: a joker as itself is natural"),
    ("JR", K.SINGLE, 1, R.RED_JOKER, True, False, "seed: red joker highest"),
    ("10H 10S", K.PAIR, 2, R.TEN, True, False, "seed: pair"),
    ("2S 2H", K.PAIR, 2, R.TWO, True, False, "choice: pair of 2s natural"),
    ("9S 2H", K.PAIR, 2, R.NINE, False, False, "seed: 2 wild in groups"),
    ("9S JB", K.PAIR, 2, R.NINE, False, False, "seed: joker wild in groups"),
    ("2S JB", K.PAIR, 2, R.TWO, False, False, "choice: mixed wilds count at the lowest"),
    ("JB JR", K.PAIR, 2, R.BLACK_JOKER, False, False, "choice: mixed wilds count at the lowest"),
    ("2S 2H JR", K.TRIPLE, 3, R.TWO, False, False, "choice: mixed wilds count at the lowest"),
    ("QS 2H JR", K.TRIPLE, 3, R.QUEEN, False, False, "seed: wilds stand for the queen"),
    ("KS KH KD KC", K.QUAD, 4, R.KING, True, False, "seed: four of a kind"),
    ("2S 2H 2D 2C", K.QUAD, 4, R.TWO, True, False, "choice: four 2s as themselves"),
    ("3S 2H 2D 2C", K.QUAD, 4, R.THREE, False, False, "seed: three 2s stand for 3s"),
    ("4S 5H 6D", K.SEQUENCE, 3, R.SIX, True, False, "seed example 4,5,6"),
    ("6D 4S 5H", K.SEQUENCE, 3, R.SIX, True, False, "order of cards is irrelevant"),
    ("4H 5H 6H", K.SEQUENCE, 3, R.SIX, True, True, "seed: all of one suit"),
    ("10S JS QS KS AS", K.SEQUENCE, 5, R.ACE, True, True, "A is the top of a sequence"),
    ("5H 6H JB", K.SEQUENCE, 3, R.SEVEN, False, True, "best reading 5 6 7; joker takes the suit"),
    ("5H JB 7S", K.SEQUENCE, 3, R.SEVEN, False, False, "joker fills the gap"),
    ("QH KH JB", K.SEQUENCE, 3, R.ACE, False, True, "best reading Q K A"),
    ("KS AS JR", K.SEQUENCE, 3, R.ACE, False, True, "no wrap: K A reads Q K A"),
    ("3S JB JR 6H", K.SEQUENCE, 4, R.SIX, False, False, "two jokers fill 4 and 5"),
    ("3S 4H 5D 6C 7S 8H 9D 10C JS QH KD AC", K.SEQUENCE, 12, R.ACE, True, False, "longest"),
    ("3S 3H 4S 4H 5S 5H", K.DOUBLE_SEQUENCE, 6, R.FIVE, True, False, "seed example 3,3,4,4,5,5"),
    ("3S 3H 4S 2H 5S 5H", K.DOUBLE_SEQUENCE, 6, R.FIVE, False, False, "seed: 2 wild in doubles"),
    ("3S 3H 4S 4H 2S 2H", K.DOUBLE_SEQUENCE, 6, R.FIVE, False, False, "best reading: 2s are 5s"),
    ("KS KH AS AH 2S JB", K.DOUBLE_SEQUENCE, 6, R.ACE, False, False, "no wrap: wilds are queens"),
    ("9S 9H 9D 10S 10H 10D JS JH 2D", K.TRIPLE_SEQUENCE, 9, R.JACK, False, False, "seed"),
    (
        "3S 3H 3D 3C 4S 4H 4D 4C 5S 5H 5D 5C",
        K.QUADRUPLE_SEQUENCE,
        12,
        R.FIVE,
        True,
        False,
        "seed: quadruple sequence",
    ),
]


@pytest.mark.parametrize(
    ("cards", "kind", "length", "rank", "natural", "one_suit", "why"), READINGS
)
def test_reading(
    cards: str,
    kind: PitsKind,
    length: int,
    rank: PitsRank,
    natural: bool,
    one_suit: bool,
    why: str,
) -> None:
    """Each row: the combination the cards read as, and the rule it comes from (``why``)."""
    combination = classify_combination(parse_cards(cards))
    assert (combination.kind, combination.length, combination.rank) == (kind, length, rank), why
    assert (combination.natural, combination.one_suit) == (natural, one_suit), why
    assert sorted(map(str, combination.cards)) == sorted(cards.split())


# cards, expected error (a regular expression), why
NOT_COMBINATIONS = [
    ("", "no cards", "a play needs at least one card"),
    ("5H 7H", r"not a pair \(ranks 5 and 7 differ\)", "a pair is two cards of one rank"),
    ("5H 6H", "not a pair", "two consecutive cards are no sequence (3 at least)"),
    ("5H 5S 6D", r"not a triple .*; not a sequence \(2 cards of rank 5", "mixed shapes"),
    ("AS 2H 3D", "a 2 cannot be part of a single sequence", "seed: 2 never in a sequence"),
    ("KS AH 2D", "a 2 cannot be part of a single sequence", "no wrap: K A 2"),
    ("QS KH 2D", "a 2 cannot be part of a single sequence", "2 not wild in a single sequence"),
    ("AS JB 3D", "ranks 3 to A do not fit in 3 consecutive ranks", "no wrap: A 2 3"),
    ("4S 5H 7D", "ranks 4 to 7 do not fit in 3 consecutive ranks", "a gap needs a joker"),
    ("3S 3H 4S 4H", "not a quad", "two pairs: double sequences need 3 ranks"),
    ("3S 3H 3D 3C 2S", r"not a group \(groups hold 1 to 4 cards\)", "no five of a kind"),
    ("3S 3H 4S 4H 5S 6H", "2 cards of rank 3", "a double sequence holds 2 per rank"),
    ("3S 3H 3D 4S 4H 5S", "3 cards of rank 3, a double sequence holds 2 per rank", "uneven"),
    ("3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS 3H", "13 cards make no group", "longest is 12"),
]


@pytest.mark.parametrize(("cards", "error", "why"), NOT_COMBINATIONS)
def test_not_a_combination(cards: str, error: str, why: str) -> None:
    """Each row: cards that form no combination, and the reason the error must give."""
    with pytest.raises(CombinationError, match=error):
        classify_combination(parse_cards(cards))


def test_ambiguous_cards_read_every_kind() -> None:
    """5 JB JR reads as a triple of 5s and as the sequence 5 6 7 (best reading): both listed,
    ``classify_combination`` takes the first in ``PitsKind`` order unless a kind is asked."""
    cards = parse_cards("5H JB JR")
    readings = combination_readings(cards)
    assert [(reading.kind, reading.rank) for reading in readings] == [
        (K.TRIPLE, R.FIVE),
        (K.SEQUENCE, R.SEVEN),
    ]
    assert classify_combination(cards).kind is K.TRIPLE
    assert classify_combination(cards, kind=K.SEQUENCE).rank is R.SEVEN
    with pytest.raises(CombinationError, match="is not a pair: a pair holds 2 cards, not 3"):
        classify_combination(cards, kind=K.PAIR)


# rules, cards, rank, natural, why
OPTION_CASES = [
    (PitsRules(wild_as_itself_natural=False), "2S 2H", R.TWO, False, "2s count as wild"),
    (PitsRules(wild_as_itself_natural=False), "JR", R.RED_JOKER, False, "joker counts as wild"),
    (PitsRules(mixed_wild_rank=MixedWildRank.HIGHEST), "2S JB", R.BLACK_JOKER, False, "highest"),
    (PitsRules(mixed_wild_rank=MixedWildRank.HIGHEST), "2S 2H JR", R.RED_JOKER, False, "highest"),
    (PitsRules(mixed_wild_rank=MixedWildRank.HIGHEST), "2S 2H", R.TWO, True, "not mixed"),
]


@pytest.mark.parametrize(("rules", "cards", "rank", "natural", "why"), OPTION_CASES)
def test_wild_group_options(
    rules: PitsRules, cards: str, rank: PitsRank, natural: bool, why: str
) -> None:
    """The product's wild-card choices are options of the rules object."""
    combination = classify_combination(parse_cards(cards), rules)
    assert (combination.rank, combination.natural) == (rank, natural), why


def test_joker_suit_option() -> None:
    """With ``joker_takes_suit`` off, a sequence holding a joker is never all of one suit."""
    cards = parse_cards("5H 6H JB")
    assert classify_combination(cards).one_suit
    assert not classify_combination(cards, PitsRules(joker_takes_suit=False)).one_suit
    assert classify_combination(parse_cards("5H 6H 7H"), PitsRules(joker_takes_suit=False)).one_suit


def test_min_sequence_ranks_option() -> None:
    """By default every sequence spans 3 ranks at least; 2 allows 333 444 as a triple sequence."""
    cards = parse_cards("3S 3H 3D 4S 4H 4D")
    with pytest.raises(CombinationError):
        classify_combination(cards)
    short = classify_combination(cards, PitsRules(min_sequence_ranks=2))
    assert (short.kind, short.rank) == (K.TRIPLE_SEQUENCE, R.FOUR)


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"min_sequence_ranks": 1}, "min_sequence_ranks 1 must lie in 2..12"),
        ({"min_sequence_ranks": 13}, "min_sequence_ranks 13 must lie in 2..12"),
        ({"decks": 0}, "decks 0 must be at least 1"),
    ],
)
def test_inconsistent_options(options: dict[str, int], error: str) -> None:
    """Options outside their range are a ProfileError quoting the value."""
    with pytest.raises(ProfileError, match=error):
        PitsRules(**options)  # type: ignore[arg-type]


def test_duplicate_cards_are_a_hand_error() -> None:
    """One deck holds one 5H: playing it twice is bad input, not an illegal play."""
    with pytest.raises(HandError, match="duplicate card 5H"):
        classify_combination(parse_cards("5H 5H"))
    two_decks = classify_combination(parse_cards("5H 5H"), PitsRules(decks=2))
    assert (two_decks.kind, two_decks.natural) == (K.PAIR, True)


def test_combination_record_equality_ignores_cards() -> None:
    """Two plays of equal strength are equal records; the key orders (one_suit, rank, natural)."""
    spades = classify_combination(parse_cards("7S 7H"))
    clubs = classify_combination(parse_cards("7D 7C"))
    assert spades == clubs and hash(spades) == hash(clubs) and spades.cards != clubs.cards
    assert spades.key == (False, 7, True)
    assert Combination(K.SEQUENCE, 3, R.FOUR, True, True).key > (False, 14, True)


@pytest.mark.parametrize(
    ("cards", "words"),
    [
        ("7H", "single 7"),
        ("7H 7S", "pair of 7s"),
        ("AH AS 2C", "triple of aces with wild cards"),
        ("4H 5H 6H", "3-card sequence up to 6 all of one suit"),
        ("3S 3H 4S 4H 5S 5H", "6-card double sequence up to 5"),
    ],
)
def test_describe(cards: str, words: str) -> None:
    """``describe`` names the combination in words the CLI and the errors use."""
    assert classify_combination(parse_cards(cards)).describe() == words


# cards, the reasons the error names, one per kind the cards could be taken for, in PitsKind order
EVERY_KIND_NAMED = [
    (
        "3H 3S 3D 4H 4S 4D",  # two triples: RULES.md lists the triple sequence without a length;
        # the product asks it 3 ranks as the seed asks the sequence and the double sequence
        [
            "not a group (groups hold 1 to 4 cards)",
            "not a sequence (3 cards of rank 3, a sequence holds 1 per rank)",
            "not a double sequence (3 cards of rank 3, a double sequence holds 2 per rank)",
            "not a triple sequence (a triple sequence needs at least 3 ranks of 3 cards, not 2)",
        ],
    ),
    (
        "3S 3H 4S 4H",  # two pairs: seed 001's double sequence is 6 cards at least (3 3 4 4 5 5)
        [
            "not a quad (ranks 3 and 4 differ)",
            "not a sequence (2 cards of rank 3, a sequence holds 1 per rank)",
            "not a double sequence (a double sequence needs at least 3 ranks of 2 cards, not 2)",
        ],
    ),
    (
        "5H 6H",  # seed 001's sequence is 3 consecutive ranks at least
        [
            "not a pair (ranks 5 and 6 differ)",
            "not a sequence (a sequence needs at least 3 ranks, not 2)",
        ],
    ),
    (
        "3S 3H 3D 3C 4S 4H 4D 4C",  # two quads: no quadruple sequence of 2 ranks
        [
            "not a group (groups hold 1 to 4 cards)",
            "not a sequence (4 cards of rank 3, a sequence holds 1 per rank)",
            "not a double sequence (4 cards of rank 3, a double sequence holds 2 per rank)",
            "not a quadruple sequence (a quadruple sequence needs at least 3 ranks of 4 cards, "
            "not 2)",
        ],
    ),
]


@pytest.mark.parametrize(("cards", "reasons"), EVERY_KIND_NAMED)
def test_no_combination_names_why_for_every_kind_the_cards_could_be(
    cards: str, reasons: list[str]
) -> None:
    """A set of cards of a sequence's shape but too few ranks is named as that kind too."""
    with pytest.raises(CombinationError) as caught:
        combination_readings(parse_cards(cards))
    assert str(caught.value) == f"{cards} is no combination: {'; '.join(reasons)}"
