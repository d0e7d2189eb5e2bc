"""``handreader score`` and ``handreader round``: output shapes, errors and stdin mode."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from handreader.cli import main
from handreader.cli.score import score_hand_text

SEED_000 = ["3H", "7S", "KD", "8C", "6D"]  # seed 000: bull 3 + 7 + K, rest 8 + 6: Niu 4
NIU_NIU = "KS QS 5H 5D JD"
NO_NIU = "AS 2D 4C 8H 9C"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        status = main(list(argv))
    except SystemExit as usage:  # (a bad option's value: argparse's one line, exit 2)
        status = usage.code if isinstance(usage.code, int) else 1
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# --- score ---------------------------------------------------------------------------------


def test_score_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    """{"cards", "split": {"bull", "rest"} | null, "score", "points"} on one line."""
    status, out, err = run_cli(capsys, "score", *SEED_000, "--json")
    assert status == 0 and err == ""
    assert out.count("\n") == 1
    answer = json.loads(out)
    assert answer["cards"] == SEED_000
    assert answer["split"] == {"bull": ["KD", "7S", "3H"], "rest": ["8C", "6D"]}
    assert (answer["score"], answer["points"]) == ("niu_4", 4)


def test_score_json_without_bull(capsys: pytest.CaptureFixture[str]) -> None:
    """No bull: split and points are null, score no_niu (RULES.md: 9 9 9 9 4 has no bull)."""
    status, out, _ = run_cli(capsys, "score", "9S", "9H", "9D", "9C", "4S", "--json")
    answer = json.loads(out)
    assert status == 0
    assert (answer["split"], answer["score"], answer["points"]) == (None, "no_niu", None)


@pytest.mark.parametrize(
    ("profile", "score"),
    [("classic", "niu_niu"), ("trainer", "ultimate"), ("app", "ultimate")],
)
def test_score_profile(capsys: pytest.CaptureFixture[str], profile: str, score: str) -> None:
    """Seed 000 has no Ultimate; seeds 002 and 003 rank five face cards above Niu Niu."""
    _, out, _ = run_cli(
        capsys, "score", "JH", "QH", "KH", "JS", "QS", "--profile", profile, "--json"
    )
    assert json.loads(out)["score"] == score
    assert json.loads(out)["points"] == 0


def test_score_readable_line(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "score", "3h", "7♠", "Kd", "8C", "6D")
    assert status == 0
    assert out == "3H 7S KD 8C 6D: Niu 4 (KD 7S 3H | 8C 6D)\n"


def test_score_accepts_one_quoted_argument(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli(capsys, "score", "3H 7S KD 8C 6D", "--json")
    assert json.loads(out)["score"] == "niu_4"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["3H", "7S", "KD", "8C", "ZZ"], "'ZZ'"),
        (["3H", "7S", "KD", "8C"], "5 cards, got 4"),
        (["3H", "7S", "KD", "8C", "6D", "2S"], "5 cards, got 6"),
        (["3H", "3H", "KD", "8C", "6D"], "duplicate card 3H"),
        (["3H", "7S", "KD", "8C", "JR"], "jokers"),
    ],
)
def test_score_bad_input(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    """A message naming the bad token or count, exit status 2, no traceback."""
    status, out, err = run_cli(capsys, "score", *argv)
    assert status == 2 and out == ""
    assert err.startswith("handreader score: error: ") and message in err
    assert "Traceback" not in err


def test_score_unknown_profile_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["score", *SEED_000, "--profile", "poker"])
    assert exit_info.value.code == 2
    assert "'poker'" in capsys.readouterr().err


def test_score_stdin_in_process(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No cards: one hand per line of stdin, one answer per hand; blank lines skipped."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"{' '.join(SEED_000)}\n\n{NIU_NIU}\n"))
    status, out, err = run_cli(capsys, "score", "--json")
    assert status == 0 and err == ""
    assert [json.loads(line)["score"] for line in out.splitlines()] == ["niu_4", "niu_niu"]


def test_score_stdin_subprocess_reports_bad_lines_and_goes_on() -> None:
    """Stdin mode: report the bad line with its number, answer the others, exit 2."""
    lines = [" ".join(SEED_000), "3H 7S KD 8C XX", NO_NIU, "3H 7S", NIU_NIU]
    done = subprocess.run(
        [sys.executable, "-m", "handreader.cli", "score", "--json"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["score"] for a in answers] == ["niu_4", "no_niu", "niu_niu"]
    errors = done.stderr.splitlines()
    assert len(errors) == 2
    assert "line 2" in errors[0] and "'XX'" in errors[0]
    assert "line 4" in errors[1] and "got 2" in errors[1]
    assert "Traceback" not in done.stderr


def test_score_hand_text_is_reusable() -> None:
    """Photo input will reuse score_hand_text: text or tokens in, a scored hand out."""
    assert score_hand_text("3H 7S KD 8C 6D", "classic").label == "Niu 4"
    assert score_hand_text(SEED_000, "classic").points == 4


# --- round ---------------------------------------------------------------------------------


def test_round_seed_002_double_bet_json(capsys: pytest.CaptureFixture[str]) -> None:
    """Seed 002: Double bet 100, Niu Niu beats No Niu: +285; the banker's side loses."""
    status, out, err = run_cli(
        capsys,
        "round",
        "--banker", NO_NIU,
        "--player", NIU_NIU,
        "--player", "9S 9H 2C KC 3C",
        "--profile", "trainer",
        "--bet", "double",
        "--stake", "100",
        "--json",
    )  # fmt: skip
    assert status == 0 and err == ""
    players = [json.loads(line) for line in out.splitlines()]  # one object per player
    assert all(p["banker_score"] == "no_niu" and p["bet"] == "double" for p in players)
    assert [p["seat"] for p in players] == [1, 2]
    assert [(p["outcome"], p["net"]) for p in players] == [("win", 285), ("win", 95)]
    assert players[0]["score"] == "niu_niu" and isinstance(players[0]["net"], int)


def test_round_seed_002_equal_bet(capsys: pytest.CaptureFixture[str]) -> None:
    """Seed 002: Equal bet 100: +95."""
    argv = ["round", "--banker", NO_NIU, "--player", NIU_NIU, "--profile", "trainer"]
    _, out, _ = run_cli(capsys, *argv, "--bet", "equal", "--stake", "100", "--json")
    assert [(p["outcome"], p["net"]) for p in map(json.loads, out.splitlines())] == [("win", 95)]


def test_round_loss_tie_and_fractional_stake(capsys: pytest.CaptureFixture[str]) -> None:
    """Seed 003 (app): a loss costs the stake, equal points push; amounts exact."""
    _, out, _ = run_cli(
        capsys,
        "round",
        "--banker", NIU_NIU,
        "--player", NO_NIU,
        "--player", "KH QH JH 5S 5C",
        "--profile", "app",
        "--stake", "2.5",
        "--json",
    )  # fmt: skip
    players = [json.loads(line) for line in out.splitlines()]
    assert [(p["outcome"], p["net"]) for p in players] == [("lose", -2.5), ("tie", 0)]


def test_round_readable(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "round", "--banker", NO_NIU, "--player", NIU_NIU)
    assert status == 0
    assert out.splitlines() == [
        "banker: AS 2D 4C 8H 9C: No Niu",
        "player 1: KS QS 5H 5D JD: Niu Niu (KS QS JD | 5H 5D) -> win +0.95",
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--banker", NO_NIU, "--player", "KS QS 5H 5D"], "--player 1 'KS QS 5H 5D': "),
        (["--banker", "AS 2D 4C 8H QQ", "--player", NIU_NIU], "--banker"),
        (
            ["--banker", NO_NIU, "--player", NIU_NIU, "--player", "KS 2S 3S 4S 6S"],
            "duplicate card KS",
        ),
        (["--banker", NO_NIU, "--player", NIU_NIU, "--stake", "-3"], "stake"),
        (
            ["--banker", NO_NIU, "--player", NIU_NIU, "--profile", "app", "--bet", "double"],
            "double",
        ),
    ],
)
def test_round_bad_input(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    """Bad input: a message naming the bad hand, card or count; exit status 2, no traceback."""
    status, out, err = run_cli(capsys, "round", *argv)
    assert status == 2 and out == ""
    assert err.startswith("handreader round: error: ") and message in err
    assert "Traceback" not in err


def test_round_needs_banker_and_player(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["round", "--banker", NO_NIU])
    assert exit_info.value.code == 2
    assert "--player" in capsys.readouterr().err
