#!/usr/bin/env python3
"""The larger training, for a machine with a CUDA GPU: one prepared run that trains and evaluates.

    python scripts/train_gpu.py [--size full|quick|budget|smoke] [--work DIR] [--realdata DIR]
                                [--device auto|cpu|cuda|cuda:N] [--pack PACK [--minutes M]]

It runs the recipe of ``handreader train`` (:mod:`training.pipeline`) with more scenes,
more procedural index crops and more epochs than fit a CPU's time, on the GPU, then reads
the held-out synthetic scenes (and, with ``--realdata``, the four ``realdata`` folders) with the
new models and with the shipped ones in the same run, and writes the figures side by side to
``WORK/report.json`` and ``WORK/report.md``. The new models go to ``WORK/models``: the shipped
``models/`` is never overwritten; ship by copying after reading the report (and running
``benchmarks/bench_reader.py --models WORK/models`` on the target CPU: the speed targets are a
CPU's).

Sizes (one GPU; the scenes are drawn on every core first):

* ``full``: 24,000 table scenes, 3,000 close-ups, 40,000 one-card scenes, 150,000 procedural
  index crops; detector 30 + 10 epochs, index classifier 30 + 6, whole-card classifier 24.
* ``quick``: 9,000 / 1,500 / 16,000 / 50,000; 10 + 3, 12 + 3, 10 (a run of minutes).
* ``budget``: 8,000 / 1,000 / 8,000 / 12,000; 12 + 4, 12 + 3, 8; sized to end in 10 minutes on
  one H200 with 16 cores (an estimate), scaled by ``--minutes``. The default with ``--pack``.
* ``smoke``: a handful of scenes and one epoch each, to check the script itself (CI runs it on
  the CPU).

Every size but ``smoke`` adds one casino scene (``datasets/casino.yaml``) for every four table
scenes to the detector's and the verifier's training data.

With ``--pack PACK`` (:mod:`training.pack`) the scenes are drawn from the deck renders and fonts
of a training pack, unpacked into ``WORK/cache``: for a machine without the card art and
without network. Such a run goes on the CPU when torch sees no GPU; ``WORK/run.json`` keeps its
counts, so that a rerun resumes it.

With ``--crops BUNDLE`` it trains the index classifier alone, from a crop bundle packed on
another machine (:mod:`training.crop_bundle`): for a machine with a CUDA GPU that has no card
art, no fonts and no network. The bundle's ``valid`` part chooses the best epoch; ``--minutes``
sizes the epochs to end within that many minutes (a timed probe of the steps first,
``--epochs`` the most);
``--widths``, ``--strided`` (blocks that halve the map with a strided convolution instead of
max pooling: fewer products, the same weights), ``--seed``, ``--learning-rate``, ``--batch``,
``--shape-jitter`` and ``--init`` (fine-tune from a checkpoint) set the run; ``--teacher ONNX``
distils it from that classifier's readings of the training crops (:mod:`training.distill`).
It writes ``WORK/classifier_best.pt`` (weights), ``classifier_last.pt`` (resumable) and
``WORK/crops-report.json``; export and quantize where the shipped models are made
(``--export``, or ``training.classifier.export_classifier``).

A rerun with the same ``--work`` resumes (scenes kept, checkpoints resumed). With ``--realdata``
the ``crops`` folder's ``split: train`` photos also train the index classifier, as in the
shipped recipe; its ``split: valid`` ones are only read. Needs the train extra
(``pip install -e '.[train]'``) and the card art (``scripts/install-card-art``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from training.classifier import parse_widths  # noqa: E402
from training.pipeline import TrainingPlan  # noqa: E402

PRESETS: dict[str, dict[str, Any]] = {
    "full": {
        "train_scenes": 24000,
        "closeup_scenes": 3000,
        "card_scenes": 40000,
        "glyph_crops": 150000,
        "detector_epochs": 30,
        "detector_finetune_epochs": 10,
        "detector_batch": 128,
        "classifier_epochs": 30,
        "classifier_finetune_epochs": 6,
        "card_epochs": 24,
        "verifier_scenes": 12000,
        "verifier_epochs": 12,
        "casino_scenes": 6000,
    },
    "quick": {
        "train_scenes": 9000,
        "closeup_scenes": 1500,
        "card_scenes": 16000,
        "glyph_crops": 50000,
        "detector_epochs": 10,
        "detector_finetune_epochs": 3,
        "detector_batch": 128,
        "classifier_epochs": 12,
        "classifier_finetune_epochs": 3,
        "card_epochs": 10,
        "verifier_scenes": 3000,
        "verifier_epochs": 6,
        "casino_scenes": 2250,
    },
    "budget": {
        "train_scenes": 8000,
        "holdout_scenes": 300,
        "closeup_scenes": 1000,
        "card_scenes": 8000,
        "glyph_crops": 12000,
        "detector_epochs": 12,
        "detector_finetune_epochs": 4,
        "detector_batch": 128,
        "classifier_epochs": 12,
        "classifier_finetune_epochs": 3,
        "card_epochs": 8,
        "verifier_scenes": 2000,
        "verifier_epochs": 6,
        "casino_scenes": 2000,
    },
    "smoke": {
        "train_scenes": 6,
        "holdout_scenes": 3,
        "closeup_scenes": 2,
        "card_scenes": 3,
        "glyph_crops": 20,
        "detector_epochs": 1,
        "detector_finetune_epochs": 1,
        "detector_imgsz": 160,
        "detector_batch": 2,
        "classifier_epochs": 1,
        "classifier_finetune_epochs": 1,
        "classifier_widths": (8, 16, 16, 24),
        "card_epochs": 1,
        "verifier_scenes": 3,
        "verifier_epochs": 1,
        "casino_scenes": 2,
        # scenes drawn in this process: a test process that already ran torch must not fork
        # the generator's workers (a forked child can wait forever on a lock of torch's threads)
        "workers": 1,
    },
}
"""Each size's changes to :class:`TrainingPlan`'s defaults (the shipped CPU recipe)."""

REALDATA_ROWS = (
    # (row name, folder, split)
    ("realdata singles", "singles", None),
    ("realdata scans", "scans", None),
    ("realdata pinochle (rank only)", "pinochle", None),
    ("realdata crops [valid]", "crops", "valid"),
)


BUDGET_MINUTES = 10.0
"""The minutes the ``budget`` size is sized for on one H200 with 16 cores: an estimate (scenes
drawn at about 15 a second a core, the networks' epochs from their CPU timings), not a
measurement on such a machine."""

SCALED_BY_MINUTES = (
    "train_scenes",
    "closeup_scenes",
    "card_scenes",
    "glyph_crops",
    "verifier_scenes",
    "casino_scenes",
)
"""The ``budget`` size's counts that ``--minutes`` scales (the epochs stay)."""


def budget_counts(size: str, minutes: float | None) -> dict[str, Any]:
    """The size's changes to the plan, the ``budget`` size's scene and crop counts scaled by
    ``minutes`` / :data:`BUDGET_MINUTES` (at least 1 each)."""
    counts = dict(PRESETS[size])
    if minutes is not None and size == "budget":
        factor = minutes / BUDGET_MINUTES
        for key in SCALED_BY_MINUTES:
            counts[key] = max(1, round(counts[key] * factor))
    return counts


def plan_for(
    size: str,
    work: Path,
    realdata: Path | None,
    device: str,
    counts: dict[str, Any] | None = None,
) -> TrainingPlan:
    """The training plan of a size (or of ``counts``, a size's changes as
    :func:`budget_counts` makes them), its folders under ``work``."""
    photos = (realdata / "crops" / "manifest.jsonl",) if realdata else ()
    changes = dict(PRESETS[size] if counts is None else counts)
    if "classifier_widths" in changes:
        changes["classifier_widths"] = tuple(changes["classifier_widths"])
    return TrainingPlan(
        work_dir=work,
        models_dir=work / "models",
        train_config=ROOT / "datasets" / "scenes.yaml",
        holdout_config=ROOT / "datasets" / "holdout.yaml",
        closeup_config=ROOT / "datasets" / "closeups.yaml",
        card_config=ROOT / "datasets" / "cards.yaml",
        verifier_config=ROOT / "datasets" / "verifier.yaml",
        casino_config=ROOT / "datasets" / "casino.yaml",
        photo_manifests=photos,
        device=device,
        **changes,
    )


CONTROL_START = 1_000_000
"""The first scene of ``datasets/scenes.yaml`` drawn for the control row: far past any scene a
recipe trains on (the full size draws 24,000). ``handreader synth --config
datasets/scenes.yaml --start 1000000 --count 400`` draws the same scenes by hand."""

HELD_OUT_ROW = "held-out synthetic decks"
CONTROL_ROW = "training decks, unseen scenes (control)"
TRAINED_ROW = "this run's training scenes"


def evaluation_rows(
    work: Path, realdata: Path | None, sample: int | None = None
) -> list[tuple[str, Path, str | None]]:
    """(name, manifest, split) of every row of the report: the held-out scenes the training
    drew (their manifest written here); with ``sample``, the control scenes (``WORK/
    scenes-control``, from ``CONTROL_START``) and the first ``sample`` training scenes, where
    they exist;
    then the realdata folders that exist.

    The three synthetic rows tell where a shortfall on the held-out decks comes from: far
    under the control, the models do not carry to decks they never saw; the control far
    under the training scenes, they do not carry to new scenes; all three alike, the models
    fit the scenes no better than that (see :func:`diagnosis`)."""
    from vision.evaluate import scenes_manifest

    holdout = work / "scenes-holdout"
    rows: list[tuple[str, Path, str | None]] = [
        (HELD_OUT_ROW, scenes_manifest(holdout, holdout / "manifest" / "manifest.jsonl"), None)
    ]
    if sample is not None:
        for name, scenes in (
            (CONTROL_ROW, work / "scenes-control"),
            (TRAINED_ROW, work / "scenes-train"),
        ):
            if (scenes / "meta").is_dir():
                sampled = scenes_manifest(scenes, scenes / "manifest" / "sample.jsonl", sample)
                rows.append((name, sampled, None))
    if realdata is not None:
        for name, folder, split in REALDATA_ROWS:
            manifest = realdata / folder / "manifest.jsonl"
            if manifest.is_file():
                rows.append((name, manifest, split))
    return rows


def evaluate(models: Path, rows: list[tuple[str, Path, str | None]]) -> dict[str, Any]:
    """Every row's figures with the models in ``models`` (``handreader eval``'s summary)."""
    from vision.evaluate import load_manifest, score_manifest
    from vision.reader import Reader

    reader = Reader.load(models)
    figures: dict[str, Any] = {}
    for name, manifest, split in rows:
        totals = score_manifest(load_manifest(manifest, split), reader.read, progress=name)
        figures[name] = {"manifest": str(manifest), "split": split, **totals.summary(top=5)}
    return figures


def report_markdown(report: dict[str, Any]) -> str:
    """The report as a Markdown table: F1 (and top-1 where there are one-card photos) of the
    shipped and the new models, row by row."""
    lines = [
        f"# GPU training, size {report['size']}, on {report['device']}",
        "",
        f"Training {report['train_minutes']:.1f} min, evaluation {report['eval_minutes']:.1f} "
        f"min; new models in `{report['models']}`.",
        "",
        "| data | photos | shipped F1 | new F1 | shipped top-1 | new top-1 |",
        "|---|---|---|---|---|---|",
    ]
    for name, new in report["new"].items():
        old = report["shipped"].get(name, {})

        def cell(figures: dict[str, Any], key: str) -> str:
            value = figures.get(key)
            return "" if value is None else f"{value:.4f}"

        lines.append(
            f"| {name} | {new['photos']} | {cell(old, 'f1')} | {cell(new, 'f1')} | "
            f"{cell(old, 'top1')} | {cell(new, 'top1')} |"
        )
    if report.get("pack"):
        pack = report["pack"]
        lines += [
            "",
            f"Drawn from the pack `{pack['file']}` ({pack['bytes'] / 2**20:.1f} MiB, "
            f"{pack['decks']} decks, unpacked in {pack['unpack_seconds']} s).",
        ]
    if report.get("counts"):
        shown = ", ".join(f"{key} {value}" for key, value in report["counts"].items())
        lines += ["", f"Plan: {shown}."]
    sizes = ", ".join(f"{file} {size / 1e6:.1f} MB" for file, size in report["files"].items())
    lines += ["", f"Files: {sizes} (each must stay under 15 MB to ship)."]
    for models in ("new", "shipped"):
        # the run's training scenes are the new models' own, not (all) the shipped ones'
        verdict = diagnosis(report[models], trained_on=models == "new")
        if verdict:
            lines += ["", f"The {models} models: {verdict}"]
    return "\n".join(lines) + "\n"


def diagnosis(figures: dict[str, Any], trained_on: bool = True, margin: float = 0.01) -> str:
    """Where one set of models' held-out shortfall comes from, from the F1 of the three
    synthetic rows (an empty string without the control row); the training scenes' row only
    when ``trained_on`` (the models were trained on them). A gap counts from ``margin``."""
    if HELD_OUT_ROW not in figures or CONTROL_ROW not in figures:
        return ""
    held_out, control = figures[HELD_OUT_ROW]["f1"], figures[CONTROL_ROW]["f1"]
    trained = figures.get(TRAINED_ROW, {}).get("f1") if trained_on else None
    said = f"held-out F1 {held_out:.4f}, control {control:.4f}" + (
        "" if trained is None else f", training scenes {trained:.4f}"
    )
    if control - held_out >= margin:
        why = "the held-out decks are read worse than the training decks (more decks would help)"
    elif trained is None:
        why = "the held-out decks are read as well as the training decks: no gap of decks"
    elif trained - control >= margin:
        why = "new scenes are read worse than the training scenes (more scenes would help)"
    else:
        why = (
            "the scenes trained on are read no better than new ones, of new decks or not "
            "(longer training or larger models would help)"
        )
    return f"{said}: {why}."


def epochs_within(
    minutes: float, step_seconds: float, steps_per_epoch: int, most: int, share: float = 0.85
) -> int:
    """How many epochs of ``steps_per_epoch`` steps fit in ``share`` of ``minutes`` at
    ``step_seconds`` a step (at least 1, at most ``most``)."""
    per_epoch = max(step_seconds * steps_per_epoch, 1e-9)
    return max(1, min(most, int(minutes * 60 * share / per_epoch)))


def train_from_crops(args: argparse.Namespace, device: str) -> dict[str, Any]:
    """The ``--crops`` run: the index classifier alone, from a bundle; returns its report."""
    import math

    from training.classifier import (
        ClassifierTraining,
        export_classifier,
        fit_classifier,
        quantize_classifier,
        seconds_per_step,
    )
    from training.crop_bundle import load_bundle

    started = time.monotonic()
    crops, labels, valid_crops, valid_labels = load_bundle(args.crops)
    settings = ClassifierTraining(
        scene_dirs=(),
        run_dir=args.work,
        epochs=args.epochs,
        batch=args.batch,
        learning_rate=args.learning_rate,
        seed=args.seed,
        init_weights=args.init,
        device=device,
        widths=args.widths,
        strided=args.strided,
        shape_jitter=args.shape_jitter,
    )
    teacher = None
    if args.teacher is not None:
        from training.distill import teacher_logits

        teacher = teacher_logits(args.teacher, crops)
    steps_per_epoch = math.ceil(len(labels) / args.batch)
    step_seconds = None
    epochs = args.epochs
    if args.minutes is not None and not (args.work / "classifier_last.pt").is_file():
        step_seconds = seconds_per_step(crops, labels, settings)
        epochs = epochs_within(args.minutes, step_seconds, steps_per_epoch, args.epochs)
    elif (args.work / "crops-report.json").is_file():
        # a resumed run keeps the epoch count its schedule was made for
        epochs = json.loads((args.work / "crops-report.json").read_text())["epochs"]
    report: dict[str, Any] = {
        "bundle": str(args.crops),
        "device": device,
        "train_crops": len(labels),
        "valid_crops": len(valid_labels),
        "widths": list(args.widths),
        "strided": args.strided,
        "teacher": None if args.teacher is None else str(args.teacher),
        "seed": args.seed,
        "learning_rate": args.learning_rate,
        "batch": args.batch,
        "shape_jitter": args.shape_jitter,
        "init": None if args.init is None else str(args.init),
        "step_seconds": step_seconds,
        "epochs": epochs,
    }
    args.work.mkdir(parents=True, exist_ok=True)

    def save() -> None:
        (args.work / "crops-report.json").write_text(json.dumps(report, indent=2) + "\n")

    save()  # the epoch count, for a rerun to resume with
    print(
        f"{len(labels)} train crops, {len(valid_labels)} valid; {epochs} epochs"
        + (f" ({step_seconds * 1000:.1f} ms a step)" if step_seconds else ""),
        flush=True,
    )
    validation = (valid_crops, valid_labels) if len(valid_labels) else None
    best = fit_classifier(crops, labels, replace(settings, epochs=epochs), validation, teacher)
    report["checkpoint"] = str(best)
    report["train_minutes"] = (time.monotonic() - started) / 60
    if args.export:
        float_model = export_classifier(best, args.work / "models" / "classifier-float.onnx")
        quantize_classifier(float_model, args.work / "models" / "classifier.onnx", crops)
        report["models"] = str(args.work / "models")
    save()
    return report


def use_pack(pack: Path, work: Path) -> dict[str, Any]:
    """Unpack ``pack`` into ``WORK/cache`` (verified; renders already there kept) and draw
    from it: ``HANDREADER_CACHE`` is set for this process and the scene workers it starts.
    Returns what the report says of the pack."""
    from training.pack import draw_from, unpack

    cache = work / "cache"
    began = time.monotonic()
    manifest = unpack(pack, cache)
    draw_from(cache)
    return {
        "file": str(pack),
        "bytes": pack.stat().st_size,
        "decks": len(manifest["decks"]),
        "unpack_seconds": round(time.monotonic() - began, 1),
    }


def run_counts(work: Path, size: str, minutes: float | None) -> dict[str, Any]:
    """The run's scene counts and epochs: those ``WORK/run.json`` recorded when the run began
    (a rerun resumes the same run, whatever its ``--minutes``), else the size's (scaled by
    ``minutes``, recorded there)."""
    record = work / "run.json"
    if record.is_file():
        saved = json.loads(record.read_text())
        if saved.get("size") == size:
            counts: dict[str, Any] = saved["counts"]
            return counts
    counts = budget_counts(size, minutes)
    work.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"size": size, "minutes": minutes, "counts": counts}) + "\n")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Train the detector and the classifiers at a GPU's scale, then read the "
        "held-out scenes (and realdata) with the new and the shipped models.",
    )
    parser.add_argument(
        "--size", choices=sorted(PRESETS), help="full (the default), or budget with --pack"
    )
    parser.add_argument(
        "--pack", type=Path, help="a training pack (python -m training.pack build): draw from it"
    )
    parser.add_argument("--work", type=Path, default=ROOT / "runs-gpu")
    parser.add_argument(
        "--realdata", type=Path, help="the realdata folder (crops' train split is trained on)"
    )
    parser.add_argument("--device", default="auto", help="auto (the default), cpu, cuda or cuda:N")
    parser.add_argument(
        "--shipped", type=Path, default=ROOT / "models", help="the models to compare against"
    )
    crops = parser.add_argument_group("the index classifier alone, from a crop bundle")
    crops.add_argument("--crops", type=Path, help="a crop bundle (training.crop_bundle)")
    crops.add_argument(
        "--minutes",
        type=float,
        help="the run's budget: scales the budget size's scenes (or, with --crops, the epochs)",
    )
    crops.add_argument("--epochs", type=int, default=40, help="epochs (the most, with --minutes)")
    crops.add_argument("--widths", default="32,64,128,128", help="the network's channels")
    crops.add_argument(
        "--strided",
        type=int,
        default=0,
        help="blocks, from the first, that halve the map with a strided convolution (0-3)",
    )
    crops.add_argument("--teacher", type=Path, help="distil from this ONNX classifier")
    crops.add_argument("--seed", type=int, default=0)
    crops.add_argument("--learning-rate", type=float, default=0.003)
    crops.add_argument("--batch", type=int, default=256)
    crops.add_argument("--shape-jitter", type=float, default=0.5)
    crops.add_argument("--init", type=Path, help="fine-tune from this checkpoint")
    crops.add_argument("--export", action="store_true", help="export and quantize to ONNX too")
    args = parser.parse_args(argv)
    try:
        args.widths = parse_widths(args.widths)
    except ValueError as error:
        parser.error(str(error))

    if args.crops is None:
        if args.size is None:
            args.size = "budget" if args.pack is not None else "full"
        if args.minutes is not None and (args.minutes <= 0 or args.size != "budget"):
            parser.error("--minutes must be positive and goes with --size budget (or --crops)")
        if args.pack is not None and not args.pack.is_file():
            parser.error(f"--pack {str(args.pack)!r}: no such file")

    from training.fitting import resolve_device

    try:
        device = resolve_device(args.device)
    except ValueError as error:
        parser.error(str(error))
    if args.crops is not None:
        if args.epochs < 1 or args.batch < 1 or (args.minutes is not None and args.minutes <= 0):
            parser.error("--epochs, --batch and --minutes must be positive")
        if not 0 <= args.shape_jitter <= 1:
            parser.error(f"--shape-jitter {args.shape_jitter}: expected 0..1")
        if args.init is not None and not args.init.is_file():
            parser.error(f"--init {str(args.init)!r}: no such checkpoint")
        if not 0 <= args.strided <= 3:
            parser.error(f"--strided {args.strided}: expected 0 to 3 blocks")
        if args.teacher is not None and not args.teacher.is_file():
            parser.error(f"--teacher {str(args.teacher)!r}: no such ONNX classifier")
        try:
            crops_report = train_from_crops(args, device)
        except ValueError as error:
            parser.error(str(error))
        print(json.dumps(crops_report, indent=2))
        return 0
    cpu_job = args.pack is not None  # a pack's run may go on in the background on a CPU
    if device == "cpu" and args.size != "smoke" and args.device == "auto" and not cpu_job:
        parser.error(
            f"--size {args.size} is sized for a GPU and torch sees none; pass --device cpu "
            "to run it on the CPU anyway (days), or use handreader train's CPU recipe"
        )
    if args.realdata is not None and not (args.realdata / "crops" / "manifest.jsonl").is_file():
        parser.error(f"--realdata {str(args.realdata)!r}: no crops/manifest.jsonl in it")

    from training.pipeline import draw_scenes, run_training

    started = time.monotonic()
    pack: dict[str, Any] | None = None
    if args.pack is not None:
        try:
            pack = use_pack(args.pack, args.work)
        except ValueError as error:
            parser.error(str(error))
    counts = run_counts(args.work, args.size, args.minutes)
    plan = plan_for(args.size, args.work, args.realdata, device, counts)
    if device == "cpu" and args.size != "smoke":
        print(
            f"size {args.size} on the CPU: hours; rerun with the same --work to resume",
            flush=True,
        )
    manifest = run_training(plan)
    trained = time.monotonic()
    control = args.work / "scenes-control"
    draw_scenes(plan, plan.train_config, control, plan.holdout_scenes, first=CONTROL_START)
    rows = evaluation_rows(args.work, args.realdata, sample=plan.holdout_scenes)
    report: dict[str, Any] = {
        "size": args.size,
        "device": device,
        "models": str(plan.models_dir),
        "manifest": str(manifest),
        "new": evaluate(plan.models_dir, rows),
        "shipped": evaluate(args.shipped, rows),
        "files": {p.name: p.stat().st_size for p in sorted(plan.models_dir.glob("*.onnx"))},
        "train_minutes": (trained - started) / 60,
        "counts": counts,
        "pack": pack,
    }
    report["eval_minutes"] = (time.monotonic() - trained) / 60
    (args.work / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    text = report_markdown(report)
    (args.work / "report.md").write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
