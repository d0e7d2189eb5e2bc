"""A round of Pits as a frozen state: each play or pass returns the next state.

Rules (seed 001): the goal is to be the first to get rid of all one's cards. On an empty table
the player to move leads any combination; the others must beat the table or pass. A player may
pass even when able to play; once passed, that player keeps passing (is skipped) until the table
is cleared. When everyone else has passed, the table is cleared and the player who made the last
play leads anything.

The product's choices where the seed is silent:

- Players move in seat order 0, 1, 2, ... and back to 0.
- The player to lead on an empty table must play: a pass there is an IllegalPlayError.
- A player who empties his hand is out; the order of going out is ``finished``, and the winner
  is the first out. If the player who made the last play is out when the table clears, the lead
  goes to the next player in seat order who still holds cards.
- The round ends when one player alone holds cards, or at the first player out, as
  ``PitsRules.round_end`` says.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace

from rules.cards import AnyCard, check_distinct
from rules.errors import HandError, IllegalPlayError
from rules.pits_beats import verify_play
from rules.pits_combos import (
    DEFAULT_PITS_RULES,
    Combination,
    PitsKind,
    PitsRoundEnd,
    PitsRules,
    sort_pits_cards,
)
from rules.pits_plays import legal_plays

__all__ = ["PitsRound"]


@dataclass(frozen=True, slots=True)
class PitsRound:
    """The state of a round: hands, table, who made the last play, who passed, who is out.

    ``to_move`` is the player whose turn it is, None once the round is over. ``table`` is None
    when the table is empty (the player to move leads). ``passed`` holds the players who passed
    since the table was last cleared. Build the first state with ``PitsRound.deal``.
    """

    hands: tuple[tuple[AnyCard, ...], ...]
    to_move: int | None
    table: Combination | None = None
    last_player: int | None = None
    passed: frozenset[int] = frozenset()
    finished: tuple[int, ...] = ()
    rules: PitsRules = DEFAULT_PITS_RULES

    @classmethod
    def deal(
        cls,
        hands: Iterable[Iterable[AnyCard]],
        leader: int = 0,
        rules: PitsRules = DEFAULT_PITS_RULES,
    ) -> PitsRound:
        """The opening state: ``leader`` leads on an empty table.

        Raises HandError for fewer than 2 players, an empty hand, a card dealt more often than
        ``rules.decks`` hold, or a leader who is not a player.
        """
        dealt = tuple(sort_pits_cards(hand) for hand in hands)
        if len(dealt) < 2:
            raise HandError(f"{len(dealt)} hands dealt: a round needs at least 2 players")
        empty = [seat for seat, hand in enumerate(dealt) if not hand]
        if empty:
            raise HandError(f"player {empty[0]} is dealt no cards")
        check_distinct((card for hand in dealt for card in hand), rules.decks)
        if not 0 <= leader < len(dealt):
            raise HandError(f"leader {leader!r} is not one of players 0..{len(dealt) - 1}")
        return cls(dealt, leader, rules=rules)

    @property
    def players(self) -> int:
        """How many players sit at the table."""
        return len(self.hands)

    @property
    def is_over(self) -> bool:
        """True once the round has ended."""
        return self.to_move is None

    @property
    def winner(self) -> int | None:
        """The first player to get rid of all cards, None while nobody has."""
        return self.finished[0] if self.finished else None

    @property
    def in_play(self) -> tuple[int, ...]:
        """The players still holding cards, in seat order."""
        return tuple(seat for seat, hand in enumerate(self.hands) if hand)

    @property
    def leads(self) -> bool:
        """True when the player to move leads on an empty table."""
        return self.to_move is not None and self.table is None

    def _mover(self, player: int | None) -> int:
        """The player to move, checked against ``player`` when given."""
        if self.to_move is None:
            raise IllegalPlayError("the round is over: nobody moves")
        if player is not None and player != self.to_move:
            if player in self.passed:
                raise IllegalPlayError(
                    f"player {player} has passed and must keep passing until the table is cleared"
                )
            raise IllegalPlayError(f"it is player {self.to_move}'s turn, not player {player}'s")
        return self.to_move

    def verify(
        self,
        cards: Iterable[AnyCard],
        kind: PitsKind | None = None,
        player: int | None = None,
    ) -> Combination:
        """The combination the player to move would play, or IllegalPlayError saying why not."""
        mover = self._mover(player)
        played = tuple(cards)
        missing = Counter(played) - Counter(self.hands[mover])
        if missing:
            absent = " ".join(str(card) for card in sort_pits_cards(missing.elements()))
            raise IllegalPlayError(f"{absent} not in player {mover}'s hand")
        return verify_play(played, self.table, self.rules, kind)

    def can_play(
        self,
        cards: Iterable[AnyCard],
        kind: PitsKind | None = None,
        player: int | None = None,
    ) -> bool:
        """True when ``verify`` accepts the play."""
        try:
            self.verify(cards, kind, player)
        except IllegalPlayError:
            return False
        return True

    def legal_plays(self) -> tuple[Combination, ...]:
        """Every distinct combination the player to move may play (see ``legal_plays``)."""
        if self.to_move is None:
            return ()
        return legal_plays(self.hands[self.to_move], self.table, self.rules)

    def play(
        self,
        cards: Iterable[AnyCard],
        kind: PitsKind | None = None,
        player: int | None = None,
    ) -> PitsRound:
        """The state after the player to move plays ``cards`` (read as ``kind`` when given)."""
        played = tuple(cards)
        combination = self.verify(played, kind, player)
        mover = self._mover(player)
        remaining = Counter(self.hands[mover]) - Counter(played)
        hand = sort_pits_cards(remaining.elements())
        hands = (*self.hands[:mover], hand, *self.hands[mover + 1 :])
        finished = self.finished if hand else (*self.finished, mover)
        after = replace(self, hands=hands, table=combination, last_player=mover, finished=finished)
        return after._settle(mover)

    def pass_turn(self, player: int | None = None) -> PitsRound:
        """The state after the player to move passes; the leader on an empty table may not."""
        mover = self._mover(player)
        if self.table is None:
            raise IllegalPlayError(f"player {mover} leads on an empty table and cannot pass")
        return replace(self, passed=self.passed | {mover})._settle(mover)

    def _settle(self, mover: int) -> PitsRound:
        """Whose turn follows ``mover``: clear the table when everyone else has passed."""
        in_play = self.in_play
        ended = len(in_play) <= 1 or (
            self.rules.round_end is PitsRoundEnd.FIRST_OUT and bool(self.finished)
        )
        if ended:
            return replace(self, to_move=None)
        contenders = [
            seat for seat in in_play if seat not in self.passed and seat != self.last_player
        ]
        if not contenders:
            last = self.last_player if self.last_player is not None else mover
            return replace(
                self,
                table=None,
                passed=frozenset(),
                to_move=self._next_seat(last, in_play, include_self=True),
            )
        return replace(self, to_move=self._next_seat(mover, contenders, include_self=False))

    def _next_seat(self, seat: int, candidates: Iterable[int], include_self: bool) -> int:
        """The first candidate in seat order from ``seat`` (itself first when ``include_self``)."""
        allowed = set(candidates)
        start = 0 if include_self else 1
        for step in range(start, start + self.players):
            candidate = (seat + step) % self.players
            if candidate in allowed:
                return candidate
        raise AssertionError("no candidate seat")  # callers pass at least one candidate
