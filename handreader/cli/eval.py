"""``handreader eval MANIFEST.jsonl [...]``: precision, recall, F1, exact photos on labelled data.

Manifests are JSON lines of labelled photos (the format of :mod:`vision.evaluate`). Prints one block
per manifest and, with ``--json``, one JSON object per manifest; ``--report DIR`` also writes a
confusion-matrix picture per manifest, each under its own name (:func:`report_names`);
``--split valid`` keeps only that split's entries;
``--game NAME`` and ``--decks N`` read with that deck in play (``handreader.cli.in_play``).

``--ray [ADDRESS]`` reads the photos on a Ray cluster (as ``handreader read --ray``; the
``scale`` extra): the same figures; a bad ADDRESS is named before anything else, and a model
folder that fails the plain command's check is named before Ray starts. Without ``--ray`` Ray is
never imported.

A photo that cannot be read is named on standard error and counted as failed, and makes the
exit status 2 once every manifest is measured; a manifest line that is no entry (a card label
that is no code), a photo listed twice, a manifest or split that selects no photo, or a
``--report`` that is a file stops the command before the models load. The progress bar shows
only on a terminal, with ``--ray`` too.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from handreader.cli._amounts import at_least, folder
from handreader.cli._usage import UsageError
from handreader.cli.in_play import add_deck_options, deck_from_arguments
from handreader.cli.read import add_ray_arguments, require_inputs
from handreader.tables.wording import counted

if TYPE_CHECKING:
    from rules.decks import Deck
    from vision.calibration import DeckProfile
    from vision.evaluate import EvalTotals, ManifestEntry

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``eval`` command to the CLI."""
    parser = subparsers.add_parser(
        "eval",
        help="measure the reader on labelled photos",
        description="Measure the reader on labelled photos: card precision, recall, F1, exact "
        "photos and confusions.",
    )
    parser.add_argument(
        "manifests", nargs="*", type=Path, metavar="MANIFEST", help="manifest.jsonl files"
    )
    parser.add_argument("--split", help="only entries whose 'split' is this (e.g. valid)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per manifest")
    parser.add_argument(
        "--report", type=folder, metavar="DIR", help="write confusion-matrix pictures here"
    )
    parser.add_argument(
        "--models", type=Path, metavar="DIR", help="model folder (default: the shipped models)"
    )
    parser.add_argument(
        "--limit",
        type=at_least(0),
        metavar="N",
        help="read at most this many photos per manifest",
    )
    parser.add_argument("--deck", help="a calibrated deck profile (handreader calibrate)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="read with a reader setting changed (a switch or a number of the settings "
        "docs/reading.md#settings lists, e.g. card_evidence=on or verify_below=0); may be "
        "repeated",
    )
    add_deck_options(parser, default="any: each card read on its own")
    add_ray_arguments(parser)
    parser.set_defaults(func=run)


_SWITCH = {"on": True, "true": True, "1": True, "off": False, "false": False, "0": False}


_OWN_OPTIONS = {"in_play": "--game and --decks", "indices": "--indices"}
"""Settings that have options of their own, named when ``--set`` is given one."""


def _range_text(low: float, high: float) -> str:
    """``from 0 to 1`` or ``at least 1``: a setting's range of :data:`SETTING_RANGES`."""
    if high == math.inf:
        return f"at least {low:g}"
    return f"from {low:g} to {high:g}"


def changed_settings(base: Any, assignments: list[str]) -> Any:
    """``base`` (a ReaderSettings) with each ``NAME=VALUE`` applied: a switch takes on/off
    (true/false, 1/0), a number a finite number in its range of
    :data:`vision.settings.SETTING_RANGES`; anything else is a ValueError naming it, with the
    names that can be set (switches and numbers) when NAME is none of them."""
    import dataclasses

    from vision.settings import SETTING_RANGES

    changes: dict[str, object] = {}
    fields = {field.name: field for field in dataclasses.fields(base)}
    settable = sorted(
        name for name in fields if isinstance(getattr(base, name), bool | int | float)
    )
    for assignment in assignments:
        name, equals, text = assignment.partition("=")
        name, text = name.strip(), text.strip()
        if equals and name in _OWN_OPTIONS:
            raise UsageError(f"--set {assignment!r}: {name} is set with {_OWN_OPTIONS[name]}")
        if not equals or name not in fields:
            known = ", ".join(settable)
            raise UsageError(f"--set {assignment!r}: expected NAME=VALUE with NAME one of {known}")
        current = getattr(base, name)
        if isinstance(current, bool):
            if text.lower() not in _SWITCH:
                raise UsageError(f"--set {assignment!r}: {name} is a switch: on or off")
            changes[name] = _SWITCH[text.lower()]
        elif isinstance(current, int | float):
            try:
                number = float(text) if isinstance(current, float) else int(text)
            except ValueError:
                raise UsageError(f"--set {assignment!r}: {name} takes a number") from None
            if not math.isfinite(number):
                raise UsageError(f"--set {assignment!r}: {name} takes a finite number")
            low, high = SETTING_RANGES.get(name, (-math.inf, math.inf))
            if not low <= number <= high:
                raise UsageError(
                    f"--set {assignment!r}: {name} takes a number {_range_text(low, high)}"
                )
            changes[name] = number
        else:
            raise UsageError(f"--set {assignment!r}: {name} cannot be set here")
    return dataclasses.replace(base, **changes)


def _score_on_ray(
    entries: list[ManifestEntry], address: str | None, args: argparse.Namespace,
    deck: DeckProfile | None, progress: str | None, in_play: Deck | None = None,
) -> EvalTotals:  # fmt: skip
    """The totals of ``entries`` read on a Ray cluster, with a progress bar named ``progress``
    (None: none); failed photos named on stderr."""
    import sys

    from handreader.cli.ray_runner import RayJob, read_on_ray
    from vision.evaluate import EvalTotals

    job = RayJob(address, args.models, deck, args.readers, in_play, args.indices)
    totals = EvalTotals()
    photos = [str(entry.image) for entry in entries]
    for entry, outcome in zip(entries, read_on_ray(photos, job, progress), strict=True):
        if outcome.reading is None:
            message = outcome.error[1] if outcome.error else "unknown error"
            print(f"handreader eval: error: {message}", file=sys.stderr, flush=True)
            totals.add_unreadable(entry)
        else:
            totals.add_reading(entry, outcome.reading)
    return totals


def run(args: argparse.Namespace) -> int:
    """Evaluate every manifest and print its figures."""
    from handreader.store.decks import load_deck
    from vision.evaluate import confusion_image, score_manifest
    from vision.imageio import write_image

    address = None
    if args.ray is not None:
        from handreader.cli.read import ray_address

        address = ray_address(args, "manifests")
        if args.readers is not None and args.readers < 1:
            raise UsageError(f"--readers must be at least 1, got {args.readers}")
    elif args.readers is not None:
        raise UsageError("--readers counts the readers of a Ray cluster: give it with --ray")
    require_inputs(args.manifests, "MANIFEST")
    if args.report is not None and args.report.exists() and not args.report.is_dir():
        raise ValueError(f"--report {str(args.report)!r} is a file: name a folder for the pictures")
    in_play = deck_from_arguments(args)  # a bad --decks is named before the models load
    from vision.settings import ReaderSettings

    settings = changed_settings(
        ReaderSettings(in_play=in_play, indices=args.indices), args.set
    )  # before loading
    if args.set and args.ray is not None:
        raise UsageError("--set reads with the settings of this process: not with --ray")
    deck = load_deck(args.deck) if args.deck is not None else None
    # every manifest is checked before the models load and any photo is read
    manifests = [(path, selected(path, args.split)[: args.limit]) for path in args.manifests]
    pictures = report_names(args.manifests)
    if args.report:
        args.report.mkdir(parents=True, exist_ok=True)
    failed = 0

    def unreadable(entry: ManifestEntry, error: Exception) -> None:
        text = str(error)  # named once: an image error names its file already
        named = text if repr(str(entry.image)) in text else f"{entry.image}: {text}"
        print(f"handreader eval: error: {named}", file=sys.stderr, flush=True)

    reader = None
    if args.ray is None:
        from vision.reader import Reader

        reader = Reader.load(args.models, settings)
    from handreader.cli.deck_models import models_manifest, warn_other_models

    loaded = getattr(reader, "manifest", None) if reader else models_manifest(args.models)
    warn_other_models("eval", deck, loaded)
    for (manifest, entries), picture in zip(manifests, pictures, strict=True):
        progress = manifest.parent.name if sys.stderr.isatty() else None
        if reader is None:
            totals = _score_on_ray(entries, address, args, deck, progress, in_play)
        else:
            totals = score_manifest(
                entries, partial(reader.read, deck=deck), progress=progress, unreadable=unreadable
            )
        failed += totals.failed  # each named on standard error as it was read
        summary = {
            "manifest": str(manifest),
            "split": args.split,
            "in_play": None if in_play is None else str(in_play),
            "indices": args.indices,
            **totals.summary(),
        }
        if args.json:
            print(json.dumps(summary))
        else:
            where = f"{manifest} [{args.split}]" if args.split else str(manifest)
            played = f", deck in play: {in_play}" if in_play is not None else ""
            played += f", index letters: {args.indices}" if args.indices else ""
            photos = counted(totals.photos, "photo")
            print(f"{where}: {photos}, {counted(totals.truth_cards, 'card')}{played}")
            print(
                f"  precision {totals.precision:.4f}  recall {totals.recall:.4f}  "
                f"F1 {totals.f1:.4f}  exact photos {summary['exact_photos']:.4f}  "
                f"wrong {summary['wrong']}  uncertain {totals.uncertain}  failed {totals.failed}"
            )
            if totals.top1 is not None:
                print(
                    f"  top-1 (most confident card) on "
                    f"{counted(totals.single_photos, 'one-card photo')}: "
                    f"{totals.top1:.4f}"
                )
            if totals.optional_read:
                print(
                    f"  readings of optional cards (shown only in part), not counted: "
                    f"{totals.optional_read}"
                )
            pairs = ", ".join(f"{t}->{p} x{n}" for t, p, n in summary["confusions"])
            print(f"  most frequent confusions: {pairs or 'none'}")
        if args.report:
            target = args.report / picture
            if not write_image(target, confusion_image(totals.confusions.items())):
                raise ValueError(
                    f"--report: the confusion picture could not be written to {str(target)!r}"
                )
    return 2 if failed else 0


def selected(manifest: Path, split: str | None) -> list[ManifestEntry]:
    """The entries of ``manifest`` (:func:`vision.evaluate.load_manifest`), of ``split`` when
    given; a ValueError naming the manifest (and the split, with those it has) when that
    selects no photo."""
    from vision.evaluate import load_manifest

    entries = load_manifest(manifest)
    if not entries:
        raise ValueError(f"{manifest}: no photo listed")
    chosen = [entry for entry in entries if split is None or entry.split == split]
    if not chosen:
        splits = sorted({str(entry.split) for entry in entries if entry.split is not None})
        has = f"its splits: {', '.join(splits)}" if splits else "it names no split"
        raise ValueError(f"{manifest}: no photo of split {split!r} ({has})")
    return chosen


def report_names(manifests: list[Path]) -> list[str]:
    """The confusion pictures' file names of ``manifests``, one each and no two alike (nor
    alike but for case): ``confusion_FOLDER.png`` after the manifest's folder, or after the
    folder above one named ``manifest`` (``SCENES/manifest/manifest.jsonl``, as ``handreader
    synth`` writes it, is ``confusion_SCENES.png``), ``confusion_FOLDER-NAME.png`` for a
    manifest not named ``manifest.jsonl``; a name an earlier manifest took is followed by
    ``-2``, ``-3``... in the order given."""
    taken: set[str] = set()
    names = []
    for manifest in manifests:
        folder = manifest.resolve().parent
        if folder.name == "manifest" and folder.parent.name:
            folder = folder.parent
        stem = folder.name or "manifest"
        if manifest.stem != "manifest":
            stem = f"{stem}-{manifest.stem}"
        name, number = stem, 1
        while name.casefold() in taken:
            number += 1
            name = f"{stem}-{number}"
        taken.add(name.casefold())
        names.append(f"confusion_{name}.png")
    return names
