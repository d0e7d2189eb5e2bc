"""Zheng Shangyou / Pits combinations: ranks, the rules object, and reading a set of cards.

Rules (seed 001; RULES.md section 2). Rank from low to high: 3 4 5 6 7 8 9 10 J Q K A 2, black
joker (JB), red joker (JR). The combinations are: single, pair, triple, quad (four of a kind),
sequence (at least 3 consecutive ranks, suits may differ), double, triple and quadruple sequence
(at least 3 consecutive ranks of 2, 3 or 4 cards each, e.g. 3 3 4 4 5 5).

Wild cards: a 2 may stand for any card in a same-rank group and in double, triple and quadruple
sequences, never in a single sequence (a natural 2 is never part of any sequence); a joker may
stand for any card in a same-rank group and in any sequence. Sequence ranks run from 3 to A:
they do not wrap (no K A 2, no A 2 3), so a wild card in a sequence never stands for a 2.

How a set of cards is read (the product's choices, where the seed is silent):

- A same-rank group takes the rank of its natural cards (3 .. A); wild cards stand for that rank.
- A group made only of 2s and jokers of one kind (a single 2, a pair of 2s, a single joker) has
  its own rank; it is natural when ``PitsRules.wild_as_itself_natural`` (default True).
- A group made only of wild cards of mixed kinds (2 + JB, JB + JR, ...) counts at its lowest
  card's rank (``PitsRules.mixed_wild_rank``, default LOWEST) and is not natural.
- A sequence with wild cards takes the best reading: the highest top rank the cards allow
  (5 6 JB reads 5 6 7, not 4 5 6; Q K JB reads Q K A; K A JB reads Q K A).
- A single sequence is ``one_suit`` when all its natural cards share one suit; a joker standing in
  takes the suit it needs (``PitsRules.joker_takes_suit``, default True).
- A set of cards may read as several kinds (5 JB JR: triple of 5s or sequence 5 6 7).
  ``combination_readings`` returns every kind, one reading each; ``classify_combination``
  returns one: the asked kind, or else the first in ``PitsKind`` order (groups, then sequences
  narrow to wide).
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from rules.cards import AnyCard, Card, Joker, Rank, Suit, check_distinct
from rules.errors import IllegalPlayError, ProfileError

__all__ = [
    "DEFAULT_PITS_RULES",
    "Combination",
    "CombinationError",
    "MixedWildRank",
    "PitsKind",
    "PitsRank",
    "PitsRoundEnd",
    "PitsRules",
    "classify_combination",
    "combination_readings",
    "pits_rank",
    "sort_pits_cards",
]


class CombinationError(IllegalPlayError):
    """Cards that form no Pits combination; the message says why."""


class PitsRank(enum.IntEnum):
    """Pits ranks from low to high: 3 .. K, A, 2, black joker, red joker."""

    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14
    TWO = 15
    BLACK_JOKER = 16
    RED_JOKER = 17

    @property
    def symbol(self) -> str:
        """The printed rank: ``3`` .. ``10``, ``J``, ``Q``, ``K``, ``A``, ``2``, ``JB``, ``JR``."""
        return _SYMBOLS[self]

    @property
    def plural(self) -> str:
        """Words for several cards of this rank: ``7s``, ``aces``, ``black jokers``."""
        return _PLURALS[self]

    @property
    def is_wild(self) -> bool:
        """True for 2 and the jokers, the cards that may stand for others."""
        return self >= PitsRank.TWO


_SYMBOLS = {rank: str(rank.value) for rank in PitsRank} | {
    PitsRank.JACK: "J",
    PitsRank.QUEEN: "Q",
    PitsRank.KING: "K",
    PitsRank.ACE: "A",
    PitsRank.TWO: "2",
    PitsRank.BLACK_JOKER: "JB",
    PitsRank.RED_JOKER: "JR",
}
_PLURALS = {rank: f"{rank.value}s" for rank in PitsRank} | {
    PitsRank.JACK: "jacks",
    PitsRank.QUEEN: "queens",
    PitsRank.KING: "kings",
    PitsRank.ACE: "aces",
    PitsRank.TWO: "2s",
    PitsRank.BLACK_JOKER: "black jokers",
    PitsRank.RED_JOKER: "red jokers",
}
SEQUENCE_LOW = PitsRank.THREE
"""The lowest rank a sequence may hold."""
SEQUENCE_HIGH = PitsRank.ACE
"""The highest rank a sequence may hold: sequences do not wrap and never hold a 2."""
SEQUENCE_SPAN = SEQUENCE_HIGH - SEQUENCE_LOW + 1
"""How many ranks a sequence can run over at most (3 to A: 12)."""


def pits_rank(card: AnyCard) -> PitsRank:
    """The Pits rank of a card: A above K, 2 above A, then JB, then JR."""
    if isinstance(card, Joker):
        return PitsRank.BLACK_JOKER if card is Joker.BLACK else PitsRank.RED_JOKER
    if card.rank is Rank.ACE:
        return PitsRank.ACE
    if card.rank is Rank.TWO:
        return PitsRank.TWO
    return PitsRank(card.rank.value)


_SUIT_ORDER = {suit: index for index, suit in enumerate(Suit)}


def _card_order(card: AnyCard) -> tuple[int, int]:
    suit_index = _SUIT_ORDER[card.suit] if isinstance(card, Card) else 0
    return (pits_rank(card), suit_index)


def sort_pits_cards(cards: Iterable[AnyCard]) -> tuple[AnyCard, ...]:
    """Cards sorted by Pits rank (3 low, JR high), then suit S, H, D, C."""
    return tuple(sorted(cards, key=_card_order))


class PitsKind(enum.Enum):
    """The kinds of combination, in the order ``classify_combination`` prefers among readings.

    The value is the product's name (lower-case snake case, as the CLI and the API print it).
    """

    SINGLE = "single"
    PAIR = "pair"
    TRIPLE = "triple"
    QUAD = "quad"
    SEQUENCE = "sequence"
    DOUBLE_SEQUENCE = "double_sequence"
    TRIPLE_SEQUENCE = "triple_sequence"
    QUADRUPLE_SEQUENCE = "quadruple_sequence"

    @property
    def width(self) -> int:
        """Cards per rank: 1 for single and sequence, 2 for pair and double sequence, ..."""
        return _WIDTHS[self]

    @property
    def is_sequence(self) -> bool:
        """True for the four sequence kinds."""
        return self in _SEQUENCES

    @property
    def words(self) -> str:
        """The kind in plain words: ``double sequence``."""
        return self.value.replace("_", " ")


_WIDTHS = {
    PitsKind.SINGLE: 1,
    PitsKind.PAIR: 2,
    PitsKind.TRIPLE: 3,
    PitsKind.QUAD: 4,
    PitsKind.SEQUENCE: 1,
    PitsKind.DOUBLE_SEQUENCE: 2,
    PitsKind.TRIPLE_SEQUENCE: 3,
    PitsKind.QUADRUPLE_SEQUENCE: 4,
}
_SEQUENCES = frozenset(
    {
        PitsKind.SEQUENCE,
        PitsKind.DOUBLE_SEQUENCE,
        PitsKind.TRIPLE_SEQUENCE,
        PitsKind.QUADRUPLE_SEQUENCE,
    }
)
GROUP_KINDS: tuple[PitsKind, ...] = (PitsKind.SINGLE, PitsKind.PAIR, PitsKind.TRIPLE, PitsKind.QUAD)
"""Same-rank groups, indexed by size - 1."""
SEQUENCE_KINDS: tuple[PitsKind, ...] = (
    PitsKind.SEQUENCE,
    PitsKind.DOUBLE_SEQUENCE,
    PitsKind.TRIPLE_SEQUENCE,
    PitsKind.QUADRUPLE_SEQUENCE,
)
"""Sequence kinds, indexed by width - 1."""


class MixedWildRank(enum.Enum):
    """The rank of a group made only of wild cards of mixed kinds (2 + JB, JB + JR, ...)."""

    LOWEST = "lowest"
    HIGHEST = "highest"


class PitsRoundEnd(enum.Enum):
    """When a round stops: at the first player out, or when one player alone holds cards."""

    FIRST_OUT = "first_out"
    ONE_LEFT = "one_left"


@dataclass(frozen=True, slots=True)
class PitsRules:
    """The Pits rules options; the defaults are the product's choices (RULES.md section 2).

    - ``wild_as_itself_natural``: a 2 or a joker played as itself (a single 2, a pair of 2s, a
      single joker) has its own rank and is natural. When False it counts as using wild cards.
    - ``mixed_wild_rank``: the rank of a group of wild cards of mixed kinds (2 + JB); never natural.
    - ``joker_takes_suit``: a joker in a single sequence takes the suit it needs, so 5H 6H JB is all
      of one suit. When False a sequence with a joker is never all of one suit.
    - ``min_sequence_ranks``: the fewest ranks of any sequence. The seed asks 3 for the single
      (4 5 6) and the double sequence (3 3 4 4 5 5) and is silent on triple and quadruple
      sequences, which follow the same pattern by default (9 and 12 cards at least).
    - ``decks``: how many copies of each card may exist (duplicates beyond that are a HandError).
    - ``round_end``: a round stops when one player alone holds cards (default, which ranks every
      player) or as soon as the first player is out. The winner is the first out either way.

    Sequences never wrap and there is no option for it: the seed forbids a 2 in any sequence, so
    K A 2 and A 2 3 cannot exist, and a wild card in a sequence never stands for a 2 (A JB 3 is
    no sequence).
    """

    wild_as_itself_natural: bool = True
    mixed_wild_rank: MixedWildRank = MixedWildRank.LOWEST
    joker_takes_suit: bool = True
    min_sequence_ranks: int = 3
    decks: int = 1
    round_end: PitsRoundEnd = PitsRoundEnd.ONE_LEFT

    def __post_init__(self) -> None:
        if not 2 <= self.min_sequence_ranks <= SEQUENCE_SPAN:
            raise ProfileError(
                f"min_sequence_ranks {self.min_sequence_ranks!r} must lie in 2..{SEQUENCE_SPAN}"
            )
        if self.decks < 1:
            raise ProfileError(f"decks {self.decks!r} must be at least 1")


DEFAULT_PITS_RULES = PitsRules()
"""The product's default Pits rules."""


@dataclass(frozen=True, slots=True)
class Combination:
    """One reading of a set of cards as a Pits combination.

    ``rank`` is the group's rank, or the top rank of a sequence. ``natural`` is True when no wild
    card stands for another card. ``one_suit`` is True for a single sequence all of one suit and
    always False for the other kinds. Equality and ``key`` ignore which cards were used (``cards``
    is excluded from comparison), so two plays of equal strength are equal records.

    Two combinations meet only when they have the same kind and length; ``key`` orders those:
    all of one suit first (single sequences), then rank, then natural over wild.
    """

    kind: PitsKind
    length: int
    rank: PitsRank
    natural: bool
    one_suit: bool = False
    cards: tuple[AnyCard, ...] = field(default=(), compare=False)

    @property
    def key(self) -> tuple[bool, int, bool]:
        """Strength among combinations of the same kind and length: (one_suit, rank, natural)."""
        return (self.one_suit, int(self.rank), self.natural)

    @property
    def ranks(self) -> int:
        """How many ranks the combination runs over (1 for groups)."""
        return self.length // self.kind.width

    def meets(self, other: Combination) -> bool:
        """True when the two may be compared: same kind, same number of cards."""
        return self.kind is other.kind and self.length == other.length

    def beats(self, other: Combination) -> bool:
        """True when this play beats ``other`` on the table: same kind and length, higher key.

        Equal keys do not beat: a play must be strictly stronger than the table.
        """
        return self.meets(other) and self.key > other.key

    def describe(self) -> str:
        """Plain words: ``pair of 7s``, ``single JB``, ``4-card sequence up to 9``."""
        if self.kind is PitsKind.SINGLE:
            text = f"single {self.rank.symbol}"
        elif not self.kind.is_sequence:
            text = f"{self.kind.words} of {self.rank.plural}"
        else:
            text = f"{self.length}-card {self.kind.words} up to {self.rank.symbol}"
        if self.one_suit:
            text += " all of one suit"
        return text if self.natural else text + " with wild cards"

    def __str__(self) -> str:
        return " ".join(str(card) for card in self.cards)


def _cards_text(cards: Iterable[AnyCard]) -> str:
    return " ".join(str(card) for card in cards) or "(no cards)"


def _read_group(cards: tuple[AnyCard, ...], rules: PitsRules) -> Combination:
    """Read 1 to 4 cards as a same-rank group, or raise CombinationError with the reason."""
    kind = GROUP_KINDS[len(cards) - 1]
    natural_ranks = {pits_rank(card) for card in cards if not pits_rank(card).is_wild}
    wild_ranks = {pits_rank(card) for card in cards if pits_rank(card).is_wild}
    if len(natural_ranks) > 1:
        low, *_, high = sorted(natural_ranks)
        raise CombinationError(f"ranks {low.symbol} and {high.symbol} differ")
    if natural_ranks:
        (rank,) = natural_ranks
        natural = not wild_ranks
    elif len(wild_ranks) == 1:
        (rank,) = wild_ranks
        natural = rules.wild_as_itself_natural
    else:
        pick = min if rules.mixed_wild_rank is MixedWildRank.LOWEST else max
        rank = pick(wild_ranks)
        natural = False
    return Combination(kind, len(cards), rank, natural, False, sort_pits_cards(cards))


def _read_sequence(cards: tuple[AnyCard, ...], width: int, rules: PitsRules) -> Combination:
    """Read cards as a sequence of ``width`` cards per rank, or raise CombinationError."""
    kind = SEQUENCE_KINDS[width - 1]
    count = len(cards)
    if count % width:
        raise CombinationError(f"{count} cards do not split into ranks of {width}")
    ranks = count // width
    if ranks < rules.min_sequence_ranks:
        each = f" of {width} cards" if width > 1 else ""
        raise CombinationError(
            f"a {kind.words} needs at least {rules.min_sequence_ranks} ranks{each}, not {ranks}"
        )
    if ranks > SEQUENCE_SPAN:
        raise CombinationError(f"a {kind.words} runs over at most {SEQUENCE_SPAN} ranks (3 to A)")
    naturals = [card for card in cards if not pits_rank(card).is_wild]
    wilds = [card for card in cards if pits_rank(card).is_wild]
    if width == 1 and any(pits_rank(card) is PitsRank.TWO for card in wilds):
        raise CombinationError("a 2 cannot be part of a single sequence")
    per_rank = Counter(pits_rank(card) for card in naturals)
    crowded = sorted(rank for rank, number in per_rank.items() if number > width)
    if crowded:
        rank = crowded[0]
        raise CombinationError(
            f"{per_rank[rank]} cards of rank {rank.symbol}, a {kind.words} holds {width} per rank"
        )
    if naturals:
        low, high = min(per_rank), max(per_rank)
        if high - low + 1 > ranks:
            raise CombinationError(
                f"ranks {low.symbol} to {high.symbol} do not fit in {ranks} consecutive ranks"
            )
        top = PitsRank(min(SEQUENCE_HIGH, low + ranks - 1))
    else:
        top = SEQUENCE_HIGH
    one_suit = False
    if width == 1:
        suits = {card.suit for card in naturals if isinstance(card, Card)}
        one_suit = len(suits) <= 1 if rules.joker_takes_suit else not wilds and len(suits) == 1
    return Combination(kind, count, top, not wilds, one_suit, sort_pits_cards(cards))


def _read(cards: tuple[AnyCard, ...], kind: PitsKind, rules: PitsRules) -> Combination:
    """Read cards as ``kind`` or raise CombinationError saying why not."""
    if kind.is_sequence:
        return _read_sequence(cards, kind.width, rules)
    if len(cards) != kind.width:
        raise CombinationError(f"a {kind.words} holds {kind.width} cards, not {len(cards)}")
    return _read_group(cards, rules)


def _candidate_kinds(count: int) -> list[PitsKind]:
    """The kinds ``count`` cards could be taken for, in ``PitsKind`` order: their group, and
    each sequence kind whose cards per rank split them into 2 to ``SEQUENCE_SPAN`` ranks. A
    sequence of fewer ranks than the rules ask (3 3 3 4 4 4 as a triple sequence) is still a
    candidate: reading it fails, and the reason is named with the others."""
    kinds = [GROUP_KINDS[count - 1]] if 1 <= count <= len(GROUP_KINDS) else []
    for width, kind in enumerate(SEQUENCE_KINDS, start=1):
        if count % width == 0 and 2 <= count // width <= SEQUENCE_SPAN:
            kinds.append(kind)
    return kinds


def combination_readings(
    cards: Iterable[AnyCard], rules: PitsRules = DEFAULT_PITS_RULES
) -> tuple[Combination, ...]:
    """Every reading of the cards, one per kind, in ``PitsKind`` order (never empty).

    Raises HandError for more copies of a card than ``rules.decks`` hold, and CombinationError
    saying, for each kind the cards could be taken for, why they are not that kind.
    """
    played = tuple(cards)
    check_distinct(played, rules.decks)
    if not played:
        raise CombinationError("no cards: a play needs at least one card")
    kinds = _candidate_kinds(len(played))
    if not kinds:
        raise CombinationError(
            f"{_cards_text(played)} is no combination: {len(played)} cards make no group "
            "(1 to 4 cards) and no sequence (3 to 12 ranks, same count of cards for each rank)"
        )
    found: list[Combination] = []
    reasons = [] if len(played) <= len(GROUP_KINDS) else ["not a group (groups hold 1 to 4 cards)"]
    for kind in kinds:
        try:
            found.append(_read(played, kind, rules))
        except CombinationError as error:
            reasons.append(f"not a {kind.words} ({error})")
    if not found:
        raise CombinationError(f"{_cards_text(played)} is no combination: {'; '.join(reasons)}")
    return tuple(found)


def classify_combination(
    cards: Iterable[AnyCard], rules: PitsRules = DEFAULT_PITS_RULES, kind: PitsKind | None = None
) -> Combination:
    """Read the cards as one combination: as ``kind`` when given, else the first reading in
    ``PitsKind`` order (see ``combination_readings``).

    Raises CombinationError saying why the cards are no combination (or not that kind) and
    HandError for duplicate cards.
    """
    played = tuple(cards)
    if kind is None:
        return combination_readings(played, rules)[0]
    check_distinct(played, rules.decks)
    if not played:
        raise CombinationError("no cards: a play needs at least one card")
    try:
        return _read(played, kind, rules)
    except CombinationError as error:
        raise CombinationError(f"{_cards_text(played)} is not a {kind.words}: {error}") from None
