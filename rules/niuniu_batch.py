"""Vectorised Niu Niu scoring: many hands at once from numpy arrays, for simulations and odds.

Hands are an integer array of shape ``(N, 5)`` of card indices in :data:`rules.cards.CARD_CLASSES`
order (suit by suit S, H, D, C, each A to K: index = 13 * suit + rank - 1). The result agrees
with :func:`rules.niuniu.evaluate_hand` hand by hand (score, points and the order of strength)
under every profile option; the tests check it on random hands.

How: a bull exists among five cards iff some pair of them has the same last digit as the whole
hand (the other three then sum to a multiple of 10), and the score is then the last digit of
the total. The plain rules therefore need only the ten pair sums of each hand. House options
(3/6 swap, three of a kind bull, double ox) take a slower path over the ten triples.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import comb

import numpy as np
import numpy.typing as npt

from rules.cards import AnyCard, Suit, full_deck
from rules.errors import HandError
from rules.niuniu_profiles import DEFAULT_PROFILE, NiuProfile, NiuScore, TieBreak, get_profile

__all__ = [
    "ONE_DECK_HANDS",
    "NiuBatch",
    "all_hands",
    "compare_batch",
    "hands_to_indices",
    "score_batch",
]

ONE_DECK_HANDS = comb(52, 5)
"""2,598,960: the number of five-card hands from one deck."""

_PAIRS: tuple[tuple[int, int], ...] = tuple(itertools.combinations(range(5), 2))
_TRIPLES: tuple[tuple[int, int, int], ...] = tuple(itertools.combinations(range(5), 3))
_CARD_INDEX: dict[AnyCard, int] = {card: index for index, card in enumerate(full_deck(True))}

IntArray = npt.NDArray[np.integer]
UInt8Array = npt.NDArray[np.uint8]
Int16Array = npt.NDArray[np.int16]

_RANK = np.array([index % 13 + 1 for index in range(52)], dtype=np.uint8)
_POINTS = np.minimum(_RANK, 10)
_DIGIT = _POINTS % 10
_MOD10 = (np.arange(64) % 10).astype(np.uint8)
_PLAIN_TIER = np.array([10, *range(1, 10)], dtype=np.int16)  # last digit -> tier (0 is Niu Niu)


@dataclass(frozen=True, slots=True)
class NiuBatch:
    """Scores of N hands (struct of arrays).

    Attributes:
        tier: (N,) int8, index of each score in ``profile.score_order`` (0 = No Niu).
        points: (N,) int8, last digit of the scoring pair 0..9, or -1 without a bull.
        strength: (N,) int32, ordered like :attr:`rules.niuniu.NiuHand.strength`: a larger
            value is a stronger hand, equal values are equally strong.
        profile: the profile the hands were scored under.
    """

    tier: npt.NDArray[np.int8]
    points: npt.NDArray[np.int8]
    strength: npt.NDArray[np.int32]
    profile: NiuProfile

    def __len__(self) -> int:
        return int(self.tier.shape[0])

    def scores(self) -> list[NiuScore]:
        """The score of each hand, as names."""
        order = self.profile.score_order
        return [order[tier] for tier in self.tier.tolist()]

    def counts(self) -> dict[NiuScore, int]:
        """How many hands got each score of the profile (zeros included), weakest first."""
        found = np.bincount(self.tier, minlength=len(self.profile.score_order))
        return dict(zip(self.profile.score_order, (int(n) for n in found), strict=True))


def hands_to_indices(hands: Iterable[Sequence[AnyCard]]) -> npt.NDArray[np.uint8]:
    """Hands of card objects as an ``(N, 5)`` uint8 array of CARD_CLASSES indices."""
    rows = [[_CARD_INDEX[card] for card in hand] for hand in hands]
    bad = [i for i, row in enumerate(rows) if len(row) != 5]
    if bad:
        raise HandError(f"hand {bad[0]} has {len(rows[bad[0]])} cards, expected 5")
    return np.array(rows, dtype=np.uint8).reshape(len(rows), 5)


def all_hands() -> npt.NDArray[np.uint8]:
    """Every five-card hand of one deck, ``(2598960, 5)`` uint8, in lexicographic order."""
    hands = np.empty((ONE_DECK_HANDS, 5), dtype=np.uint8)
    start = 0
    # For each first card, the four-card tails come from the cards above it.
    tails = np.array(list(itertools.combinations(range(52), 4)), dtype=np.uint8)
    for first in range(48):
        chosen = tails[tails[:, 0] > first]
        hands[start : start + len(chosen), 0] = first
        hands[start : start + len(chosen), 1:] = chosen
        start += len(chosen)
    return hands


def _validate(cards: IntArray, decks: int) -> UInt8Array:
    """The indices as a contiguous ``(5, N)`` uint8 array (one row per card position).

    HandError for a shape other than (N, 5), non-integers, an index outside 0..51 (jokers),
    or a card repeated more often than ``decks`` copies, naming the first bad hand.
    """
    array = np.asarray(cards)
    if array.ndim != 2 or array.shape[1] != 5:
        raise HandError(f"expected an (N, 5) array of card indices, got shape {array.shape}")
    if not np.issubdtype(array.dtype, np.integer):
        raise HandError(f"expected integer card indices, got dtype {array.dtype}")
    if array.size and (array.min() < 0 or array.max() > 51):
        row = int(np.argwhere((array < 0) | (array > 51))[0, 0])
        raise HandError(
            f"hand {row} has a card index outside 0..51 (jokers are not used): "
            f"{array[row].tolist()}"
        )
    columns = np.ascontiguousarray(array.T, dtype=np.uint8)
    copies = [sum((columns[i] == columns[j]).astype(np.uint8) for j in range(5)) for i in range(5)]
    repeated = np.maximum.reduce(copies) > decks
    if repeated.any():
        row = int(np.argmax(repeated))
        raise HandError(
            f"hand {row} holds a card more often than {decks} deck(s) allow: {array[row].tolist()}"
        )
    return columns


def _plain_keys(columns: UInt8Array) -> tuple[Int16Array, npt.NDArray[np.int8]]:
    """Tier (0 No Niu, 1..9, 10 Niu Niu) and points (-1 without bull), plain scoring."""
    digits = _DIGIT[columns]  # each card's points mod 10
    total = _MOD10[digits[0] + digits[1] + digits[2] + digits[3] + digits[4]]
    total_plus_ten = total + np.uint8(10)
    bull = np.zeros(total.shape, dtype=bool)
    for i, j in _PAIRS:
        pair = digits[i] + digits[j]
        bull |= pair == total
        bull |= pair == total_plus_ten
    tier = _PLAIN_TIER[total] * bull
    points = np.where(bull, total.astype(np.int8), np.int8(-1))
    return tier.astype(np.int16), points


def _option_keys(
    columns: UInt8Array, profile: NiuProfile
) -> tuple[Int16Array, Int16Array, npt.NDArray[np.int8]]:
    """Tier, sub-key and points under the 3/6 swap, three of a kind and double ox options."""
    ranks = _RANK[columns].astype(np.int16)
    values = _POINTS[columns].astype(np.int16)
    if profile.swap_three_six:
        swappable = (values == 3) | (values == 6)
    else:
        swappable = np.zeros(values.shape, dtype=bool)
    low = np.where(swappable, 3, values)  # a swappable card as 3; each one counted 6 adds 3
    double_ox_key = profile.tier(NiuScore.DOUBLE_OX) * 16 if profile.double_ox else 0
    count = columns.shape[1]
    best = np.zeros(count, dtype=np.int16)  # tier * 16 + sub of the best split so far
    best_points = np.full(count, -1, dtype=np.int8)
    for triple in _TRIPLES:
        rest = [i for i in range(5) if i not in triple]
        triple_sum = low[list(triple)].sum(axis=0)
        triple_swaps = swappable[list(triple)].sum(axis=0)
        bull = np.zeros(count, dtype=bool)
        for extra in range(4):
            bull |= (triple_swaps >= extra) & ((triple_sum + 3 * extra) % 10 == 0)
        if profile.triple_bull:
            bull |= (ranks[triple[0]] == ranks[triple[1]]) & (ranks[triple[1]] == ranks[triple[2]])
        rest_sum = low[rest].sum(axis=0)
        rest_swaps = swappable[rest].sum(axis=0)
        rest_points = np.zeros(count, dtype=np.int16)
        for extra in range(3):
            digit = (rest_sum + 3 * extra) % 10
            candidate = np.where(rest_swaps >= extra, np.where(digit == 0, 10, digit), 0)
            rest_points = np.maximum(rest_points, candidate)
        key = rest_points * 16
        if profile.double_ox:
            pair = ranks[rest[0]] == ranks[rest[1]]
            key = np.where(pair, double_ox_key + ranks[rest[0]], key)
        key = np.where(bull, key, 0).astype(np.int16)
        better = key > best
        best = np.where(better, key, best)
        best_points = np.where(better, (rest_points % 10).astype(np.int8), best_points)
    return best // 16, best % 16, best_points


def _best_pair_digit(columns: UInt8Array, profile: NiuProfile) -> Int16Array:
    """The best last digit 0..9 that two cards of each hand make (3/6 swap included)."""
    values = _POINTS[columns].astype(np.int16)
    swappable = ((values == 3) | (values == 6)) & profile.swap_three_six
    low = np.where(swappable, 3, values)
    best = np.zeros(columns.shape[1], dtype=np.int16)
    for i, j in _PAIRS:
        swaps = swappable[i].astype(np.int16) + swappable[j]
        for extra in range(3):
            digit = (low[i] + low[j] + 3 * extra) % 10
            best = np.maximum(best, np.where(swaps >= extra, digit, 0))
    return best


def _special_masks(
    columns: UInt8Array, special: NiuScore, profile: NiuProfile
) -> tuple[npt.NDArray[np.bool_], Int16Array | int]:
    """Which hands are the special hand ``special``, and their order among equals."""
    ranks = _RANK[columns]
    if special is NiuScore.FIVE_SMALL:
        small = np.logical_and.reduce(ranks <= 4, axis=0)
        total = _POINTS[columns].sum(axis=0, dtype=np.uint8)
        return small & (total <= 10), 0
    if special is NiuScore.BOMB:
        copies = [sum((ranks[i] == ranks[j]).astype(np.uint8) for j in range(5)) for i in range(2)]
        bomb = (copies[0] == 4) | (copies[1] == 4)
        # One of the first two cards is inside the four.
        four_rank = np.where(copies[0] == 4, ranks[0], ranks[1]).astype(np.int16)
        return bomb, four_rank
    faces = ranks >= (10 if profile.ten_is_face else 11)
    face_count = faces.sum(axis=0, dtype=np.uint8)
    if special is NiuScore.ULTIMATE:
        return face_count == 5, 0
    if special is NiuScore.FOUR_FACE:
        # When 10 counts as a face card, four faces + a 10 is five faces: ``ultimate``.
        tens = (ranks == 10).sum(axis=0, dtype=np.uint8)
        return (face_count == 4) & (tens == 1) & (not profile.ten_is_face), 0
    raise AssertionError(f"not a special hand: {special!r}")


def score_batch(cards: IntArray, profile: str | NiuProfile = DEFAULT_PROFILE) -> NiuBatch:
    """Score every row of ``cards`` (``(N, 5)`` CARD_CLASSES indices) under ``profile``.

    Raises HandError for a wrong shape, an index outside 0..51 (jokers), or a card repeated
    more often than the profile's decks allow, naming the first bad row.
    """
    rules = get_profile(profile)
    columns = _validate(cards, rules.decks)
    count = columns.shape[1]

    sub: Int16Array
    if rules.swap_three_six or rules.triple_bull or rules.double_ox:
        tier, sub, points = _option_keys(columns, rules)
    else:
        tier, points = _plain_keys(columns)
        sub = np.zeros(count, dtype=np.int16)

    if rules.no_bull_points:
        sub = np.where(tier == 0, _best_pair_digit(columns, rules), sub).astype(np.int16)

    # Special hands, weakest first so that a stronger one overrides.
    for special in reversed(rules.special_hands):
        found, special_sub = _special_masks(columns, special, rules)
        tier[found] = rules.tier(special)
        sub = np.where(found, special_sub, sub).astype(np.int16)

    strength = (tier.astype(np.int32) * 16 + sub) * 64
    if rules.tie_break is TieBreak.HIGH_CARD:
        # rank * 4 + suit strength, per CARD_CLASSES index; the hand's highest card counts.
        suits = [rules.suit_strength(suit) for suit in Suit]
        card_strength = (_RANK * 4 + np.repeat(np.array(suits, dtype=np.uint8), 13)).astype(
            np.uint8
        )
        strength += np.maximum.reduce(card_strength[columns], axis=0)
    return NiuBatch(
        tier=tier.astype(np.int8),
        points=points.astype(np.int8),
        strength=strength.astype(np.int32),
        profile=rules,
    )


def compare_batch(first: NiuBatch, second: NiuBatch) -> npt.NDArray[np.int8]:
    """Row by row: 1 where ``first`` is stronger, -1 where weaker, 0 where equally strong."""
    if first.profile != second.profile or len(first) != len(second):
        raise HandError("compare_batch needs two batches of one profile and one length")
    difference = first.strength.astype(np.int64) - second.strength
    return (np.int8(1) * (difference > 0) - (difference < 0)).astype(np.int8)
