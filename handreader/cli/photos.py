"""The photos a command is given, as ``handreader read``, ``score`` and the games take them.

A folder stands for the image files directly inside it (by their extensions, or their first
bytes when they have none, sorted by name; a HEIC or AVIF photo is picked too, to be refused
in a line that says what to do); a photo that cannot be read, or a folder with none, gets one
error (a JSON line or a message on standard error) and the command goes on with the others
(:func:`read_photos`). A game read from a photo prints as :func:`print_game_photo` says.
Light to import: the image decoding and the models are imported only when a photo is read.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from handreader.cli._usage import UsageError
from handreader.cli.in_play import add_deck_options
from vision.file_names import name_text, quoted_name

if TYPE_CHECKING:
    from handreader.tables.games import GamePhoto, PhotoHand
    from handreader.tables.grouping import Region
    from rules.decks import Deck
    from vision.detections import CardReading, Reading
    from vision.imageio import ImageError, ReducedImage

__all__ = [
    "IMAGE_SUFFIXES",
    "REFUSED_PHOTO_SUFFIXES",
    "ReaderFailedError",
    "add_photo_arguments",
    "expand_photos",
    "json_text",
    "open_photo",
    "print_game_photo",
    "read_photos",
    "refuse_photo_options",
    "region",
    "report_unreadable",
]

IMAGE_SUFFIXES = frozenset(
    {".jpg", ".jpeg", ".jpe", ".jfif", ".jfi", ".jif", ".png", ".webp", ".bmp", ".gif", ".tif"}
    | {".tiff"}
)
"""The file extensions a folder's photos are picked by (any case; ``.jfif`` is JPEG)."""

REFUSED_PHOTO_SUFFIXES = frozenset({".heic", ".heif", ".avif", ".jxl"})
"""Photo types a folder's files are picked by too, though they are not read: each gets its own
error line naming its type and what to do (export as JPEG), rather than passing unseen."""


def _folder_photo(path: Path) -> bool:
    """Whether a file in a folder is one of its photos: by its extension, or, without one, by
    its first bytes (a photo saved without an extension)."""
    suffix = path.suffix.lower()
    if suffix in IMAGE_SUFFIXES or suffix in REFUSED_PHOTO_SUFFIXES:
        return True
    if suffix:
        return False
    from vision.imageheader import looks_like_image

    try:
        with path.open("rb") as stream:
            return looks_like_image(stream.read(12))
    except OSError:
        return False


def expand_photos(photos: list[str]) -> list[str]:
    """The photos to read: each argument as given, except a folder, which stands for the image
    files directly inside it (sorted by name; by :data:`IMAGE_SUFFIXES`, the refused photo
    types of :data:`REFUSED_PHOTO_SUFFIXES`, and files without an extension that begin as an
    image; a folder with none stays, for :func:`open_photo` to refuse)."""
    expanded: list[str] = []
    for photo in photos:
        folder = Path(photo)
        if not folder.is_dir():
            expanded.append(photo)
            continue
        inside = sorted(
            path.name for path in folder.iterdir() if path.is_file() and _folder_photo(path)
        )
        if inside:
            expanded.extend(str(folder / name) for name in inside)
        else:
            expanded.append(photo)
    return expanded


def json_text(text: str) -> str:
    """``text`` (a photo's name, or a message naming one) as a JSON line carries it: itself when
    it is all text, else with each byte of a file name that is no UTF-8 written ``\\xNN``
    (``h\\xe9\\xff.jpg``), so that the line stays valid UTF-8 whatever the file system's names.
    """
    return name_text(text)  # the rule every message naming a file follows (vision.file_names)


def open_photo(photo: str) -> ReducedImage:
    """The photo decoded as the commands read it (:func:`vision.imageio.load_reduced`: a large
    JPEG at the size the reader works at); ImageError when it cannot be, NoImagesError for a
    folder (one :func:`expand_photos` left: it holds no image file). The decoders' own
    complaints (``libpng error: ...``) are kept off the terminal: the error names the photo."""
    from handreader.cli.video_source import quiet_stderr
    from vision.imageio import NoImagesError, load_reduced

    if Path(photo).is_dir():
        kinds = ", ".join(sorted(IMAGE_SUFFIXES))
        raise NoImagesError(f"{quoted_name(photo)}: no image file ({kinds}) in this folder")
    with quiet_stderr():
        return load_reduced(photo)


class ReaderFailedError(RuntimeError):
    """The recognizer failed on one photo with an error it does not expect; the message names
    the photo and the error's first line."""

    code = "recognizer_failed"


def report_unreadable(
    command: str, photo: str, error: ImageError | ReaderFailedError, as_json: bool
) -> None:
    """A photo that could not be read: ``{"image": ..., "error": {"code", "message"}}`` on
    standard output with ``as_json``, else ``handreader COMMAND: error: ...`` on stderr."""
    if as_json:
        fields = {"code": getattr(error, "code", "unreadable"), "message": json_text(str(error))}
        print(json.dumps({"image": json_text(photo), "error": fields}), flush=True)
    else:
        print(f"handreader {command}: error: {error}", file=sys.stderr, flush=True)


def read_photos(
    command: str,
    photos: list[str],
    deck: str | None,
    models: Path | None,
    as_json: bool,
    answer: Callable[[str, ReducedImage, Reading], None],
    *,
    headers: bool = True,
    in_play: Deck | None = None,
    indices: str | None = None,
) -> int:
    """Read every photo (:func:`expand_photos`) with the shipped reader, loaded once (from
    ``models`` when given), with the deck profile ``deck`` names and the deck in play
    ``in_play`` and the index letters ``indices`` (``handreader.cli.in_play``), and hand each
    photo, its decoded image and its reading (boxes in the photo's own pixels) to ``answer``.
    A deck calibrated with other models is read with, after a warning line
    (``handreader.cli.deck_models``).
    With ``headers`` and several photos, each photo's answer follows a ``== PHOTO`` line (not with
    ``as_json``). A photo that cannot be decoded, or that the reader fails on unexpectedly, is
    reported in one line naming it (:func:`report_unreadable`; for the latter the JSON code
    ``recognizer_failed``) and skipped; returns 2 if any was, else 0."""
    from handreader.cli.deck_models import warn_other_models
    from handreader.store.decks import load_deck
    from vision.imageio import ImageError
    from vision.reader import Reader
    from vision.settings import ReaderSettings

    deck_profile = load_deck(deck) if deck is not None else None  # named before the models load
    reader = Reader.load(models, ReaderSettings(in_play=in_play, indices=indices))
    warn_other_models(command, deck_profile, getattr(reader, "manifest", None))
    expanded = expand_photos(photos)
    status = 0
    for photo in expanded:
        if headers and len(expanded) > 1 and not as_json:
            print(f"== {photo}", flush=True)
        try:
            image = open_photo(photo)
        except ImageError as error:
            status = 2
            report_unreadable(command, photo, error, as_json)
            continue
        try:
            reading = image.to_original(reader.read(image.image, deck_profile))
        except Exception as error:  # one photo's failure must not end a folder's run
            status = 2
            first = (str(error).strip().splitlines() or [""])[0]
            failure = ReaderFailedError(
                f"{quoted_name(photo)}: the reader failed: {type(error).__name__}: {first}"
            )
            report_unreadable(command, photo, failure, as_json)
            continue
        answer(photo, image, reading)
    return status


def add_photo_arguments(parser: argparse.ArgumentParser, game: str) -> None:
    """The photo arguments of a command that also reads photos: ``PHOTO ...``, ``--deck``,
    ``--models`` and ``--game`` (default: ``game``'s deck; the command's own ``--decks``, if
    any, counts its packs: ``handreader.cli.in_play``)."""
    parser.add_argument(
        "photos", nargs="*", metavar="PHOTO", help="photos (or folders of them) to read"
    )
    parser.add_argument("--deck", help="a calibrated deck profile (handreader calibrate)")
    parser.add_argument("--models", type=Path, metavar="DIR", help="model folder for photos")
    add_deck_options(parser, default=game, decks=False)


def refuse_photo_options(args: argparse.Namespace, *names: str) -> None:
    """ValueError naming the photo options given to a command run on card codes: ``--deck``,
    ``--game``, ``--indices``, ``--models`` and the command's own ``names`` (its regions, as
    attribute names of ``args``), which would otherwise pass unheeded."""
    given = [
        f"--{name.replace('_', '-')}"
        for name in ("deck", "game", "indices", "models", *names)
        if getattr(args, name, None) not in (None, []) and getattr(args, f"{name}_chosen", True)
    ]
    if given:
        verb = "reads" if len(given) == 1 else "read"
        raise UsageError(f"{', '.join(given)} {verb} photos: not with card codes")


EDGES = ("left", "right", "top", "bottom")
"""The edges a side of a game's photo may lie nearest."""


def add_layout_arguments(
    parser: argparse.ArgumentParser, side: str, default: str, regions: tuple[str, ...]
) -> None:
    """How a game's photo is laid out: ``--SIDE-side`` (the edge the ``side``'s cards lie
    nearest, ``default`` unless given) and ``--NAME-region X1,Y1,X2,Y2`` for each of ``regions``
    (the words name the hands in the help: ``Player``, ``dealer``)."""
    parser.add_argument(
        f"--{side.lower()}-side",
        choices=EDGES,
        default=default,
        action=_Chosen,
        help=f"in a photo, the {side}'s cards lie nearest this edge (default {default})",
    )
    parser.set_defaults(**{f"{side.lower()}_side_chosen": False})
    for name in regions:
        parser.add_argument(
            f"--{name.lower()}-region",
            type=region,
            metavar="X1,Y1,X2,Y2",
            help=f"the {name}'s cards in a photo",
        )


class _Chosen(argparse.Action):
    """Store the value and that it was given (``DEST_chosen``), so that an option with a default
    given to a command run on card codes is refused as a region is."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        setattr(namespace, f"{self.dest}_chosen", True)


def region(text: str) -> Region:
    """A region for argparse: ``X1,Y1,X2,Y2``, fractions of the photo when all lie in 0..1,
    else pixels."""
    from handreader.tables.grouping import Region

    try:
        return Region.parse([float(value) for value in text.split(",")])
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r}: {error}") from None


def _left_over_line(cards: tuple[CardReading, ...]) -> str:
    shown = ", ".join(
        card.code + ("? (uncertain)" if card.uncertain else "") + f" {card.confidence:.2f}"
        for card in cards
    )
    return f"left over (in no hand): {shown}"


def as_options(text: str) -> str:
    """A game's problem in the command line's words: the API's ``player_region`` (and the
    other regions) as the option ``--player-region``."""
    return re.sub(r"\b(player|banker|dealer)_region(s?)\b", r"--\1-region\2", text)


def hand_label(hand: PhotoHand, hands: Sequence[PhotoHand]) -> str:
    """A hand found in a photo as the command names it for card codes: a role one hand holds
    alone by its name (``player``, ``banker``, ``dealer``), a blackjack player by its number
    from 1 (``player 1``, ``player 2``, after the ``dealer``). Groups of cards given no role
    keep their seat (``hand 0``, ``hand 1``), as ``--json``'s ``seat`` and ``score`` number
    them."""
    if hand.role == "hand":
        return f"hand {hand.seat}"
    same = [other for other in hands if other.role == hand.role]
    several = hand.role == "player" and any(other.role == "dealer" for other in hands)
    if len(same) == 1 and not several:
        return hand.role
    return f"{hand.role} {next(n for n, other in enumerate(same, 1) if other is hand)}"


def print_game_photo(
    photo: str,
    game: GamePhoto[Any],
    as_json: bool,
    print_result: Callable[[Any], None],
) -> None:
    """A game read from a photo: with ``as_json`` one line, ``{"image": PHOTO}`` and the
    photo's JSON (as the HTTP API answers, its ``problem`` in the command line's words:
    :func:`as_options`); else the result as the command prints it for card
    codes (``print_result``), or the hands found when there is none, then the problem and the
    cards left over."""
    if as_json:
        record = {"image": json_text(photo)} | game.to_dict()
        if record.get("problem"):
            record["problem"] = as_options(record["problem"])
        print(json.dumps(record, ensure_ascii=False), flush=True)
        return
    if game.result is not None:
        print_result(game.result)
    else:
        for hand in game.hands:
            shown = " ".join(card.code + ("?" if card.uncertain else "") for card in hand.cards)
            print(f"{hand_label(hand, game.hands)}: {shown}")
    if game.problem:
        print(f"problem: {as_options(game.problem)}")
    if game.left_over:
        print(_left_over_line(game.left_over))
