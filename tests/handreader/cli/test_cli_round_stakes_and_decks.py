"""``handreader round`` prints amounts exactly as the rules compute them (decimal, never a
float's rounding or exponent), names a stake written with thousands separators, and settles a
round dealt from several decks (``--decks``, as ``score`` and the API take it)."""

from __future__ import annotations

import pytest

from handreader.cli import main
from rules.errors import RulesError
from rules.settlement import parse_amount

NO_NIU = "AS 2D 4C 8H 9C"
NIU_NIU = "KS QS 5H 5D JD"


def main_round(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        status = main(["round", *argv])
    except SystemExit as usage:  # (a bad option's value: argparse's one line, exit 2)
        status = usage.code if isinstance(usage.code, int) else 1
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _round(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    return main_round(capsys, "--banker", NO_NIU, "--player", NIU_NIU, *argv)


@pytest.mark.parametrize(
    ("stake", "net"),
    [
        # seed 002: Niu Niu wins 1x an equal bet, 5 % commission: net 0.95 of the stake
        ("999999999999999", "+949999999999999.05"),  # a float would print ...999.0
        ("99999999999999.99", "+94999999999999.9905"),
        ("0.0000001", "+0.000000095"),  # a float would print 9.5e-08
        ("100", "+95"),
    ],
)
def test_the_net_is_printed_exactly_at_any_stake(
    capsys: pytest.CaptureFixture[str], stake: str, net: str
) -> None:
    status, out, _ = _round(capsys, "--bet", "equal", "--stake", stake)
    assert status == 0
    assert out.splitlines()[1].endswith(f"-> win {net}"), out


@pytest.mark.parametrize("stake", ["1,000", "1 000", "1'000", "1_000", "1\u202f000", "1\u00a0000"])
def test_a_stake_with_thousands_separators_is_named_as_such(
    capsys: pytest.CaptureFixture[str], stake: str
) -> None:
    status, out, err = _round(capsys, "--stake", stake)
    assert status == 2 and out == ""
    assert "without thousands separators" in err and repr(stake) in err, err
    assert err.rstrip().endswith("(see handreader round --help)")  # a bad option's value


def test_a_games_stake_with_thousands_separators_is_named_as_such(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["baccarat", "--player", "AS 3H", "--banker", "KD 6D", "--stake", "1,000"])
    assert exit_info.value.code == 2
    assert "without thousands separators" in capsys.readouterr().err


def test_a_round_dealt_from_two_decks_may_hold_a_card_twice(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Two decks hold two KS: the same five cards on both sides tie (equal hands, trainer)."""
    same = "KS QS JS 10S 9S"
    status, out, err = main_round(capsys, "--banker", same, "--player", same, "--decks", "2")
    assert status == 0, err
    assert out.splitlines()[1].endswith("-> tie +0")
    status, _, err = main_round(capsys, "--banker", same, "--player", same)  # one deck: refused
    assert status == 2 and "duplicate card" in err
    status, _, err = main_round(capsys, "--banker", same, "--player", same, "--decks", "17")
    assert status == 2 and "argument --decks: expected at most 16, got '17'" in err


AMOUNT_OPTIONS = [
    ("round", "--stake", ["--banker", NO_NIU, "--player", NIU_NIU]),
    ("baccarat", "--stake", ["--player", "AS 3H", "--banker", "KD 6D"]),
    ("baccarat", "--tie-pays", ["--player", "AS 3H", "--banker", "KD 6D"]),
    ("blackjack", "--stake", ["--dealer", "KS 7H", "--player", "AS KD"]),
    ("blackjack", "--blackjack-pays", ["--dealer", "KS 7H", "--player", "AS KD"]),
    ("paigow", "--stake", ["--cards", "AS KS QD 9H 9C 4D 2C"]),
]
"""Every amount option of the games' commands, with the cards each command needs."""


@pytest.mark.parametrize(("command", "option", "cards"), AMOUNT_OPTIONS)
@pytest.mark.parametrize("value", ["-1", "0", "abc", "inf", "1e20", "1e-400", "1,000"])
def test_an_amount_option_is_refused_in_the_words_of_the_rule_the_api_uses(
    capsys: pytest.CaptureFixture[str], command: str, option: str, cards: list[str], value: str
) -> None:
    """One rule for every amount (rules.settlement.parse_amount), named by the option: one
    line, ending as every bad option's value does, exit status 2."""
    with pytest.raises(RulesError) as refused:
        parse_amount(value, option)
    try:
        status = main([command, *cards, f"{option}={value}"])
    except SystemExit as usage:
        status = usage.code if isinstance(usage.code, int) else 1
    err = capsys.readouterr().err
    assert status == 2
    usage = f"(see handreader {command} --help)"
    assert err == f"handreader {command}: error: {refused.value} {usage}\n"
    assert err.startswith(f"handreader {command}: error: {option} "), err
