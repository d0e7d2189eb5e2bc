"""Cards as frozen value types, and the notation of the product.

Notation: rank ``A 2 3 4 5 6 7 8 9 10 J Q K`` followed by suit ``S H D C``; jokers are ``JB``
(black, small) and ``JR`` (red, big). On input ``T`` stands for ten, case does not matter and the
Unicode suit symbols are accepted, followed or not by a variation selector (U+FE0F, as phone
keyboards type ``♥️``, or U+FE0E). Printing then parsing gives the same card back.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from rules.errors import CardError, HandError

__all__ = [
    "CARD_CLASSES",
    "MAX_PACKS",
    "Card",
    "Joker",
    "Rank",
    "Suit",
    "check_distinct",
    "full_deck",
    "parse_card",
    "parse_cards",
]

MAX_PACKS = 16
"""The most packs a game may be dealt from (a baccarat shoe holds 8, a blackjack shoe up to 8):
every deck count the rules, the command line and the API take is 1 to this."""


class Rank(enum.IntEnum):
    """Card ranks, valued A = 1 up to K = 13 (games map these to their own orders)."""

    ACE = 1
    TWO = 2
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

    @property
    def symbol(self) -> str:
        """The printed rank: ``A``, ``2`` .. ``10``, ``J``, ``Q``, ``K``."""
        return _RANK_SYMBOLS[self]

    @property
    def is_face(self) -> bool:
        """True for J, Q and K."""
        return self >= Rank.JACK


class Suit(enum.Enum):
    """The four suits; their order, where a game needs one, is a rules option."""

    SPADES = "S"
    HEARTS = "H"
    DIAMONDS = "D"
    CLUBS = "C"

    @property
    def is_red(self) -> bool:
        """True for hearts and diamonds."""
        return self in (Suit.HEARTS, Suit.DIAMONDS)


class Joker(enum.Enum):
    """The two jokers: black (small) and red (big)."""

    BLACK = "JB"
    RED = "JR"

    def __str__(self) -> str:
        return self.value

    @property
    def is_joker(self) -> bool:
        """Always True: lets code ask ``card.is_joker`` of any card."""
        return True


_RANK_SYMBOLS = {rank: str(rank.value) for rank in Rank} | {
    Rank.ACE: "A",
    Rank.JACK: "J",
    Rank.QUEEN: "Q",
    Rank.KING: "K",
}
_RANK_BY_TEXT = {symbol: rank for rank, symbol in _RANK_SYMBOLS.items()} | {"T": Rank.TEN}
_SUIT_BY_TEXT = {suit.value: suit for suit in Suit} | {
    "♠": Suit.SPADES,
    "♤": Suit.SPADES,
    "♥": Suit.HEARTS,
    "♡": Suit.HEARTS,
    "♦": Suit.DIAMONDS,
    "♢": Suit.DIAMONDS,
    "♣": Suit.CLUBS,
    "♧": Suit.CLUBS,
}
_SUIT_SYMBOLS = frozenset(text for text in _SUIT_BY_TEXT if not text.isascii())
_VARIATION_SELECTORS = frozenset("\ufe0e\ufe0f")
"""Text and emoji presentation: a phone keyboard puts U+FE0F after the suit symbol it offers."""


@dataclass(frozen=True, slots=True, order=False)
class Card:
    """A standard playing card: a rank and a suit."""

    rank: Rank
    suit: Suit

    def __str__(self) -> str:
        return f"{self.rank.symbol}{self.suit.value}"

    def __repr__(self) -> str:
        return f"Card({str(self)!r})"

    @property
    def is_joker(self) -> bool:
        """Always False: lets code ask ``card.is_joker`` of any card."""
        return False


AnyCard = Card | Joker


def parse_card(text: str) -> AnyCard:
    """Parse one card such as ``"10H"``, ``"qs"``, ``"T♦"``, ``"T♦️"`` (a suit symbol may be
    followed by a variation selector), ``"JB"``.

    Raises CardError if unknown.
    """
    if not isinstance(text, str):
        raise CardError(f"unknown card {text!r}: expected text such as '10H', 'QS' or 'JR'")
    cleaned = text.strip().upper()
    if cleaned[-1:] in _VARIATION_SELECTORS and cleaned[-2:-1] in _SUIT_SYMBOLS:
        cleaned = cleaned[:-1]
    if cleaned in ("JB", "JR"):
        return Joker(cleaned)
    if len(cleaned) >= 2:
        rank = _RANK_BY_TEXT.get(cleaned[:-1])
        suit = _SUIT_BY_TEXT.get(cleaned[-1])
        if rank is not None and suit is not None:
            return Card(rank, suit)
    raise CardError(
        f"unknown card {text!r}: expected a rank A,2..10,J,Q,K (or T) and a suit S,H,D,C, "
        "or a joker JB / JR"
    )


def parse_cards(text: str | Iterable[str]) -> tuple[AnyCard, ...]:
    """Parse cards given as one space- or comma-separated string or as a sequence of strings."""
    tokens = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    return tuple(parse_card(token) for token in tokens)


def check_distinct(cards: Iterable[AnyCard], decks: int = 1) -> None:
    """Raise HandError when a card appears more often than ``decks`` copies allow."""
    counts: dict[AnyCard, int] = {}
    for card in cards:
        counts[card] = counts.get(card, 0) + 1
    over = sorted(str(card) for card, count in counts.items() if count > decks)
    if over:
        what = "one deck holds" if decks == 1 else f"{decks} decks hold"
        raise HandError(f"duplicate card {', '.join(over)}: more copies than {what}")


def full_deck(jokers: bool = False) -> tuple[AnyCard, ...]:
    """The 52 cards, suit by suit (S, H, D, C), A to K; then JB and JR when ``jokers``."""
    deck: list[AnyCard] = [Card(rank, suit) for suit in Suit for rank in Rank]
    if jokers:
        deck += [Joker.BLACK, Joker.RED]
    return tuple(deck)


CARD_CLASSES: tuple[str, ...] = tuple(str(card) for card in full_deck(jokers=True))
"""The 54 class names shared by the recognizer, the synthetic labels and the API, in this order."""
