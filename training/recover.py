"""Trainable checkpoints from the shipped ONNX exports: fine-tune what shipped.

The shipped ``models/classifier.onnx`` and ``models/detector.onnx`` are all that is kept of the
index classifier and the detector: their torch checkpoints stay on the machine that trained
them. To fine-tune them elsewhere, this module reads the weights back out of the ONNX graph:
the index classifier's, float or int8 (onnxruntime's QDQ format: each weight an integer tensor
and a ``DequantizeLinear`` node), into the network of :mod:`training.classifier`
(``init_weights`` of :class:`training.classifier.ClassifierTraining`); the detector's into
an ultralytics YOLOv8n checkpoint (``YOLO(path)``, :func:`training.detector.finetune_detector`).

The export folded each batch norm into the convolution before it (a convolution with a bias).
The batch norm is unfolded again so that the network computes the same in eval mode *and*
trains as it did: its running mean and (biased) variance are measured on the convolution's
output over calibration inputs, its scale is the standard deviation and its shift the mean
plus the folded bias. In eval mode it is then exactly the folded convolution; in train mode,
on a batch like the calibration inputs, it is that convolution again, so fine-tuning starts
from the shipped model rather than from a network its first batch statistics have upset.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "classifier_checkpoint_from_onnx",
    "detector_checkpoint_from_onnx",
    "onnx_layer_weights",
]


def _dequantized(node: Any, arrays: dict[str, NDArray[Any]]) -> NDArray[np.float32]:
    """The float tensor a ``DequantizeLinear`` node gives: (q - zero point) x scale, per
    channel along its ``axis`` when the scale is a vector."""
    quantized = arrays[node.input[0]].astype(np.float64)
    scale = arrays[node.input[1]].astype(np.float64)
    zero = arrays[node.input[2]].astype(np.float64) if len(node.input) > 2 else np.zeros(1)
    axis = next((int(a.i) for a in node.attribute if a.name == "axis"), 1)
    if scale.ndim == 1 and scale.size > 1:
        shape = [1] * quantized.ndim
        shape[axis] = scale.size
        scale, zero = scale.reshape(shape), zero.reshape(shape)
    return np.asarray((quantized - zero) * scale, np.float32)


def onnx_layer_weights(path: Path) -> list[tuple[str, NDArray[np.float32], NDArray[np.float32]]]:
    """(operator, weight, bias) of every ``Conv`` and ``Gemm`` node of an ONNX model, in the
    graph's order, as float arrays: from initializers, or dequantized from integer ones."""
    import onnx

    return _layer_weights(onnx.load(str(path)).graph, path)


def _layer_weights(
    graph: Any, path: Path
) -> list[tuple[str, NDArray[np.float32], NDArray[np.float32]]]:
    """:func:`onnx_layer_weights` of a loaded graph (``path`` names it in errors)."""
    from onnx import numpy_helper

    arrays = {item.name: numpy_helper.to_array(item) for item in graph.initializer}
    made_by = {output: node for node in graph.node for output in node.output}

    def tensor(name: str) -> NDArray[np.float32]:
        if name in arrays:
            return np.array(arrays[name], np.float32)  # a writable copy
        node = made_by.get(name)
        if node is not None and node.op_type == "Identity":  # the exporter shares equal weights
            return tensor(node.input[0])
        if node is None or node.op_type != "DequantizeLinear" or node.input[0] not in arrays:
            raise ValueError(f"{path}: {name!r} is neither a weight nor a dequantized weight")
        return _dequantized(node, arrays)

    layers = []
    for node in graph.node:
        if node.op_type not in ("Conv", "Gemm"):
            continue
        if len(node.input) < 3:
            raise ValueError(f"{path}: {node.op_type} {node.name!r} has no bias")
        layers.append((node.op_type, tensor(node.input[1]), tensor(node.input[2])))
    return layers


def _fold_into(
    conv: Any, norm: Any, weight: NDArray[np.float32], bias: NDArray[np.float32]
) -> None:
    """Give ``conv`` the folded ``weight`` and ``norm`` the folded ``bias`` alone (unit scale,
    zero mean, unit variance): exact in eval mode whatever the statistics, until
    :func:`_unfold_norms` measures them."""
    import torch

    conv.weight.copy_(torch.from_numpy(np.ascontiguousarray(weight)))
    norm.weight.fill_(1.0)
    norm.bias.copy_(torch.from_numpy(np.ascontiguousarray(bias)))
    norm.running_mean.zero_()
    norm.running_var.fill_(1.0 - norm.eps)


def _unfold_norms(network: Any, norms: list[Any], inputs: Any, batch: int) -> None:
    """Unfold each batch norm of ``norms`` (set by :func:`_fold_into`) on the ``inputs``
    tensor, run through ``network`` in eval mode ``batch`` at a time: its running mean and
    (biased) variance become those of its input, its scale the standard deviation and its
    shift the mean plus the folded bias, so that eval mode computes exactly what it did and
    train mode, on such batches, the same again."""
    import torch

    network.eval()
    # per batch norm: the count, sum and sum of squares of its input, per channel
    sums: list[list[Any]] = [[0, 0.0, 0.0] for _ in norms]

    def add(store: list[Any], values: Any) -> None:
        values = values.double()
        store[0] += values.numel() // values.shape[1]
        store[1] = store[1] + values.sum(dim=(0, 2, 3))
        store[2] = store[2] + (values * values).sum(dim=(0, 2, 3))

    hooks = [
        norm.register_forward_hook(
            lambda module, inputs, output, store=store: add(store, inputs[0])
        )
        for norm, store in zip(norms, sums, strict=True)
    ]
    with torch.no_grad():
        for start in range(0, len(inputs), batch):
            network(inputs[start : start + batch])
        for hook in hooks:
            hook.remove()
        for norm, (count, total, squares) in zip(norms, sums, strict=True):
            mean = total / count
            variance = (squares / count - mean * mean).clamp(min=0.0)
            norm.weight.copy_(torch.sqrt(variance + norm.eps).float())
            norm.bias.add_(mean.float())
            norm.running_mean.copy_(mean.float())
            norm.running_var.copy_(variance.float())


def classifier_checkpoint_from_onnx(
    model: Path, out: Path, crops: NDArray[np.uint8], batch: int = 512
) -> Path:
    """Write at ``out`` a checkpoint of :mod:`training.classifier`'s network holding the
    weights of the exported classifier ``model``, its batch norms unfolded on ``crops``
    ((N, S, S, 3) training crops, a few thousand are plenty). Loads as ``init_weights`` and
    exports with :func:`training.classifier.export_classifier` like any checkpoint.

    ValueError when the graph is not that network's (seven convolutions, two dense layers,
    strides of 2 only where :func:`training.classifier._network` puts them).
    """
    import onnx
    import torch
    from torch import nn

    from training.classifier import _network
    from vision.crops import crops_to_tensor
    from vision.reader import CLASSIFIER_CLASSES

    graph = onnx.load(str(model)).graph
    operators = [node.op_type for node in graph.node]
    if operators.count("Conv") != 7 or operators.count("Gemm") != 2:
        raise ValueError(
            f"{model}: {operators.count('Conv')} convolutions and {operators.count('Gemm')} "
            "dense layers; the index classifier has 7 and 2"
        )
    layers = _layer_weights(graph, model)
    convs = [(w, b) for op, w, b in layers if op == "Conv"]
    dense = [(w, b) for op, w, b in layers if op == "Gemm"]
    widths = (convs[0][0].shape[0], convs[2][0].shape[0], convs[4][0].shape[0],
              convs[6][0].shape[0])  # fmt: skip
    strided = _strided_blocks(graph, model)
    network = _network(len(CLASSIFIER_CLASSES), widths, strided)
    network.eval()
    conv_modules = [m for m in network.features if isinstance(m, nn.Conv2d)]
    norm_modules = [m for m in network.features if isinstance(m, nn.BatchNorm2d)]
    with torch.no_grad():
        for conv, norm, (weight, bias) in zip(conv_modules, norm_modules, convs, strict=True):
            if tuple(conv.weight.shape) != weight.shape:
                raise ValueError(f"{model}: a convolution of shape {weight.shape}, expected "
                                 f"{tuple(conv.weight.shape)}")  # fmt: skip
            _fold_into(conv, norm, weight, bias)
        for layer, (weight, bias) in zip((network.embed, network.head), dense, strict=True):
            if tuple(layer.weight.shape) != weight.shape:
                raise ValueError(f"{model}: a dense layer of shape {weight.shape}, expected "
                                 f"{tuple(layer.weight.shape)}")  # fmt: skip
            layer.weight.copy_(torch.from_numpy(weight))
            layer.bias.copy_(torch.from_numpy(bias))
    _unfold_norms(network, norm_modules, torch.from_numpy(crops_to_tensor(crops)), batch)
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(
        {
            "model": network.state_dict(),
            "widths": list(widths),
            "strided": strided,
            "recovered_from": str(model),
        },
        out,
    )
    return out


def _strided_blocks(graph: Any, path: Path) -> int:
    """How many of the classifier graph's blocks, from the first, halve the map with a
    convolution of stride 2 (the second of each block) instead of max pooling; ValueError
    when the strides follow no such pattern."""
    strides = []
    for node in graph.node:
        if node.op_type == "Conv":
            stride = next((list(a.ints) for a in node.attribute if a.name == "strides"), [1, 1])
            strides.append(max(stride))
    blocks = [strides[1] == 2, strides[3] == 2, strides[5] == 2]
    count = blocks.index(False) if False in blocks else 3
    if any(blocks[count:]) or any(strides[i] != 1 for i in (0, 2, 4, 6)):
        raise ValueError(f"{path}: convolution strides {strides} fit no index classifier")
    return count


def detector_checkpoint_from_onnx(
    model: Path, out: Path, images: NDArray[np.float32], batch: int = 16
) -> Path:
    """Write at ``out`` an ultralytics checkpoint of the exported YOLOv8n detector ``model``
    (one class, "index"), its batch norms unfolded on ``images`` ((N, 3, S, S) network inputs,
    RGB in [0, 1], letterboxed as the reader letterboxes: a few dozen training scenes are
    plenty). It loads as ``YOLO(out)``, fine-tunes with
    :func:`training.detector.finetune_detector` and exports with
    :func:`training.detector.export_detector` like a trained run's weights.

    Every convolution of the graph is matched by its parameter name (the ultralytics export
    keeps them); ValueError when one is missing or of another shape, or when the graph holds
    weights the network has no place for.
    """
    import onnx
    import torch
    from onnx import numpy_helper
    from torch import nn

    from training.checkpoints import save_finished_detector
    from training.environment import offline_ultralytics

    offline_ultralytics(out.parent / "ultralytics")
    from ultralytics.nn.tasks import DetectionModel

    arrays = {
        item.name: np.array(numpy_helper.to_array(item), np.float32)
        for item in onnx.load(str(model)).graph.initializer
        if item.name.startswith("model.")
    }
    network = DetectionModel("yolov8n.yaml", nc=1, verbose=False)
    network.names = {0: "index"}
    modules = dict(network.named_modules())
    placed: set[str] = set()

    def take(name: str, shape: tuple[int, ...]) -> NDArray[np.float32]:
        if name not in arrays:
            raise ValueError(f"{model}: no weight {name!r}; is it an exported YOLOv8n detector?")
        if arrays[name].shape != shape:
            raise ValueError(f"{model}: {name!r} has shape {arrays[name].shape}, expected {shape}")
        placed.add(name)
        return arrays[name]

    norms = []
    with torch.no_grad():
        for name, module in modules.items():
            if isinstance(module, nn.BatchNorm2d):  # an ultralytics Conv: conv, bn, activation
                owner = name.rsplit(".", 1)[0]
                conv = modules[owner + ".conv"]
                weight = take(owner + ".conv.weight", tuple(conv.weight.shape))
                bias = take(owner + ".conv.bias", (conv.out_channels,))
                _fold_into(conv, module, weight, bias)
                norms.append(module)
            elif (
                isinstance(module, nn.Conv2d)
                and module.bias is not None  # the head's last convolutions
                and module.weight.requires_grad  # not the fixed DFL projection
            ):
                weight = take(name + ".weight", tuple(module.weight.shape))
                module.weight.copy_(torch.from_numpy(weight))
                module.bias.copy_(torch.from_numpy(take(name + ".bias", (module.out_channels,))))
    unplaced = sorted(set(arrays) - placed - {"model.22.dfl.conv.weight"})
    if unplaced:
        raise ValueError(f"{model}: weights with no place in YOLOv8n: {', '.join(unplaced[:5])}")
    _unfold_norms(network, norms, torch.from_numpy(np.ascontiguousarray(images, np.float32)), batch)
    return save_finished_detector(network, out, recovered_from=str(model))
