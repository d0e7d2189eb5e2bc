"""``handreader synth``: write a synthetic training set of card scenes, or preview one.

Usage::

    handreader synth --config datasets/scenes.yaml --out DIR --count N [--start S]
                     [--workers W] [--preview] [--preview-count K]
    handreader synth --preview-only --out DIR [--preview-count K]

Scenes ``S .. S+N-1`` of the config are written under ``DIR`` (``images/``, ``labels/``,
``meta/``; see ``datasets/README.md``), in parallel on all cores unless ``--workers`` says
otherwise, with a progress bar on standard error. Scene ``i`` depends only on the config (its
seed included) and ``i``, so runs can be split with ``--start`` and the files are the same
whatever the number of workers. ``--preview`` then writes ``DIR/contact_sheet.png``: the first
scenes in ``DIR`` with their labelled index quads and card codes drawn, for a person to check;
``--preview-only`` writes only that sheet, from scenes already in ``DIR``, and refuses the
options of a generation (``--config``, ``--count``, ``--start``, ``--workers``), which it would
not heed. An empty ``--out`` is refused (it would be the current folder). Decks not yet in the
render cache are rendered first, which one line on standard error announces (unless
``--quiet``).

A summary line goes to standard output. Exit status 0 on success, 2 for a bad config (the
message names the file and the field), missing card art or bad arguments.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from handreader.cli._amounts import at_least, folder
from handreader.cli._usage import UsageError
from handreader.tables.wording import counted
from training.synth.config import SceneConfig, load_config
from vision.imageio import write_image

__all__ = [
    "CONTACT_SHEET",
    "check_card_art",
    "register",
    "rendering_notice",
    "run",
    "unrendered_decks",
    "write_contact_sheet",
]

CONTACT_SHEET = "contact_sheet.png"
"""File name of the preview written under the output folder."""


_positive = at_least(1)
"""argparse type: an integer of at least 1."""


_non_negative = at_least(0)
"""argparse type: an integer of at least 0."""


def register(subparsers: Any) -> None:
    """Add the ``synth`` command to the CLI."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "synth",
        help="write synthetic card scenes with exact corner-index labels (training data)",
        description=(
            "Render scenes START .. START+COUNT-1 of a dataset config into OUT (images/, "
            "labels/ in YOLO format, meta/ with card codes), in parallel; or preview them."
        ),
        epilog="exit status: 0 done, 2 bad config (the field is named), missing card art",
    )
    parser.add_argument("--config", type=Path, help="dataset config, e.g. datasets/scenes.yaml")
    parser.add_argument("--out", type=folder, required=True, help="output folder")
    parser.add_argument("--count", type=_positive, help="number of scenes to write")
    parser.add_argument("--start", type=_non_negative, help="index of the first scene (default 0)")
    parser.add_argument(
        "--workers",
        type=_positive,
        default=None,
        help=f"worker processes (default: all {os.cpu_count() or 1} cores)",
    )
    parser.add_argument(
        "--preview",
        action="store_true",
        help=f"also write OUT/{CONTACT_SHEET} with the labels drawn",
    )
    parser.add_argument(
        "--preview-only",
        action="store_true",
        help=f"only write OUT/{CONTACT_SHEET} from the scenes already in OUT",
    )
    parser.add_argument(
        "--preview-count",
        type=_positive,
        default=16,
        help="scenes on the contact sheet (default 16)",
    )
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar, nor the line telling that the card art is being rendered",
    )
    parser.set_defaults(func=run)


def unrendered_decks(config: SceneConfig) -> list[str]:
    """The names of the config's decks (``config.deck_split``) whose cards are not all rendered
    in the cache at its height: what a run renders before its first scene. ValueError (with the
    install command) when the split has no deck to draw."""
    from training.synth.assets import decks_for_split
    from training.synth.decks import cache_dir

    height = config.card_render_height
    try:
        decks = decks_for_split(config.deck_split, height)
    except RuntimeError as error:
        raise ValueError(str(error)) from error
    root = cache_dir() / "cards" / f"h{height}"
    return [
        deck.name
        for deck in decks
        if not all((root / deck.name / f"{code}.png").is_file() for code in deck.codes)
    ]


def check_card_art(config: SceneConfig, unrendered: Sequence[str]) -> None:
    """Raise ValueError (with the install command) when decks are still to be rendered
    (:func:`unrendered_decks`) and ``rsvg-convert`` is not on the path."""
    from training.synth.decks import CARD_ART_HINT

    if unrendered and shutil.which("rsvg-convert") is None:
        raise ValueError(
            f"rsvg-convert not found and decks {', '.join(unrendered)} are not rendered at "
            f"height {config.card_render_height}: {CARD_ART_HINT}"
        )


SECONDS_A_DECK = 15
"""Rough time to render and measure one deck at 480 px on one core (54 cards, two
``rsvg-convert`` runs each): the figure of the estimate :func:`rendering_notice` gives."""


def rendering_notice(config: SceneConfig, unrendered: Sequence[str], workers: int) -> str | None:
    """What a first run does before its first scene: render the decks not in the cache yet
    (:func:`unrendered_decks`; where, and roughly how long on ``workers`` processes); None when
    there is none."""
    from training.synth.decks import cache_dir

    if not unrendered:
        return None
    height = config.card_render_height
    rounds = -(-len(unrendered) // max(1, min(workers, len(unrendered))))
    minutes = max(1, round(rounds * SECONDS_A_DECK * height / 480 / 60))
    return (
        f"rendering the card art of {counted(len(unrendered), 'deck')} at {height} px into "
        f"{cache_dir() / 'cards' / f'h{height}'} first (about {minutes} min with {workers} "
        "workers; cached, later runs skip it)"
    )


def write_contact_sheet(out: Path, count: int = 16) -> Path:
    """Write ``out/contact_sheet.png`` from the first ``count`` scenes in ``out``; returns it."""
    from training.synth.generate import contact_sheet

    if not (out / "images").is_dir():
        raise ValueError(f"no scenes to preview: {str(out / 'images')!r} is not a folder")
    sheet = contact_sheet(out, count=count, columns=min(4, count))
    path = out / CONTACT_SHEET
    if not write_image(path, sheet):
        raise ValueError(f"could not write {str(path)!r}")
    return path


def run(args: argparse.Namespace) -> int:
    """Generate (and/or preview) scenes as the arguments say; returns the exit status."""
    out: Path = args.out
    if args.preview_only:
        generation = ("config", "count", "start", "workers")
        given = [f"--{name}" for name in generation if getattr(args, name) is not None]
        if given:  # a generation's options, which the sheet of scenes already written ignores
            raise UsageError(
                f"--preview-only draws the scenes already in {str(out)!r} and takes no "
                f"{', '.join(given)} (--preview writes scenes, then their sheet)"
            )
        path = write_contact_sheet(out, args.preview_count)
        print(f"wrote {path}")
        return 0
    if args.config is None:
        raise UsageError("--config is required (or use --preview-only)")
    if args.count is None:
        raise UsageError("--count is required (or use --preview-only)")
    start = args.start if args.start is not None else 0
    config = load_config(args.config)
    unrendered = unrendered_decks(config)
    check_card_art(config, unrendered)
    from training.synth.generate import generate

    workers = args.workers or os.cpu_count() or 1
    notice = rendering_notice(config, unrendered, workers)
    if notice is not None and not args.quiet:
        print(f"handreader synth: {notice}", file=sys.stderr, flush=True)
    started = time.perf_counter()
    labels = generate(
        config, out, args.count, start=start, workers=workers, progress=not args.quiet
    )
    seconds = time.perf_counter() - started
    last = start + args.count - 1
    print(
        f"wrote scenes {start}..{last} ({args.count} images, {labels} index labels) "
        f"to {out} in {seconds:.1f} s with {workers} workers "
        f"({args.count / max(seconds, 1e-9):.1f} img/s)"
    )
    from vision.evaluate import scenes_manifest

    manifest = scenes_manifest(out, out / "manifest" / "manifest.jsonl")
    legible = scenes_manifest(out, out / "manifest" / "legible.jsonl", legible_only=True)
    print(f"wrote {manifest} (every scene in {out}, for handreader eval)")
    print(f"wrote {legible} (the same, requiring only cards a person can read)")
    if args.preview:
        path = write_contact_sheet(out, args.preview_count)
        print(f"wrote {path}")
    return 0
