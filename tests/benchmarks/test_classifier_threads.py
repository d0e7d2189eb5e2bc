"""benchmarks/bench_classifier_threads.py: the three ways of reading a batch of crops."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from benchmark_modules import load_benchmark

from vision.crops import crops_to_tensor
from vision.index_detector import session
from vision.reader import default_models_dir

threads = load_benchmark("bench_classifier_threads")


class _Counting:
    """A session stand-in that counts the crops it is given and answers after them."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.crops = 0

    def get_inputs(self) -> Any:
        return self.real.get_inputs()

    def run(self, outputs: Any, feeds: dict[str, Any]) -> Any:
        (batch,) = feeds.values()
        self.crops += len(batch)
        return self.real.run(outputs, feeds)


def test_each_way_reads_the_whole_batch_and_the_split_reads_half_each() -> None:
    path = default_models_dir() / "classifier.onnx"
    both, single, other = (_Counting(session(path, threads_)) for threads_ in (None, 1, 1))
    crops = np.random.default_rng(0).integers(0, 256, (5, 32, 32, 3), np.uint8)
    with ThreadPoolExecutor(2) as pool:
        figures = threads.measure(pool, (both, single, other), crops_to_tensor(crops), runs=2)
    assert set(figures) == {"both cores", "one thread", "split"}
    assert all(value > 0 for value in figures.values())
    # two runs: 5 crops each on both cores; 5 alone then 2 split on one thread; 3 on the other
    assert (both.crops, single.crops, other.crops) == (10, 14, 6)
