"""The deck in play (rules.decks): the games' decks, their limits and what they cannot hold."""

from __future__ import annotations

import pytest

from rules.cards import Card, Joker, Rank, Suit, full_deck, parse_card, parse_cards
from rules.decks import (
    ANY_CARD,
    GAME_DECKS,
    PINOCHLE_RANKS,
    Deck,
    deck_for_game,
    deck_in_play,
    niuniu_deck,
)
from rules.errors import DeckError, RulesError
from rules.niuniu_profiles import get_profile


@pytest.mark.parametrize(
    ("game", "cards", "source"),
    [
        ("niuniu", 52, "RULES.md 1: C(52,5) one-deck hands; no jokers in the scoring"),
        ("pits", 54, "RULES.md 2: 52 cards + 2 jokers"),
        ("baccarat", 8 * 52, "BaccaratRules: an 8-deck shoe by default"),
        ("blackjack", 6 * 52, "BlackjackRules: a 6-deck shoe by default"),
        ("paigow", 53, "RULES.md 3: 52 cards + 1 joker"),
        ("pinochle", 48, "a pinochle pack: 9 to A of each suit, twice"),
    ],
)
def test_each_game_deck_holds_its_cards(game: str, cards: int, source: str) -> None:
    deck = deck_for_game(game)
    assert len(deck) == cards, source
    assert sum(count for _, count in deck.limits()) == cards, source


@pytest.mark.parametrize(
    ("game", "card", "copies"),
    [
        ("niuniu", "KD", 1),
        ("niuniu", "JR", 0),
        ("niuniu", "JB", 0),
        ("pits", "JR", 1),
        ("pits", "JB", 1),
        ("paigow", "JB", 1),
        ("baccarat", "7C", 8),
        ("pinochle", "9S", 2),
        ("pinochle", "AS", 2),
        ("pinochle", "8S", 0),
        ("pinochle", "2H", 0),
        ("pinochle", "JR", 0),
    ],
)
def test_copies_of_a_card(game: str, card: str, copies: int) -> None:
    deck = deck_for_game(game)
    assert deck.copies_of(parse_card(card)) == copies
    assert (parse_card(card) in deck) == (copies > 0)


def test_a_one_joker_pack_shares_its_joker_between_the_colours() -> None:
    """Pai Gow Poker's one joker may be printed black or red: JB and JR share one copy."""
    limits = dict(deck_for_game("paigow").limits())
    assert limits[(Joker.BLACK, Joker.RED)] == 1
    assert dict(deck_for_game("pits").limits())[(Joker.RED,)] == 1


def test_limits_follow_the_card_table_order() -> None:
    cards = [card for group, _ in deck_for_game("pits").limits() for card in group]
    assert tuple(cards) == full_deck(jokers=True)


@pytest.mark.parametrize(
    ("deck", "cards", "surplus", "why"),
    [
        (Deck.standard(), "KD QS KD", "KD", "one deck: the second KD"),
        (Deck.standard(), "KD JR QS", "JR", "no jokers in a plain pack"),
        (Deck.standard(2), "KD KD KD", "KD", "two decks hold two KD"),
        (Deck.standard(jokers=1), "JB JR", "JR", "one joker of either colour"),
        (Deck.standard(jokers=2), "JB JR", "", "one black and one red joker"),
        (Deck.pinochle(), "9S 9S 9S 8S AH", "9S 8S", "pinochle: 9-A twice, no 8"),
        (Deck.pinochle(decks=2), "9S 9S 9S 9S", "", "two pinochle packs: four of each"),
        (Deck.standard(), "", "", "nothing read"),
    ],
)
def test_surplus_names_what_the_deck_cannot_hold(
    deck: Deck, cards: str, surplus: str, why: str
) -> None:
    assert deck.surplus(parse_cards(cards)) == parse_cards(surplus), why


@pytest.mark.parametrize("game", sorted(GAME_DECKS))
def test_a_whole_deck_has_no_surplus_and_one_card_more_is_one(game: str) -> None:
    """Every limit filled: nothing over; any one card more, of the deck or not, is over."""
    deck = deck_for_game(game)
    whole = [group[0] for group, count in deck.limits() for _ in range(count)]
    assert deck.surplus(whole) == ()
    for card in full_deck(jokers=True):
        assert deck.surplus([*whole, card]) == (card,)


def test_more_decks_and_the_profile_count() -> None:
    assert deck_for_game("niuniu", 2) == Deck.standard(2)
    assert deck_for_game("baccarat", 1).copies_of(parse_card("AS")) == 1
    assert deck_for_game(" NiuNiu ") == GAME_DECKS["niuniu"]
    assert Deck.pinochle().ranks == PINOCHLE_RANKS
    assert Card(Rank.TWO, Suit.CLUBS) not in Deck.pinochle()


@pytest.mark.parametrize(
    ("deck", "text"),
    [
        (Deck.standard(), "52 cards"),
        (deck_for_game("baccarat"), "baccarat: 8 decks of 52 cards"),
        (Deck.pinochle(), "pinochle: 48 cards"),
        (Deck.standard(2, jokers=2), "2 decks of 54 cards"),
    ],
)
def test_a_deck_prints_its_size(deck: Deck, text: str) -> None:
    assert str(deck) == text


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: deck_for_game("poker"), "unknown game 'poker'"),
        (lambda: deck_for_game("niuniu", 0), "decks must be a whole number >= 1, got 0"),
        (lambda: Deck(copies=0), "copies must be a whole number >= 1, got 0"),
        (lambda: Deck(jokers=3), "jokers must be 0, 1 or 2, got 3"),
        (lambda: Deck(ranks=frozenset()), "ranks must be some of A..K"),
        (lambda: Deck.standard(decks=True), "decks must be a whole number >= 1, got True"),
    ],
)
def test_impossible_decks_are_deck_errors(make: object, message: str) -> None:
    with pytest.raises(DeckError, match=message) as raised:
        make()  # type: ignore[operator]
    assert isinstance(raised.value, RulesError)


def test_niuniu_deck_follows_the_profile() -> None:
    """A profile's ``decks`` is the number of 52-card packs (rules.niuniu_profiles)."""
    assert niuniu_deck() == Deck.standard()
    assert niuniu_deck(get_profile("classic").replace(decks=3)) == Deck.standard(3)


@pytest.mark.parametrize(
    ("game", "decks", "default", "expected", "why"),
    [
        (None, None, None, None, "no game, no default: any card"),
        (None, None, Deck.standard(), Deck.standard(), "the command's own deck"),
        (None, 2, Deck.standard(), Deck.standard(2), "the command's deck, two packs"),
        ("pits", None, Deck.standard(), deck_for_game("pits"), "a game named wins"),
        ("Pinochle", 2, None, Deck.pinochle(2), "a game and its packs"),
        (ANY_CARD, None, Deck.standard(), None, "any card, whatever the default"),
    ],
)
def test_deck_in_play_from_a_game_and_packs(
    game: str | None, decks: int | None, default: Deck | None, expected: Deck | None, why: str
) -> None:
    assert deck_in_play(game, decks, default) == expected, why


@pytest.mark.parametrize(
    ("game", "decks", "default", "message"),
    [
        ("poker", None, None, "unknown game 'poker': expected one of .*, or any"),
        (ANY_CARD, 2, None, "decks 2 given with game 'any': no deck is in play"),
        (None, 2, None, "decks 2 given without a game"),
        ("niuniu", -1, None, "decks must be a whole number >= 1, got -1"),
        (None, 0, Deck.standard(), "decks must be a whole number >= 1, got 0"),
    ],
)
def test_deck_in_play_errors(
    game: str | None, decks: int | None, default: Deck | None, message: str
) -> None:
    with pytest.raises(DeckError, match=message):
        deck_in_play(game, decks, default)


def test_no_game_is_dealt_from_more_packs_than_the_api_takes() -> None:
    """One bound on packs for every game, as the command line and the API share it."""
    from rules.baccarat import BaccaratRules
    from rules.blackjack import BlackjackRules
    from rules.cards import MAX_PACKS
    from rules.errors import ProfileError

    assert Deck.standard(MAX_PACKS).decks == MAX_PACKS
    with pytest.raises(DeckError, match=f"at most {MAX_PACKS}"):
        Deck.standard(MAX_PACKS + 1)
    with pytest.raises(DeckError, match=f"at most {MAX_PACKS}"):
        deck_in_play("pinochle", MAX_PACKS + 1)
    for make in (BaccaratRules, BlackjackRules):
        assert make(decks=MAX_PACKS).decks == MAX_PACKS
        with pytest.raises(ProfileError, match=f"must be 1 to {MAX_PACKS}"):
            make(decks=MAX_PACKS + 1)
    with pytest.raises(ProfileError, match=f"at most {MAX_PACKS}"):
        get_profile("classic").replace(decks=MAX_PACKS + 1)
