"""The options of a training round (:mod:`training.round`, ``handreader train --round``) and
their checks, all made before anything is drawn or loaded: the budget, the real-photo folder
and its manifests, the models, the device and each ``--set FIELD=VALUE`` of the plan."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

from training.detector import imgsz_problem
from training.round_plan import RoundPlan

__all__ = [
    "DETECTOR_LAYERS",
    "add_round_arguments",
    "check_realdata",
    "check_round_arguments",
    "plan_changes",
]

DETECTOR_LAYERS = 23
"""Layers of the detector (YOLOv8n: a backbone of 10, a neck of 12, the head last): a round
may keep at most all but its head (``detector_freeze``)."""


def add_round_arguments(parser: Any) -> None:
    """The round's options (shared with ``handreader train --round``)."""
    parser.add_argument(
        "--work",
        type=Path,
        default=Path("runs-round"),
        help="the round's folder (default runs-round); a rerun resumes",
    )
    parser.add_argument("--realdata", type=Path,
                        help="real-photo folders (boxes/, tables/...): train splits train, "
                             "valid splits measure")  # fmt: skip
    parser.add_argument(
        "--minutes",
        type=float,
        default=120.0,
        help="time budget on a 2-core CPU (default 120; under 5: a smoke round)",
    )
    parser.add_argument(
        "--models",
        type=Path,
        default=Path("models"),
        help="the models the round starts from and is measured against",
    )
    parser.add_argument(
        "--promote",
        action="store_true",
        help="copy the round's models over --models when its gate passes",
    )
    parser.add_argument("--device", default="auto", help="auto (default), cpu, cuda, cuda:N")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="change one number of the round's plan after --minutes scaled it, for example "
        "closeup_scenes=600 or detector_epochs=5 (repeatable; training.round_plan.RoundPlan "
        "names them)",
    )
    parser.add_argument(
        "--evaluate",
        type=Path,
        metavar="MODELS",
        help="train nothing: read the models folder MODELS beside --models on every set and "
        "let the gate decide (a folder made otherwise: a stage's models, a GPU run's)",
    )


def check_round_arguments(arguments: Any) -> None:
    """A ValueError naming the first bad option of a round (before anything heavy loads, and
    before any scene is drawn)."""
    from training.fitting import parse_device

    if not math.isfinite(arguments.minutes) or arguments.minutes <= 0:
        raise ValueError(f"--minutes must be a positive number, got {arguments.minutes}")
    if arguments.realdata is not None and not arguments.realdata.is_dir():
        raise ValueError(f"--realdata {str(arguments.realdata)!r} is not a folder")
    if not (arguments.models / "manifest.json").is_file():
        raise ValueError(f"--models {str(arguments.models)!r} holds no manifest.json")
    parse_device(arguments.device)
    plan_changes(getattr(arguments, "set", []))
    if arguments.realdata is not None:
        check_realdata(arguments.realdata, trains=getattr(arguments, "evaluate", None) is None)


def check_realdata(realdata: Path, trains: bool = True) -> None:
    """A ValueError unless ``realdata`` holds the manifests a round reads: ``boxes/`` and
    ``tables/`` (the folders it trains on and must improve) when it ``trains``, at least one
    real folder of the report otherwise; each manifest there is read whole, so that a bad
    line, a photo listed twice or a file that is not UTF-8 is named now, not after the
    training (:func:`vision.evaluate.load_manifest`)."""
    from training.round_report import REAL_FOLDERS, TARGETED
    from vision.evaluate import load_manifest

    manifests = {name: realdata / name / "manifest.jsonl" for name in REAL_FOLDERS}
    present = [name for name, manifest in manifests.items() if manifest.is_file()]
    missing = [name for name in TARGETED if name not in present]
    if trains and missing:
        names = " or ".join(f"{name}/manifest.jsonl" for name in missing)
        raise ValueError(
            f"--realdata {str(realdata)!r} holds no {names}: a round trains on the real "
            f"folders {' and '.join(f'{name}/' for name in TARGETED)} (name the folder above them)"
        )
    if not present:
        folders = ", ".join(f"{name}/" for name in REAL_FOLDERS)
        raise ValueError(
            f"--realdata {str(realdata)!r} holds no real folder with a manifest.jsonl "
            f"({folders}; name the folder above them)"
        )
    for name in present:
        load_manifest(manifests[name])


_FIXED_FIELDS = {"work_dir", "realdata", "shipped_models", "device"}
"""Plan fields that have options of their own and so cannot be ``--set``."""

_KEEPABLE = {"detector_epochs", "classifier_epochs", "verifier_epochs"}
"""Plan fields that may be 0: that stage trains nothing and the shipped model is kept."""

_HIGHEST: dict[str, tuple[float, str]] = {
    "classifier_strided": (3, "the classifier has 3 blocks to stride"),
    "detector_freeze": (
        DETECTOR_LAYERS - 1,
        f"the detector has {DETECTOR_LAYERS} layers: keeping its head too, nothing would learn",
    ),
    "distill_weight": (1, "a share of the loss: from 0 to 1"),
}
"""Plan fields with a highest value, and why."""

_POSITIVE = {"distill_temperature"}
"""Plan fields that must be above 0 whatever their name (a temperature divides)."""


def plan_changes(items: list[str]) -> dict[str, int | float]:
    """The plan fields ``--set FIELD=VALUE`` items name, as numbers of the field's type; a
    ValueError names an unknown field, a field that has its own option, or a bad value: not a
    finite number, below 0, 0 where a field needs more (an epoch count of a stage that cannot
    be kept, a batch, a size, a rate, a temperature), above a field's highest, or a detector
    size that is no multiple of its stride."""
    kinds = {item.name: item.type for item in dataclasses.fields(RoundPlan)}
    numeric = sorted(
        name
        for name, kind in kinds.items()
        if name not in _FIXED_FIELDS and kind in ("int", "float")
    )
    changes: dict[str, int | float] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or name not in numeric:
            raise ValueError(
                f"--set {item!r}: expected FIELD=VALUE with FIELD one of {', '.join(numeric)}"
            )
        try:
            value: int | float = int(text) if kinds[name] == "int" else float(text)
        except ValueError:
            wanted = "an integer" if kinds[name] == "int" else "a number"
            raise ValueError(f"--set {item!r}: {text!r} is not {wanted}") from None
        if not math.isfinite(value):
            raise ValueError(f"--set {item!r}: {name} takes a finite number")
        keeps_shipped = name in _KEEPABLE  # 0 epochs: the shipped model goes with the round
        if value < 0 or (
            value == 0
            and not keeps_shipped
            and (name in _POSITIVE or name.endswith(("epochs", "batch", "imgsz", "copies", "rate")))
        ):
            raise ValueError(
                f"--set {item!r}: must be {'positive' if value == 0 else 'at least 0'}"
            )
        if name in _HIGHEST and value > _HIGHEST[name][0]:
            raise ValueError(f"--set {item!r}: {_HIGHEST[name][1]}")
        if name == "detector_imgsz" and (problem := imgsz_problem(int(value))) is not None:
            raise ValueError(f"--set {item!r}: the detector's size {problem}")
        changes[name] = value
    return changes
