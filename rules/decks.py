"""The deck in play: which cards a game's pack holds, and how many copies of each.

A :class:`Deck` is data, as the games' rules are: the ranks it has (all thirteen, or 9 to A for
a pinochle pack), the copies of each rank-and-suit card in one pack (a pinochle pack holds two),
its jokers, and how many packs are shuffled together. A photo of a game can show a card at
most as often as the deck holds it, and never a card the deck lacks; the reader uses that to
decode a photo's cards together (:mod:`vision.decoding`).

The games' decks (RULES.md): Niu Niu 52 cards, no jokers; Pits 52 and two jokers (54); Baccarat
and Blackjack 52 cards a pack, 8 and 6 packs by default; Pai Gow Poker 52 and one joker (53).
Pinochle's pack is 48 cards, 9 to A in each suit twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from rules.baccarat import DEFAULT_RULES as DEFAULT_BACCARAT_RULES
from rules.blackjack import BlackjackRules
from rules.cards import MAX_PACKS, AnyCard, Card, Joker, Rank, Suit
from rules.errors import DeckError
from rules.niuniu_profiles import DEFAULT_PROFILE, NiuProfile, get_profile
from rules.pits_combos import DEFAULT_PITS_RULES

__all__ = [
    "ANY_CARD",
    "GAME_DECKS",
    "PINOCHLE_RANKS",
    "Deck",
    "deck_for_game",
    "deck_in_play",
    "niuniu_deck",
    "niuniu_packs",
]

PINOCHLE_RANKS: frozenset[Rank] = frozenset(
    (Rank.NINE, Rank.TEN, Rank.JACK, Rank.QUEEN, Rank.KING, Rank.ACE)
)
"""The ranks of a pinochle pack."""


@dataclass(frozen=True, slots=True)
class Deck:
    """The cards of the deck in play, with their multiplicity.

    - ``ranks``: the ranks the pack has, in each of the four suits.
    - ``copies``: copies of each rank-and-suit card in one pack (2 in a pinochle pack).
    - ``jokers``: jokers in one pack: 0; 1, of either colour (the maker chooses its design, so
      ``JB`` and ``JR`` share that one copy); or 2, one black and one red.
    - ``decks``: how many packs are shuffled together.
    - ``name``: a label for messages (not compared).

    Raises DeckError for a pack that cannot exist.
    """

    ranks: frozenset[Rank] = frozenset(Rank)
    copies: int = 1
    jokers: int = 0
    decks: int = 1
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ranks", frozenset(self.ranks))
        where = f"deck {self.name!r}" if self.name else "deck"
        if not self.ranks or not all(isinstance(rank, Rank) for rank in self.ranks):
            raise DeckError(f"{where}: ranks must be some of A..K, got {sorted(self.ranks)!r}")
        for what, value, most in (("copies", self.copies, None), ("decks", self.decks, MAX_PACKS)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise DeckError(f"{where}: {what} must be a whole number >= 1, got {value!r}")
            if most is not None and value > most:
                raise DeckError(f"{where}: {what} must be at most {most}, got {value!r}")
        if isinstance(self.jokers, bool) or self.jokers not in (0, 1, 2):
            raise DeckError(f"{where}: jokers must be 0, 1 or 2, got {self.jokers!r}")

    @classmethod
    def standard(cls, decks: int = 1, jokers: int = 0, name: str = "") -> Deck:
        """``decks`` packs of 52 cards, with ``jokers`` jokers in each."""
        return cls(decks=decks, jokers=jokers, name=name)

    @classmethod
    def pinochle(cls, decks: int = 1) -> Deck:
        """``decks`` pinochle packs: 9, 10, J, Q, K, A of each suit, twice each (48 cards)."""
        return cls(ranks=PINOCHLE_RANKS, copies=2, decks=decks, name="pinochle")

    def with_decks(self, decks: int) -> Deck:
        """This pack shuffled ``decks`` times over."""
        return Deck(self.ranks, self.copies, self.jokers, decks, self.name)

    def copies_of(self, card: AnyCard) -> int:
        """How many times ``card`` can appear; a joker of a one-joker pack shares its copies
        with the other colour (see :meth:`limits`)."""
        if isinstance(card, Joker):
            return self.decks if self.jokers else 0
        return self.copies * self.decks if card.rank in self.ranks else 0

    def __contains__(self, card: object) -> bool:
        return isinstance(card, Card | Joker) and self.copies_of(card) > 0

    def __len__(self) -> int:
        """The cards in play, all packs together."""
        return (4 * len(self.ranks) * self.copies + self.jokers) * self.decks

    def __str__(self) -> str:
        """``52 cards``, ``pinochle: 48 cards``, ``baccarat: 8 decks of 52 cards``."""
        pack = f"{len(self) // self.decks} cards"
        cards = pack if self.decks == 1 else f"{self.decks} decks of {pack}"
        return f"{self.name}: {cards}" if self.name else cards

    def limits(self) -> tuple[tuple[tuple[AnyCard, ...], int], ...]:
        """The deck as limits: each a group of cards and how many of them, together, it holds.

        Every rank-and-suit card of the deck is a group of its own; the two jokers are one group
        when a pack has one joker (either colour), two groups of their own when it has two.
        Cards in no group are not in the deck. Groups are in ``CARD_CLASSES`` order."""
        groups: list[tuple[tuple[AnyCard, ...], int]] = [
            ((Card(rank, suit),), self.copies * self.decks)
            for suit in Suit
            for rank in Rank
            if rank in self.ranks
        ]
        if self.jokers == 1:
            groups.append(((Joker.BLACK, Joker.RED), self.decks))
        elif self.jokers == 2:
            groups += [((Joker.BLACK,), self.decks), ((Joker.RED,), self.decks)]
        return tuple(groups)

    def surplus(self, cards: Iterable[AnyCard]) -> tuple[AnyCard, ...]:
        """The cards of ``cards`` the deck cannot account for: those it lacks, and the copies
        beyond what it holds (the later ones), in the order given."""
        limits = self.limits()
        group_of = {card: group for group, _ in limits for card in group}
        left: Counter[tuple[AnyCard, ...]] = Counter(dict(limits))
        extra: list[AnyCard] = []
        for card in cards:
            group = group_of.get(card)
            if group is None or left[group] == 0:
                extra.append(card)
            else:
                left[group] -= 1
        return tuple(extra)


def _game_decks() -> dict[str, Deck]:
    niuniu = get_profile(DEFAULT_PROFILE).decks
    return {
        "niuniu": Deck.standard(niuniu, name="niuniu"),
        "pits": Deck.standard(DEFAULT_PITS_RULES.decks, jokers=2, name="pits"),
        "baccarat": Deck.standard(DEFAULT_BACCARAT_RULES.decks, name="baccarat"),
        "blackjack": Deck.standard(BlackjackRules().decks, name="blackjack"),
        "paigow": Deck.standard(jokers=1, name="paigow"),
        "pinochle": Deck.pinochle(),
    }


GAME_DECKS: dict[str, Deck] = _game_decks()
"""The deck of each game by name, with the game's default number of packs."""


def deck_for_game(game: str, decks: int | None = None) -> Deck:
    """The deck of ``game`` (a key of :data:`GAME_DECKS`), with ``decks`` packs instead of the
    game's default when given. Raises DeckError for an unknown game or a bad count."""
    try:
        deck = GAME_DECKS[game.strip().lower()]
    except (KeyError, AttributeError):
        raise DeckError(
            f"unknown game {game!r}: expected one of {', '.join(sorted(GAME_DECKS))}"
        ) from None
    return deck if decks is None else deck.with_decks(decks)


ANY_CARD = "any"
"""The game name that puts no deck in play: any card, any number of times."""


def niuniu_deck(profile: str | NiuProfile = DEFAULT_PROFILE) -> Deck:
    """The deck of a Niu Niu game under ``profile``: its number of 52-card decks, no jokers."""
    return Deck.standard(get_profile(profile).decks, name="niuniu")


def niuniu_packs(game: str | None, decks: int | None) -> int | None:
    """The packs a Niu Niu table is dealt from when its photo is read with ``game`` and
    ``decks``: ``decks`` when the game is Niu Niu's (named or by default), else None (the
    profile's own number)."""
    if game is None or (isinstance(game, str) and game.strip().lower() == "niuniu"):
        return decks
    return None


def deck_in_play(
    game: str | None, decks: int | None = None, default: Deck | None = None
) -> Deck | None:
    """The deck a reading is decoded with, from a game's name and a number of packs, as the
    command line and the API take them.

    ``game`` names a deck of :data:`GAME_DECKS` (``decks`` packs of it when given) or is
    :data:`ANY_CARD` (no deck: ``decks`` must then be None); None stands for ``default``, the
    deck of the command or endpoint (``decks`` packs of it when given; a ``decks`` with no
    deck to apply it to is an error). Raises DeckError naming the bad value.
    """
    if isinstance(game, str) and game.strip().lower() == ANY_CARD:
        if decks is not None:
            raise DeckError(f"decks {decks!r} given with game {ANY_CARD!r}: no deck is in play")
        return None
    if game is not None:
        if not isinstance(game, str) or game.strip().lower() not in GAME_DECKS:
            known = ", ".join(sorted(GAME_DECKS))
            raise DeckError(f"unknown game {game!r}: expected one of {known}, or {ANY_CARD}")
        return deck_for_game(game, decks)
    if default is None:
        if decks is not None:
            raise DeckError(
                f"decks {decks!r} given without a game: name the game whose decks they are"
            )
        return None
    return default if decks is None else default.with_decks(decks)
