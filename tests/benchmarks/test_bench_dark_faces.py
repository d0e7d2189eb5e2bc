"""benchmarks/bench_dark_faces.py: both readers timed on each photo, the figures printed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from benchmark_modules import load_benchmark

from vision.reader import default_models_dir

ROOT = Path(__file__).resolve().parents[2]

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
    assert set(figures) == {
        "640x480 photo",
        "12 MP close-up",
        "12 MP table photo",
        "12 MP table photo, light on dark",
    }
    for timings in figures.values():
        assert timings["with the negative"] > 0 and timings["without"] > 0
    assert figures["12 MP table photo, light on dark"]["negative detected again"] > 0
    assert lines[0].startswith("640x480 photo: ") and "without" in lines[0]


def test_the_large_photos_of_a_folder_are_glanced_at_both_ways(tmp_path: Path) -> None:
    """Only the photos over ``tile_above_px`` are counted, found beside the manifest or in its
    ``images/`` folder; the example's negative tiled three by three at 2000 x 1500 (a table
    printed light on dark, whose glance shows indices) is glanced at alike both ways."""
    import cv2
    import numpy as np

    from vision.dark_faces import negative, negative_boxes
    from vision.imageio import load_image
    from vision.reader import Reader

    bench = load_benchmark("bench_dark_faces")
    example = load_image(ROOT / "examples" / "hand.jpg")
    table = cv2.resize(np.tile(example, (3, 3, 1)), (2000, 1500), interpolation=cv2.INTER_CUBIC)
    folder = tmp_path / "tables"
    (folder / "images").mkdir(parents=True)
    cv2.imwrite(str(folder / "images" / "table.png"), negative(table))
    cv2.imwrite(str(folder / "hand.jpg"), example)
    rows = [{"image": "table.png", "cards": []}, {"image": "hand.jpg", "cards": []}]
    rows.append({"image": "gone.jpg", "cards": []})
    (folder / "manifest.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    reader = Reader.load()
    counts = bench.large_photo_glances(reader, tmp_path)
    # about 60 indices either way, one more or fewer at full size: the same decision
    assert counts["photos"] == 1 and counts["shows indices"] == 1
    assert counts["same decision"] == 1
    found, glance = reader.detector.detect_and_glance(negative(table), negative)
    assert len(negative_boxes(glance.found, found, reader.settings)[0]) >= 40


def test_the_frames_a_video_would_turn_on_are_counted(tmp_path: Path) -> None:
    """The example hand as it is never turns a video; its negative (a deck printed light on
    dark) does, with ``dark_face_surer`` on and off."""
    import cv2

    from vision.dark_faces import negative
    from vision.imageio import load_image
    from vision.reader import Reader

    bench = load_benchmark("bench_dark_faces")
    example = load_image(ROOT / "examples" / "hand.jpg")
    cv2.imwrite(str(tmp_path / "light.png"), example)
    cv2.imwrite(str(tmp_path / "dark.png"), negative(example))
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text('{"image": "light.png", "cards": []}\n{"image": "dark.png", "cards": []}\n')
    counts = bench.video_turns(Reader.load(), manifest)
    assert counts == {"frames": 2, "turns": 1, "turns, surer off": 1}
