"""The Pits round as frozen states: turns, passing, clearing the table, going out.

Rules (seed 001, quoted in tests/test_pits_seed.py) and the product's choices documented in
``rules.pits_round``: seat order, the leader may not pass, the lead after a player goes out.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.cards import AnyCard, full_deck, parse_cards
from rules.errors import HandError, IllegalPlayError
from rules.pits import PitsKind, PitsRound, PitsRoundEnd, PitsRules


def deal(*hands: str, leader: int = 0, rules: PitsRules | None = None) -> PitsRound:
    return PitsRound.deal([parse_cards(hand) for hand in hands], leader, rules or PitsRules())


def test_play_returns_a_new_frozen_state() -> None:
    """``play`` leaves the old state as it was and returns the next one."""
    start = deal("3S 4H", "5C 6D")
    after = start.play(parse_cards("3S"))
    assert start.hands[0] == parse_cards("3S 4H") and start.table is None
    assert after.hands[0] == parse_cards("4H") and after.table is not None
    assert (after.to_move, after.last_player) == (1, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        after.to_move = 0  # type: ignore[misc]


# hands, moves ("pass" or cards), expected error
ILLEGAL_MOVES = [
    (("3S 4H", "5C 6D"), ["pass"], "player 0 leads on an empty table and cannot pass"),
    (("3S 4H", "5C 6D"), ["5C"], "5C not in player 0's hand"),
    (("3S 4H", "5C 6D"), ["3S 4H"], "not a pair"),
    (("9S 4H", "5C 6D"), ["9S", "5C"], "5 does not beat 9"),
    (("9S 9H 4H", "5C 6D 10S"), ["9S 9H", "10S"], "a single cannot beat a pair"),
]


@pytest.mark.parametrize(("hands", "moves", "error"), ILLEGAL_MOVES)
def test_illegal_moves(hands: tuple[str, ...], moves: list[str], error: str) -> None:
    """Each row: the last move is illegal and the error says why; earlier moves are legal."""
    state = deal(*hands)
    *before, last = moves
    for move in before:
        state = state.pass_turn() if move == "pass" else state.play(parse_cards(move))
    with pytest.raises(IllegalPlayError, match=error):
        if last == "pass":
            state.pass_turn()
        else:
            state.play(parse_cards(last))


def test_out_of_turn_is_refused() -> None:
    """Naming a player who is not to move is an IllegalPlayError."""
    state = deal("3S 4H", "5C 6D", "7S 8S")
    with pytest.raises(IllegalPlayError, match="it is player 0's turn, not player 2's"):
        state.play(parse_cards("7S"), player=2)
    with pytest.raises(IllegalPlayError, match="it is player 0's turn"):
        state.pass_turn(player=1)


@pytest.mark.parametrize(
    ("hands", "leader", "error"),
    [
        (("3S",), 0, "1 hands dealt: a round needs at least 2 players"),
        (("3S", ""), 0, "player 1 is dealt no cards"),
        (("3S", "3S"), 0, "duplicate card 3S"),
        (("3S", "4S"), 2, "leader 2 is not one of players 0..1"),
    ],
)
def test_bad_deals(hands: tuple[str, ...], leader: int, error: str) -> None:
    """A deal with too few players, an empty hand, a duplicate card or a bad leader is refused."""
    with pytest.raises(HandError, match=error):
        deal(*hands, leader=leader)


def test_kind_chooses_the_reading_of_a_lead() -> None:
    """5 JB JR leads as a triple by default, as a sequence when asked; the follower must match.

    As a sequence it reads 5 6 7 all of one suit (the jokers take the suit), so only another
    sequence of one suit beats it."""
    hands = ("5H JB JR 9S", "6C 7C 8C 9D 4D")
    as_triple = deal(*hands).play(parse_cards("5H JB JR"))
    assert as_triple.table is not None and as_triple.table.kind is PitsKind.TRIPLE
    as_run = deal(*hands).play(parse_cards("5H JB JR"), PitsKind.SEQUENCE)
    assert as_run.table is not None and as_run.table.kind is PitsKind.SEQUENCE
    assert as_run.table.one_suit
    assert as_run.can_play(parse_cards("6C 7C 8C"))
    assert not as_run.can_play(parse_cards("7C 8C 9D"))
    assert not as_triple.can_play(parse_cards("6C 7C 8C"))


def test_lead_passes_on_when_the_last_player_is_out() -> None:
    """Choice: if the last player is out when the table clears, the next player in seat order
    who still holds cards leads."""
    state = deal("3S 4S", "KH", "5D 6D", "7C 8C")
    state = state.play(parse_cards("3S")).play(parse_cards("KH"))  # player 1 goes out
    assert state.finished == (1,) and state.to_move == 2
    state = state.pass_turn().pass_turn().pass_turn()  # players 2, 3, 0 pass
    assert state.table is None and state.to_move == 2


def test_round_ends_when_one_player_holds_cards() -> None:
    """Default ``round_end``: play on until one player alone holds cards; ``finished`` ranks."""
    state = deal("3S", "4S 5S", "6S")
    state = state.play(parse_cards("3S"))  # player 0 out
    state = state.play(parse_cards("4S"))
    state = state.play(parse_cards("6S"))  # player 2 out, player 1 alone
    assert state.is_over and state.to_move is None and state.finished == (0, 2)
    assert state.winner == 0 and state.legal_plays() == ()
    with pytest.raises(IllegalPlayError, match="the round is over"):
        state.pass_turn()


def test_first_out_ends_the_round_when_asked() -> None:
    """``round_end=FIRST_OUT``: the round stops as soon as one player is out."""
    state = deal("3S", "4S 5S", "6S", rules=PitsRules(round_end=PitsRoundEnd.FIRST_OUT))
    state = state.play(parse_cards("3S"))
    assert state.is_over and state.winner == 0


def test_who_leads_next_after_everyone_passes() -> None:
    """Seed: when everyone else has passed, the player who made the last play leads."""
    state = deal("3S 9H", "5C 6D", "7S 8S", leader=1)
    state = state.play(parse_cards("5C"))  # player 1
    state = state.play(parse_cards("7S"))  # player 2
    state = state.play(parse_cards("9H"))  # player 0
    state = state.pass_turn().pass_turn()  # players 1 and 2
    assert state.leads and state.to_move == 0 and state.last_player == 0


Move = tuple[int, tuple[AnyCard, ...] | None]
"""Who moved, and the cards played (None for a pass)."""


def _random_playout(rng: random.Random, players: int) -> tuple[list[PitsRound], list[Move]]:
    """A whole round with random legal moves (sometimes passing when able)."""
    deck = list(full_deck(jokers=True))
    rng.shuffle(deck)
    size = len(deck) // players
    state = PitsRound.deal([deck[seat * size : (seat + 1) * size] for seat in range(players)])
    states: list[PitsRound] = [state]
    moves: list[Move] = []
    while state.to_move is not None:
        mover = state.to_move
        options = state.legal_plays()
        if state.table is not None and (not options or rng.random() < 0.3):
            state = state.pass_turn()
            moves.append((mover, None))
        else:
            chosen = rng.choice(options)
            state = state.play(chosen.cards, chosen.kind)
            moves.append((mover, chosen.cards))
        states.append(state)
        assert len(states) < 2000, "the round must end"
    return states, moves


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=2, max_value=4))
@settings(max_examples=12, deadline=None)
def test_random_rounds_keep_the_invariants(seed: int, players: int) -> None:
    """Property: in random legal rounds a play removes exactly its cards from the mover's hand and
    a pass removes none, a passed player is never asked to move, a player in ``finished`` holds
    no cards, the table after a play holds that play unless it cleared, and the round ends."""
    states, moves = _random_playout(random.Random(seed), players)
    for before, after, (mover, cards) in zip(states[:-1], states[1:], moves, strict=True):
        removed = Counter(before.hands[mover]) - Counter(after.hands[mover])
        assert removed == Counter(cards or ())
        others = [seat for seat in range(players) if seat != mover]
        assert all(before.hands[seat] == after.hands[seat] for seat in others)
        assert after.to_move is None or after.to_move not in after.passed
        assert all(not after.hands[seat] for seat in after.finished)
        if cards is not None and after.table is not None:
            assert Counter(after.table.cards) == Counter(cards)
            assert after.last_player == mover
    final = states[-1]
    assert final.is_over and len(final.in_play) <= 1 and len(final.finished) >= players - 1
