"""Cards printed light on dark: the reader's pass over a photo's negative (vision.dark_faces)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vision.dark_faces import (
    GLANCE_EVERY,
    VideoFaces,
    both_ways,
    looked,
    negative,
    negative_boxes,
)
from vision.detections import Detections
from vision.imageio import load_image
from vision.reader import Reader, ReaderSettings, default_models_dir

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "hand.jpg"
EXAMPLE_CARDS = ROOT / "examples" / "hand.json"


SETTINGS = ReaderSettings(dark_face_threshold=0.3)


def _found(boxes: list[list[float]], scores: list[float]) -> Detections:
    return Detections(
        np.array(boxes, np.float32).reshape(-1, 4),
        np.array(scores, np.float32),
        np.zeros(len(boxes), np.int64),
    )


def test_negative_turns_light_ink_on_black_into_dark_ink_on_white() -> None:
    face = np.zeros((4, 4, 3), np.uint8)
    face[1:3, 1:3] = (40, 200, 230)  # a gold index on a black face
    shown = negative(face)
    assert shown.dtype == np.uint8 and shown.shape == face.shape
    assert (shown[0, 0] == 255).all()  # the black paper is white
    assert tuple(shown[1, 1]) == (215, 55, 25)
    assert (negative(shown) == face).all()


def test_only_the_boxes_the_photo_lacks_and_sure_enough_are_kept() -> None:
    photo = _found([[0, 0, 10, 10]], [0.5])
    found = _found(
        [[1, 1, 11, 11], [50, 50, 60, 60], [80, 80, 90, 90], [6, 0, 16, 10]],
        [0.9, 0.5, 0.2, 0.6],
    )
    only = replace(SETTINGS, dark_face_surer=False)  # boxes the photo lacks, and no other
    kept, partners = negative_boxes(found, photo, only)
    # the first overlaps the photo's own box (IoU 0.68), the third is under the threshold; the
    # fourth overlaps it by IoU 0.25 only
    assert kept.xyxy.tolist() == [[50, 50, 60, 60], [6, 0, 16, 10]] and not partners.any()
    assert kept.confidence.tolist() == pytest.approx([0.5, 0.6])
    assert len(negative_boxes(found, Detections.empty(), only)[0]) == 3
    assert len(negative_boxes(found, photo, replace(only, dark_face_threshold=0.95))[0]) == 0


def test_a_box_surer_in_the_negative_than_its_photo_boxes_is_read_there_too() -> None:
    """A box of the negative overlapping photo boxes, surer than each, is read with them as
    their partner; one less sure than any of them is not read; one holding a photo box's
    centre without overlapping it is not read either."""
    photo = _found(
        [[0, 0, 10, 10], [20, 0, 30, 10], [40, 40, 50, 50], [100, 0, 110, 10], [140, 0, 150, 10]],
        [0.2, 0.8, 0.5, 0.3, 0.6],
    )
    found = _found(
        [
            [1, 1, 11, 11],  # photo box 0 (IoU 0.68), surer: read, box 0 its partner
            [21, 1, 31, 11],  # photo box 1, less sure: only the photo's box is read
            [60, 60, 70, 70],  # no photo box there
            [41, 41, 51, 51],  # photo box 2, as sure: only the photo's box is read
            [30, 30, 80, 80],  # holds box 2's centre, overlaps it by 0.04 only: a card or more
            [101, 0, 146, 10],  # overlaps boxes 3 and 4 by 0.20 and 0.12, holds box 3's centre
            [102, 0, 112, 10],  # box 3 (IoU 0.67), surer: read, box 3 its partner
        ],
        [0.6, 0.7, 0.5, 0.5, 0.9, 0.95, 0.4],
    )
    settings = ReaderSettings(dark_face_threshold=0.3)
    read, partners = negative_boxes(found, photo, settings)
    assert read.xyxy.tolist() == [[1, 1, 11, 11], [60, 60, 70, 70], [102, 0, 112, 10]]
    assert partners.tolist() == [
        [True, False, False, False, False],
        [False] * 5,
        [False, False, False, True, False],
    ]
    kept, partners = negative_boxes(found, photo, replace(settings, dark_face_surer=False))
    assert kept.xyxy.tolist() == [[60, 60, 70, 70]] and not partners.any()
    read, _ = negative_boxes(found, photo, replace(settings, dark_face_threshold=0.65))
    assert read.xyxy.tolist() == []  # the surer boxes are under the threshold
    read, partners = negative_boxes(found, Detections.empty(), settings)
    assert len(read) == len(found) and partners.shape == (len(found), 0)


def _readings(
    cards: list[int], sureness: list[float], first: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Readings of boxes numbered from ``first``: box and embedding hold the number."""
    probabilities = np.full((len(cards), 55), 0.0, np.float32)
    for row, (card, sure) in enumerate(zip(cards, sureness, strict=True)):
        probabilities[row, card] = sure
        probabilities[row, -1] = 1 - sure  # the rest "none"
    numbers = np.arange(first, first + len(cards), dtype=np.float32)
    boxes = np.tile(numbers[:, None], (1, 4))
    embeddings = np.tile(numbers[:, None], (1, 128))
    return boxes, probabilities, embeddings


def test_an_index_read_both_ways_keeps_the_surer_reading() -> None:
    """Each box of the negative partnered with photo boxes is kept, and they go, only when its
    surest card is surer than each of theirs; unpartnered boxes of both are all kept."""
    photo = _readings([3, 10, 20], [0.4, 0.95, 0.8])
    dark = _readings([3, 11, 30], [0.9, 0.6, 0.7], first=10)
    partners = np.array(
        [[True, False, False], [False, True, False], [False, False, False]]
    )  # the negative's first box is the photo's first index, its second the photo's second
    xyxy, probabilities, embeddings, is_dark = both_ways(photo, dark, partners)
    # the photo's first index reads surer in the negative (0.9 against 0.4): read there; its
    # second reads surer in the photo (0.95 against 0.6); the negative's third is its own
    assert xyxy[:, 0].tolist() == [1, 2, 10, 12] and embeddings[:, 0].tolist() == [1, 2, 10, 12]
    assert probabilities[:, :-1].argmax(axis=1).tolist() == [10, 20, 3, 30]
    assert probabilities[:, :-1].max(axis=1).tolist() == pytest.approx([0.95, 0.8, 0.9, 0.7])
    assert is_dark.tolist() == [False, False, True, True]
    alone = both_ways(photo, dark, np.zeros((3, 3), bool))
    assert len(alone[0]) == 6 and alone[3].tolist() == [False] * 3 + [True] * 3
    none = both_ways(_readings([], []), dark, np.zeros((3, 0), bool))
    assert len(none[0]) == 3 and none[3].all()
    with pytest.raises(ValueError, match="do not pair 3 boxes with 3 photo boxes"):
        both_ways(photo, dark, np.zeros((3, 2), bool))


def test_each_box_is_looked_at_in_the_image_it_was_found_in() -> None:
    image = np.full((8, 8, 3), 10, np.uint8)
    dark_image = np.full((8, 8, 3), 200, np.uint8)
    xyxy = np.array([[0, 0, 2, 2], [2, 2, 4, 4], [4, 4, 6, 6]], np.float32)
    seen: list[int] = []

    def look(picture: np.ndarray, boxes: np.ndarray) -> np.ndarray:
        seen.append(len(boxes))
        return np.full(len(boxes), float(picture[0, 0, 0]), np.float32)

    dark = np.array([False, True, False])
    assert looked(look, image, xyxy, dark, dark_image).tolist() == [10, 200, 10]
    assert sorted(seen) == [1, 2]  # one look a picture
    seen.clear()
    assert looked(look, image, xyxy, None, None).tolist() == [10, 10, 10]
    assert looked(look, image, xyxy, np.zeros(3, bool), dark_image).tolist() == [10, 10, 10]
    assert seen == [3, 3]
    assert looked(look, image, xyxy, np.ones(3, bool), dark_image).tolist() == [200] * 3


models = pytest.mark.skipif(
    not (default_models_dir() / "manifest.json").is_file(),
    reason="no shipped models (models/manifest.json)",
)


@pytest.fixture(scope="module")
def reader() -> Reader:
    return Reader.load()


@models
def test_a_deck_printed_light_on_dark_is_read(reader: Reader) -> None:
    """The example photo's negative: white and cyan indices on black faces, on a light felt.
    Its cards are read from the pass over the negative, checked there by the verifier and the
    card-face check; without that pass they are not found."""
    truth = set(json.loads(EXAMPLE_CARDS.read_text())["cards"])
    dark = negative(load_image(EXAMPLE))
    certain = {card.code for card in reader.read(dark).cards if not card.uncertain}
    assert len(truth & certain) >= 3, sorted(certain)
    assert certain <= truth
    without = reader.with_settings(replace(reader.settings, dark_faces=False))
    missed = {card.code for card in without.read(dark).cards if not card.uncertain}
    assert len(truth & missed) < len(truth & certain), sorted(missed)


@models
def test_the_negative_adds_no_card_to_a_photo_of_light_faces(reader: Reader) -> None:
    image = load_image(EXAMPLE)
    without = reader.with_settings(replace(reader.settings, dark_faces=False))
    assert [card.code for card in reader.read(image).cards] == [
        card.code for card in without.read(image).cards
    ]


@models
def test_a_lone_frame_skips_the_negative_and_a_stream_glances_once_in_so_many(
    reader: Reader,
) -> None:
    """A lone frame costs one detector pass; a video's reader glances at its frames' other way
    once in GLANCE_EVERY frames; with ``dark_faces`` off it never does."""
    image = load_image(EXAMPLE)
    passes: list[int] = []
    once = reader.detector._detect_once

    def counting(picture: np.ndarray, *args: object, **kwargs: object) -> Detections:
        passes.append(1)
        return once(picture, *args, **kwargs)  # type: ignore[arg-type]

    reader.detector._detect_once = counting  # type: ignore[method-assign, assignment]
    try:
        frames = reader.for_frames()
        assert frames.faces is None
        frames.read(image)
        assert len(passes) == 1
        passes.clear()
        stream = reader.for_stream()
        for _ in range(GLANCE_EVERY):
            stream.read(image)
        assert len(passes) == GLANCE_EVERY + 1
        off = reader.with_settings(replace(reader.settings, dark_faces=False)).for_stream()
        assert off.faces is None
    finally:
        del reader.detector._detect_once


@models
def test_a_deck_printed_light_on_dark_is_calibrated_in_its_negative(
    reader: Reader, tmp_path: Path
) -> None:
    """Calibration photos of such a deck are read in their negatives, as the reader reads the
    deck; photos of light faces as they are."""
    import cv2

    from vision.calibrate_deck import calibrate, card_faces

    image = load_image(EXAMPLE)
    dark = negative(image)
    face, found = card_faces(reader, dark, 4)
    assert (face == image).all() and len(found) >= 4
    face, _ = card_faces(reader, image, 4)
    assert face is image
    photo = tmp_path / "2D.png"
    cv2.imwrite(str(photo), dark)
    result = calibrate(reader, "dark", [photo], save=lambda _: "")
    assert len(result.profile.prototypes["2D"]) >= 4
    assert not any("no card index found" in warning for warning in result.warnings)
    assert result.sheet[:56, :72].mean() > 127  # the first tile shows light paper


def test_a_video_glances_the_other_way_once_in_so_many_frames() -> None:
    faces = VideoFaces(every=3)
    assert [faces.due() for _ in range(7)] == [False, False, True, False, False, True, False]
    with pytest.raises(ValueError, match="at least 1 frame"):
        VideoFaces(every=0)


def test_a_video_turns_only_when_the_other_way_shows_more_indices() -> None:
    faces = VideoFaces()
    frame = np.zeros((4, 4, 3), np.uint8)
    shown, way = faces.shown(frame)
    assert shown is frame and way is False
    none = _found([], [])
    two = _found([[0, 0, 10, 10], [50, 0, 60, 10]], [0.8, 0.9])
    weak = _found([[0, 0, 10, 10], [50, 0, 60, 10]], [0.8, 0.2])
    assert not faces.turn(none, weak, SETTINGS, False)  # one sure index: not enough to turn a video
    assert not faces.turn(two, two, SETTINGS, False)  # the same indices, found already
    three = _found([[100, 0, 110, 10], [150, 0, 160, 10], [200, 0, 210, 10]], [0.5] * 3)
    assert not faces.turn(_found([[0, 0, 9, 9]] * 3, [0.9] * 3), three, SETTINGS, False)  # not more
    assert faces.turn(none, two, SETTINGS, False) and faces.dark
    shown, way = faces.shown(frame)
    assert (shown == 255).all() and way is True
    # a frame read the old way, glanced at after the switch, does not switch the video back
    assert not faces.turn(none, two, SETTINGS, False) and faces.dark
    assert faces.turn(none, two, SETTINGS, True) and not faces.dark  # and back, from the new way


def test_a_video_turns_to_indices_it_shows_faintly_and_the_other_way_surely() -> None:
    """A frame of a deck printed light on dark whose every index shows faintly where its
    negative shows it surely: the video turns, though the negative shows no index the frame
    lacks; with ``dark_face_surer`` off it does not."""
    faint = _found([[0, 0, 10, 10], [50, 0, 60, 10], [100, 0, 110, 10]], [0.35, 0.4, 0.2])
    sure = _found([[1, 0, 11, 10], [51, 0, 61, 10], [101, 0, 111, 10]], [0.8, 0.9, 0.7])
    assert not VideoFaces().turn(faint, sure, replace(SETTINGS, dark_face_surer=False), False)
    faces = VideoFaces()
    assert faces.turn(faint, sure, SETTINGS, False) and faces.dark
    assert not VideoFaces().turn(sure, faint, SETTINGS, False)  # and never towards fainter ones


def test_marks_for_other_boxes_are_refused() -> None:
    xyxy = np.zeros((2, 4), np.float32)
    image = np.zeros((4, 4, 3), np.uint8)
    with pytest.raises(ValueError, match="dark marks 3 boxes, xyxy holds 2"):
        looked(lambda picture, boxes: np.zeros(len(boxes)), image, xyxy, np.ones(3, bool), image)


@models
def test_a_video_of_a_deck_printed_light_on_dark_is_read_in_its_negatives(
    reader: Reader,
) -> None:
    truth = set(json.loads(EXAMPLE_CARDS.read_text())["cards"])
    dark = negative(load_image(EXAMPLE))
    stream = reader.for_stream()
    assert stream.faces is not None and not stream.faces.dark
    readings = [stream.read(dark) for _ in range(GLANCE_EVERY + 2)]
    before = {card.code for card in readings[0].cards if not card.uncertain}
    after = {card.code for card in readings[-1].cards if not card.uncertain}
    assert len(truth & before) < 3 <= len(truth & after), (sorted(before), sorted(after))
    assert stream.faces.dark
    light = reader.for_stream()
    image = load_image(EXAMPLE)
    for _ in range(2 * GLANCE_EVERY):
        light.read(image)
    assert light.faces is not None and not light.faces.dark


@models
def test_a_photo_of_light_and_dark_cards_reads_both(reader: Reader) -> None:
    """The example hand and, far from it on one felt, its negative: the light hand is read in
    the photo and the dark one in the negative, each card where it lies, in one reading."""
    truth = set(json.loads(EXAMPLE_CARDS.read_text())["cards"])
    image = load_image(EXAMPLE)
    both = np.zeros((1200, 1600, 3), np.uint8)
    both[:] = image[5, 5]  # the example's felt
    both[:480, :640] = image
    both[720:, 960:] = negative(image)
    cards = [card for card in reader.read(both).cards if not card.uncertain]
    left = {card.code for card in cards if card.box_xyxy[2] <= 640 and card.box_xyxy[3] <= 480}
    right = {card.code for card in cards if card.box_xyxy[0] >= 960 and card.box_xyxy[1] >= 720}
    assert len(truth & left) >= 3 and len(truth & right) >= 3, (sorted(left), sorted(right))
    assert (left | right) <= truth


def test_a_video_read_by_several_threads_counts_each_frame_and_turns_once() -> None:
    from concurrent.futures import ThreadPoolExecutor

    faces = VideoFaces(every=4)
    with ThreadPoolExecutor(max_workers=8) as pool:
        dues = list(pool.map(lambda _: faces.due(), range(400)))
    assert sum(dues) == 100
    none = _found([], [])
    two = _found([[0, 0, 10, 10], [50, 0, 60, 10]], [0.8, 0.9])
    with ThreadPoolExecutor(max_workers=8) as pool:
        turned = list(pool.map(lambda _: faces.turn(none, two, SETTINGS, False), range(64)))
    assert sum(turned) == 1 and faces.dark


@models
def test_a_large_photo_is_shrunk_once_for_its_reading_and_the_glance_at_its_negative(
    reader: Reader,
) -> None:
    """The glance at a large photo's negative is taken from the copy the photo was shrunk to
    for its own reading (534 px long for the shipped detector), and finds the indices a
    glance at the whole negative finds; a photo under ``tile_above_px`` is glanced at whole."""
    import cv2

    image = load_image(EXAMPLE)
    tiled = np.tile(image, (3, 3, 1))
    table = np.asarray(cv2.resize(tiled, (2000, 1500), interpolation=cv2.INTER_CUBIC), np.uint8)
    dark = negative(table)
    shown: list[tuple[int, ...]] = []

    def other(picture: np.ndarray) -> np.ndarray:
        shown.append(picture.shape)
        return negative(picture)

    found, glance = reader.detector.detect_and_glance(dark, other)
    assert shown == [(400, 534, 3)] and glance.small.shape == (400, 534, 3)
    assert found.xyxy.tolist() == reader.detector.detect(dark).xyxy.tolist()
    glanced = glance.found
    whole = reader.detector.glance(table)  # the negative of the negative, at full size
    sure, sure_whole = glanced.confidence >= 0.3, whole.confidence >= 0.3
    assert sure.sum() >= 40 and abs(int(sure.sum()) - int(sure_whole.sum())) <= 2
    _assert_near(glanced.xyxy[sure], whole.xyxy[sure_whole])  # the same indices, photo pixels
    shown.clear()
    reader.detector.detect_and_glance(image, other)
    assert shown == [image.shape]


def _assert_near(boxes: np.ndarray, others: np.ndarray, pixels: float = 4) -> None:
    """Nine in ten of ``boxes`` within ``pixels`` of one of ``others`` at each side."""
    nearest = np.abs(boxes[:, None] - others[None]).max(axis=2).min(axis=1)
    assert (nearest <= pixels).mean() >= 0.9, np.sort(nearest)


@models
def test_the_negative_read_whole_after_the_glance_repeats_neither_its_copy_nor_its_first_pass(
    reader: Reader,
) -> None:
    """A large photo whose glance shows indices is read whole in its negative from the copy the
    glance read, the glance's boxes standing for that copy's pass at 320: one more pass (at
    534) instead of two, the same indices as a reading of the full-size negative."""
    import cv2

    image = load_image(EXAMPLE)
    tiled = np.tile(image, (3, 3, 1))
    table = np.asarray(cv2.resize(tiled, (2000, 1500), interpolation=cv2.INTER_CUBIC), np.uint8)
    dark = negative(table)  # a table of cards printed light on dark
    _, glance = reader.detector.detect_and_glance(dark, negative)
    sizes: list[int | None] = []
    once = reader.detector._detect_once

    def counting(picture: np.ndarray, *args: object, **kwargs: object) -> Detections:
        sizes.append(kwargs.get("size"))  # type: ignore[arg-type]
        return once(picture, *args, **kwargs)  # type: ignore[arg-type]

    reader.detector._detect_once = counting  # type: ignore[method-assign, assignment]
    try:
        found = reader.detector.detect_glanced(table, glance)  # the negative of the photo
        assert sizes == [534]
        sizes.clear()
        whole = reader.detector.detect(table)
        assert sizes == [None, 534]
    finally:
        del reader.detector._detect_once
    assert abs(len(found) - len(whole)) <= 1 and len(found) >= 60
    _assert_near(found.xyxy, whole.xyxy, pixels=1)
    with pytest.raises(ValueError, match="is not of a 1000x750 image"):
        reader.detector.detect_glanced(table[::2, ::2], glance)


def _holdout_art_missing() -> list[str]:
    from training.synth.decks import DECKS

    return [deck.name for deck in DECKS if deck.split == "holdout" and not deck.available]


@models
@pytest.mark.skipif(bool(_holdout_art_missing()), reason="held-out card art not installed")
def test_a_dark_deck_shown_faintly_in_the_photo_too_is_read_in_the_negative(
    reader: Reader,
) -> None:
    """Scene 23 of the dark held-out scenes (``datasets/dark-holdout.yaml``): five cards of a
    deck printed light on dark, three of whose indices the photo shows faintly. Read where
    each reads surer, all five are read; with the photo's faint boxes always kept
    (``dark_face_surer`` off), at most three."""
    from training.synth.config import load_config
    from training.synth.generate import scene_at

    scene = scene_at(load_config(ROOT / "datasets" / "dark-holdout.yaml"), 23)
    truth = {label.code for label in scene.labels}
    read = {card.code for card in reader.read(scene.image).cards if not card.uncertain}
    assert read == truth and len(truth) == 5
    off = reader.with_settings(replace(reader.settings, dark_face_surer=False))
    fewer = {card.code for card in off.read(scene.image).cards if not card.uncertain}
    assert fewer < truth and len(fewer) <= 3
