"""Distilling a smaller index classifier (training.distill): the teacher's logits, the targets
that carry them, the loss, and a student trained with them (train tier)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from training.distill import student_widths, teacher_logits, teacher_targets
from vision.crops import crop_index
from vision.reader import Reader

ROOT = Path(__file__).resolve().parents[2]


def test_a_students_widths_double_twice_from_its_first() -> None:
    assert student_widths(32) == (32, 64, 128, 128)
    with pytest.raises(ValueError, match="must be positive, got 0"):
        student_widths(0)


def test_the_teachers_logits_are_the_shipped_classifiers_reading_of_each_crop() -> None:
    reader = Reader.load()
    image = reader.prepare(cv2.imread(str(ROOT / "examples" / "hand.jpg")))
    boxes = reader.detect(image).xyxy
    crops = np.stack([crop_index(image, box) for box in boxes])
    logits = teacher_logits(ROOT / "models" / "classifier.onnx", crops, batch=4)
    assert logits.shape == (len(crops), 55)
    probabilities, _ = reader._run_classifier(crops)
    assert (logits.argmax(1) == probabilities.argmax(1)).all()
    empty = teacher_logits(ROOT / "models" / "classifier.onnx", crops[:0])
    assert empty.shape == (0, 55)


def test_teacher_targets_carry_the_label_first() -> None:
    labels = np.array([3, 54])
    logits = np.arange(2 * 55, dtype=np.float32).reshape(2, 55)
    targets = teacher_targets(labels, logits)
    assert targets.shape == (2, 56)
    assert targets[:, 0].tolist() == [3.0, 54.0]
    assert (targets[:, 1:] == logits).all()
    with pytest.raises(ValueError, match="2 labels but 1 rows"):
        teacher_targets(labels, logits[:1])


@pytest.mark.train
def test_the_loss_follows_the_teacher_where_it_is_right_and_the_label_elsewhere() -> None:
    torch = pytest.importorskip("torch")
    from torch import nn

    from training.distill import distillation_loss

    loss = distillation_loss(temperature=2.0, weight=0.7, smoothing=0.05)
    hard = nn.CrossEntropyLoss(label_smoothing=0.05)
    teacher = torch.tensor([[4.0, 1.0, 0.0], [0.0, 3.0, 1.0]])
    labels = torch.tensor([[0.0], [2.0]])  # the teacher reads row 0 right, row 1 wrong
    targets = torch.cat([labels, teacher], 1)
    # a student reading as the teacher: nothing left to learn from it on row 0
    student = teacher.clone()
    expected = (
        0.3 * hard(student[:1], labels[:1, 0].long()) + hard(student[1:], labels[1:, 0].long())
    ) / 2
    assert float(loss(student, targets)) == pytest.approx(float(expected), rel=1e-5)
    # on row 0, a student surer than the teacher costs more than one reading as it does
    surer = student.clone()
    surer[0] = torch.tensor([12.0, 0.0, 0.0])
    assert float(loss(surer[:1], targets[:1])) > float(loss(student[:1], targets[:1]))
    # with no weight on the teacher it is the plain cross-entropy
    plain = distillation_loss(weight=0.0)(surer, targets)
    assert float(plain) == pytest.approx(float(hard(surer, labels[:, 0].long())), rel=1e-5)
    for bad, words in [({"temperature": 0.0}, "temperature"), ({"weight": 1.5}, "weight")]:
        with pytest.raises(ValueError, match=words):
            distillation_loss(**bad)  # type: ignore[arg-type]


@pytest.mark.train
def test_a_student_trains_on_a_teachers_logits_and_exports(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from training.classifier import ClassifierTraining, export_classifier, fit_classifier

    rng = np.random.default_rng(0)
    crops = rng.integers(0, 255, (64, 32, 32, 3), dtype=np.uint8)
    labels = rng.integers(0, 55, 64).astype(np.int64)
    logits = teacher_logits(ROOT / "models" / "classifier.onnx", crops)
    settings = ClassifierTraining(
        scene_dirs=(), run_dir=tmp_path, epochs=1, batch=32, widths=(4, 8, 16, 16)
    )
    state = fit_classifier(crops, labels, settings, (crops[:8], labels[:8]), teacher=logits)
    exported = export_classifier(state, tmp_path / "student.onnx")
    student = teacher_logits(exported, crops[:5])
    assert student.shape == (5, 55) and np.isfinite(student).all()
