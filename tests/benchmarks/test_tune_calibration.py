"""The calibration tuning tool (``benchmarks/tune_calibration.py``) on a tiny hand-made set.

Two decks, three cards, four-dimensional embeddings along separate axes, so that each count
can be worked out by hand: which index is each card's calibration sample (the largest whole
one), which indices are tested (not the sample's card), and which readings a profile fixes or
breaks (cosine 1 against 0 over a temperature of 0.03 outweighs any classifier margin used here).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import cv2
import numpy as np
import pytest
from benchmark_modules import load_benchmark
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES
from vision.calibration import DEFAULT_TEMPERATURE, DEFAULT_WEIGHT

AXES = np.eye(4, dtype=np.float32)
AS_AXIS, AC_AXIS, TWO_AXIS = AXES[0], AXES[1], AXES[2]


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return load_benchmark("tune_calibration")


def _reading(shares: dict[str, float]) -> NDArray[np.float32]:
    """A probability row (55) with these shares and 0.0001 on every other column."""
    row = np.full(len(CARD_CLASSES) + 1, 1e-4, np.float32)
    for code, share in shares.items():
        row[CARD_CLASSES.index(code)] = share
    normalised: NDArray[np.float32] = row / row.sum()
    return normalised


# deck, card, physical card, size (px), visible, embedding, classifier reading, role
ROWS: list[tuple[str, str, int, float, float, np.ndarray, dict[str, float], str]] = [
    ("toy", "AS", 0, 40, 1.0, AS_AXIS, {"AS": 0.9}, "AS sample: largest whole AS"),
    ("toy", "AS", 0, 20, 1.0, AS_AXIS, {"AS": 0.9}, "the sample's other corner: not tested"),
    ("toy", "AS", 1, 60, 0.9, AS_AXIS, {"AS": 0.6, "AC": 0.4}, "larger but covered: tested"),
    ("toy", "AC", 2, 35, 1.0, AC_AXIS, {"AC": 0.9}, "AC sample"),
    ("toy", "2S", 3, 25, 1.0, TWO_AXIS, {"2S": 0.9}, "2S sample"),
    ("toy", "AC", 4, 30, 1.0, AC_AXIS, {"AS": 0.55, "AC": 0.45}, "read AS, looks AC: fixed"),
    ("toy", "AC", 4, 30, 1.0, AC_AXIS, {"AC": 0.9}, "the same card's other corner: right"),
    ("toy", "2S", 5, 20, 1.0, AS_AXIS, {"2S": 0.52, "AS": 0.48}, "read 2S, looks AS: broken"),
    ("other", "AS", 6, 30, 1.0, AC_AXIS, {"AS": 0.9}, "other deck's AS sample, along AC"),
    ("other", "AS", 7, 25, 1.0, AC_AXIS, {"AS": 0.51, "AC": 0.49}, "not toy's AC: stays AS"),
]


@pytest.fixture()
def tuning(tool: ModuleType) -> Any:
    return tool.TuningSet(
        probabilities=np.stack([_reading(row[6]) for row in ROWS]),
        embeddings=np.stack([row[5] for row in ROWS]),
        codes=np.array([CARD_CLASSES.index(row[1]) for row in ROWS], np.int64),
        decks=np.array([row[0] for row in ROWS], np.str_),
        cards=np.array([row[2] for row in ROWS], np.int64),
        size_px=np.array([row[3] for row in ROWS], np.float32),  # samples: largest per card
        visible=np.array([row[4] for row in ROWS], np.float32),
    )


@pytest.mark.parametrize(
    ("sample", "rows"),
    [("index", [0, 3, 4, 8]), ("card", [0, 1, 3, 4, 8])],  # "card" adds row 1, card 0's corner
)
def test_calibration_sample_is_the_largest_whole_index(
    tool: ModuleType, tuning: Any, sample: str, rows: list[int]
) -> None:
    assert np.flatnonzero(tool.choose_calibration(tuning, sample)).tolist() == rows


def test_unknown_sample_kind_is_refused(tool: ModuleType, tuning: Any) -> None:
    with pytest.raises(ValueError, match="unknown calibration sample 'photo'"):
        tool.choose_calibration(tuning, "photo")


def test_counts_before_and_after_per_deck(tool: ModuleType, tuning: Any) -> None:
    """Toy: tested rows 2, 5, 6, 7 (cards 1, 4, 5); right before 2, 6, 7; after 2, 5, 7; row 6
    broken, row 5 fixed. Card 4 multiplies rows 5 and 7 (AC either way); card 5 is row 6 alone.
    Other: row 9 stays AS, since the other deck's profile knows no AC."""
    calibration = tool.choose_calibration(tuning, "index")
    scores = tool.evaluate(tuning, calibration, DEFAULT_WEIGHT, DEFAULT_TEMPERATURE)
    toy, other = scores["toy"], scores["other"]
    assert (toy.indices, toy.right_before, toy.right_after, toy.broken, toy.fixed) == (
        4,
        3,
        3,
        1,
        1,
    )
    assert (toy.cards, toy.cards_right_before, toy.cards_right_after) == (3, 3, 2)
    assert (other.indices, other.right_before, other.right_after) == (1, 1, 1)
    total = toy + other
    assert (total.indices, total.broken, total.fixed) == (5, 1, 1)
    assert total.before == pytest.approx(4 / 5) and total.after == pytest.approx(4 / 5)


def test_log_loss_is_the_mean_minus_log_of_the_labelled_card(tool: ModuleType, tuning: Any) -> None:
    """Before the profile, the "other" deck's tested index gives AS 0.51 of the card columns."""
    calibration = tool.choose_calibration(tuning, "index")
    other = tool.evaluate(tuning, calibration, DEFAULT_WEIGHT, DEFAULT_TEMPERATURE)["other"]
    shares = _reading({"AS": 0.51, "AC": 0.49})[:-1]
    assert other.loss_before == pytest.approx(-np.log(shares[0] / shares.sum()), rel=1e-4)


def test_grid_is_sorted_by_log_loss_and_marks_the_defaults(tool: ModuleType, tuning: Any) -> None:
    calibration = tool.choose_calibration(tuning, "index")
    rows = tool.grid(tuning, calibration, [0.3, DEFAULT_WEIGHT, 0.9], [DEFAULT_TEMPERATURE, 0.2])
    losses = [row.total.loss_after for row in rows]
    assert len(rows) == 6 and losses == sorted(losses)
    lines = tool.format_table(rows)
    marked = [line for line in lines if f"{DEFAULT_TEMPERATURE:.3f}*" in line]
    assert len(lines) == 7 and len(marked) == 1
    assert marked[0].split()[0] == f"{DEFAULT_WEIGHT:.2f}"
    strength = DEFAULT_WEIGHT / ((1 - DEFAULT_WEIGHT) * DEFAULT_TEMPERATURE)
    assert f"{strength:.1f}" in marked[0]


def test_cache_round_trips_and_refuses_other_models(
    tool: ModuleType, tuning: Any, tmp_path: Path
) -> None:
    path = tmp_path / "cache.npz"
    tuning.save(path, "a" * 64, "scenes")
    again = tool.TuningSet.load(path, "a" * 64, "scenes")
    assert np.array_equal(again.probabilities, tuning.probabilities)
    assert again.decks.tolist() == tuning.decks.tolist()
    with pytest.raises(ValueError, match="made with classifier 'aaaaaaaaaaaa'"):
        tool.TuningSet.load(path, "b" * 64, "scenes")
    with pytest.raises(ValueError, match="holds 'scenes', not 'others'"):
        tool.TuningSet.load(path, "a" * 64, "others")


def test_rows_of_different_lengths_are_refused(tool: ModuleType, tuning: Any) -> None:
    from dataclasses import replace

    with pytest.raises(ValueError, match=r"TuningSet\.visible has 3 rows, expected 10"):
        replace(tuning, visible=tuning.visible[:3])


class _FakeReader:
    """Reads every box as 7H with a fixed embedding; remembers the boxes it was given."""

    def __init__(self) -> None:
        self.manifest = {"classifier": {"sha256": "fake"}}
        self.boxes: list[list[list[float]]] = []

    def detect(self, image: Any) -> Any:
        raise AssertionError("the tool classifies the label boxes, it never detects")

    def classify(self, image: np.ndarray, xyxy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.boxes.append(xyxy.tolist())
        return np.tile(_reading({"7H": 0.9}), (len(xyxy), 1)), np.tile(AS_AXIS, (len(xyxy), 1))


def _index(card: str, deck: str, box: list[float], visible: float, card_index: int) -> Any:
    return {
        "card": card,
        "deck": deck,
        "box_xyxy": box,
        "visible": visible,
        "card_index": card_index,
    }


def test_scenes_are_read_from_their_labels(tool: ModuleType, tmp_path: Path) -> None:
    """Two scenes as handreader synth writes them: the labels' boxes go to classify, and each
    scene's cards get their own numbers (scene 0: cards 0 and 1; scene 1: card 2)."""
    (tmp_path / "meta").mkdir()
    (tmp_path / "images").mkdir()
    scenes = [
        [
            _index("AS", "toy", [10, 10, 25, 40], 1.0, 0),
            _index("AS", "toy", [70, 80, 85, 110], 0.9, 0),
            _index("KD", "toy", [40, 10, 52, 30], 1.0, 1),
        ],
        [_index("JB", "other", [5, 5, 45, 20], 0.85, 0)],
    ]
    for number, indices in enumerate(scenes):
        meta = {"layout": "table", "size_wh": [120, 120], "indices": indices}
        (tmp_path / "meta" / f"{number:07d}.json").write_text(json.dumps(meta))
        cv2.imwrite(str(tmp_path / "images" / f"{number:07d}.jpg"), np.zeros((120, 120, 3)))
    reader = _FakeReader()
    tuning = tool.classify_scenes(reader, tmp_path)
    assert reader.boxes == [[item["box_xyxy"] for item in scene] for scene in scenes]
    assert [CARD_CLASSES[code] for code in tuning.codes] == ["AS", "AS", "KD", "JB"]
    assert tuning.decks.tolist() == ["toy", "toy", "toy", "other"]
    assert tuning.cards.tolist() == [0, 0, 1, 2]
    assert tuning.size_px.tolist() == [30, 30, 20, 40]  # the longer side of each box
    assert tuning.visible.tolist() == pytest.approx([1.0, 0.9, 1.0, 0.85])
    assert tuning.probabilities.shape == (4, 55) and tuning.embeddings.shape == (4, 4)


def test_an_empty_folder_is_refused(tool: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no scenes in"):
        tool.classify_scenes(_FakeReader(), tmp_path)


def test_probability_features_extend_and_normalise(tool: ModuleType, tuning: Any) -> None:
    extended = tool.with_probability_features(tuning)
    assert extended.embeddings.shape == (len(ROWS), 4 + len(CARD_CLASSES))
    assert np.linalg.norm(extended.embeddings, axis=1) == pytest.approx(np.ones(len(ROWS)))
