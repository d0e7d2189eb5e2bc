"""Deck-aware decoding: the cards of one photo read together, as the deck in play allows.

Each card found in a photo comes with its probabilities over the 54 card classes (its corners'
readings joined). Read one by one, two cards may claim the same card of a one-deck game (a
picture or a pip of another card read as a second KD), or a card may be read as one the deck
does not have (a joker in Niu Niu). :func:`decode_cards` chooses every card's code at once:

- a card the deck lacks is never chosen;
- a card (or the jokers of a one-joker pack, together) is chosen at most as often as the deck
  holds it (:meth:`rules.decks.Deck.limits`);
- among the choices that respect both, the one of highest joint probability (the product of
  the cards' probabilities of their codes): an assignment problem, solved exactly
  (:func:`min_cost_assignment`).

When two cards claim one code, the assignment keeps it for the card that would lose the most
by giving it up (the ratio of its probability of the code to that of its next reading), which
is the surer card in all but contrived cases; the other falls back to its next reading the
deck still holds. A card left with no code at all (more cards than the deck holds) is reported
unplaced, and the reader marks it uncertain.

Pure numpy; a photo with no conflict costs one ``argmax`` and one ``bincount``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES
from rules.decks import Deck

__all__ = [
    "DeckTable",
    "Decoded",
    "deck_table",
    "decode_cards",
    "min_cost_assignment",
    "restricted",
]

CANDIDATES = 8
"""How many of a card's readings (the deck's, most probable first) the assignment considers
when cards conflict; a reading beyond these is less likely than 1 in 8 of the deck's cards."""

_UNPLACED_COST = 1e3
"""The cost of leaving a card without a code: more than any reading's (-log 1e-12 is 27.6), so
a card is left unplaced only when no code is left for it."""


@dataclass(frozen=True)
class DeckTable:
    """A deck as arrays over ``CARD_CLASSES``: ``allowed`` (54,) bool, ``limit_of`` (54,) the
    limit each class counts against (-1 for a class the deck lacks) and ``capacity`` (L,) how
    many cards each limit holds."""

    allowed: NDArray[np.bool_]
    limit_of: NDArray[np.intp]
    capacity: NDArray[np.intp]


@functools.lru_cache(maxsize=32)
def deck_table(deck: Deck) -> DeckTable:
    """``deck`` as arrays over the card classes (cached: decks are frozen values)."""
    position = {code: index for index, code in enumerate(CARD_CLASSES)}
    limit_of = np.full(len(CARD_CLASSES), -1, np.intp)
    capacity = []
    for number, (cards, count) in enumerate(deck.limits()):
        for card in cards:
            limit_of[position[str(card)]] = number
        capacity.append(count)
    table = DeckTable(limit_of >= 0, limit_of, np.array(capacity, np.intp))
    for array in (table.allowed, table.limit_of, table.capacity):
        array.setflags(write=False)
    return table


@dataclass(frozen=True)
class Decoded:
    """The codes chosen for N cards: ``codes`` (N,) indices into ``CARD_CLASSES`` (always a
    card of the deck), ``probability`` (N,) each card's probability of its code, and
    ``placed`` (N,) False for a card that got no code the deck still held (its code is then
    its likeliest card of the deck)."""

    codes: NDArray[np.intp]
    probability: NDArray[np.float64]
    placed: NDArray[np.bool_]


def restricted(probabilities: NDArray[np.floating[Any]], deck: Deck, prior: bool) -> NDArray[Any]:
    """Card probabilities (N, 54) with the classes the deck lacks set to 0, and, with
    ``prior``, the rest scaled to sum to 1 (the deck as a prior: the classifier's odds between
    the deck's cards are kept); a row with nothing left on the deck's cards stays all 0."""
    allowed = deck_table(deck).allowed
    kept = np.where(allowed, probabilities, 0.0)
    if not prior:
        return kept
    total = kept.sum(axis=-1, keepdims=True)
    shares: NDArray[Any] = np.divide(kept, total, out=np.zeros_like(kept), where=total > 0)
    return shares


def decode_cards(
    probabilities: NDArray[np.floating[Any]],
    deck: Deck,
    prior: bool = True,
    only_read: bool = False,
) -> Decoded:
    """The codes of a photo's N cards, chosen together (see the module's docstring).

    ``probabilities`` (N, 54) are each card's probabilities over ``CARD_CLASSES`` (rows summing
    to 1, or less). The returned probability of a code is the card's own (``prior`` False) or
    its share among the deck's cards (``prior`` True, :func:`restricted`); the choice of codes
    is the same either way.

    With ``only_read``, a card gets only a code of positive probability (the rows are then
    distributions over what a card was read as, such as a tracked card's votes): a card with
    none left is unplaced, and a card read as no card of the deck at all has code -1 and
    probability 0.
    """
    rows = np.asarray(probabilities, np.float64)
    if rows.ndim != 2 or rows.shape[1] != len(CARD_CLASSES):
        raise ValueError(
            f"probabilities must have shape (N, {len(CARD_CLASSES)}), got {rows.shape}"
        )
    table = deck_table(deck)
    view = restricted(rows, deck, prior)
    count = len(rows)
    # the classes the deck lacks (with only_read, those never read too) get -1, below any
    # probability, so argmax never picks them
    possible = table.allowed & (view > 0) if only_read else table.allowed
    ranked = np.where(possible, view, -1.0)
    codes = ranked.argmax(axis=1) if count else np.zeros(0, np.intp)
    readable = ranked[np.arange(count), codes] >= 0 if count else np.zeros(0, bool)
    placed = readable.copy()
    used = np.bincount(table.limit_of[codes[readable]], minlength=len(table.capacity))
    if count and (used > table.capacity).any():
        codes, placed = _assign(ranked, table)
    codes = np.where(readable, codes, -1)
    picked = np.where(readable, view[np.arange(count), codes], 0.0) if count else np.zeros(0)
    return Decoded(codes.astype(np.intp), picked.astype(np.float64), placed)


def _assign(
    ranked: NDArray[np.float64], table: DeckTable
) -> tuple[NDArray[np.intp], NDArray[np.bool_]]:
    """The codes of highest joint probability under the deck's limits, among each card's
    ``CANDIDATES`` likeliest (classes ranked -1 are never candidates); a card left without one
    gets its likeliest, unplaced."""
    count = len(ranked)
    best = ranked.argmax(axis=1)
    top = min(CANDIDATES, int(table.allowed.sum()))
    candidates = np.argsort(-ranked, axis=1, kind="stable")[:, :top]  # (N, K) classes
    scores = np.take_along_axis(ranked, candidates, axis=1)
    wanted = scores >= 0  # the deck's classes come first; with only_read, the read ones
    limits = np.where(wanted, table.limit_of[candidates], 0)  # (N, K)
    cost_of = -np.log(np.maximum(scores, 1e-12))
    # a card's cost under a limit is that of its likeliest class under it: the candidates are
    # sorted, so written from the last to the first, the first under each limit stays
    rows = np.arange(count)
    by_limit = np.full((count, len(table.capacity)), _UNPLACED_COST)
    class_by_limit = np.full((count, len(table.capacity)), -1, np.intp)
    for k in range(top - 1, -1, -1):
        some = wanted[:, k]
        by_limit[rows[some], limits[some, k]] = cost_of[some, k]
        class_by_limit[rows[some], limits[some, k]] = candidates[some, k]
    # a card whose likeliest card no other card wants keeps it in every best assignment: only
    # the others are assigned (on a table, the few cards of a conflict)
    demand = (class_by_limit >= 0).sum(axis=0)
    open_rows = np.flatnonzero((demand[table.limit_of[best]] > 1) & wanted[:, 0])
    by_limit, class_by_limit = by_limit[open_rows], class_by_limit[open_rows]
    # one column per copy a limit can give out, no more copies than cards that want it
    demand = (class_by_limit >= 0).sum(axis=0)
    column_limit = np.repeat(np.arange(len(table.capacity)), np.minimum(table.capacity, demand))
    slots, opened = len(column_limit), len(open_rows)
    cost = np.full((opened, slots + opened), _UNPLACED_COST)  # then one "unplaced" per card
    cost[:, :slots] = by_limit[:, column_limit]
    column = min_cost_assignment(cost)
    chosen = np.full(opened, -1, np.intp)
    on_slot = column < slots
    chosen[on_slot] = class_by_limit[:, column_limit][on_slot, column[on_slot]]
    on_slot &= chosen >= 0  # a copy of a card it does not want costs as much as none
    codes = best.copy()
    placed = wanted[:, 0].copy()
    codes[open_rows[on_slot]] = chosen[on_slot]
    placed[open_rows] = on_slot
    return codes.astype(np.intp), placed


def min_cost_assignment(cost: NDArray[np.floating[Any]]) -> NDArray[np.intp]:
    """The column of each row in an assignment of least total cost: rows (N) at most columns
    (M), each column used at most once. The Hungarian method with potentials (shortest
    augmenting paths, O(N^2 M)), the inner scan vectorised."""
    rows, columns = cost.shape
    if rows > columns:
        raise ValueError(f"cannot assign {rows} rows to {columns} columns")
    a = np.zeros((rows + 1, columns + 1))
    a[1:, 1:] = cost
    u = np.zeros(rows + 1)
    v = np.zeros(columns + 1)
    owner = np.zeros(columns + 1, np.intp)  # owner[j]: the row (1-based) holding column j
    way = np.zeros(columns + 1, np.intp)
    for row in range(1, rows + 1):
        owner[0] = row
        free_column = 0
        least = np.full(columns + 1, np.inf)
        used = np.zeros(columns + 1, bool)
        while True:
            used[free_column] = True
            current = owner[free_column]
            reduced = a[current] - u[current] - v
            better = ~used & (reduced < least)
            least[better] = reduced[better]
            way[better] = free_column
            step = np.where(used, np.inf, least)
            step[0] = np.inf
            next_column = int(step.argmin())
            delta = step[next_column]
            u[owner[used]] += delta
            v[used] -= delta
            least[~used] -= delta
            free_column = next_column
            if owner[free_column] == 0:
                break
        while free_column:
            previous = way[free_column]
            owner[free_column] = owner[previous]
            free_column = previous
    assigned = np.full(rows, -1, np.intp)
    taken = np.flatnonzero(owner[1:]) + 1
    assigned[owner[taken] - 1] = taken - 1
    return assigned
