"""Checkpoints of any of the networks (torch, imported inside the functions): the weighted mean
of several, and the finished-run detector checkpoint ultralytics loads, trains on and exports."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def weighted_state(states: list[dict[str, Any]], weights: list[float]) -> dict[str, Any]:
    """The state dict whose every floating tensor (weights and batch-norm statistics) is the sum
    of the ``states``' tensors times their ``weights``; integer counters are the first state's.
    ValueError when the states hold other names or shapes."""
    if not states or len(states) != len(weights):
        raise ValueError("give one weight for each of one or more states")
    first = states[0]
    for state in states[1:]:
        if state.keys() != first.keys():
            raise ValueError("the checkpoints are not the same network")
    mixed = {}
    for name, value in first.items():
        if not value.is_floating_point():
            mixed[name] = value.clone()
            continue
        if any(state[name].shape != value.shape for state in states):
            raise ValueError(f"the checkpoints differ in the shape of {name}")
        mixed[name] = sum(
            weight * state[name].float() for weight, state in zip(weights, states, strict=True)
        )
    return mixed


def save_finished_detector(network: Any, out: Path, **provenance: Any) -> Path:
    """Write ``network`` (an ultralytics ``DetectionModel``) at ``out`` as a finished run's
    checkpoint: ``YOLO(out).train()`` starts a new run from it and it exports like trained
    weights. ``provenance`` (where the weights came from) is stored beside them."""
    import datetime

    import torch
    from ultralytics import __version__

    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(
        {
            "date": datetime.datetime.now(datetime.UTC).isoformat(),
            "version": __version__,
            "epoch": -1,  # a finished run's checkpoint: YOLO(out).train() starts a new run
            "best_fitness": None,
            "model": network.float(),
            "ema": None,
            "updates": None,
            "optimizer": None,
            "train_args": {"task": "detect", "imgsz": 320},
            **provenance,
        },
        out,
    )
    return out
