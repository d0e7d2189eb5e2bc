"""Median wall times of a few calls, in milliseconds: the timing the benchmarks share.

The machine may be shared, so a figure is the median of several runs, and functions compared
with each other are timed in turn within each run (:func:`paired_median_ms`), so every one of
them sees the same load.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["median_ms", "paired_median_ms"]


def median_ms(function: Callable[[], Any], runs: int) -> float:
    """The median time of ``runs`` calls of ``function``."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        function()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def paired_median_ms(functions: Sequence[Callable[[], Any]], runs: int) -> list[float]:
    """Medians of the functions timed in turn within each run (so all see the same load)."""
    times: list[list[float]] = [[] for _ in functions]
    for _ in range(runs):
        for function, record in zip(functions, times, strict=True):
            started = time.perf_counter()
            function()
            record.append((time.perf_counter() - started) * 1000)
    return [statistics.median(record) for record in times]
