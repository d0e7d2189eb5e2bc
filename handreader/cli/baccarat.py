"""``handreader baccarat``: read a baccarat coup (two or three cards a side) and settle bets.

Examples::

    handreader baccarat --player "9H 5C 3D" --banker "KD 6S"
    handreader baccarat --player "4H 3C" --banker "8D KS" --bet banker --stake 100 --json

The output gives each side's cards, total, natural and whether it must draw now, the result once
the coup is over, and the net amount of the bet (all three bets when ``--bet`` is not given). A
third card drawn against the tableau is an error (exit status 2) naming the breach.
"""

from __future__ import annotations

import argparse
import json
from decimal import Decimal

from handreader.cli._amounts import amount as _amount
from handreader.cli._amounts import money as _money
from handreader.cli._amounts import rate as _rate
from rules.baccarat import (
    BaccaratBet,
    BaccaratRules,
    evaluate_coup,
    settle_baccarat_bet,
)
from rules.cards import parse_cards


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``baccarat`` subcommand."""
    parser = subparsers.add_parser(
        "baccarat",
        help="totals, draws, result and payouts of a baccarat coup",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument("--player", required=True, help='Player cards, e.g. "9H 5C [3D]"')
    parser.add_argument("--banker", required=True, help='Banker cards, e.g. "KD 6S [2C]"')
    parser.add_argument(
        "--bet", choices=[bet.value for bet in BaccaratBet], help="settle only this bet"
    )
    parser.add_argument("--stake", type=_amount, default=Decimal(1), help="stake (default 1)")
    parser.add_argument(
        "--commission", type=_rate, default=Decimal("0.05"), help="Banker commission (0.05)"
    )
    parser.add_argument("--tie-pays", type=_amount, default=Decimal(8), help="Tie payout (8)")
    parser.add_argument(
        "--tie-loses",
        action="store_true",
        help="Player and Banker bets lose on a tie (default: they push)",
    )
    parser.add_argument("--decks", type=int, default=8, help="decks in the shoe (default 8)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Read the coup, raise IllegalPlayError on a breach of the tableau, print the report."""
    rules = BaccaratRules(
        banker_commission=args.commission,
        tie_pays=args.tie_pays,
        push_on_tie=not args.tie_loses,
        decks=args.decks,
    )
    coup = evaluate_coup(parse_cards(args.player), parse_cards(args.banker), rules)
    coup.verify()
    bets = [BaccaratBet(args.bet)] if args.bet else list(BaccaratBet)
    settlements = (
        [settle_baccarat_bet(coup, bet, args.stake, rules) for bet in bets] if coup.complete else []
    )
    if args.json:
        report = coup.to_dict() | {"bets": [settlement.to_dict() for settlement in settlements]}
        print(json.dumps(report))
        return 0
    for name, cards, total, natural, must_draw in (
        ("player", coup.player, coup.player_total, coup.player_natural, coup.player_must_draw),
        ("banker", coup.banker, coup.banker_total, coup.banker_natural, coup.banker_must_draw),
    ):
        notes = ("  natural" if natural else "") + ("  must draw" if must_draw else "")
        print(f"{name}: {' '.join(str(card) for card in cards):<10} total {total}{notes}")
    if coup.result is None:
        print("result: not over yet")
        return 0
    print(f"result: {coup.result.value}")
    for settlement in settlements:
        print(
            f"bet {settlement.bet.value} {settlement.stake.normalize():f}: "
            f"{settlement.outcome.value} {_money(settlement.net)}"
        )
    return 0
