"""A training round: fine-tune the shipped models on real photos and new synthetic scenes
within a time budget, evaluate them beside the shipped ones, and let a gate decide.

``handreader train --round --realdata REALDATA --work W`` runs the stages below; each is
cached in ``W`` (a rerun resumes: scenes kept, the detector from its last epoch, the
classifiers from their checkpoints), and the new models go to ``W/models``, never over
``models/``. ``W/report.md`` and ``W/report.json`` hold the figures of both sets of models and
the gate's verdict; ``--promote`` copies the new models into ``models/`` when the gate passes.

1. **Data.** Synthetic scenes of the round's mix (``datasets/scenes.yaml`` tables,
   ``casino.yaml`` casino tables, dealer-side cameras and tight fans, close-ups) drawn on every
   core; the ``split: train`` photos of ``REALDATA/boxes`` (their index boxes) and of
   ``REALDATA/tables`` (pseudo-boxes from the shipped reader, :mod:`training.real_photos`),
   each with webcam-like degraded copies (oversampling real against synthetic).
2. **Detector.** The shipped ONNX read back into a checkpoint
   (:func:`training.recover.detector_checkpoint_from_onnx`) and fine-tuned on all of it.
3. **Index classifier** and 4. **index verifier**: see :mod:`training.round_crops`.
5. **Evaluation and gate**: see :mod:`training.round_report`.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from training.round_options import add_round_arguments, check_round_arguments, plan_changes
from training.round_plan import RoundPlan, log, pseudo_labelled

__all__ = [
    "RoundPlan",
    "add_round_arguments",
    "check_round_arguments",
    "plan_changes",
    "prepare_data",
    "pseudo_labelled",
    "train_round_detector",
]


def _draw(plan: RoundPlan, config: str, folder: Path, count: int, first: int) -> None:
    from training.synth.config import load_config
    from training.synth.generate import generate

    have = len(list((folder / "images").glob("*.jpg"))) if (folder / "images").is_dir() else 0
    if count > have:
        log(f"drawing {count - have} scenes of {config} into {folder.name}")
        generate(
            load_config(Path("datasets") / config),
            folder,
            count - have,
            start=first + have,
            workers=plan.workers,
            progress=False,
        )


def _boxes_photos(plan: RoundPlan) -> Iterator[tuple[str, NDArray[np.uint8], NDArray[np.float32]]]:
    from training.real_photos import read_images, train_photos

    assert plan.realdata is not None
    manifest = plan.realdata / "boxes" / "manifest.jsonl"
    for photo, image in read_images(train_photos(manifest)):
        yield f"boxes-{photo.image.stem}", image, photo.boxes_xyxy


def complete_pseudo_boxes(cards: list[str], found: list[str]) -> bool:
    """Whether a photo's pseudo-boxes can teach the detector: every labelled card has one and
    there are at least 1.5 boxes a card (most cards show two corners), so that few real
    indices are left unlabelled (the detector would learn them as background). A photo with
    no card (chips, backs) always can."""
    return all(card in found for card in cards) and len(found) >= 1.5 * len(cards)


def _tables_photos(
    plan: RoundPlan,
) -> Iterator[tuple[str, NDArray[np.uint8], NDArray[np.float32]]]:
    import cv2

    for row in json.loads(pseudo_labelled(plan).read_text()):
        if not complete_pseudo_boxes(row["cards"], row["positive_cards"]):
            continue
        image = cast("NDArray[np.uint8] | None", cv2.imread(row["image"], cv2.IMREAD_COLOR))
        if image is not None:
            boxes = np.array(row["positive_xyxy"], np.float32).reshape(-1, 4)
            yield f"tables-{Path(row['image']).stem}", image, boxes


def prepare_data(plan: RoundPlan) -> dict[str, Path]:
    """Draw the round's synthetic scenes and write its real photos as YOLO folders; returns
    the folders by name. Cached: a rerun writes only what is missing."""
    from training.real_photos import write_yolo_set

    work = plan.work_dir
    folders = {
        "tables": work / "scenes-tables",
        "casino": work / "scenes-casino",
        "closeups": work / "scenes-closeups",
        "val": work / "scenes-val",
        "verifier": work / "scenes-verifier",
    }
    _draw(plan, "scenes.yaml", folders["tables"], plan.table_scenes, plan.first_scene)
    _draw(plan, "casino.yaml", folders["casino"], plan.casino_scenes, plan.first_scene)
    _draw(plan, "closeups.yaml", folders["closeups"], plan.closeup_scenes, plan.first_scene)
    _draw(plan, "holdout.yaml", folders["val"], plan.val_scenes, plan.first_scene)
    if plan.verifier_epochs > 0:  # a round that keeps the verifier draws none of its scenes
        _draw(plan, "verifier.yaml", folders["verifier"], plan.verifier_scenes, plan.first_scene)
    # every scene is drawn before anything loads onnxruntime or torch: the generator's
    # workers are forked, and a fork of a process running their thread pools can hang
    _draw_eval_scenes(plan)
    if plan.realdata is not None:
        done = work / "real" / "done.json"
        folders["real"] = work / "real" / "detector"
        if not done.is_file():
            log("writing the real training photos (boxes/, tables/ pseudo-boxes)")
            counts = {
                "boxes": write_yolo_set(
                    _boxes_photos(plan), folders["real"], plan.real_copies, plan.seed
                ),
                "tables": write_yolo_set(
                    _tables_photos(plan), folders["real"], plan.real_copies, plan.seed + 1
                ),
            }
            done.write_text(json.dumps(counts))
    return folders


def _recovery_inputs(folder: Path, count: int, imgsz: int) -> NDArray[np.float32]:
    import cv2

    from vision.letterbox import letterbox

    images = []
    for path in sorted((folder / "images").glob("*.jpg"))[:count]:
        image = cast("NDArray[np.uint8] | None", cv2.imread(str(path), cv2.IMREAD_COLOR))
        if image is not None:
            images.append(letterbox(image, imgsz)[0][0])
    return np.stack(images)


def train_round_detector(plan: RoundPlan, folders: dict[str, Path]) -> Path:
    """Fine-tune the shipped detector on the round's data; returns ``W/models/detector.onnx``
    (exported once the fine-tune ends; a rerun resumes an interrupted fine-tune)."""
    from training.detector import DetectorTraining, export_detector, finetune_detector
    from training.fitting import resolve_device, ultralytics_device
    from training.recover import detector_checkpoint_from_onnx
    from training.round_crops import keep_shipped

    out = plan.work_dir / "models" / "detector.onnx"
    if out.is_file():
        return out
    if plan.detector_epochs == 0:
        return keep_shipped(plan, "detector.onnx")
    device = resolve_device(plan.device)
    start = plan.work_dir / "detector-start.pt"
    if not start.is_file():
        log("reading the shipped detector back from its ONNX")
        inputs = _recovery_inputs(folders["tables"], 48, plan.detector_imgsz)
        detector_checkpoint_from_onnx(plan.shipped_models / "detector.onnx", start, inputs)
    extra = tuple(
        folders[name] / "images" for name in ("casino", "closeups", "real") if name in folders
    )
    settings = DetectorTraining(
        train_images=folders["tables"] / "images",
        val_images=folders["val"] / "images",
        run_dir=plan.work_dir,
        imgsz=plan.detector_imgsz,
        batch=plan.detector_batch,
        extra_train_images=extra,
        device=ultralytics_device(device),
        workers=0,
        seed=plan.seed,
    )
    log(f"fine-tuning the detector for {plan.detector_epochs} epochs on {device}")
    weights = finetune_detector(
        settings,
        start,
        plan.detector_epochs,
        plan.detector_learning_rate,
        freeze=plan.detector_freeze,
    )
    last = weights.parent / "last.pt"
    return export_detector(last if last.is_file() else weights, plan.detector_imgsz, out)


def _draw_eval_scenes(plan: RoundPlan) -> dict[str, Path]:
    """Draw the held-out, casino held-out, dark-faced and other letters' scenes the report
    reads (from scene 0; those present are kept); returns their folders by set name."""
    folders = {}
    for name, config, count in (
        ("holdout", "holdout.yaml", plan.eval_scenes),
        ("casino_holdout", "casino-holdout.yaml", plan.eval_casino_scenes),
        ("dark_holdout", "dark-holdout.yaml", plan.eval_dark_scenes),
        *(
            (f"letters_{letters}", f"letters-{letters}.yaml", plan.eval_letter_scenes)
            for letters in ("french", "german", "russian")
        ),
    ):
        if count > 0:
            folders[name] = plan.work_dir / f"eval-{name}"
            _draw(plan, config, folders[name], count, 0)
    return folders


def _eval_sets(plan: RoundPlan) -> tuple[dict[str, Path], list[Any], Any]:
    """The round's synthetic evaluation sets, drawn once: manifests of the held-out, casino
    held-out, dark-faced held-out and other letters' scenes (legible cards, and every labelled
    one), card-free casino tables, and held-out crops of local decks' letters."""
    from training.glyph_crops import local_index_crops
    from training.round_report import card_free_config
    from training.synth.generate import scene_at
    from vision.evaluate import scenes_manifest

    manifests = {}
    for name, folder in _draw_eval_scenes(plan).items():
        manifests[name] = scenes_manifest(folder, folder / "manifest" / "manifest.jsonl")
        manifests[f"{name}_legible"] = scenes_manifest(
            folder, folder / "manifest" / "legible.jsonl", legible_only=True
        )
    config = card_free_config(Path("datasets") / "casino-holdout.yaml")
    tables = [scene_at(config, number).image for number in range(plan.card_free_tables)]
    local = None
    if plan.eval_local_crops > 0:
        local = local_index_crops(plan.eval_local_crops, seed=1_000_003)
    return manifests, tables, local


def _stage(plan: RoundPlan, name: str, work: Any) -> Any:
    """Run one stage, logging it and adding its seconds to ``W/timings.json``."""
    path = plan.work_dir / "timings.json"
    timings = json.loads(path.read_text()) if path.is_file() else {}
    log(f"stage {name}")
    started = time.perf_counter()
    result = work()
    timings[name] = round(timings.get(name, 0.0) + time.perf_counter() - started, 1)
    path.write_text(json.dumps(timings, indent=2))
    return result


def evaluate_candidate(plan: RoundPlan, candidate: Path) -> Path:
    """The round's evaluation and gate for a models folder made otherwise (a stage's models
    beside shipped ones, a GPU run's): ``candidate`` read beside ``plan.shipped_models`` on
    every set, the report written to ``W/report.md`` and ``W/report.json``; returns the
    JSON's path. The synthetic sets are drawn in ``W`` as a round draws them."""
    from training.round_report import evaluate_models, gate, write_report

    plan.work_dir.mkdir(parents=True, exist_ok=True)
    manifests, tables, local = _stage(plan, "eval-data", lambda: _eval_sets(plan))
    figures = _stage(
        plan,
        "evaluate",
        lambda: evaluate_models(
            {"shipped": plan.shipped_models, "round": candidate},
            plan.realdata,
            manifests,
            tables,
            local,
            log=log,
        ),
    )
    # a distilled or strided classifier is there to read as well, faster: no set need be better
    faster = plan.student_width > 0 or plan.classifier_strided > 0
    verdict = gate(figures["shipped"], figures["round"], improve=not faster)
    timings = json.loads((plan.work_dir / "timings.json").read_text())
    extra = {"timings_s": timings, "candidate": str(candidate)}
    report, _ = write_report(plan.work_dir, figures, verdict, plan.plain(), extra)
    log(f"gate: {'promote' if verdict.promote else 'keep the shipped models'}")
    for reason in verdict.reasons:
        log(f"  {reason}")
    return report


def run_round(plan: RoundPlan) -> Path:
    """Every stage of the round, then the report; returns ``W/report.json``. A rerun
    resumes: finished stages are skipped, the report is written again."""
    from training.round_crops import keep_shipped, train_round_classifier, train_round_verifier

    plan.work_dir.mkdir(parents=True, exist_ok=True)
    (plan.work_dir / "plan.json").write_text(json.dumps(plan.plain(), indent=2))
    folders = _stage(plan, "data", lambda: prepare_data(plan))
    detector = _stage(plan, "detector", lambda: train_round_detector(plan, folders))
    _stage(plan, "classifier", lambda: train_round_classifier(plan, folders, detector))
    _stage(plan, "verifier", lambda: train_round_verifier(plan, folders, detector))
    models = plan.work_dir / "models"
    if (plan.shipped_models / "card.onnx").is_file():  # not trained in a round
        keep_shipped(plan, "card.onnx")
    write_round_manifest(plan, models)
    return evaluate_candidate(plan, models)


def _onnx_widths(model: Path) -> tuple[int, int, int, int]:
    """The four channel counts of an exported index classifier."""
    from training.recover import onnx_layer_weights

    convs = [weight.shape[0] for op, weight, _ in onnx_layer_weights(model) if op == "Conv"]
    return convs[0], convs[2], convs[4], convs[6]


def write_round_manifest(plan: RoundPlan, models: Path) -> Path:
    """``models/manifest.json`` of the round's folder: the shipped manifest with the round's
    files, hashes and sizes, and the round's data and epochs appended to ``rounds``."""
    from vision.reader import file_sha256

    manifest = json.loads((plan.shipped_models / "manifest.json").read_text())
    for key, name in (("detector", "detector.onnx"), ("classifier", "classifier.onnx"),
                      ("verifier", "verifier.onnx")):  # fmt: skip
        path = models / name
        if key in manifest and path.is_file():
            manifest[key].update(
                {"file": name, "sha256": file_sha256(path), "bytes": path.stat().st_size}
            )
    distilled = plan.classifier_epochs > 0 and (plan.student_width > 0 or plan.classifier_strided)
    if distilled and "classifier" in manifest:
        from training.classifier import architecture
        from training.distill import student_widths

        widths = student_widths(plan.student_width) if plan.student_width else None
        manifest["classifier"]["architecture"] = (
            architecture(
                widths or _onnx_widths(models / "classifier.onnx"), plan.classifier_strided
            )
            + ", distilled from the previous classifier (training/distill.py)"
        )
    if plan.classifier_epochs > 0 and plan.local_crops > 0 and "classifier" in manifest:
        from training.glyph_crops import local_letters

        # the letters it was trained on, read back by vision.index_letters.classifier_letters
        trained = dict(manifest["classifier"].get("index_letters", {}))
        trained.update({letter: list(ranks) for letter, ranks in local_letters().items()})
        manifest["classifier"]["index_letters"] = trained
    data = (
        json.loads(done.read_text())
        if (done := plan.work_dir / "real" / "done.json").is_file()
        else {}
    )
    entry: dict[str, Any] = {
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "started_from": "the previous models/ (ONNX read back into checkpoints)",
        "synthetic_scenes": {
            "scenes.yaml": plan.table_scenes,
            "casino.yaml": plan.casino_scenes,
            "closeups.yaml": plan.closeup_scenes,
            "verifier.yaml": plan.verifier_scenes if plan.verifier_epochs > 0 else 0,
            "first_scene": plan.first_scene,
        },
        "real_training_images": data,
        "real_copies": plan.real_copies,
        "detector_epochs": plan.detector_epochs,
        "detector_learning_rate": plan.detector_learning_rate,
        "detector_frozen_layers": plan.detector_freeze,
        "classifier_epochs": plan.classifier_epochs,
        "classifier_learning_rate": plan.classifier_learning_rate,
        "classifier_crops": {"procedural": plan.glyph_crops, "local_letters": plan.local_crops},
        "verifier_epochs": plan.verifier_epochs,
        "kept_from_previous": [
            name
            for name, epochs in (
                ("detector", plan.detector_epochs),
                ("classifier", plan.classifier_epochs),
                ("verifier", plan.verifier_epochs),
            )
            if epochs == 0
        ],
    }
    if distilled:
        entry["classifier_distilled"] = {
            "student_width": plan.student_width,
            "strided_blocks": plan.classifier_strided,
            "weight": plan.distill_weight,
            "temperature": plan.distill_temperature,
        }
    manifest.setdefault("rounds", []).append(entry)
    path = models / "manifest.json"
    models.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest, indent=2) + "\n")
    return path


def promote(plan: RoundPlan, report: Path, target: Path) -> bool:
    """Copy the round's models into ``target`` when its report's gate passed, the round's
    figures added to the manifest's last round; returns whether it did."""
    import shutil

    payload = json.loads(report.read_text())
    if not payload["gate"]["promote"]:
        return False
    models = Path(payload.get("candidate") or plan.work_dir / "models")
    manifest = json.loads((models / "manifest.json").read_text())
    if not manifest.get("rounds"):
        manifest["rounds"] = [{"finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]
    manifest["rounds"][-1]["figures"] = payload["figures"]["round"]
    manifest["rounds"][-1]["figures_before"] = payload["figures"]["shipped"]
    manifest["rounds"][-1]["timings_s"] = payload.get("timings_s", {})
    target.mkdir(parents=True, exist_ok=True)
    for name in ("detector.onnx", "classifier.onnx", "verifier.onnx", "card.onnx"):
        if (models / name).is_file():
            shutil.copyfile(models / name, target / name)
    from vision.reader import file_sha256

    for entry in manifest.values():  # the hashes of the files as copied
        if isinstance(entry, dict) and (target / str(entry.get("file", ""))).is_file():
            path = target / str(entry["file"])
            entry.update(sha256=file_sha256(path), bytes=path.stat().st_size)
    (target / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return True


def plan_for_minutes(work_dir: Path, minutes: float, **fields: Any) -> RoundPlan:
    """The round that fits ``minutes`` of a 2-core CPU: the defaults are sized for 120
    (epochs and scene counts scale with the budget); under 5 minutes, a smoke round of a
    few scenes and one epoch of each model, for checking that every stage runs."""
    base = RoundPlan(work_dir=work_dir, **fields)
    if minutes < 5:
        return dataclasses.replace(
            base, table_scenes=6, casino_scenes=4, closeup_scenes=2, val_scenes=3,
            verifier_scenes=4, detector_epochs=1, classifier_epochs=1, glyph_crops=200,
            local_crops=120, verifier_epochs=1, eval_scenes=4, eval_casino_scenes=2,
            eval_letter_scenes=0, eval_dark_scenes=2, card_free_tables=2, eval_local_crops=80,
            real_copies=1, workers=1,
        )  # fmt: skip
    share = minutes / 120.0
    return dataclasses.replace(
        base,
        detector_epochs=max(1, round(base.detector_epochs * share)),
        classifier_epochs=max(1, round(base.classifier_epochs * share)),
        verifier_epochs=max(1, round(base.verifier_epochs * share)),
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m training.round --work W [--realdata R] [--minutes M] [--promote]``; the
    same as ``handreader train --round``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m training.round", description=__doc__)
    add_round_arguments(parser)
    arguments = parser.parse_args(argv)
    try:
        check_round_arguments(arguments)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return run_from_arguments(arguments)


def run_from_arguments(arguments: Any) -> int:
    """Run (or resume) the round the parsed options describe; 0 when it finished (promoted
    or not), with its verdict printed."""
    from training.fitting import parse_device

    check_round_arguments(arguments)
    plan = plan_for_minutes(
        arguments.work,
        arguments.minutes,
        realdata=arguments.realdata,
        shipped_models=arguments.models,
        device=parse_device(arguments.device),
    )
    changes: dict[str, Any] = dict(plan_changes(getattr(arguments, "set", [])))
    plan = dataclasses.replace(plan, **changes)
    saved = plan.work_dir / "plan.json"
    if saved.is_file():  # a resumed round keeps the plan it began with
        kept = json.loads(saved.read_text())
        if kept != plan.plain():
            log("resuming with the plan the round began with (W/plan.json)")
            plan = _plan_from(kept)
    candidate = getattr(arguments, "evaluate", None)
    if candidate is not None:
        if not (candidate / "manifest.json").is_file():
            raise ValueError(f"--evaluate {str(candidate)!r} holds no manifest.json")
        report = evaluate_candidate(plan, candidate)
    else:
        report = run_round(plan)
    if arguments.promote:
        promoted = promote(plan, report, arguments.models)
        log(f"models {'promoted into' if promoted else 'not promoted:'} {arguments.models}")
    log(f"report: {report.with_suffix('.md')}")
    return 0


def _plan_from(values: dict[str, Any]) -> RoundPlan:
    paths = {"work_dir", "realdata", "shipped_models"}
    fields = {
        key: (Path(value) if key in paths and value is not None else value)
        for key, value in values.items()
        if key in {item.name for item in dataclasses.fields(RoundPlan)}
    }
    return RoundPlan(**fields)  # type: ignore[arg-type]


if __name__ == "__main__":
    raise SystemExit(main())
