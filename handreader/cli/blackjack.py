"""Give the totals, the dealer's action and each player hand's outcome of a blackjack round.

Examples::

    handreader blackjack --dealer "KS 7H" --player "AS KD" --player "9C 9D"
    handreader blackjack --dealer "AS 6H" --player "10C 7D" --hit-soft-17 --stake 10 --json
    handreader blackjack PHOTO [PHOTO ...] [--dealer-side top] [--deck NAME] [--json]

The output gives the dealer's totals and required action (hit or stand), then each player hand's
totals, outcome (blackjack, win, push, lose; undecided while the dealer must draw) and net
amount. With ``--json`` each player hand is one JSON object per line, the dealer included.

Photos are read with the shipped reader and laid out as the HTTP API lays them out
(:mod:`handreader.tables.games`): the dealer's cards are the group nearest ``--dealer-side``
(or lie in ``--dealer-region``), every other group is a player hand in reading order (or one
``--player-region`` per hand, in seat order). A photo prints the same lines, or the groups found
and the problem when they make no round; with ``--json`` one line a photo, ``{"image": PHOTO}``
and the API's photo answer. A photo that cannot be read is reported (exit status 2) and the
others are still read.
"""

from __future__ import annotations

import argparse
import json
from decimal import Decimal

from handreader.cli._amounts import Amount, packs
from handreader.cli._amounts import money as _money
from handreader.cli._usage import UsageError
from handreader.cli.photos import (
    add_layout_arguments,
    add_photo_arguments,
    print_game_photo,
    read_photos,
    refuse_photo_options,
    region,
)
from rules.blackjack import BlackjackRound, BlackjackRules, play_blackjack_round
from rules.cards import parse_cards
from rules.decks import deck_for_game, deck_in_play


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``blackjack`` subcommand."""
    parser = subparsers.add_parser(
        "blackjack",
        help="dealer action and outcomes of a blackjack round",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    add_photo_arguments(parser, "blackjack: the shoe's --decks packs of 52 cards")
    parser.add_argument("--dealer", help='dealer cards, e.g. "KS 7H"')
    parser.add_argument(
        "--player",
        action="append",
        help='a player hand, e.g. "AS KD"; repeat for several hands',
    )
    parser.add_argument(
        "--stake", action=Amount, default=Decimal(1), metavar="N", help="stake (default 1)"
    )
    parser.add_argument("--hit-soft-17", action="store_true", help="the dealer hits soft 17")
    parser.add_argument(
        "--blackjack-pays", action=Amount, default=Decimal("1.5"), help="blackjack payout (1.5)"
    )
    parser.add_argument(
        "--decks", type=packs, default=6, metavar="N", help="decks in the shoe (default 6)"
    )
    add_layout_arguments(parser, "dealer", "top", ("dealer",))
    parser.add_argument(
        "--player-region",
        type=region,
        action="append",
        default=[],
        metavar="X1,Y1,X2,Y2",
        help="a player hand in a photo; repeat for each hand, in seat order",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Settle every player hand against the dealer (cards given, or each photo's) and print
    the round."""
    rules = BlackjackRules(
        dealer_hits_soft_17=args.hit_soft_17, blackjack_pays=args.blackjack_pays, decks=args.decks
    )
    if args.photos:
        if args.dealer is not None or args.player is not None:
            raise UsageError("give either --dealer and --player or photos, not both")
        from handreader.tables.games import blackjack_photo

        return read_photos(
            "blackjack",
            args.photos,
            args.deck,
            args.models,
            args.json,
            lambda photo, _image, reading: print_game_photo(
                photo,
                blackjack_photo(
                    reading,
                    rules,
                    args.stake,
                    dealer_side=args.dealer_side,
                    dealer_region=args.dealer_region,
                    player_regions=args.player_region,
                ),
                args.json,
                _print_round,
            ),
            in_play=deck_in_play(args.game, None, deck_for_game("blackjack", args.decks)),
            indices=args.indices,
        )
    if args.dealer is None or args.player is None:
        raise UsageError("give --dealer and --player (the cards dealt), or photos")
    refuse_photo_options(args, "dealer_side", "dealer_region", "player_region")
    dealer = parse_cards(args.dealer)
    players = [parse_cards(text) for text in args.player]
    if not dealer:
        raise UsageError("--dealer holds no card: give the dealer's cards")
    empty = [number for number, cards in enumerate(players, start=1) if not cards]
    if empty:
        raise UsageError(f"--player {empty[0]} holds no card: give each player's cards")
    round_ = play_blackjack_round(dealer, players, args.stake, rules)
    if args.json:
        dealer_report = round_.dealer.to_dict() | {"action": round_.action.value}
        for number, settlement in enumerate(round_.players, start=1):
            line = {"player": number, "dealer": dealer_report} | settlement.to_dict()
            print(json.dumps(line))
        return 0
    _print_round(round_)
    return 0


def _print_round(round_: BlackjackRound) -> None:
    """The dealer's line, then one line per player hand."""
    dealer_cards = " ".join(str(card) for card in round_.dealer.cards)
    action = "" if round_.dealer.bust else f"{round_.action.value}s"  # a bust says it all
    print(f"dealer: {dealer_cards:<14} {round_.dealer.description:<10} {action}".rstrip())
    for number, settlement in enumerate(round_.players, start=1):
        cards = " ".join(str(card) for card in settlement.hand.cards)
        if settlement.outcome is None or settlement.net is None:
            verdict = "undecided: the dealer must draw"
        else:
            verdict = f"{settlement.outcome.value} {_money(settlement.net)}"
        print(f"player {number}: {cards:<14} {settlement.hand.description:<10} {verdict}")
