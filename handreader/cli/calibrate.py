"""``handreader calibrate --name MYDECK PHOTO...`` and ``handreader decks``: the user's own deck.

Photos are either one card each — named by the file (``10C.jpg``, ``qs_1.png``, ``JR.jpg``) or,
when the names say nothing, taken in the documented order S, H, D, C from A to K, then JB, JR —
or, with ``--grid``, one photo of the whole deck laid out in 4 rows (S, H, D, C) of 13 cards
(A to K) seen from above. The command finds the indices, writes a contact sheet of what it
assigned (``--sheet``, default ``NAME-calibration.png``) and saves the profile in the deck store
(the user's data folder, or the shared database of ``HANDREADER_DATABASE_URL``). No training
runs: it takes seconds.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["register", "run", "run_decks"]


def register(subparsers: Any) -> None:
    """Add the ``calibrate`` and ``decks`` commands to the CLI."""
    parser = subparsers.add_parser(
        "calibrate",
        help="calibrate the reader to your own deck",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    parser.add_argument(
        "photos", nargs="+", type=Path, metavar="PHOTO", help="one photo per card, or the grid"
    )
    parser.add_argument("--name", required=True, help="the deck's name, used later as --deck NAME")
    parser.add_argument(
        "--grid", action="store_true", help="one photo of the whole deck in a 13 x 4 grid"
    )
    parser.add_argument("--sheet", type=Path, help="where to write the contact sheet")
    parser.add_argument(
        "--models", type=Path, metavar="DIR", help="model folder (default: shipped)"
    )
    parser.set_defaults(func=run)
    decks = subparsers.add_parser(
        "decks",
        help="list calibrated deck profiles",
        description="List the deck profiles made by handreader calibrate.",
    )
    decks.set_defaults(func=run_decks)


def run(args: argparse.Namespace) -> int:
    """Calibrate and save the profile; print where it went and what it holds."""
    from handreader.store.decks import open_deck_store
    from vision.calibrate_deck import calibrate
    from vision.calibration import check_deck_name
    from vision.imageio import write_image, writes_images
    from vision.reader import Reader

    check_deck_name(args.name)  # named before anything is read or saved, as the sheet is
    sheet = args.sheet or Path(f"{args.name}-calibration.png")
    if not writes_images(sheet):
        raise ValueError(f"--sheet {str(sheet)!r}: no image format for its extension (.png, .jpg)")
    if not sheet.parent.is_dir():
        raise ValueError(f"--sheet {str(sheet)!r}: no folder {str(sheet.parent)!r}")
    if sheet.is_dir():
        raise ValueError(f"--sheet {str(sheet)!r} is a folder: name an image file")
    reader = Reader.load(args.models)
    store = open_deck_store()
    # the deck is saved only once its contact sheet is written: a failed run keeps the old one
    result = calibrate(reader, args.name, args.photos, grid=args.grid, save=lambda _: "")
    if not write_image(sheet, result.sheet):
        raise ValueError(
            f"the contact sheet could not be written to {str(sheet)!r}: deck not saved"
        )
    path = store.put(result.profile)
    for warning in result.warnings:
        print(f"handreader calibrate: warning: {warning}", file=sys.stderr)
    print(
        f"deck {args.name!r}: {len(result.profile.prototypes)} cards, "
        f"{sum(len(v) for v in result.profile.prototypes.values())} corner samples; "
        f"saved {path}; contact sheet {sheet}"
    )
    return 0


def run_decks(args: argparse.Namespace) -> int:
    """Print one line per saved profile; exit 2 when a profile's file cannot be read."""
    from handreader.store.database import StoreError
    from handreader.store.decks import open_deck_store

    store = open_deck_store()
    names = store.names()
    if not names:
        print(f"no deck profiles under {store.location}")
    unreadable = 0
    for name in names:
        try:
            profile = store.get(name)
            print(f"{name}: {len(profile.prototypes)} cards, made {profile.created}")
        except ValueError as error:
            print(f"{name}: unusable ({error})")
            unreadable += isinstance(error, StoreError)  # (the store's fault, not the deck's)
    return 2 if unreadable else 0
