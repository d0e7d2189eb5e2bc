"""Reader stages that need no model.

Crops, corner merging, data types, manifest errors.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES
from vision import model_files
from vision.crops import CROP_SIZE, crop_index, crops_to_tensor
from vision.detections import CardReading, Detections, Reading, ReadingFlag
from vision.index_detector import IndexDetector
from vision.reader import (
    CLASSIFIER_CLASSES,
    ModelError,
    Reader,
    ReaderSettings,
    brightened,
    default_models_dir,
    upright_turns,
)


def _one_hot(code: str, confidence: float) -> np.ndarray:
    """A probability row putting ``confidence`` on ``code`` and the rest evenly elsewhere."""
    row = np.full(
        len(CLASSIFIER_CLASSES), (1 - confidence) / (len(CLASSIFIER_CLASSES) - 1), np.float32
    )
    row[CLASSIFIER_CLASSES.index(code)] = confidence
    return row


def _merger(**overrides: float) -> Reader:
    """A Reader object with settings only: merge_corners uses nothing else."""
    reader = Reader.__new__(Reader)
    reader.settings = ReaderSettings(**overrides)  # type: ignore[arg-type]
    return reader


def test_detector_pads_rectangles_only_when_it_takes_any_size() -> None:
    """``rect_input``: a network that takes any input size gets a 640x480 frame as 320 x 256;
    a fixed-size one, or the setting off, a 320 square."""
    detector = _ScriptedDetector([], [])
    frame = np.zeros((480, 640, 3), np.uint8)
    assert detector.input_tensor(frame)[0].shape == (1, 3, 256, 320)
    assert detector.input_tensor(frame, 640)[0].shape == (1, 3, 480, 640)
    detector.settings = ReaderSettings(rect_input=False)
    assert detector.input_tensor(frame)[0].shape == (1, 3, 320, 320)
    fixed = _ScriptedDetector([], [], dynamic=False)
    assert fixed.input_tensor(frame)[0].shape == (1, 3, 320, 320)


def test_crop_is_square_and_pads_outside_the_image() -> None:
    image = np.full((100, 100, 3), 200, np.uint8)
    crop = crop_index(image, (-20, -20, 10, 10))
    assert crop.shape == (CROP_SIZE, CROP_SIZE, 3)
    assert crops_to_tensor(crop[None]).shape == (1, 3, CROP_SIZE, CROP_SIZE)


def test_two_corners_of_one_card_become_one_card() -> None:
    """Same code, a card's length apart: one card with two corners and a higher confidence."""
    boxes = np.array([[10, 10, 30, 40], [110, 150, 130, 180], [300, 10, 320, 40]], np.float32)
    probabilities = np.stack([_one_hot("10H", 0.8), _one_hot("10H", 0.8), _one_hot("QS", 0.95)])
    cards = _merger().merge_corners(boxes, probabilities)
    assert [(card.code, card.corners) for card in cards] == [("10H", 2), ("QS", 1)]
    assert cards[0].confidence > 0.8
    assert cards[0].box_xyxy == (10, 10, 130, 180)


def test_every_same_card_index_nearby_joins_one_card() -> None:
    """Four corner indices and two pips read as the card itself (a ten's pips often are) stay
    one card, however many there are."""
    boxes = np.array(
        [
            [0, 0, 20, 30],
            [100, 0, 120, 30],
            [0, 140, 20, 170],
            [100, 140, 120, 170],
            [40, 40, 60, 70],
            [60, 100, 80, 130],
        ],
        np.float32,
    )
    probabilities = np.stack([_one_hot("10C", 0.9)] * 6)
    cards = _merger().merge_corners(boxes, probabilities)
    assert [(card.code, card.corners) for card in cards] == [("10C", 6)]


def test_far_apart_same_codes_stay_two_cards() -> None:
    """Two decks: the same card twice, far apart, is two cards (and flagged by the reader)."""
    boxes = np.array([[0, 0, 20, 30], [1000, 0, 1020, 30]], np.float32)
    probabilities = np.stack([_one_hot("AS", 0.9), _one_hot("AS", 0.9)])
    assert len(_merger().merge_corners(boxes, probabilities)) == 2


# a card of a four-index deck, turned 30 degrees: its index centres at the four corners
_TURN = np.array([[np.cos(0.52), -np.sin(0.52)], [np.sin(0.52), np.cos(0.52)]])
_CORNERS = np.array([[0, 0], [120, 0], [120, 180], [0, 180]]) @ _TURN.T + [200, 100]


def _four_index_card(
    fourth: str, where: NDArray[np.float64] | None = None, seen: int = 3
) -> tuple[np.ndarray, np.ndarray]:
    """Boxes (20 x 30 px) at the first ``seen`` corners read QH, and one at ``where`` (the
    fourth corner unless given) read ``fourth``."""
    centres = [*_CORNERS[:seen], _CORNERS[3] if where is None else where]
    boxes = np.array([[x - 10, y - 15, x + 10, y + 15] for x, y in centres], np.float32)
    probabilities = np.stack([_one_hot("QH", 0.95)] * seen + [_one_hot(fourth, 0.9)])
    return boxes, probabilities


def test_fourth_corner_read_as_another_rank_is_not_a_second_card() -> None:
    """A four-index deck at a slant: three corners read QH, the fourth (upside down) 10H. That
    is the queen's fourth corner, not a ten beside it; the queen keeps its own confidence."""
    boxes, probabilities = _four_index_card("10H")
    cards = _merger().merge_corners(boxes, probabilities)
    assert [(card.code, card.corners, card.uncertain) for card in cards] == [("QH", 4, False)]
    alone = _merger().merge_corners(boxes[:3], probabilities[:3])[0]
    assert cards[0].confidence == alone.confidence
    assert cards[0].box_xyxy == pytest.approx(
        (boxes[:, 0].min(), boxes[:, 1].min(), boxes[:, 2].max(), boxes[:, 3].max())
    )
    off = _merger(fourth_corner=False).merge_corners(boxes, probabilities)
    assert sorted(card.code for card in off) == ["10H", "QH"]


@pytest.mark.parametrize(
    ("fourth", "where", "seen", "why"),
    [
        ("10S", None, 3, "another suit: a card of its own lies there"),
        ("10H", _CORNERS[3] + [0, 25], 3, "farther than half an index from the fourth corner"),
        ("10H", _CORNERS[2] + [0, 60], 3, "near a corner seen, not at the missing one"),
        ("10H", None, 2, "two corners seen: no fourth corner is known"),
        ("JR", None, 3, "a joker is no rank of the queen's suit"),
    ],
)
def test_other_lone_indices_stay_cards(
    fourth: str, where: NDArray[np.float64] | None, seen: int, why: str
) -> None:
    boxes, probabilities = _four_index_card(fourth, where, seen)
    cards = _merger().merge_corners(boxes, probabilities)
    assert sorted(card.code for card in cards) == sorted(["QH", fourth]), why


def _dim_card() -> NDArray[np.uint8]:
    """A grey table (40) with a card whose white is 100 and whose ink is 20."""
    image = np.full((300, 400, 3), 40, np.uint8)
    image[50:250, 100:240] = 100
    image[60:90, 110:125] = 20
    return image


def test_a_dim_photo_is_brightened_to_the_target() -> None:
    image = _dim_card()
    out = brightened(image, 160.0)
    assert out.dtype == np.uint8 and out.shape == image.shape
    assert out[100, 150].tolist() == [160, 160, 160]  # the card's white: 100 -> 160
    assert out[0, 0].tolist() == [64, 64, 64] and out[70, 115].tolist() == [32, 32, 32]
    assert image[100, 150].tolist() == [100, 100, 100]  # the caller's image is not touched


def test_a_bright_photo_or_no_target_is_left_as_it_is() -> None:
    image = _dim_card()
    image[50:250, 100:240] = 230
    assert brightened(image, 160.0) is image
    dim = _dim_card()
    assert brightened(dim, 0.0) is dim


def test_brightening_a_large_photo_samples_it() -> None:
    """A 12 MP photo: the percentile comes from a sample, the whole photo is scaled."""
    image = np.full((3000, 4000, 3), 30, np.uint8)
    image[1000:2000, 1000:2600] = 80  # the card: about 13 % of the photo
    out = brightened(image, 160.0)
    assert out.shape == image.shape
    assert out[1500, 1500].tolist() == [160, 160, 160] and out[10, 10].tolist() == [60, 60, 60]


def test_low_confidence_is_uncertain_not_guessed() -> None:
    boxes = np.array([[0, 0, 20, 30]], np.float32)
    cards = _merger(uncertain_below=0.6).merge_corners(boxes, _one_hot("6D", 0.4)[None])
    assert cards[0].uncertain and cards[0].code == "6D"


def test_none_class_is_dropped() -> None:
    """A box the classifier calls "none" (a pip, a picture) is no card."""
    boxes = np.array([[0, 0, 20, 30]], np.float32)
    assert _merger().merge_corners(boxes, _one_hot("none", 0.9)[None]) == []


def test_detections_validate_shapes() -> None:
    with pytest.raises(ValueError, match=r"confidence must have shape \(2,\)"):
        Detections(np.zeros((2, 4), np.float32), np.zeros(3, np.float32), np.zeros(2, np.int64))
    empty = Detections.empty()
    assert len(empty) == 0 and len(empty[np.zeros(0, bool)]) == 0


def test_reading_json_form() -> None:
    card = CardReading("10H", 0.97123, (1.04, 2, 3, 4), corners=2)
    reading = Reading((640, 480), (card,), ReadingFlag.LOW_CONFIDENCE | ReadingFlag.DUPLICATE)
    assert reading.to_dict() == {
        "size": [640, 480],
        "cards": [
            {
                "card": "10H",
                "confidence": 0.9712,
                "box": [1.0, 2, 3, 4],
                "corners": 2,
                "uncertain": False,
            }
        ],
        "flags": ["low_confidence", "duplicate"],
    }


def test_an_uncertain_card_names_its_runner_up_readings_in_json() -> None:
    from handreader.service.schemas import ReadOut

    unsure = CardReading(
        "KC", 0.27, (0, 0, 9, 9), uncertain=True, alternatives=(("KS", 0.211234), ("QC", 0.1))
    )
    sure = CardReading("9H", 0.99, (20, 0, 29, 9), alternatives=(("9D", 0.01),))
    shown = Reading((64, 64), (unsure, sure)).to_dict()
    assert shown["cards"][0]["alternatives"] == [["KS", 0.2112], ["QC", 0.1]]
    assert "alternatives" not in shown["cards"][1]  # a certain card is not in doubt
    ReadOut.model_validate(shown)  # the API's documented answer holds it


def test_classifier_classes_are_the_card_table_plus_none() -> None:
    assert CLASSIFIER_CLASSES[:54] == CARD_CLASSES and CLASSIFIER_CLASSES[-1] == "none"


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        (None, "no model manifest"),
        ("{not json", "unreadable"),
        ({"detector": {}}, "lacks detector.file"),
        ({"detector": {"file": "d.onnx"}, "classifier": {"file": "c.onnx"}}, "is missing"),
    ],
)
def test_bad_model_folders_are_clear_errors(tmp_path: Path, manifest: object, message: str) -> None:
    if manifest is not None:
        body = manifest if isinstance(manifest, str) else json.dumps(manifest)
        (tmp_path / "manifest.json").write_text(body)
    with pytest.raises(ModelError, match=message):
        Reader.load(tmp_path)


def test_the_models_are_found_in_a_checkout_or_an_installed_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout's ``models/`` beside ``vision``; an installed package's ``handreader/models``
    where there is none; ``HANDREADER_MODELS`` over both."""
    monkeypatch.delenv("HANDREADER_MODELS", raising=False)
    monkeypatch.setattr(model_files, "__file__", str(tmp_path / "vision" / "model_files.py"))
    (tmp_path / "handreader" / "models").mkdir(parents=True)
    assert default_models_dir() == tmp_path / "handreader" / "models"
    (tmp_path / "models").mkdir()
    assert default_models_dir() == tmp_path / "models"
    monkeypatch.setenv("HANDREADER_MODELS", str(tmp_path / "elsewhere"))
    assert default_models_dir() == tmp_path / "elsewhere"


class _ScriptedDetector(IndexDetector):
    """An IndexDetector whose whole-image pass (:meth:`IndexDetector._detect_shrunk`) answers
    from a script: the first call gets ``first``, a call on the framed close-up gets ``framed``
    (boxes in framed pixels). Each call records the size of the image it stands for and whether
    it asked for tiles; a call that adds the tiles to a reading already made gets that reading
    back (the tiles find nothing more)."""

    def __init__(
        self,
        first: list[list[float]],
        framed: list[list[float]],
        fine: list[list[float]] | None = None,
        dynamic: bool = True,
        first_confidence: list[float] | None = None,
    ) -> None:
        self.settings = ReaderSettings()
        self.size = 320
        self.dynamic = dynamic
        self.calls: list[tuple[int, int]] = []
        self.tiles: list[bool] = []
        self.sizes: list[int | None] = []
        self._answers = [first, framed]
        self._confidences = [first_confidence, None]
        self._fine_answer = fine or []

    def _detect_once(
        self,
        image: NDArray[np.uint8],
        offset: tuple[float, float] = (0.0, 0.0),
        size: int | None = None,
    ) -> Detections:
        self.sizes.append(size)
        boxes = np.array(self._fine_answer, np.float32).reshape(-1, 4)
        return Detections(
            boxes, np.full(len(boxes), 0.8, np.float32), np.zeros(len(boxes), np.int64)
        )

    def _detect_shrunk(
        self,
        small: NDArray[np.uint8],
        factor: float,
        width: int,
        height: int,
        tiles: bool = True,
        first: Detections | None = None,
    ) -> Detections:
        self.calls.append((height, width))
        self.tiles.append(tiles)
        if first is not None:
            return first
        boxes = np.array(self._answers.pop(0), np.float32).reshape(-1, 4)
        scores = self._confidences.pop(0)
        confidence = np.full(len(boxes), 0.9, np.float32) if scores is None else np.array(scores)
        return Detections(boxes, confidence.astype(np.float32), np.zeros(len(boxes), np.int64))


def test_small_indices_are_not_read_again() -> None:
    """Indices under a tenth of the image's shorter side: a table scene, one pass."""
    detector = _ScriptedDetector([[10, 10, 30, 45]], [])
    found = detector.detect(np.zeros((480, 640, 3), np.uint8))
    assert detector.calls == [(480, 640)] and detector.sizes == []
    assert found.xyxy.tolist() == [[10, 10, 30, 45]]


@pytest.mark.parametrize(
    ("first", "why"),
    [([[0, 0, 40, 60]], "an index of 60 px in a 300 px image"), ([], "nothing found")],
)
def test_close_up_is_read_again_inside_a_margin(first: list[list[float]], why: str) -> None:
    """A card filling the frame: read again framed by 15% of the longer side (60 px here),
    and the boxes of that pass come back in the image's own pixels, clipped to it."""
    detector = _ScriptedDetector(first, [[70, 65, 110, 125], [40, 50, 90, 110]])
    found = detector.detect(np.zeros((300, 400, 3), np.uint8))
    assert detector.calls == [(300, 400), (420, 520)], why
    assert detector.tiles == [False, False], why  # neither is a large photo
    assert found.xyxy.tolist() == [[10, 5, 50, 65], [0, 0, 30, 50]]


def test_large_close_up_is_framed_as_shrunk() -> None:
    """A close-up larger than ``tile_above_px`` (3000 x 2000 here) is framed as already shrunk
    (to 534 x 356, where a tile of 0.6 fills the 320 px input; margin 80): the framed pass
    sees a 694 x 516 image, without tiles, and its boxes come back scaled to the photo's
    pixels (3000 / 534 times)."""
    detector = _ScriptedDetector([[0, 0, 400, 600]], [[180, 180, 190, 200]])
    found = detector.detect(np.zeros((2000, 3000, 3), np.uint8))
    assert detector.calls == [(2000, 3000), (516, 694)]
    # the whole-image pass shows a close-up: neither pass reads tiles
    assert detector.tiles == [False, False]
    factor = 3000 / 534
    np.testing.assert_allclose(
        found.xyxy, [[100 * factor, 100 * factor, 110 * factor, 120 * factor]], rtol=1e-5
    )


def test_close_up_framed_beyond_the_tiling_size_is_tiled_when_nothing_was_found() -> None:
    """An image just under ``tile_above_px`` where nothing was found: framed, it is larger
    than that, so the framed pass looks in tiles too (the photo's own pass had none)."""
    detector = _ScriptedDetector([], [])
    detector.detect(np.zeros((1000, 1300, 3), np.uint8))
    assert detector.calls == [(1000, 1300), (1390, 1690)]
    assert detector.tiles == [False, True]


def test_large_photo_not_a_close_up_adds_its_tiles() -> None:
    """A large photo whose whole-image pass finds only small indices is read in tiles too,
    without reading the whole image again, and is not framed."""
    detector = _ScriptedDetector([[100, 100, 130, 140]], [[0, 0, 1, 1]])
    found = detector.detect(np.zeros((2000, 3000, 3), np.uint8))
    assert detector.calls == [(2000, 3000), (2000, 3000)]
    assert detector.tiles == [False, True]
    assert found.xyxy.tolist() == [[100, 100, 130, 140]]


@pytest.mark.parametrize(
    ("big", "framed"), [(0.3, False), (0.5, True), (0.75, True)], ids=["doubtful", "sure", "surer"]
)
def test_a_huge_index_makes_a_close_up_only_when_about_as_sure_as_the_small_ones(
    big: float, framed: bool
) -> None:
    """A table photo (3000 x 2000) whose first pass finds small indices at 0.7 and one huge
    box (a stack of chips) at ``big``: with ``closeup_surest_share`` 0.6 the huge box frames
    the photo only when it scores at least 0.42; otherwise the photo is read in tiles and not
    framed, and its small indices stay."""
    small = [[100, 100, 130, 140], [400, 100, 430, 140]]
    detector = _ScriptedDetector(
        [*small, [1000, 800, 1600, 1300]], [[0, 0, 1, 1]], first_confidence=[0.7, 0.6, big]
    )
    detector.settings = ReaderSettings(closeup_surest_share=0.6)
    found = detector.detect(np.zeros((2000, 3000, 3), np.uint8))
    if framed:
        assert detector.calls == [(2000, 3000), (516, 694)]
        assert detector.tiles == [False, False]
    else:
        assert detector.calls == [(2000, 3000), (2000, 3000)]
        assert detector.tiles == [False, True]
        assert found.xyxy.tolist()[:2] == small


def test_a_huge_index_alone_still_makes_a_close_up() -> None:
    """With nothing smaller found, a huge index frames the photo however sure it is."""
    detector = _ScriptedDetector([[0, 0, 40, 60]], [[70, 65, 110, 125]], first_confidence=[0.2])
    detector.settings = ReaderSettings(closeup_surest_share=0.6)
    detector.detect(np.zeros((300, 400, 3), np.uint8))
    assert detector.calls == [(300, 400), (420, 520)]


def test_frames_get_one_pass() -> None:
    """A video frame is not read again as a close-up (``closeups`` off, as ``for_frames``
    sets it): the first pass is the answer."""
    detector = _ScriptedDetector([[0, 0, 40, 60]], [[70, 65, 110, 125]])
    detector.settings = ReaderSettings(closeups=False)
    found = detector.detect(np.zeros((300, 400, 3), np.uint8))
    assert detector.calls == [(300, 400)]
    assert found.xyxy.tolist() == [[0, 0, 40, 60]]


# indices of 20 px in a 1024 x 768 scene: 6 px at the detector's 320, under fine_below_px
_SMALL = [[100, 100, 114, 120], [300, 200, 314, 220], [500, 600, 514, 620]]


def test_small_indices_are_read_again_finer() -> None:
    """Indices the network sees small are read again at ``fine_imgsz``; that reading is kept,
    clipped to the image."""
    detector = _ScriptedDetector(_SMALL, [], fine=[[1000, 700, 1030, 790], [99, 99, 115, 121]])
    found = detector.detect(np.zeros((768, 1024, 3), np.uint8))
    assert detector.calls == [(768, 1024)]
    assert detector.sizes == [ReaderSettings().fine_imgsz]
    assert sorted(found.xyxy.tolist()) == [[99, 99, 115, 121], [1000, 700, 1024, 768]]


def test_finer_pass_that_finds_nothing_keeps_the_first() -> None:
    detector = _ScriptedDetector(_SMALL, [], fine=[])
    found = detector.detect(np.zeros((768, 1024, 3), np.uint8))
    assert detector.sizes == [ReaderSettings().fine_imgsz]
    assert found.xyxy.tolist() == _SMALL


@pytest.mark.parametrize(
    ("shape", "dynamic", "settings", "why"),
    [
        ((768, 1024), False, {}, "a model with a fixed input size"),
        ((768, 1024), True, {"fine": False}, "finer pass off (frames)"),
        ((768, 1024), True, {"fine_below_px": 5.0}, "indices big enough at 320"),
        ((1536, 2048), True, {}, "a large photo, read in tiles instead"),
        ((360, 470), True, {}, "an image smaller than the finer input"),
        ((480, 630), True, {}, "a 640 px image less 10 (the finer input is 640)"),
    ],
)
def test_no_finer_pass(
    shape: tuple[int, int], dynamic: bool, settings: dict[str, object], why: str
) -> None:
    detector = _ScriptedDetector(_SMALL, [], fine=[[0, 0, 9, 9]], dynamic=dynamic)
    detector.settings = ReaderSettings(**settings)  # type: ignore[arg-type]
    found = detector.detect(np.zeros((*shape, 3), np.uint8))
    assert detector.sizes == [], why
    assert found.xyxy.tolist() == _SMALL, why


def test_frames_reader_turns_both_second_passes_off() -> None:
    reader = _merger()
    reader.detector = _ScriptedDetector([], [])
    frames = reader.for_frames()
    assert (frames.settings.closeups, frames.settings.fine) == (False, False)
    assert (reader.settings.closeups, reader.settings.fine) == (True, True)


def test_frames_reader_skips_the_card_face_check() -> None:
    """A video frame's budget (25 ms at 640x480) has no room for the card-face check; photos
    keep it (``ReaderSettings.card_evidence``)."""
    reader = _merger()
    reader.detector = _ScriptedDetector([], [])
    assert reader.settings.card_evidence is True
    assert reader.for_frames().settings.card_evidence is False


def test_upright_turns_follow_the_box_shape() -> None:
    """A box at least as tall as wide is read as it lies and half a turn round; a wider one
    at the quarter turns. Rows are turns 0..3, columns boxes."""
    boxes = np.array([[0, 0, 10, 20], [0, 0, 20, 10], [5, 5, 15, 15], [0, 0, 11, 10]], np.float32)
    assert upright_turns(boxes).tolist() == [
        [True, False, True, False],
        [False, True, False, True],
        [True, False, True, False],
        [False, True, False, True],
    ]
    assert upright_turns(np.zeros((0, 4), np.float32)).shape == (4, 0)


def _two_corner_card(
    other: str, confidence: float, apart: float
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """A KC read for certain at one corner (an index 30 px tall) and ``other`` at
    ``confidence`` ``apart`` index heights away, down and to the right."""
    step = 30.0 * apart / np.sqrt(2)
    centres = [(50.0, 50.0), (50.0 + step, 50.0 + step)]
    boxes = np.array([[x - 10, y - 15, x + 10, y + 15] for x, y in centres], np.float32)
    return boxes, np.stack([_one_hot("KC", 0.95), _one_hot(other, confidence)])


def test_an_unsure_other_corner_is_named_by_the_card_not_a_second_card() -> None:
    """An upside-down other corner of a KC read 10S at 0.5, 3.5 index heights away: one card,
    KC, still certain, naming 10S among its readings; the switch off leaves two cards."""
    boxes, probabilities = _two_corner_card("10S", 0.5, 3.5)
    (card,) = _merger().merge_corners(boxes, probabilities)
    assert (card.code, card.corners, card.uncertain) == ("KC", 2, False)
    assert "10S" in [code for code, _ in card.alternatives]
    assert card.other_corners == ("10S",)
    assert card.to_dict()["other_corners"] == ["10S"]
    assert card.confidence == pytest.approx(
        _merger().merge_corners(boxes[:1], probabilities[:1])[0].confidence
    )
    assert card.box_xyxy == pytest.approx(
        (boxes[:, 0].min(), boxes[:, 1].min(), boxes[:, 2].max(), boxes[:, 3].max())
    )
    off = _merger(other_corner=False).merge_corners(boxes, probabilities)
    assert sorted((c.code, c.uncertain) for c in off) == [("10S", True), ("KC", False)]


def test_an_other_corner_that_votes_can_make_the_card_unsure() -> None:
    boxes, probabilities = _two_corner_card("10S", 0.6, 3.5)
    (card,) = _merger(other_corner_votes=True).merge_corners(boxes, probabilities)
    assert card.corners == 2
    assert card.confidence < _merger().merge_corners(boxes, probabilities)[0].confidence


@pytest.mark.parametrize(
    ("other", "confidence", "apart", "why"),
    [
        ("10S", 0.9, 3.5, "read for certain: two certain readings may be two cards"),
        ("10S", 0.5, 1.5, "too near: the next card of a fan"),
        ("10S", 0.5, 7.0, "too far for one card's corners"),
    ],
)
def test_other_lone_unsure_indices_stay_cards(
    other: str, confidence: float, apart: float, why: str
) -> None:
    boxes, probabilities = _two_corner_card(other, confidence, apart)
    cards = _merger().merge_corners(boxes, probabilities)
    assert sorted(card.code for card in cards) == ["10S", "KC"], why


def test_two_unsure_lone_indices_make_no_card_of_each_other() -> None:
    boxes, probabilities = _two_corner_card("10S", 0.5, 3.5)
    probabilities[0] = _one_hot("KC", 0.5)
    cards = _merger().merge_corners(boxes, probabilities)
    assert sorted((c.code, c.uncertain) for c in cards) == [("10S", True), ("KC", True)]


def test_an_unsure_index_beside_a_card_is_the_next_card_of_a_row() -> None:
    """An unsure index 3.5 index heights to the right of a certain KC, at its height: the next
    card of a row, not the KC's other corner (which lies across the card)."""
    boxes, probabilities = _two_corner_card("10S", 0.5, 3.5)
    boxes[1] = [40 + 105, 35, 60 + 105, 65]  # beside the KC's index, not below it
    cards = _merger().merge_corners(boxes, probabilities)
    assert sorted((c.code, c.uncertain) for c in cards) == [("10S", True), ("KC", False)]
    anywhere = _merger(other_corner_slant=0.0).merge_corners(boxes, probabilities)
    assert [c.code for c in anywhere] == ["KC"]


@pytest.mark.parametrize(("least", "joined"), [(0, False), (2, True), (3, False)])
def test_a_hand_close_up_keeps_the_images_own_boxes_the_framed_pass_missed(
    least: int, joined: bool
) -> None:
    """With ``closeup_union_from`` 2, a close-up whose framed pass finds two indices keeps
    its own boxes that overlap no framed box by more than ``nms_iou`` (here the one at 200,
    150), and never one that a framed box replaced (the one at 0, 0: IoU 0.52)."""
    detector = _ScriptedDetector(
        [[0, 0, 40, 60], [200, 150, 230, 190]], [[70, 65, 110, 125], [40, 50, 90, 110]]
    )
    detector.settings = ReaderSettings(closeup_union_from=least)
    found = detector.detect(np.zeros((300, 400, 3), np.uint8))
    framed = [[10, 5, 50, 65], [0, 0, 30, 50]]
    assert found.xyxy.tolist() == framed + ([[200, 150, 230, 190]] if joined else [])
    assert len(found.confidence) == len(found.class_id) == len(found.xyxy)
