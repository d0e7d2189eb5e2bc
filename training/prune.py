"""A narrower index classifier cut from a trained one: the start of a smaller classifier that
keeps the trained one's features instead of learning them from scratch.

Each convolution keeps the output channels whose batch norm scales it most (the largest
``|weight|`` of the norm after it), in their order; the next convolution keeps the matching
input channels, and the embedding keeps the columns of the last convolution's kept channels
(each one 4 x 4 places of the flattened map). The dense layers keep their sizes. A channel
whose norm's scale and shift are both zero adds nothing past its ReLU, so cutting only such
channels leaves every output as it was; cutting others changes the readings, and the cut
network is then fine-tuned, with the trained one as its teacher (:mod:`training.distill`).

    python -m training.prune CHECKPOINT --widths 40,80,160,160 --out OUT.pt
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["kept_channels", "prune_classifier"]


def kept_channels(scales: Any, count: int) -> Any:
    """The ``count`` channels (a sorted index tensor) whose norm scales ``scales`` are the
    largest in size; ValueError when ``count`` is not in 1..len(scales)."""
    import torch

    if not 1 <= count <= len(scales):
        raise ValueError(f"cannot keep {count} of {len(scales)} channels")
    return torch.sort(torch.topk(scales.abs(), count).indices).values


def prune_classifier(state_path: Path, widths: tuple[int, int, int, int], out: Path) -> Path:
    """Write at ``out`` a checkpoint of the classifier network of ``widths`` cut from the
    checkpoint at ``state_path`` (see the module's text); it loads as ``init_weights`` of a
    run with those widths and exports like any checkpoint. ValueError when a width is larger
    than the checkpoint's."""
    import torch

    from training.classifier import _checkpoint_widths, _network
    from vision.reader import CLASSIFIER_CLASSES

    state = torch.load(state_path, map_location="cpu", weights_only=False)
    source_widths = _checkpoint_widths(state)
    if len(source_widths) != 4 or any(
        new > old for new, old in zip(widths, source_widths, strict=True)
    ):
        raise ValueError(f"cannot cut widths {tuple(widths)} from {tuple(source_widths)}")
    source = _network(len(CLASSIFIER_CLASSES), tuple(source_widths))
    source.load_state_dict(state["model"])
    target = _network(len(CLASSIFIER_CLASSES), widths)
    pairs = _conv_norm_pairs(source)
    with torch.no_grad():
        inputs = torch.arange(3)  # the first convolution reads all three colours
        for (conv, norm), (new_conv, new_norm) in zip(pairs, _conv_norm_pairs(target), strict=True):
            kept = kept_channels(norm.weight, new_conv.out_channels)
            new_conv.weight.copy_(conv.weight[kept][:, inputs])
            for name in ("weight", "bias", "running_mean", "running_var"):
                getattr(new_norm, name).copy_(getattr(norm, name)[kept])
            new_norm.num_batches_tracked.copy_(norm.num_batches_tracked)
            inputs = kept
        places = source.embed.in_features // source_widths[3]  # 4 x 4 places a channel
        columns = (inputs[:, None] * places + torch.arange(places)[None]).reshape(-1)
        target.embed.weight.copy_(source.embed.weight[:, columns])
        target.embed.bias.copy_(source.embed.bias)
        target.head.load_state_dict(source.head.state_dict())
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(
        {"model": target.state_dict(), "widths": list(widths), "cut_from": str(state_path)}, out
    )
    return out


def _conv_norm_pairs(network: Any) -> list[tuple[Any, Any]]:
    """Each convolution of the network's features with the batch norm after it."""
    from torch import nn

    modules = list(network.features)
    return [
        (module, modules[number + 1])
        for number, module in enumerate(modules)
        if isinstance(module, nn.Conv2d)
    ]


def main(argv: list[str] | None = None) -> int:
    """The command line of the module's text."""
    from training.classifier import parse_widths

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("--widths", required=True, help="four channel counts, e.g. 40,80,160,160")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        widths = parse_widths(args.widths)
        prune_classifier(args.checkpoint, widths, args.out)
    except (ValueError, OSError) as error:
        parser.exit(2, f"training.prune: {error}\n")
    print(f"wrote {args.out} (widths {','.join(map(str, widths))})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
