"""The deck in play as the photo commands take it: ``--game NAME`` and ``--decks N``.

``--game`` names the game whose deck the photos show (``niuniu``: 52 cards, no jokers;
``pits``: 54; ``baccarat``, ``blackjack``: 52 a pack, 8 and 6 packs; ``paigow``: 53;
``pinochle``: 48, 9 to A twice) or ``any`` (no deck: each card read on its own);
``--decks N`` how many packs of it are shuffled together; ``--indices NAME`` the letters its
indices print (``vision.index_letters``: ``french``, ``german``, ``russian``, ``dutch``,
``english``). The reader then decodes each photo's
cards together (``vision.decoding``): no card the deck lacks, no card more often than it holds.
A command that scores a game reads with that game's deck unless told otherwise (``baccarat``
and ``blackjack`` count its packs with their own ``--decks``, the shoe's); ``read`` and ``eval``
read any card unless given a game.
"""

from __future__ import annotations

import argparse
from typing import Any

from handreader.cli._amounts import packs
from rules.decks import ANY_CARD, GAME_DECKS, Deck, deck_in_play
from vision.index_letters import INDEX_LETTERS

__all__ = ["add_deck_options", "deck_from_arguments"]


def add_deck_options(
    parser: Any, default: str, decks: bool = True, shown: str = "the photos show"
) -> None:
    """Add ``--game`` and, with ``decks``, ``--decks`` to a command's parser (a game command
    with its own ``--decks``, the shoe's, takes that one); ``default`` says, for the help,
    which deck the command reads with when neither is given, and ``shown`` what shows the cards
    (the photos; a camera or a video)."""
    parser.add_argument(
        "--game",
        type=str.lower,
        choices=[*sorted(GAME_DECKS), ANY_CARD],
        help=f"the game whose deck {shown}, or {ANY_CARD} (default: {default})",
    )
    if decks:
        parser.add_argument(
            "--decks",
            type=packs,
            metavar="N",
            help="packs of that deck in play (default: the game's)",
        )
    parser.add_argument(
        "--indices",
        type=str.lower,
        choices=sorted(INDEX_LETTERS),
        help="the letters the deck prints in its indices (french: R D V and aces 1; a V is "
        "then a jack, dutch: a queen; default: the letters every deck gives one rank)",
    )


def deck_from_arguments(args: argparse.Namespace, default: Deck | None = None) -> Deck | None:
    """The deck in play from ``--game`` and ``--decks``, the command's ``default`` when no game
    is named (DeckError, a ValueError, for a count below 1 or one with no deck)."""
    return deck_in_play(args.game, args.decks, default)
