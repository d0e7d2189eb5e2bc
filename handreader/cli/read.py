"""``handreader read PHOTO [PHOTO ...] [--json] [--annotate DIR]``: the cards in each photo.

With ``--json`` each photo prints one line::

    {"image": "PATH-AS-GIVEN",
     "cards": [{"card": "10H", "confidence": 0.97, "box": [x1, y1, x2, y2],
     "corners": 2, "uncertain": false}, ...], "size": [w, h], "flags": [...], "ms": 21.3}

Boxes and sizes are in the photo's own pixels (upright), although a large JPEG is decoded at a
reduced scale (``vision.imageio.load_reduced``); ``--annotate`` draws on a copy of the photo's
size, ``DIR/STEM.jpg`` (``STEM-2.jpg`` and so on when two photos share a name). A folder given
as PHOTO stands for the image files directly inside it (``handreader.cli.photos``).
A photo that cannot be read, or a folder with no image file, prints
``{"image": PATH, "error": {"code": ..., "message": ...}}`` (on standard output with
``--json``, on standard error otherwise); the others are still read and the exit status is 2
if any failed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vision.detections import Reading

if TYPE_CHECKING:
    from vision.imageio import ReducedImage

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``read`` command to the CLI."""
    parser = subparsers.add_parser(
        "read",
        help="read the cards in photos",
        description="Find and read every card in each photo.",
    )
    parser.add_argument(
        "photos",
        nargs="+",
        metavar="PHOTO",
        help="image files (JPEG, PNG, WebP, ...), or folders of them",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object per photo")
    parser.add_argument("--deck", help="a calibrated deck profile (handreader calibrate)")
    parser.add_argument(
        "--annotate", type=Path, metavar="DIR", help="also write annotated copies into DIR"
    )
    parser.add_argument(
        "--models", type=Path, metavar="DIR", help="model folder (default: the shipped models)"
    )
    parser.set_defaults(func=run)


def format_reading(reading: Reading) -> str:
    """A readable line: the certain cards, then the uncertain ones marked with ``?``."""
    certain = " ".join(card.code for card in reading.cards if not card.uncertain) or "no cards"
    unsure = [f"{card.code}?" for card in reading.cards if card.uncertain]
    return certain + (f" (uncertain: {' '.join(unsure)})" if unsure else "")


def _annotated_name(stem: str, written: set[str]) -> str:
    """``STEM.jpg``, or ``STEM-2.jpg``, ``STEM-3.jpg``... when an earlier photo of this run
    (another folder's ``hand.jpg``, or ``hand.png`` beside ``hand.jpg``) took the name."""
    name, number = f"{stem}.jpg", 1
    while name.lower() in written:
        number += 1
        name = f"{stem}-{number}.jpg"
    written.add(name.lower())
    return name


def run(args: argparse.Namespace) -> int:
    """Read each photo; keep going past bad files; 2 if any failed."""
    from handreader.cli.photos import read_photos

    written: set[str] = set()  # annotated copies' names, so two photos never share one
    if args.annotate:
        args.annotate.mkdir(parents=True, exist_ok=True)

    def answer(photo: str, photo_image: ReducedImage, reading: Reading) -> None:
        if args.json:
            record: dict[str, Any] = {
                "image": photo,
                **reading.to_dict(),
                "ms": round(reading.timings_ms.get("total", 0.0), 1),
            }
            print(json.dumps(record, ensure_ascii=False), flush=True)
        else:
            print(f"{photo}: {format_reading(reading)}", flush=True)
        if args.annotate:
            import cv2

            from handreader.drawing.annotate import Annotator

            out = args.annotate / _annotated_name(Path(photo).stem, written)
            scene = photo_image.full_size()  # the photo's size, as the boxes are
            cv2.imwrite(str(out), Annotator().annotate_reading(scene, reading))

    return read_photos(
        "read", args.photos, args.deck, args.models, args.json, answer, headers=False
    )
