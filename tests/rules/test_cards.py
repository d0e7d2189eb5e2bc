"""Card notation (RULES.md, "Card notation used across the product"): parse, print, errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules.cards import (
    CARD_CLASSES,
    Card,
    Joker,
    Rank,
    Suit,
    check_distinct,
    full_deck,
    parse_card,
    parse_cards,
)
from rules.errors import CardError, HandError

ALL_54 = full_deck(jokers=True)


def test_deck_has_52_cards_and_two_jokers() -> None:
    """RULES.md: 52 cards; jokers JB and JR (used by Pits, section 2)."""
    assert len(full_deck()) == 52
    assert len(set(full_deck())) == 52
    assert ALL_54[-2:] == (Joker.BLACK, Joker.RED)


def test_card_classes_order_is_suit_by_suit_ace_to_king() -> None:
    """CARD_CLASSES is the label table: S, H, D, C each A..K, then JB, JR.

    So index = 13 * suit + rank - 1, the batch API's encoding."""
    assert len(CARD_CLASSES) == 54
    assert CARD_CLASSES[:13] == ("AS", *(f"{n}S" for n in range(2, 11)), "JS", "QS", "KS")
    assert CARD_CLASSES[13] == "AH" and CARD_CLASSES[26] == "AD" and CARD_CLASSES[39] == "AC"
    assert CARD_CLASSES[52:] == ("JB", "JR")


@pytest.mark.parametrize("card", ALL_54, ids=str)
def test_print_then_parse_round_trips(card: Card | Joker) -> None:
    """STYLE.md: printing and parsing round-trip, for all 54 cards."""
    assert parse_card(str(card)) == card


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10H", Card(Rank.TEN, Suit.HEARTS)),  # RULES.md example
        ("QS", Card(Rank.QUEEN, Suit.SPADES)),  # RULES.md example
        ("TH", Card(Rank.TEN, Suit.HEARTS)),  # "accept T for 10 on input"
        ("th", Card(Rank.TEN, Suit.HEARTS)),
        ("qs", Card(Rank.QUEEN, Suit.SPADES)),  # lower case
        ("aD", Card(Rank.ACE, Suit.DIAMONDS)),
        ("K♠", Card(Rank.KING, Suit.SPADES)),  # "accept the Unicode suit symbols on input"
        ("7♥", Card(Rank.SEVEN, Suit.HEARTS)),
        ("10♦", Card(Rank.TEN, Suit.DIAMONDS)),
        ("2♣", Card(Rank.TWO, Suit.CLUBS)),
        ("J♡", Card(Rank.JACK, Suit.HEARTS)),
        (" 9c ", Card(Rank.NINE, Suit.CLUBS)),
        ("jb", Joker.BLACK),
        ("JR", Joker.RED),
    ],
)
def test_accepted_spellings(text: str, expected: Card | Joker) -> None:
    assert parse_card(text) == expected


@pytest.mark.parametrize("text", ["1H", "11S", "ZZ", "", "H", "10", "KX", "JZ", "10HH", "♠K"])
def test_unknown_card_error_quotes_the_text(text: str) -> None:
    """STYLE.md: the error family is under ValueError and each message echoes the input."""
    with pytest.raises(CardError) as caught:
        parse_card(text)
    assert repr(text) in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_parse_cards_splits_on_spaces_and_commas() -> None:
    assert parse_cards("3H, 7s KD,8c  6D") == parse_cards(["3H", "7S", "KD", "8C", "6D"])
    assert [str(card) for card in parse_cards("T♠ q♥")] == ["10S", "QH"]


def test_parse_cards_names_the_bad_token() -> None:
    with pytest.raises(CardError, match="'XX'"):
        parse_cards("3H XX KD")


@pytest.mark.parametrize(
    ("cards", "decks", "error"),
    [
        ("3H 7S KD", 1, None),
        ("3H 3H KD", 1, "duplicate card 3H"),
        ("3H 3H KD", 2, None),
        ("3H 3H 3H", 2, "duplicate card 3H"),
        ("JR JR", 1, "duplicate card JR"),
    ],
)
def test_check_distinct(cards: str, decks: int, error: str | None) -> None:
    """RULES.md: duplicates are an error in a one-deck game, allowed up to the number of decks."""
    if error is None:
        check_distinct(parse_cards(cards), decks)
    else:
        with pytest.raises(HandError, match=error):
            check_distinct(parse_cards(cards), decks)


@given(st.sampled_from(full_deck()), st.sampled_from(["lower", "upper", "ten", "symbol"]))
def test_any_spelling_parses_back(card: Card | Joker, spelling: str) -> None:
    """Every accepted spelling of a card parses to that card."""
    assert isinstance(card, Card)
    text = str(card)
    symbols = {Suit.SPADES: "♠", Suit.HEARTS: "♥", Suit.DIAMONDS: "♦", Suit.CLUBS: "♣"}
    if spelling == "lower":
        text = text.lower()
    elif spelling == "ten":
        text = text.replace("10", "T")
    elif spelling == "symbol":
        text = text[:-1] + symbols[card.suit]
    assert parse_card(text) == card


SUIT_SYMBOLS = {
    Suit.SPADES: ("♠", "♤"),
    Suit.HEARTS: ("♥", "♡"),
    Suit.DIAMONDS: ("♦", "♢"),
    Suit.CLUBS: ("♣", "♧"),
}


@given(
    st.sampled_from(full_deck()),
    st.sampled_from([0, 1]),
    st.sampled_from(["\ufe0f", "\ufe0e"]),
)
def test_a_suit_symbol_followed_by_a_variation_selector_parses_to_the_card(
    card: Card | Joker, symbol: int, selector: str
) -> None:
    """RULES.md accepts the Unicode suit symbols on input; a phone keyboard types them with the
    emoji variation selector after (U+FE0F, "3♥️"), some with the text one (U+FE0E)."""
    assert isinstance(card, Card)
    text = card.rank.symbol + SUIT_SYMBOLS[card.suit][symbol] + selector
    assert parse_card(text) == card


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3♥\ufe0f", Card(Rank.THREE, Suit.HEARTS)),
        ("3H\ufe0f", None),  # a selector follows a symbol, not a letter
        ("♥\ufe0f", None),  # no rank
        ("3♥\ufe0f\ufe0f", None),  # one selector at most
        ("3\ufe0f♥", None),  # the selector after the suit, not before
    ],
)
def test_variation_selectors_are_taken_only_after_a_suit_symbol(
    text: str, expected: Card | None
) -> None:
    if expected is not None:
        assert parse_card(text) == expected
    else:
        with pytest.raises(CardError, match="unknown card"):
            parse_card(text)


def test_a_hand_typed_on_a_phone_parses() -> None:
    """The five cards as a phone keyboard types them, each suit with U+FE0F."""
    typed = "3♥\ufe0f 7♠\ufe0f K♦\ufe0f 8♣\ufe0f 6♦\ufe0f"
    assert [str(card) for card in parse_cards(typed)] == ["3H", "7S", "KD", "8C", "6D"]
