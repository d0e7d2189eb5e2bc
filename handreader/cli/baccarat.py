"""Read a baccarat coup (two or three cards a side) and settle the bets.

Examples::

    handreader baccarat --player "9H 5C 3D" --banker "KD 6S"
    handreader baccarat --player "4H 3C" --banker "8D KS" --bet banker --stake 100 --json
    handreader baccarat PHOTO [PHOTO ...] [--player-side left] [--deck NAME] [--json]

The output gives each side's cards, total, natural and whether it must draw now, the result once
the coup is over, and the net amount of the bet (all three bets when ``--bet`` is not given). A
third card drawn against the tableau is an error (exit status 2) naming the breach.

Photos are read with the shipped reader and laid out as the HTTP API lays them out
(:mod:`handreader.tables.games`): the Player's cards are the group nearest ``--player-side``
(or lie in ``--player-region``, the Banker's in ``--banker-region``). A photo prints the same
lines, or the groups found and the problem when they make no coup; with ``--json`` one line a
photo, ``{"image": PHOTO}`` and the API's photo answer. A photo that cannot be read is reported
(exit status 2) and the others are still read.
"""

from __future__ import annotations

import argparse
import json
from decimal import Decimal
from typing import TYPE_CHECKING

from handreader.cli._amounts import Amount, packs
from handreader.cli._amounts import money as _money
from handreader.cli._amounts import rate as _rate
from handreader.cli._usage import UsageError
from handreader.cli.photos import (
    add_layout_arguments,
    add_photo_arguments,
    print_game_photo,
    read_photos,
    refuse_photo_options,
)
from rules.baccarat import BaccaratBet, BaccaratRules
from rules.cards import parse_cards
from rules.decks import deck_for_game, deck_in_play

if TYPE_CHECKING:
    from handreader.tables.games import BaccaratReport


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``baccarat`` subcommand."""
    parser = subparsers.add_parser(
        "baccarat",
        help="totals, draws, result and payouts of a baccarat coup",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    add_photo_arguments(parser, "baccarat: the shoe's --decks packs of 52 cards")
    parser.add_argument("--player", help='Player cards, e.g. "9H 5C [3D]"')
    parser.add_argument("--banker", help='Banker cards, e.g. "KD 6S [2C]"')
    parser.add_argument(
        "--bet", choices=[bet.value for bet in BaccaratBet], help="settle only this bet"
    )
    parser.add_argument(
        "--stake", action=Amount, default=Decimal(1), metavar="N", help="stake (default 1)"
    )
    parser.add_argument(
        "--commission", type=_rate, default=Decimal("0.05"), help="Banker commission (0.05)"
    )
    parser.add_argument("--tie-pays", action=Amount, default=Decimal(8), help="Tie payout (8)")
    parser.add_argument(
        "--tie-loses",
        action="store_true",
        help="Player and Banker bets lose on a tie (default: they push)",
    )
    parser.add_argument(
        "--decks", type=packs, default=8, metavar="N", help="decks in the shoe (default 8)"
    )
    add_layout_arguments(parser, "Player", "left", ("Player", "Banker"))
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Read the coup (from the cards given, or from each photo) and print the report; a coup
    given as cards that breaks the tableau is an IllegalPlayError."""
    from handreader.tables.games import baccarat_photo, baccarat_report

    rules = BaccaratRules(
        banker_commission=args.commission,
        tie_pays=args.tie_pays,
        push_on_tie=not args.tie_loses,
        decks=args.decks,
    )
    bet = BaccaratBet(args.bet) if args.bet else None
    if args.photos:
        if args.player is not None or args.banker is not None:
            raise UsageError("give either --player and --banker or photos, not both")
        return read_photos(
            "baccarat",
            args.photos,
            args.deck,
            args.models,
            args.json,
            lambda photo, _image, reading: print_game_photo(
                photo,
                baccarat_photo(
                    reading,
                    rules,
                    args.stake,
                    bet,
                    player_side=args.player_side,
                    player_region=args.player_region,
                    banker_region=args.banker_region,
                ),
                args.json,
                _print_report,
            ),
            in_play=deck_in_play(args.game, None, deck_for_game("baccarat", args.decks)),
            indices=args.indices,
        )
    if args.player is None or args.banker is None:
        raise UsageError("give --player and --banker (the cards dealt), or photos")
    refuse_photo_options(args, "player_side", "player_region", "banker_region")
    player, banker = parse_cards(args.player), parse_cards(args.banker)
    report = baccarat_report(player, banker, rules, args.stake, bet)
    report.coup.verify()  # a breach of the tableau is an error here, even before the coup ends
    if args.json:
        print(json.dumps(report.to_dict()))
        return 0
    _print_report(report)
    return 0


def _print_report(report: BaccaratReport) -> None:
    """The coup's lines: each side, the result, each bet settled."""
    coup = report.coup
    for name, cards, total, natural, must_draw in (
        ("player", coup.player, coup.player_total, coup.player_natural, coup.player_must_draw),
        ("banker", coup.banker, coup.banker_total, coup.banker_natural, coup.banker_must_draw),
    ):
        notes = ("  natural" if natural else "") + ("  must draw" if must_draw else "")
        print(f"{name}: {' '.join(str(card) for card in cards):<10} total {total}{notes}")
    if coup.problem is not None:  # (a photo's cards; card codes that break the tableau are refused)
        print(f"result: none, the cards break the drawing rules: {coup.problem}")
        return
    if coup.result is None:
        print("result: not over yet")
        return
    print(f"result: {coup.result.value}")
    for settlement in report.bets:
        print(
            f"bet {settlement.bet.value} {settlement.stake.normalize():f}: "
            f"{settlement.outcome.value} {_money(settlement.net)}"
        )
