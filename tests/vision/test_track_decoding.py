"""The cards shown by the tracker decoded together under the deck in play
(:func:`vision.tracking.decode_tracks`), from tracks built by hand: their votes are the
evidence, their confidence the reader's."""

from __future__ import annotations

import numpy as np
import pytest

from rules.cards import CARD_CLASSES
from rules.decks import Deck, niuniu_deck
from vision.decoding import decode_cards
from vision.tracking import Track, decode_tracks

ONE_DECK = Deck.standard()


def track(
    track_id: int,
    code: str,
    votes: tuple[str, ...],
    confidence: float = 0.9,
    uncertain: bool = False,
) -> Track:
    """A shown track at ``x = 100 * track_id`` with these votes (oldest first)."""
    x = 100.0 * track_id
    return Track(
        track_id=track_id,
        code=code,
        box_xyxy=(x, 0.0, x + 22.0, 34.0),
        confidence=confidence,
        uncertain=uncertain,
        shown=True,
        hits=len(votes),
        missed=0,
        age=len(votes),
        votes=votes,
        members=(track_id,),
    )


def test_with_no_conflict_every_track_is_returned_unchanged() -> None:
    # the second track's code is kept by the tracker's hysteresis though 5D leads its votes
    cards = (
        track(0, "KD", ("KD",) * 24),
        track(1, "QS", ("QS",) * 10 + ("5D",) * 14),
        track(2, "3C", ("3C",) * 3, uncertain=True),
    )
    assert decode_tracks(cards, ONE_DECK) == cards


def test_a_duplicate_in_a_one_deck_game_falls_back_to_its_next_voted_code() -> None:
    # a pip read as KD in most frames of its short life, as 5D in the others; the real KD
    # has read nothing else: the pip gives KD up, the real KD keeps it
    real = track(0, "KD", ("KD",) * 24)
    pip = track(1, "KD", ("KD",) * 4 + ("5D",) * 2, confidence=0.8)
    decoded = decode_tracks((real, pip), ONE_DECK)
    assert decoded[0] == real
    assert decoded[1].code == "5D" and decoded[1].track_id == 1
    # 5D holds 2 of its 6 votes: not more than half, so it is shown uncertain, with that share
    assert decoded[1].uncertain and decoded[1].confidence == pytest.approx(2 / 6)
    assert [card.code for card in decoded].count("KD") == 1


def test_a_fallback_code_holding_most_of_a_tracks_votes_is_shown_certain() -> None:
    # the tracker kept 9H on the second track by hysteresis though 9D now leads its votes
    first = track(0, "9H", ("9H",) * 24)
    second = track(1, "9H", ("9H",) * 8 + ("9D",) * 16)
    decoded = decode_tracks((first, second), ONE_DECK)
    assert [card.code for card in decoded] == ["9H", "9D"]
    assert not decoded[1].uncertain and decoded[1].confidence == pytest.approx(16 / 24)


def test_a_duplicate_with_no_other_vote_is_shown_uncertain_and_the_surer_keeps_it() -> None:
    # neither track has another code: the one with more votes of KD (24 against 3) keeps it
    # certain, the other is shown with its code, uncertain
    newcomer = track(0, "KD", ("KD",) * 3)
    settled = track(1, "KD", ("KD",) * 24)
    decoded = decode_tracks((newcomer, settled), ONE_DECK)
    assert decoded[1] == settled
    assert decoded[0].code == "KD" and decoded[0].uncertain
    # with as many votes each, the more confident one keeps it
    sure, doubtful = track(0, "KD", ("KD",) * 10, 0.95), track(1, "KD", ("KD",) * 10, 0.6)
    decoded = decode_tracks((sure, doubtful), ONE_DECK)
    assert decoded[0] == sure and decoded[1].uncertain


def test_a_fallback_already_held_by_a_third_track_is_not_taken() -> None:
    real = track(0, "KD", ("KD",) * 24)
    pip = track(1, "KD", ("KD",) * 5 + ("5D",) * 1)
    five = track(2, "5D", ("5D",) * 24)
    decoded = decode_tracks((real, pip, five), ONE_DECK)
    assert decoded[0] == real and decoded[2] == five
    assert decoded[1].code == "KD" and decoded[1].uncertain  # nothing left: uncertain


def test_two_decks_keep_both_copies() -> None:
    cards = (track(0, "KD", ("KD",) * 24), track(1, "KD", ("KD",) * 4 + ("5D",) * 2))
    assert decode_tracks(cards, Deck.standard(decks=2)) == cards


def test_a_joker_track_in_niu_niu_is_never_shown_as_a_joker() -> None:
    deck = niuniu_deck()
    # read as a joker mostly, as 7S now and then: shown as 7S, uncertain
    mostly = track(0, "JB", ("JB",) * 20 + ("7S",) * 4)
    # read as nothing but jokers: no card of the deck to show
    only = track(1, "JR", ("JR",) * 24)
    kept = track(2, "AH", ("AH",) * 24)
    decoded = decode_tracks((mostly, only, kept), deck)
    assert [(card.track_id, card.code) for card in decoded] == [(0, "7S"), (2, "AH")]
    assert decoded[0].uncertain
    assert all(card.code not in ("JB", "JR") for card in decoded)
    # a deck with jokers keeps them
    assert decode_tracks((mostly, only, kept), Deck.standard(jokers=2)) == (mostly, only, kept)


def test_no_tracks_decode_to_none() -> None:
    assert decode_tracks((), ONE_DECK) == ()


def test_decode_cards_only_read_never_picks_a_code_of_probability_zero() -> None:
    rows = np.zeros((3, len(CARD_CLASSES)))
    position = {code: index for index, code in enumerate(CARD_CLASSES)}
    rows[0, position["KD"]] = 0.9
    rows[1, position["KD"]] = 0.5  # read only as KD: once KD is taken, nothing is left
    rows[2, position["JB"]] = 0.9  # read only as a joker
    decoded = decode_cards(rows, ONE_DECK, prior=False, only_read=True)
    assert decoded.codes.tolist() == [position["KD"], position["KD"], -1]
    assert decoded.placed.tolist() == [True, False, False]
    assert decoded.probability.tolist() == [0.9, 0.5, 0.0]
    # without only_read the second card is given some card it was never read as
    plain = decode_cards(rows, ONE_DECK, prior=False)
    assert plain.placed.tolist() == [True, True, True]
    assert plain.codes[1] != position["KD"] and rows[1, plain.codes[1]] == 0
