"""``handreader read PHOTO [PHOTO ...] [--json] [--annotate DIR]``: the cards in each photo.

With ``--json`` each photo prints one line::

    {"image": "PATH-AS-GIVEN",
     "cards": [{"card": "10H", "confidence": 0.97, "box": [x1, y1, x2, y2],
     "corners": 2, "uncertain": false}, ...], "size": [w, h], "flags": [...], "problem": null,
     "ms": 21.3}

``"problem"`` is ``"no cards found"`` for a photo with none, as ``POST /v1/read`` answers;
``"ms"`` is the read's total time (the API's ``timings_ms`` holds its parts).

``"image"`` is the path as given; a name that is no UTF-8 has its bytes written ``\\xNN``
(``h\\xe9\\xff.jpg``), so that every line is valid UTF-8.
Boxes and sizes are in the photo's own pixels (upright), although a large JPEG is decoded at a
reduced scale (``vision.imageio.load_reduced``); ``--annotate`` draws on a copy of the photo's
size, ``DIR/STEM.jpg`` (``STEM-2.jpg`` and so on when two photos share a name). A folder given
as PHOTO stands for the image files directly inside it (``handreader.cli.photos``).
A photo that cannot be read, or a folder with no image file, prints
``{"image": PATH, "error": {"code": ..., "message": ...}}`` (on standard output with
``--json``, on standard error otherwise); the others are still read and the exit status is 2
if any failed.

``--ray [ADDRESS]`` spreads the photos over a Ray cluster (``handreader.cli.ray_runner``: the
``scale`` extra; no ADDRESS: a local instance, ``auto``: the local machine's cluster,
``HOST:PORT``: a cluster's head, ``ray://HOST:10001``: a remote one), one reader per worker
process (``--readers N``: how many), with a progress bar on standard error; the output is the
same lines in the same order. An ADDRESS that names no cluster (``ray://``, ``HOST:99999``) and
a model folder that fails the plain command's check are one-line errors before Ray starts.
Without ``--ray`` Ray is never imported.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from handreader.cli._amounts import folder
from handreader.cli._usage import UsageError
from handreader.cli.in_play import add_deck_options, deck_from_arguments
from handreader.cli.photos import json_text
from handreader.tables.scoring import reading_problem
from vision.detections import Reading

if TYPE_CHECKING:
    from vision.imageio import ReducedImage

__all__ = ["add_ray_arguments", "ray_address", "register", "require_inputs", "run"]


def register(subparsers: Any) -> None:
    """Add the ``read`` command to the CLI."""
    parser = subparsers.add_parser(
        "read",
        help="read the cards in photos",
        description="Find and read every card in each photo.",
    )
    parser.add_argument(
        "photos",
        nargs="*",  # at least one, checked by run (``--ray PHOTO`` may have taken it)
        metavar="PHOTO",
        help="image files (JPEG, PNG, WebP, ...), or folders of them",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object per photo")
    parser.add_argument("--deck", help="a calibrated deck profile (handreader calibrate)")
    parser.add_argument(
        "--annotate", type=folder, metavar="DIR", help="also write annotated copies into DIR"
    )
    parser.add_argument(
        "--models", type=Path, metavar="DIR", help="model folder (default: the shipped models)"
    )
    add_deck_options(parser, default="any: each card read on its own")
    add_ray_arguments(parser)
    parser.set_defaults(func=run)


def add_ray_arguments(parser: argparse.ArgumentParser) -> None:
    """``--ray [ADDRESS]`` and ``--readers N`` (``read`` and ``eval``)."""
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="read on a Ray cluster (the scale extra): no ADDRESS starts a local instance, "
        "'auto' joins the local machine's cluster, ray://HOST:10001 a remote one",
    )
    parser.add_argument(
        "--readers",
        type=int,
        metavar="N",
        help="with --ray: how many readers (default: one per CPU of the cluster)",
    )


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


def _check_annotate_folder(folder: Path, photos: list[str]) -> None:
    """ValueError when ``folder`` is a file, or where photos being read lie: its drawings,
    named after the photos, would replace them and their neighbours."""
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"--annotate {str(folder)!r} is a file: name a folder for the copies")
    target = folder.resolve()
    for photo in map(Path, photos):
        place = photo if photo.is_dir() else photo.parent
        if place.resolve() == target:
            raise ValueError(
                f"--annotate {str(folder)!r} holds the photos being read: the annotated copies "
                "would replace them; name another folder"
            )


def _print_reading(photo: str, reading: Reading, as_json: bool) -> None:
    if as_json:
        record: dict[str, Any] = {
            "image": json_text(photo),
            **reading.to_dict(),
            "problem": reading_problem(reading),
            "ms": round(reading.timings_ms.get("total", 0.0), 1),
        }
        print(json.dumps(record, ensure_ascii=False), flush=True)
    else:
        print(f"{photo}: {format_reading(reading)}", flush=True)


def ray_address(args: argparse.Namespace, inputs: str) -> str | None:
    """The cluster address of ``--ray`` (None: a local instance); a value that is no address
    but a photo's name is the first of ``args.<inputs>`` (``--ray PHOTO ...``), put back in
    front; ValueError naming a value written as an address that names no cluster (``ray://``,
    ``HOST:99999``: ``handreader.cli.ray_runner.cluster_address``)."""
    from handreader.cli.ray_runner import cluster_address

    given = str(args.ray)
    if not given:
        return None
    address = cluster_address(given)
    if address is not None:
        return address
    kind = Path if inputs == "manifests" else str
    setattr(args, inputs, [kind(given), *getattr(args, inputs)])
    return None


def require_inputs(items: list[Any], metavar: str) -> None:
    """ValueError when a command was given none of its ``metavar`` arguments."""
    if not items:
        raise UsageError(f"give at least one {metavar}")


def _run_on_ray(args: argparse.Namespace) -> int:
    """``read --ray``: the same lines, the photos read on a Ray cluster."""
    import sys

    from handreader.cli.deck_models import models_manifest, warn_other_models
    from handreader.cli.photos import expand_photos
    from handreader.cli.ray_runner import RayJob, read_on_ray
    from handreader.store.decks import load_deck

    address = ray_address(args, "photos")
    require_inputs(args.photos, "PHOTO")
    if args.annotate:
        raise UsageError("--annotate writes files where the photo is read: not with --ray")
    if args.readers is not None and args.readers < 1:
        raise UsageError(f"--readers must be at least 1, got {args.readers}")
    job = RayJob(
        address=address,
        models=args.models,
        deck=load_deck(args.deck) if args.deck is not None else None,
        readers=args.readers,
        in_play=deck_from_arguments(args),
        indices=args.indices,
    )
    warn_other_models("read", job.deck, models_manifest(job.models))
    status = 0
    for outcome in read_on_ray(expand_photos(args.photos), job, progress="read"):
        if outcome.reading is not None:
            _print_reading(outcome.photo, outcome.reading, args.json)
            continue
        status = 2
        code, message = outcome.error or ("read_failed", "unknown error")
        if args.json:
            error = {"code": code, "message": json_text(message)}
            print(json.dumps({"image": json_text(outcome.photo), "error": error}), flush=True)
        else:
            print(f"handreader read: error: {message}", file=sys.stderr, flush=True)
    return status


def run(args: argparse.Namespace) -> int:
    """Read each photo; keep going past bad files; 2 if any failed."""
    if args.ray is not None:
        return _run_on_ray(args)
    if args.readers is not None:
        raise UsageError("--readers counts the readers of a Ray cluster: give it with --ray")
    require_inputs(args.photos, "PHOTO")
    in_play = deck_from_arguments(args)  # a bad --decks is named before the models load
    from handreader.cli.photos import read_photos

    written: set[str] = set()  # annotated copies' names, so two photos never share one
    if args.annotate:
        _check_annotate_folder(args.annotate, args.photos)
        args.annotate.mkdir(parents=True, exist_ok=True)

    def answer(photo: str, photo_image: ReducedImage, reading: Reading) -> None:
        _print_reading(photo, reading, args.json)
        if args.annotate:
            from handreader.drawing.annotate import Annotator
            from vision.imageio import write_image

            out = args.annotate / _annotated_name(Path(photo).stem, written)
            scene = photo_image.full_size()  # the photo's size, as the boxes are
            if not write_image(out, Annotator().annotate_reading(scene, reading)):
                raise ValueError(
                    f"--annotate: the annotated copy could not be written to {str(out)!r}"
                )

    return read_photos(
        "read",
        args.photos,
        args.deck,
        args.models,
        args.json,
        answer,
        headers=False,
        in_play=in_play,
        indices=args.indices,
    )
