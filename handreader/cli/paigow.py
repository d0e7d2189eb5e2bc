"""Set seven Pai Gow cards by the house way (or check a setting) and settle against the banker.

Examples::

    handreader paigow --cards "AS KD 9C 9D 5H 3S JR"
    handreader paigow --high "9C 9D 5H 3S 2C" --low "AS KD" --banker "QS QH 8D 7C 4S 3D 2H"
    handreader paigow --cards "KS KD 4C 4H AD 3C 8S" --house-way gold-star
    handreader paigow PHOTO [PHOTO ...] [--player-side bottom] [--deck NAME] [--json]

With ``--cards`` the player's seven cards are set by the house way; with ``--high`` and ``--low``
the given setting is checked (a foul, low outranking high, is an error, exit status 2). With
``--banker`` the banker's seven cards are set by the house way and the hands are settled: win
(less commission), push or lose. ``--house-way`` names the published way (default ``foxwoods``,
see docs/paigow-house-ways.md); an unknown name is an error. With ``--json`` the report is one
JSON object on one line; it names the house way used.

Photos are read with the shipped reader and laid out as the HTTP API lays them out
(:mod:`handreader.tables.games`): one group of seven is the player's, set by the house way;
two groups are the player's (nearest ``--player-side``, or in ``--player-region``) and the
banker's (or in ``--banker-region``), both set by the house way and settled. A photo prints the
same lines, or the groups found and the problem when they make no hand; with ``--json`` one
line a photo, ``{"image": PHOTO}`` and the API's photo answer. A photo that cannot be read is
reported (exit status 2) and the others are still read.
"""

from __future__ import annotations

import argparse
import json
from decimal import Decimal
from typing import TYPE_CHECKING

from handreader.cli._amounts import Amount
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
from rules.cards import parse_cards
from rules.decks import deck_for_game, deck_in_play
from rules.errors import HandError
from rules.paigow import PaiGowRules, PaiGowSetting, house_way, set_paigow_hand
from rules.paigow_ways import DEFAULT_HOUSE_WAY, HOUSE_WAYS, get_house_way
from rules.poker_hands import PokerHand, WheelRank

if TYPE_CHECKING:
    from handreader.tables.games import PaiGowReport


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``paigow`` subcommand."""
    parser = subparsers.add_parser(
        "paigow",
        help="Pai Gow Poker: house way, setting check, settling",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    add_photo_arguments(parser, "paigow: 52 cards and a joker")
    parser.add_argument("--cards", help="the player's 7 cards, set by the house way")
    parser.add_argument("--high", help="a given 5-card high hand (with --low)")
    parser.add_argument("--low", help="a given 2-card low hand (with --high)")
    parser.add_argument("--banker", help="the banker's 7 cards, set by the house way")
    parser.add_argument(
        "--stake", action=Amount, default=Decimal(1), metavar="N", help="stake (default 1)"
    )
    parser.add_argument(
        "--commission", type=_rate, default=Decimal("0.05"), help="commission on wins (0.05)"
    )
    parser.add_argument(
        "--wheel",
        choices=[wheel.value for wheel in WheelRank],
        default=WheelRank.SECOND_HIGHEST.value,
        help="where A-2-3-4-5 ranks among straights (default second-highest)",
    )
    parser.add_argument(
        "--house-way",
        choices=list(HOUSE_WAYS),
        default=DEFAULT_HOUSE_WAY,
        metavar="NAME",
        help=f"the published house way: {', '.join(HOUSE_WAYS)} (default {DEFAULT_HOUSE_WAY})",
    )
    add_layout_arguments(parser, "player", "bottom", ("player", "banker"))
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.set_defaults(func=run)


def _player_setting(args: argparse.Namespace, rules: PaiGowRules) -> tuple[PaiGowSetting, str]:
    """The player's setting and how it was made: ``house_way`` or ``given``."""
    given = args.high is not None or args.low is not None
    if args.cards is not None and given:
        raise HandError("give either --cards or --high with --low, not both")
    if args.cards is not None:
        return house_way(parse_cards(args.cards), rules), "house_way"
    if args.high is None or args.low is None:
        raise HandError("give --cards (7 cards), or both --high (5 cards) and --low (2 cards)")
    return set_paigow_hand(parse_cards(args.high), parse_cards(args.low), rules), "given"


def _hand_line(name: str, hand: PokerHand) -> str:
    cards = " ".join(str(card) for card in hand.cards)
    return f"{name}: {cards:<16} {hand.description}"


def run(args: argparse.Namespace) -> int:
    """Set or check the player's hand, then settle it against the banker when given; or the
    same for each photo."""
    from handreader.tables.games import paigow_photo, paigow_report

    rules = PaiGowRules(WheelRank(args.wheel), args.commission, get_house_way(args.house_way))
    if args.photos:
        given = [args.cards, args.high, args.low, args.banker]
        if any(option is not None for option in given):
            raise UsageError("give either cards (--cards, --high, --low, --banker) or photos")
        return read_photos(
            "paigow",
            args.photos,
            args.deck,
            args.models,
            args.json,
            lambda photo, _image, reading: print_game_photo(
                photo,
                paigow_photo(
                    reading,
                    rules,
                    args.stake,
                    player_side=args.player_side,
                    player_region=args.player_region,
                    banker_region=args.banker_region,
                ),
                args.json,
                _print_report,
            ),
            in_play=deck_in_play(args.game, None, deck_for_game("paigow")),
            indices=args.indices,
        )
    refuse_photo_options(args, "player_side", "player_region", "banker_region")
    player, set_by = _player_setting(args, rules)
    banker = None if args.banker is None else parse_cards(args.banker)
    report = paigow_report(player, set_by, banker, rules, args.stake)
    if args.json:
        print(json.dumps(report.to_dict()))
        return 0
    _print_report(report)
    return 0


def _print_report(report: PaiGowReport) -> None:
    """The player's setting; with the banker's, both settings and the settlement."""
    way = report.rules.house_way
    how = "given" if report.set_by == "given" else f"house way, {way.title}"
    print(f"player ({how}):")
    print("  " + _hand_line("high", report.player.high))
    print("  " + _hand_line("low ", report.player.low))
    result = report.result
    if result is not None:
        print(f"banker (house way, {way.title}):")
        print("  " + _hand_line("high", result.banker.high))
        print("  " + _hand_line("low ", result.banker.low))
        high = "player" if result.high_won else "banker"
        low = "player" if result.low_won else "banker"
        print(f"high: {high}  low: {low}  outcome: {result.outcome.value} {_money(result.net)}")
