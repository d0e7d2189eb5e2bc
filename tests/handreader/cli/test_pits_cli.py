"""``handreader pits``: JSON and text output, and the exit statuses documented in the command:
0 legal, 1 illegal or no combination, 2 bad input (message, no traceback)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from handreader.cli import main


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    status = main(["pits", *args, "--json"])
    output = capsys.readouterr()
    assert output.err == ""
    report: dict[str, Any] = json.loads(output.out)
    return status, report


# play, table, status, kind, legal, rank, reason (regular expression or None)
CASES = [
    ("7H 7S", "", 0, "pair", True, "7", None),
    ("9S", "7H", 0, "single", True, "9", None),
    ("7H", "9S", 1, "single", False, "7", "^7 does not beat 9$"),
    ("5H 5S", "6H 7H 8H", 1, "pair", False, "5", "^a pair cannot beat a sequence$"),
    ("5H 6S 7D", "4C 5D 6C 7S", 1, "sequence", False, "7", "3-card sequence cannot beat a 4"),
    ("3S 3H 4S 2H 5S 5H", "", 0, "double_sequence", True, "5", None),
    ("9H 9C 9D 9S", "5H 5C 5D 2S", 0, "quad", True, "9", None),
    ("5H 7H", "", 1, None, False, None, "not a pair"),
    ("AS 2H 3D", "4S 5S 6S", 1, None, False, None, "a 2 cannot be part of a single sequence"),
]


@pytest.mark.parametrize(("play", "table", "status", "kind", "legal", "rank", "reason"), CASES)
def test_json_report(
    capsys: pytest.CaptureFixture[str],
    play: str,
    table: str,
    status: int,
    kind: str | None,
    legal: bool,
    rank: str | None,
    reason: str | None,
) -> None:
    """Each row: the JSON keys and the exit status for a play on a table (empty: a lead)."""
    code, report = run_json(capsys, "--play", play, "--table", table)
    assert code == status
    assert (report["kind"], report["legal"], report["rank"]) == (kind, legal, rank)
    if reason is None:
        assert report["reason"] is None
    else:
        assert report["reason"] is not None
        assert re.search(reason, report["reason"])


def test_json_keys_and_readings(capsys: pytest.CaptureFixture[str]) -> None:
    """The report carries natural, one_suit, cards and every reading of ambiguous cards."""
    code, report = run_json(capsys, "--play", "5H JB JR")
    assert code == 0
    assert report["readings"] == ["triple", "sequence"]
    assert (report["kind"], report["natural"], report["one_suit"]) == ("triple", False, False)
    assert report["cards"] == ["5H", "JB", "JR"] and report["length"] == 3
    code, report = run_json(capsys, "--play", "5H JB JR", "--kind", "sequence")
    assert (code, report["kind"], report["rank"], report["one_suit"]) == (0, "sequence", "7", True)


def test_text_mode(capsys: pytest.CaptureFixture[str]) -> None:
    """Without --json one line; the exit status is the same as with --json."""
    assert main(["pits", "--play", "9S 9H", "--table", "7S 7H"]) == 0
    assert capsys.readouterr().out == "legal: pair of 9s beats the table\n"
    assert main(["pits", "--play", "7H"]) == 0
    assert capsys.readouterr().out == "legal: single 7 leads on an empty table\n"
    assert main(["pits", "--play", "7H", "--table", "9S"]) == 1
    assert capsys.readouterr().out == "illegal: 7 does not beat 9\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--play", "7H 1Z"], "unknown card '1Z'"),
        (["--play", "7H", "--table", "XX"], "unknown card 'XX'"),
        (["--play", "7H 7H"], "duplicate card 7H"),
        (["--play", "7H", "--table", "7H"], "duplicate card 7H"),
        (["--play", "3H 3D", "--table", "3H 3C"], "duplicate card 3H"),
        (["--play", " "], "--play: no cards"),
        (["--play", "7H", "--table", "5S 9D"], "--table: 5S 9D is no combination"),
    ],
)
def test_bad_input_exits_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    """Bad card text or a bad table: a one-line message naming the input, exit 2, no traceback."""
    assert main(["pits", *args, "--json"]) == 2
    output = capsys.readouterr()
    assert output.out == ""
    assert output.err.startswith("handreader pits: error: ") and message in output.err
    assert "Traceback" not in output.err


@pytest.mark.parametrize("option", ["--play", "--table"])
def test_two_triples_are_named_as_no_triple_sequence_too(
    capsys: pytest.CaptureFixture[str], option: str
) -> None:
    """A play or table of two triples gets a reason for every kind it could be taken for, the
    triple sequence among them (the product asks it 3 ranks: tests/rules/test_pits_combos.py)."""
    args = ["--play", "3H 3S 3D 4H 4S 4D"] if option == "--play" else ["--play", "7H"]
    if option == "--table":
        args += ["--table", "3H 3S 3D 4H 4S 4D"]
    main(["pits", *args])
    output = capsys.readouterr()
    said = output.out if option == "--play" else output.err
    assert "not a double sequence (3 cards of rank 3" in said
    assert "not a triple sequence (a triple sequence needs at least 3 ranks of 3 cards" in said
