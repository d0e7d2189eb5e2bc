"""Counts in words: the noun is singular for one, plural for every other count."""

from __future__ import annotations

import pytest

from handreader.store.decks import ReplacedDeck
from handreader.tables.wording import counted


@pytest.mark.parametrize(
    ("count", "noun", "plural", "expected"),
    [
        (0, "card", None, "0 cards"),
        (1, "card", None, "1 card"),
        (2, "card", None, "2 cards"),
        (1, "group", None, "1 group"),
        (3, "group", None, "3 groups"),
        (1, "box", "boxes", "1 box"),
        (2, "box", "boxes", "2 boxes"),
    ],
)
def test_counted(count: int, noun: str, plural: str | None, expected: str) -> None:
    assert counted(count, noun, plural) == expected


def test_a_replaced_deck_of_one_card_says_card() -> None:
    """``calibrate`` prints "deck 'mine' replaced: it had 1 card, made ..." for a deck of one."""
    assert str(ReplacedDeck("mine", 1, "2026-12-01")) == "1 card, made 2026-12-01"
    assert str(ReplacedDeck("mine", 2, "2026-12-01")) == "2 cards, made 2026-12-01"
