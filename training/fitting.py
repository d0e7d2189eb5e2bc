"""What the two classifiers' trainings share (torch, imported inside the functions): the
convolution block, the lighting jitter, the resumable epoch loop and the ONNX export."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from tqdm import tqdm

__all__ = [
    "RunSettings",
    "accuracy",
    "conv_block",
    "export_with_classes",
    "fit",
    "light_blur_noise",
    "load_trained",
    "parse_device",
    "quarter_turns",
    "resolve_device",
    "seconds_per_step",
    "start_run",
    "ultralytics_device",
]


class RunSettings(Protocol):
    """What :func:`fit` and :func:`start_run` need of a training's settings
    (``ClassifierTraining`` and ``CardTraining`` have it)."""

    @property
    def run_dir(self) -> Path: ...
    @property
    def epochs(self) -> int: ...
    @property
    def batch(self) -> int: ...
    @property
    def learning_rate(self) -> float: ...
    @property
    def seed(self) -> int: ...
    @property
    def threads(self) -> int | None: ...
    @property
    def init_weights(self) -> Path | None: ...
    @property
    def widths(self) -> tuple[int, int, int, int]: ...
    @property
    def device(self) -> str: ...


def parse_device(name: str) -> str:
    """``name`` normalised (``auto``, ``cpu``, ``cuda:N``; ``cuda`` is ``cuda:0``), or a
    ValueError naming it: the syntax alone, so a typo is named without torch."""
    wanted = name.strip().lower()
    if wanted in ("auto", "cpu"):
        return wanted
    if wanted == "cuda":
        return "cuda:0"
    if wanted.startswith("cuda:") and wanted[5:].isdigit():
        return f"cuda:{int(wanted[5:])}"
    raise ValueError(f"device {name!r}: expected auto, cpu, cuda or cuda:N")


def resolve_device(name: str) -> str:
    """The torch device a training runs on: ``auto`` (the first GPU if torch sees one, else
    the CPU), ``cpu``, ``cuda`` or ``cuda:N``. A GPU asked for that torch cannot use is a
    ValueError that says what torch sees, not a failure deep inside the first epoch."""
    wanted = parse_device(name)
    if wanted == "cpu":
        return "cpu"
    import torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if wanted == "auto":
        return "cuda:0" if count else "cpu"
    if int(wanted[5:]) >= count:
        raise ValueError(
            f"device {name!r}: torch {torch.__version__} sees {count} CUDA GPU(s)"
            + ("" if count else " (a CPU-only build, or no driver)")
        )
    return wanted


def ultralytics_device(device: str) -> str:
    """A resolved torch device (:func:`resolve_device`) as ultralytics names it: ``cpu`` or
    the GPU's ordinal (``cuda:1`` -> ``1``)."""
    return "cpu" if device == "cpu" else device.split(":", 1)[1]


def start_run(run: RunSettings) -> None:
    """Seed torch, set its thread count and make the run folder: before the network is built,
    so a seed gives the same initial weights."""
    import torch

    torch.manual_seed(run.seed)
    if run.threads:
        torch.set_num_threads(run.threads)
    run.run_dir.mkdir(parents=True, exist_ok=True)


def conv_block(inputs: int, outputs: int, strided: bool = False) -> list[Any]:
    """Two 3x3 convolutions (batch norm, ReLU), then 2x2 max pooling; ``strided``, the second
    convolution steps two pixels instead and the pooling is an identity: the same weights
    (the same state dict keys), a quarter of that convolution's products."""
    from torch import nn

    return [
        nn.Conv2d(inputs, outputs, 3, padding=1, bias=False),
        nn.BatchNorm2d(outputs),
        nn.ReLU(inplace=True),
        nn.Conv2d(outputs, outputs, 3, stride=2 if strided else 1, padding=1, bias=False),
        nn.BatchNorm2d(outputs),
        nn.ReLU(inplace=True),
        nn.Identity() if strided else nn.MaxPool2d(2),
    ]


def quarter_turns(batch: Any, generator: Any) -> Any:
    """A copy of the (B, C, S, S) batch, each image turned by its own random number of
    quarter turns (drawn on the batch's device, with ``generator``, which must be there)."""
    import torch

    turns = torch.randint(0, 4, (batch.shape[0],), generator=generator, device=batch.device)
    out = batch.clone()
    for k in range(1, 4):
        chosen = turns == k
        if chosen.any():
            out[chosen] = torch.rot90(batch[chosen], k, dims=(2, 3))
    return out


def light_blur_noise(batch: Any, generator: Any, blur_probability: float) -> Any:
    """Brightness, contrast and colour cast, a 3x3 blur on ``blur_probability`` of the images,
    and Gaussian noise, on a (B, 3, H, W) batch in [0, 1]; clamped to [0, 1]. The draws are
    made on the batch's device, with ``generator`` (which must be on that device too)."""
    import torch

    count = batch.shape[0]

    def uniform(low: float, high: float, channels: int = 1) -> Any:
        shape = (count, channels, 1, 1)
        return torch.empty(shape, device=batch.device).uniform_(low, high, generator=generator)

    gain = uniform(0.6, 1.3)
    tint = uniform(0.85, 1.15, 3)
    offset = uniform(-0.15, 0.15)
    mean = batch.mean(dim=(1, 2, 3), keepdim=True)
    contrast = uniform(0.6, 1.3)
    out = ((batch - mean) * contrast + mean) * gain * tint + offset
    blur = torch.rand(count, generator=generator, device=batch.device) < blur_probability
    if blur.any():
        out[blur] = torch.nn.functional.avg_pool2d(
            out[blur], 3, stride=1, padding=1, count_include_pad=False
        )
    noise = uniform(0.0, 0.05)
    out = out + torch.randn(out.shape, generator=generator, device=batch.device) * noise
    return out.clamp(0.0, 1.0)


def accuracy(
    model: Any,
    inputs: Any,
    targets: Any,
    logits_of: Callable[[Any, Any], Any],
    right: Callable[[Any, Any], Any],
    chunk: int = 1024,
) -> float:
    """Share of ``inputs`` whose top class is right (``right(predicted, targets)``), in eval
    mode, ``chunk`` at a time on the model's device (``inputs`` and ``targets`` stay where they
    are)."""
    import torch

    model.eval()
    device = next(model.parameters()).device
    with torch.no_grad():
        predicted = torch.cat(
            [
                logits_of(model, inputs[i : i + chunk].to(device)).argmax(1).cpu()
                for i in range(0, len(inputs), chunk)
            ]
        )
    return float(right(predicted, targets).float().mean())


def _batch_source(
    inputs: Any, targets: Any, device: Any, augment_on_device: bool, seed: int
) -> tuple[Any, Any, Any]:
    """(inputs, targets, generator) where the batches are drawn and augmented: on the GPU
    (the tensors copied there once, a generator of that GPU) with ``augment_on_device`` and a
    GPU ``device``, else on the CPU with a CPU generator."""
    import torch

    if augment_on_device and device.type == "cuda":
        return inputs.to(device), targets.to(device), torch.Generator(device).manual_seed(seed)
    return inputs, targets, torch.Generator("cpu").manual_seed(seed)


def _stepper(
    model: Any,
    optimizer: Any,
    device: Any,
    generator: Any,
    augment: Callable[[Any, Any], Any],
    logits_of: Callable[[Any, Any], Any],
    loss: Callable[[Any, Any], Any],
) -> Callable[[Any, Any], tuple[Any, Any, Any]]:
    """One training step as a function of a batch (inputs, targets): augmented where the
    generator is, moved to ``device``, forward, backward, optimizer step; it returns (logits,
    targets on the device, loss)."""

    def step(batch_inputs: Any, batch_targets: Any) -> tuple[Any, Any, Any]:
        inputs = augment(batch_inputs, generator).to(device, non_blocking=True)
        targets = batch_targets.to(device, non_blocking=True)
        logits = logits_of(model, inputs)
        step_loss = loss(logits, targets)
        optimizer.zero_grad()
        step_loss.backward()
        optimizer.step()
        return logits, targets, step_loss

    return step


def seconds_per_step(
    model: Any,
    inputs: Any,
    targets: Any,
    run: RunSettings,
    *,
    augment: Callable[[Any, Any], Any],
    logits_of: Callable[[Any, Any], Any],
    loss: Callable[[Any, Any], Any],
    augment_on_device: bool = False,
    steps: int = 20,
) -> float:
    """Seconds one step of :func:`fit` takes for ``model`` (a throwaway: it is trained) on
    ``run.device`` with ``run.batch`` examples drawn from ``inputs``: the mean of ``steps``
    steps after three warm-up ones. A training that must end within a given time sizes its
    epochs with it."""
    import time

    import torch

    device = torch.device(resolve_device(run.device))
    model.to(device).train()
    inputs, targets, generator = _batch_source(inputs, targets, device, augment_on_device, run.seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=run.learning_rate)

    train_step = _stepper(model, optimizer, device, generator, augment, logits_of, loss)

    def step() -> None:
        index = torch.randint(
            0, len(inputs), (run.batch,), generator=generator, device=generator.device
        )
        train_step(inputs[index], targets[index])

    def synchronize() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    for _ in range(3):
        step()
    synchronize()
    started = time.perf_counter()
    for _ in range(steps):
        step()
    synchronize()
    return (time.perf_counter() - started) / steps


def fit(
    model: Any,
    inputs: Any,
    targets: Any,
    run: RunSettings,
    *,
    name: str,
    augment: Callable[[Any, Any], Any],
    logits_of: Callable[[Any, Any], Any],
    loss: Callable[[Any, Any], Any],
    right: Callable[[Any, Any], Any],
    held_out: Callable[[Any], float] | None = None,
    held_out_label: str = "held-out accuracy",
    augment_on_device: bool = False,
) -> Path:
    """Train with AdamW and a one-cycle schedule (``run``'s epochs, batch, learning rate and
    seed); returns the checkpoint to use.

    The model starts from ``run.init_weights`` when given (fine-tuning). ``run_dir/NAME_last.pt``
    is written after every epoch, with ``run.widths`` for the export, and a rerun resumes from
    it. Each epoch prints its loss and train accuracy, and ``held_out(model)`` when given (else
    the train accuracy stands for it); the epoch where that is best is kept as
    ``run_dir/NAME_best.pt`` (its weights and widths only: it is exported, never resumed).

    The batches are augmented on the CPU with one seeded generator, so a seed draws the same
    batches on any device; with ``augment_on_device`` (for an ``augment`` whose draws follow
    the batch's device) and a GPU, the crops are copied to the GPU once and augmented there,
    with a generator of that GPU: several times faster, the same batches on every run there.
    """
    import torch

    device = torch.device(resolve_device(run.device))
    model.to(device)
    if run.init_weights is not None:
        initial = torch.load(run.init_weights, map_location=device, weights_only=False)
        model.load_state_dict(initial["model"])
    run_dir, epochs, batch = run.run_dir, run.epochs, run.batch
    learning_rate, seed = run.learning_rate, run.seed

    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=5e-4)
    steps_per_epoch = math.ceil(len(inputs) / batch)
    schedule = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, learning_rate, total_steps=epochs * steps_per_epoch, pct_start=0.15
    )
    state_path = run_dir / f"{name}_last.pt"
    best_path = run_dir / f"{name}_best.pt"
    start, best_accuracy = 0, -1.0
    if state_path.is_file():
        state = torch.load(state_path, map_location=device, weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        schedule.load_state_dict(state["schedule"])
        start = state["epoch"] + 1
        best_accuracy = state.get("best_accuracy", -1.0)
    inputs, targets, generator = _batch_source(
        inputs, targets, device, augment_on_device, seed + start
    )
    train_step = _stepper(model, optimizer, device, generator, augment, logits_of, loss)
    for epoch in range(start, epochs):
        model.train()
        order = torch.randperm(len(inputs), generator=generator, device=generator.device)
        correct, seen, total_loss = 0, 0, 0.0
        bar = tqdm(range(steps_per_epoch), desc=f"{name} {epoch + 1}/{epochs}", unit="batch")
        for step in bar:
            index = order[step * batch : (step + 1) * batch]
            logits, batch_targets, step_loss = train_step(inputs[index], targets[index])
            schedule.step()
            total_loss += float(step_loss.detach()) * len(index)
            correct += int(right(logits.argmax(1), batch_targets).sum())
            seen += len(index)
        bar.close()
        score = correct / seen
        message = (
            f"{name} epoch {epoch + 1}: loss {total_loss / seen:.3f}, train accuracy {score:.3f}"
        )
        if held_out is not None:
            score = held_out(model)
            message += f", {held_out_label} {score:.3f}"
        print(message, flush=True)
        state = {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "schedule": schedule.state_dict(),
            "epoch": epoch,
            "accuracy": score,
            "best_accuracy": max(best_accuracy, score),
            "widths": list(run.widths),
            # the index classifier's strided blocks (training.classifier._network)
            "strided": int(getattr(run, "strided", 0)),
        }
        if score > best_accuracy:
            best_accuracy = score
            slim = {key: state[key] for key in ("model", "epoch", "accuracy", "widths", "strided")}
            torch.save(slim, best_path)
        torch.save(state, state_path)
    return best_path if best_path.is_file() else state_path


def load_trained(
    state_path: Path,
    network: Callable[[Any], Any],
    widths_of: Callable[[dict[str, Any]], tuple[int, ...]] = lambda state: tuple(state["widths"]),
) -> Any:
    """The network a checkpoint of :func:`fit` holds, on the CPU, for export: built by
    ``network`` from the checkpoint's widths (``widths_of``: the tuple stored under
    ``widths``) and given its weights."""
    import torch

    state = torch.load(state_path, map_location="cpu", weights_only=False)
    model = network(widths_of(state))
    model.load_state_dict(state["model"])
    return model


def export_with_classes(
    model: Any,
    example: Any,
    out: Path,
    input_name: str,
    output_names: list[str],
    classes: tuple[str, ...],
) -> Path:
    """Export ``model`` (eval mode) to ONNX with a free batch size, the class list as JSON in
    its ``classes`` metadata."""
    import onnx
    import torch

    model.eval()
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(
        model,
        (example,),
        str(out),
        input_names=[input_name],
        output_names=output_names,
        dynamic_axes={name: {0: "batch"} for name in (input_name, *output_names)},
        opset_version=17,
        dynamo=False,
    )
    exported = onnx.load(str(out))
    entry = exported.metadata_props.add()
    entry.key, entry.value = "classes", json.dumps(list(classes))
    onnx.save(exported, str(out))
    return out
