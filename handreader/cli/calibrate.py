"""``handreader calibrate --name MYDECK PHOTO...`` and ``handreader decks``: the user's own deck.

Photos are either one card each — named by the file (``10C.jpg``, ``qs_1.png``, ``JR.jpg``) or,
when the names say nothing, taken in the documented order S, H, D, C from A to K, then JB, JR —
or, with ``--grid``, one photo of the whole deck laid out in 4 rows (S, H, D, C) of 13 cards
(A to K) seen from above. The command finds the indices, writes a contact sheet of what it
assigned (``--sheet``, default ``NAME-calibration.png``; never one of the photos) and saves the
profile in the deck store (the user's data folder, or the shared database of
``HANDREADER_DATABASE_URL``). A deck of that name is replaced when the new one keeps all its
cards (the line ``deck 'NAME' replaced: ...`` says so), and otherwise only with ``--replace``.
No training runs: it takes seconds.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from handreader.cli._usage import UsageError
from handreader.tables.wording import counted

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from handreader.store.decks import DeckStore
    from vision.calibration import DeckProfile

__all__ = ["register", "run", "run_decks"]


def register(subparsers: Any) -> None:
    """Add the ``calibrate`` and ``decks`` commands to the CLI."""
    parser = subparsers.add_parser(
        "calibrate",
        help="calibrate the reader to your own deck",
        description="Calibrate the reader to your own deck. " + __doc__.split("\n\n", 1)[1]
        if __doc__
        else None,
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
        "--replace",
        action="store_true",
        help="replace a deck of that name even when the new one lacks some of its cards",
    )
    parser.add_argument(
        "--models", type=Path, metavar="DIR", help="model folder (default: shipped)"
    )
    parser.set_defaults(func=run)
    decks = subparsers.add_parser(
        "decks",
        help="list calibrated deck profiles",
        description="List the deck profiles made by handreader calibrate; a deck calibrated "
        "with other models than those read with is marked.",
    )
    decks.add_argument(
        "--models", type=Path, metavar="DIR", help="model folder the decks are checked against"
    )
    decks.set_defaults(func=run_decks)


def run(args: argparse.Namespace) -> int:
    """Calibrate and save the profile; print where it went, what it holds and the deck it
    replaced. Bad input is named before the models load. Nothing stored is lost by a failed
    run: the deck is saved only once its contact sheet is written beside the sheet's place, and
    the sheet takes that place only once the deck is saved; a deck of the name is replaced only
    when the new one keeps all its cards, or with ``--replace``."""
    from handreader.store.decks import open_deck_store
    from vision.calibrate_deck import calibrate
    from vision.calibration import check_deck_name
    from vision.imageio import writes_images
    from vision.reader import Reader

    check_deck_name(args.name)  # named before anything is read or saved, as the sheet is
    sheet = args.sheet or Path(f"{args.name}-calibration.png")
    if not writes_images(sheet):
        raise UsageError(f"--sheet {str(sheet)!r}: no image format for its extension (.png, .jpg)")
    if not sheet.parent.is_dir():
        raise ValueError(f"--sheet {str(sheet)!r}: no folder {str(sheet.parent)!r}")
    if sheet.is_dir():
        raise ValueError(f"--sheet {str(sheet)!r} is a folder: name an image file")
    _refuse_a_photo_as_sheet(sheet, args.photos)
    reader = Reader.load(args.models)
    store = open_deck_store()
    result = calibrate(reader, args.name, args.photos, grid=args.grid, save=lambda _: "")
    staged = _stage_sheet(sheet, result.sheet)
    try:
        path, replaced = _save(store, result.profile, args.replace)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    try:
        os.replace(staged, sheet)
    except OSError as error:
        staged.unlink(missing_ok=True)
        raise ValueError(
            f"deck {args.name!r} saved, but the contact sheet could not be written to "
            f"{str(sheet)!r}: {error.strerror or error}"
        ) from None
    for warning in result.warnings:
        print(f"handreader calibrate: warning: {warning}", file=sys.stderr)
    if replaced is not None:
        print(f"deck {args.name!r} replaced: it had {replaced}")
    print(
        f"deck {args.name!r}: {counted(len(result.profile.prototypes), 'card')}, "
        f"{counted(sum(len(v) for v in result.profile.prototypes.values()), 'corner sample')}; "
        f"saved {path}; contact sheet {sheet}"
    )
    return 0


def _refuse_a_photo_as_sheet(sheet: Path, photos: list[Path]) -> None:
    """ValueError when the contact sheet would be written over one of the photos (the same
    file by its resolved path, a link or a hard link)."""
    target = sheet.resolve()
    for photo in photos:
        same = photo.resolve() == target
        if not same and sheet.exists() and photo.exists():
            try:
                same = os.path.samefile(sheet, photo)
            except OSError:
                same = False
        if same:
            raise ValueError(
                f"the contact sheet {str(sheet)!r} is the photo {str(photo)!r}: name another "
                "file with --sheet"
            )


def _save(store: DeckStore, profile: DeckProfile, replace: bool) -> tuple[str, str | None]:
    """Save ``profile`` (:meth:`handreader.store.decks.DeckStore.save`, the rule the service
    follows too, judged under the store's write lock): where it went, and the cards of the deck
    it replaced and when that was made (None: there was none). ValueError, nothing saved,
    unless ``replace``, when that deck has cards the new one lacks or cannot be read, naming
    them and ``--replace``."""
    from handreader.store.decks import DeckExistsError

    try:
        saved = store.save(profile, replace)
    except DeckExistsError as error:
        raise ValueError(f"{error}: give --replace to replace it, or another --name") from None
    return saved.location, None if saved.replaced is None else str(saved.replaced)


def _stage_sheet(sheet: Path, image: NDArray[np.uint8]) -> Path:
    """The contact sheet written to a hidden file of its own beside ``sheet`` (same folder and
    extension), to be moved into place once the deck is saved; ValueError when it cannot be
    written (the deck is then not saved)."""
    from vision.imageio import write_image

    staged = sheet.with_name(f".{sheet.stem}.{secrets.token_hex(6)}{sheet.suffix}")
    try:
        written = write_image(staged, image)
    except OSError as error:
        staged.unlink(missing_ok=True)
        raise ValueError(
            f"the contact sheet could not be written to {str(sheet)!r}: "
            f"{error.strerror or error}: deck not saved"
        ) from None
    if not written:
        staged.unlink(missing_ok=True)
        raise ValueError(
            f"the contact sheet could not be written to {str(sheet)!r}: deck not saved"
        )
    return staged


def run_decks(args: argparse.Namespace) -> int:
    """Print one line per saved profile, with a remark when it was calibrated with other
    models than ``--models`` (default: the shipped ones); exit 2 when a profile's file cannot
    be read, or the model folder fails its check (ModelError, before any line)."""
    from handreader.cli.deck_models import models_manifest
    from handreader.store.database import StoreError
    from handreader.store.decks import open_deck_store
    from vision.calibration import made_for

    manifest = models_manifest(args.models)
    store = open_deck_store()
    names = store.names()
    if not names:
        print(f"no deck profiles under {store.location}")
    which = "--models" if args.models else "the shipped ones"
    unreadable = 0
    for name in names:
        try:
            profile = store.get(name)
            line = f"{name}: {counted(len(profile.prototypes), 'card')}, made {profile.created}"
            if not made_for(profile, manifest):
                line += f"; calibrated with other models than {which}: calibrate it again"
            print(line)
        except ValueError as error:
            print(f"{name}: unusable ({error})")
            unreadable += isinstance(error, StoreError)  # (the store's fault, not the deck's)
    return 2 if unreadable else 0
