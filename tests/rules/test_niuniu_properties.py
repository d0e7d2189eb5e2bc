"""Property tests of Niu Niu scoring (RULES.md section 1, STYLE.md "Property tests")."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.cards import Card, full_deck
from rules.niuniu import Outcome, card_points, compare_hands, evaluate_hand, rank_hands
from rules.niuniu_batch import compare_batch, hands_to_indices, score_batch
from rules.niuniu_profiles import (
    ALL_SPECIAL_HANDS,
    SUIT_ORDER_SHCD,
    SUIT_ORDER_SHDC,
    NiuProfile,
    NiuScore,
    TieBreak,
    TieRule,
    get_profile,
)

DECK: tuple[Card, ...] = tuple(card for card in full_deck() if isinstance(card, Card))

one_deck_hands = st.lists(st.sampled_from(DECK), min_size=5, max_size=5, unique=True)


@st.composite
def profiles(draw: st.DrawFn, *, plain: bool = False) -> NiuProfile:
    """Any mix of house options (``plain``: without the Ngau options that change what a bull is)."""
    base = get_profile(draw(st.sampled_from(["classic", "trainer", "app"])))
    specials = draw(st.lists(st.sampled_from(ALL_SPECIAL_HANDS), unique=True, max_size=4))
    return base.replace(
        special_hands=tuple(specials),
        ten_is_face=draw(st.booleans()),
        suit_order=draw(st.sampled_from([SUIT_ORDER_SHCD, SUIT_ORDER_SHDC])),
        tie_break=draw(st.sampled_from(list(TieBreak))),
        ties=draw(st.sampled_from(list(TieRule))),
        swap_three_six=False if plain else draw(st.booleans()),
        triple_bull=False if plain else draw(st.booleans()),
        double_ox=False if plain else draw(st.booleans()),
        no_bull_points=draw(st.booleans()),
        decks=draw(st.sampled_from([1, 2])),
    )


@st.composite
def dealt_hands(draw: st.DrawFn, count: int, decks: int = 1) -> list[list[Card]]:
    """``count`` hands dealt together from ``decks`` decks."""
    shoe = [card for card in DECK for _ in range(decks)]
    positions = draw(
        st.lists(st.integers(0, len(shoe) - 1), min_size=5 * count, max_size=5 * count, unique=True)
    )
    cards = [shoe[i] for i in positions]
    return [cards[5 * i : 5 * i + 5] for i in range(count)]


def names(cards: object) -> Counter[str]:
    return Counter(str(card) for card in cards)  # type: ignore[attr-defined]


@given(one_deck_hands, profiles(), st.randoms(use_true_random=False))
def test_card_order_never_matters(cards: list[Card], profile: NiuProfile, rng: object) -> None:
    """The score, the split and the strength do not depend on the order of the cards."""
    shuffled = list(cards)
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    first, second = evaluate_hand(cards, profile), evaluate_hand(shuffled, profile)
    assert (first.strength, first.score, first.points, first.split) == (
        second.strength,
        second.score,
        second.points,
        second.split,
    )


@given(one_deck_hands, profiles())
def test_split_uses_exactly_the_given_cards(cards: list[Card], profile: NiuProfile) -> None:
    """The engine returns the split: three cards and two, together the given five."""
    hand = evaluate_hand(cards, profile)
    assert names(hand.cards) == names(cards)
    if hand.split is not None:
        assert names(hand.split.bull + hand.split.rest) == names(cards)
    assert hand.score in profile.score_order
    assert hand.strength[0] == profile.tier(hand.score)


@given(one_deck_hands, profiles(plain=True))
def test_with_a_bull_the_score_is_the_last_digit_of_the_total(
    cards: list[Card], profile: NiuProfile
) -> None:
    """RULES.md: with a bull, the score equals the last digit of the sum of all five cards,
    whichever valid triple is chosen; without one, no triple sums to a multiple of 10."""
    hand = evaluate_hand(cards, profile)
    total = sum(map(card_points, cards))
    triples = [sum(map(card_points, t)) for t in itertools.combinations(cards, 3)]
    if hand.split is None:
        assert all(t % 10 for t in triples)
        assert hand.points is None
        assert hand.score in (NiuScore.NO_NIU, *ALL_SPECIAL_HANDS)
    else:
        assert sum(map(card_points, hand.split.bull)) % 10 == 0
        assert hand.points == sum(map(card_points, hand.split.rest)) % 10 == total % 10
        if not hand.score.is_special:
            assert hand.score is NiuScore.for_points(total % 10)


@given(dealt_hands(2), profiles())
def test_comparison_is_antisymmetric(pair: list[list[Card]], profile: NiuProfile) -> None:
    """compare(a, b) is the reverse of compare(b, a); a hand ties with itself."""
    first, second = (evaluate_hand(cards, profile) for cards in pair)
    assert compare_hands(first, second) is compare_hands(second, first).reverse()
    assert compare_hands(first, first) is Outcome.TIE


@given(st.integers(2, 4).flatmap(lambda n: dealt_hands(n)), profiles())
def test_ranking_agrees_with_comparison(hands: list[list[Card]], profile: NiuProfile) -> None:
    """Places follow pairwise comparison: a better place iff it wins, a shared place iff a tie."""
    profile = profile.replace(decks=1)
    ranking = rank_hands(hands, profile)
    for i, j in itertools.permutations(range(len(hands)), 2):
        outcome = compare_hands(ranking.hands[i], ranking.hands[j])
        if ranking.places[i] < ranking.places[j]:
            assert outcome is Outcome.WIN
        elif ranking.places[i] == ranking.places[j]:
            assert outcome is Outcome.TIE
        else:
            assert outcome is Outcome.LOSE
    winners = ranking.winners
    assert winners and all(ranking.hands[w] == max(ranking.hands) for w in winners)


@settings(max_examples=150, deadline=None)
@given(
    profiles().flatmap(
        lambda profile: st.tuples(
            st.just(profile),
            st.integers(1, 12).flatmap(
                lambda n: st.lists(dealt_hands(1, profile.decks), min_size=n, max_size=n)
            ),
        )
    )
)
def test_batch_agrees_with_per_hand_api(case: tuple[NiuProfile, list[list[list[Card]]]]) -> None:
    """score_batch gives each hand the score and points of evaluate_hand, and orders any two
    hands as compare_hands does, under every mix of options."""
    profile, dealt = case
    hands = [deal[0] for deal in dealt]
    batch = score_batch(hands_to_indices(hands), profile)
    single = [evaluate_hand(cards, profile) for cards in hands]
    assert batch.scores() == [hand.score for hand in single]
    assert batch.points.tolist() == [-1 if h.points is None else h.points for h in single]
    signs = {Outcome.WIN: 1, Outcome.LOSE: -1, Outcome.TIE: 0}
    strength = batch.strength.tolist()
    for i, j in itertools.product(range(len(hands)), repeat=2):
        batch_sign = (strength[i] > strength[j]) - (strength[i] < strength[j])
        assert batch_sign == signs[compare_hands(single[i], single[j])]
    indices = hands_to_indices(hands)
    for shift in range(1, len(hands)):
        rolled = score_batch(np.roll(indices, shift, axis=0), profile)
        expected = [
            signs[compare_hands(h, single[(k - shift) % len(hands)])] for k, h in enumerate(single)
        ]
        assert compare_batch(batch, rolled).tolist() == expected
