"""The index classifier with strided blocks (``training.classifier._network(strided=)``): it
loads the plain network's weights, computes what the plain network would with its pooling
taken at one pixel of four, exports, averages and comes back from its ONNX export with its
strides.

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
    average_checkpoints,
    export_classifier,
    quantize_classifier,
)
from training.recover import classifier_checkpoint_from_onnx  # noqa: E402
from vision.crops import crops_to_tensor  # noqa: E402
from vision.reader import CLASSIFIER_CLASSES  # noqa: E402

WIDTHS = (8, 12, 16, 24)
CLASSES = len(CLASSIFIER_CLASSES)


def _crops(count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (count, 32, 32, 3), dtype=np.uint8)


def _products(model: object) -> int:
    """Multiply-adds of the network's convolutions on one 32 px crop."""
    total = 0

    def count(module: object, inputs: object, output: object) -> None:
        nonlocal total
        weight = module.weight  # type: ignore[attr-defined]
        total += int(weight[0].numel() * output.numel())  # type: ignore[attr-defined]

    hooks = [
        m.register_forward_hook(count)
        for m in model.modules()  # type: ignore[attr-defined]
        if isinstance(m, torch.nn.Conv2d)
    ]
    with torch.no_grad():
        model(torch.zeros(1, 3, 32, 32))  # type: ignore[operator]
    for hook in hooks:
        hook.remove()
    return total


@pytest.mark.parametrize("strided", [1, 2, 3])
def test_strided_network_loads_the_plain_weights_and_costs_less(strided: int) -> None:
    torch.manual_seed(0)
    plain = _network(CLASSES, WIDTHS).eval()
    thin = _network(CLASSES, WIDTHS, strided).eval()
    thin.load_state_dict(plain.state_dict())  # the same keys and shapes
    logits, embedding = thin(torch.from_numpy(crops_to_tensor(_crops(4, 1))))
    assert logits.shape == (4, CLASSES) and embedding.shape == (4, 128)
    assert _products(thin) < _products(plain)


def test_the_48_wide_network_loses_the_products_its_docstring_gives() -> None:
    widths = (48, 96, 192, 192)
    plain = _products(_network(CLASSES, widths))
    shares = [_products(_network(CLASSES, widths, s)) / plain for s in (1, 2, 3)]
    assert shares == pytest.approx([0.83, 0.65, 0.48], abs=0.01)


def test_a_strided_block_is_the_plain_block_sampled_where_pooling_would_take_the_max() -> None:
    """One strided block computes the plain block's last map at every other pixel: where
    the map is constant over each 2 x 2 window, max pooling and sampling agree exactly."""
    torch.manual_seed(2)
    plain = _network(CLASSES, WIDTHS).eval()
    thin = _network(CLASSES, WIDTHS, 1).eval()
    thin.load_state_dict(plain.state_dict())
    crops = torch.from_numpy(crops_to_tensor(_crops(3, 5)))
    with torch.no_grad():
        full = plain.features[:6](crops)  # the first block before its pooling
        sampled = thin.features[:7](crops)
    assert torch.allclose(sampled, full[:, :, ::2, ::2], atol=1e-5)


def test_strided_must_be_zero_to_three() -> None:
    with pytest.raises(ValueError, match="strided must be 0 to 3"):
        _network(CLASSES, WIDTHS, 4)


def test_export_and_recovery_keep_the_strides(tmp_path: Path) -> None:
    torch.manual_seed(4)
    model = _network(CLASSES, WIDTHS, 2)
    with torch.no_grad():  # batch norms far from the identity, as after training
        for name, value in model.state_dict().items():
            if name.endswith(("running_mean", "bias")):
                value.copy_(torch.randn_like(value) * 0.3)
            elif name.endswith("running_var") or (name.endswith("weight") and value.dim() == 1):
                value.copy_(torch.rand_like(value) + 0.5)
    path = tmp_path / "strided.pt"
    torch.save({"model": model.state_dict(), "widths": list(WIDTHS), "strided": 2}, path)
    exported = export_classifier(path, tmp_path / "strided.onnx")
    crops = _crops(64, 7)
    quantized = quantize_classifier(exported, tmp_path / "strided-int8.onnx", crops, samples=32)
    for onnx_path in (exported, quantized):
        back = classifier_checkpoint_from_onnx(onnx_path, tmp_path / "back.pt", crops)
        state = torch.load(back, weights_only=False)
        assert state["strided"] == 2 and list(state["widths"]) == list(WIDTHS)
    # the float export comes back computing what the checkpoint computes
    back = classifier_checkpoint_from_onnx(exported, tmp_path / "back.pt", crops)
    again = _network(CLASSES, WIDTHS, 2).eval()
    again.load_state_dict(torch.load(back, weights_only=False)["model"])
    model.eval()
    inputs = torch.from_numpy(crops_to_tensor(crops[:8]))
    with torch.no_grad():
        assert torch.allclose(again(inputs)[0], model(inputs)[0], atol=1e-3)


def test_checkpoints_of_other_strides_are_not_averaged(tmp_path: Path) -> None:
    paths = []
    for strided in (0, 1):
        model = _network(CLASSES, WIDTHS, strided)
        paths.append(tmp_path / f"s{strided}.pt")
        torch.save({"model": model.state_dict(), "widths": list(WIDTHS), "strided": strided},
                   paths[-1])  # fmt: skip
    with pytest.raises(ValueError, match="strided blocks"):
        average_checkpoints(paths, tmp_path / "mean.pt")
    same = average_checkpoints([paths[1], paths[1]], tmp_path / "mean.pt")
    assert torch.load(same, weights_only=False)["strided"] == 1


def test_weights_the_exporter_shares_come_back(tmp_path: Path) -> None:
    """A fresh network's batch norms fold to equal biases, which the ONNX exporter stores once
    and hands on through Identity nodes: recovery follows them."""
    import onnx

    model = _network(CLASSES, WIDTHS, 1)
    path = tmp_path / "fresh.pt"
    torch.save({"model": model.state_dict(), "widths": list(WIDTHS), "strided": 1}, path)
    exported = export_classifier(path, tmp_path / "fresh.onnx")
    assert "Identity" in {node.op_type for node in onnx.load(str(exported)).graph.node}
    back = classifier_checkpoint_from_onnx(exported, tmp_path / "back.pt", _crops(32, 3))
    assert torch.load(back, weights_only=False)["strided"] == 1
