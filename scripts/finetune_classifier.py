#!/usr/bin/env python3
"""Fine-tune the shipped index classifier from a crop bundle: several runs side by side on one
GPU, their last weights averaged, exported and quantized as shipped.

    python scripts/finetune_classifier.py --crops BUNDLE --work W \\
        --run 5:0.001:0.5 --run 6:0.001:0.7 --run 7:0.0007:0.5 [--epochs 10] [--minutes M] \\
        [--start models/classifier.onnx | --init CHECKPOINT] [--device auto] [--export]

Each ``--run SEED:LEARNING_RATE:SHAPE_JITTER`` is one ``scripts/train_gpu.py --crops`` run in
``W/run-SEED`` (its log beside it, ``W/run-SEED.log``), all started at once: the network is
small, so one GPU trains several at about the speed of one. They start from the same
checkpoint: ``--init``, or the float network read back from the int8 ONNX ``--start`` (the
shipped classifier by default; :func:`training.recover.classifier_checkpoint_from_onnx`, its
batch norms measured on 4,000 of the bundle's training crops), written to ``W/start.pt``.

When every run has ended, the last epoch's weights of those that finished are averaged
(:func:`training.classifier.average_checkpoints`) into ``W/averaged.pt``; with ``--export``
the average is exported to ``W/models/classifier-float.onnx`` and quantized to int8
(``W/models/classifier.onnx``, calibrated on 512 of the bundle's training crops, 7-bit
weights). ``W/finetune.json`` records the runs, their epochs and held-out crop accuracy. Read
the result beside the shipped models before shipping it (``python -m training.round
--evaluate``: every set and the gate). A rerun with the same ``--work`` resumes each run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@dataclass(frozen=True)
class Run:
    """One fine-tune: its seed, starting learning rate and share of shape-jittered crops."""

    seed: int
    learning_rate: float
    shape_jitter: float


def parse_run(text: str) -> Run:
    """``SEED:LEARNING_RATE:SHAPE_JITTER``; ValueError naming the text otherwise."""
    fields = text.split(":")
    try:
        if len(fields) != 3:
            raise ValueError
        run = Run(int(fields[0]), float(fields[1]), float(fields[2]))
    except ValueError:
        raise ValueError(
            f"--run {text!r}: expected SEED:LEARNING_RATE:SHAPE_JITTER, e.g. 5:0.001:0.5"
        ) from None
    if run.learning_rate <= 0 or not 0 <= run.shape_jitter <= 1:
        raise ValueError(f"--run {text!r}: the learning rate must be positive, the jitter 0..1")
    return run


def run_command(
    run: Run, crops: Path, work: Path, start: Path, widths: Any, args: argparse.Namespace
) -> list[str]:
    """The ``train_gpu.py --crops`` command line of ``run``, fine-tuning from ``start`` (a
    checkpoint of ``widths``)."""
    command = [
        sys.executable, str(ROOT / "scripts" / "train_gpu.py"), "--crops", str(crops),
        "--work", str(work / f"run-{run.seed}"), "--init", str(start),
        "--widths", ",".join(str(int(w)) for w in widths), "--seed", str(run.seed),
        "--learning-rate", str(run.learning_rate), "--shape-jitter", str(run.shape_jitter),
        "--epochs", str(args.epochs), "--device", args.device,
    ]  # fmt: skip
    if args.minutes is not None:
        command += ["--minutes", str(args.minutes)]
    return command


def start_checkpoint(args: argparse.Namespace, train_crops: Any) -> Path:
    """``--init``, or ``W/start.pt`` read back from ``--start`` (made once)."""
    if args.init is not None:
        return Path(args.init)
    out = Path(args.work) / "start.pt"
    if not out.is_file():
        import numpy as np

        from training.recover import classifier_checkpoint_from_onnx

        sample = np.random.default_rng(0).permutation(len(train_crops))[:4000]
        classifier_checkpoint_from_onnx(Path(args.start), out, train_crops[sample])
    return out


def finish(runs: list[Run], work: Path, export: bool, train_crops: Any) -> dict[str, Any]:
    """Average the finished runs' last weights (and export them); the record of the runs."""
    import torch

    from training.classifier import average_checkpoints, export_classifier, quantize_classifier

    record: dict[str, Any] = {"runs": []}
    finished = []
    for run in runs:
        last = work / f"run-{run.seed}" / "classifier_last.pt"
        entry: dict[str, Any] = {
            "seed": run.seed,
            "learning_rate": run.learning_rate,
            "shape_jitter": run.shape_jitter,
        }
        report = work / f"run-{run.seed}" / "crops-report.json"
        planned = json.loads(report.read_text())["epochs"] if report.is_file() else None
        if last.is_file():
            state = torch.load(last, map_location="cpu", weights_only=False)
            entry.update(
                epochs=int(state["epoch"]) + 1,
                planned=planned,
                held_out_accuracy=float(state["accuracy"]),
            )
            if planned is None or entry["epochs"] >= planned:
                finished.append(last)
        record["runs"].append(entry)
    if not finished:
        raise ValueError("no run finished its epochs: nothing to average")
    averaged = average_checkpoints(finished, work / "averaged.pt")
    record["averaged"] = [str(path) for path in finished]
    if export:
        models = work / "models"
        float_model = export_classifier(averaged, models / "classifier-float.onnx")
        quantize_classifier(float_model, models / "classifier.onnx", train_crops)
        for leftover in models.glob("*.prepared.onnx"):
            leftover.unlink()
        record["models"] = str(models)
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Fine-tune the index classifier from a crop bundle in parallel runs, "
        "then average them."
    )
    parser.add_argument("--crops", type=Path, required=True, help="a crop bundle")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--run", action="append", required=True, help="SEED:RATE:JITTER")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--minutes", type=float, help="each run's budget (sizes its epochs)")
    parser.add_argument(
        "--start", type=Path, default=ROOT / "models" / "classifier.onnx", help="int8 ONNX"
    )
    parser.add_argument("--init", type=Path, help="start from this checkpoint instead")
    parser.add_argument("--device", default="auto", help="auto (the default), cpu, cuda...")
    parser.add_argument("--export", action="store_true", help="export and quantize the average")
    args = parser.parse_args(argv)
    try:
        runs = [parse_run(text) for text in args.run]
        if len({run.seed for run in runs}) != len(runs):
            raise ValueError("two --run share a seed (each run's folder is named by it)")
        if args.epochs < 1 or (args.minutes is not None and args.minutes <= 0):
            raise ValueError("--epochs and --minutes must be positive")
        if args.init is not None and not args.init.is_file():
            raise ValueError(f"--init {str(args.init)!r}: no such checkpoint")
        if args.init is None and not args.start.is_file():
            raise ValueError(f"--start {str(args.start)!r}: no such model")
        from training.crop_bundle import load_bundle

        train_crops = load_bundle(args.crops)[0]
    except ValueError as error:
        parser.error(str(error))
    args.work.mkdir(parents=True, exist_ok=True)
    start = start_checkpoint(args, train_crops)
    started = time.monotonic()
    import torch

    widths = torch.load(start, map_location="cpu", weights_only=False)["widths"]  # read once
    processes = []
    for run in runs:
        log = (args.work / f"run-{run.seed}.log").open("w")
        command = run_command(run, args.crops, args.work, start, widths, args)
        processes.append((run, subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)))
    for run, process in processes:
        if process.wait() != 0:
            print(f"run {run.seed} ended with status {process.returncode}", flush=True)
    try:
        record = finish(runs, args.work, args.export, train_crops)
    except ValueError as error:
        print(f"finetune_classifier: {error}", file=sys.stderr)
        return 1
    record["minutes"] = round((time.monotonic() - started) / 60, 2)
    (args.work / "finetune.json").write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
