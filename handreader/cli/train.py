"""``handreader train``: reproduce the shipped models from the synthetic generator (resumable).

Needs the training extra (``pip install 'handreader[train]'``). On two CPU cores the default
recipe runs for one to two hours; run it in the background, and run it again to resume.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from handreader.cli._amounts import folder
from handreader.cli._usage import UsageError

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``train`` command to the CLI."""
    parser = subparsers.add_parser(
        "train",
        help="train the detector and the classifiers, export ONNX",
        description="Train the models: synthetic scenes -> detector -> index classifier -> "
        "whole-card classifier -> index verifier -> ONNX + manifest.",
    )
    parser.add_argument(
        "--work", type=folder, default=Path("runs"), help="working folder (default: runs)"
    )
    parser.add_argument(
        "--models",
        type=Path,
        help="where to write the ONNX models (default: WORK/models, never over the shipped "
        "models); with --round or --only-verifier, the models to start from (default: the "
        "shipped models)",
    )
    parser.add_argument("--scenes", type=int, default=4500, help="training scenes (default 4500)")
    parser.add_argument(
        "--holdout-scenes",
        type=int,
        default=400,
        help="validation scenes, of held-out decks (default 400)",
    )
    parser.add_argument(
        "--closeup-scenes",
        type=int,
        default=900,
        help="close-ups of datasets/closeups.yaml added to the training scenes and the index "
        "verifier's (default 900)",
    )
    parser.add_argument(
        "--card-scenes",
        type=int,
        default=16000,
        help="one-card scenes of datasets/cards.yaml for the whole-card classifier "
        "(default 16000; 0 ships none)",
    )
    parser.add_argument(
        "--glyph-crops",
        type=int,
        default=50000,
        help="procedural index crops (ranks in the installed fonts, drawn pips) added to the "
        "classifier's training (default 50000; 0 for none)",
    )
    parser.add_argument(
        "--card-epochs", type=int, default=12, help="whole-card classifier epochs (default 12)"
    )
    parser.add_argument(
        "--verifier-scenes",
        type=int,
        default=3000,
        help="scenes of datasets/verifier.yaml (most on printed pages) for the index verifier "
        "(default 3000; 0 ships none)",
    )
    parser.add_argument(
        "--verifier-epochs", type=int, default=6, help="index verifier epochs (default 6)"
    )
    parser.add_argument(
        "--only-verifier",
        action="store_true",
        help="train only the index verifier, against the detector already in --models, and "
        "add it to that folder's manifest",
    )
    parser.add_argument(
        "--detector-epochs", type=int, default=6, help="detector epochs (default 6)"
    )
    parser.add_argument(
        "--finetune-epochs", type=int, default=12, help="detector fine-tuning (default 12)"
    )
    parser.add_argument(
        "--classifier-epochs", type=int, default=14, help="index classifier epochs (default 14)"
    )
    parser.add_argument(
        "--classifier-finetune-epochs",
        type=int,
        default=4,
        help="second classifier stage with mined hard negatives (default 4; 0 skips it)",
    )
    parser.add_argument(
        "--classifier-widths",
        metavar="A,B,C,D",
        help="channels of the classifier's three blocks and its last convolution "
        "(default 32,64,128,128; the first release had 16,32,64,96)",
    )
    parser.add_argument(
        "--shape-jitter",
        type=float,
        default=0.5,
        metavar="SHARE",
        help="share of the index classifier's training crops whose shapes are also changed "
        "(a small warp, thicker or thinner strokes, a coarser resolution; default 0.5, 0 for "
        "none)",
    )
    parser.add_argument(
        "--float-classifier",
        action="store_true",
        help="ship the classifier in float32 (default: int8, calibrated on training crops)",
    )
    parser.add_argument(
        "--imgsz",
        type=int,
        default=320,
        help="detector input size, a multiple of 32 from 32 to 1280 (default 320)",
    )
    parser.add_argument("--batch", type=int, default=32, help="detector batch (default 32)")
    parser.add_argument(
        "--photos",
        type=Path,
        action="append",
        default=[],
        metavar="MANIFEST",
        help="a manifest of labelled single-card photos (realdata format) whose split-train "
        "rows add real index crops to the classifier; repeatable",
    )
    parser.add_argument(
        "--workers", type=int, help="scene-generation processes (default: all cores)"
    )
    parser.add_argument(
        "--device",
        default="auto",
        help="where the networks train: auto (the first GPU torch sees, else the CPU; the "
        "default), cpu, cuda or cuda:N",
    )
    group = parser.add_argument_group(
        "training round",
        "--round fine-tunes the models in --models (detector, index classifier, verifier) on "
        "real photos and new scenes within --minutes, reads both sets of models on every set, "
        "writes WORK/report.md and WORK/report.json, and with --promote copies the new models "
        "over --models when the gate passes (docs/training.md)",
    )
    group.add_argument("--round", action="store_true", help="run (or resume) a training round")
    group.add_argument(
        "--realdata",
        type=Path,
        metavar="DIR",
        help="real-photo folders (boxes/, tables/, singles/...): train splits train, valid "
        "splits measure",
    )
    group.add_argument(
        "--minutes",
        type=float,
        help="the round's budget on a 2-core CPU (default 120; under 5: a smoke round)",
    )
    group.add_argument(
        "--promote", action="store_true", help="replace --models when the round's gate passes"
    )
    group.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="with --round: change one number of the round's plan, for example "
        "closeup_scenes=600 (repeatable; the fields and their ranges: docs/training.md, "
        "Training rounds)",
    )
    group.add_argument(
        "--evaluate",
        type=Path,
        metavar="MODELS",
        help="with --round: train nothing, read MODELS beside --models and let the gate decide",
    )
    # each option's default, to name an option given to the mode that does not take it
    parser.set_defaults(func=run, defaults=vars(parser.parse_args([])))


_ROUND_ONLY = frozenset({"realdata", "minutes", "promote", "set", "evaluate"})
"""Options of ``--round`` alone."""
_SHARED = frozenset({"work", "models", "device", "round", "func", "defaults"})
"""Options (and parser fields) of both the recipe and ``--round``."""


def _check_mode(args: argparse.Namespace) -> None:
    """ValueError naming an option given to the mode that ignores it: a round's option without
    ``--round``, or the recipe's with it."""
    given = sorted(
        name for name, default in args.defaults.items() if getattr(args, name) != default
    )
    if args.round:
        stray = [name for name in given if name not in _ROUND_ONLY | _SHARED]
        if stray:
            raise UsageError(
                f"--{stray[0].replace('_', '-')} is an option of the full training, not of "
                "--round (a round's plan changes with --set FIELD=VALUE)"
            )
    else:
        stray = [name for name in given if name in _ROUND_ONLY]
        if stray:
            raise UsageError(f"--{stray[0]} is an option of --round: give --round with it")


def run(args: argparse.Namespace) -> int:
    """Run (or resume) the training recipe, or a training round with ``--round``."""
    _check_mode(args)
    if args.round:
        return _run_round(args)
    if args.models is None:  # the recipe never writes over the shipped models unasked
        args.models = _shipped_models() if args.only_verifier else args.work / "models"
    if args.models.exists() and not args.models.is_dir():
        raise ValueError(f"--models {str(args.models)!r} is a file: name a folder")
    from training.classifier import DEFAULT_WIDTHS, parse_widths
    from training.pipeline import TrainingPlan, add_verifier, run_training

    for name in (
        "scenes",
        "holdout_scenes",
        "detector_epochs",
        "classifier_epochs",
        "card_epochs",
        "verifier_epochs",
        "batch",
    ):
        if getattr(args, name) < 1:
            raise UsageError(
                f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}"
            )
    for name in (
        "finetune_epochs",
        "classifier_finetune_epochs",
        "closeup_scenes",
        "card_scenes",
        "verifier_scenes",
        "glyph_crops",
    ):
        if getattr(args, name) < 0:
            raise UsageError(
                f"--{name.replace('_', '-')} must be 0 or more, got {getattr(args, name)}"
            )
    from training.detector import imgsz_problem

    problem = imgsz_problem(args.imgsz)
    if problem is not None:
        raise UsageError(f"--imgsz {problem}")
    if not 0.0 <= args.shape_jitter <= 1.0:
        raise UsageError(f"--shape-jitter must be a share from 0 to 1, got {args.shape_jitter}")
    from training.fitting import parse_device

    # the syntax now; whether torch sees that GPU, run_training checks before any work
    parse_device(args.device)
    widths = (
        parse_widths(args.classifier_widths, "--classifier-widths")
        if args.classifier_widths
        else None
    )
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers must be at least 1, got {args.workers}")
    from vision.evaluate import load_manifest

    for manifest in args.photos:
        if not manifest.is_file():
            raise ValueError(f"--photos {str(manifest)!r}: no such manifest file")
        if not load_manifest(manifest, "train"):  # a bad line is named here, not hours on
            raise ValueError(f"--photos {str(manifest)!r}: no row of split train")
    if args.only_verifier and args.verifier_scenes < 1:
        raise UsageError("--only-verifier needs --verifier-scenes of at least 1")
    try:  # after the arguments are checked: a typo is named even without torch
        import torch  # noqa: F401
        import ultralytics  # noqa: F401
    except ImportError as error:
        raise ValueError(
            f"training needs the train extra (pip install 'handreader[train]'): {error}"
        ) from error
    plan = TrainingPlan(
        work_dir=args.work,
        models_dir=args.models,
        train_scenes=args.scenes,
        holdout_scenes=args.holdout_scenes,
        closeup_scenes=args.closeup_scenes,
        card_scenes=args.card_scenes,
        glyph_crops=args.glyph_crops,
        card_epochs=args.card_epochs,
        verifier_scenes=args.verifier_scenes,
        verifier_epochs=args.verifier_epochs,
        detector_epochs=args.detector_epochs,
        classifier_epochs=args.classifier_epochs,
        classifier_finetune_epochs=args.classifier_finetune_epochs,
        classifier_widths=widths or DEFAULT_WIDTHS,
        classifier_shape_jitter=args.shape_jitter,
        quantize_classifier=not args.float_classifier,
        detector_finetune_epochs=args.finetune_epochs,
        detector_imgsz=args.imgsz,
        detector_batch=args.batch,
        photo_manifests=tuple(args.photos),
        workers=args.workers,
        device=args.device,
    )
    if args.only_verifier:
        manifest = add_verifier(plan)
        print(f"index verifier written; manifest {manifest}")
        return 0
    manifest = run_training(plan)
    print(f"models written; manifest {manifest}")
    return 0


def _shipped_models() -> Path:
    """The shipped models' folder, wherever the command runs (as ``read`` finds them)."""
    from vision.reader import default_models_dir

    return default_models_dir()


def _run_round(args: argparse.Namespace) -> int:
    """``handreader train --round``: see :mod:`training.round`."""
    from training.round import check_round_arguments, run_from_arguments

    if args.work == Path("runs"):
        args.work = Path("runs-round")
    if args.models is None:
        args.models = _shipped_models()
    if args.minutes is None:
        args.minutes = 120.0
    from training.round_options import plan_changes

    if not math.isfinite(args.minutes) or args.minutes <= 0:
        raise UsageError(f"--minutes must be a positive number, got {args.minutes}")
    try:
        plan_changes(args.set)
    except ValueError as error:
        raise UsageError(str(error)) from None
    check_round_arguments(args)
    try:
        import torch  # noqa: F401
        import ultralytics  # noqa: F401
    except ImportError as error:
        raise ValueError(
            f"training needs the train extra (pip install 'handreader[train]'): {error}"
        ) from error
    return run_from_arguments(args)
