"""Training rounds (training.round): pseudo-labelling, real photos as YOLO data, local index
letters, the gate on constructed reports, and (train tier) a smoke round of every stage on a
small real-photo folder built from synthetic scenes."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from training.real_photos import degrade, pseudo_boxes, train_photos, write_yolo_set
from training.round import (
    complete_pseudo_boxes,
    plan_changes,
    plan_for_minutes,
    write_round_manifest,
)
from training.round import main as round_main
from training.round_report import GateVerdict, gate, write_report

ROOT = Path(__file__).resolve().parents[2]


def test_pseudo_boxes_keep_labelled_cards_and_name_certain_strangers_negatives() -> None:
    boxes = np.array([[0, 0, 10, 14], [20, 0, 30, 14], [40, 0, 50, 14], [60, 0, 70, 14],
                      [80, 0, 90, 14]], np.float32)  # fmt: skip
    codes = ["KC", "5D", "9H", "QS", "5D"]
    certain = [True, True, False, True, False]
    found = pseudo_boxes(boxes, codes, certain, cards=("KC", "9H"), optional=("QS",))
    # KC and the uncertain 9H are labelled cards; the certain 5D (a chip) is a negative; QS is
    # optional and the uncertain 5D a stranger nobody vouches for: both left out
    assert found.positive_cards == ("KC", "9H")
    assert found.positive_xyxy.tolist() == [boxes[0].tolist(), boxes[2].tolist()]
    assert found.negative_xyxy.tolist() == [boxes[1].tolist()]


def test_only_complete_pseudo_boxes_teach_the_detector() -> None:
    assert complete_pseudo_boxes(["KC", "9H"], ["KC", "KC", "9H"])
    assert not complete_pseudo_boxes(["KC", "9H"], ["KC", "KC", "KC"])  # 9H has no box
    assert not complete_pseudo_boxes(["KC", "9H"], ["KC", "9H"])  # one box a card
    assert complete_pseudo_boxes([], [])  # a card-free photo: chips are background


def test_train_photos_read_only_the_train_split(tmp_path: Path) -> None:
    rows = [
        {"image": "a.jpg", "cards": ["7H"], "split": "train",
         "objects": [{"card": "7H", "box_xyxy": [1, 2, 11, 22], "kind": "index"},
                     {"card": "7H", "box_xyxy": [0, 0, 5, 5], "kind": "card"}]},
        {"image": "b.jpg", "cards": ["8S"], "split": "valid"},
    ]  # fmt: skip
    (tmp_path / "manifest.jsonl").write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    photos = train_photos(tmp_path / "manifest.jsonl")
    assert [photo.image.name for photo in photos] == ["a.jpg"]
    assert photos[0].boxes_xyxy.tolist() == [[1, 2, 11, 22]]  # index boxes only
    assert photos[0].box_cards == ("7H",)
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    with pytest.raises(ValueError, match=r"bad.jsonl:1: not JSON"):
        train_photos(tmp_path / "bad.jsonl")


def test_real_photos_become_yolo_folders_with_degraded_copies(tmp_path: Path) -> None:
    image = np.full((400, 800, 3), 200, np.uint8)
    cv2.putText(image, "7", (100, 100), cv2.FONT_HERSHEY_SIMPLEX, 2, (0, 0, 255), 4)
    boxes = np.array([[80, 40, 160, 120], [790, 390, 900, 500]], np.float32)
    written = write_yolo_set(iter([("photo", image, boxes)]), tmp_path, copies=3, longest_side=400)
    assert written == 3
    names = sorted(path.name for path in (tmp_path / "images").iterdir())
    assert names == ["photo-0.jpg", "photo-1.jpg", "photo-2.jpg"]
    first = cv2.imread(str(tmp_path / "images" / "photo-0.jpg"))
    assert first.shape == (200, 400, 3)  # shrunk to the longest side
    lines = (tmp_path / "labels" / "photo-1.txt").read_text().splitlines()
    # the first box normalised; the second, clipped to the image, is 5 x 5 px: still kept
    cls, cx, cy, w, h = (float(value) for value in lines[0].split())
    assert (cls, round(cx, 3), round(cy, 3), round(w, 3), round(h, 3)) == (0, 0.15, 0.2, 0.1, 0.2)
    assert len(lines) == 2
    # a rerun writes nothing more
    assert write_yolo_set(iter([("photo", image, boxes)]), tmp_path, copies=3) == 0


def test_degraded_copies_differ_but_keep_the_shape() -> None:
    rng = np.random.default_rng(0)
    image = np.random.default_rng(1).integers(0, 255, (120, 160, 3), dtype=np.uint8)
    for _ in range(5):
        soft = degrade(image, rng)
        assert soft.shape == image.shape and soft.dtype == np.uint8
        assert not np.array_equal(soft, image)


def _figures(**sets: tuple[float, int]) -> dict[str, Any]:
    return {
        name: {"f1": f1, "wrong": wrong, "cards": 500, "exact_photos": 0.5}
        for name, (f1, wrong) in sets.items()
    }


def test_the_gate_promotes_a_round_better_where_targeted_and_no_worse_elsewhere() -> None:
    shipped = _figures(boxes=(0.735, 40), tables=(0.9855, 2), singles=(0.990, 1))
    shipped["card_free"] = {"certain": 31, "tables": 200}
    new = _figures(boxes=(0.90, 20), tables=(1.0, 0), singles=(0.989, 1))  # within a card
    new["card_free"] = {"certain": 4, "tables": 200}
    verdict = gate(shipped, new)
    assert verdict.promote, verdict.reasons
    assert any("boxes: better" in reason for reason in verdict.reasons)


def test_the_gate_refuses_a_round_worse_on_one_folder() -> None:
    shipped = _figures(boxes=(0.735, 40), tables=(0.9855, 2), scans=(1.0, 0))
    new = _figures(boxes=(0.90, 20), tables=(1.0, 0), scans=(0.98, 4))
    verdict = gate(shipped, new)
    assert not verdict.promote
    assert [reason for reason in verdict.reasons if "worse" in reason] == [
        "scans: worse (F1 1.0000 -> 0.9800, tolerance 0.0030)"
    ]


def test_the_gate_refuses_a_round_not_better_where_targeted_or_with_more_false_cards() -> None:
    shipped = _figures(boxes=(0.735, 40), tables=(0.9855, 2))
    same = gate(shipped, _figures(boxes=(0.735, 40), tables=(0.99, 1)))
    assert not same.promote and "boxes: not better" in same.reasons[0]
    shipped["card_free"] = {"certain": 3, "tables": 200}
    new = _figures(boxes=(0.9, 1), tables=(1.0, 0))
    new["card_free"] = {"certain": 12, "tables": 200}
    verdict = gate(shipped, new)
    assert not verdict.promote and verdict.reasons[-1] == "card_free: more false cards (3 -> 12)"
    assert not gate({}, {}).promote  # nothing targeted was read: nothing shows it is better


def test_the_gate_of_models_meant_to_read_as_well_needs_no_set_better_and_none_worse() -> None:
    shipped = _figures(boxes=(0.735, 40), tables=(0.9855, 2), scans=(1.0, 0))
    shipped["card_free"] = {"certain": 31, "tables": 200}
    same = _figures(boxes=(0.734, 41), tables=(0.9855, 2), scans=(1.0, 0))  # within a card
    same["card_free"] = {"certain": 32, "tables": 200}
    assert not gate(shipped, same).promote  # a round must read boxes/ and tables/ better
    verdict = gate(shipped, same, improve=False)
    assert verdict.promote and verdict.reasons == ("every set reads as well",)
    worse = _figures(boxes=(0.70, 50), tables=(0.9855, 2), scans=(1.0, 0))
    refused = gate(shipped, worse, improve=False)
    assert not refused.promote
    assert refused.reasons == ("boxes: worse (F1 0.7350 -> 0.7000, tolerance 0.0030)",)
    assert not gate({}, {}, improve=False).promote


def test_the_report_shows_both_model_sets_and_the_verdict(tmp_path: Path) -> None:
    figures = {"shipped": _figures(boxes=(0.7, 3)), "round": _figures(boxes=(0.9, 1))}
    json_path, markdown_path = write_report(
        tmp_path, figures, GateVerdict(True, ("boxes: better",)), {"detector_epochs": 8}
    )
    payload = json.loads(json_path.read_text())
    assert payload["gate"] == {"promote": True, "reasons": ["boxes: better"]}
    text = markdown_path.read_text()
    assert "| set | shipped | round |" in text
    assert "| boxes | 0.7000 (50% exact, 3 wrong) | 0.9000 (50% exact, 1 wrong) |" in text
    assert "**Gate: promote**" in text


def test_a_budget_under_five_minutes_is_a_smoke_round(tmp_path: Path) -> None:
    smoke = plan_for_minutes(tmp_path, 1)
    full = plan_for_minutes(tmp_path, 120)
    half = plan_for_minutes(tmp_path, 60)
    assert smoke.detector_epochs == smoke.classifier_epochs == smoke.verifier_epochs == 1
    assert smoke.table_scenes < 10 and full.table_scenes == 400
    assert half.detector_epochs == full.detector_epochs // 2


def test_set_changes_the_plans_numbers_and_names_a_bad_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert plan_changes(["closeup_scenes=600", "classifier_learning_rate=0.0005"]) == {
        "closeup_scenes": 600,
        "classifier_learning_rate": 0.0005,
    }
    for bad, words in [
        ("closeup=600", "expected FIELD=VALUE with FIELD one of"),
        ("work_dir=/tmp", "expected FIELD=VALUE"),  # has its own option
        ("closeup_scenes", "expected FIELD=VALUE"),
        ("closeup_scenes=many", "'many' is not an integer"),
        ("detector_batch=0", "must be positive"),
        ("table_scenes=-1", "must be at least 0"),
        ("classifier_strided=4", "the classifier has 3 blocks to stride"),
    ]:
        with pytest.raises(ValueError, match=words):
            plan_changes([bad])
    # a stage of 0 epochs keeps the shipped model
    assert plan_changes(["verifier_epochs=0", "classifier_epochs=0", "detector_epochs=0"]) == {
        "verifier_epochs": 0,
        "classifier_epochs": 0,
        "detector_epochs": 0,
    }
    models = tmp_path / "models"
    models.mkdir()
    (models / "manifest.json").write_text("{}")
    argv = ["--work", str(tmp_path / "w"), "--models", str(models), "--set", "seed=x"]
    assert round_main(argv) == 2
    assert capsys.readouterr().err == "error: --set 'seed=x': 'x' is not an integer\n"


def _fake_realdata(root: Path, scenes: Path) -> Path:
    """``boxes/`` and ``tables/`` folders made of synthetic scenes: the first scenes train,
    the last one is valid."""
    metas = sorted((scenes / "meta").glob("*.json"))
    for folder in ("boxes", "tables"):
        (root / folder).mkdir(parents=True)
        rows = []
        for number, meta_path in enumerate(metas):
            meta = json.loads(meta_path.read_text())
            name = f"{meta_path.stem}.jpg"
            shutil.copyfile(scenes / "images" / name, root / folder / name)
            cards = sorted({item["card"] for item in meta["indices"]})
            row: dict[str, Any] = {
                "image": name,
                "cards": cards,
                "split": "valid" if number == len(metas) - 1 else "train",
            }
            if folder == "boxes":
                row["objects"] = [
                    {"card": item["card"], "box_xyxy": item["box_xyxy"], "kind": "index"}
                    for item in meta["indices"]
                ]
            rows.append(json.dumps(row))
        (root / folder / "manifest.jsonl").write_text("\n".join(rows) + "\n")
    return root


@pytest.mark.train
@pytest.mark.skipif(
    shutil.which("rsvg-convert") is None, reason="needs librsvg2-bin and the card decks"
)
def test_a_smoke_round_trains_every_model_reports_and_promotes_only_through_the_gate(
    tmp_path: Path,
) -> None:
    from training.round import promote, run_round
    from training.synth.config import load_config
    from training.synth.generate import generate
    from vision.reader import Reader

    generate(load_config(ROOT / "datasets" / "scenes.yaml"), tmp_path / "photos", 3,
             start=500, workers=1, progress=False)  # fmt: skip
    realdata = _fake_realdata(tmp_path / "realdata", tmp_path / "photos")
    plan = plan_for_minutes(
        tmp_path / "round", 1, realdata=realdata, shipped_models=ROOT / "models", device="cpu"
    )
    report = run_round(plan)
    payload = json.loads(report.read_text())
    figures = payload["figures"]
    assert set(figures) == {"shipped", "round"}
    for name in ("boxes", "tables", "holdout", "casino_holdout_legible"):
        assert 0.0 <= figures["round"][name]["f1"] <= 1.0
    assert figures["round"]["card_free"]["tables"] == 2
    assert "top1" in figures["round"]["local_indices"]
    assert set(payload["timings_s"]) >= {"data", "detector", "classifier", "verifier", "evaluate"}
    assert (tmp_path / "round" / "report.md").is_file()
    models = tmp_path / "round" / "models"
    Reader.load(models)  # the round's folder loads as a model folder
    manifest = json.loads((models / "manifest.json").read_text())
    assert manifest["rounds"][-1]["detector_epochs"] == 1
    # the gate decides promotion: a refused round copies nothing, a passed one everything
    target = tmp_path / "promoted"
    shutil.copytree(ROOT / "models", target)
    before = (target / "detector.onnx").read_bytes()
    payload["gate"]["promote"] = False
    report.write_text(json.dumps(payload))
    assert not promote(plan, report, target)
    assert (target / "detector.onnx").read_bytes() == before
    payload["gate"]["promote"] = True
    report.write_text(json.dumps(payload))
    assert promote(plan, report, target)
    assert (target / "detector.onnx").read_bytes() == (models / "detector.onnx").read_bytes()
    promoted = json.loads((target / "manifest.json").read_text())
    assert "figures" in promoted["rounds"][-1]
    Reader.load(target)
    # a rerun resumes: every stage is cached, the report written again
    assert run_round(plan) == report


def test_a_candidate_folder_is_promoted_only_through_its_gate(tmp_path: Path) -> None:
    """``--evaluate MODELS``: the report names the candidate; promotion copies it over the
    target with the figures in a manifest round, and a refused gate copies nothing."""
    from training.round import promote

    candidate = tmp_path / "candidate"
    shutil.copytree(ROOT / "models", candidate)
    (candidate / "detector.onnx").write_bytes(b"a new detector")
    target = tmp_path / "models"
    shutil.copytree(ROOT / "models", target)
    plan = plan_for_minutes(tmp_path / "work", 120)
    report = tmp_path / "report.json"
    figures = {"round": {"boxes": {"f1": 0.9}}, "shipped": {"boxes": {"f1": 0.7}}}
    payload = {"gate": {"promote": False}, "figures": figures, "candidate": str(candidate)}
    report.write_text(json.dumps(payload))
    assert not promote(plan, report, target)
    assert (target / "detector.onnx").read_bytes() != b"a new detector"
    payload["gate"]["promote"] = True
    report.write_text(json.dumps(payload))
    assert promote(plan, report, target)
    assert (target / "detector.onnx").read_bytes() == b"a new detector"
    manifest = json.loads((target / "manifest.json").read_text())
    assert manifest["rounds"][-1]["figures"] == {"boxes": {"f1": 0.9}}
    assert manifest["rounds"][-1]["figures_before"] == {"boxes": {"f1": 0.7}}


def test_a_stage_of_no_epochs_keeps_the_shipped_model(tmp_path: Path) -> None:
    from training.round import train_round_detector
    from training.round_crops import train_round_classifier, train_round_verifier

    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "detector.onnx").write_bytes(b"detector bytes")
    (shipped / "classifier.onnx").write_bytes(b"classifier bytes")
    (shipped / "verifier.onnx").write_bytes(b"verifier bytes")
    plan = dataclasses.replace(
        plan_for_minutes(tmp_path / "w", 120),
        shipped_models=shipped,
        detector_epochs=0,
        classifier_epochs=0,
        verifier_epochs=0,
    )
    detector = train_round_detector(plan, {})  # no scenes: nothing is trained
    assert detector.read_bytes() == b"detector bytes"
    kept = train_round_classifier(plan, {}, detector)
    assert kept == tmp_path / "w" / "models" / "classifier.onnx"
    assert kept.read_bytes() == b"classifier bytes"
    assert train_round_verifier(plan, {}, detector).read_bytes() == b"verifier bytes"
    manifest_plan = dataclasses.replace(plan, shipped_models=shipped)
    (shipped / "manifest.json").write_text(json.dumps({"rounds": []}))
    written = json.loads(write_round_manifest(manifest_plan, tmp_path / "w" / "models").read_text())
    assert written["rounds"][-1]["kept_from_previous"] == ["detector", "classifier", "verifier"]


def test_a_round_that_distils_the_classifier_names_its_network_and_teaching(
    tmp_path: Path,
) -> None:
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    architecture = "CNN (3 blocks of two 3x3 convolutions, 48-96-192 channels, then 192 ...)"
    manifest = {"classifier": {"file": "c.onnx", "architecture": architecture}}
    (shipped / "manifest.json").write_text(json.dumps(manifest))
    base = dataclasses.replace(plan_for_minutes(tmp_path / "w", 120), shipped_models=shipped)
    plan = dataclasses.replace(base, student_width=16, distill_weight=0.5)
    written = json.loads(write_round_manifest(plan, tmp_path / "w" / "models").read_text())
    assert "16-32-64 channels, then 64 channels" in written["classifier"]["architecture"]
    assert "distilled" in written["classifier"]["architecture"]
    assert written["rounds"][-1]["classifier_distilled"] == {
        "student_width": 16,
        "strided_blocks": 0,
        "weight": 0.5,
        "temperature": 2.0,
    }
    tuned = json.loads(write_round_manifest(base, tmp_path / "w2" / "models").read_text())
    assert tuned["classifier"]["architecture"] == architecture
    assert "classifier_distilled" not in tuned["rounds"][-1]


@pytest.mark.train
def test_a_round_with_strided_blocks_names_them_and_the_widths_it_kept(tmp_path: Path) -> None:
    import torch

    from training.classifier import _network, export_classifier
    from vision.reader import CLASSIFIER_CLASSES

    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "manifest.json").write_text(json.dumps({"classifier": {"file": "c.onnx"}}))
    models = tmp_path / "w" / "models"
    checkpoint = tmp_path / "strided.pt"
    network = _network(len(CLASSIFIER_CLASSES), (8, 12, 16, 24), 2)
    torch.save({"model": network.state_dict(), "widths": [8, 12, 16, 24], "strided": 2}, checkpoint)
    export_classifier(checkpoint, models / "classifier.onnx")
    base = dataclasses.replace(plan_for_minutes(tmp_path / "w", 120), shipped_models=shipped)
    plan = dataclasses.replace(base, classifier_strided=2)
    written = json.loads(write_round_manifest(plan, models).read_text())
    words = written["classifier"]["architecture"]
    assert "8-12-16 channels (the first 2 halve the map by a stride-2 convolution)" in words
    assert "then 24 channels at 4x4" in words and "distilled" in words
    assert written["rounds"][-1]["classifier_distilled"]["strided_blocks"] == 2


def test_a_round_that_trains_the_classifier_names_the_letters_it_read(tmp_path: Path) -> None:
    """The manifest's classifier.index_letters is what vision.index_letters reads back: every
    local letter of the round's crops, V as a jack and a queen; a round that keeps the
    classifier names none."""
    from training.glyph_crops import local_letters
    from vision.index_letters import classifier_letters, unread_ranks

    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "manifest.json").write_text(json.dumps({"classifier": {"file": "c.onnx"}}))
    plan = dataclasses.replace(plan_for_minutes(tmp_path / "w", 120), shipped_models=shipped)
    written = json.loads(write_round_manifest(plan, tmp_path / "w" / "models").read_text())
    letters = classifier_letters(written)
    assert letters["V"] == ("Q", "J") and letters["R"] == ("K",) and letters["A"] == ("A",)
    assert set(local_letters()) <= set(letters)
    assert unread_ranks("french", letters) == frozenset()
    kept = dataclasses.replace(plan, classifier_epochs=0)
    written = json.loads(write_round_manifest(kept, tmp_path / "w2" / "models").read_text())
    assert "index_letters" not in written["classifier"]
    assert unread_ranks("french", classifier_letters(written)) == {"A", "K", "Q", "J"}


def test_a_round_reads_the_held_out_decks_of_other_letters_with_their_letters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report's letters_NAME sets are drawn from datasets/letters-NAME.yaml and read with
    ReaderSettings.indices NAME; the other sets with the default reading."""
    import training.round as round_module
    from training.round_report import evaluate_models
    from vision.evaluate import ManifestEntry

    drawn: list[tuple[str, int]] = []
    monkeypatch.setattr(
        round_module,
        "_draw",
        lambda plan, config, folder, count, first: drawn.append((config, count)),
    )
    plan = dataclasses.replace(
        plan_for_minutes(tmp_path / "w", 120),
        eval_scenes=0,
        eval_casino_scenes=0,
        eval_dark_scenes=0,
        eval_letter_scenes=7,
    )
    folders = round_module._draw_eval_scenes(plan)
    assert set(folders) == {"letters_french", "letters_german", "letters_russian"}
    assert sorted(drawn) == [(f"letters-{n}.yaml", 7) for n in ("french", "german", "russian")]

    read_with: list[str | None] = []

    class Recorder:
        def __init__(self, indices: str | None = None) -> None:
            self.indices = indices

        def with_indices(self, indices: str | None) -> Recorder:
            return Recorder(indices)

        def read(self, image: np.ndarray) -> Any:
            from vision.detections import Reading

            read_with.append(self.indices)
            return Reading((8, 8), ())

    loaded: list[Any] = []

    def load(folder: Path, settings: Any = None) -> Recorder:
        loaded.append(settings)
        return Recorder()

    monkeypatch.setattr("vision.reader.Reader.load", load)
    photo = tmp_path / "scene.png"
    cv2.imwrite(str(photo), np.zeros((64, 64, 3), np.uint8))
    entries = [ManifestEntry(photo, ("KH",))]
    monkeypatch.setattr(
        "training.round_report.manifest_sets",
        lambda realdata, synthetic: {"holdout": entries, "letters_french": entries},
    )
    evaluate_models({"shipped": tmp_path}, None, {}, [], None, log=lambda line: None)
    assert read_with == [None, "french"]

    # a folder named in ``settings`` is loaded with them, the others with the defaults
    from vision.settings import ReaderSettings

    loaded.clear()
    changed = ReaderSettings(retry_agreeing=False)
    evaluate_models(
        {"shipped": tmp_path, "other": tmp_path}, None, {}, [], None,
        log=lambda line: None, settings={"other": changed},
    )  # fmt: skip
    assert loaded == [None, changed]


def test_the_local_letters_figure_counts_a_v_read_as_either_of_its_ranks() -> None:
    from rules.cards import CARD_CLASSES
    from training.round_report import _local_top1

    position = {code: index for index, code in enumerate(CARD_CLASSES)}

    class Fixed:
        """A classifier reading every crop as its row of ``read``."""

        def __init__(self, read: list[str]) -> None:
            self.read = read

        def _run_classifier(self, crops: np.ndarray) -> tuple[np.ndarray, None]:
            rows = np.zeros((len(self.read), 55), np.float32)
            for row, code in enumerate(self.read):
                rows[row, position[code]] = 1.0
            return rows, None

    labels = np.array([position[code] for code in ("JH", "QH", "KS", "JD")])
    crops = np.zeros((4, 32, 32, 3), np.uint8)
    # a V labelled JH read QH is right (V is either); KS read as QS and JD read as QH are not
    assert _local_top1(Fixed(["QH", "JH", "QS", "QH"]), crops, labels) == 0.5


def test_corner_boxes_keep_a_single_cards_indices_not_its_pips() -> None:
    from training.round_crops import corner_boxes

    boxes = np.array(
        [
            [5, 8, 35, 60],  # top-left index
            [190, 165, 220, 218],  # bottom-right index, upside down
            [95, 90, 130, 130],  # a pip in the middle
            [10, 100, 40, 130],  # a pip at the side, half-way down
            [100, 5, 125, 40],  # a court figure's crown at the top, centred
        ],
        np.float32,
    )
    kept = corner_boxes(boxes, 224, 224)
    assert kept.tolist() == boxes[:2].tolist()
    assert corner_boxes(np.zeros((0, 4), np.float32), 224, 224).shape == (0, 4)


def test_card_crops_label_the_corner_boxes_with_their_card(tmp_path: Path) -> None:
    from training.round_crops import real_classifier_crops

    class CornerDetector:
        def detect(self, image: np.ndarray) -> Any:
            class Found:
                xyxy = np.array([[4, 6, 30, 50], [100, 100, 124, 124]], np.float32)

            return Found()

    realdata = tmp_path / "realdata"
    (realdata / "crops").mkdir(parents=True)
    rows = []
    for number, (card, split) in enumerate([("QH", "train"), ("JOKER", "train"), ("2S", "valid")]):
        cv2.imwrite(
            str(realdata / "crops" / f"{number}.jpg"), np.full((224, 224, 3), 200, np.uint8)
        )
        rows.append(json.dumps({"image": f"{number}.jpg", "cards": [card], "split": split}))
    (realdata / "crops" / "manifest.jsonl").write_text("\n".join(rows) + "\n")
    (realdata / "boxes").mkdir()
    (realdata / "boxes" / "manifest.jsonl").write_text("")
    plan = dataclasses.replace(plan_for_minutes(tmp_path / "w", 120), realdata=realdata)
    pseudo = tmp_path / "w" / "real" / "tables-pseudo.json"
    pseudo.parent.mkdir(parents=True)
    pseudo.write_text("[]")
    crops, labels = real_classifier_crops(plan, CornerDetector(), copies=3)
    from rules.cards import CARD_CLASSES

    # the QH card's one corner box, three times; the joker has no class, the valid row is unseen
    assert labels.tolist() == [CARD_CLASSES.index("QH")] * 3
    assert crops.shape[0] == 3


def test_a_round_that_keeps_the_verifier_draws_none_of_its_scenes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import training.round as round_module

    drawn: list[str] = []
    monkeypatch.setattr(round_module, "_draw", lambda plan, config, *rest: drawn.append(config))
    monkeypatch.setattr(round_module, "_draw_eval_scenes", lambda plan: {})
    plan = plan_for_minutes(tmp_path / "w", 120)
    round_module.prepare_data(plan)
    assert "verifier.yaml" in drawn
    drawn.clear()
    round_module.prepare_data(dataclasses.replace(plan, verifier_epochs=0))
    assert drawn == ["scenes.yaml", "casino.yaml", "closeups.yaml", "holdout.yaml"]


def test_a_detector_fine_tune_freezes_only_the_layers_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import training.detector as detector

    seen: list[dict[str, Any]] = []

    def record(settings: Any, name: str, start: str, arguments: dict[str, Any]) -> Path:
        seen.append(arguments)
        return tmp_path / "best.pt"

    monkeypatch.setattr(detector, "_run", record)
    settings = detector.DetectorTraining(
        train_images=tmp_path / "t", val_images=tmp_path / "v", run_dir=tmp_path / "run"
    )
    detector.finetune_detector(settings, tmp_path / "start.pt", 3, 0.0005, freeze=10)
    detector.finetune_detector(settings, tmp_path / "start.pt", 3)
    assert seen[0]["freeze"] == 10 and seen[0]["lr0"] == 0.0005 and seen[0]["epochs"] == 3
    assert "freeze" not in seen[1]
    assert plan_changes(["detector_freeze=10"]) == {"detector_freeze": 10}
    assert plan_changes(["classifier_strided=2"]) == {"classifier_strided": 2}
