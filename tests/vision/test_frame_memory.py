"""The frame memory: which readings of a video's last frames stand for the next frame's indices
(vision/frame_memory.py), and the stream reader that uses it (Reader.for_stream)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from vision.frame_memory import FrameMemory, MemorySettings, box_thumbnails
from vision.reader import Reader

ROOT = Path(__file__).resolve().parents[2]
CLASSES, WIDTH = 55, 128


def _reading(code: int, sureness: float, rows: int = 1) -> NDArray[np.float32]:
    """Probabilities (rows, CLASSES) with ``sureness`` on class ``code``, the rest spread."""
    probabilities = np.full((rows, CLASSES), (1 - sureness) / (CLASSES - 1), np.float32)
    probabilities[:, code] = sureness
    return probabilities


BOX = np.array([[100, 100, 120, 130]], np.float32)
THUMB = np.full((1, 64), 200.0, np.float32)


def _frame(
    memory: FrameMemory,
    probabilities: NDArray[np.float32],
    xyxy: NDArray[np.float32] = BOX,
    thumbs: NDArray[np.float32] = THUMB,
) -> bool:
    """One frame of one index: recall, then keep (the remembered reading where known, else
    ``probabilities``, as the reader does); whether the memory knew it."""
    recalled = memory.recall(xyxy, thumbs, CLASSES, WIDTH)
    known = bool(recalled.known[0])
    read = recalled.probabilities if known else probabilities
    memory.keep(recalled, xyxy, thumbs, read, np.zeros((1, WIDTH), np.float32), recalled.believed)
    return known


def test_box_thumbnails_are_block_means_of_the_crops_square() -> None:
    """A box of side 320 / 13 is cut as a 32 px square (1.3 times its side) centred on it: on a
    grey image its thumbnail is the means of that square's 4 x 4 px blocks."""
    rng = np.random.default_rng(3)
    grey = rng.integers(0, 256, (120, 160), np.uint8)
    image = np.repeat(grey[:, :, None], 3, axis=2)
    side = 320 / 13
    xyxy = np.array([[100 - side / 2, 50 - side / 2, 100 + side / 2, 50 + side / 2]], np.float32)
    square = grey[34:66, 84:116].astype(np.float64)
    expected = square.reshape(8, 4, 8, 4).mean(axis=(1, 3)).reshape(1, 64)
    np.testing.assert_allclose(box_thumbnails(image, xyxy), expected, atol=1e-3)


def test_box_thumbnails_of_boxes_at_and_past_the_edge_are_finite() -> None:
    image = np.full((60, 80, 3), 90, np.uint8)
    xyxy = np.array([[-10, -10, 8, 12], [70, 50, 95, 70], [0, 0, 0, 0]], np.float32)
    thumbs = box_thumbnails(image, xyxy)
    assert thumbs.shape == (3, 64) and np.isfinite(thumbs).all()
    assert set(np.unique(thumbs).tolist()) <= {0.0, 90.0}  # inside: the grey; wholly out: 0
    assert box_thumbnails(image, np.zeros((0, 4), np.float32)).shape == (0, 64)


def test_a_reading_stands_after_its_confirmations_and_for_at_most_its_frames() -> None:
    """Confirmations 3, frames 4: frames 1-3 are read (three alike), frames 4-7 recalled, the
    8th read afresh, and, being alike, the next 4 recalled again."""
    memory = FrameMemory(MemorySettings(confirmations=3, frames=4))
    sure = _reading(7, 0.97)
    known = [_frame(memory, sure) for _ in range(12)]
    assert known == [False] * 3 + [True] * 4 + [False] + [True] * 4


def test_the_remembered_reading_is_what_was_kept() -> None:
    memory = FrameMemory(MemorySettings(confirmations=1))
    sure = _reading(12, 0.95)
    _frame(memory, sure)
    recalled = memory.recall(BOX, THUMB, CLASSES, WIDTH)
    assert recalled.known.tolist() == [True]
    np.testing.assert_array_equal(recalled.probabilities, sure)
    assert recalled.uses.tolist() == [1]


def test_the_remembered_reading_is_the_mean_of_the_readings_alike() -> None:
    """An index read unsure alike, now above the uncertain threshold and now under (0.74,
    0.66, 0.71, 0.69, 0.75), is remembered as the mean of its readings, not as the last one;
    a reading of another class starts the mean again."""
    memory = FrameMemory(MemorySettings(confirmations=5))
    sureness = [0.74, 0.66, 0.71, 0.69, 0.75]
    assert not any(_frame(memory, _reading(0, value)) for value in sureness)
    recalled = memory.recall(BOX, THUMB, CLASSES, WIDTH)
    assert recalled.known.tolist() == [True]
    np.testing.assert_allclose(recalled.probabilities[0, 0], np.mean(sureness), atol=1e-6)
    np.testing.assert_allclose(recalled.probabilities.sum(), 1.0, atol=1e-5)

    # with three confirmations, the mean is of the last three readings at most
    memory = FrameMemory(MemorySettings(confirmations=3))
    for value in sureness:
        _frame(memory, _reading(0, value))
    first = memory.recall(BOX, THUMB, CLASSES, WIDTH).probabilities[0, 0]
    assert 0.69 < first < 0.75 and first != pytest.approx(0.75)

    memory = FrameMemory(MemorySettings(confirmations=3))
    readings = [_reading(0, 0.8), _reading(0, 0.6), _reading(3, 0.7), _reading(3, 0.8)]
    assert not any(_frame(memory, r) for r in [*readings, _reading(3, 0.75)])
    recalled = memory.recall(BOX, THUMB, CLASSES, WIDTH)
    assert recalled.known.tolist() == [True]
    np.testing.assert_allclose(recalled.probabilities[0, [0, 3]], [0.25 / 54, 0.75], atol=1e-6)


def test_a_wavering_index_is_read_afresh_in_every_frame() -> None:
    """The other corner of a card: read for sure as one card, then unsure as another."""
    memory = FrameMemory(MemorySettings(confirmations=2))
    readings = [_reading(49, 0.93), _reading(10, 0.51)] * 5
    assert not any(_frame(memory, reading) for reading in readings)


def test_readings_a_little_either_side_of_sure_are_alike() -> None:
    """An index read at 0.902, 0.898, 0.912, 0.893 and 0.905 (sure from 0.9) reads alike
    within ``wobble`` of its mean and is remembered; without the wobble it is read afresh in
    every frame, and a reading far from the mean (0.95, then 0.6) is not alike either way."""
    sureness = [0.902, 0.898, 0.912, 0.893, 0.905, 0.9, 0.9]
    memory = FrameMemory(MemorySettings(confirmations=5))
    known = [_frame(memory, _reading(49, value)) for value in sureness]
    assert known == [False] * 5 + [True] * 2
    recalled = memory.recall(BOX, THUMB, CLASSES, WIDTH)
    np.testing.assert_allclose(recalled.probabilities[0, 49], np.mean(sureness[:5]), atol=1e-6)

    memory = FrameMemory(MemorySettings(confirmations=5, wobble=0.0))
    assert not any(_frame(memory, _reading(49, value)) for value in sureness)

    memory = FrameMemory(MemorySettings(confirmations=2))
    assert not any(_frame(memory, _reading(49, value)) for value in [0.95, 0.6] * 3)


def test_an_index_read_unsure_alike_every_time_is_remembered_unsure() -> None:
    memory = FrameMemory(MemorySettings(confirmations=2))
    unsure = _reading(51, 0.85)
    assert [_frame(memory, unsure) for _ in range(4)] == [False, False, True, True]


@pytest.mark.parametrize(
    ("xyxy", "thumbs", "why"),
    [
        (BOX + np.array([[6, 0, 6, 0]], np.float32), THUMB, "moved by more than overlap allows"),
        (BOX, THUMB + 6.0, "the crop looks otherwise (difference over 5)"),
    ],
)
def test_a_changed_index_is_read_afresh(
    xyxy: NDArray[np.float32], thumbs: NDArray[np.float32], why: str
) -> None:
    memory = FrameMemory(MemorySettings(confirmations=1))
    _frame(memory, _reading(3, 0.99))
    assert memory.recall(BOX, THUMB, CLASSES, WIDTH).known.tolist() == [True]
    assert memory.recall(xyxy, thumbs, CLASSES, WIDTH).known.tolist() == [False], why


def test_camera_noise_leaves_an_index_remembered() -> None:
    """Crops of one index with fresh noise of sigma 4 (the live benchmark's) differ far less
    than ``difference``."""
    rng = np.random.default_rng(5)
    index = np.zeros((32, 32, 3), np.uint8) + 230
    cv2.putText(index, "Q", (6, 26), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (20, 20, 20), 2)
    box = np.array([[4.0, 4.0, 28.0, 28.0]], np.float32)  # a 31 px square about the glyph
    first, second = (
        box_thumbnails(np.clip(index + rng.normal(0, 4, index.shape), 0, 255).astype(np.uint8), box)
        for _ in range(2)
    )
    assert np.abs(first - second).mean() < MemorySettings().difference / 2


def test_one_remembered_box_stands_for_one_new_box() -> None:
    memory = FrameMemory(MemorySettings(confirmations=1, overlap=0.5))
    _frame(memory, _reading(3, 0.99))
    twins = np.concatenate([BOX, BOX + np.array([[1, 0, 1, 0]], np.float32)])
    recalled = memory.recall(twins, np.concatenate([THUMB, THUMB]), CLASSES, WIDTH)
    assert recalled.known.tolist() == [True, False]


def test_an_older_frame_kept_late_does_not_replace_a_newer_one() -> None:
    """Frames read at once may finish out of order: the later frame's readings stay."""
    memory = FrameMemory(MemorySettings(confirmations=1))
    older = memory.recall(BOX, THUMB, CLASSES, WIDTH)
    newer = memory.recall(BOX, THUMB, CLASSES, WIDTH)
    embeddings = np.zeros((1, WIDTH), np.float32)
    memory.keep(newer, BOX, THUMB, _reading(3, 0.99), embeddings, newer.believed)
    memory.keep(older, BOX, THUMB, _reading(9, 0.99), embeddings, older.believed)
    recalled = memory.recall(BOX, THUMB, CLASSES, WIDTH)
    assert recalled.probabilities[0].argmax() == 3


def test_clear_forgets_every_reading() -> None:
    memory = FrameMemory(MemorySettings(confirmations=1))
    _frame(memory, _reading(3, 0.99))
    assert len(memory) == 1
    memory.clear()
    assert len(memory) == 0
    assert not memory.recall(BOX, THUMB, CLASSES, WIDTH).known.any()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("overlap", 0.0, "overlap must be in (0, 1], got 0.0"),
        ("overlap", 1.5, "overlap must be in (0, 1], got 1.5"),
        ("difference", -1.0, "difference must be at least 0, got -1.0"),
        ("sure", 0.0, "sure must be in (0, 1], got 0.0"),
        ("frames", 0, "frames must be at least 1, got 0"),
        ("confirmations", 0, "confirmations must be at least 1, got 0"),
        ("wobble", -0.1, "wobble must be in [0, 1), got -0.1"),
        ("wobble", 1.0, "wobble must be in [0, 1), got 1.0"),
    ],
)
def test_settings_out_of_range_are_refused(field: str, value: float, message: str) -> None:
    with pytest.raises(ValueError) as error:
        MemorySettings(**{field: value})  # type: ignore[arg-type]
    assert str(error.value) == message


# --- the stream reader on the shipped models ---------------------------------------------------


@pytest.fixture(scope="module")
def reader() -> Reader:
    return Reader.load()


def _clip(frames: int, seed: int = 1) -> list[NDArray[np.uint8]]:
    """The example hand at 640 x 480 with fresh noise in every frame (the live benchmark's)."""
    image = cv2.imread(str(ROOT / "examples" / "hand.jpg"))
    assert image is not None
    frame = cv2.resize(image, (640, 480), interpolation=cv2.INTER_AREA).astype(np.float32)
    rng = np.random.default_rng(seed)
    return [
        np.clip(frame + rng.normal(0.0, 4.0, frame.shape), 0, 255).astype(np.uint8)
        for _ in range(frames)
    ]


class _Counted:
    """Counts the crops a reader's classifier and the boxes its verifier are shown."""

    def __init__(self, reader: Reader) -> None:
        self.crops: list[int] = []
        self.verified = 0
        run = reader._run_classifier
        verifier = reader.verifier
        assert verifier is not None
        ask = verifier.index_probability

        def counted_run(crops: NDArray[np.uint8]) -> tuple[NDArray[np.float32], ...]:
            self.crops.append(len(crops))
            return run(crops)

        def counted_ask(image: NDArray[np.uint8], xyxy: NDArray[np.float32]) -> object:
            self.verified += len(xyxy)
            return ask(image, xyxy)

        reader._run_classifier = counted_run  # type: ignore[method-assign]
        reader.verifier = type("Counted", (), {"index_probability": staticmethod(counted_ask)})()


def test_a_stream_reads_the_cards_a_frame_reader_reads_with_fewer_crops(reader: Reader) -> None:
    """The four whole cards of the example read for certain in every frame either way, and
    its king of spades, whose index the frame's edge cuts, in most (its jack of clubs' other
    corner, read now as JS, now unsure, aside); after the first frames the stream reader
    classifies and verifies a small share of the indices."""
    clip = _clip(16)
    plain, stream = reader.for_frames(), reader.for_stream()
    assert stream.memory is not None and plain.memory is None
    counted_plain, counted_stream = _Counted(plain), _Counted(stream)
    whole, hand = {"2D", "JD", "3D", "JC"}, {"KS", "2D", "JD", "3D", "JC"}
    kings = {"plain": 0, "stream": 0}
    for frame in clip:
        for name, one in (("plain", plain), ("stream", stream)):
            certain = {card.code for card in one.read(frame).cards if not card.uncertain}
            assert whole <= certain and len(certain - hand) <= 1
            kings[name] += "KS" in certain
    assert kings["plain"] > len(clip) / 2 and kings["stream"] > len(clip) / 2
    assert sum(counted_stream.crops) < 0.5 * sum(counted_plain.crops)
    # a card read at two sure corners skips the verifier either way: the rest is the KS
    assert counted_stream.verified <= 0.5 * counted_plain.verified


def test_each_stream_reader_has_its_own_memory(reader: Reader) -> None:
    first, second = reader.for_stream(), reader.for_stream()
    assert first.memory is not second.memory
    first.read(_clip(1)[0])
    assert first.memory is not None and len(first.memory) > 0
    assert second.memory is not None and len(second.memory) == 0
    lettered = first.with_indices("french")
    assert lettered.memory is first.memory  # one video, read with other letters from now on


def test_a_stream_read_from_two_threads_reads_every_frame(reader: Reader) -> None:
    """Frames read two at once (``handreader webcam --ahead 2``) share one memory."""
    stream = reader.for_stream()
    clip = _clip(12, seed=3)
    with ThreadPoolExecutor(max_workers=2) as pool:
        readings = list(pool.map(stream.read, clip))
    assert len(readings) == len(clip)
    for reading in readings:  # the four whole cards (the king's index is cut by the edge)
        certain = {card.code for card in reading.cards if not card.uncertain}
        assert {"2D", "JD", "3D", "JC"} <= certain
