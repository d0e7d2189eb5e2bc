"""The letters a deck prints in its corner indices, and a reading of them as the deck's ranks.

Decks of many countries print other letters than A, K, Q and J: a French deck R, D and V with
its aces as 1, a German one B, D and K, a Russian one Т, К, Д and В, a Dutch one H, V and B
(:data:`INDEX_LETTERS`). Most of these letters stand for one rank in every such deck (R is a
king, D a queen, B a jack, Т an ace) and the index classifier, trained on them, reads them as
that rank. One letter does not: V is a French jack and a Dutch queen. The classifier is
trained to read a V as either (half its training crops of a V are labelled J, half Q), so on
its own a V reads as a card of that suit, J or Q, neither for certain.

Naming the deck's letters (``ReaderSettings.indices``, ``--indices``, the API's ``indices``)
settles that: :func:`fold_letters` moves a shared letter's share of a card's probability onto
the rank the deck prints it for. And where the deck prints a letter the classifier was never
trained on (its manifest's ``index_letters`` list what it reads; a classifier whose manifest
has none reads the English letters only), the ranks of those letters cannot be read from an
index: :func:`unread_ranks` names them and the reader marks such cards uncertain
(:mod:`vision.reader`), so that none of them decides a round.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES

__all__ = [
    "ENGLISH",
    "INDEX_LETTERS",
    "IndexLettersError",
    "classifier_letters",
    "deck_letters",
    "fold_letters",
    "shared_letters",
    "unambiguous_letters",
    "unread_ranks",
]

ENGLISH = "english"
"""The letters of an English (international) deck: A, K, Q, J."""

INDEX_LETTERS: dict[str, dict[str, str]] = {
    ENGLISH: {"A": "A", "K": "K", "Q": "Q", "J": "J"},
    "french": {"A": "1", "K": "R", "Q": "D", "J": "V"},
    "german": {"A": "A", "K": "K", "Q": "D", "J": "B"},
    "russian": {"A": "Т", "K": "К", "Q": "Д", "J": "В"},
    "dutch": {"A": "A", "K": "H", "Q": "V", "J": "B"},
}
"""Each deck's letter for the ace and the court ranks (French roi, dame, valet and aces printed
1; German König, Dame, Bube; Russian туз, король, дама, валет; Dutch heer, vrouw, boer)."""

_LETTER_RANKS = ("A", "K", "Q", "J")
_POSITION = {code: index for index, code in enumerate(CARD_CLASSES)}


class IndexLettersError(ValueError):
    """An unknown name of a deck's index letters."""


def deck_letters(name: str) -> dict[str, str]:
    """The letters of the deck called ``name`` (:data:`INDEX_LETTERS`, any case), by rank."""
    letters = INDEX_LETTERS.get(name.strip().lower()) if isinstance(name, str) else None
    if letters is None:
        known = ", ".join(sorted(INDEX_LETTERS))
        raise IndexLettersError(f"unknown index letters {name!r}: expected one of {known}")
    return letters


def _meanings() -> dict[str, tuple[str, ...]]:
    """Each letter of :data:`INDEX_LETTERS` with the ranks it stands for, in the order of
    ``A K Q J``."""
    meanings: dict[str, set[str]] = {}
    for letters in INDEX_LETTERS.values():
        for rank, letter in letters.items():
            meanings.setdefault(letter, set()).add(rank)
    return {
        letter: tuple(rank for rank in _LETTER_RANKS if rank in ranks)
        for letter, ranks in meanings.items()
    }


def unambiguous_letters() -> dict[str, str]:
    """Each letter that stands for one rank in every deck of :data:`INDEX_LETTERS`, with that
    rank (the English letters among them)."""
    return {letter: ranks[0] for letter, ranks in _meanings().items() if len(ranks) == 1}


def shared_letters() -> dict[str, tuple[str, ...]]:
    """Each letter that stands for more than one rank (``V``: a French jack, a Dutch queen),
    with those ranks; a classifier trained on it reads it as each of them equally."""
    return {letter: ranks for letter, ranks in _meanings().items() if len(ranks) > 1}


def classifier_letters(manifest: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """The letters the index classifier of a model manifest reads, with the ranks it reads
    each as: its ``classifier.index_letters`` (``{"R": ["K"], "V": ["J", "Q"], ...}``), the
    English letters alone when the manifest names none."""
    entry = manifest.get("classifier", {})
    named = entry.get("index_letters") if isinstance(entry, Mapping) else None
    letters: dict[str, tuple[str, ...]] = {
        letter: (letter,) for letter in INDEX_LETTERS[ENGLISH].values()
    }
    if isinstance(named, Mapping):
        for letter, ranks in named.items():
            if isinstance(letter, str) and isinstance(ranks, list | tuple):
                letters[letter] = tuple(str(rank) for rank in ranks)
    return letters


def unread_ranks(name: str, known: Mapping[str, tuple[str, ...]]) -> frozenset[str]:
    """The ranks the deck ``name`` prints in letters the classifier (``known``:
    :func:`classifier_letters`) does not read: a card read as one of them was read from
    something else, and is uncertain."""
    return frozenset(
        rank for rank, letter in deck_letters(name).items() if rank not in known.get(letter, ())
    )


def fold_letters(
    probabilities: NDArray[np.floating[Any]], name: str, known: Mapping[str, tuple[str, ...]]
) -> NDArray[np.float32]:
    """Index probabilities (N, C; the first columns :data:`rules.cards.CARD_CLASSES`) read as
    the deck ``name`` prints its letters.

    A letter the classifier reads as several ranks (``known``, from
    :func:`classifier_letters`) gives each of them an equal share; the deck prints it for one
    of them. For each suit, the letter's probability is its ranks' smallest probability times
    their number (what the other letters cannot have given), and it is moved onto the rank the
    deck prints it for, the rest of each rank's probability staying where it was. A deck that
    prints no shared letter is read as it is; the sum of each row is kept.
    """
    rows = np.array(probabilities, np.float32, copy=True)
    for rank, letter in deck_letters(name).items():
        ranks = known.get(letter, ())
        if len(ranks) < 2 or rank not in ranks:
            continue
        for suit in "SHDC":
            columns = [_POSITION[other + suit] for other in ranks]
            share = rows[:, columns].min(axis=1)
            rows[:, columns] -= share[:, None]
            rows[:, _POSITION[rank + suit]] += share * len(columns)
    return rows
