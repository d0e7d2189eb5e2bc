"""Niu Niu banker game settlement: seeds 002 (trainer) and 003 (app), RULES.md options."""

from __future__ import annotations

from decimal import Decimal

import pytest

from rules.errors import HandError, ProfileError, RulesError
from rules.niuniu import Outcome, evaluate_hand
from rules.niuniu_profiles import BetType, NiuScore, TieRule, get_profile, get_table
from rules.settlement import parse_stake, play_round, settle

NIU_NIU = "KS QS 5H 5D JD"
NO_NIU = "AS 2D 4C 8H 9C"
ULTIMATE = "JH QH KH JC QC"
NIU_8 = "KD QD 10H 3C 5C"
NIU_3 = "KC 9S AH 2C AD"  # 9 + A + K = 20, 2 + A = 3


def round_net(banker: str, player: str, profile: str, bet: str | None, stake: object) -> Decimal:
    result = play_round(banker, [player], profile, bet, stake)  # type: ignore[arg-type]
    return result.players[0].settlement.net


def test_hands_used_here() -> None:
    """The fixtures are the hands their names say (checked, not assumed)."""
    scores = [evaluate_hand(h, "trainer").score for h in (NIU_NIU, NO_NIU, ULTIMATE, NIU_8, NIU_3)]
    assert scores == [
        NiuScore.NIU_NIU,
        NiuScore.NO_NIU,
        NiuScore.ULTIMATE,
        NiuScore.NIU_8,
        NiuScore.NIU_3,
    ]


def test_seed_002_double_bet_niu_niu_beats_no_niu_pays_285() -> None:
    """Seed 002 example 2: Double bet 100, Niu Niu beats No Niu: 3 x 100 - 5% = 285."""
    result = play_round(NO_NIU, [NIU_NIU], "trainer", "double", 100)
    settlement = result.players[0].settlement
    assert settlement.outcome is Outcome.WIN
    assert settlement.net == 285
    assert (settlement.multiple, settlement.commission) == (3, Decimal(15))


def test_seed_002_equal_bet_pays_95() -> None:
    """Seed 002 example 2: on an Equal bet of 100 the win is 95."""
    assert round_net(NO_NIU, NIU_NIU, "trainer", "equal", 100) == 95


@pytest.mark.parametrize(
    ("banker", "player", "bet", "net", "why"),
    [
        (NIU_8, NO_NIU, "double", -200, "banker wins with Niu 8: the player loses double (seed)"),
        (NIU_NIU, NIU_3, "double", -300, "banker's Niu Niu sets 3x on the loss"),
        (NO_NIU, ULTIMATE, "double", Decimal(475), "Ultimate 5x - 5%"),
        (NO_NIU, NIU_8, "double", 190, "Niu 7-9 2x - 5%"),
        (NO_NIU, NIU_3, "double", 95, "anything else 1x - 5%"),
        (NIU_3, NO_NIU, "double", -100, "banker wins with Niu 3: 1x"),
        (NIU_8, NO_NIU, "equal", -100, "equal bet: 1x whatever the hands"),
        (NO_NIU, ULTIMATE, "equal", 95, "equal bet: 1x - 5%"),
    ],
)
def test_seed_002_trainer_bets(banker: str, player: str, bet: str, net: int, why: str) -> None:
    """Seed 002: on a Double bet the winning hand sets the multiple (Ultimate 5x, Niu Niu 3x,
    Niu 7-9 2x, else 1x), for a win and a loss alike; 5% commission on winnings."""
    assert round_net(banker, player, "trainer", bet, 100) == net, why


@pytest.mark.parametrize(
    ("player", "net", "pattern"),
    [
        (ULTIMATE, 500, "Ultimate Niu-Niu 5:1"),
        (NIU_NIU, 300, "Niu-Niu 3:1"),
        (NIU_8, 200, "Big Point 2:1"),
        (NIU_3, 100, "Small Point 1:1"),
    ],
)
def test_seed_003_app_pays_the_players_winning_pattern(player: str, net: int, pattern: str) -> None:
    """Seed 003: winning bets are paid by the player's pattern; no commission in the app."""
    assert round_net(NO_NIU, player, "app", None, 100) == net, pattern


def test_seed_003_high_card_win_and_losses() -> None:
    """Seed 003: High Card pays 1:1, so a hand without bull can beat another one: equal
    patterns compare their two-card points (the best two cards: ``no_bull_points``); still
    equal, the bet is returned; a loss costs the stake whatever the banker holds."""
    eight_high = "KS AH 3D 4S 4D"  # no bull; best two cards 4 + 4 = 8
    assert evaluate_hand(eight_high, "app").score is NiuScore.NO_NIU
    assert round_net(eight_high, NO_NIU, "app", None, 100) == 100  # 8 + A = 9 beats 8: 1:1
    assert round_net(NO_NIU, eight_high, "app", None, 100) == -100
    assert round_net(NO_NIU, "AH 2S 4D 8C 9D", "app", None, 100) == 0  # push: bet returned
    assert round_net(ULTIMATE, NIU_NIU, "app", None, 100) == -100
    assert round_net(NIU_8, NIU_3, "app", None, 100) == -100


def test_app_offers_no_double_bet() -> None:
    with pytest.raises(ProfileError, match="no 'double' bet"):
        round_net(NO_NIU, NIU_NIU, "app", "double", 100)


def test_push_returns_the_bet_and_banker_wins_ties_option() -> None:
    """RULES.md: push on full ties (default) or banker wins ties."""
    trainer = get_profile("trainer").replace(decks=2)
    assert round_net(NIU_8, NIU_8, trainer, "double", 100) == 0  # type: ignore[arg-type]
    strict = trainer.replace(ties=TieRule.BANKER_WINS)
    result = play_round(NIU_8, [NIU_8], strict, "double", 100)
    assert result.players[0].settlement.outcome is Outcome.LOSE
    assert result.players[0].settlement.net == -200  # the banker's Niu 8 sets 2x


def test_commission_rate_is_an_option() -> None:
    """RULES.md: commission rate (5% default)."""
    no_commission = get_profile("trainer").replace(commission_rate=Decimal(0))
    assert round_net(NO_NIU, NIU_NIU, no_commission, "double", 100) == 300  # type: ignore[arg-type]
    ten = get_profile("trainer").replace(commission_rate=Decimal("0.1"))
    assert round_net(NO_NIU, NIU_NIU, ten, "double", 100) == 270  # type: ignore[arg-type]


def test_super_table() -> None:
    """RULES.md: "super" tables where Niu n pays n x and Niu Niu 10x."""
    table = get_table("super")
    assert [table.multiple(NiuScore.for_points(n)) for n in range(1, 10)] == list(range(1, 10))
    assert table.multiple(NiuScore.NIU_NIU) == 10
    assert table.multiple(NiuScore.NO_NIU) == 1


def test_classic_settles_even_money_without_commission() -> None:
    """Seed 000 names no payouts: the classic profile's bets are 1:1 (equal) and the
    ``standard`` table (double), no commission — a documented product choice."""
    assert round_net(NO_NIU, NIU_NIU, "classic", "equal", 100) == 100
    assert round_net(NO_NIU, NIU_NIU, "classic", "double", 100) == 300


def test_exact_amounts() -> None:
    """Amounts are exact decimals: 5% of a 0.1 stake is 0.005, not a float near it."""
    assert round_net(NO_NIU, NIU_NIU, "trainer", "equal", "0.1") == Decimal("0.095")
    assert round_net(NO_NIU, NIU_NIU, "trainer", "equal", 0.1) == Decimal("0.095")
    assert round_net(NO_NIU, NIU_NIU, "trainer", "equal", Decimal("2.5")) == Decimal("2.375")


@pytest.mark.parametrize("stake", ["0", "-5", "abc", "", "nan", 0, -1])
def test_bad_stakes(stake: object) -> None:
    with pytest.raises(RulesError, match="stake must be a positive number"):
        parse_stake(stake)  # type: ignore[arg-type]


@pytest.mark.parametrize("stake", ["1_000", "1,000", "1 000", "1\u202f000", "1'000"])
def test_a_stake_with_thousands_separators_is_named_so(stake: str) -> None:
    # Decimal itself reads "1_000" as 1000: the separator is refused all the same
    with pytest.raises(RulesError, match="stake must be a number without thousands separators"):
        parse_stake(stake)


@pytest.mark.parametrize("stake", ["1e308", "99999999999999999999999999999999", 10**16])
def test_a_stake_over_the_largest_amount_is_named_so(stake: object) -> None:
    with pytest.raises(RulesError, match=r"is over the largest amount, 1,000,000,000,000,000"):
        parse_stake(stake)  # type: ignore[arg-type]


@pytest.mark.parametrize("stake", ["1e-400", "0.0000000001"])
def test_a_stake_written_too_finely_is_named_so(stake: str) -> None:
    # 1e-400 would be answered as a stake of 0 in JSON
    with pytest.raises(RulesError, match=r"is written too finely: at most 9 decimal places"):
        parse_stake(stake)


def test_round_checks_cards_across_hands() -> None:
    """One deck: no card may appear in two hands of the round; several decks allow it."""
    with pytest.raises(HandError, match="duplicate card KS"):
        play_round(NIU_NIU, ["KS 2D 3C 4H 6C"], "trainer")
    two_decks = get_profile("trainer").replace(decks=2)
    assert play_round(NIU_NIU, [NIU_NIU], two_decks).players[0].settlement.net == 0


def test_round_with_several_players_and_unknown_bet() -> None:
    result = play_round(NIU_8, [NIU_NIU, NO_NIU], "trainer", BetType.DOUBLE, 10)
    assert [p.settlement.net for p in result.players] == [Decimal("28.5"), -20]
    with pytest.raises(RulesError, match="'triple'"):
        play_round(NIU_8, [NIU_NIU], "trainer", "triple", 10)
    with pytest.raises(RulesError, match="at least one player"):
        play_round(NIU_8, [], "trainer")


def test_settle_defaults_to_the_profiles_bet_and_a_stake_of_one() -> None:
    banker, player = evaluate_hand(NO_NIU, "trainer"), evaluate_hand(NIU_NIU, "trainer")
    settlement = settle(banker, player)
    assert (settlement.bet, settlement.stake, settlement.net) == (
        BetType.EQUAL,
        Decimal(1),
        Decimal("0.95"),
    )
