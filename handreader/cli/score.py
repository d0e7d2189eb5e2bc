"""``handreader score``: the Niu Niu score and split of five cards, or of each hand in photos.

Usage::

    handreader score CARD CARD CARD CARD CARD [--profile P] [--json]
    handreader score [--profile P] [--json] < hands.txt      # one hand per line
    handreader score PHOTO [PHOTO ...] [--profile P] [--deck NAME] [--game G] [--decks N]
                     [--json]                                  # read, score

With ``--json`` each hand prints one object on one line::

    {"cards": ["3H", ...], "split": {"bull": [3 cards], "rest": [2 cards]} | null,
     "score": "niu_4", "points": 4 | null, "label": "Niu 4", "rank": 4, "profile": "trainer"}

``rank`` is the score's place in the profile's order (0 = No Niu). In stdin mode a bad line is
reported on stderr with its line number, the other lines are still answered, and the exit
status is 2 at the end. Photos (and folders of them, as ``handreader read`` takes them) are
read with the models loaded once (an argument that reads as card codes and holds no path
separator is cards, even where a folder of that name exists: ``KD``; ``./KD`` is the folder;
one holding a separator is a path, and a missing one a file that cannot be read);
with more than one, each photo's lines follow a ``== PHOTO`` line (``--json`` lines carry
``"image"`` instead, a name that is no UTF-8 with its bytes as ``\\xNN``); a photo that
cannot be read gets an error (a JSON error line with ``--json``), the others are still scored,
and the exit status is 2. Photos are read with the Niu Niu deck in play (52 cards, no jokers,
the profile's number of decks; ``--decks N`` another number, ``--game any`` none:
``handreader.cli.in_play``). :func:`score_hand_text`, :func:`hand_to_json` and
:func:`format_hand` are shared with other commands (e.g. photo input).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from handreader.cli._usage import UsageError
from handreader.cli.in_play import add_deck_options
from handreader.tables.wording import counted
from rules.cards import parse_cards
from rules.decks import deck_in_play, niuniu_deck, niuniu_packs
from rules.errors import CardError
from rules.niuniu import NiuHand, evaluate_hand
from rules.niuniu_profiles import DEFAULT_PROFILE, NIU_PROFILES, NiuProfile, get_profile

if TYPE_CHECKING:
    from handreader.tables.scoring import TableOptions
    from vision.detections import Reading

__all__ = [
    "format_hand",
    "hand_to_json",
    "print_table",
    "register",
    "run",
    "score_hand_text",
    "score_lines",
    "score_photos",
]


def register(subparsers: Any) -> None:
    """Add the ``score`` command to the CLI."""
    parser = subparsers.add_parser(
        "score",
        help="score a Niu Niu hand, or read photos of a table and score each hand in them",
        description=(
            "Score five Niu Niu cards given as arguments (e.g. 3H 7S KD 8C 6D; T for 10, "
            "lower case and suit symbols accepted), or, with no cards, one hand per line of "
            "standard input; or read photos (and folders of them), group their cards into "
            "hands and score each hand, the banker's against the players'."
        ),
    )
    parser.add_argument(
        "cards",
        nargs="*",
        metavar="CARD|PHOTO",
        help="five cards (e.g. 3H 7S KD 8C 6D), or photos and folders of photos",
    )
    parser.add_argument(
        "--profile",
        choices=sorted(NIU_PROFILES),
        default=DEFAULT_PROFILE,
        help=f"house rules (default: {DEFAULT_PROFILE})",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object per hand")
    parser.add_argument(
        "--deck", help="a calibrated deck profile (handreader calibrate) for photos"
    )
    parser.add_argument("--models", type=Path, metavar="DIR", help="model folder for photos")
    add_deck_options(parser, default="niuniu, with the profile's decks")
    parser.set_defaults(func=run)


def score_hand_text(
    text: str | Sequence[str], profile: str | NiuProfile = DEFAULT_PROFILE
) -> NiuHand:
    """Score a hand written as text: one string (``"3H 7S KD 8C 6D"``) or a list of tokens.

    Raises CardError naming an unreadable token and HandError for a count other than five or a
    repeated card, both ValueErrors.
    """
    joined = text if isinstance(text, str) else " ".join(text)  # tokens may hold several cards
    return evaluate_hand(parse_cards(joined), profile)


def hand_to_json(hand: NiuHand) -> dict[str, Any]:
    """The JSON object of a scored hand (see the module docstring for its keys)."""
    split: dict[str, list[str]] | None = None
    if hand.split is not None:
        split = {
            "bull": [str(card) for card in hand.split.bull],
            "rest": [str(card) for card in hand.split.rest],
        }
        if hand.split.swapped:
            split["swapped"] = [str(card) for card in hand.split.swapped]
    return {
        "cards": [str(card) for card in hand.cards],
        "split": split,
        "score": hand.score.value,
        "points": hand.points,
        "label": hand.label,
        "rank": hand.tier,
        "profile": hand.profile.name,
    }


def format_hand(hand: NiuHand, as_json: bool = False) -> str:
    """One output line for a hand: a JSON object, or a readable line such as
    ``3H 7S KD 8C 6D: Niu 4 (KD 7S 3H | 8C 6D)``."""
    if as_json:
        return json.dumps(hand_to_json(hand), ensure_ascii=False)
    return str(hand)


def score_lines(
    lines: Iterable[str],
    profile: str | NiuProfile,
    as_json: bool,
    out: TextIO,
    errors: TextIO,
    command: str = "score",
) -> int:
    """Answer one line of ``out`` per hand line; report bad lines on ``errors``; 2 if any was bad.

    Blank lines and lines starting with ``#`` are skipped.
    """
    status = 0
    for number, line in enumerate(lines, start=1):
        text = line.strip().lstrip("\ufeff")  # a byte-order mark opens some saved files
        if not text or text.startswith("#"):
            continue
        try:
            hand = score_hand_text(text, profile)
        except ValueError as error:
            print(f"handreader {command}: error: line {number}: {error}", file=errors, flush=True)
            status = 2
            continue
        print(format_hand(hand, as_json), file=out, flush=True)
    return status


def _is_photo(token: str) -> bool:
    """True for a path to an image or a folder of them (an existing file or folder, a name
    with an image suffix, or any name holding a path separator, which no card code holds:
    a missing ``/tmp/photo`` is a file that cannot be read, not an unknown card), except card
    codes: a token that reads as cards and holds no path separator is cards even where a
    folder of that name exists (``KD``; ``./KD`` names the folder)."""
    from handreader.cli.photos import IMAGE_SUFFIXES

    if _names_a_path(token):
        return True
    if _is_card_text(token):
        return False
    path = Path(token)
    return (
        path.suffix.lower() in IMAGE_SUFFIXES
        or path.is_dir()
        or (path.is_file() and len(token) > 3)
    )


def _names_a_path(token: str) -> bool:
    """Whether ``token`` holds a path separator (no card code does)."""
    return any(separator in token for separator in (os.sep, os.altsep, "/") if separator)


def _is_card_text(token: str) -> bool:
    """True when ``token`` reads as card codes (``KD``, ``3H 7S``) and names no path: it holds
    no path separator (no card code has an image suffix either)."""
    if _names_a_path(token):
        return False
    try:
        return bool(parse_cards(token))
    except CardError:
        return False


def score_photos(
    photos: list[str],
    profile: str,
    deck: str | None,
    models: Path | None,
    as_json: bool,
    game: str | None = None,
    decks: int | None = None,
    indices: str | None = None,
) -> int:
    """Score each photo (a folder stands for its image files); 2 if any could not be read.

    The photos are read with the deck in play of ``game`` and ``decks``
    (``handreader.cli.in_play``), by default the profile's: Niu Niu has no jokers and as many
    52-card decks as the profile. One photo is printed as :func:`print_table` prints it; with
    several, each photo's lines follow a ``== PHOTO`` line (not with ``--json``: its lines
    carry the image)."""
    from handreader.cli.photos import read_photos
    from handreader.tables.scoring import TableOptions

    # a bad profile is named before any photo
    options = TableOptions.create(profile=profile, decks=niuniu_packs(game, decks))
    in_play = deck_in_play(game, decks, niuniu_deck(options.profile))
    return read_photos(
        "score",
        photos,
        deck,
        models,
        as_json,
        lambda photo, _image, reading: print_table(photo, reading, options, as_json),
        in_play=in_play,
        indices=indices,
    )


def print_table(photo: str, reading: Reading, options: TableOptions, as_json: bool) -> None:
    """Group a photo's reading into hands under ``options`` and print one line per hand."""
    from handreader.cli.photos import json_text
    from handreader.tables.scoring import NO_CARDS, flag_names, score_reading
    from vision.detections import ReadingFlag

    table = score_reading(reading, options)
    outcomes = {player.seat: player for player in table.players}
    # what the text prints under the hands, carried by every JSON line of the photo
    photo_wide = {
        "flags": flag_names(reading.flags),
        "left_over": [card.to_dict() for card in table.left_over],
    }
    if not table.hands:
        message = NO_CARDS if not reading.cards else "no hand found"
        print(
            json.dumps(
                {"image": json_text(photo), "hands": 0, "problem": message, **photo_wide},
                ensure_ascii=False,
            )
            if as_json
            else f"{photo}: {message}"
        )
        return
    for hand in table.hands:
        player = outcomes.get(hand.seat)
        if as_json:
            record: dict[str, Any] = {
                "image": json_text(photo),
                "seat": hand.seat,
                "role": hand.role.value,
                "status": hand.status.value,
                "problem": hand.problem,
            }
            if hand.hand is not None and hand.scored:
                record.update(hand_to_json(hand.hand))
            elif hand.hand is not None:  # unverified: the score is provisional, not a result
                record.update(
                    {
                        "cards": [card.code for card in hand.cards],
                        "split": None,
                        "score": None,
                        "points": None,
                        "provisional": hand_to_json(hand.hand),
                    }
                )
            else:
                record.update(
                    {
                        "cards": [card.code for card in hand.cards],
                        "split": None,
                        "score": None,
                        "points": None,
                    }
                )
            record["boxes"] = [card.to_dict()["box"] for card in hand.cards]
            record["readings"] = [card.to_dict() for card in hand.cards]
            if player is not None:
                record.update(
                    {k: v for k, v in player.to_dict().items() if k in ("outcome", "net")}
                )
            record.update(photo_wide)
            print(json.dumps(record, ensure_ascii=False))
        else:
            text = (
                format_hand(hand.hand)
                if hand.hand is not None and hand.scored
                else " ".join(card.shown for card in hand.cards)
            )
            extra = f" [{hand.status.value}: {hand.problem}]" if hand.problem else ""
            against = f" -> {player.outcome.value}" if player is not None and player.outcome else ""
            print(f"{hand.role.value} {hand.seat}: {text}{extra}{against}")
    if table.left_over and not as_json:
        cards = ", ".join(
            card.shown
            + (" (uncertain)" if card.uncertain else "")
            + (f" {card.confidence:.2f}" if card.confidence is not None else "")
            for card in table.left_over
        )
        print(f"left over (in no hand): {cards}")
    if ReadingFlag.COLOURLESS in reading.flags and not as_json:
        print(f"note: {COLOURLESS_NOTE}")


COLOURLESS_NOTE = "the photo has no colour: a card read in a black suit may be red (marked ?)"
"""What ``score`` says under a photo without colour (``ReadingFlag.COLOURLESS``)."""


def run(args: argparse.Namespace) -> int:
    """Score the cards of the command line, or every line of standard input when none."""
    photos = [token for token in args.cards if _is_photo(token)]
    if photos:
        if len(photos) != len(args.cards):
            cards = [token for token in args.cards if token not in photos]
            raise UsageError(
                f"give either cards or photos, not both: {' '.join(cards)!r} beside "
                f"{counted(len(photos), 'photo')}"
            )
        return score_photos(
            photos,
            args.profile,
            args.deck,
            args.models,
            args.json,
            args.game,
            args.decks,
            args.indices,
        )
    from handreader.cli.photos import refuse_photo_options

    refuse_photo_options(args)
    profile = get_profile(args.profile)
    if args.decks is not None:  # how many copies of a card the hand may hold
        profile = profile.replace(decks=args.decks)
    if not args.cards:
        return score_lines(sys.stdin, profile, args.json, sys.stdout, sys.stderr)
    hand = score_hand_text(args.cards, profile)
    print(format_hand(hand, args.json))
    return 0
