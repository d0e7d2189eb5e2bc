"""Distil a smaller index classifier from a trained one (the teacher).

The student is trained from scratch on the same crops as a fine-tune would use. Each crop
carries its label and the teacher's logits on it, un-augmented; where the teacher reads the
crop as its label, the loss is ``weight`` times the Kullback-Leibler divergence between the
two networks' readings softened by ``temperature`` (scaled by its square, so the gradient
keeps its size) plus the rest of the weight times the cross-entropy to the label. Where the
teacher reads it otherwise (a letter it never learned, a card it gets wrong), the label alone
teaches. The quarter turns, blur and shape changes of the augmentation leave the card a crop
shows as it was, so the teacher's reading of the plain crop stands for its augmented copies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["distillation_loss", "student_widths", "teacher_logits", "teacher_targets"]


def student_widths(base: int) -> tuple[int, int, int, int]:
    """The network widths of a student whose first block has ``base`` channels: ``base``,
    twice, four times and four times that (the shipped classifier is 48-96-192-192).
    ValueError unless ``base`` is positive."""
    if base <= 0:
        raise ValueError(f"a student's first width must be positive, got {base}")
    return base, 2 * base, 4 * base, 4 * base


def teacher_logits(
    teacher: Path, crops: NDArray[np.uint8], batch: int = 512, threads: int | None = None
) -> NDArray[np.float32]:
    """The logits (N, classes) the ONNX classifier at ``teacher`` gives the crops (N, S, S, 3)
    BGR, ``batch`` at a time."""
    from vision.crops import crops_to_tensor
    from vision.index_detector import session

    model = session(teacher, threads)
    name = model.get_inputs()[0].name
    parts = [
        np.asarray(model.run(None, {name: crops_to_tensor(crops[i : i + batch])})[0], np.float32)
        for i in range(0, len(crops), batch)
    ]
    if not parts:
        return np.zeros((0, model.get_outputs()[0].shape[1]), np.float32)
    return np.concatenate(parts)


def teacher_targets(labels: NDArray[np.int64], logits: NDArray[np.float32]) -> NDArray[np.float32]:
    """One row a crop: its label, then the teacher's logits (what :func:`distillation_loss`
    takes as targets)."""
    if len(labels) != len(logits):
        raise ValueError(f"{len(labels)} labels but {len(logits)} rows of teacher logits")
    return np.concatenate([labels.astype(np.float32)[:, None], logits], axis=1)


def distillation_loss(
    temperature: float = 2.0, weight: float = 0.7, smoothing: float = 0.05
) -> Any:
    """The loss of (student logits (B, C), :func:`teacher_targets` rows (B, 1 + C)): see the
    module's text. ``temperature`` > 0 and ``weight`` in [0, 1], else ValueError."""
    import torch
    from torch import nn

    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    if not 0 <= weight <= 1:
        raise ValueError(f"weight must lie in [0, 1], got {weight}")
    hard = nn.CrossEntropyLoss(label_smoothing=smoothing, reduction="none")

    def loss(logits: Any, targets: Any) -> Any:
        labels = targets[:, 0].long()
        teacher = targets[:, 1:]
        taught = (teacher.argmax(1) == labels).float() * weight
        soft = nn.functional.kl_div(
            torch.log_softmax(logits / temperature, 1),
            torch.log_softmax(teacher / temperature, 1),
            reduction="none",
            log_target=True,
        ).sum(1) * (temperature**2)
        return (taught * soft + (1 - taught) * hard(logits, labels)).mean()

    return loss


def hard_labels(targets: Any) -> Any:
    """The labels of :func:`teacher_targets` rows (a tensor of class ids)."""
    return targets[:, 0].long()
