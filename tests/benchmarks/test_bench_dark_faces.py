"""benchmarks/bench_dark_faces.py: both readers timed on each photo, the figures printed."""

from __future__ import annotations

import json
import sys

import pytest
from benchmark_modules import load_benchmark

from vision.reader import default_models_dir

pytestmark = pytest.mark.skipif(
    not (default_models_dir() / "manifest.json").is_file(), reason="no shipped models"
)


def test_the_benchmark_prints_both_times_of_each_photo(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = load_benchmark("bench_dark_faces")
    monkeypatch.setattr(sys, "argv", ["bench_dark_faces.py", "--runs", "1"])
    assert bench.main() == 0
    lines = capsys.readouterr().out.strip().splitlines()
    figures = json.loads(lines[-1])
    assert set(figures) == {"640x480 photo", "12 MP close-up", "12 MP table photo"}
    for timings in figures.values():
        assert timings["with the negative"] > 0 and timings["without"] > 0
    assert lines[0].startswith("640x480 photo: ") and "without" in lines[0]
