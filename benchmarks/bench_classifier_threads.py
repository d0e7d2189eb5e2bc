"""Does splitting a frame's index crops over the two cores beat one session on both?

The shipped index classifier reads batches of random crops three ways, alternated in one run:
one session on every core (as the reader runs it), one session on one thread, and two
one-thread sessions each reading half the batch at once (Python threads; onnxruntime lets go
of the interpreter while it runs). Printed: the median milliseconds of each, for each batch.

    python benchmarks/bench_classifier_threads.py [--batches 4 9 16 32] [--runs 40] [--models DIR]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from vision.crops import CROP_SIZE, crops_to_tensor
from vision.index_detector import session
from vision.reader import default_models_dir


def _ms(function: Callable[[], object]) -> float:
    started = time.perf_counter()
    function()
    return (time.perf_counter() - started) * 1000


def measure(
    pool: ThreadPoolExecutor, sessions: tuple[Any, Any, Any], tensor: Any, runs: int
) -> dict[str, float]:
    """Median milliseconds of the three ways (see the module's text) on one batch."""
    both, single, other = sessions
    name = both.get_inputs()[0].name
    first, second = tensor[: len(tensor) // 2], tensor[len(tensor) // 2 :]

    def split() -> None:
        halves = [
            pool.submit(single.run, None, {name: first}),
            pool.submit(other.run, None, {name: second}),
        ]
        for half in halves:
            half.result()

    times: dict[str, list[float]] = {"both cores": [], "one thread": [], "split": []}
    for _ in range(runs):
        times["both cores"].append(_ms(lambda: both.run(None, {name: tensor})))
        times["one thread"].append(_ms(lambda: single.run(None, {name: tensor})))
        times["split"].append(_ms(split))
    return {key: statistics.median(values) for key, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[4, 9, 16, 32])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--models", type=Path, default=default_models_dir())
    args = parser.parse_args()
    path = args.models / "classifier.onnx"
    sessions = (session(path, None), session(path, 1), session(path, 1))
    rng = np.random.default_rng(0)
    with ThreadPoolExecutor(2) as pool:
        for batch in args.batches:
            crops = rng.integers(0, 256, (batch, CROP_SIZE, CROP_SIZE, 3), np.uint8)
            figures = measure(pool, sessions, crops_to_tensor(crops), args.runs)
            row = ", ".join(f"{key} {value:.2f} ms" for key, value in figures.items())
            print(f"{batch} crops: {row}")


if __name__ == "__main__":
    main()
