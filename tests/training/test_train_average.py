"""Averaging classifier checkpoints (``training.classifier.average_checkpoints``): the mean
of the weights, counters kept, widths checked, and the result exports and reads.

Needs torch (the train extra); CI runs ``pytest -m train``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.train

torch = pytest.importorskip("torch")

from training.classifier import (  # noqa: E402
    _network,
    average_checkpoints,
    export_classifier,
)
from vision.reader import CLASSIFIER_CLASSES  # noqa: E402

WIDTHS = (8, 8, 16, 16)


def _checkpoint(path: Path, seed: int, widths: tuple[int, ...] = WIDTHS) -> dict[str, object]:
    torch.manual_seed(seed)
    model = _network(len(CLASSIFIER_CLASSES), widths)
    model.train()
    model(torch.rand(4, 3, 32, 32))  # moves the batch norm statistics and counters
    state = {k: v.clone() for k, v in model.state_dict().items()}
    torch.save({"model": state, "widths": widths, "epoch": seed}, path)
    return state


def test_weights_are_the_mean(tmp_path: Path) -> None:
    first = _checkpoint(tmp_path / "a.pt", 1)
    second = _checkpoint(tmp_path / "b.pt", 2)
    third = _checkpoint(tmp_path / "c.pt", 3)
    out = average_checkpoints(
        [tmp_path / "a.pt", tmp_path / "b.pt", tmp_path / "c.pt"], tmp_path / "mean" / "m.pt"
    )
    averaged = torch.load(out, weights_only=False)
    # the seeds differ: the first convolution and the running means are not the first's
    for name in ("features.0.weight", "features.1.running_mean", "head.weight"):
        assert not torch.equal(averaged["model"][name], first[name]), name
    assert tuple(averaged["widths"]) == WIDTHS
    for name, value in averaged["model"].items():
        if value.is_floating_point():
            expected = (first[name] + second[name] + third[name]) / 3  # type: ignore[operator]
            assert torch.allclose(value, expected, atol=1e-6), name
        else:
            assert torch.equal(value, first[name]), name  # num_batches_tracked


def test_widths_must_agree(tmp_path: Path) -> None:
    _checkpoint(tmp_path / "a.pt", 1)
    _checkpoint(tmp_path / "b.pt", 2, (8, 8, 16, 32))
    with pytest.raises(ValueError, match=r"b\.pt: widths"):
        average_checkpoints([tmp_path / "a.pt", tmp_path / "b.pt"], tmp_path / "m.pt")
    with pytest.raises(ValueError, match="no checkpoints"):
        average_checkpoints([], tmp_path / "m.pt")
    assert not (tmp_path / "m.pt").exists()


def test_average_exports_and_reads(tmp_path: Path) -> None:
    """The average of a checkpoint with itself exports to an ONNX model that gives the same
    logits as the network it came from."""
    state = _checkpoint(tmp_path / "a.pt", 5)
    out = average_checkpoints([tmp_path / "a.pt", tmp_path / "a.pt"], tmp_path / "m.pt")
    onnx_path = export_classifier(out, tmp_path / "m.onnx")
    import onnxruntime as ort

    model = _network(len(CLASSIFIER_CLASSES), WIDTHS)
    model.load_state_dict(state)
    model.eval()
    crops = np.random.default_rng(0).random((3, 3, 32, 32), dtype=np.float32)
    with torch.no_grad():
        expected = model(torch.from_numpy(crops))[0].numpy()
    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    logits = session.run(["logits"], {"crops": crops})[0]
    np.testing.assert_allclose(logits, expected, atol=1e-4)
