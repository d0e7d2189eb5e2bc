#!/usr/bin/env python3
"""The larger training, for a machine with a GPU: one prepared run that trains and evaluates.

    python scripts/train_gpu.py [--size full|quick|smoke] [--work DIR] [--realdata DIR]
                                [--device auto|cpu|cuda|cuda:N]

It runs the recipe of ``handreader train`` (:mod:`vision.train.pipeline`) with more scenes,
more procedural index crops and more epochs than a 2-core CPU allows, on the GPU, then reads
the held-out synthetic scenes (and, with ``--realdata``, the four ``realdata`` folders) with the
new models and with the shipped ones in the same run, and writes the figures side by side to
``WORK/report.json`` and ``WORK/report.md``. The new models go to ``WORK/models``: the shipped
``models/`` is never overwritten; ship by copying after reading the report (and running
``benchmarks/bench_reader.py --models WORK/models`` on the target CPU: the speed targets are a
CPU's).

Sizes (one GPU; the scenes are drawn on every core first):

* ``full``: 24,000 table scenes, 3,000 close-ups, 40,000 one-card scenes, 150,000 procedural
  index crops; detector 30 + 10 epochs, index classifier 30 + 6, whole-card classifier 24.
* ``quick``: 9,000 / 1,500 / 16,000 / 50,000; 10 + 3, 12 + 3, 10 (for a lease of minutes).
* ``smoke``: a handful of scenes and one epoch each, to check the script itself (CI runs it on
  the CPU).

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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from vision.train.pipeline import TrainingPlan  # noqa: E402

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


def plan_for(size: str, work: Path, realdata: Path | None, device: str) -> TrainingPlan:
    """The training plan of a size, its folders under ``work``."""
    photos = (realdata / "crops" / "manifest.jsonl",) if realdata else ()
    return TrainingPlan(
        work_dir=work,
        models_dir=work / "models",
        train_config=ROOT / "datasets" / "scenes.yaml",
        holdout_config=ROOT / "datasets" / "holdout.yaml",
        closeup_config=ROOT / "datasets" / "closeups.yaml",
        card_config=ROOT / "datasets" / "cards.yaml",
        photo_manifests=photos,
        device=device,
        **PRESETS[size],
    )


def evaluation_rows(work: Path, realdata: Path | None) -> list[tuple[str, Path, str | None]]:
    """(name, manifest, split) of every row of the report: the held-out scenes the training
    drew (their manifest written here), then the realdata folders that exist."""
    from vision.evaluate import scenes_manifest

    holdout = work / "scenes-holdout"
    rows: list[tuple[str, Path, str | None]] = [
        (
            "held-out synthetic decks",
            scenes_manifest(holdout, holdout / "manifest" / "manifest.jsonl"),
            None,
        )
    ]
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
    sizes = ", ".join(f"{file} {size / 1e6:.1f} MB" for file, size in report["files"].items())
    lines += ["", f"Files: {sizes} (each must stay under 15 MB to ship)."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Train the detector and the classifiers at a GPU's scale, then read the "
        "held-out scenes (and realdata) with the new and the shipped models.",
    )
    parser.add_argument("--size", choices=sorted(PRESETS), default="full")
    parser.add_argument("--work", type=Path, default=ROOT / "runs-gpu")
    parser.add_argument(
        "--realdata", type=Path, help="the realdata folder (crops' train split is trained on)"
    )
    parser.add_argument(
        "--device", default="auto", help="auto (the default), cpu, cuda or cuda:N"
    )
    parser.add_argument(
        "--shipped", type=Path, default=ROOT / "models", help="the models to compare against"
    )
    args = parser.parse_args(argv)

    from vision.train.fitting import resolve_device

    try:
        device = resolve_device(args.device)
    except ValueError as error:
        parser.error(str(error))
    if device == "cpu" and args.size != "smoke" and args.device == "auto":
        parser.error(
            f"--size {args.size} is sized for a GPU and torch sees none; pass --device cpu "
            "to run it on the CPU anyway (days), or use handreader train's CPU recipe"
        )
    if args.realdata is not None and not (args.realdata / "crops" / "manifest.jsonl").is_file():
        parser.error(f"--realdata {str(args.realdata)!r}: no crops/manifest.jsonl in it")

    from vision.train.pipeline import run_training

    plan = plan_for(args.size, args.work, args.realdata, device)
    started = time.monotonic()
    manifest = run_training(plan)
    trained = time.monotonic()
    rows = evaluation_rows(args.work, args.realdata)
    report: dict[str, Any] = {
        "size": args.size,
        "device": device,
        "models": str(plan.models_dir),
        "manifest": str(manifest),
        "new": evaluate(plan.models_dir, rows),
        "shipped": evaluate(args.shipped, rows),
        "files": {p.name: p.stat().st_size for p in sorted(plan.models_dir.glob("*.onnx"))},
        "train_minutes": (trained - started) / 60,
    }
    report["eval_minutes"] = (time.monotonic() - trained) / 60
    (args.work / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    text = report_markdown(report)
    (args.work / "report.md").write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
