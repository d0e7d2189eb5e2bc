"""The whole-card classifier's input, its model checks, and the reader's gate (no model needed
for the gate: a scripted classifier stands in)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES
from vision.detections import CLASSIFIER_CLASSES, CardReading
from vision.reader import ModelError, Reader, ReaderSettings
from vision.whole_card import VIEW_SIZE_WH, WholeCardClassifier, card_view, views_to_tensor

ROOT = Path(__file__).resolve().parents[2]


def test_view_has_the_cards_shape() -> None:
    width, height = VIEW_SIZE_WH
    assert card_view(np.zeros((224, 224, 3), np.uint8)).shape == (height, width, 3)
    assert card_view(np.zeros((30, 20, 3), np.uint8)).shape == (height, width, 3)  # enlarged
    assert views_to_tensor(np.zeros((2, height, width, 3), np.uint8)).shape == (2, 3, height, width)


def test_wide_image_is_turned_upright() -> None:
    """A card photographed lying sideways: the view is turned a quarter (counter-clockwise, as
    ``np.rot90``), so the image's left edge becomes the view's bottom edge."""
    image = np.zeros((200, 300, 3), np.uint8)
    image[:, :30] = 255  # a white band along the left edge
    view = card_view(image)
    assert view[-4:].mean() > 200  # bottom rows white
    assert view[:8].mean() < 10  # top rows black


def test_views_are_rgb_in_unit_range() -> None:
    width, height = VIEW_SIZE_WH
    views = np.zeros((1, height, width, 3), np.uint8)
    views[..., 0] = 255  # blue in BGR
    tensor = views_to_tensor(views)
    assert tensor[0, 2].max() == 1.0  # blue is the third RGB channel
    assert tensor[0, 0].max() == 0.0


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("classifier.onnx", "expected views [N, 3, 80, 56]"),  # the index classifier: 32 px crops
        ("detector.onnx", "names classes that differ"),  # no class list at all
    ],
)
def test_wrong_model_is_refused(model: str, message: str) -> None:
    with pytest.raises(ModelError, match=message.replace("[", r"\[").replace("]", r"\]")):
        WholeCardClassifier(ROOT / "models" / model)


class _Scripted:
    """Stands in for the whole-card classifier: the same probabilities for every image."""

    def __init__(self, code: str, probability: float) -> None:
        self.calls = 0
        rest = (1 - probability) / (len(CLASSIFIER_CLASSES) - 1)
        self.row = np.full(len(CLASSIFIER_CLASSES), rest, np.float32)
        self.row[CLASSIFIER_CLASSES.index(code)] = probability

    def probabilities(self, image: NDArray[np.uint8]) -> NDArray[np.float32]:
        self.calls += 1
        return self.row


def _reader(scripted: _Scripted) -> Reader:
    """A Reader object with the scripted classifier and fixed thresholds (gate 0.6, sure 0.9,
    uncertain below 0.8), whatever the shipped defaults."""
    reader = Reader.__new__(Reader)
    reader.settings = ReaderSettings(whole_card_above=0.6, whole_card_sure=0.9, uncertain_below=0.8)
    reader.whole_card = scripted  # type: ignore[assignment]
    return reader


def _card(code: str, confidence: float, uncertain: bool) -> CardReading:
    return CardReading(code, confidence, (10.0, 10.0, 30.0, 40.0), uncertain=uncertain)


IMAGE = np.zeros((224, 160, 3), np.uint8)


def test_no_certain_card_takes_the_whole_card_reading() -> None:
    """Only uncertain index readings (pips read as cards, say): the whole card names it, over
    the whole image, and the uncertain readings go (the image is one card)."""
    scripted = _Scripted("7H", 0.9)
    cards = [_card("7H", 0.5, True), _card("JS", 0.3, True)]
    [card] = _reader(scripted)._with_whole_card(IMAGE, cards)
    assert (card.code, card.uncertain, card.corners) == ("7H", False, 1)
    assert card.box_xyxy == (0.0, 0.0, 160.0, 224.0)
    assert card.confidence == pytest.approx(0.9)
    assert card.alternatives[0][0] != "7H"


def test_nothing_found_takes_the_whole_card_reading() -> None:
    [card] = _reader(_Scripted("JR", 0.95))._with_whole_card(IMAGE, [])
    assert (card.code, card.corners) == ("JR", 0)


def test_below_uncertain_threshold_is_reported_uncertain() -> None:
    """Between the gate (0.6) and ``uncertain_below`` (0.8): given, but as uncertain."""
    [card] = _reader(_Scripted("QC", 0.7))._with_whole_card(IMAGE, [])
    assert card.uncertain


def test_sure_whole_card_keeps_only_its_card() -> None:
    """A photo of one 7H where a pip was also read, for certain, as JS: the classifier, sure of
    7H (0.95, over ``whole_card_sure`` 0.9), makes it one card; the 7H reading is kept as read."""
    seven = _card("7H", 0.97, False)
    cards = [seven, _card("JS", 0.85, False), _card("AH", 0.4, True)]
    assert _reader(_Scripted("7H", 0.95))._with_whole_card(IMAGE, cards) == [seven]


def test_many_certain_cards_are_not_shown_to_the_whole_card_classifier() -> None:
    """Three certain cards: a table or a hand, not one card; no time spent on the classifier."""
    scripted = _Scripted("7H", 0.99)
    cards = [_card(code, 0.95, False) for code in ("7H", "8H", "9H")]
    assert _reader(scripted)._with_whole_card(IMAGE, cards) == cards
    assert scripted.calls == 0


@pytest.mark.parametrize(
    ("cards", "probability", "why"),
    [
        ([_card("2D", 0.95, False)], 0.99, "a certain card the classifier does not name"),
        ([_card("7H", 0.95, False), _card("KS", 0.9, False)], 0.85, "not sure enough"),
        ([_card("2D", 0.5, True)], 0.55, "below the gate"),
        ([], 0.5, "below the gate, nothing found"),
    ],
)
def test_index_reading_kept(cards: list[CardReading], probability: float, why: str) -> None:
    scripted = _Scripted("KS", probability)
    assert _reader(scripted)._with_whole_card(IMAGE, cards) == cards, why


def test_none_class_names_no_card() -> None:
    """An image the classifier calls "none" (not one card filling the frame) adds nothing."""
    assert _reader(_Scripted("none", 0.97))._with_whole_card(IMAGE, []) == []


def test_all_classes_are_the_cards_then_none() -> None:
    assert (*CARD_CLASSES, "none") == CLASSIFIER_CLASSES
