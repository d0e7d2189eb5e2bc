"""benchmarks/compare_models.py: each folder's figures through the gate, better or as well."""

from __future__ import annotations

from typing import Any

from benchmark_modules import load_benchmark

compare = load_benchmark("compare_models")


def _figures(**sets: tuple[float, int]) -> dict[str, Any]:
    return {
        name: {"f1": f1, "wrong": wrong, "cards": 500, "exact_photos": 0.5}
        for name, (f1, wrong) in sets.items()
    }


def test_a_folder_reading_as_well_passes_only_the_as_well_gate() -> None:
    figures = {
        "shipped": _figures(boxes=(0.7774, 4), tables=(0.9896, 0), holdout=(0.9357, 80)),
        "cut": _figures(boxes=(0.7771, 4), tables=(0.9896, 0), holdout=(0.9340, 82)),
        "worse": _figures(boxes=(0.7774, 4), tables=(0.9917, 0), holdout=(0.9297, 89)),
    }
    better = compare.judge(figures, ["cut", "worse"])
    assert not better["cut"].promote and "boxes: not better (F1 0.7774 -> 0.7771)" in (
        better["cut"].reasons
    )
    as_well = compare.judge(figures, ["cut", "worse"], as_well=True)
    assert as_well["cut"].promote and as_well["cut"].reasons == ("every set reads as well",)
    assert not as_well["worse"].promote
    assert as_well["worse"].reasons == ("holdout: worse (F1 0.9357 -> 0.9297, tolerance 0.0030)",)
