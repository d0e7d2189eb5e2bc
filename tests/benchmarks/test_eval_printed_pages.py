"""``benchmarks/eval_printed_pages.py``: card-free tables with print, read with and without the
index verifier."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from benchmark_modules import load_benchmark

printed_pages = load_benchmark("eval_printed_pages")

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
pytestmark = pytest.mark.skipif(not DEJAVU.is_file(), reason="needs fonts-dejavu-core")


def test_tables_are_drawn_from_their_seed() -> None:
    first, again, other = (printed_pages.table_with_print(seed) for seed in (3, 3, 4))
    assert first.dtype == np.uint8 and first.ndim == 3
    assert (first.shape[1], first.shape[0]) in printed_pages.SIZES
    assert first.shape == again.shape and (first == again).all()
    assert first.shape != other.shape or (first != other).any()


def test_json_line_has_both_readers(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["eval_printed_pages.py", "--count", "2", "--json"])
    printed_pages.main()
    row = json.loads(capsys.readouterr().out)
    for name in ("shipped reader", "without the index verifier", "verifying certain cards only"):
        assert row[name]["images"] == 2
        assert 0 <= row[name]["images_with_a_false_card"] <= 2
        assert row[name]["false_cards"] >= 0
        assert 0 <= row[name]["images_flagged_uncertain"] <= min(2, row[name]["uncertain_cards"])
