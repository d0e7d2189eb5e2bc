"""Pai Gow Poker: poker hand ranking (with the joker), the set rule, the house way, settling.

Expectations come from RULES.md section 3 ("Pai Gow Poker") and the classic five-card poker
counts over all C(52,5) = 2,598,960 hands, checked against an independent reference ranker
written below. The house ways are tested in ``test_paigow_house_ways.py``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from decimal import Decimal
from itertools import combinations, pairwise
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules.cards import AnyCard, Card, Joker, Rank, full_deck, parse_cards
from rules.errors import HandError, IllegalPlayError, ProfileError
from rules.paigow import (
    PaiGowOutcome,
    PaiGowRules,
    house_way,
    set_paigow_hand,
    settle_paigow,
)
from rules.poker_hands import PokerCategory, PokerHand, WheelRank, evaluate_five, evaluate_two

DECK = full_deck()
DECK_WITH_JOKER = (*DECK, Joker.RED)

# ---------------------------------------------------------------------------------------------
# An independent reference ranker: textbook definitions, written without the module's helpers.
# Key: (category number, tuple of numbers); straights get a "height" where the wheel is 13.5
# (second-highest) or 4.5 (lowest) so that it sorts between the right neighbours.

_REF_STRAIGHTS = [set(range(low, low + 5)) for low in range(2, 11)]  # 6-high .. A-high
_REF_WHEEL = {14, 2, 3, 4, 5}
_REF_NAMES = {
    (1, 1, 1, 1, 1): 0,  # high card (or straight / flush, decided below)
    (1, 1, 1, 2): 1,  # pair
    (1, 2, 2): 2,  # two pair
    (1, 1, 3): 3,  # three of a kind
    (2, 3): 6,  # full house
    (1, 4): 7,  # four of a kind
    (5,): 9,  # five aces
}
RefKey = tuple[int, tuple[float, ...]]


def _ref_value(rank: Rank) -> int:
    return {Rank.ACE: 14, Rank.KING: 13, Rank.QUEEN: 12, Rank.JACK: 11}.get(rank, rank.value)


def reference_key(ranks: Sequence[int], suits: Sequence[object], wheel_lowest: bool) -> RefKey:
    """Rank five (value, suit) pairs; a suit of None never makes a flush."""
    counts = Counter(ranks)
    shape = tuple(sorted(counts.values()))
    category = _REF_NAMES[shape]
    flush = None not in suits and len(set(suits)) == 1
    rank_set = set(ranks)
    height: float | None = None
    if rank_set in _REF_STRAIGHTS:
        height = float(max(rank_set))
    elif rank_set == _REF_WHEEL:
        height = 4.5 if wheel_lowest else 13.5
    if height is not None:
        return (8 if flush else 4), (height,)
    if flush:
        return 5, tuple(sorted(ranks, reverse=True))
    # Order by group size, then by rank, both descending.
    grouped = sorted(counts, key=lambda value: (counts[value], value), reverse=True)
    return category, tuple(float(value) for value in grouped)


def reference_rank(cards: Sequence[AnyCard], wheel_lowest: bool = False) -> RefKey:
    """Best reading of five cards; the joker is tried as a suitless ace and as every absent card,
    keeping a non-ace substitute only when it makes a straight, flush or straight flush."""
    naturals = [card for card in cards if isinstance(card, Card)]
    ranks = [_ref_value(card.rank) for card in naturals]
    suits: list[object] = [card.suit for card in naturals]
    if len(naturals) == 5:
        return reference_key(ranks, suits, wheel_lowest)
    best = reference_key([*ranks, 14], [*suits, None], wheel_lowest)
    for substitute in DECK:
        if substitute in naturals:
            continue
        assert isinstance(substitute, Card)
        key = reference_key(
            [*ranks, _ref_value(substitute.rank)], [*suits, substitute.suit], wheel_lowest
        )
        if substitute.rank is Rank.ACE or key[0] in (4, 5, 8):
            best = max(best, key)
    return best


def _compare(first: Any, second: Any) -> int:
    """-1, 0 or 1 as ``first`` is weaker than, equal to or stronger than ``second``."""
    return int(first > second) - int(first < second)


def _random_hands(seed: int, count: int, size: int, deck: Sequence[AnyCard]) -> list[list[AnyCard]]:
    rng = np.random.default_rng(seed)
    return [
        [deck[index] for index in rng.choice(len(deck), size, replace=False)] for _ in range(count)
    ]


def hand(text: str) -> tuple[AnyCard, ...]:
    return parse_cards(text)


# ---------------------------------------------------------------------------------------------
# Five-card ranking


# Standard poker order, weakest to strongest (RULES.md: A-2-3-4-5 second-highest straight by
# default), plus five aces above the straight flush (the joker completes four aces).
ASCENDING = [
    "7S 5D 4C 3H 2S",  # lowest high card
    "AS KD QC JH 9S",  # best high card
    "2S 2D 3C 4H 5S",  # lowest pair
    "AS AD KC QH JS",  # best pair
    "3S 3D 2C 2H 4S",  # lowest two pair
    "AS AD KC KH QS",  # best two pair
    "2S 2D 2C 3H 4S",  # lowest three of a kind
    "AS AD AC KH QS",  # best three of a kind
    "2S 3D 4C 5H 6S",  # 6-high straight, lowest by default
    "9S 10D JC QH KS",  # K-high straight
    "AS 2D 3C 4H 5S",  # the wheel: second-highest straight by default
    "10S JD QC KH AS",  # A-high straight
    "2S 3S 4S 5S 7S",  # lowest flush
    "AS KS QS JS 9S",  # best flush
    "2S 2D 2C 3H 3S",  # lowest full house
    "AS AD AC KH KS",  # best full house
    "2S 2D 2C 2H 3S",  # lowest four of a kind
    "AS AD AC AH KS",  # best four of a kind
    "2H 3H 4H 5H 6H",  # lowest straight flush
    "AH 2H 3H 4H 5H",  # steel wheel: second-highest straight flush by default
    "AH KH QH JH 10H",  # royal flush
    "AS AD AC AH JR",  # five aces
]


def test_five_card_order_follows_the_poker_ranking() -> None:
    """Each hand of ASCENDING beats the one before (standard ranking, wheel second-highest)."""
    hands = [evaluate_five(hand(text)) for text in ASCENDING]
    for weaker, stronger in pairwise(hands):
        assert weaker < stronger, (weaker.description, stronger.description)


def test_wheel_lowest_option() -> None:
    """Option: A-2-3-4-5 is the lowest straight (and the lowest straight flush)."""
    lowest = WheelRank.LOWEST
    assert evaluate_five(hand("AS 2D 3C 4H 5S"), lowest) < evaluate_five(
        hand("2S 3D 4C 5H 6S"), lowest
    )
    assert evaluate_five(hand("AH 2H 3H 4H 5H"), lowest) < evaluate_five(
        hand("2S 3S 4S 5S 6S"), lowest
    )
    assert evaluate_five(hand("AS 2D 3C 4H 5S"), lowest) > evaluate_five(hand("AS AD AC KH QS"))


@pytest.mark.parametrize(
    ("cards", "category", "description"),
    [
        # RULES.md: the joker counts as an ace ...
        ("JR AS KD 7C 3H", PokerCategory.PAIR, "pair of aces"),
        ("JR KS QD 7C 3H", PokerCategory.HIGH_CARD, "high card, A high"),
        ("JR AS AD 7C 7H", PokerCategory.FULL_HOUSE, "full house, aces over 7s"),
        ("JR AS AD AC 7H", PokerCategory.FOUR_OF_A_KIND, "four aces"),
        ("JR AS AD AC AH", PokerCategory.FIVE_ACES, "five aces"),
        # ... or completes a straight (any gap, at either end) ...
        ("JR 9S 10D QC KH", PokerCategory.STRAIGHT, "straight, K high"),
        ("JR 10S JD QC KH", PokerCategory.STRAIGHT, "straight, A high"),
        ("JR 2S 3D 4C 5H", PokerCategory.STRAIGHT, "straight, 5 high"),  # wheel beats 6-high
        ("JR AS 2D 3C 4H", PokerCategory.STRAIGHT, "straight, 5 high"),
        # ... a flush (the joker takes the highest rank the flush lacks) ...
        ("JR 2H 9H 4H 5H", PokerCategory.FLUSH, "flush, A high"),
        ("JR AH 9H 4H 5H", PokerCategory.FLUSH, "flush, A high"),
        # ... or a straight flush, which beats the flush or pair it could also make.
        ("JR 9H 10H QH KH", PokerCategory.STRAIGHT_FLUSH, "straight flush, K high"),
        ("JR AH KH QH JH", PokerCategory.STRAIGHT_FLUSH, "royal flush"),
        ("JB 2C 3C 4C 5C", PokerCategory.STRAIGHT_FLUSH, "straight flush, 5 high"),
        # Not wild otherwise: no trips from a pair, no quads from trips other than aces.
        ("JR KS KD 7C 3H", PokerCategory.PAIR, "pair of kings"),  # ace kicker
        ("JR KS KD KC 3H", PokerCategory.THREE_OF_A_KIND, "three kings"),
    ],
)
def test_joker_readings(cards: str, category: PokerCategory, description: str) -> None:
    """The joker ("bug") per RULES.md section 3; expected readings are worked by hand."""
    ranked = evaluate_five(hand(cards))
    assert ranked.category is category
    assert ranked.description == description
    assert reference_rank(hand(cards))[0] == category


def test_joker_flush_with_ace_takes_the_king() -> None:
    """A joker in an ace-high flush stands for the highest rank missing: here the king."""
    with_ace = evaluate_five(hand("JR AH 9H 4H 5H"))
    assert with_ace.tiebreak == (14, 13, 9, 5, 4)
    assert with_ace == evaluate_five(hand("AH KH 9H 4H 5H"))


@pytest.mark.parametrize(
    ("cards", "error", "message"),
    [
        ("AS KD QC JH", HandError, "expected 5 cards, got 4"),
        ("AS KD QC JH 9S 8S", HandError, "expected 5 cards, got 6"),
        ("AS KD QC JB JR", HandError, "at most one joker"),
        ("AS AS QC JH 9S", HandError, "duplicate card AS"),
    ],
)
def test_five_card_bad_input(cards: str, error: type[Exception], message: str) -> None:
    """Bad hands name the count, the jokers or the duplicated card."""
    with pytest.raises(error, match=message):
        evaluate_five(hand(cards))


def _exhaustive(wheel: WheelRank) -> tuple[Counter[PokerCategory], dict[RefKey, PokerHand]]:
    counts: Counter[PokerCategory] = Counter()
    classes: dict[RefKey, PokerHand] = {}
    lowest = wheel is WheelRank.LOWEST
    for five in combinations(DECK, 5):
        ours = evaluate_five(five, wheel)
        counts[ours.category] += 1
        ref = reference_rank(five, lowest)
        assert ours.category == ref[0], (five, ours, ref)
        seen = classes.setdefault(ref, ours)
        assert seen == ours, (five, seen, ours)  # equal reference class, equal strength
    return counts, classes


# Classic counts over all C(52,5) hands; the wheel option only reorders straights.
GOLDEN_COUNTS = {
    PokerCategory.STRAIGHT_FLUSH: 40,  # royal flushes included
    PokerCategory.FOUR_OF_A_KIND: 624,
    PokerCategory.FULL_HOUSE: 3_744,
    PokerCategory.FLUSH: 5_108,
    PokerCategory.STRAIGHT: 10_200,
    PokerCategory.THREE_OF_A_KIND: 54_912,
    PokerCategory.TWO_PAIR: 123_552,
    PokerCategory.PAIR: 1_098_240,
    PokerCategory.HIGH_CARD: 1_302_540,
}


@pytest.mark.slow
@pytest.mark.parametrize("wheel", list(WheelRank))
def test_all_five_card_hands_against_reference(wheel: WheelRank) -> None:
    """All 2,598,960 hands: category counts are the classic figures, every category agrees with
    the reference, the 7,462 distinct strengths match one to one and sort in the same order."""
    counts, classes = _exhaustive(wheel)
    assert dict(counts) == GOLDEN_COUNTS
    assert sum(counts.values()) == 2_598_960
    assert len(classes) == 7_462  # the number of distinct five-card poker hand values
    by_reference = [classes[key] for key in sorted(classes)]
    assert all(a < b for a, b in pairwise(by_reference))


@pytest.mark.parametrize("wheel", list(WheelRank))
@pytest.mark.parametrize("deck", [DECK, DECK_WITH_JOKER], ids=["52", "53-joker"])
def test_pairwise_order_matches_reference_on_random_hands(
    wheel: WheelRank, deck: tuple[AnyCard, ...]
) -> None:
    """Seeded sample: for every pair of hands, our order equals the reference order."""
    hands = _random_hands(seed=2024, count=160, size=5, deck=deck)
    ours = [evaluate_five(cards, wheel) for cards in hands]
    refs = [reference_rank(cards, wheel is WheelRank.LOWEST) for cards in hands]
    for i, j in combinations(range(len(hands)), 2):
        assert _compare(ours[i], ours[j]) == _compare(refs[i], refs[j]), (hands[i], hands[j])


@pytest.mark.slow
def test_joker_hands_against_reference_large_sample() -> None:
    """20,000 seeded five-card hands holding the joker: same category and same pairwise order
    as the brute-force reference (the joker tried as every card)."""
    rng = np.random.default_rng(53)
    hands = [
        [Joker.RED, *(DECK[index] for index in rng.choice(52, 4, replace=False))]
        for _ in range(20_000)
    ]
    ours = [evaluate_five(cards) for cards in hands]
    refs = [reference_rank(cards) for cards in hands]
    assert [hand.category for hand in ours] == [ref[0] for ref in refs]
    order = sorted(range(len(hands)), key=lambda index: refs[index])
    for before, after in pairwise(order):
        expected = _compare(refs[after], refs[before])
        assert _compare(ours[after], ours[before]) == expected


@given(st.lists(st.sampled_from(DECK_WITH_JOKER), min_size=5, max_size=5, unique=True), st.data())
def test_five_card_rank_ignores_order(cards: list[AnyCard], data: st.DataObject) -> None:
    """Property: permuting the cards never changes the hand's strength."""
    shuffled = data.draw(st.permutations(cards))
    assert evaluate_five(cards) == evaluate_five(shuffled)


@given(
    st.lists(st.sampled_from(DECK_WITH_JOKER), min_size=10, max_size=10, unique=True),
)
def test_compare_is_antisymmetric(cards: list[AnyCard]) -> None:
    """Property: exactly one of a < b, a == b, a > b holds, mirrored when swapped."""
    first, second = evaluate_five(cards[:5]), evaluate_five(cards[5:])
    assert [first < second, first == second, first > second].count(True) == 1
    assert (first < second) == (second > first)


# ---------------------------------------------------------------------------------------------
# Two-card hands and the set rule


@pytest.mark.parametrize(
    ("weaker", "stronger"),
    [
        ("3S 2D", "4S 2D"),  # high card, then the second card
        ("AS QD", "AH KD"),
        ("AS KD", "2S 2D"),  # any pair beats any two high cards
        ("2S 2D", "3S 3D"),
        ("KS KD", "JR AD"),  # the joker is an ace in the low hand: a pair of aces
        ("KS QD", "JR 2D"),  # joker + 2 = ace high
    ],
)
def test_two_card_order(weaker: str, stronger: str) -> None:
    """Two-card ranking: a pair beats high cards; the joker is an ace (RULES.md section 3)."""
    assert evaluate_two(hand(weaker)) < evaluate_two(hand(stronger))


@pytest.mark.parametrize(
    ("high", "low", "error", "message"),
    [
        ("9C 8D 5H 3S 2C", "AS AD", IllegalPlayError, "foul: the low hand AS AD"),
        ("KC 8D 5H 3S 2C", "AS 4D", IllegalPlayError, "foul"),  # A-4 outranks K-high
        ("9C 9D 5H 3S 2C", "10S 10D", IllegalPlayError, "foul"),
        ("9C 8D 5H 3S 2C 4C", "AS", HandError, "the high hand takes 5 cards, got 6"),
        ("9C 8D 5H 3S", "AS KD 2D", HandError, "the high hand takes 5 cards, got 4"),
        ("9C 8D 5H 3S 2C", "AS KD 2D", HandError, "the low hand takes 2 cards, got 3"),
        ("AS KS QS JS 10S", "2H", HandError, "the low hand takes 2 cards, got 1: '2H'"),
        ("9C 8D 5H 3S JB", "AS JR", HandError, "at most one joker"),
        ("9C 8D 5H 3S 2C", "AS 9C", HandError, "duplicate card 9C"),
    ],
)
def test_set_hand_bad_settings(high: str, low: str, error: type[Exception], message: str) -> None:
    """A low hand outranking the high hand is a foul; bad cards name the count or the card."""
    with pytest.raises(error, match=message):
        set_paigow_hand(hand(high), hand(low))


@pytest.mark.parametrize(
    ("high", "low", "legal"),
    [
        ("AC KD 5H 3S 2C", "QS JD", True),  # ace high over queen high
        ("AC KD 5H 3S 2C", "AS QD", True),  # A-K over A-Q: the second card decides
        ("AC 9D 5H 3S 2C", "AS KD", False),  # A-9 under A-K: a foul
        ("2C 2D 5H 4S 3C", "AS KD", True),  # any pair over two high cards
    ],
)
def test_set_hand_high_card_edges(high: str, low: str, legal: bool) -> None:
    """High card against high card compares card by card, from the highest."""
    if legal:
        setting = set_paigow_hand(hand(high), hand(low))
        assert setting.high > setting.low
    else:
        with pytest.raises(IllegalPlayError, match="foul"):
            set_paigow_hand(hand(high), hand(low))


def test_split_pair_is_legal() -> None:
    """Splitting four of a kind into a pair in each hand is legal: the five-card pair has
    kickers, so it outranks the same pair alone (the house way's four-of-a-kind split)."""
    setting = set_paigow_hand(hand("JS JD AC KS 3C"), hand("JC JH"))
    assert setting.high > setting.low


# ---------------------------------------------------------------------------------------------
# Settling against the banker


@pytest.mark.parametrize(
    ("player", "banker", "outcome", "net"),
    [
        # Win both: even money less 5% commission (RULES.md section 3): 100 -> 95.
        (("KS KD 9C 9D 2S", "AS QD"), ("QS QH 8D 7C 4S", "JH 10D"), PaiGowOutcome.WIN, "95"),
        # Win one: push.
        (("KS KD 9C 9D 2S", "JS 10D"), ("QS QH 8D 7C 4S", "AH 3D"), PaiGowOutcome.PUSH, "0"),
        # Lose both.
        (("QS QH 8D 7C 4S", "JH 10D"), ("KS KD 9C 9D 2S", "AS QD"), PaiGowOutcome.LOSE, "-100"),
        # Copy in the high hand goes to the banker: the player's low win only makes a push.
        (("AS AD 9C 8D 4S", "KS QD"), ("AH AC 9H 8H 4C", "JH 10D"), PaiGowOutcome.PUSH, "0"),
        # Copies in both hands: the banker wins both.
        (("AS AD 9C 8D 4S", "KS QD"), ("AH AC 9H 8H 4C", "KH QC"), PaiGowOutcome.LOSE, "-100"),
    ],
)
def test_settle(
    player: tuple[str, str], banker: tuple[str, str], outcome: PaiGowOutcome, net: str
) -> None:
    """Win both / win one / lose both, copies to the banker; stake 100."""
    result = settle_paigow(
        set_paigow_hand(hand(player[0]), hand(player[1])),
        set_paigow_hand(hand(banker[0]), hand(banker[1])),
        stake=100,
    )
    assert result.outcome is outcome
    assert result.net == Decimal(net)
    assert result.to_dict()["outcome"] == outcome.value


def test_settle_commission_option_and_bad_input() -> None:
    """Commission is a rules option; shared cards, two jokers and bad stakes are errors."""
    player = set_paigow_hand(hand("KS KD 9C 9D 2S"), hand("AS QD"))
    banker = set_paigow_hand(hand("QS QH 8D 7C 4S"), hand("JH 10D"))
    free = PaiGowRules(commission=Decimal(0))
    assert settle_paigow(player, banker, 100, free).net == 100
    clash = set_paigow_hand(hand("KS QH 8D 7C 4S"), hand("JH 10D"))
    with pytest.raises(HandError, match="duplicate card KS"):
        settle_paigow(player, clash)
    joker_player = set_paigow_hand(hand("KS KD 9C 9D JB"), hand("AS QD"))
    joker_banker = set_paigow_hand(hand("QS QH 8D 7C JR"), hand("JH 10D"))
    with pytest.raises(HandError, match="at most one joker"):
        settle_paigow(joker_player, joker_banker)
    with pytest.raises(HandError, match="stake 0 must be positive"):
        settle_paigow(player, banker, 0)
    with pytest.raises(ProfileError, match=r"commission 1\.2"):
        PaiGowRules(commission=Decimal("1.2"))


def test_setting_to_dict_is_json_ready() -> None:
    """The endpoint form: cards as notation, category and words for each hand."""
    setting = house_way(hand("AS KD 9C 9D 5H 3S JR"))
    assert setting.to_dict() == {
        "high": {
            "cards": ["AS", "JR", "KD", "5H", "3S"],
            "category": "pair",
            "description": "pair of aces",
        },
        "low": {"cards": ["9C", "9D"], "category": "pair", "description": "pair of 9s"},
    }
