"""The decoded-size limit and the decoding memory estimate (vision/imagelimits.py, the layout
that vision/imageheader.py reads from each header).

Expectations come from the format specifications (PNG IHDR bit depth and colour type, JPEG SOF
precision and components, BMP bits per pixel, TIFF BitsPerSample and SamplesPerPixel, the WebP
VP8L and VP8X alpha flags) and from the decoder itself: the array OpenCV returns for the stored
image must never be larger than the header's ``decoded_bytes``.
"""

from __future__ import annotations

import io
import tracemalloc
from dataclasses import replace

import cv2
import numpy as np
import pytest
from image_bombs import png_header_only
from numpy.typing import NDArray
from PIL import Image

from vision.imageio import TooManyPixelsError, decode_image, decode_reduced, probe_image
from vision.imagelimits import (
    DEFAULT_MAX_DECODED_BYTES,
    DEFAULT_MAX_PIXELS,
    MAX_SIDE,
    STRIP_BYTES,
    check_limits,
    decode_peak_bytes,
)


def _pillow(image: Image.Image, fmt: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


def _cv(array: NDArray[np.generic], extension: str) -> bytes:
    ok, buffer = cv2.imencode(extension, array)
    assert ok
    return buffer.tobytes()


_GREY8 = np.full((40, 48), 100, np.uint8)
_BGR8 = np.full((40, 48, 3), 100, np.uint8)
_BGRA8 = np.full((40, 48, 4), 100, np.uint8)
_BGR16 = np.full((40, 48, 3), 30000, np.uint16)
_BGRA16 = np.full((40, 48, 4), 30000, np.uint16)
_PALETTE = Image.new("P", (48, 40))

LAYOUTS = [
    # (what, encoded bytes, channels, bytes per sample): the header's answer
    ("PNG grey 8", _cv(_GREY8, ".png"), 1, 1),
    ("PNG RGB 8", _cv(_BGR8, ".png"), 3, 1),
    ("PNG RGBA 8", _cv(_BGRA8, ".png"), 4, 1),
    ("PNG RGB 16", _cv(_BGR16, ".png"), 3, 2),
    ("PNG RGBA 16", _cv(_BGRA16, ".png"), 4, 2),
    ("PNG palette", _pillow(_PALETTE, "PNG"), 3, 1),
    ("PNG palette, transparent", _pillow(_PALETTE, "PNG", transparency=0), 4, 1),
    ("PNG grey and alpha", _pillow(Image.new("LA", (48, 40)), "PNG"), 4, 1),
    ("JPEG grey", _cv(_GREY8, ".jpg"), 1, 1),
    ("JPEG colour", _cv(_BGR8, ".jpg"), 3, 1),
    ("JPEG CMYK", _pillow(Image.new("CMYK", (48, 40)), "JPEG"), 3, 1),
    ("BMP 24", _cv(_BGR8, ".bmp"), 3, 1),
    ("BMP 32", _pillow(Image.new("RGBA", (48, 40)), "BMP"), 4, 1),
    ("TIFF RGB 8", _cv(_BGR8, ".tif"), 4, 1),
    ("TIFF RGBA 16", _cv(_BGRA16, ".tif"), 4, 2),
    ("TIFF grey 8", _cv(_GREY8, ".tif"), 1, 1),
    ("WebP lossy", _pillow(Image.new("RGB", (48, 40)), "WEBP"), 3, 1),
    ("WebP lossless alpha", _pillow(Image.new("RGBA", (48, 40)), "WEBP", lossless=True), 4, 1),
    ("GIF", _pillow(Image.new("P", (48, 40)), "GIF"), 4, 1),
]


@pytest.mark.parametrize(("what", "data", "channels", "sample_bytes"), LAYOUTS)
def test_the_header_gives_the_decoded_layout(
    what: str, data: bytes, channels: int, sample_bytes: int
) -> None:
    info = probe_image(data)
    assert (info.channels, info.sample_bytes) == (channels, sample_bytes), what
    assert info.decoded_bytes == 48 * 40 * channels * sample_bytes


@pytest.mark.parametrize(("what", "data", "channels", "sample_bytes"), LAYOUTS)
def test_the_decoded_array_is_never_larger_than_the_header_says(
    what: str, data: bytes, channels: int, sample_bytes: int
) -> None:
    decoded = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    assert decoded is not None, what
    assert decoded.nbytes <= probe_image(data).decoded_bytes, what


def test_a_16_bit_rgba_bomb_under_the_pixel_limit_is_refused_by_its_decoded_bytes() -> None:
    # 7000 x 7000 = 49 megapixels, under the 50-megapixel limit, but 392,000,000 bytes decoded
    bomb = png_header_only(7000, 7000, 16, 6)
    assert DEFAULT_MAX_PIXELS >= 7000 * 7000  # (under the pixel limit)
    with pytest.raises(TooManyPixelsError) as refused:
        decode_image(bomb)
    message = str(refused.value)
    assert "392,000,000 bytes" in message and f"{DEFAULT_MAX_DECODED_BYTES:,}" in message
    assert "4 channels of 16 bits" in message
    with pytest.raises(TooManyPixelsError):
        decode_reduced(bomb)


@pytest.mark.parametrize(("width", "height"), [(1_500_000, 32), (32, 1_000_001)])
def test_a_strip_longer_than_the_decoders_take_is_refused_by_its_side(
    width: int, height: int
) -> None:
    strip = png_header_only(width, height, 8, 0)
    assert width * height < DEFAULT_MAX_PIXELS  # (under the pixel limit)
    with pytest.raises(TooManyPixelsError, match=f"PNG of {width}x{height} pixels: a side over"):
        check_limits(strip)
    check_limits(_pillow(Image.new("L", (MAX_SIDE, 32)), "PNG"))  # the longest side taken


def test_the_decoded_limit_counts_depth_and_channels() -> None:
    # the same 3000 x 3000 image: 9 MB as 8-bit grey, 72 MB as 16-bit RGBA
    assert check_limits(png_header_only(3000, 3000, 8, 0), max_decoded_bytes=9_000_000)
    with pytest.raises(TooManyPixelsError):
        check_limits(png_header_only(3000, 3000, 16, 6), max_decoded_bytes=71_999_999)
    assert check_limits(png_header_only(3000, 3000, 16, 6), max_decoded_bytes=72_000_000)


def test_normalising_a_16_bit_rgba_image_stays_within_the_estimate() -> None:
    # what NumPy allocates while decoding (the decoder's array, the normalised copy, the
    # strips): under decode_peak_bytes; converting the whole array at once in 32-bit and
    # float types took four times the estimate
    image = np.zeros((1500, 1500, 4), np.uint16)
    image[..., 3] = 40000
    image[::5, ::3, :3] = 60000
    data = _cv(image, ".png")
    del image
    info = probe_image(data)
    tracemalloc.start()
    try:
        decoded = decode_image(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert decoded.shape == (1500, 1500, 3)
    assert peak <= decode_peak_bytes(info), (peak, decode_peak_bytes(info))


def test_strip_by_strip_normalisation_gives_the_whole_array_rules() -> None:
    # round(v / 257) for 16-bit samples, alpha composited on white (the module's rules),
    # checked on an image taller than one strip
    rng = np.random.default_rng(7)
    image = rng.integers(0, 65536, (1200, 700, 4), dtype=np.uint16)
    decoded = decode_image(_cv(image, ".png"))
    colour = np.floor((image[..., :3].astype(np.float64) + 128) / 257)
    alpha = np.floor((image[..., 3:].astype(np.float64) + 128) / 257) / 255
    expected = np.floor(colour * alpha + 255 * (1 - alpha) + 0.5)
    assert np.abs(decoded.astype(np.int64) - expected.astype(np.int64)).max() <= 1


def test_a_reduced_jpeg_costs_its_reduced_size() -> None:
    # a quarter of each side: a sixteenth of the pixels (both sides are multiples of 4)
    info = probe_image(_cv(np.zeros((4000, 3000, 3), np.uint8), ".jpg"))
    full, reduced = (decode_peak_bytes(info, factor) - STRIP_BYTES for factor in (1, 4))
    assert reduced * 16 == full


def _progressive_jpeg(width: int = 640, height: int = 480, subsampling: int = 2) -> bytes:
    import io

    from PIL import Image, ImageFile

    ImageFile.MAXBLOCK = max(ImageFile.MAXBLOCK, width * height * 3)  # progressive: one block
    rng = np.random.default_rng(3)
    image = Image.fromarray(rng.integers(0, 255, (height, width, 3), dtype=np.uint8))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=85, progressive=True, subsampling=subsampling)
    return out.getvalue()


def _with_extra_scans(data: bytes, count: int) -> bytes:
    """``data`` with ``count`` more (empty, refinement) scans before its end-of-image marker:
    the shape of a scan bomb, thousands of scans of a coefficient each."""
    scan = bytes([0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x01, 0x01, 0x10, 0x00])
    assert data.endswith(b"\xff\xd9")
    return data[:-2] + scan * count + b"\xff\xd9"


def test_the_scans_of_a_progressive_jpeg_are_counted_from_the_header_walk() -> None:
    from vision.imageheader import probe_image

    baseline = cv2.imencode(".jpg", np.full((480, 640, 3), 99, np.uint8))[1].tobytes()
    assert probe_image(baseline).scans == 1 and probe_image(baseline).coefficient_bytes == 0
    progressive = probe_image(_progressive_jpeg())
    assert 6 <= progressive.scans <= 12  # libjpeg's progressive script
    # 4:2:0: luma 80 x 60 blocks, each chroma 40 x 30, 64 coefficients of 2 bytes
    assert progressive.coefficient_bytes == (80 * 60 + 2 * 40 * 30) * 128
    full = probe_image(_progressive_jpeg(subsampling=0))  # 4:4:4
    assert full.coefficient_bytes == 3 * 80 * 60 * 128


def test_a_jpeg_of_thousands_of_scans_is_refused_before_decoding() -> None:
    from vision.imageheader import TooManyScansError
    from vision.imagelimits import DEFAULT_MAX_SCANS, check_limits

    data = _progressive_jpeg()
    assert check_limits(data).scans < DEFAULT_MAX_SCANS  # a camera's progressive JPEG reads
    bomb = _with_extra_scans(data, 6000)
    with pytest.raises(TooManyScansError, match=r"JPEG of 6,0\d\d scans is over the limit of 64"):
        check_limits(bomb)
    assert TooManyScansError.code == "too_many_scans"


def test_a_motion_photo_reads_as_its_still_whatever_video_follows_it() -> None:
    """A phone's motion photo is a JPEG with a video after its end-of-image marker; bytes of
    that video that look like scan markers are not the photo's scans."""
    from vision.imageheader import CorruptImageError
    from vision.imageheader import probe_image as probe

    still = _progressive_jpeg()
    rng = np.random.default_rng(5)
    video = b"\x00\x00\x00\x18ftypmp42" + (b"\xff\xda\x00\x08" * 200) + rng.bytes(300_000)
    motion = still + video
    assert probe(motion).scans == probe(still).scans
    assert check_limits(motion).scans == probe(still).scans
    assert np.array_equal(decode_image(motion), decode_image(still))
    with pytest.raises(CorruptImageError, match="end-of-image marker is missing"):
        probe(still[: len(still) // 2])


def test_the_decoding_budget_counts_a_progressive_jpegs_coefficients() -> None:
    from vision.imageheader import probe_image
    from vision.imagelimits import decode_peak_bytes

    progressive = probe_image(_progressive_jpeg(subsampling=0))
    baseline = replace(progressive, scans=1, coefficient_bytes=0)
    assert decode_peak_bytes(progressive) == decode_peak_bytes(baseline) + (
        progressive.coefficient_bytes
    )
    # reduced decoding keeps the whole-image coefficients: they are counted at full size
    assert decode_peak_bytes(progressive, 4) - decode_peak_bytes(baseline, 4) == (
        progressive.coefficient_bytes
    )
