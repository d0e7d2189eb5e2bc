"""Niu Niu (Bull Bull, 牛牛): the best 3 + 2 split of five cards, its score, and who wins.

Core rule (RULES.md section 1, every profile): A = 1, 2..9 face value, 10 / J / Q / K = 10.
A *bull* is three cards whose points sum to a multiple of 10; the other two give the score,
the last digit of their sum (0 is Niu Niu). No bull is No Niu, the weakest hand.

The split. Where several triples are bulls, the engine picks, deterministically:

1. the split that gives the strongest score under the profile (this only matters with house
   options: the 3/6 swap can change the points, and "double ox" wants a pair in the rest);
2. among equally strong splits, the first triple in lexicographic order of the cards sorted
   strongest first (rank K > Q > .. > A, then the profile's suit order). This puts the high
   cards in the bull and reads like a person would: ``3 7 K 8 6`` splits ``K 7 3 | 8 6``.

The result is a :class:`NiuHand`, a frozen record ordered by its ``strength`` under the
profile; every other field (cards, split, label) is excluded from comparison, so
``max(hands)`` is the winner and equal strength is an explicit tie.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from rules.cards import AnyCard, Card, Rank, check_distinct, parse_cards
from rules.errors import HandError
from rules.niuniu_profiles import (
    DEFAULT_PROFILE,
    NiuProfile,
    NiuScore,
    TieBreak,
    TieRule,
    get_profile,
)

__all__ = [
    "HAND_SIZE",
    "NiuHand",
    "NiuSplit",
    "Outcome",
    "Ranking",
    "banker_outcome",
    "card_points",
    "compare_hands",
    "evaluate_hand",
    "rank_hands",
    "score_hand",
]

HAND_SIZE = 5
"""A Niu Niu hand is five cards."""

_TRIPLES: tuple[tuple[int, int, int], ...] = tuple(itertools.combinations(range(HAND_SIZE), 3))
"""The ten ways to pick three of five positions, in lexicographic order."""


def card_points(card: Card) -> int:
    """The points of a card: A = 1, 2..9 face value, 10 / J / Q / K = 10."""
    return min(int(card.rank), 10)


class Outcome(enum.Enum):
    """The result of one hand against another, seen from the first (or the player)."""

    WIN = "win"
    LOSE = "lose"
    TIE = "tie"

    def reverse(self) -> Outcome:
        """The same result seen from the other side."""
        return {Outcome.WIN: Outcome.LOSE, Outcome.LOSE: Outcome.WIN}.get(self, Outcome.TIE)


@dataclass(frozen=True, slots=True)
class NiuSplit:
    """A bull (three cards summing to a multiple of 10) and the two cards that score.

    ``swapped`` lists the cards counted with the other value under the 3/6 swap option
    (a 3 counted as 6, a 6 counted as 3); it is empty otherwise.
    """

    bull: tuple[Card, Card, Card]
    rest: tuple[Card, Card]
    swapped: tuple[Card, ...] = ()

    def __str__(self) -> str:
        return f"{' '.join(map(str, self.bull))} | {' '.join(map(str, self.rest))}"


@dataclass(frozen=True, slots=True, order=True)
class NiuHand:
    """A scored hand. Ordered and compared by ``strength`` only, under its profile.

    Attributes:
        strength: the comparison key: ``(tier, sub, high card...)``; the tier is the score's
            place in the profile's order (0 = No Niu, 10 = Niu Niu, then double ox and special
            hands); ``sub`` orders equal special hands (the rank of a bomb's four, of a double
            ox's pair; with ``no_bull_points``, a hand without bull's best two-card digit);
            with ``TieBreak.HIGH_CARD`` the highest card's rank and suit follow.
        cards: the five cards as given.
        score: the score name (``no_niu``, ``niu_1`` .. ``niu_9``, ``niu_niu``, specials).
        points: the last digit of the scoring pair, 0..9 (0 for Niu Niu), or None without bull.
        split: the chosen bull and rest, or None when no three cards make a bull.
        profile: the profile the hand was scored under. Compare hands of one profile only.
    """

    strength: tuple[int, ...]
    cards: tuple[Card, ...] = field(compare=False)
    score: NiuScore = field(compare=False)
    points: int | None = field(compare=False)
    split: NiuSplit | None = field(compare=False)
    profile: NiuProfile = field(compare=False, repr=False)

    @property
    def label(self) -> str:
        """A readable name of the score, e.g. ``"Niu 4"``."""
        return self.score.label

    @property
    def tier(self) -> int:
        """The score's place in the profile's order of scores (0 = No Niu)."""
        return self.strength[0]

    def __str__(self) -> str:
        shown = " ".join(map(str, self.cards))
        if self.split is None:
            return f"{shown}: {self.label}"
        return f"{shown}: {self.label} ({self.split})"


def _check_hand(cards: Sequence[AnyCard], profile: NiuProfile) -> tuple[Card, ...]:
    """Cards of a valid Niu Niu hand, or HandError naming the problem."""
    if len(cards) != HAND_SIZE:
        shown = " ".join(map(str, cards))
        raise HandError(f"a Niu Niu hand is {HAND_SIZE} cards, got {len(cards)}: {shown!r}")
    jokers = [str(card) for card in cards if not isinstance(card, Card)]
    if jokers:
        raise HandError(f"Niu Niu is played without jokers, got {', '.join(jokers)}")
    check_distinct(cards, profile.decks)
    return tuple(card for card in cards if isinstance(card, Card))


def _sort_key(card: Card, profile: NiuProfile) -> tuple[int, int]:
    """Strongest first: rank K .. A, then the profile's suit order."""
    return (-int(card.rank), -profile.suit_strength(card.suit))


def _value_choices(card: Card, profile: NiuProfile) -> tuple[int, ...]:
    """The values a card may count as: its points, or both 3 and 6 under the swap option."""
    points = card_points(card)
    if profile.swap_three_six and points in (3, 6):
        return (points, 9 - points)
    return (points,)


def _is_face(card: Card, profile: NiuProfile) -> bool:
    return card.rank.is_face or (profile.ten_is_face and card.rank is Rank.TEN)


def _special_sub(score: NiuScore, cards: Sequence[Card], profile: NiuProfile) -> int | None:
    """None if ``cards`` are not the special hand ``score``; else its order among equals."""
    if score is NiuScore.FIVE_SMALL:
        if all(card.rank <= Rank.FOUR for card in cards) and sum(map(card_points, cards)) <= 10:
            return 0
        return None
    if score is NiuScore.BOMB:
        for rank in {card.rank for card in cards}:
            if sum(card.rank is rank for card in cards) == 4:
                return int(rank)
        return None
    faces = sum(_is_face(card, profile) for card in cards)
    if score is NiuScore.ULTIMATE:
        return 0 if faces == HAND_SIZE else None
    if score is NiuScore.FOUR_FACE:
        # When 10 counts as a face card, four faces + a 10 is five faces: ``ultimate``.
        tens = sum(card.rank is Rank.TEN for card in cards)
        return 0 if faces == 4 and tens == 1 and not profile.ten_is_face else None
    raise AssertionError(f"not a special hand: {score!r}")


def _best_rest(rest: Sequence[Card], profile: NiuProfile) -> tuple[int, tuple[Card, ...]]:
    """The best points 1..10 (10 = Niu Niu) of the scoring pair and the cards swapped for it."""
    best: tuple[int, tuple[Card, ...]] = (-1, ())
    for values in itertools.product(*(_value_choices(card, profile) for card in rest)):
        points = sum(values) % 10 or 10
        swapped = tuple(c for c, v in zip(rest, values, strict=True) if v != card_points(c))
        if points > best[0]:
            best = (points, swapped)
    return best


def _pair_digit(pair: Sequence[Card], profile: NiuProfile) -> int:
    """The best last digit 0..9 two cards make (no bull, so 0 is simply the lowest)."""
    choices = itertools.product(*(_value_choices(card, profile) for card in pair))
    return max(sum(values) % 10 for values in choices)


def _bull_swaps(triple: Sequence[Card], profile: NiuProfile) -> tuple[Card, ...] | None:
    """None if ``triple`` is no bull; else the cards swapped to make it one (often none)."""
    if profile.triple_bull and len({card.rank for card in triple}) == 1:
        return ()
    for values in itertools.product(*(_value_choices(card, profile) for card in triple)):
        if sum(values) % 10 == 0:
            return tuple(c for c, v in zip(triple, values, strict=True) if v != card_points(c))
    return None


def evaluate_hand(
    cards: Iterable[AnyCard] | str, profile: str | NiuProfile = DEFAULT_PROFILE
) -> NiuHand:
    """Score five cards under ``profile``: the best split, the score and the strength.

    ``cards`` are cards or card text (``"3H 7S KD 8C 6D"``). Raises HandError for a count other
    than five, for jokers, and for a card repeated more often than the profile's decks allow;
    CardError for unreadable text; ProfileError for an unknown profile name.
    """
    rules = get_profile(profile)
    given = parse_cards(cards) if isinstance(cards, str) else tuple(cards)
    hand = _check_hand(given, rules)
    ordered = sorted(hand, key=lambda card: _sort_key(card, rules))

    best: tuple[tuple[int, int], NiuSplit, int] | None = None
    for triple_at in _TRIPLES:
        triple = [ordered[i] for i in triple_at]
        rest = [card for i, card in enumerate(ordered) if i not in triple_at]
        triple_swaps = _bull_swaps(triple, rules)
        if triple_swaps is None:
            continue
        points, rest_swaps = _best_rest(rest, rules)
        pair_rank = int(rest[0].rank) if rest[0].rank is rest[1].rank else 0
        if rules.double_ox and pair_rank:
            key = (rules.tier(NiuScore.DOUBLE_OX), pair_rank)
        else:
            key = (points, 0)
        if best is None or key > best[0]:
            swapped = tuple(sorted(triple_swaps + rest_swaps, key=lambda c: _sort_key(c, rules)))
            split = NiuSplit((triple[0], triple[1], triple[2]), (rest[0], rest[1]), swapped)
            best = (key, split, points % 10)

    tier, sub = (0, 0) if best is None else best[0]
    if best is None and rules.no_bull_points:
        sub = max(_pair_digit(pair, rules) for pair in itertools.combinations(hand, 2))
    score = rules.score_order[tier]
    for special in rules.special_hands:
        special_sub = _special_sub(special, hand, rules)
        if special_sub is not None:
            tier, sub, score = rules.tier(special), special_sub, special
            break

    strength: tuple[int, ...] = (tier, sub)
    if rules.tie_break is TieBreak.HIGH_CARD:
        high = ordered[0]
        strength += (int(high.rank), rules.suit_strength(high.suit))
    return NiuHand(
        strength=strength,
        cards=hand,
        score=score,
        points=None if best is None else best[2],
        split=None if best is None else best[1],
        profile=rules,
    )


def score_hand(
    cards: Iterable[AnyCard] | str, profile: str | NiuProfile = DEFAULT_PROFILE
) -> NiuScore:
    """Only the score of five cards under ``profile`` (see :func:`evaluate_hand`)."""
    return evaluate_hand(cards, profile).score


def compare_hands(first: NiuHand, second: NiuHand) -> Outcome:
    """WIN if ``first`` is stronger, LOSE if weaker, TIE if equally strong (same profile)."""
    if first.profile != second.profile:
        raise HandError(
            f"cannot compare hands of profiles {first.profile.name!r} and {second.profile.name!r}"
        )
    if first.strength > second.strength:
        return Outcome.WIN
    if first.strength < second.strength:
        return Outcome.LOSE
    return Outcome.TIE


def banker_outcome(banker: NiuHand, player: NiuHand) -> Outcome:
    """The player's result against the banker; a full tie follows the profile's ``ties`` rule."""
    outcome = compare_hands(player, banker)
    if outcome is Outcome.TIE and player.profile.ties is TieRule.BANKER_WINS:
        return Outcome.LOSE
    return outcome


@dataclass(frozen=True, slots=True)
class Ranking:
    """Hands ranked strongest first.

    ``places[i]`` is the place of hand ``i`` (1 = best); equally strong hands share a place and
    the next place skips (1, 1, 3). ``winners`` are the indexes of the hands in first place:
    more than one is a tie (:attr:`is_tie`).
    """

    hands: tuple[NiuHand, ...]
    places: tuple[int, ...]

    @property
    def winners(self) -> tuple[int, ...]:
        """Indexes of the hands in first place."""
        return tuple(i for i, place in enumerate(self.places) if place == 1)

    @property
    def is_tie(self) -> bool:
        """True when several hands share first place."""
        return len(self.winners) > 1

    @property
    def order(self) -> tuple[int, ...]:
        """Hand indexes, best place first (equal places keep the given order)."""
        return tuple(sorted(range(len(self.hands)), key=lambda i: self.places[i]))


def rank_hands(
    hands: Sequence[Iterable[AnyCard] | str | NiuHand], profile: str | NiuProfile = DEFAULT_PROFILE
) -> Ranking:
    """Rank two or more hands under ``profile`` (the trainer ranks 2 to 4), ties shared.

    The hands are dealt from the profile's decks together: a card repeated more often than the
    decks hold is a HandError, as is a list of fewer than two hands.
    """
    rules = get_profile(profile)
    if len(hands) < 2:
        raise HandError(f"ranking needs at least 2 hands, got {len(hands)}")
    scored = tuple(
        evaluate_hand(hand.cards if isinstance(hand, NiuHand) else hand, rules) for hand in hands
    )
    check_distinct([card for hand in scored for card in hand.cards], rules.decks)
    places = tuple(1 + sum(other.strength > hand.strength for other in scored) for hand in scored)
    return Ranking(hands=scored, places=places)
