"""``handreader pits``: is a Zheng Shangyou / Pits play legal on the table, and why not.

Output (``--json``): an object with ``kind`` (single, pair, triple, quad, sequence,
double_sequence, triple_sequence, quadruple_sequence, or null when the play is no combination),
``legal`` (bool), ``reason`` (null when legal), ``rank`` (the group's rank or the sequence's top
rank), ``natural``, ``one_suit``, ``length``, ``cards``, ``readings`` (every kind the cards
read as) and ``description`` (the combination in words). Without ``--json``: one line,
``legal: ...`` or ``illegal: ...``.

Exit status, the same with and without ``--json``: 0 when the play is legal, 1 when it is
illegal (including no combination at all; the reason is printed), 2 for bad input (unknown card
text, no card played, a card given twice, a table that is no combination).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from rules.cards import AnyCard, check_distinct, parse_cards
from rules.errors import HandError, IllegalPlayError
from rules.pits import (
    Combination,
    CombinationError,
    PitsKind,
    combination_readings,
    play_readings,
    verify_play,
)

_EPILOG = (
    "exit status: 0 legal play, 1 illegal play or no combination (the reason is printed), "
    "2 bad input (unknown card, duplicate card, table that is no combination)"
)


def register(subparsers: Any) -> None:
    """Add the ``pits`` subcommand to the CLI's subparsers."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "pits",
        help="check a Zheng Shangyou / Pits play against the table",
        description="Read the played cards as a Pits combination and check it beats the table.",
        epilog=_EPILOG,
    )
    parser.add_argument("--play", required=True, help='cards played, e.g. "7H 7S" or "5H 6H JB"')
    parser.add_argument(
        "--table", default="", help="cards on the table (omit or leave empty: the play leads)"
    )
    parser.add_argument(
        "--kind",
        choices=[kind.value for kind in PitsKind],
        help="read the play as this kind when its cards read several ways (5H JB JR)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def _report(
    cards: tuple[AnyCard, ...],
    combination: Combination | None,
    legal: bool,
    reason: str | None,
    readings: tuple[Combination, ...],
) -> dict[str, Any]:
    shown = combination.cards if combination is not None else cards
    return {
        "kind": combination.kind.value if combination is not None else None,
        "legal": legal,
        "reason": reason,
        "rank": combination.rank.symbol if combination is not None else None,
        "natural": combination.natural if combination is not None else None,
        "one_suit": combination.one_suit if combination is not None else None,
        "length": len(cards),
        "cards": [str(card) for card in shown],
        "readings": [reading.kind.value for reading in readings],
        "description": combination.describe() if combination is not None else None,
    }


def judge(play_text: str, table_text: str = "", kind_name: str | None = None) -> dict[str, Any]:
    """The report on playing ``play_text`` on ``table_text`` (see the module docstring).

    Raises CardError for unknown card text, HandError for no cards played or a card given twice
    (in the play or on the table), and ValueError when the table is no combination.
    """
    play = parse_cards(play_text)
    table = parse_cards(table_text)
    if not play:
        raise HandError("--play: no cards (a pass plays none: there is nothing to check)")
    check_distinct(play + table)
    if table:
        try:
            combination_readings(table)
        except CombinationError as error:
            raise ValueError(f"--table: {error}") from None
    kind = PitsKind(kind_name) if kind_name is not None else None
    try:
        readings = play_readings(play, kind=kind)
    except CombinationError as error:
        return _report(play, None, False, str(error), ())
    try:
        chosen = verify_play(play, table or None, kind=kind)
    except IllegalPlayError as error:
        targets = combination_readings(table)
        meeting = [option for option in readings for target in targets if option.meets(target)]
        return _report(play, (meeting or list(readings))[0], False, str(error), readings)
    return _report(play, chosen, True, None, readings)


def _line(report: dict[str, Any], leads: bool) -> str:
    if report["legal"]:
        verb = "leads on an empty table" if leads else "beats the table"
        return f"legal: {report['description']} {verb}"
    return f"illegal: {report['reason']}"


def run(args: argparse.Namespace) -> int:
    """Print the report; return 0 for a legal play, 1 for an illegal one."""
    report = judge(args.play, args.table, args.kind)
    if args.json:
        print(json.dumps(report))
    else:
        print(_line(report, not parse_cards(args.table)))
    return 0 if report["legal"] else 1
