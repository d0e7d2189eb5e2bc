"""The vectorised Niu Niu API: golden counts over all 2,598,960 one-deck hands (RULES.md)."""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import numpy.typing as npt
import pytest

from rules.cards import full_deck, parse_cards
from rules.errors import HandError
from rules.niuniu import evaluate_hand
from rules.niuniu_batch import (
    ONE_DECK_HANDS,
    NiuBatch,
    all_hands,
    compare_batch,
    hands_to_indices,
    score_batch,
)
from rules.niuniu_profiles import ALL_SPECIAL_HANDS, NiuScore, get_profile

CLASSIC = get_profile("classic")


@cache
def every_hand() -> npt.NDArray[np.uint8]:
    return all_hands()


@cache
def plain_batch() -> NiuBatch:
    return score_batch(every_hand(), CLASSIC)


def test_all_hands_are_the_distinct_five_card_hands() -> None:
    """C(52, 5) = 2,598,960 hands, each sorted and without repeats, in lexicographic order."""
    hands = every_hand()
    assert hands.shape == (ONE_DECK_HANDS, 5) == (2_598_960, 5)
    assert (np.diff(hands.astype(np.int16), axis=1) > 0).all()
    assert hands[0].tolist() == [0, 1, 2, 3, 4] and hands[-1].tolist() == [47, 48, 49, 50, 51]
    keys = (hands.astype(np.int64) * 52 ** np.arange(4, -1, -1)).sum(axis=1)
    assert (np.diff(keys) > 0).all()


def test_golden_counts_plain_scoring() -> None:
    """RULES.md golden figures: No Niu 872,128; Niu 1, 3, 7, 9: 171,304 each; Niu 2, 4, 6, 8:
    168,096 each; Niu 5: 177,424; Niu Niu (special hands included): 191,808."""
    counts = {score.value: count for score, count in plain_batch().counts().items()}
    assert counts == {
        "no_niu": 872_128,
        **{f"niu_{n}": 171_304 for n in (1, 3, 7, 9)},
        **{f"niu_{n}": 168_096 for n in (2, 4, 6, 8)},
        "niu_5": 177_424,
        "niu_niu": 191_808,
    }


@pytest.mark.parametrize(
    ("special", "count"),
    [
        (NiuScore.ULTIMATE, 792),  # five face cards (J/Q/K only)
        (NiuScore.BOMB, 624),  # four of a kind
        (NiuScore.FIVE_SMALL, 776),  # all five cards under 5 with total <= 10
        (NiuScore.FOUR_FACE, 1_980),  # four J/Q/K + one 10
    ],
)
def test_golden_counts_special_hands(special: NiuScore, count: int) -> None:
    """RULES.md golden figures for the special hands, each enabled alone."""
    batch = score_batch(every_hand(), CLASSIC.replace(special_hands=(special,)))
    assert batch.counts()[special] == count


def test_golden_trainer_moves_five_face_hands_out_of_niu_niu() -> None:
    """Seed 002: Ultimate is a hand of its own: 191,808 - 792 Niu Niu remain."""
    counts = score_batch(every_hand(), "trainer").counts()
    assert counts[NiuScore.ULTIMATE] == 792
    assert counts[NiuScore.NIU_NIU] == 191_808 - 792


def test_batch_agrees_with_brute_force_over_all_hands() -> None:
    """An independent reading of the rule over all hands: try the ten triples one by one."""
    hands = every_hand()
    points = np.minimum(hands % 13 + 1, 10).astype(np.int16)
    total = points.sum(axis=1)
    has_bull = np.zeros(len(hands), dtype=bool)
    for triple in itertools.combinations(range(5), 3):
        has_bull |= points[:, list(triple)].sum(axis=1) % 10 == 0
    expected_tier = np.where(has_bull, np.where(total % 10 == 0, 10, total % 10), 0)
    batch = plain_batch()
    assert np.array_equal(batch.tier, expected_tier)
    assert np.array_equal(batch.points, np.where(has_bull, total % 10, -1))


def test_batch_agrees_with_per_hand_api_on_a_sample_of_all_hands() -> None:
    """Every 2,599th hand (1,000 hands) under all special hands: batch == evaluate_hand."""
    profile = CLASSIC.replace(special_hands=ALL_SPECIAL_HANDS)
    sample = every_hand()[::2599]
    batch = score_batch(sample, profile)
    deck = full_deck()
    for row, score, points in zip(sample, batch.scores(), batch.points.tolist(), strict=True):
        hand = evaluate_hand([deck[i] for i in row], profile)
        assert (hand.score, hand.points if hand.points is not None else -1) == (score, points)


@pytest.mark.parametrize(
    ("cards", "profile_changes", "message"),
    [
        (np.zeros((3, 4), dtype=np.int16), {}, r"\(N, 5\).*\(3, 4\)"),
        (np.zeros((5,), dtype=np.int16), {}, r"\(N, 5\)"),
        (np.array([[0, 1, 2, 3, 52]]), {}, "outside 0..51"),
        (np.array([[0, 1, 2, 3, -1]]), {}, "outside 0..51"),
        (np.array([[0.0, 1, 2, 3, 4]]), {}, "integer"),
        (np.array([[0, 1, 2, 3, 4], [0, 1, 2, 3, 3]]), {}, "hand 1 .*1 deck"),
        (np.array([[0, 0, 0, 3, 4]]), {"decks": 2}, "hand 0 .*2 deck"),
    ],
)
def test_batch_errors(
    cards: npt.NDArray[np.generic], profile_changes: dict[str, int], message: str
) -> None:
    """Bad arrays raise HandError naming the problem and the first bad hand."""
    with pytest.raises(HandError, match=message):
        score_batch(cards, CLASSIC.replace(**profile_changes))  # type: ignore[arg-type]


def test_batch_allows_duplicates_with_several_decks() -> None:
    """RULES.md: identical cards are allowed when the game uses several decks."""
    two_decks = get_profile("trainer").replace(decks=2)
    cards = hands_to_indices([parse_cards("KS 7H 10C 3D 7D")] * 2)
    cards = np.vstack([cards, np.array([[12, 12, 19, 9, 25]])])  # KS KS 7H 10S KD
    batch = score_batch(cards, two_decks)
    assert batch.scores()[:2] == [NiuScore.NIU_7, NiuScore.NIU_7]
    assert compare_batch(
        score_batch(cards[:1], two_decks), score_batch(cards[1:2], two_decks)
    ).tolist() == [0]


def test_compare_batch() -> None:
    """Row by row: 1 stronger, -1 weaker, 0 equal; seed 002 example 4 (spades beat hearts)."""
    first = score_batch(hands_to_indices([parse_cards("KS 7H 10C 3D 7D")] * 2), "trainer")
    second = score_batch(
        hands_to_indices([parse_cards("KH 8C 2S 5H 2H"), parse_cards("KS QS 5H 5D JD")]),
        "trainer",
    )
    assert compare_batch(first, second).tolist() == [1, -1]
    with pytest.raises(HandError):
        compare_batch(first, score_batch(hands_to_indices([parse_cards("KS 7H 10C 3D 7D")])))


def test_hands_to_indices_uses_card_classes_order() -> None:
    """CARD_CLASSES order: index = 13 * suit (S, H, D, C) + rank - 1."""
    assert hands_to_indices([parse_cards("AS KS AH AD KC")]).tolist() == [[0, 12, 13, 26, 51]]
    with pytest.raises(HandError, match="4 cards"):
        hands_to_indices([parse_cards("AS KS AH AD")])
