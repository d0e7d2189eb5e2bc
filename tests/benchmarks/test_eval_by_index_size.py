"""The index-size table of ``benchmarks/eval_by_index_size.py``: bands, pairing, totals."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from benchmark_modules import load_benchmark

sizes = load_benchmark("eval_by_index_size")
ROOT = Path(__file__).resolve().parents[2]


def _scene_folder(folder: Path, meta: dict[str, object]) -> Path:
    """``folder`` as a folder of one synthetic scene: the example photo, with ``meta`` as its
    labels (the photo is written once; the labels every call)."""
    image = folder / "images" / "0000000.jpg"
    if not image.is_file():
        image.parent.mkdir(parents=True)
        (folder / "meta").mkdir()
        photo = cv2.imread(str(ROOT / "examples" / "hand.jpg"))
        cv2.imwrite(str(image), np.ascontiguousarray(photo))
    (folder / "meta" / "0000000.json").write_text(json.dumps(meta))
    return folder


def test_cards_fall_in_bands_by_index_side() -> None:
    table = sizes.SizeTable((16.0, 32.0))
    assert table.labels() == ["0-16 px", "16-32 px", ">= 32 px"]
    assert table.band(10.0) is table.bands[0]
    assert table.band(16.0) is table.bands[1]  # a lower bound belongs to its band
    assert table.band(40.0) is table.bands[2]


def test_recall_and_precision_per_band() -> None:
    table = sizes.SizeTable((16.0, 32.0))
    # a small 5H missed, a big KS read, a middle 2C read as 2S (wrong), an extra QD
    table.add(
        [("5H", 12.0), ("KS", 40.0), ("2C", 20.0)],
        [("KS", 38.0), ("2S", 21.0), ("QD", 10.0)],
    )
    small, middle, big = table.bands
    assert (small.cards, small.read, small.predicted, small.right) == (1, 0, 1, 0)
    assert (middle.cards, middle.read, middle.predicted, middle.right) == (1, 0, 1, 0)
    assert (big.cards, big.read, big.predicted, big.right) == (1, 1, 1, 1)
    assert big.f1 == 1.0 and small.f1 == 0.0
    whole = table.total()
    assert (whole.cards, whole.read, whole.predicted, whole.right) == (3, 1, 3, 1)
    assert whole.recall == pytest.approx(1 / 3) and whole.precision == pytest.approx(1 / 3)


def test_one_reading_serves_one_card_of_its_code() -> None:
    """Two decks: two 7D labelled, one read; the larger card takes the reading."""
    table = sizes.SizeTable((16.0,))
    table.add([("7D", 10.0), ("7D", 30.0)], [("7D", 29.0)])
    small, big = table.bands
    assert (small.cards, small.read) == (1, 0)
    assert (big.cards, big.read, big.right) == (1, 1, 1)


def test_scene_truth_takes_each_cards_largest_index() -> None:
    meta = {
        "indices": [
            {"card": "AS", "card_index": 0, "box_xyxy": [0, 0, 10, 20]},
            {"card": "AS", "card_index": 0, "box_xyxy": [50, 50, 80, 60]},
            {"card": "9H", "card_index": 3, "box_xyxy": [5, 5, 17, 14]},
        ]
    }
    assert sorted(sizes.scene_truth(meta)) == [("9H", 12.0), ("AS", 30.0)]


def test_recall_per_deck() -> None:
    totals: dict[str, object] = {}
    cards = [("AS", 30.0, "plastic"), ("AS", 12.0, "orell"), ("9H", 20.0, "orell")]
    sizes.deck_recall(cards, ["AS", "2C"], totals)
    assert (totals["plastic"].cards, totals["plastic"].read) == (1, 1)  # type: ignore[attr-defined]
    assert (totals["orell"].cards, totals["orell"].read) == (2, 0)  # type: ignore[attr-defined]


def test_empty_folder_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        sizes.main(["--scenes", str(tmp_path)])
    assert "no scenes in" in capsys.readouterr().err


def test_reads_a_scene_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A one-card scene of the example photo's 2D, with its labelled index: it is read."""
    meta = {"indices": [{"card": "2D", "card_index": 0, "deck": "d", "box_xyxy": [0, 0, 30, 40]}]}
    _scene_folder(tmp_path, meta)
    assert sizes.main(["--scenes", str(tmp_path), "--bands", "32"]) == 0
    out = capsys.readouterr().out
    assert "1 scenes of" in out
    lines = out.strip().splitlines()
    whole = next(line.split() for line in lines if line.split()[0] == "all")
    assert whole[1] == "1"
    assert lines[-1].split()[:2] == ["d", "1"]


def test_readings_of_cards_shown_only_in_part_are_dropped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The example photo with only its 2D labelled: its other cards, listed as partial
    indices, are dropped from the readings; unlisted, they count as wrong readings."""
    others = [
        c for c in json.loads((ROOT / "examples" / "hand.json").read_text())["cards"] if c != "2D"
    ]
    labelled = [{"card": "2D", "card_index": 0, "deck": "d", "box_xyxy": [0, 0, 30, 40]}]
    partial = [
        {"card": code, "card_index": number + 1, "box_xyxy": [0, 0, 5, 5]}
        for number, code in enumerate(others)
    ]

    def readings_counted(meta: dict[str, object]) -> int:
        assert sizes.main(["--scenes", str(_scene_folder(tmp_path, meta)), "--bands", "32"]) == 0
        lines = capsys.readouterr().out.strip().splitlines()
        return int(next(line.split() for line in lines if line.split()[0] == "all")[3])

    plain = readings_counted({"indices": labelled})
    with_partial = readings_counted({"indices": labelled, "partial": partial})
    assert plain >= 5 and with_partial == plain - len(others)


def test_scene_indices_and_missed_cards() -> None:
    meta = {
        "indices": [
            {"card": "AS", "card_index": 0, "box_xyxy": [0, 0, 10, 20]},
            {"card": "AS", "card_index": 0, "box_xyxy": [50, 50, 80, 60]},
            {"card": "AS", "card_index": 2, "box_xyxy": [90, 90, 95, 96]},
            {"card": "9H", "card_index": 3, "box_xyxy": [5, 5, 17, 14]},
        ]
    }
    cards = sizes.scene_indices(meta)
    assert sorted((code, side, len(boxes)) for code, side, _, boxes in cards) == [
        ("9H", 12.0, 1),
        ("AS", 6.0, 1),
        ("AS", 30.0, 2),
    ]
    # one AS read: the larger AS takes it; the small AS and the 9H are missed
    missed = sizes.missed_cards(cards, ["AS", "KD"])
    assert sorted((code, side) for code, side, _, _ in missed) == [("9H", 12.0), ("AS", 6.0)]


@pytest.mark.parametrize(
    ("index_codes", "uncertain", "kind"),
    [
        (["7C"], ["7C"], "right, uncertain"),
        (["7C"], [], "right at an index, lost"),
        (["none"], [], "read as no index"),
        (["7S"], [], "suit misread"),
        (["9C"], [], "rank misread"),
        (["9H"], [], "misread"),
        (["none", "7S"], [], "suit misread"),
    ],
)
def test_miss_kind(index_codes: list[str], uncertain: list[str], kind: str) -> None:
    # the labelled 7C has two indices; the detector's boxes lie on them, in order
    boxes = [[10.0, 10.0, 20.0, 30.0], [100.0, 100.0, 110.0, 120.0]]
    xyxy = np.array([[11, 10, 21, 30], [100, 101, 110, 121]], np.float32)[: len(index_codes)]
    assert sizes.miss_kind("7C", boxes, xyxy, index_codes, uncertain) == kind
    assert kind in sizes.MISS_KINDS


def test_miss_kind_not_detected() -> None:
    boxes = [[10.0, 10.0, 20.0, 30.0]]
    far = np.array([[200, 200, 210, 220]], np.float32)
    assert sizes.miss_kind("7C", boxes, far, ["7C"], []) == "not detected"
    assert sizes.miss_kind("7C", boxes, np.zeros((0, 4), np.float32), [], []) == "not detected"


def test_why_table_on_a_scene(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The example photo with a QH labelled on the bare table: the QH is missed, undetected."""
    meta = {
        "indices": [{"card": "QH", "card_index": 0, "deck": "d", "box_xyxy": [560, 400, 590, 440]}]
    }
    assert sizes.main(["--scenes", str(_scene_folder(tmp_path, meta)), "--why"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    rows = {line[:28].strip(): line[28:].split() for line in lines[-len(sizes.MISS_KINDS) :]}
    assert rows["not detected"] == ["1", "40.0", "px"]
    assert all(rows[kind][0] == "0" for kind in sizes.MISS_KINDS if kind != "not detected")
