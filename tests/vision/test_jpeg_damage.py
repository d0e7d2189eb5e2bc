"""A JPEG whose image data is damaged or cut short is refused as corrupt, not read half grey.

libjpeg only warns (``Corrupt JPEG data: premature end of data segment``) and paints the blocks
it has no data for in flat grey; ``vision.jpegdata`` tells it from the markers in the scan data
and from that grey (module docstring). The photo is a seeded picture of smooth ramps with a
little noise (no block is flat), encoded by OpenCV at quality 90, 4:2:0, optionally with a
restart marker every ``RST`` MCUs.

Flipped bytes that make the decoder stop early instead (libjpeg's "N extraneous bytes before
marker") leave no trace in the image that is cheap to see: they are read as they decode.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from vision.imageio import CorruptImageError, decode_image, decode_reduced, probe_image
from vision.jpegdata import ends_in_missing_blocks

RST = 4
"""The restart interval (in MCUs) of the JPEGs with restart markers."""


def _photo(height: int = 480, width: int = 640, seed: int = 7) -> NDArray[np.uint8]:
    """Smooth colour ramps with a little sensor-like noise (sigma 3), as a photo's table."""
    rng = np.random.default_rng(seed)
    rows, columns = np.mgrid[0:height, 0:width].astype(np.float32)
    ramps = np.stack([columns * 0.3 + 40, rows * 0.3 + 60, (columns + rows) * 0.15 + 50], -1)
    return np.clip(ramps + rng.normal(0, 3, (height, width, 3)), 0, 255).astype(np.uint8)


def _jpeg(image: NDArray[np.uint8], *params: int) -> bytes:
    ok, buffer = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90, *params])
    assert ok
    return buffer.tobytes()


def _scan_start(data: bytes) -> int:
    sos = data.index(b"\xff\xda")
    return sos + 2 + int.from_bytes(data[sos + 2 : sos + 4], "big")


def _cut_with_end(data: bytes, fraction: float) -> bytes:
    """The first ``fraction`` of the scan data, then an end-of-image marker (as a client that
    gives up mid-upload and closes the file writes it)."""
    start = _scan_start(data)
    cut = start + int((len(data) - start) * fraction)
    if data[cut - 1] == 0xFF:
        cut -= 1
    return data[:cut] + b"\xff\xd9"


def _flipped(data: bytes, count: int, seed: int) -> bytes:
    """``count`` bytes in the middle third of the scan data set to random values (no 0xFF, so
    no marker is made: the damage is in the entropy-coded bits alone)."""
    rng = np.random.default_rng(seed)
    start = _scan_start(data)
    third = (len(data) - start) // 3
    damaged = bytearray(data)
    for at in rng.integers(start + third, start + 2 * third, count):
        if damaged[at - 1] != 0xFF and damaged[at] != 0xFF:
            damaged[at] = int(rng.integers(0, 255))
    return bytes(damaged)


@pytest.mark.parametrize("fraction", [0.3, 0.5, 0.9, 0.99])
@pytest.mark.parametrize("min_long_side", [None, 600, 300, 150, 80])  # factors 1, 1, 2, 4, 8
def test_a_jpeg_cut_short_before_its_end_marker_is_corrupt(
    fraction: float, min_long_side: int | None
) -> None:
    data = _cut_with_end(_jpeg(_photo()), fraction)
    with pytest.raises(CorruptImageError, match="flat grey") as raised:
        if min_long_side is None:
            decode_image(data)
        else:
            decode_reduced(data, min_long_side=min_long_side)
    assert raised.value.code == "corrupt"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_flipped_bytes_that_run_the_decoder_out_of_data_are_corrupt(seed: int) -> None:
    # 20 changed bytes make libjpeg run out of data before the last blocks ("premature end of
    # data segment") for 37 of seeds 0 to 39; for 3 too few blocks are left grey to be told
    with pytest.raises(CorruptImageError, match="flat grey"):
        decode_image(_flipped(_jpeg(_photo()), 20, seed))


def test_a_stray_marker_in_the_scan_data_is_corrupt() -> None:
    data = _jpeg(_photo())
    at = _scan_start(data) + 5000
    damaged = data[:at] + b"\xff\xad" + data[at + 2 :]
    with pytest.raises(CorruptImageError, match=r"marker 0xFFAD inside the image data"):
        decode_image(damaged)


def _restart_markers(data: bytes) -> list[int]:
    return [at for at in range(len(data) - 1) if data[at] == 0xFF and 0xD0 <= data[at + 1] <= 0xD7]


def test_a_missing_restart_interval_is_corrupt() -> None:
    data = _jpeg(_photo(), cv2.IMWRITE_JPEG_RST_INTERVAL, RST)
    markers = _restart_markers(data)
    assert len(markers) > 100
    damaged = data[: markers[10]] + data[markers[11] :]  # one interval (and its marker) gone
    with pytest.raises(CorruptImageError, match=r"restart marker 3 at byte .* where 2 was due"):
        probe_image(damaged)


def test_a_jpeg_cut_at_a_restart_marker_is_corrupt() -> None:
    # the decoder would fill the rest in grey; the count of restart markers says so first
    data = _jpeg(_photo(), cv2.IMWRITE_JPEG_RST_INTERVAL, RST)
    markers = _restart_markers(data)
    damaged = data[: markers[len(markers) // 2]] + b"\xff\xd9"
    with pytest.raises(CorruptImageError, match="ends after 150 of its 300 restart intervals"):
        decode_image(damaged)  # 640 x 480 in 16 x 16 MCUs: 40 x 30 = 1,200, 4 an interval


@pytest.mark.parametrize(
    "params",
    [
        (),
        (cv2.IMWRITE_JPEG_RST_INTERVAL, RST),
        (cv2.IMWRITE_JPEG_PROGRESSIVE, 1),
        (cv2.IMWRITE_JPEG_PROGRESSIVE, 1, cv2.IMWRITE_JPEG_RST_INTERVAL, RST),
        (cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444),
    ],
)
@pytest.mark.parametrize("grey", [False, True])
def test_whole_jpegs_are_read(params: tuple[int, ...], grey: bool) -> None:
    image = _photo(483, 645)  # sides that are no multiple of a block
    if grey:
        image = np.ascontiguousarray(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY))
    data = _jpeg(image, *params)
    probe_image(data)
    assert decode_image(data).shape == (483, 645, 3)
    assert decode_reduced(data, min_long_side=80).factor == 8


def test_the_grey_of_missing_blocks_is_exact() -> None:
    # a photo's mid-grey corner has noise: only the exact value of a block without data counts
    image = np.zeros((64, 64, 3), np.uint8)
    image[-8:, -8:] = 128
    code = bytes(range(40))  # the code before the end marker: no repeating pattern
    assert ends_in_missing_blocks(image, 1, code)
    assert not ends_in_missing_blocks(image, 1, b"\x28\xa2\x8a\x00" * 10)  # flat blocks' code
    image[-1, -1, 0] = 129
    assert not ends_in_missing_blocks(image, 1, code)
    grey = np.zeros((16, 64), np.uint8)  # one channel at an eighth: a 1-pixel MCU each
    grey[-2, -8:], grey[-1] = 128, 128  # (a 2 x 2 corner at least)
    assert ends_in_missing_blocks(grey, 8, code)


def test_the_grey_of_missing_blocks_has_their_shape() -> None:
    # data cut short at an MCU leaves it and every MCU after it grey, in decoding order: the
    # rest of its row of MCUs and all rows below (8 x 8 MCUs here, 8 x 8 blocks)
    code = bytes(range(40))
    image = np.zeros((64, 64, 3), np.uint8)
    image[-8:, 40:] = 128  # the last 3 MCUs
    assert ends_in_missing_blocks(image, 1, code)
    assert not ends_in_missing_blocks(image, 1, code, max_missing=2)  # (restart interval 3)
    image[-1, 37:40] = 128  # the MCU where the data ran out ends in 3 pixels of that grey
    assert ends_in_missing_blocks(image, 1, code)
    image[-1, 35:37] = 128  # 5 pixels: more than half an MCU before the grid
    assert not ends_in_missing_blocks(image, 1, code)
    image[-1, 35:40] = 0
    image[-16:-8, 16:] = 128  # and the last 6 of the row above: the bottom row is not grey across
    assert not ends_in_missing_blocks(image, 1, code)
    image[-8:] = 128  # ... now it is: cut after the second MCU of the row above
    assert ends_in_missing_blocks(image, 1, code)
    assert not ends_in_missing_blocks(image, 1, code, max_missing=8)  # 14 missing
    image[:] = 0
    image[-5:, -8:] = 128  # 5 rows: an edge off the grid of MCUs
    assert not ends_in_missing_blocks(image, 1, code)
    image[:, -8:] = 128  # a band down the right edge
    assert not ends_in_missing_blocks(image, 1, code)


def _grey_background(*params: int) -> bytes:
    """Mid-grey (128) everywhere but a photo in the top-left quarter: a drawing or a scan."""
    image = np.full((480, 640, 3), 128, np.uint8)
    image[:240, :320] = _photo()[:240, :320]
    return _jpeg(image, *params)


def _with_grey(right: int = 0, bottom: int = 0) -> bytes:
    """The photo with its last ``right`` columns and ``bottom`` rows (a corner when both are
    given: those columns of those rows) exactly (128, 128, 128)."""
    image = _photo()
    image[-bottom if bottom else 0 :, -right if right else 0 :] = 128
    return _jpeg(image)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(_grey_background(), id="grey background"),
        pytest.param(_grey_background(cv2.IMWRITE_JPEG_RST_INTERVAL, 1), id="grey, RST 1"),
        pytest.param(_grey_background(cv2.IMWRITE_JPEG_RST_INTERVAL, RST), id="grey, RST 4"),
        pytest.param(_with_grey(right=40), id="band down the right edge, 40 px"),
        pytest.param(_with_grey(right=32, bottom=32), id="corner, 32 px"),
        pytest.param(_with_grey(right=100, bottom=20), id="corner, 100 x 20 px"),
        pytest.param(_with_grey(bottom=10), id="band along the bottom, 10 px"),
    ],
)
@pytest.mark.parametrize("min_long_side", [None, 300, 80])  # factors 1, 2, 8
def test_whole_jpegs_with_grey_corners_or_bands_are_read(
    data: bytes, min_long_side: int | None
) -> None:
    if min_long_side is None:
        assert decode_image(data).shape == (480, 640, 3)
    else:
        assert decode_reduced(data, min_long_side=min_long_side).image.shape[1] > 0


def test_a_jpeg_cut_in_its_last_restart_interval_is_corrupt() -> None:
    # the restart markers are all there; the MCUs of the last interval after the cut are grey
    data = _jpeg(_photo(), cv2.IMWRITE_JPEG_RST_INTERVAL, 16)
    last = _restart_markers(data)[-1]
    damaged = data[: last + (len(data) - last) // 3] + b"\xff\xd9"
    with pytest.raises(CorruptImageError, match="flat grey"):
        decode_image(damaged)


@pytest.mark.parametrize("interval", [3, 4])
@pytest.mark.parametrize("min_long_side", [None, 300, 150, 80])  # factors 1, 2, 4, 8
def test_a_jpeg_cut_at_its_last_restart_marker_is_corrupt(
    interval: int, min_long_side: int | None
) -> None:
    # every restart marker is there; the whole last interval is missing (1,200 MCUs: its 3 or
    # 4), its first MCU decoded from the zero bits the decoder pads with, near grey
    data = _jpeg(_photo(), cv2.IMWRITE_JPEG_RST_INTERVAL, interval)
    damaged = data[: _restart_markers(data)[-1] + 2] + b"\xff\xd9"
    with pytest.raises(CorruptImageError, match="flat grey"):
        if min_long_side is None:
            decode_image(damaged)
        else:
            decode_reduced(damaged, min_long_side=min_long_side)


def test_a_frame_header_shorter_than_its_components_is_corrupt() -> None:
    # a frame header of 8 bytes announcing 3 components (9 bytes each short of theirs)
    data = _jpeg(_photo(64, 64))
    sof = data.index(b"\xff\xc0")
    end = sof + 2 + int.from_bytes(data[sof + 2 : sof + 4], "big")
    damaged = data[:sof] + b"\xff\xc0\x00\x08" + data[sof + 4 : sof + 10] + data[end:]
    with pytest.raises(CorruptImageError):
        decode_image(damaged)


@pytest.mark.parametrize(
    "sampling", [(), (cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444)]
)
@pytest.mark.parametrize("progressive", [0, 1])
def test_flat_mid_grey_areas_are_read(sampling: tuple[int, ...], progressive: int) -> None:
    # a drawing that is mid-grey everywhere, or over its lower half (more than eight MCUs of
    # flat code before the end marker), is no damage: its code repeats, or its first scan
    # (progressive) sets every block's level
    flat = np.full((480, 640, 3), 128, np.uint8)
    lower = _photo()
    lower[240:] = 128
    for image in (flat, lower):
        data = _jpeg(image, cv2.IMWRITE_JPEG_PROGRESSIVE, progressive, *sampling)
        assert decode_image(data).shape == (480, 640, 3)
        assert decode_reduced(data, min_long_side=80).factor == 8
