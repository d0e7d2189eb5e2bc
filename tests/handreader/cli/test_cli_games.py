"""The ``baccarat``, ``blackjack`` and ``paigow`` subcommands, through ``handreader.cli.main``.

Only these three commands are registered (COMMANDS is patched), so the tests do not depend on
the other command modules. Expectations restate the library tests (RULES.md section 3) and the
CLI contract: ``--json`` prints one object per line; bad input is one line naming the token or
the count, exit status 2.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from handreader import cli


@pytest.fixture(autouse=True)
def only_game_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "COMMANDS", ("baccarat", "blackjack", "paigow"))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``handreader ARGV`` (argparse usage errors exit)."""
    try:
        status = cli.main(list(argv))
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else 1
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def json_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


# ---------------------------------------------------------------------------------------------
# baccarat


def test_baccarat_json_banker_natural(capsys: pytest.CaptureFixture[str]) -> None:
    """Banker natural 8 beats player 7; a Banker bet of 100 nets 95 (0.95:1)."""
    status, out, _ = run(
        capsys, "baccarat", "--player", "4H 3C", "--banker", "8D KS",
        "--bet", "banker", "--stake", "100", "--json",
    )  # fmt: skip
    assert status == 0
    (report,) = json_lines(out)
    assert report["result"] == "banker"
    assert report["banker"]["natural"] is True
    assert report["bets"] == [{"bet": "banker", "stake": 100, "outcome": "win", "net": 95}]


def test_baccarat_text_lists_all_bets(capsys: pytest.CaptureFixture[str]) -> None:
    """Without --bet the three bets are settled; a tie pushes Player/Banker, pays Tie 8:1."""
    status, out, _ = run(capsys, "baccarat", "--player", "9S KD", "--banker", "5C 4H")
    assert status == 0
    assert "result: tie" in out
    assert "bet player 1: push +0" in out
    assert "bet tie 1: win +8" in out


def test_baccarat_unfinished_coup_says_who_draws(capsys: pytest.CaptureFixture[str]) -> None:
    """Player 5 must draw; no result yet, no bets settled."""
    status, out, _ = run(capsys, "baccarat", "--player", "2S 3D", "--banker", "KC 7H", "--json")
    assert status == 0
    (report,) = json_lines(out)
    assert report["player"]["must_draw"] is True
    assert report["result"] is None and report["bets"] == []


def test_baccarat_options(capsys: pytest.CaptureFixture[str]) -> None:
    """--tie-loses and --commission change the payouts."""
    _, out, _ = run(
        capsys, "baccarat", "--player", "9S KD", "--banker", "5C 4H", "--bet", "player",
        "--tie-loses", "--json",
    )  # fmt: skip
    assert json_lines(out)[0]["bets"][0]["net"] == -1
    _, out, _ = run(
        capsys, "baccarat", "--player", "3S 3D", "--banker", "2C 3H 4S", "--bet", "banker",
        "--commission", "0", "--json",
    )  # fmt: skip
    assert json_lines(out)[0]["bets"][0]["net"] == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--player", "4H 1C", "--banker", "3D KS"], "unknown card '1C'"),
        (["--player", "4H 2C 5S 6S", "--banker", "3D KS"], "player needs 2 or 3 cards, got 4"),
        (["--player", "4H 2C", "--banker", "3D"], "banker needs 2 or 3 cards, got 1"),
        (["--player", "4H 2C AH", "--banker", "3D KS"], "player drew a third card (AH) on 6"),
        (["--player", "2H KC", "--banker", "JR KS"], "joker JR has no value in baccarat"),
        (
            ["--player", "2H KC", "--banker", "3D KS", "--stake", "0"],
            "error: --stake must be a positive number, got '0'",
        ),
        (
            ["--player", "2H KC", "--banker", "3D KS", "--stake", "1e20"],
            "--stake '1e20' is over the largest amount, 1,000,000,000,000,000",  # MAX_AMOUNT
        ),
        (["--player", "2H KC", "--banker", "3D KS", "--commission", "2"], "--commission"),
        (["--player", "2H KC", "--banker", "3D KS", "--bet", "dragon"], "--bet: invalid choice"),
    ],
)
def test_baccarat_bad_input(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    """Bad input: exit status 2 and a message naming the token, the count or the breach."""
    status, out, err = run(capsys, "baccarat", *argv)
    assert status == 2 and out == ""
    assert message in err


# ---------------------------------------------------------------------------------------------
# blackjack


def test_blackjack_json_one_line_per_player(capsys: pytest.CaptureFixture[str]) -> None:
    """Dealer hard 17 stands: blackjack +15, 18 wins +10, 17 pushes, bust loses (stake 10)."""
    status, out, _ = run(
        capsys, "blackjack", "--dealer", "KS 7H", "--player", "AS KD", "--player", "9C 9D",
        "--player", "AC 6C 10H", "--player", "KC 5D 9H", "--stake", "10", "--json",
    )  # fmt: skip
    assert status == 0
    lines = json_lines(out)
    assert [line["player"] for line in lines] == [1, 2, 3, 4]
    assert [line["outcome"] for line in lines] == ["blackjack", "win", "push", "lose"]
    assert [line["net"] for line in lines] == [15, 10, 0, -10]
    assert all(line["dealer"]["action"] == "stand" for line in lines)


def test_blackjack_hit_soft_17(capsys: pytest.CaptureFixture[str]) -> None:
    """With --hit-soft-17 the dealer's A 6 must hit, so the player's 17 is undecided."""
    _, out, _ = run(capsys, "blackjack", "--dealer", "AS 6H", "--player", "10C 7D", "--json")
    assert json_lines(out)[0]["outcome"] == "push"
    _, out, _ = run(
        capsys, "blackjack", "--dealer", "AS 6H", "--player", "10C 7D", "--hit-soft-17", "--json"
    )
    line = json_lines(out)[0]
    assert line["dealer"]["action"] == "hit" and line["outcome"] is None
    status, out, _ = run(
        capsys, "blackjack", "--dealer", "AS 6H", "--player", "10C 7D", "--hit-soft-17"
    )
    assert status == 0
    assert "dealer: AS 6H" in out and "hits" in out and "undecided" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--dealer", "KS 7H", "--player", "AS"], "player hand 1 needs at least 2 cards, got 1"),
        (["--dealer", "KS 7H", "--player", "AS KX"], "unknown card 'KX'"),
        (["--dealer", "KS 7H 2C", "--player", "AS 9D"], "dealer drew 2C on hard 17"),
        (["--dealer", "KS 7H", "--player", "AS JB"], "joker JB has no value in blackjack"),
        (["--dealer", "", "--player", "AS KD"], "--dealer holds no card"),
        (["--dealer", "KS 7H", "--player", "AS KD", "--player", " "], "--player 2 holds no card"),
    ],
)
def test_blackjack_bad_input(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    """Bad input: exit status 2 and a message naming the token, the count or the draw."""
    status, out, err = run(capsys, "blackjack", *argv)
    assert status == 2 and out == ""
    assert err.startswith("handreader blackjack: error: ")
    assert message in err


def test_a_dealer_who_busts_is_not_said_to_stand(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "blackjack", "--dealer", "KS 6H 8D", "--player", "10C 7D")
    assert status == 0
    assert out.splitlines()[0].split() == ["dealer:", "KS", "6H", "8D", "bust", "(24)"]


# ---------------------------------------------------------------------------------------------
# paigow


def test_paigow_house_way(capsys: pytest.CaptureFixture[str]) -> None:
    """Two pair aces (one the joker) and 9s split: aces high, 9s low (house way rule 8)."""
    status, out, _ = run(capsys, "paigow", "--cards", "AS KD 9C 9D 5H 3S JR", "--json")
    assert status == 0
    (report,) = json_lines(out)
    assert report["set_by"] == "house_way"
    assert report["player"]["high"]["description"] == "pair of aces"
    assert sorted(report["player"]["low"]["cards"]) == ["9C", "9D"]


@pytest.mark.parametrize(
    ("argv", "low", "title"),
    [
        # kings and 4s with an ace: Foxwoods splits (higher pair jacks or better); the
        # gold-star way's Atlantic City table keeps a low and a high pair with an ace
        ((), ["4C", "4H"], "Foxwoods"),
        (("--house-way", "foxwoods"), ["4C", "4H"], "Foxwoods"),
        (("--house-way", "gold-star"), ["8S", "AD"], "Gold Star School of Gaming"),
    ],
)
def test_paigow_house_way_option(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], low: list[str], title: str
) -> None:
    """--house-way picks the published way; the report names it (JSON and text)."""
    cards = ("--cards", "KS KD 4C 4H AD 3C 8S")
    status, out, _ = run(capsys, "paigow", *cards, *argv, "--json")
    assert status == 0
    (report,) = json_lines(out)
    assert report["house_way"] == (argv[1] if argv else "foxwoods")
    assert sorted(report["player"]["low"]["cards"]) == low
    status, out, _ = run(capsys, "paigow", *cards, *argv)
    assert status == 0 and f"player (house way, {title}):" in out


def test_paigow_given_setting_against_banker(capsys: pytest.CaptureFixture[str]) -> None:
    """Player 9s / A-K against the banker's house way (queens / 8-7): one each, a push."""
    status, out, _ = run(
        capsys, "paigow", "--high", "9C 9D 5H 3S 2C", "--low", "AS KD",
        "--banker", "QS QH 8D 7C 4S 3D 2H", "--stake", "100", "--json",
    )  # fmt: skip
    assert status == 0
    (report,) = json_lines(out)
    assert report["set_by"] == "given"
    assert (report["high"], report["low"], report["outcome"]) == ("banker", "player", "push")
    assert report["net"] == 0


def test_paigow_text_win(capsys: pytest.CaptureFixture[str]) -> None:
    """Player two pair and A-Q beat banker queens and J-10: win 100 less 5% = +95."""
    status, out, _ = run(
        capsys, "paigow", "--high", "KS KD 9C 9D 2S", "--low", "AS QD",
        "--banker", "QS QH 8D 7C 4S JH 10D", "--stake", "100",
    )  # fmt: skip
    assert status == 0
    assert "outcome: win +95" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--cards", "AS KD 9C 9D 5H 3S"], "expected 7 cards, got 6"),
        (["--cards", "AS KD 9C 9D 5H 3S ZZ"], "unknown card 'ZZ'"),
        (["--high", "9C 8D 5H 3S 2C", "--low", "AS AD"], "foul: the low hand AS AD"),
        (["--high", "9C 8D 5H 3S 2C"], "give --cards (7 cards), or both --high"),
        (["--cards", "AS KD 9C 9D 5H 3S 2C", "--high", "9C 8D 5H 3S 2C"], "not both"),
        (["--cards", "AS KD 9C 9D 5H 3S JR", "--banker", "AS 2C 3C 4C 5C 6C 7C"],
         "duplicate card AS"),
        (["--cards", "AS KD 9C 9D 5H 3S JR", "--banker", "JB 2C 3C 4C 5C 6C 7C"],
         "at most one joker"),
        (["--cards", "AS KD 9C 9D 5H 3S JR", "--house-way", "bellagio"],
         "argument --house-way: invalid choice: 'bellagio' (choose from 'foxwoods', 'gold-star')"),
    ],
)  # fmt: skip
def test_paigow_bad_input(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    """Bad input: exit status 2 and a message naming the token, the count or the foul."""
    status, out, err = run(capsys, "paigow", *argv)
    assert status == 2 and out == ""
    assert err.startswith("handreader paigow: error: ") and err.count("\n") == 1
    assert message in err
