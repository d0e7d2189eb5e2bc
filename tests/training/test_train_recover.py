"""A trainable checkpoint from the index classifier's ONNX export (``training.recover``):
float and int8 exports give back the network's function, eval and train mode agree, and the
shipped classifier itself comes back.

Needs torch and onnx (the train extra); CI runs ``pytest -m train``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.train

torch = pytest.importorskip("torch")

from training.classifier import (  # noqa: E402
    _network,
    export_classifier,
    quantize_classifier,
)
from training.recover import (  # noqa: E402
    classifier_checkpoint_from_onnx,
    onnx_layer_weights,
)
from vision.crops import crops_to_tensor  # noqa: E402
from vision.reader import CLASSIFIER_CLASSES  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
WIDTHS = (8, 12, 16, 24)


def _crops(count: int, seed: int) -> np.ndarray:
    """Crops with some structure (blobs on paper), so the convolutions see varied input."""
    rng = np.random.default_rng(seed)
    crops = np.full((count, 32, 32, 3), 220, np.uint8)
    for crop in crops:
        for _ in range(3):
            x, y = rng.integers(2, 26, 2)
            crop[y : y + rng.integers(3, 9), x : x + rng.integers(3, 9)] = rng.integers(0, 200, 3)
    noise = rng.integers(-20, 20, crops.shape)
    return np.clip(crops.astype(int) + noise, 0, 255).astype(np.uint8)


@pytest.fixture
def trained(tmp_path: Path) -> tuple[Path, object]:
    """A checkpoint whose batch norms are far from the identity (as after training)."""
    torch.manual_seed(3)
    model = _network(len(CLASSIFIER_CLASSES), WIDTHS)
    with torch.no_grad():
        for name, value in model.state_dict().items():
            if name.endswith(("running_mean", "bias")):
                value.copy_(torch.randn_like(value) * 0.3)
            elif name.endswith("running_var") or (name.endswith("weight") and value.dim() == 1):
                value.copy_(torch.rand_like(value) + 0.5)
    path = tmp_path / "trained.pt"
    torch.save({"model": model.state_dict(), "widths": list(WIDTHS)}, path)
    model.eval()
    return path, model


def _outputs(model: object, crops: np.ndarray) -> tuple[object, object]:
    with torch.no_grad():
        return model(torch.from_numpy(crops_to_tensor(crops)))  # type: ignore[operator,no-any-return]


def _load(path: Path) -> object:
    state = torch.load(path, weights_only=False)
    model = _network(len(CLASSIFIER_CLASSES), tuple(state["widths"]))
    model.load_state_dict(state["model"])
    model.eval()
    return model


def test_a_float_export_comes_back_exactly(trained: tuple[Path, object], tmp_path: Path) -> None:
    path, original = trained
    exported = export_classifier(path, tmp_path / "float.onnx")
    layers = onnx_layer_weights(exported)
    assert [op for op, _, _ in layers] == ["Conv"] * 7 + ["Gemm"] * 2
    calibration, other = _crops(400, 1), _crops(100, 2)
    recovered = _load(classifier_checkpoint_from_onnx(exported, tmp_path / "r.pt", calibration))
    want_logits, want_embedding = _outputs(original, other)
    got_logits, got_embedding = _outputs(recovered, other)
    assert torch.allclose(got_logits, want_logits, atol=1e-4)
    assert torch.allclose(got_embedding, want_embedding, atol=1e-4)


def test_train_mode_on_the_calibration_crops_matches_eval_mode(
    trained: tuple[Path, object], tmp_path: Path
) -> None:
    """The unfolded batch norms normalise the calibration batch to what eval mode computes:
    fine-tuning starts from the exported function, not from one batch statistics upset."""
    path, _ = trained
    exported = export_classifier(path, tmp_path / "float.onnx")
    calibration = _crops(300, 4)
    recovered = _load(classifier_checkpoint_from_onnx(exported, tmp_path / "r.pt", calibration))
    inputs = torch.from_numpy(crops_to_tensor(calibration))
    with torch.no_grad():
        evaluated = recovered.features(inputs)  # type: ignore[attr-defined]
        recovered.train()  # type: ignore[attr-defined]
        trained_mode = recovered.features(inputs)  # type: ignore[attr-defined]
    assert torch.allclose(trained_mode, evaluated, atol=1e-3)
    # without the unfolding (the folded bias alone), train mode would compute something else
    naive = _load(classifier_checkpoint_from_onnx(exported, tmp_path / "n.pt", calibration))
    with torch.no_grad():
        for norm in naive.features:  # type: ignore[attr-defined]
            if isinstance(norm, torch.nn.BatchNorm2d):
                norm.bias.sub_(norm.running_mean)
                norm.weight.fill_(1.0)
        naive.train()  # type: ignore[attr-defined]
        assert not torch.allclose(naive.features(inputs), evaluated, atol=1e-2)  # type: ignore[attr-defined]


def test_an_int8_export_comes_back_within_its_rounding(
    trained: tuple[Path, object], tmp_path: Path
) -> None:
    path, original = trained
    exported = export_classifier(path, tmp_path / "float.onnx")
    calibration = _crops(400, 5)
    int8 = quantize_classifier(exported, tmp_path / "int8.onnx", calibration)
    recovered = _load(classifier_checkpoint_from_onnx(int8, tmp_path / "r.pt", calibration))
    other = _crops(200, 6)
    want, _ = _outputs(original, other)
    got, _ = _outputs(recovered, other)
    # int8 weights: close, not equal; the same top class nearly always
    assert float((got - want).abs().max()) < 0.05 * float(want.abs().max())
    assert float((got.argmax(1) == want.argmax(1)).float().mean()) >= 0.95
    assert not torch.allclose(got, want, atol=1e-6)  # the weights really were int8


def test_the_shipped_classifier_comes_back(tmp_path: Path) -> None:
    shipped = ROOT / "models" / "classifier.onnx"
    recovered = _load(classifier_checkpoint_from_onnx(shipped, tmp_path / "r.pt", _crops(64, 7)))
    assert recovered.head.out_features == len(CLASSIFIER_CLASSES)  # type: ignore[attr-defined]
    # and it exports again, to a model the runtime reads like the shipped one
    import onnxruntime

    again = export_classifier(tmp_path / "r.pt", tmp_path / "again.onnx")
    crops = crops_to_tensor(_crops(32, 8))
    # the shipped graph as written (quantize, dequantize, float operators): onnxruntime's own
    # int8 kernels, which the default optimizations put in, saturate on a CPU without VNNI
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    written = onnxruntime.InferenceSession(str(shipped), options)
    first = written.run(["logits"], {"crops": crops})[0]
    second = onnxruntime.InferenceSession(str(again)).run(["logits"], {"crops": crops})[0]
    assert float(np.mean(first.argmax(1) == second.argmax(1))) >= 0.9
    assert float(np.abs(first - second).max()) < 0.1 * float(np.abs(first).max())


def test_another_network_is_refused(tmp_path: Path) -> None:
    from training.card_classifier import _network as card_network
    from training.fitting import export_with_classes

    model = card_network((4, 4, 8, 8))
    model.eval()
    other = export_with_classes(
        model,
        torch.zeros(1, 3, 80, 56),
        tmp_path / "card.onnx",
        "views",
        ["logits"],
        CLASSIFIER_CLASSES,
    )
    with pytest.raises(ValueError, match=r"convolutions and .* dense layers; the index"):
        classifier_checkpoint_from_onnx(other, tmp_path / "r.pt", _crops(8, 9))


# -- the detector (ultralytics YOLOv8n) ------------------------------------------------------


def _scene_inputs(count: int, seed: int) -> np.ndarray:
    """Detector inputs (N, 3, 320, 320) of drawn blobs and bars on paper and felt."""
    rng = np.random.default_rng(seed)
    images = np.zeros((count, 320, 320, 3), np.uint8)
    images[:] = (40, 110, 60)
    for image in images:
        for _ in range(6):
            x, y = rng.integers(0, 280, 2)
            image[y : y + rng.integers(20, 60), x : x + rng.integers(15, 45)] = rng.integers(
                0, 256, 3
            )
    noise = rng.integers(-15, 15, images.shape)
    images = np.clip(images.astype(int) + noise, 0, 255).astype(np.float32) / 255.0
    return np.ascontiguousarray(images.transpose(0, 3, 1, 2))


@pytest.mark.slow
def test_the_shipped_detector_comes_back(tmp_path: Path) -> None:
    """The shipped detector, read back out of its ONNX into an ultralytics checkpoint: the
    checkpoint computes what the ONNX computes (eval mode), its batch norms see in train mode
    what they saw in eval mode (so a fine-tune starts from the shipped detector), and it
    exports again to an ONNX that gives the same boxes."""
    pytest.importorskip("ultralytics")
    import onnxruntime

    from training.detector import export_detector
    from training.recover import detector_checkpoint_from_onnx

    shipped = ROOT / "models" / "detector.onnx"
    calibration = _scene_inputs(24, 1)
    path = detector_checkpoint_from_onnx(shipped, tmp_path / "det.pt", calibration)
    checkpoint = torch.load(path, map_location="cpu", weights_only=False)
    assert checkpoint["epoch"] == -1 and checkpoint["model"].names == {0: "index"}
    model = checkpoint["model"].eval()
    session = onnxruntime.InferenceSession(str(shipped), providers=["CPUExecutionProvider"])
    other = _scene_inputs(3, 2)
    want = session.run(None, {session.get_inputs()[0].name: other})[0]
    with torch.no_grad():
        got = model(torch.from_numpy(other))[0].numpy()
    assert float(np.abs(got - want).max()) < 1e-3 * float(np.abs(want).max())
    norms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    assert len(norms) == 57
    for norm in norms:  # measured, not the identity left by the folding
        assert not torch.allclose(norm.running_var, torch.ones_like(norm.running_var))
    # train mode on the calibration images as one batch: each norm's batch statistics are the
    # running ones it was given, so train mode computes what eval mode does
    seen: list[tuple[object, object]] = []
    hooks = [n.register_forward_hook(lambda m, i, o: seen.append((m, i[0]))) for n in norms]
    model.train()
    with torch.no_grad():
        model(torch.from_numpy(calibration))
    for hook in hooks:
        hook.remove()
    for norm, inputs in seen:
        mean = inputs.mean(dim=(0, 2, 3))  # type: ignore[attr-defined]
        spread = norm.running_var.sqrt() + 1e-3  # type: ignore[attr-defined]
        drift = ((mean - norm.running_mean) / spread).abs().max()  # type: ignore[attr-defined]
        assert float(drift) < 0.01
    again = export_detector(path, 320, tmp_path / "again.onnx")
    second = onnxruntime.InferenceSession(str(again), providers=["CPUExecutionProvider"])
    repeat = second.run(None, {second.get_inputs()[0].name: other})[0]
    assert float(np.abs(repeat - want).max()) < 1e-3 * float(np.abs(want).max())


def test_a_classifier_is_not_taken_for_a_detector(tmp_path: Path) -> None:
    pytest.importorskip("ultralytics")
    from training.recover import detector_checkpoint_from_onnx

    with pytest.raises(ValueError, match=r"no weight 'model\.0\.conv\.weight'"):
        detector_checkpoint_from_onnx(
            ROOT / "models" / "classifier.onnx", tmp_path / "d.pt", _scene_inputs(2, 3)
        )
