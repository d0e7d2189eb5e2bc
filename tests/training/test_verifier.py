"""The index verifier: its input, its model checks, and how the reader drops the boxes it doubts
(a scripted verifier stands in, so no model is needed for the rule)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from training.synth import printed
from training.synth.fonts import find_fonts
from training.synth.printed import draw_printed
from vision.detections import CLASSIFIER_CLASSES
from vision.imageio import load_image
from vision.reader import ModelError, Reader, ReaderSettings
from vision.verifier import (
    VERIFY_CONTEXT,
    VERIFY_SIZE,
    IndexVerifier,
    verifier_crop,
    verifier_crops,
)

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"


def test_crop_is_the_box_and_the_corner_around_it() -> None:
    image = np.zeros((200, 300, 3), np.uint8)
    image[95:105, 145:155] = 255  # a white square at the box's centre
    crop = verifier_crop(image, (140.0, 90.0, 160.0, 110.0))
    assert crop.shape == (VERIFY_SIZE, VERIFY_SIZE, 3)
    middle = VERIFY_SIZE // 2
    assert crop[middle, middle].min() == 255
    # the crop spans VERIFY_CONTEXT box sides: the 10 px square is a sixth of its 60 px
    white = int((crop[:, :, 0] > 127).sum())
    expected = (VERIFY_SIZE * 10 / (20 * VERIFY_CONTEXT)) ** 2
    assert abs(white - expected) <= 0.35 * expected


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("classifier.onnx", "names classes"),  # 55 classes, not none/index
        ("detector.onnx", "names classes"),  # no class list at all
    ],
)
def test_wrong_model_is_refused(model: str, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        IndexVerifier(MODELS / model)


class _ScriptedVerifier:
    """Stands in for the verifier: a fixed probability per box, by the box's left edge."""

    def __init__(self, by_left: dict[float, float]) -> None:
        self.by_left = by_left
        self.shown: list[float] = []

    def index_probability(
        self, image: NDArray[np.uint8], xyxy: NDArray[np.floating[Any]]
    ) -> NDArray[np.float32]:
        self.shown += [float(box[0]) for box in xyxy]
        return np.array([self.by_left[float(box[0])] for box in xyxy], np.float32)


def _row(code: str, probability: float) -> NDArray[np.float32]:
    rest = (1 - probability) / (len(CLASSIFIER_CLASSES) - 1)
    row = np.full(len(CLASSIFIER_CLASSES), rest, np.float32)
    row[CLASSIFIER_CLASSES.index(code)] = probability
    return row


def _reader(verifier: _ScriptedVerifier | None, **settings: float) -> Reader:
    """A reader of ``verifier``; every card shown to it unless ``verify_corroborated`` is
    given (the tests of that setting give it)."""
    settings.setdefault("verify_corroborated", False)
    reader = Reader.__new__(Reader)
    reader.settings = ReaderSettings(**settings)  # type: ignore[arg-type]
    reader.verifier = verifier  # type: ignore[assignment]
    return reader


BOXES = np.array([[10, 10, 20, 25], [50, 10, 60, 25], [90, 10, 100, 25]], np.float32)
IMAGE = np.zeros((40, 120, 3), np.uint8)


def test_a_card_read_only_from_doubted_boxes_goes() -> None:
    probabilities = np.stack([_row("10S", 0.95), _row("JB", 0.9), _row("none", 0.9)])
    verifier = _ScriptedVerifier({10.0: 0.9, 50.0: 0.05})
    cards = _reader(verifier, verify_below=0.1).verified_cards(IMAGE, BOXES, probabilities)
    assert [card.code for card in cards] == ["10S"]
    assert probabilities[1].argmax() == CLASSIFIER_CLASSES.index("JB")  # input not modified
    assert verifier.shown == [10.0, 50.0]  # the boxes of the two certain cards, not the none


def test_a_card_stays_when_one_of_its_boxes_is_believed() -> None:
    """Its surest box first; when that is doubted, its other boxes: one believed keeps it."""
    probabilities = np.stack([_row("KH", 0.95), _row("none", 0.9), _row("KH", 0.9)])
    assert [(c.code, c.corners) for c in _reader(None).merge_corners(BOXES, probabilities)] == [
        ("KH", 2)
    ]
    believed_first = _ScriptedVerifier({10.0: 0.8, 90.0: 0.0})
    cards = _reader(believed_first, verify_below=0.1).verified_cards(IMAGE, BOXES, probabilities)
    assert [(card.code, card.corners) for card in cards] == [("KH", 2)]
    assert believed_first.shown == [10.0]  # one look was enough
    believed_second = _ScriptedVerifier({10.0: 0.02, 90.0: 0.8})
    cards = _reader(believed_second, verify_below=0.1).verified_cards(IMAGE, BOXES, probabilities)
    assert [(card.code, card.corners) for card in cards] == [("KH", 2)]
    assert believed_second.shown == [10.0, 90.0]
    neither = _ScriptedVerifier({10.0: 0.02, 90.0: 0.05})
    assert _reader(neither, verify_below=0.1).verified_cards(IMAGE, BOXES, probabilities) == []


def test_uncertain_cards_are_shown_too() -> None:
    """An uncertain "card" the verifier believes none of the boxes of goes like a certain one
    (printed text read as a card: the photo is then not flagged as read with low confidence);
    one it believes stays, uncertain."""
    probabilities = np.stack([_row("10S", 0.95), _row("QD", 0.4), _row("AH", 0.5)])
    verifier = _ScriptedVerifier({10.0: 0.9, 50.0: 0.0, 90.0: 0.6})
    cards = _reader(verifier, verify_below=0.1).verified_cards(IMAGE, BOXES, probabilities)
    assert sorted(verifier.shown) == [10.0, 50.0, 90.0]
    assert [(card.code, card.uncertain) for card in cards] == [("10S", False), ("AH", True)]


def test_uncertain_cards_are_kept_unshown_when_asked() -> None:
    """``verify_uncertain`` off: an uncertain card is reported as uncertain whatever the
    verifier would say, and its boxes are not shown to it."""
    probabilities = np.stack([_row("10S", 0.95), _row("QD", 0.4), _row("none", 0.9)])
    verifier = _ScriptedVerifier({10.0: 0.9, 50.0: 0.0})
    reader = _reader(verifier, verify_below=0.1, verify_uncertain=False)
    cards = reader.verified_cards(IMAGE, BOXES, probabilities)
    assert verifier.shown == [10.0]
    assert [(card.code, card.uncertain) for card in cards] == [("10S", False), ("QD", True)]


@pytest.mark.parametrize("verifier", [None, _ScriptedVerifier({10.0: 0.0, 50.0: 0.0})])
def test_no_verifier_or_threshold_zero_changes_nothing(verifier: _ScriptedVerifier | None) -> None:
    probabilities = np.stack([_row("10S", 0.95), _row("JB", 0.9), _row("none", 0.9)])
    expected = _reader(None).merge_corners(BOXES, probabilities)
    assert _reader(verifier, verify_below=0.0).verified_cards(IMAGE, BOXES, probabilities) == (
        expected
    )
    assert _reader(None).verified_cards(IMAGE, BOXES, probabilities) == expected
    empty = np.zeros((0, len(CLASSIFIER_CLASSES)), np.float32)
    no_boxes = np.zeros((0, 4), np.float32)
    assert _reader(verifier, verify_below=0.1).verified_cards(IMAGE, no_boxes, empty) == []


def test_manifest_naming_a_missing_verifier_is_refused(tmp_path: Path) -> None:
    if not (MODELS / "manifest.json").is_file():
        pytest.skip("no shipped models")
    for name in ("detector.onnx", "classifier.onnx"):
        shutil.copyfile(MODELS / name, tmp_path / name)
    manifest = json.loads((MODELS / "manifest.json").read_text())
    manifest.pop("card_classifier", None)
    manifest["verifier"] = {"file": "verifier.onnx"}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelError, match=r"verifier model .* is missing"):
        Reader.load(tmp_path)
    manifest.pop("verifier")
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert Reader.load(tmp_path).verifier is None  # an older release without one still loads


SHIPPED = pytest.mark.skipif(
    not (MODELS / "manifest.json").is_file() or not (MODELS / "verifier.onnx").is_file(),
    reason="no shipped index verifier",
)
DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


@pytest.fixture(scope="module")
def readers() -> tuple[Reader, Reader]:
    """The shipped reader, and the same without its verifier."""
    reader = Reader.load()
    return reader, reader.with_settings(dataclasses.replace(reader.settings, verify_below=0.0))


@SHIPPED
def test_shipped_verifier_keeps_the_example_hand(readers: tuple[Reader, Reader]) -> None:
    verified, unverified = readers
    assert verified.verifier is not None
    image = load_image(ROOT / "examples" / "hand.jpg")
    codes = sorted(card.code for card in verified.read(image).certain)
    assert codes == sorted(card.code for card in unverified.read(image).certain)
    assert len(codes) >= 4


@SHIPPED
@pytest.mark.skipif(not DEJAVU.is_file(), reason="needs fonts-dejavu-core")
def test_printed_pages_are_not_read_as_cards(
    readers: tuple[Reader, Reader], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sixteen tables with two printed pages each (in the DejaVu faces, as on any machine)
    and no card. Measured: 1 certain card with the verifier, 27 without (page numbers as tens,
    "Jo..." as jokers); 3 uncertain ones with the verifier checking them too, 57 with it
    checking certain cards only (each of those flags a card-free photo as read with low
    confidence)."""
    dejavu = find_fonts([DEJAVU.parent]).rank_fonts
    monkeypatch.setattr(printed, "printing_fonts", lambda: dejavu)
    verified, unverified = readers
    certain_only = verified.with_settings(
        dataclasses.replace(verified.settings, verify_uncertain=False)
    )
    found = {"with": 0, "without": 0}
    unsure = {"with": 0, "certain only": 0}
    for seed in range(16):
        rng = np.random.default_rng(seed)
        table = np.full((480, 640, 3), (60, 90, 130), np.uint8)
        table = np.clip(table + rng.normal(0, 6, table.shape), 0, 255).astype(np.uint8)
        draw_printed(table, rng)
        draw_printed(table, rng)
        reading = verified.read(table)
        found["with"] += len(reading.certain)
        found["without"] += len(unverified.read(table).certain)
        unsure["with"] += sum(card.uncertain for card in reading.cards)
        unsure["certain only"] += sum(card.uncertain for card in certain_only.read(table).cards)
    assert found["with"] <= 3
    assert found["without"] >= 10
    assert unsure["with"] <= 10
    assert unsure["certain only"] >= 30


def test_small_boxes_are_cut_from_the_image_itself() -> None:
    """A cut spanning under 80 px (a box under 27 px) comes from the image as it is."""
    image = np.random.default_rng(0).integers(0, 256, (240, 320, 3), dtype=np.uint8)
    boxes = np.array([[10, 10, 30, 36], [200, 100, 215, 120]], np.float32)
    expected = np.stack([verifier_crop(image, box) for box in boxes])
    np.testing.assert_array_equal(verifier_crops(image, boxes), expected)


def test_large_boxes_are_cut_from_the_pyramid_as_the_same_area_average() -> None:
    """A large box is cut from a halved (or smaller) copy: nearly the picture a cut from the
    image itself gives (measured: mean differences of 2 to 8 grey levels on this smooth
    pattern, from the corner rounded to the coarser level's pixels)."""
    yy, xx = np.mgrid[0:1200, 0:1600]
    smooth = (127 + 60 * np.sin(xx / 37.0) + 60 * np.cos(yy / 53.0)).astype(np.uint8)
    image = np.dstack([smooth, smooth[::-1], smooth[:, ::-1]])
    boxes = np.array([[400, 300, 460, 390], [800, 500, 1000, 800], [5, 5, 200, 300]], np.float32)
    cut = verifier_crops(image, boxes)
    direct = np.stack([verifier_crop(image, box) for box in boxes])
    assert cut.shape == (3, VERIFY_SIZE, VERIFY_SIZE, 3)
    assert np.abs(cut.astype(int) - direct.astype(int)).mean(axis=(1, 2, 3)).max() < 12
    assert len(verifier_crops(image[:50, :60], boxes)) == 3  # a tiny image: no level below it
    empty = verifier_crops(image, np.zeros((0, 4), np.float32))
    assert empty.shape == (0, VERIFY_SIZE, VERIFY_SIZE, 3)


def test_a_card_read_alike_at_two_boxes_skips_the_checks_when_asked() -> None:
    """``verify_corroborated``: a card two of whose boxes read it for sure is shown neither to
    the verifier nor to the card-face check; off (the default), it is shown as any card."""
    probabilities = np.stack([_row("KH", 0.95), _row("none", 0.9), _row("KH", 0.92)])
    doubting = _ScriptedVerifier({10.0: 0.0, 90.0: 0.0})
    spared = _reader(doubting, verify_below=0.1, verify_corroborated=True)
    assert [card.code for card in spared.verified_cards(IMAGE, BOXES, probabilities)] == ["KH"]
    assert doubting.shown == []
    assert _reader(doubting, verify_below=0.1).verified_cards(IMAGE, BOXES, probabilities) == []
    assert doubting.shown == [10.0, 90.0]


@pytest.mark.parametrize(
    ("rows", "why"),
    [
        ((("KH", 0.95), ("none", 0.9), ("KH", 0.6)), "its second box reads it unsure"),
        ((("JB", 0.95), ("none", 0.9), ("JB", 0.95)), 'a joker: "Joker" is printed twice on menus'),
    ],
)
def test_a_card_not_read_alike_for_sure_twice_is_checked(
    rows: tuple[tuple[str, float], ...], why: str
) -> None:
    probabilities = np.stack([_row(code, probability) for code, probability in rows])
    verifier = _ScriptedVerifier({10.0: 0.0, 90.0: 0.0})
    reader = _reader(verifier, verify_below=0.1, verify_corroborated=True)
    assert reader.verified_cards(IMAGE, BOXES, probabilities) == [], why
    assert verifier.shown, why


def test_boxes_known_believed_are_not_shown_again_and_new_beliefs_are_marked() -> None:
    """The frame memory's ``believed``: a box marked believed is believed without a look;
    the boxes shown and believed are marked for the next frame."""
    probabilities = np.stack([_row("10S", 0.95), _row("QD", 0.95), _row("none", 0.9)])
    verifier = _ScriptedVerifier({10.0: 0.0, 50.0: 0.9})
    believed = np.array([True, False, False])
    reader = _reader(verifier, verify_below=0.1, card_evidence=False)
    cards = reader.verified_cards(IMAGE, BOXES, probabilities, believed)
    assert [card.code for card in cards] == ["10S", "QD"]  # the first box is not asked again
    assert verifier.shown == [50.0]
    assert believed.tolist() == [True, True, False]
