"""``benchmarks/tune_whole_card.py``: its copy of the reader's rule agrees with the reader, its
scores, and the tuning fold."""

from __future__ import annotations

import numpy as np
import pytest
from benchmark_modules import load_benchmark

from rules.cards import CARD_CLASSES
from training.card_classifier import in_tuning_fold
from vision.detections import CLASSIFIER_CLASSES, CardReading
from vision.reader import Reader, ReaderSettings

tune = load_benchmark("tune_whole_card")


def _probabilities(code: str, probability: float) -> np.ndarray:
    row = np.full(
        len(CLASSIFIER_CLASSES), (1 - probability) / (len(CLASSIFIER_CLASSES) - 1), np.float32
    )
    row[CLASSIFIER_CLASSES.index(code)] = probability
    return row


class _Scripted:
    def __init__(self, row: np.ndarray) -> None:
        self.row = row

    def probabilities(self, image: np.ndarray) -> np.ndarray:
        return self.row


CASES = [
    ([], ("7H", 0.9)),  # nothing read: the whole card names it
    ([], ("7H", 0.3)),  # below the gate
    ([("7H", 0.5, True), ("JS", 0.3, True)], ("7H", 0.6)),  # uncertain readings replaced
    ([("7H", 0.95, False), ("JS", 0.85, False)], ("7H", 0.97)),  # sure: one card
    ([("7H", 0.95, False), ("JS", 0.85, False)], ("7H", 0.9)),  # not sure enough
    ([("2D", 0.95, False)], ("KS", 0.99)),  # sure of a card not read: kept as read
    ([("7H", 0.9, False), ("8H", 0.9, False), ("9H", 0.9, False)], ("7H", 0.99)),  # a hand
]


@pytest.mark.parametrize(("cards", "whole"), CASES)
def test_benchmark_rule_is_the_readers(
    cards: list[tuple[str, float, bool]], whole: tuple[str, float]
) -> None:
    """The grid search is only worth its numbers if it applies what the reader does."""
    row = _probabilities(*whole)
    settings = ReaderSettings(whole_card_above=0.5, whole_card_sure=0.95)
    reader = Reader.__new__(Reader)
    reader.settings = settings
    reader.whole_card = _Scripted(row)  # type: ignore[assignment]
    readings = [
        CardReading(code, confidence, (0.0, 0.0, 10.0, 10.0), uncertain=unsure)
        for code, confidence, unsure in cards
    ]
    image = np.zeros((80, 56, 3), np.uint8)
    expected = [
        (card.code, round(card.confidence, 4), card.uncertain)
        for card in reader._with_whole_card(image, readings)
    ]
    got = tune._apply(cards, row[:-1], 0.5, 0.95)
    assert [(code, round(p, 4), unsure) for code, p, unsure in got] == expected


def test_scores_count_top1_f1_and_changes() -> None:
    """Two photos of 7H: one read by nothing (the whole card, 0.9, answers it), one read as a
    certain 7H (left alone): top-1 2/2, F1 1, one photo changed; without the rule top-1 1/2."""
    observed = [
        (("7H",), [], _probabilities("7H", 0.9)[:-1]),
        (("7H",), [("7H", 0.97, False)], _probabilities("KS", 0.5)[:-1]),
    ]
    assert tune._score(observed, (0.5, 0.95)) == (1.0, 1.0, 1)
    top1, f1, changed = tune._score(observed, None)
    assert (top1, changed) == (0.5, 0)
    assert f1 == pytest.approx(2 / 3, abs=1e-4)  # precision 1, recall 1/2 (rounded to 4 places)


def test_tuning_fold_is_one_photo_in_seven_by_name() -> None:
    names = [f"train_{code}_{i:03d}.jpg" for code in CARD_CLASSES for i in range(20)]
    chosen = [name for name in names if in_tuning_fold(name)]
    assert 0.10 < len(chosen) / len(names) < 0.19  # 1/7 = 0.143
    assert in_tuning_fold("a/b/" + chosen[0])  # by file name, whatever the folder
    assert [in_tuning_fold(name) for name in names] == [in_tuning_fold(name) for name in names]
