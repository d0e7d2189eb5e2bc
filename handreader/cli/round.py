"""``handreader round``: a Niu Niu banker round: every player against the banker, settled.

Usage::

    handreader round --banker "C C C C C" --player "C C C C C" [--player ...]
                     [--profile P] [--bet equal|double] [--stake N] [--decks N] [--json]

With ``--json`` one object is printed per player, one per line::

    {"seat": 1, <hand keys as in ``score --json``>, "outcome": "win" | "lose" | "tie",
     "net": 285, "multiple": 3, "commission": 15, "profile": "trainer", "bet": "double",
     "stake": 100, "banker_score": "no_niu"}

(:func:`round_to_json` gives the whole round as one object, for the API.)

``net`` is the player's gain (negative for a loss, 0 for a push) after commission; amounts
are exact: in text as they are, signed and without trailing zeros or exponent (``+0.95``,
``+949999999999999.05``); in JSON as an integer when whole, else the nearest float (JSON's
numbers, as the API's). Without ``--json`` one line per hand.
"""

from __future__ import annotations

import argparse
import json
from decimal import Decimal
from typing import Any

from handreader.cli._amounts import Amount, money, packs
from handreader.cli.score import format_hand, hand_to_json
from rules.cards import parse_cards
from rules.errors import RulesError
from rules.money import json_amount
from rules.niuniu import evaluate_hand
from rules.niuniu_profiles import DEFAULT_PROFILE, NIU_PROFILES, BetType, get_profile
from rules.settlement import RoundResult, parse_stake, play_round

__all__ = ["register", "round_to_json", "run"]


def register(subparsers: Any) -> None:
    """Add the ``round`` command to the CLI."""
    parser = subparsers.add_parser(
        "round",
        help="settle a Niu Niu round: each player hand against the banker",
        description="Compare each player's five cards with the banker's and settle the bets.",
    )
    parser.add_argument("--banker", required=True, metavar="CARDS", help='e.g. "3H 7S KD 8C 6D"')
    parser.add_argument(
        "--player",
        action="append",
        required=True,
        metavar="CARDS",
        help="a player's five cards; repeat for each player",
    )
    parser.add_argument(
        "--profile",
        choices=sorted(NIU_PROFILES),
        default=DEFAULT_PROFILE,
        help=f"house rules (default: {DEFAULT_PROFILE})",
    )
    parser.add_argument(
        "--bet",
        choices=[bet.value for bet in BetType],
        default=None,
        help="bet type (default: the profile's default bet)",
    )
    parser.add_argument(
        "--stake", action=Amount, default=Decimal(1), metavar="N", help="amount bet (default: 1)"
    )
    parser.add_argument(
        "--decks",
        type=packs,
        metavar="N",
        help="52-card decks the round is dealt from: a card may appear that many times "
        "(default: the profile's)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object per player")
    parser.set_defaults(func=run)


def round_to_json(result: RoundResult) -> dict[str, Any]:
    """The JSON object of a settled round (see the module docstring)."""
    first = result.players[0].settlement
    players = []
    for seat, player in enumerate(result.players, start=1):
        settlement = player.settlement
        players.append(
            {
                "seat": seat,
                **hand_to_json(player.hand),
                "outcome": settlement.outcome.value,
                "net": json_amount(settlement.net),
                "multiple": settlement.multiple,
                "commission": json_amount(settlement.commission),
            }
        )
    return {
        "profile": result.banker.profile.name,
        "bet": first.bet.value,
        "stake": json_amount(first.stake),
        "banker": hand_to_json(result.banker),
        "players": players,
    }


def run(args: argparse.Namespace) -> int:
    """Settle the round given on the command line and print it."""
    profile = get_profile(args.profile)
    if args.decks is not None:
        profile = profile.replace(decks=args.decks)
    hands = [("--banker", args.banker)] + [
        (f"--player {seat}", text) for seat, text in enumerate(args.player, start=1)
    ]
    for label, text in hands:  # name the faulty hand before checking the round as a whole
        try:
            evaluate_hand(parse_cards(text), profile)
        except RulesError as error:
            raise type(error)(f"{label} {text!r}: {error}") from None
    stake = parse_stake(args.stake)
    result = play_round(args.banker, args.player, profile, args.bet, stake)
    if args.json:  # one line per player, each carrying the round's common keys
        whole = round_to_json(result)
        common = {key: whole[key] for key in ("profile", "bet", "stake")}
        for player in whole["players"]:
            line = {**player, **common, "banker_score": whole["banker"]["score"]}
            print(json.dumps(line, ensure_ascii=False))
        return 0
    print(f"banker: {format_hand(result.banker)}")
    for seat, player in enumerate(result.players, start=1):
        settlement = player.settlement
        print(
            f"player {seat}: {format_hand(player.hand)} -> {settlement.outcome.value} "
            f"{money(settlement.net)}"
        )
    return 0
