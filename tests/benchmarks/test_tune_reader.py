"""``benchmarks/tune_reader.py``: the grid's rows name the thresholds they were scored at."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from benchmark_modules import load_benchmark

from vision.reader import ReaderSettings

tune = load_benchmark("tune_reader")
ROOT = Path(__file__).resolve().parents[2]


def test_rows_name_their_thresholds_and_the_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The example photo as a one-scene manifest: every row of the whole grid is printed with
    thresholds from the grid, each combination once, and the defaults' row is marked."""
    shutil.copyfile(ROOT / "examples" / "hand.jpg", tmp_path / "hand.jpg")
    cards = json.loads((ROOT / "examples" / "hand.json").read_text())["cards"]
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps({"image": "hand.jpg", "cards": cards}) + "\n")
    size = len(tune.DETECTION) * len(tune.UNCERTAIN) * len(tune.NONE_ABOVE)
    monkeypatch.setattr(sys, "argv", ["tune_reader", str(manifest), "--top", str(size)])
    tune.main()
    pattern = (
        r"F1 ([\d.]+) .* detection ([\d.]+)  uncertain ([\d.]+)  none ([\d.]+)"
        r"( \(current default\))?"
    )
    rows = re.findall(pattern, capsys.readouterr().out)
    assert len(rows) == size
    combos = {(float(d), float(u), float(n)) for _, d, u, n, _ in rows}
    assert len(combos) == size
    assert {u for _, u, _ in combos} == set(tune.UNCERTAIN)
    defaults = ReaderSettings()
    marked = [(float(d), float(u), float(n)) for _, d, u, n, mark in rows if mark]
    assert marked == [(defaults.detection_threshold, defaults.uncertain_below, defaults.none_above)]
    scores = [float(f1) for f1, *_ in rows]
    assert scores == sorted(scores, reverse=True)
