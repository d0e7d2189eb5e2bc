"""Reduced-scale decoding (vision/imageio.py ``decode_reduced``) and mapping readings back.

Expectations come from the module's contract (the largest reduction of 2, 4 or 8 whose long side
stays at least ``min_long_side``; sides of ``ceil(side / factor)``, libjpeg's rounding; every
check of ``decode_image`` kept; boxes back in the photo's own pixels), from the reader's settings
(``tile_above_px`` 1,400: a larger image is shrunk to it and read in tiles, so the default keeps
the long side at 1,401 or more) and from Pillow's ``ImageOps.exif_transpose`` for orientation.
"""

from __future__ import annotations

import io
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from PIL import Image

from vision.detections import CardReading, Reading, ReadingFlag
from vision.imageio import (
    CorruptImageError,
    EmptyImageError,
    ImageError,
    ImageFileError,
    ImageTooLargeError,
    ImageTooSmallError,
    ReducedImage,
    TooManyPixelsError,
    UnsupportedImageTypeError,
    decode_image,
    decode_reduced,
    load_image,
    load_reduced,
    reader_long_side,
    reduction_factor,
)
from vision.index_detector import box_iou
from vision.reader import ReaderSettings


def _smooth(width: int, height: int, seed: int = 0) -> NDArray[np.uint8]:
    """A BGR picture with large-scale structure (an upscaled random grid): encodes small."""
    rng = np.random.default_rng(seed)
    grid = rng.integers(0, 256, (12, 16, 3), dtype=np.uint8)
    return np.asarray(cv2.resize(grid, (width, height), interpolation=cv2.INTER_LINEAR))


def _jpeg(image: NDArray[np.uint8], quality: int = 90) -> bytes:
    ok, buffer = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    return buffer.tobytes()


@pytest.fixture(scope="module")
def twelve_mp() -> bytes:
    """A 4000 x 3000 JPEG, the size of the product's 12 MP photo."""
    return _jpeg(_smooth(4000, 3000))


# --- the reduction factor --------------------------------------------------------------------


# fmt: off
FACTORS = [
    # (width, height, min_long_side, min_side, factor): ceil(long / f) >= min_long_side and
    # ceil(short / f) >= min_side for the largest f of 8, 4, 2, else 1
    (4000, 3000, 1401, 32, 2),     # 2000 >= 1401; 1000 is not
    (3000, 4000, 1401, 32, 2),     # portrait alike
    (12000, 9000, 1401, 32, 8),    # 1500
    (6000, 4000, 1401, 32, 4),     # 1500; 750 at 8 is not
    (2802, 1000, 1401, 32, 2),     # exactly 1401
    (2801, 1000, 1401, 32, 2),     # ceil(1400.5) = 1401
    (2800, 2100, 1401, 32, 1),     # 1400 would be read whole only, not in tiles
    (1400, 1050, 1401, 32, 1),     # small already
    (20000, 100, 1401, 32, 2),     # 2500 at 8, but the short side 13 (8) and 25 (4) < 32
    (4000, 3000, 1000, 32, 4),     # 1000 >= 1000
    (4000, 3000, 1, 32, 8),        # as small as the decoder goes
    (1001, 803, 100, 32, 8),       # ceil(125.125) = 126, ceil(100.375) = 101
]
# fmt: on


@pytest.mark.parametrize(("width", "height", "floor", "min_side", "factor"), FACTORS)
def test_reduction_factor_table(
    width: int, height: int, floor: int, min_side: int, factor: int
) -> None:
    assert reduction_factor(width, height, floor, min_side) == factor


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 30000), st.integers(1, 30000), st.integers(1, 5000))
def test_reduction_factor_is_the_largest_that_keeps_the_floor(
    width: int, height: int, floor: int
) -> None:
    factor = reduction_factor(width, height, floor, 32)
    assert factor in (1, 2, 4, 8)

    def fits(f: int) -> bool:
        return -(-max(width, height) // f) >= floor and -(-min(width, height) // f) >= 32

    assert factor == 1 or fits(factor)  # never below the floor
    assert all(not fits(larger) for larger in (2, 4, 8) if larger > factor)  # the largest


def test_reduction_factor_refuses_a_floor_under_one_pixel() -> None:
    with pytest.raises(ValueError, match="got 0"):
        reduction_factor(4000, 3000, 0)


def test_default_floor_is_just_over_the_readers_tile_size() -> None:
    # ReaderSettings.tile_above_px: images with a longer side above it are read in tiles too.
    assert reader_long_side() == ReaderSettings().tile_above_px + 1 == 1401


# --- decoding ---------------------------------------------------------------------------------


def test_twelve_megapixel_jpeg_decodes_at_half_size(twelve_mp: bytes) -> None:
    reduced = decode_reduced(twelve_mp)
    assert (reduced.factor, reduced.size_wh, reduced.offset_xy) == (2, (4000, 3000), (0, 0))
    assert reduced.image.shape == (1500, 2000, 3) and reduced.image.dtype == np.uint8
    # the same picture as the full decode shrunk by area averaging
    full = decode_image(twelve_mp)
    assert full.shape == (3000, 4000, 3)  # decode_image itself is unchanged
    shrunk = cv2.resize(full, (2000, 1500), interpolation=cv2.INTER_AREA)
    assert np.abs(reduced.image.astype(int) - shrunk).mean() < 2.0


@pytest.mark.parametrize(("floor", "factor"), [(1401, 2), (1000, 4), (500, 8), (2001, 1)])
def test_floor_chooses_the_factor(twelve_mp: bytes, floor: int, factor: int) -> None:
    reduced = decode_reduced(twelve_mp, min_long_side=floor)
    assert reduced.factor == factor
    assert reduced.image.shape == (-(-3000 // factor), -(-4000 // factor), 3)
    assert max(reduced.image.shape[:2]) >= floor


def test_odd_sides_round_up() -> None:
    # libjpeg gives ceil(side / f): 1001 x 803 by 8 is 126 x 101 (the size check accepts it)
    reduced = decode_reduced(_jpeg(_smooth(1001, 803)), min_long_side=100)
    assert reduced.factor == 8 and reduced.image.shape == (101, 126, 3)
    assert reduced.size_wh == (1001, 803)


@pytest.mark.parametrize(
    ("extension", "options"),
    [(".png", []), (".bmp", []), (".webp", [cv2.IMWRITE_WEBP_QUALITY, 101])],  # 101: lossless
)
def test_other_formats_decode_whole(extension: str, options: list[int]) -> None:
    # Only JPEG has a cheap reduced decode: others are decoded whole, factor 1, the same array.
    image = _smooth(900, 600)
    data = cv2.imencode(extension, image, options)[1].tobytes()
    reduced = decode_reduced(data, min_long_side=100)
    assert (reduced.factor, reduced.size_wh, reduced.offset_xy) == (1, (900, 600), (0, 0))
    assert np.array_equal(reduced.image, decode_image(data))
    assert reduced.full_size() is reduced.image
    # the same picture as a JPEG is reduced (so the factor 1 above is the format's doing)
    assert decode_reduced(_jpeg(image), min_long_side=100).factor == 8


def _bright_centre(image: NDArray[np.uint8]) -> NDArray[np.float64]:
    """(x, y) centroid of the bright pixels, in pixel-index units."""
    weight = image.astype(np.float64).mean(axis=2)
    weight = np.where(weight > 128, weight, 0.0)
    rows, columns = np.indices(weight.shape)
    total = weight.sum()
    return np.array([(columns * weight).sum() / total, (rows * weight).sum() / total])


@pytest.mark.parametrize("orientation", range(1, 9))
def test_orientation_is_applied_and_points_map_back(orientation: int) -> None:
    # Stored 1001 x 803 reduced by 8: the last block column overhangs the photo by 7 px and the
    # last row by 5 px. Once a mirror or turn puts that overhang on the left or top, mapping
    # back needs offset_xy; without it the square lands up to 7 px off.
    stored = np.zeros((803, 1001, 3), np.uint8)
    stored[301:365, 613:677] = 255  # a white square, not on the 8-px block grid
    exif = Image.Exif()
    exif[0x0112] = orientation
    buffer = io.BytesIO()
    Image.fromarray(stored[:, :, ::-1]).save(buffer, "JPEG", quality=95, exif=exif)
    data = buffer.getvalue()

    full = decode_image(data)  # upright (tested against Pillow in test_imageio.py)
    reduced = decode_reduced(data, min_long_side=100)
    assert reduced.factor == 8
    assert reduced.size_wh == (full.shape[1], full.shape[0])
    assert reduced.image.shape[:2] == (-(-full.shape[0] // 8), -(-full.shape[1] // 8))
    # the reduced pixel i covers [8 i, 8 (i + 1)) of the upright photo, shifted by offset_xy
    centre = _bright_centre(reduced.image)
    mapped = 8 * (centre + 0.5) - np.array(reduced.offset_xy) - 0.5
    assert np.abs(mapped - _bright_centre(full)).max() < 1.5
    # full_size() is aligned with the photo: the square is where it is in the full decode
    enlarged = reduced.full_size()
    assert enlarged.shape == full.shape
    assert np.abs(_bright_centre(enlarged) - _bright_centre(full)).max() < 1.5


# --- errors are those of decode_image -----------------------------------------------------------


def _png_bomb() -> bytes:
    import struct
    import zlib

    def chunk(name: bytes, body: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(name + body))
        return struct.pack(">I", len(body)) + name + body + crc

    header = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IEND", b"")


def _cut(data: bytes, fraction: float) -> bytes:
    return data[: int(len(data) * fraction)]


_BIG = _jpeg(_smooth(3000, 2000))

# fmt: off
REFUSALS = [
    # (case, data, keyword arguments, error, words in the message)
    ("empty", b"", {}, EmptyImageError, "0 bytes"),
    ("over the byte limit", _BIG, {"max_bytes": 1000}, ImageTooLargeError, "over the limit"),
    ("over the pixel limit, by the header", _BIG, {"max_pixels": 5_000_000}, TooManyPixelsError,
     "3000x2000 = 6,000,000 pixels"),
    ("png bomb", _png_bomb(), {}, TooManyPixelsError, "100000x100000"),
    ("text", b"not an image at all", {}, UnsupportedImageTypeError, "not a supported image"),
    ("big jpeg cut at 50%", _cut(_BIG, 0.5), {}, CorruptImageError, "truncated JPEG"),
    ("big jpeg cut at 99%", _cut(_BIG, 0.99), {}, CorruptImageError, "end-of-image"),
    ("too small", _jpeg(np.zeros((20, 500, 3), np.uint8)), {}, ImageTooSmallError, "500x20"),
]
# fmt: on


@pytest.mark.parametrize(
    ("case", "data", "options", "error", "words"), REFUSALS, ids=[r[0] for r in REFUSALS]
)
def test_refusals_are_unchanged(
    case: str, data: bytes, options: dict[str, int], error: type[ImageError], words: str
) -> None:
    with pytest.raises(error, match=words) as reduced_error:
        decode_reduced(data, **options)
    with pytest.raises(error) as full_error:
        decode_image(data, **options)
    assert str(reduced_error.value) == str(full_error.value)
    assert reduced_error.value.code == full_error.value.code


def test_decoded_size_is_checked_against_the_reduced_header(
    twelve_mp: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A decoder result of another size than ceil(header / factor) is a corrupt image.
    monkeypatch.setattr(cv2, "imdecode", lambda *_: np.zeros((10, 10, 3), np.uint8))
    words = r"4000x3000 \(reduced by 2\), data decodes to 10x10"
    with pytest.raises(CorruptImageError, match=words):
        decode_reduced(twelve_mp)


@settings(max_examples=150, deadline=None)
@given(st.floats(0, 1), st.integers(0, 255), st.integers(0, 10**6))
def test_damaged_reduced_jpeg_decodes_or_raises_an_image_error(
    fraction: float, byte: int, position: int
) -> None:
    valid = _jpeg(_smooth(300, 200))
    data = bytearray(valid[: max(1, int(len(valid) * fraction))])
    data[position % len(data)] = byte
    try:
        reduced = decode_reduced(bytes(data), min_long_side=40)
    except ImageError:
        return
    assert reduced.image.ndim == 3 and reduced.image.shape[2] == 3


def test_load_reduced_reads_a_file_and_names_it_in_errors(tmp_path: Path) -> None:
    path = tmp_path / "table.jpg"
    path.write_bytes(_jpeg(_smooth(3000, 2000)))
    reduced = load_reduced(path)
    assert (reduced.factor, reduced.size_wh, reduced.image.shape) == (
        2,
        (3000, 2000),
        (1000, 1500, 3),
    )
    with pytest.raises(ImageTooLargeError, match=r"table\.jpg"):
        load_reduced(path, max_bytes=100)
    with pytest.raises(ImageFileError, match=r"missing\.jpg.*cannot read"):
        load_reduced(tmp_path / "missing.jpg")
    (tmp_path / "bad.jpg").write_bytes(b"\xff\xd8\xff")
    with pytest.raises(CorruptImageError, match=r"bad\.jpg"):
        load_reduced(tmp_path / "bad.jpg")


# --- readings back in the photo's pixels -----------------------------------------------------


def _reading() -> Reading:
    cards = (
        CardReading("10H", 0.97, (10.0, 20.0, 30.0, 50.0), corners=2, index_px=30.0,
                    alternatives=(("10D", 0.02),)),
        CardReading("QS", 0.5, (1990.0, 1400.0, 2000.0, 1500.0), uncertain=True, index_px=100.0),
    )  # fmt: skip
    return Reading((2000, 1500), cards, ReadingFlag.LOW_CONFIDENCE, {"total": 12.5})


def test_reading_scaled_maps_boxes_and_sizes() -> None:
    scaled = _reading().scaled(2, (3999, 2999), (1, 0))
    assert scaled.size_wh == (3999, 2999)
    first, second = scaled.cards
    assert first.box_xyxy == (19.0, 40.0, 59.0, 100.0)  # 2 x - 1, 2 y
    assert first.index_px == 60.0
    assert (first.code, first.confidence, first.corners, first.alternatives) == (
        "10H", 0.97, 2, (("10D", 0.02),)
    )  # fmt: skip
    assert second.box_xyxy == (3979.0, 2800.0, 3999.0, 2999.0)  # clipped to the photo
    assert second.uncertain and second.index_px == 200.0
    assert scaled.flags == ReadingFlag.LOW_CONFIDENCE
    assert scaled.timings_ms == {"total": 12.5}


@pytest.mark.parametrize(
    ("factor", "size", "words"),
    [(0, (10, 10), "factor must be positive"), (2, (0, 10), "size_wh must be positive")],
)
def test_reading_scaled_refuses_bad_arguments(
    factor: float, size: tuple[int, int], words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        _reading().scaled(factor, size)


def test_to_original_uses_the_reduction() -> None:
    image = np.zeros((1500, 2000, 3), np.uint8)
    reading = _reading()
    assert ReducedImage(image, 1, (2000, 1500)).to_original(reading) is reading
    back = ReducedImage(image, 2, (4000, 3000)).to_original(reading)
    assert back.size_wh == (4000, 3000)
    assert back.cards[0].box_xyxy == (20.0, 40.0, 60.0, 100.0)


@pytest.mark.slow
def test_real_reader_sees_the_same_in_the_reduced_photo() -> None:
    # The reader shrinks a 12 MP photo to 1,400 px before detecting, so the half-size decode
    # must give the same detections, the same confident classes and the same sure cards (a
    # crop the classifier is unsure of may tip either way: its pixels differ by a few levels).
    from vision.reader import Reader, ReaderSettings

    example = load_image(Path(__file__).resolve().parents[2] / "examples" / "hand.jpg")
    big = np.asarray(cv2.resize(example, (4000, 3000), interpolation=cv2.INTER_CUBIC), np.uint8)
    data = _jpeg(big, 92)
    reader = Reader.load()
    full_image, reduced = decode_image(data), decode_reduced(data)
    assert reduced.factor == 2

    full_boxes = reader.detect(full_image)
    reduced_boxes = reader.detect(reduced.image).xyxy * 2
    strong = full_boxes.xyxy[full_boxes.confidence >= 0.5]
    assert len(strong) >= 7  # the example shows seven cards, most with two indices
    for box in strong:
        overlap = box_iou(box, reduced_boxes)
        assert overlap.max() > 0.9, (box, reduced_boxes[overlap.argmax()])

    full_probabilities, _ = reader.classify(full_image, strong)
    reduced_probabilities, _ = reader.classify(reduced.image, strong / np.float32(2))
    sure = full_probabilities[:, :-1].max(axis=1) >= 0.8
    assert sure.sum() >= 7
    assert np.array_equal(
        full_probabilities[sure].argmax(axis=1), reduced_probabilities[sure].argmax(axis=1)
    )
    # crops read at 0.9 or more at a first look barely move (those nearer the doubt may move
    # more, see above; and a crop on either side of the reader's retry threshold, 0.9, is read
    # again in one image and not in the other, so this compares first looks)
    first_look = reader.with_settings(ReaderSettings(turns=1, retry_contexts=()))
    full_first, _ = first_look.classify(full_image, strong)
    reduced_first, _ = first_look.classify(reduced.image, strong / np.float32(2))
    steady = full_first[:, :-1].max(axis=1) >= 0.9
    assert steady.sum() >= 5
    assert np.abs(full_first[steady] - reduced_first[steady]).max() < 0.1

    full = reader.read(full_image)
    mapped = reduced.to_original(reader.read(reduced.image))
    assert mapped.size_wh == full.size_wh == (4000, 3000)
    for card in full.cards:
        if card.confidence >= 0.95:
            same = [other for other in mapped.certain if other.code == card.code]
            assert same, card.code
            shift = min(np.abs(np.subtract(o.box_xyxy, card.box_xyxy)).max() for o in same)
            assert shift < 12, (card.code, shift)  # 0.3% of 4000 px
