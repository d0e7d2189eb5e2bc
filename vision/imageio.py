"""Image bytes to a BGR ``uint8`` array, with the limits checked before anything is decoded.

:func:`decode_image` is the one door through which uploaded and loaded images enter the
recognizer. In order, it:

1. refuses empty data and data over ``max_bytes`` (default 20 MB) without looking further;
2. tells the type from the leading bytes (never from a file name or a content-type header):
   JPEG, PNG, WebP, BMP, GIF or TIFF; anything else is :class:`UnsupportedImageTypeError`;
3. reads the pixel dimensions from the file's own header (JPEG SOF, PNG IHDR, GIF logical
   screen, BMP info header, WebP VP8 / VP8L / VP8X, TIFF IFD0) and refuses more than
   ``max_pixels`` (default 50 megapixels) before any decoding, so a few kilobytes that would
   expand into a huge bitmap (a "decompression bomb") cost nothing; a side under ``min_side``
   (default 32 px) is :class:`ImageTooSmallError`, nothing can be read in it;
4. refuses a JPEG without its end-of-image marker after the scan data (a truncated upload that
   the decoder would otherwise half-paint in grey);
5. decodes with OpenCV as stored (``IMREAD_UNCHANGED``, orientation ignored) and normalises:
   greyscale becomes three equal channels; an alpha channel is composited on white (transparent
   parts of a scan read as a white table, not black); 16-bit samples are scaled to 8 bits
   (``round(v / 257)``); CMYK JPEG is converted by the decoder; an animated GIF, APNG or
   multi-page TIFF gives its first frame;
6. turns the image upright by its EXIF orientation tag (1..8), read here from a JPEG's APP1
   segment, a PNG's ``eXIf`` chunk or a WebP's ``EXIF`` chunk rather than left to the decoder,
   so the rule is one tested function (:func:`apply_orientation`); OpenCV's TIFF decoder
   (libtiff) applies a TIFF's own orientation tag whatever the flags, so TIFF is left to it.

:func:`decode_reduced` (and :func:`load_reduced`) check and normalise alike, but decode a large
JPEG at a half, a quarter or an eighth of its size (libjpeg's scaled IDCT, far cheaper than a
full decode), keeping its long side at least ``min_long_side``: by default just over the size to
which the reader shrinks a photo before reading it. The :class:`ReducedImage` maps a reading
back to the photo's own pixels (:meth:`ReducedImage.to_original`).

Runtime needs only OpenCV and NumPy (Pillow is a test dependency, used to make fixtures).
Every refusal is an :class:`ImageError` (a ``ValueError``) with a short ``code`` that the HTTP
layer maps to a status, and a message that names the problem and the numbers involved.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.settings import ReaderSettings

if TYPE_CHECKING:
    from vision.detections import Reading

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_PIXELS",
    "MIN_SIDE",
    "CorruptImageError",
    "EmptyImageError",
    "ImageError",
    "ImageFileError",
    "ImageFormat",
    "ImageInfo",
    "ImageTooLargeError",
    "ImageTooSmallError",
    "NoImagesError",
    "ReducedImage",
    "TooManyPixelsError",
    "UnsupportedImageTypeError",
    "apply_orientation",
    "decode_image",
    "decode_reduced",
    "load_image",
    "load_reduced",
    "probe_image",
    "reader_long_side",
    "reduction_factor",
]

DEFAULT_MAX_BYTES = 20 * 1024 * 1024
"""Largest accepted encoded image: 20 MiB."""
DEFAULT_MAX_PIXELS = 50_000_000
"""Largest accepted image area: 50 megapixels (a 16-bit RGBA image of that size is 400 MB)."""
MIN_SIDE = 32
"""Smallest accepted width and height in pixels: below it no card index can be read."""


class ImageError(ValueError):
    """An image that cannot be used; ``code`` names the kind of problem for the API."""

    code: ClassVar[str] = "bad_image"


class EmptyImageError(ImageError):
    """No bytes at all."""

    code = "empty"


class ImageTooLargeError(ImageError):
    """More bytes than the limit."""

    code = "too_large"


class TooManyPixelsError(ImageError):
    """A header announcing more pixels than the limit (refused before decoding)."""

    code = "too_many_pixels"


class UnsupportedImageTypeError(ImageError):
    """Bytes that are not one of the supported image types."""

    code = "unsupported_type"


class CorruptImageError(ImageError):
    """A supported type whose header or data is damaged or truncated."""

    code = "corrupt"


class ImageTooSmallError(ImageError):
    """An image narrower or lower than ``MIN_SIDE`` pixels."""

    code = "too_small"


class ImageFileError(ImageError):
    """An image file that cannot be opened or read."""

    code = "unreadable_file"


class NoImagesError(ImageFileError):
    """A folder given where a photo was expected, holding no image file to read."""

    code = "no_images"


class ImageFormat(enum.Enum):
    """The supported encodings; the value is the media type."""

    JPEG = "image/jpeg"
    PNG = "image/png"
    WEBP = "image/webp"
    BMP = "image/bmp"
    GIF = "image/gif"
    TIFF = "image/tiff"


@dataclass(frozen=True, slots=True)
class ImageInfo:
    """What the header says: the type, the stored size and the EXIF orientation (1 = upright)."""

    format: ImageFormat
    width: int
    height: int
    orientation: int = 1

    @property
    def pixels(self) -> int:
        """Width times height."""
        return self.width * self.height


def _sniff(data: bytes) -> ImageFormat:
    """The image type from the magic bytes, or UnsupportedImageTypeError."""
    if data.startswith(b"\xff\xd8\xff"):
        return ImageFormat.JPEG
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return ImageFormat.PNG
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ImageFormat.WEBP
    if data.startswith(b"BM"):
        return ImageFormat.BMP
    if data.startswith((b"GIF87a", b"GIF89a")):
        return ImageFormat.GIF
    if data.startswith((b"II*\x00", b"MM\x00*")):
        return ImageFormat.TIFF
    known = _known_unsupported(data)
    if known:
        raise UnsupportedImageTypeError(
            f"{known}: not a supported image type; save or export it as JPEG or PNG "
            "(supported: JPEG, PNG, WebP, BMP, GIF, TIFF)"
        )
    head = data[:8].hex(" ")
    raise UnsupportedImageTypeError(
        f"not a supported image (JPEG, PNG, WebP, BMP, GIF or TIFF): first bytes {head}"
    )


# ISO base media ("ftyp") brands of the still-image formats phones and browsers write
_HEIF_BRANDS = frozenset({b"heic", b"heix", b"heim", b"heis", b"hevc", b"hevx", b"mif1", b"msf1"})
_AVIF_BRANDS = frozenset({b"avif", b"avis"})


def _known_unsupported(data: bytes) -> str:
    """The name of a recognised but unsupported type (a phone's HEIC photo...), or ''.

    Named so that the refusal tells a user what to do, rather than quoting magic bytes.
    """
    if data[4:8] == b"ftyp":
        brand = data[8:12]
        compatible = {data[i : i + 4] for i in range(16, min(len(data), 64) - 3, 4)}
        if brand in _AVIF_BRANDS or (brand == b"mif1" and compatible & _AVIF_BRANDS):
            return "an AVIF image"
        if brand in _HEIF_BRANDS:
            return "a HEIC/HEIF photo (the iPhone camera's default format)"
        return f"an ISO media file (brand {brand.decode('latin-1')!r}), a video or HEIF-like"
    if data.startswith((b"\xff\x0a", b"\x00\x00\x00\x0cJXL \r\n\x87\n")):
        return "a JPEG XL image"
    if data.startswith((b"\x00\x00\x00\x0cjP  \r\n\x87\n", b"\xff\x4f\xff\x51")):
        return "a JPEG 2000 image"
    if data.startswith(b"%PDF"):
        return "a PDF document"
    head = data[:256].lstrip().lower()
    if head.startswith(b"<svg") or (head.startswith(b"<?xml") and b"<svg" in head):
        return "an SVG drawing"
    return ""


def _unpack(fmt: str, data: bytes, offset: int, what: str) -> tuple[int, ...]:
    """``struct.unpack_from`` that raises CorruptImageError when the data is too short."""
    try:
        return struct.unpack_from(fmt, data, offset)
    except struct.error:
        raise CorruptImageError(f"truncated {what} at byte {offset}") from None


def _tiff_orientation_and_size(tiff: bytes, what: str) -> tuple[int, int, int]:
    """(orientation, width, height) from a TIFF structure's IFD0; 0 for a missing size tag.

    Used for TIFF files and for the TIFF block inside a JPEG's EXIF segment.
    """
    order = "<" if tiff[:2] == b"II" else ">"
    (ifd,) = _unpack(order + "I", tiff, 4, what)
    (count,) = _unpack(order + "H", tiff, ifd, what)
    orientation, width, height = 1, 0, 0
    for entry in range(min(count, 1000)):
        tag, kind = _unpack(order + "HH", tiff, ifd + 2 + 12 * entry, what)
        # SHORT (3) values sit in the first two bytes of the value field, LONG (4) in all four
        value_format = order + ("H" if kind == 3 else "I")
        (value,) = _unpack(value_format, tiff, ifd + 2 + 12 * entry + 8, what)
        if tag == 0x0112:
            orientation = value if 1 <= value <= 8 else 1
        elif tag == 0x0100:
            width = value
        elif tag == 0x0101:
            height = value
    return orientation, width, height


_JPEG_SOF = frozenset(
    {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
)
_JPEG_STANDALONE = frozenset({0x01, *range(0xD0, 0xD8)})


def _probe_jpeg(data: bytes) -> ImageInfo:
    """Walk the JPEG segments up to the first scan: size from SOF, orientation from APP1 Exif."""
    offset, size, orientation = 2, (0, 0), 1
    while True:
        if offset + 4 > len(data):
            raise CorruptImageError("truncated JPEG: the header ends before the image data")
        if data[offset] != 0xFF:
            raise CorruptImageError(f"corrupt JPEG: no segment marker at byte {offset}")
        marker = data[offset + 1]
        if marker == 0xFF:  # fill byte before a marker
            offset += 1
            continue
        if marker in _JPEG_STANDALONE:
            offset += 2
            continue
        (length,) = _unpack(">H", data, offset + 2, "JPEG segment")
        body = data[offset + 4 : offset + 2 + length]
        if marker in _JPEG_SOF:
            height, width = _unpack(">HH", data, offset + 5, "JPEG frame header")
            size = (width, height)
        elif marker == 0xE1 and body.startswith(b"Exif\x00\x00"):
            orientation = _exif_orientation(body[6:])
        elif marker == 0xDA:  # start of scan: the header is over
            if size == (0, 0):
                raise CorruptImageError("corrupt JPEG: image data before any frame header")
            # searched from the end, where it is: a 12 MP photo's 3 MB took 4 ms from the front
            if data.rfind(b"\xff\xd9", offset) < 0:
                raise CorruptImageError(
                    "truncated JPEG: the end-of-image marker is missing "
                    f"({len(data)} bytes received)"
                )
            return ImageInfo(ImageFormat.JPEG, size[0], size[1], orientation)
        elif marker == 0xD9:
            raise CorruptImageError("corrupt JPEG: end of image before any image data")
        offset += 2 + length


def _exif_orientation(tiff: bytes) -> int:
    """The orientation in an EXIF TIFF block; 1 when it is missing or damaged."""
    if tiff[:4] not in (b"II*\x00", b"MM\x00*"):
        return 1
    try:
        return _tiff_orientation_and_size(tiff, "Exif block")[0]
    except CorruptImageError:
        return 1  # a damaged Exif block only loses the orientation


def _png_orientation(data: bytes) -> int:
    """The orientation of a PNG's ``eXIf`` chunk (walking the chunks up to IEND); 1 if none."""
    offset = 8
    while offset + 8 <= len(data):
        length, name = struct.unpack_from(">I4s", data, offset)
        if name == b"eXIf":
            return _exif_orientation(data[offset + 8 : offset + 8 + length])
        if name == b"IEND":
            break
        offset += 12 + length
    return 1


def _webp_orientation(data: bytes) -> int:
    """The orientation of a WebP's ``EXIF`` chunk (extended format only); 1 if none."""
    offset = 12
    while offset + 8 <= len(data):
        name, length = struct.unpack_from("<4sI", data, offset)
        if name == b"EXIF":
            block = data[offset + 8 : offset + 8 + length]
            return _exif_orientation(block[6:] if block.startswith(b"Exif\x00\x00") else block)
        offset += 8 + length + (length & 1)
    return 1


def _probe_webp(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        if data[23:26] != b"\x9d\x01\x2a":
            raise CorruptImageError("corrupt WebP: bad VP8 start code")
        width, height = _unpack("<HH", data, 26, "WebP VP8 header")
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":
        if data[20:21] != b"\x2f":
            raise CorruptImageError("corrupt WebP: bad VP8L signature")
        (bits,) = _unpack("<I", data, 21, "WebP VP8L header")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        low_w, high_w, low_h, high_h = _unpack("<HBHB", data, 24, "WebP VP8X header")
        return (low_w | high_w << 16) + 1, (low_h | high_h << 16) + 1
    raise CorruptImageError(f"corrupt WebP: unknown first chunk {chunk!r}")


def probe_image(data: bytes) -> ImageInfo:
    """The type, stored size and orientation of encoded image bytes, from the header only.

    Raises UnsupportedImageTypeError for an unknown type and CorruptImageError for a header
    that is damaged or cut short.
    """
    kind = _sniff(data)
    if kind is ImageFormat.JPEG:
        return _probe_jpeg(data)
    orientation = 1
    if kind is ImageFormat.PNG:
        if data[12:16] != b"IHDR":
            raise CorruptImageError("corrupt PNG: the first chunk is not IHDR")
        width, height = _unpack(">II", data, 16, "PNG header")
        orientation = _png_orientation(data)
    elif kind is ImageFormat.GIF:
        width, height = _unpack("<HH", data, 6, "GIF header")
    elif kind is ImageFormat.BMP:
        (header_size,) = _unpack("<I", data, 14, "BMP header")
        if header_size == 12:
            width, height = _unpack("<HH", data, 18, "BMP header")
        else:
            signed_width, signed_height = _unpack("<ii", data, 18, "BMP header")
            width, height = abs(signed_width), abs(signed_height)  # negative height: top-down
    elif kind is ImageFormat.WEBP:
        width, height = _probe_webp(data)
        orientation = _webp_orientation(data)
    else:
        orientation, width, height = _tiff_orientation_and_size(data, "TIFF header")
    if width <= 0 or height <= 0:
        raise CorruptImageError(f"corrupt {kind.name}: header gives size {width}x{height}")
    return ImageInfo(kind, width, height, orientation)


def _u8(image: object) -> NDArray[np.uint8]:
    """An OpenCV result typed as the uint8 array it is (no copy)."""
    return np.asarray(image, dtype=np.uint8)


_ORIENTATIONS = {
    2: lambda image: cv2.flip(image, 1),
    3: lambda image: cv2.rotate(image, cv2.ROTATE_180),
    4: lambda image: cv2.flip(image, 0),
    5: lambda image: cv2.transpose(image),
    6: lambda image: cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE),
    7: lambda image: cv2.rotate(cv2.transpose(image), cv2.ROTATE_180),
    8: lambda image: cv2.rotate(image, cv2.ROTATE_90_COUNTERCLOCKWISE),
}


def apply_orientation(image: NDArray[np.uint8], orientation: int) -> NDArray[np.uint8]:
    """Turn a stored image upright by its EXIF orientation (1..8; anything else: unchanged).

    2 mirror left-right, 3 turn 180, 4 mirror top-bottom, 5 transpose, 6 turn 90 clockwise,
    7 transverse, 8 turn 90 counter-clockwise (the TIFF / EXIF 2.3 definitions).
    """
    turn = _ORIENTATIONS.get(orientation)
    return image if turn is None else _u8(turn(image))


def _to_bgr8(image: NDArray[np.generic], kind: ImageFormat) -> NDArray[np.uint8]:
    """Normalise a decoded array to three 8-bit BGR channels (see the module docstring)."""
    if image.dtype == np.uint16:
        image = ((image.astype(np.uint32) + 128) // 257).astype(np.uint8)
    elif image.dtype != np.uint8:
        raise UnsupportedImageTypeError(
            f"unsupported {kind.name} sample type {image.dtype}: 8- or 16-bit integers only"
        )
    pixels = _u8(image)
    if pixels.ndim == 2:
        return _u8(cv2.cvtColor(pixels, cv2.COLOR_GRAY2BGR))
    channels = pixels.shape[2]
    if channels == 1:
        return _u8(cv2.cvtColor(pixels[:, :, 0], cv2.COLOR_GRAY2BGR))
    if channels == 3:
        return np.ascontiguousarray(pixels)
    if channels == 4:
        colour = pixels[:, :, :3].astype(np.float32)
        alpha = pixels[:, :, 3:4].astype(np.float32) / np.float32(255.0)
        return _u8(colour * alpha + np.float32(255.0) * (1 - alpha) + np.float32(0.5))
    raise UnsupportedImageTypeError(f"unsupported {kind.name} with {channels} channels")


_REDUCED_FLAGS = {factor: getattr(cv2, f"IMREAD_REDUCED_COLOR_{factor}") for factor in (2, 4, 8)}


def reader_long_side() -> int:
    """The default ``min_long_side`` of :func:`decode_reduced`: the reader's ``tile_above_px``
    plus one (an image at ``tile_above_px`` or under would be read whole only, not in tiles)."""
    return ReaderSettings().tile_above_px + 1


def reduction_factor(width: int, height: int, min_long_side: int, min_side: int = MIN_SIDE) -> int:
    """The largest JPEG decoding reduction, 8, 4, 2 or else 1, that keeps the longer side at
    least ``min_long_side`` and the shorter side at least ``min_side`` pixels.

    A reduction by ``f`` gives ``ceil(side / f)`` pixels a side (libjpeg's rounding).
    """
    if min_long_side < 1:
        raise ValueError(f"min_long_side must be at least 1 pixel, got {min_long_side}")
    long_side, short_side = max(width, height), min(width, height)
    for factor in (8, 4, 2):
        if -(-long_side // factor) >= min_long_side and -(-short_side // factor) >= min_side:
            return factor
    return 1


def _overhang_xy(orientation: int, right: int, bottom: int) -> tuple[int, int]:
    """Where the reduced blocks overhang an upright photo: (left, top) in its pixels.

    A block reduced by f covers f x f stored pixels; the last column and row of blocks reach
    ``right`` and ``bottom`` pixels past the stored photo. An EXIF mirror or turn
    (:func:`apply_orientation`) may bring that overhang to the upright left or top.
    """
    if orientation >= 5:  # a quarter turn: stored columns become rows
        return (bottom if orientation in (6, 7) else 0, right if orientation in (7, 8) else 0)
    return (right if orientation in (2, 3) else 0, bottom if orientation in (3, 4) else 0)


@dataclass(frozen=True, eq=False, slots=True)
class ReducedImage:
    """An upright image decoded at ``1 / factor`` of a photo's size, and how to go back.

    ``image`` is the upright (H, W, 3) BGR array; ``factor`` is 1, 2, 4 or 8; ``size_wh`` the
    upright photo's own size; a point (x, y) of ``image`` is (factor * x - offset_x,
    factor * y - offset_y) in the photo. ``offset_xy`` is (0, 0) unless an EXIF turn or mirror
    put the part of the last reduced row or column that lies past the photo's stored edge on
    the left or the top (photo sides that are not multiples of ``factor``).
    """

    image: NDArray[np.uint8]
    factor: int
    size_wh: tuple[int, int]
    offset_xy: tuple[int, int] = (0, 0)

    def to_original(self, reading: Reading) -> Reading:
        """A reading of ``image`` with its boxes and sizes in the photo's own pixels."""
        if self.factor == 1:
            return reading
        return reading.scaled(self.factor, self.size_wh, self.offset_xy)

    def full_size(self) -> NDArray[np.uint8]:
        """``image`` enlarged back to ``size_wh`` (bilinear), aligned with the boxes that
        :meth:`to_original` gives: for drawing on. ``image`` itself when ``factor`` is 1."""
        if self.factor == 1:
            return self.image
        height, width = self.image.shape[:2]
        size = (width * self.factor, height * self.factor)
        enlarged = _u8(cv2.resize(self.image, size, interpolation=cv2.INTER_LINEAR))
        left, top = self.offset_xy
        return np.ascontiguousarray(
            enlarged[top : top + self.size_wh[1], left : left + self.size_wh[0]]
        )


def _check_limits(data: bytes, max_bytes: int, max_pixels: int, min_side: int) -> ImageInfo:
    """The header of ``data`` after the checks that come before decoding (steps 1 to 4)."""
    if not data:
        raise EmptyImageError("empty image: 0 bytes received")
    if len(data) > max_bytes:
        raise ImageTooLargeError(
            f"image of {len(data):,} bytes is over the limit of {max_bytes:,} bytes"
        )
    info = probe_image(data)
    if info.pixels > max_pixels:
        raise TooManyPixelsError(
            f"{info.format.name} of {info.width}x{info.height} = {info.pixels:,} pixels is over "
            f"the limit of {max_pixels:,} pixels"
        )
    if min(info.width, info.height) < min_side:
        raise ImageTooSmallError(
            f"{info.format.name} of {info.width}x{info.height} pixels is too small: "
            f"each side needs at least {min_side} pixels"
        )
    return info


def _decode(data: bytes, info: ImageInfo, factor: int) -> NDArray[np.uint8]:
    """Decode checked bytes (a JPEG reduced by ``factor``), normalise and turn upright."""
    buffer = np.frombuffer(data, dtype=np.uint8)
    flags = _REDUCED_FLAGS.get(factor, cv2.IMREAD_UNCHANGED) | cv2.IMREAD_IGNORE_ORIENTATION
    try:
        decoded = cv2.imdecode(buffer, flags)
    except cv2.error as error:
        raise CorruptImageError(f"corrupt {info.format.name}: {str(error).strip()}") from None
    if decoded is None or decoded.size == 0:  # (OpenCV's way of saying it could not decode)
        raise CorruptImageError(
            f"corrupt or truncated {info.format.name}: the decoder could not read its "
            f"{len(data):,} bytes"
        )
    stored = {(-(-info.height // factor), -(-info.width // factor))}
    if info.format is ImageFormat.TIFF and info.orientation >= 5:
        stored.add((info.width, info.height))  # libtiff has already turned it upright
    if decoded.shape[:2] not in stored and info.format is not ImageFormat.GIF:
        # (a GIF's first frame may be smaller than its logical screen)
        reduced = f" (reduced by {factor})" if factor > 1 else ""
        raise CorruptImageError(
            f"corrupt {info.format.name}: header says {info.width}x{info.height}{reduced}, "
            f"data decodes to {decoded.shape[1]}x{decoded.shape[0]}"
        )
    image = _to_bgr8(decoded, info.format)
    if info.format is ImageFormat.TIFF:
        return image  # libtiff turns TIFF images upright itself, whatever the flags say
    return apply_orientation(image, info.orientation)


def decode_image(
    data: bytes,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    min_side: int = MIN_SIDE,
) -> NDArray[np.uint8]:
    """Decode image bytes into an upright (H, W, 3) BGR ``uint8`` array; see the module docstring.

    Raises, all ImageError: EmptyImageError, ImageTooLargeError (over ``max_bytes``),
    UnsupportedImageTypeError, CorruptImageError (damaged, truncated), TooManyPixelsError (over
    ``max_pixels`` by the header, before decoding), ImageTooSmallError (a side under
    ``min_side``).
    """
    info = _check_limits(data, max_bytes, max_pixels, min_side)
    return _decode(data, info, 1)


def decode_reduced(
    data: bytes,
    *,
    min_long_side: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    min_side: int = MIN_SIDE,
) -> ReducedImage:
    """Decode image bytes like :func:`decode_image`, a JPEG at the largest reduction (2, 4 or
    8) that keeps its longer side at least ``min_long_side`` (default
    :func:`reader_long_side`) and its shorter side at least ``min_side`` pixels.

    Other types are decoded whole (factor 1). The limits apply to the photo's own size, from
    its header, before anything is decoded; the errors are those of :func:`decode_image`.
    """
    info = _check_limits(data, max_bytes, max_pixels, min_side)
    factor = 1
    if info.format is ImageFormat.JPEG:
        floor = reader_long_side() if min_long_side is None else min_long_side
        factor = reduction_factor(info.width, info.height, floor, min_side)
    image = _decode(data, info, factor)
    if factor == 1:
        return ReducedImage(image, 1, (image.shape[1], image.shape[0]))
    turned = info.orientation >= 5
    size_wh = (info.height, info.width) if turned else (info.width, info.height)
    offset_xy = _overhang_xy(info.orientation, -info.width % factor, -info.height % factor)
    return ReducedImage(image, factor, size_wh, offset_xy)


def _read_file(file: Path, max_bytes: int) -> bytes:
    """The file's bytes, refused by its size on the file system before it is read."""
    try:
        size = file.stat().st_size
        if size > max_bytes:
            raise ImageTooLargeError(
                f"image of {size:,} bytes is over the limit of {max_bytes:,} bytes"
            )
        return file.read_bytes()
    except OSError as error:
        raise ImageFileError(f"{str(file)!r}: cannot read: {error.strerror or error}") from None
    except ImageError as error:
        raise type(error)(f"{str(file)!r}: {error}") from None


def load_image(
    path: str | Path,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    min_side: int = MIN_SIDE,
) -> NDArray[np.uint8]:
    """Read and decode an image file with the checks of :func:`decode_image`.

    The size is checked on the file system before the file is read. Every error names the file;
    a file that cannot be opened is ImageFileError.
    """
    file = Path(path)
    data = _read_file(file, max_bytes)
    try:
        return decode_image(data, max_bytes=max_bytes, max_pixels=max_pixels, min_side=min_side)
    except ImageError as error:
        raise type(error)(f"{str(file)!r}: {error}") from None


def load_reduced(
    path: str | Path,
    *,
    min_long_side: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    min_side: int = MIN_SIDE,
) -> ReducedImage:
    """Read an image file and decode it with :func:`decode_reduced`; the checks and the errors
    (each naming the file) are those of :func:`load_image`."""
    file = Path(path)
    data = _read_file(file, max_bytes)
    try:
        return decode_reduced(
            data,
            min_long_side=min_long_side,
            max_bytes=max_bytes,
            max_pixels=max_pixels,
            min_side=min_side,
        )
    except ImageError as error:
        raise type(error)(f"{str(file)!r}: {error}") from None
