"""Baccarat: card points, the third-card tableau cell by cell, coup consistency, payouts.

Expectations come from RULES.md section 3 ("Baccarat"), quoted where used.
"""

from __future__ import annotations

import json
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules.baccarat import (
    BaccaratBet,
    BaccaratBetOutcome,
    BaccaratCoup,
    BaccaratResult,
    BaccaratRules,
    baccarat_points,
    baccarat_total,
    banker_draws,
    evaluate_coup,
    player_draws,
    settle_baccarat_bet,
)
from rules.cards import AnyCard, Card, Joker, Rank, Suit, full_deck, parse_cards
from rules.errors import HandError, IllegalPlayError, ProfileError

DECK = full_deck()


def cards(text: str) -> tuple[AnyCard, ...]:
    return parse_cards(text)


@pytest.mark.parametrize(
    ("rank", "points"),
    [(Rank.ACE, 1), *((Rank(value), value) for value in range(2, 10)), (Rank.TEN, 0),
     (Rank.JACK, 0), (Rank.QUEEN, 0), (Rank.KING, 0)],
)  # fmt: skip
def test_card_points(rank: Rank, points: int) -> None:
    """RULES.md: "A = 1, 2..9 face value, 10/J/Q/K = 0"."""
    assert baccarat_points(Card(rank, Suit.CLUBS)) == points


@pytest.mark.parametrize(
    ("text", "total"),
    [("7S 8D", 5), ("KS QD", 0), ("9S 9D", 8), ("AS 8D", 9), ("5S 5D 5C", 5), ("10S 4D JC", 4)],
)
def test_totals_are_the_last_digit(text: str, total: int) -> None:
    """RULES.md: "totals are the last digit"."""
    assert baccarat_total(cards(text)) == total


# The tableau written out from RULES.md: "Banker draws on 0-2; on 3 unless the player's third
# card was 8; on 4 if it was 2-7; on 5 if 4-7; on 6 if 6-7; stands on 7 (and draws with 0-5
# when the player stood)". Columns: the Player's third card points 0..9, then "player stood".
#                 third:  0 1 2 3 4 5 6 7 8 9  stood
TABLEAU_TEXT = {
    0: "D D D D D D D D D D D",
    1: "D D D D D D D D D D D",
    2: "D D D D D D D D D D D",
    3: "D D D D D D D D S D D",
    4: "S S D D D D D D S S D",
    5: "S S S S D D D D S S D",
    6: "S S S S S S D D S S S",
    7: "S S S S S S S S S S S",
}
COLUMNS: list[int | None] = [*range(10), None]
TABLEAU_CELLS = [
    (banker, third, cell == "D")
    for banker, row in TABLEAU_TEXT.items()
    for third, cell in zip(COLUMNS, row.split(), strict=True)
]
# A card worth each number of points, for building coups.
CARD_FOR_POINTS = {0: "KH", 1: "AH", **{points: f"{points}H" for points in range(2, 10)}}


def _cell_id(banker: int, third: int | None) -> str:
    return f"banker{banker}-{'stood' if third is None else f'third{third}'}"


@pytest.mark.parametrize(
    ("banker", "third", "draws"),
    TABLEAU_CELLS,
    ids=[_cell_id(banker, third) for banker, third, _ in TABLEAU_CELLS],
)
def test_tableau_cell(banker: int, third: int | None, draws: bool) -> None:
    """Every cell of the Banker's tableau (88 cells), by the function and through a real coup:
    the two-card coup says whether the Banker must draw, and a Banker third card is consistent
    exactly when the tableau says draw."""
    assert len(TABLEAU_CELLS) == 8 * 11
    assert banker_draws(banker, third) is draws
    banker_cards = f"{CARD_FOR_POINTS[banker]} KS"
    # Player 6 stands; player 4 drew the third card of the column.
    player_cards = "3C 3D" if third is None else f"2C 2D {CARD_FOR_POINTS[third]}"
    coup = evaluate_coup(cards(player_cards), cards(banker_cards))
    assert coup.consistent
    assert not coup.player_must_draw
    assert coup.banker_must_draw is draws
    assert coup.complete is not draws
    drawn = evaluate_coup(cards(player_cards), cards(f"{banker_cards} 5S"))
    assert drawn.consistent is draws
    assert drawn.complete is draws


@pytest.mark.parametrize("total", range(10))
def test_player_draws_on_0_to_5(total: int) -> None:
    """RULES.md: "Player draws on 0-5, stands on 6-7" (8-9 are naturals: no draw)."""
    assert player_draws(total) is (total <= 5)


@pytest.mark.parametrize("banker", [8, 9])
@pytest.mark.parametrize("third", COLUMNS)
def test_banker_never_draws_on_a_natural_total(banker: int, third: int | None) -> None:
    """A Banker 8 or 9 is a natural: "a natural 8 or 9 ends the coup"."""
    assert banker_draws(banker, third) is False


@pytest.mark.parametrize(
    ("player", "banker", "result", "player_natural", "banker_natural"),
    [
        # "a natural 8 or 9 ends the coup": no draw even on a low other side.
        ("8S KD", "2C 3H", BaccaratResult.PLAYER, True, False),
        ("2C 3H", "9S KD", BaccaratResult.BANKER, False, True),
        ("4S 4D", "9C KH", BaccaratResult.BANKER, True, True),
        ("9S KD", "5C 4H", BaccaratResult.TIE, True, True),
        # Both stand: player 7 vs banker 6 (banker stands on 6 when the player stood).
        ("3S 4D", "6C KH", BaccaratResult.PLAYER, False, False),
        # Player 6 stands, banker 5 draws (0-5 when the player stood) a 4: 9.
        ("3S 3D", "2C 3H 4S", BaccaratResult.BANKER, False, False),
        # Player 0 draws a 9; banker 3 draws (player third 9, not 8) a K: 3 vs 9.
        ("KS QD 9C", "AC 2H KS", BaccaratResult.PLAYER, False, False),
    ],
)
def test_finished_coups(
    player: str, banker: str, result: BaccaratResult, player_natural: bool, banker_natural: bool
) -> None:
    """Finished coups worked by hand from the drawing rules."""
    coup = evaluate_coup(cards(player), cards(banker))
    assert coup.problem is None
    assert coup.result is result
    assert (coup.player_natural, coup.banker_natural) == (player_natural, banker_natural)
    assert not coup.player_must_draw and not coup.banker_must_draw


@pytest.mark.parametrize(
    ("player", "banker", "player_must", "banker_must"),
    [
        ("2S 3D", "KC 7H", True, False),  # player 5 draws first; the banker waits for its card
        ("2S 3D", "KC 2H", True, False),
        ("3S 3D", "KC 5H", False, True),  # player stood on 6: banker 5 draws
        ("2S 3D 8C", "KC 3H", False, False),  # banker 3 stands on a player third 8
        ("2S 3D 7C", "KC 6H", False, True),  # banker 6 draws on a player third 7
    ],
)
def test_who_must_draw_now(player: str, banker: str, player_must: bool, banker_must: bool) -> None:
    """The coup reports who must take a third card now."""
    coup = evaluate_coup(cards(player), cards(banker))
    assert (coup.player_must_draw, coup.banker_must_draw) == (player_must, banker_must)
    assert coup.consistent
    assert coup.complete is not (player_must or banker_must)


@pytest.mark.parametrize(
    ("player", "banker", "problem"),
    [
        ("8S KD 2C", "2C 3H", "player drew a third card (2C) after a player natural 8"),
        ("2C 3H", "9S KD 4C", "banker drew a third card (4C) after a banker natural 9"),
        ("3S 3D 2C", "KC 4H", "player drew a third card (2C) on 6: the player stands on 6-7"),
        ("3S 4D AC", "KC 4H", "player drew a third card (AC) on 7"),
        ("2S 3D", "KC 2H 4C", "banker drew a third card (4C) before the player's"),
        ("3S 4D", "KC 6H 2C", "banker drew a third card (2C) on 6 after the player stood"),
        ("2S 3D 8C", "KC 3H 2D", "banker drew a third card (2D) on 3 after the player's third"),
        ("2S 3D 5C", "KC 6H 2D", "on 6 after the player's third card 5C (5 points)"),
        ("2S 3D 5C", "KC 7H 2D", "banker stands"),
    ],
)
def test_illegal_third_cards_are_named(player: str, banker: str, problem: str) -> None:
    """A third card drawn against the tableau makes the coup inconsistent with a named reason;
    verify() and settle_baccarat_bet raise it."""
    coup = evaluate_coup(cards(player), cards(banker))
    assert not coup.consistent
    assert coup.problem is not None and problem in coup.problem
    assert coup.result is None
    with pytest.raises(IllegalPlayError, match="drew a third card"):
        coup.verify()
    with pytest.raises(IllegalPlayError):
        settle_baccarat_bet(coup, BaccaratBet.PLAYER)


@pytest.mark.parametrize(
    ("player", "banker", "rules", "error", "message"),
    [
        ("2S", "KC 4H", BaccaratRules(), HandError, "player needs 2 or 3 cards, got 1"),
        ("2S 3D 4C 5H", "KC 4H", BaccaratRules(), HandError, "player needs 2 or 3 cards, got 4"),
        ("2S 3D", "", BaccaratRules(), HandError, "banker needs 2 or 3 cards, got 0"),
        ("2S JR", "KC 4H", BaccaratRules(), HandError, "joker JR has no value in baccarat"),
        ("2S 3D", "2S 4H", BaccaratRules(decks=1), HandError, "duplicate card 2S"),
        ("2S 2S", "2S 2S", BaccaratRules(decks=3), HandError, "duplicate card 2S"),
    ],
)
def test_bad_input(
    player: str, banker: str, rules: BaccaratRules, error: type[Exception], message: str
) -> None:
    """Wrong counts, jokers and too many copies of a card are HandErrors naming the problem."""
    with pytest.raises(error, match=message):
        evaluate_coup(cards(player), cards(banker), rules)


def test_eight_decks_allow_repeated_cards() -> None:
    """The default shoe has 8 decks, so the same card may appear on both sides."""
    assert evaluate_coup(cards("2S 4D"), cards("2S 4D")).result is BaccaratResult.TIE


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        (lambda: BaccaratRules(banker_commission=Decimal(1)), "banker commission 1"),
        (lambda: BaccaratRules(tie_pays=Decimal(0)), "tie payout 0"),
        (lambda: BaccaratRules(decks=0), "decks 0"),
    ],
)
def test_bad_rules(rules: object, message: str) -> None:
    """Inconsistent options are ProfileErrors."""
    with pytest.raises(ProfileError, match=message):
        rules()  # type: ignore[operator]


PLAYER_WINS = ("3S 4D", "6C KH")  # 7 vs 6
BANKER_WINS = ("3S 3D", "2C 3H 4S")  # 6 vs 9
TIE = ("9S KD", "5C 4H")  # 9 vs 9


@pytest.mark.parametrize(
    ("coup", "bet", "rules", "outcome", "net"),
    [
        # RULES.md: "Payouts: Player 1:1, Banker 0.95:1, Tie 8:1"; stake 100.
        (PLAYER_WINS, BaccaratBet.PLAYER, BaccaratRules(), BaccaratBetOutcome.WIN, "100"),
        (PLAYER_WINS, BaccaratBet.BANKER, BaccaratRules(), BaccaratBetOutcome.LOSE, "-100"),
        (PLAYER_WINS, BaccaratBet.TIE, BaccaratRules(), BaccaratBetOutcome.LOSE, "-100"),
        (BANKER_WINS, BaccaratBet.BANKER, BaccaratRules(), BaccaratBetOutcome.WIN, "95"),
        (BANKER_WINS, BaccaratBet.PLAYER, BaccaratRules(), BaccaratBetOutcome.LOSE, "-100"),
        (TIE, BaccaratBet.TIE, BaccaratRules(), BaccaratBetOutcome.WIN, "800"),
        # Player/Banker bets push on a tie (default) ...
        (TIE, BaccaratBet.PLAYER, BaccaratRules(), BaccaratBetOutcome.PUSH, "0"),
        (TIE, BaccaratBet.BANKER, BaccaratRules(), BaccaratBetOutcome.PUSH, "0"),
        # ... or lose (option).
        (TIE, BaccaratBet.BANKER, BaccaratRules(push_on_tie=False), BaccaratBetOutcome.LOSE,
         "-100"),
        # Commission and tie payout are options.
        (BANKER_WINS, BaccaratBet.BANKER, BaccaratRules(banker_commission=Decimal(0)),
         BaccaratBetOutcome.WIN, "100"),
        (TIE, BaccaratBet.TIE, BaccaratRules(tie_pays=Decimal(9)), BaccaratBetOutcome.WIN, "900"),
    ],
)  # fmt: skip
def test_payouts(
    coup: tuple[str, str],
    bet: BaccaratBet,
    rules: BaccaratRules,
    outcome: BaccaratBetOutcome,
    net: str,
) -> None:
    """Net amounts per bet on finished coups."""
    played = evaluate_coup(cards(coup[0]), cards(coup[1]), rules)
    settlement = settle_baccarat_bet(played, bet, 100, rules)
    assert settlement.outcome is outcome
    assert settlement.net == Decimal(net)


def test_banker_commission_on_odd_stakes_is_exact() -> None:
    """0.95 x 7 = 6.65 exactly (decimal money, no float rounding)."""
    played = evaluate_coup(cards(BANKER_WINS[0]), cards(BANKER_WINS[1]))
    settlement = settle_baccarat_bet(played, BaccaratBet.BANKER, Decimal(7))
    assert settlement.net == Decimal("6.65")
    assert settlement.to_dict() == {"bet": "banker", "stake": 7, "outcome": "win", "net": 6.65}


def test_settling_needs_a_finished_coup_and_a_positive_stake() -> None:
    """No payout before the coup is over; the stake must be positive."""
    unfinished = evaluate_coup(cards("2S 3D"), cards("KC 7H"))
    with pytest.raises(IllegalPlayError, match="the player must draw"):
        settle_baccarat_bet(unfinished, BaccaratBet.PLAYER)
    finished = evaluate_coup(cards(TIE[0]), cards(TIE[1]))
    with pytest.raises(HandError, match="stake -5 must be positive"):
        settle_baccarat_bet(finished, BaccaratBet.TIE, -5)


def test_to_dict_is_json_ready() -> None:
    """The endpoint form: plain JSON types only."""
    coup = evaluate_coup(cards("2S 3D 7C"), cards("KC 6H"))
    data = coup.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["banker"] == {"cards": ["KC", "6H"], "total": 6, "natural": False,
                              "must_draw": True}  # fmt: skip
    assert data["result"] is None and data["consistent"] is True


def _deal(shoe: list[AnyCard]) -> BaccaratCoup:
    """Deal a coup from ``shoe`` by following the coup's own must-draw flags."""
    player, banker = [shoe.pop(), shoe.pop()], [shoe.pop(), shoe.pop()]
    coup = evaluate_coup(player, banker)
    while coup.player_must_draw or coup.banker_must_draw:
        (player if coup.player_must_draw else banker).append(shoe.pop())
        coup = evaluate_coup(player, banker)
    return coup


def test_dealing_by_the_flags_always_ends_consistent() -> None:
    """10,000 seeded coups from 8-deck shoes: following must_draw always ends in a consistent,
    finished coup, and any extra card dealt to either side is then flagged."""
    rng = np.random.default_rng(8)
    shoe_cards = list(DECK) * 8
    results = {result: 0 for result in BaccaratResult}
    for _ in range(10_000):
        order = rng.choice(len(shoe_cards), 6, replace=False)
        shoe = [shoe_cards[index] for index in order]
        coup = _deal(shoe)
        assert coup.consistent and coup.complete and coup.result is not None
        results[coup.result] += 1
        if len(coup.player) == 2:
            extra = evaluate_coup([*coup.player, shoe[0]], coup.banker)
            assert not extra.consistent
        if len(coup.banker) == 2:
            extra = evaluate_coup(coup.player, [*coup.banker, shoe[0]])
            assert not extra.consistent
    # Banker ~45.9%, Player ~44.6%, Tie ~9.5% in the long run (8 decks).
    assert 0.43 < results[BaccaratResult.BANKER] / 10_000 < 0.49
    assert 0.42 < results[BaccaratResult.PLAYER] / 10_000 < 0.47
    assert 0.08 < results[BaccaratResult.TIE] / 10_000 < 0.11


@given(st.lists(st.sampled_from(DECK), min_size=4, max_size=4))
def test_two_card_flags_follow_the_rules(dealt: list[AnyCard]) -> None:
    """Property: on two cards a side, the player must draw exactly when neither side has a
    natural and the player's total is 0-5."""
    coup = evaluate_coup(dealt[:2], dealt[2:])
    no_natural = not coup.player_natural and not coup.banker_natural
    assert coup.player_must_draw is (no_natural and coup.player_total <= 5)
    assert coup.consistent


def test_jokers_are_rejected_by_points() -> None:
    """Jokers have no baccarat value."""
    with pytest.raises(HandError, match="joker JB"):
        baccarat_points(Joker.BLACK)
