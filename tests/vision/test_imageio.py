"""Image decoding with limits (vision/imageio.py): every format, every refusal, EXIF orientation.

Fixtures are made in the tests with NumPy, OpenCV and Pillow; expectations come from the
module's contract (the limits, the normalisation rules), from the file format specifications
(header layouts) and from Pillow's own ``ImageOps.exif_transpose`` as the reference for the
eight EXIF orientations.
"""

from __future__ import annotations

import contextlib
import io
import struct
import time
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from PIL import Image, ImageOps

from vision.imageio import (
    DEFAULT_MAX_BYTES,
    CorruptImageError,
    EmptyImageError,
    ImageError,
    ImageFileError,
    ImageFormat,
    ImageTooLargeError,
    ImageTooSmallError,
    TooManyPixelsError,
    UnsupportedImageTypeError,
    apply_orientation,
    decode_image,
    load_image,
    probe_image,
    write_image,
    writes_images,
)


def _picture(height: int = 60, width: int = 80, seed: int = 0) -> NDArray[np.uint8]:
    """A BGR test picture with structure (so orientation mistakes show)."""
    rng = np.random.default_rng(seed)
    image = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    image[: height // 3, : width // 3] = (0, 0, 255)  # red block at the top left
    return image


def _encode(image: NDArray[np.uint8], extension: str) -> bytes:
    ok, buffer = cv2.imencode(extension, image)
    assert ok
    return buffer.tobytes()


def _pillow(image: Image.Image, fmt: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


def _png_chunk(name: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + name + body + struct.pack(">I", zlib.crc32(name + body))


def _png_header_only(width: int, height: int) -> bytes:
    """A PNG whose IHDR announces ``width`` x ``height`` with a token IDAT (a pixel bomb)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", ihdr)
        + _png_chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + _png_chunk(b"IEND", b"")
    )


# --- every supported format decodes to upright BGR uint8 of the stored size -------------------


def _rgb(image: NDArray[np.uint8]) -> Image.Image:
    return Image.fromarray(np.ascontiguousarray(image[:, :, ::-1]))


FORMATS = [
    # (name, encoder, lossless)
    ("jpeg", lambda im: _encode(im, ".jpg"), False),
    ("png", lambda im: _encode(im, ".png"), True),
    ("bmp", lambda im: _encode(im, ".bmp"), True),
    ("tiff", lambda im: _encode(im, ".tiff"), True),
    ("webp-lossy", lambda im: _pillow(_rgb(im), "WEBP", quality=90), False),
    ("webp-lossless", lambda im: _pillow(_rgb(im), "WEBP", lossless=True), True),
    ("gif", lambda im: _pillow(_rgb(im).quantize(256), "GIF"), False),
]


@pytest.mark.parametrize(("name", "encoder", "lossless"), FORMATS, ids=[f[0] for f in FORMATS])
def test_supported_formats_decode_to_bgr(name: str, encoder, lossless: bool) -> None:  # type: ignore[no-untyped-def]
    # Contract: every supported type decodes to (H, W, 3) uint8 BGR of the stored size.
    image = _picture()
    data = encoder(image)
    decoded = decode_image(data)
    assert decoded.shape == (60, 80, 3) and decoded.dtype == np.uint8
    info = probe_image(data)
    assert (info.width, info.height) == (80, 60)
    if lossless:
        assert np.array_equal(decoded, image)
    # the red block stays red (channel order BGR kept through every decoder)
    block = decoded[5:15, 5:20].reshape(-1, 3).mean(axis=0)
    assert block[2] > 180 and block[0] < 80 and block[1] < 80


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\xff\xd8\xff\xe0", ImageFormat.JPEG),
        (b"\x89PNG\r\n\x1a\n", ImageFormat.PNG),
        (b"RIFF\x00\x00\x00\x00WEBP", ImageFormat.WEBP),
        (b"BM", ImageFormat.BMP),
        (b"GIF87a", ImageFormat.GIF),
        (b"GIF89a", ImageFormat.GIF),
        (b"II*\x00", ImageFormat.TIFF),
        (b"MM\x00*", ImageFormat.TIFF),
    ],
)
def test_type_comes_from_magic_bytes(data: bytes, expected: ImageFormat) -> None:
    # Magic numbers from each format's specification; the header behind them is cut short, so
    # a correctly sniffed type then reports a corrupt (not an unsupported) file.
    with pytest.raises(CorruptImageError, match=f"(?i){expected.name}"):
        probe_image(data + b"\x00" * 4)


# --- normalisation: greyscale, alpha, 16-bit, CMYK, animated GIF --------------------------------


def test_greyscale_becomes_three_equal_channels() -> None:
    grey = _picture()[:, :, 0]
    decoded = decode_image(_encode(grey, ".png"))
    assert decoded.shape == (60, 80, 3)
    for channel in range(3):
        assert np.array_equal(decoded[:, :, channel], grey)


def test_alpha_is_composited_on_white() -> None:
    # Contract: transparent reads as white, opaque keeps its colour, half mixes.
    image = np.zeros((40, 40, 4), np.uint8)
    image[:, :, :3] = (0, 0, 200)
    image[:, :10, 3] = 0
    image[:, 10:20, 3] = 255
    image[:, 20:, 3] = 128
    decoded = decode_image(_encode(image, ".png"))
    assert decoded.shape == (40, 40, 3)
    assert (decoded[:, :10] == 255).all()
    assert (decoded[:, 10:20] == (0, 0, 200)).all()
    expected_red = round(200 * 128 / 255 + 255 * (1 - 128 / 255))
    expected_other = round(255 * (1 - 128 / 255))
    assert tuple(decoded[0, 30]) == (expected_other, expected_other, expected_red)


def test_grey_alpha_png() -> None:
    data = _pillow(Image.new("LA", (40, 40), (50, 0)), "PNG")  # fully transparent grey
    assert (decode_image(data) == 255).all()


def _bmp_with_unused_alpha(bgr: NDArray[np.uint8]) -> bytes:
    """A 32-bit BMP (BITMAPV4HEADER, bit fields with an alpha mask) whose alpha bytes are all
    0, as some writers leave them: viewers show it opaque."""
    height, width = bgr.shape[:2]
    rows = np.dstack([bgr, np.zeros((height, width), np.uint8)])[::-1].tobytes()
    header = struct.pack("<IiiHHIIiiII", 108, width, height, 1, 32, 3, len(rows), 2835, 2835, 0, 0)
    header += struct.pack("<IIII", 0xFF0000, 0xFF00, 0xFF, 0xFF000000) + b"BGRs" + bytes(48)
    return struct.pack("<2sIHHI", b"BM", 122 + len(rows), 0, 0, 122) + header + rows


def test_a_fourth_channel_of_zeros_in_a_bmp_or_tiff_is_no_transparency() -> None:
    """A TIFF's unspecified extra sample and a BMP's unused alpha bytes hold zeros: the photo
    reads as its colours, not as blank white (a PNG transparent everywhere stays white)."""
    rng = np.random.default_rng(3)
    bgr = rng.integers(0, 256, (40, 60, 3), dtype=np.uint8)
    rgb = Image.fromarray(bgr[:, :, ::-1].copy())
    red, green, blue = rgb.split()
    rgbx = Image.merge("RGBX", (red, green, blue, Image.new("L", rgb.size, 0)))
    for data in (_pillow(rgbx, "TIFF"), _bmp_with_unused_alpha(bgr)):
        assert np.array_equal(decode_image(data), bgr)
    rgba = Image.merge("RGBA", (red, green, blue, Image.new("L", rgb.size, 0)))
    assert (decode_image(_pillow(rgba, "PNG")) == 255).all()


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs a device of endless bytes")
def test_a_stream_with_no_size_is_refused_once_past_the_byte_limit() -> None:
    """A device or a pipe has no size on the file system: it is read up to the limit, not
    to its end (``/dev/zero`` has none)."""
    with pytest.raises(ImageTooLargeError, match="'/dev/zero': image is over the limit of 1,000"):
        load_image("/dev/zero", max_bytes=1000)


def test_sixteen_bit_png_scales_to_eight_bits() -> None:
    # round(v / 257): 257 * k maps to k exactly, 65535 to 255, 128 to 0, 129 to 1.
    image = np.zeros((40, 40, 3), np.uint16)
    image[:, :10] = 65535
    image[:, 10:20] = 257 * 100
    image[:, 20:30] = 128
    image[:, 30:] = 129
    data = _encode(image, ".png")  # type: ignore[arg-type]
    assert data[24] == 16  # IHDR bit depth: really a 16-bit file
    decoded = decode_image(data)
    assert decoded.dtype == np.uint8
    assert (decoded[:, :10] == 255).all() and (decoded[:, 10:20] == 100).all()
    assert (decoded[:, 20:30] == 0).all() and (decoded[:, 30:] == 1).all()


def test_cmyk_jpeg_decodes_to_bgr() -> None:
    data = _pillow(Image.new("RGB", (64, 48), (220, 20, 20)).convert("CMYK"), "JPEG", quality=95)
    decoded = decode_image(data)
    assert decoded.shape == (48, 64, 3)
    blue, green, red = decoded.reshape(-1, 3).mean(axis=0)
    assert red > 180 and green < 70 and blue < 70


def test_animated_gif_gives_its_first_frame() -> None:
    frames = [Image.new("RGB", (48, 40), colour) for colour in ((10, 200, 10), (200, 10, 10))]
    data = _pillow(frames[0], "GIF", save_all=True, append_images=frames[1:], duration=100)
    assert getattr(Image.open(io.BytesIO(data)), "n_frames", 1) == 2
    decoded = decode_image(data)
    assert decoded.shape == (40, 48, 3)
    _blue, green, red = decoded.reshape(-1, 3).mean(axis=0)
    assert green > 180 and red < 40  # the first (green) frame


def _gif_with_screen(frame_size: tuple[int, int], screen: tuple[int, int]) -> bytes:
    """A one-frame GIF of ``frame_size`` whose logical screen says ``screen``."""
    data = _pillow(_rgb(_picture(frame_size[1], frame_size[0])).quantize(64), "GIF")
    return data[:6] + struct.pack("<HH", *screen) + data[10:]


def test_a_gif_frame_past_its_logical_screen_is_shown_whole() -> None:
    # Browsers and Pillow grow the canvas to the first frame (Pillow: the size below)
    data = _gif_with_screen((80, 60), (40, 30))
    assert Image.open(io.BytesIO(data)).size == (80, 60)
    assert probe_image(data).width == 80
    decoded = decode_image(data)
    assert decoded.shape == (60, 80, 3)
    expected = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))[:, :, ::-1]
    assert np.abs(decoded.astype(int) - expected).mean() < 1


def test_a_huge_gif_frame_on_a_small_screen_is_refused_by_its_header() -> None:
    # the frame's size, from its image descriptor, counts: 20,000 x 20,000 is 400 MP
    data = bytearray(_gif_with_screen((80, 60), (64, 64)))
    descriptor = data.index(b"\x2c", 13 + 3 * 64 * 0)
    while struct.unpack_from("<HH", data, descriptor + 5) != (80, 60):
        descriptor = data.index(b"\x2c", descriptor + 1)
    struct.pack_into("<HH", data, descriptor + 5, 20_000, 20_000)
    with pytest.raises(TooManyPixelsError, match="20000x20000"):
        decode_image(bytes(data))


def test_a_gif_of_a_million_comment_sub_blocks_is_probed_at_once() -> None:
    # 10 MB of 1-byte sub-blocks before the first frame: the walk for the frame's extent stops
    # after MAX_SUB_BLOCKS of them and takes the logical screen (it took 0.84 s to walk all)
    gif = _gif_with_screen((80, 60), (80, 60))
    start = 13 + 3 * (2 << (gif[10] & 0x07)) if gif[10] & 0x80 else 13
    comment = b"\x21\xfe" + b"\x01c" * 5_000_000 + b"\x00"
    data = gif[:start] + comment + gif[start:]
    started = time.perf_counter()
    info = probe_image(data)
    assert time.perf_counter() - started < 0.1
    assert (info.width, info.height) == (80, 60)


# --- EXIF orientation ---------------------------------------------------------------------------


@pytest.mark.parametrize("orientation", range(1, 9))
@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP", "TIFF"])
def test_exif_orientation_matches_pillow(fmt: str, orientation: int) -> None:
    # Reference: Pillow's ImageOps.exif_transpose implements the EXIF 2.3 orientation table.
    exif = Image.Exif()
    exif[0x0112] = orientation
    options: dict[str, object] = {"quality": 100} if fmt == "JPEG" else {"lossless": True}
    data = _pillow(_rgb(_picture()), fmt, exif=exif, **options)
    assert probe_image(data).orientation == orientation
    upright = ImageOps.exif_transpose(Image.open(io.BytesIO(data)))
    expected = np.asarray(upright.convert("RGB"))[:, :, ::-1]
    decoded = decode_image(data)
    assert decoded.shape == expected.shape
    assert np.abs(decoded.astype(int) - expected).mean() < 3


@pytest.mark.parametrize("orientation", range(1, 9))
def test_apply_orientation_is_the_exif_table(orientation: int) -> None:
    # EXIF 2.3 table: where the stored top-left pixel ends up in the upright image.
    image = np.zeros((2, 3, 3), np.uint8)
    image[0, 0] = 255
    upright = apply_orientation(image, orientation)
    corner = {1: (0, 0), 2: (0, 2), 3: (1, 2), 4: (1, 0)}
    corner |= {5: (0, 0), 6: (0, 1), 7: (2, 1), 8: (2, 0)}
    assert tuple(np.argwhere(upright[:, :, 0] == 255)[0]) == corner[orientation]
    assert upright.shape[:2] == ((2, 3) if orientation <= 4 else (3, 2))


def _exif_segment(orientation: int) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = orientation
    body = exif.tobytes()  # (Pillow writes the "Exif\0\0" header of an APP1 segment)
    return b"\xff\xe1" + struct.pack(">H", len(body) + 2) + body


def test_the_first_exif_block_of_a_jpeg_gives_the_orientation() -> None:
    # Viewers (and Pillow's JPEG plugin) take the first APP1 Exif segment; a second one (an
    # editor's, appended) is not the photo's
    data = _encode(_picture(), ".jpg")
    both = data[:2] + _exif_segment(6) + _exif_segment(1) + data[2:]
    assert probe_image(both).orientation == 6
    assert decode_image(both).shape == (80, 60, 3)
    assert Image.open(io.BytesIO(both)).getexif()[0x0112] == 6


def test_damaged_exif_block_only_loses_the_orientation() -> None:
    data = bytearray(_encode(_picture(), ".jpg"))
    app1 = b"Exif\x00\x00MM\x00*\x00\x00\xff\xff"  # IFD offset far past the end
    segment = b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1
    decoded = decode_image(bytes(data[:2]) + segment + bytes(data[2:]))
    assert decoded.shape == (60, 80, 3)


# --- refusals -----------------------------------------------------------------------------------


def _truncated_jpeg(fraction: float) -> bytes:
    data = _encode(_picture(200, 200), ".jpg")
    return data[: int(len(data) * fraction)]


# fmt: off
REFUSALS = [
    # (case, data, error, code, words in the message)
    ("zero bytes", b"", EmptyImageError, "empty", "0 bytes"),
    ("text file", b"hand: 3H 7S KD 8C 6D\n", UnsupportedImageTypeError, "unsupported_type",
     "first bytes 68 61"),
    ("pdf", b"%PDF-1.7\n" + b"x" * 100, UnsupportedImageTypeError, "unsupported_type", "JPEG"),
    ("pdf named", b"%PDF-1.7\n" + b"x" * 100, UnsupportedImageTypeError, "unsupported_type",
     "a PDF document"),
    ("iphone heic", b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + b"\x00" * 64,
     UnsupportedImageTypeError, "unsupported_type", "HEIC/HEIF photo"),
    ("heif mif1", b"\x00\x00\x00\x18ftypmif1\x00\x00\x00\x00mif1heic" + b"\x00" * 64,
     UnsupportedImageTypeError, "unsupported_type", "export it as JPEG"),
    ("avif", b"\x00\x00\x00\x20ftypavif\x00\x00\x00\x00avifmif1miafMA1B" + b"\x00" * 64,
     UnsupportedImageTypeError, "unsupported_type", "an AVIF image"),
    ("avif as mif1", b"\x00\x00\x00\x1cftypmif1\x00\x00\x00\x00mif1avifmiaf" + b"\x00" * 64,
     UnsupportedImageTypeError, "unsupported_type", "an AVIF image"),
    ("mp4 video", b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2" + b"\x00" * 64,
     UnsupportedImageTypeError, "unsupported_type", "brand 'isom'"),
    ("jpeg xl", b"\xff\x0a" + b"\x00" * 64, UnsupportedImageTypeError, "unsupported_type",
     "JPEG XL"),
    ("jpeg 2000", b"\x00\x00\x00\x0cjP  \r\n\x87\n" + b"\x00" * 64, UnsupportedImageTypeError,
     "unsupported_type", "JPEG 2000"),
    ("svg", b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>',
     UnsupportedImageTypeError, "unsupported_type", "an SVG drawing"),
    ("svg after a comment", b"<!-- drawn by hand -->\n<!DOCTYPE svg>\n<svg width='9'/>",
     UnsupportedImageTypeError, "unsupported_type", "an SVG drawing"),
    ("svg after a byte-order mark", b'\xef\xbb\xbf<?xml version="1.0"?>' + b" " * 300 + b"<svg/>",
     UnsupportedImageTypeError, "unsupported_type", "an SVG drawing"),
    ("1x1 png", _encode(np.zeros((1, 1, 3), np.uint8), ".png"), ImageTooSmallError, "too_small",
     "1x1"),
    ("31 px high", _encode(np.zeros((31, 500, 3), np.uint8), ".png"), ImageTooSmallError,
     "too_small", "500x31"),
    ("jpeg cut at 50%", _truncated_jpeg(0.5), CorruptImageError, "corrupt", "truncated JPEG"),
    ("jpeg cut at 95%", _truncated_jpeg(0.95), CorruptImageError, "corrupt", "end-of-image"),
    ("jpeg header only", _truncated_jpeg(1.0)[:300], CorruptImageError, "corrupt", "JPEG"),
    ("jpeg magic only", b"\xff\xd8\xff", CorruptImageError, "corrupt", "truncated JPEG"),
    ("png cut", _encode(_picture(), ".png")[:2000], CorruptImageError, "corrupt", "PNG"),
    ("png bomb", _png_header_only(100_000, 100_000), TooManyPixelsError, "too_many_pixels",
     "100000x100000 = 10,000,000,000 pixels"),
    ("gif bomb", b"GIF89a" + struct.pack("<HH", 65535, 65535) + b"\x00" * 20, TooManyPixelsError,
     "too_many_pixels", "65535x65535"),
    ("bmp bomb", b"BM" + b"\x00" * 12 + struct.pack("<Iii", 40, 30_000, -30_000) + b"\x00" * 40,
     TooManyPixelsError, "too_many_pixels", "30000x30000"),
    ("png zero width", _png_header_only(0, 10), CorruptImageError, "corrupt", "0x10"),
]
# fmt: on


@pytest.mark.parametrize(
    ("case", "data", "error", "code", "words"), REFUSALS, ids=[r[0] for r in REFUSALS]
)
def test_refusals(case: str, data: bytes, error: type[ImageError], code: str, words: str) -> None:
    with pytest.raises(error, match=words.replace("(", r"\(")) as raised:
        decode_image(data)
    assert raised.value.code == code
    assert isinstance(raised.value, ValueError)


def test_size_limit_is_checked_before_the_type() -> None:
    # Contract: over max_bytes is refused without looking at the bytes (they are not an image).
    with pytest.raises(ImageTooLargeError, match="1,001 bytes is over the limit of 1,000"):
        decode_image(b"x" * 1001, max_bytes=1000)
    assert DEFAULT_MAX_BYTES == 20 * 1024 * 1024


def test_pixel_limit_refuses_a_real_file_by_its_header() -> None:
    data = _encode(_picture(480, 640), ".jpg")
    with pytest.raises(TooManyPixelsError, match="640x480 = 307,200 pixels"):
        decode_image(data, max_pixels=300_000)
    assert decode_image(data, max_pixels=307_200).shape == (480, 640, 3)


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP", "GIF", "BMP", "TIFF"])
def test_headers_give_the_size_for_every_format(fmt: str) -> None:
    # The pixel bomb check relies on these header readers: each must match the real size.
    image = Image.new("RGB", (123, 45), (1, 2, 3))
    info = probe_image(_pillow(image, fmt))
    assert (info.format.name, info.width, info.height) == (fmt, 123, 45)


def test_webp_extended_header() -> None:
    # VP8X (extended) files carry the canvas size in 24-bit fields (WebP container spec).
    exif = Image.Exif()
    exif[0x0112] = 1
    data = _pillow(Image.new("RGBA", (300, 70), (9, 9, 9, 128)), "WEBP", exif=exif)
    assert data[12:16] == b"VP8X"
    assert (probe_image(data).width, probe_image(data).height) == (300, 70)


def test_header_and_data_disagree() -> None:
    data = bytearray(_encode(_picture(), ".png"))
    data[16:24] = struct.pack(">II", 81, 60)  # claim one column more than the data holds
    with pytest.raises(ImageError):
        decode_image(bytes(data))


# --- load_image ---------------------------------------------------------------------------------


def test_load_image_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "table.jpg"
    path.write_bytes(_encode(_picture(), ".jpg"))
    assert load_image(path).shape == (60, 80, 3)


@pytest.mark.parametrize(
    ("content", "error", "words"),
    [
        (None, ImageFileError, "cannot read"),
        (b"", EmptyImageError, "0 bytes"),
        (b"not an image", UnsupportedImageTypeError, "not a supported image"),
        (b"x" * 2000, ImageTooLargeError, "2,000 bytes"),
    ],
)
def test_load_image_errors_name_the_file(
    tmp_path: Path, content: bytes | None, error: type[ImageError], words: str
) -> None:
    path = tmp_path / "hand.png"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(error, match=words) as raised:
        load_image(path, max_bytes=1000)
    assert "hand.png" in str(raised.value)


# --- properties ---------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_decode_or_raise_an_image_error(data: bytes) -> None:
    # Contract: nothing but ImageError ever escapes for bad input.
    with contextlib.suppress(ImageError):
        decode_image(data)


_VALID = {
    "jpeg": _encode(_picture(64, 64), ".jpg"),
    "png": _encode(_picture(64, 64), ".png"),
    "gif": _pillow(_rgb(_picture(64, 64)).quantize(64), "GIF"),
    "webp": _pillow(_rgb(_picture(64, 64)), "WEBP"),
    "bmp": _encode(_picture(64, 64), ".bmp"),
}


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(_VALID)), st.floats(0, 1), st.integers(0, 255), st.integers(0, 10**6))
def test_damaged_files_decode_or_raise_an_image_error(
    name: str, fraction: float, byte: int, position: int
) -> None:
    # Truncated files and flipped bytes of every format: an image or an ImageError, never else.
    data = bytearray(_VALID[name][: max(1, int(len(_VALID[name]) * fraction))])
    data[position % len(data)] = byte
    try:
        image = decode_image(bytes(data))
    except ImageError:
        return
    assert image.ndim == 3 and image.shape[2] == 3 and image.dtype == np.uint8


@settings(max_examples=30, deadline=None)
@given(st.integers(32, 300), st.integers(32, 300), st.sampled_from([".png", ".jpg", ".bmp"]))
def test_probe_agrees_with_the_decoder(width: int, height: int, extension: str) -> None:
    data = _encode(np.full((height, width, 3), 128, np.uint8), extension)
    info = probe_image(data)
    assert (info.width, info.height) == (width, height)
    assert decode_image(data).shape == (height, width, 3)


def test_write_image_takes_any_name_and_refuses_what_it_cannot_write(tmp_path: Path) -> None:
    import os

    image = np.full((40, 48, 3), (10, 200, 30), np.uint8)
    odd = tmp_path / os.fsdecode(b"sheet\xe9\xff.PNG")  # no UTF-8; an upper-case extension
    assert write_image(odd, image)
    assert np.array_equal(load_image(odd), image)
    assert not write_image(tmp_path / "notes.txt", image)  # no image format
    with pytest.raises(FileNotFoundError):  # no such folder: the reason, not just "no"
        write_image(tmp_path / "missing" / "a.png", image)
    assert writes_images(odd) and not writes_images("notes.txt")
    assert sorted(path.name for path in tmp_path.iterdir()) == [odd.name]
