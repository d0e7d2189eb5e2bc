"""Image bytes to a BGR ``uint8`` array, with the limits checked before anything is decoded.

:func:`decode_image` is the one door through which uploaded and loaded images enter the
recognizer. In order, it:

1. checks the limits on the encoded bytes and their header (``vision.imagelimits``): refuses
   empty data and data over ``max_bytes`` (default 20 MiB) without looking further; tells the
   type from the leading bytes (``vision.imageheader``: JPEG, PNG, WebP, BMP, GIF or TIFF,
   anything else is :class:`UnsupportedImageTypeError`); refuses more than ``max_pixels``
   (default 50 megapixels) and a decoded array over ``max_decoded_bytes`` (default 200 MiB:
   pixels times channels times bytes per sample, from the header) before any decoding, so a
   few kilobytes that would expand into a huge bitmap (a "decompression bomb") cost nothing; a
   side under ``min_side`` (default 32 px) is :class:`ImageTooSmallError`;
2. refuses a JPEG without its end-of-image marker after the scan data (a truncated upload that
   the decoder would otherwise half-paint in grey), and one whose image data is damaged or
   ends early before its end-of-image marker (``vision.jpegdata``: a marker no valid JPEG has
   in its scan data, restart markers out of turn or too few, found on the header's walk; after
   decoding, last MCUs decoded to the exact grey of missing data, in the shape it leaves),
   which the decoder would only warn about;
3. decodes with OpenCV as stored (``IMREAD_UNCHANGED``, orientation ignored; a PNG given only
   the chunks that make its pixels, their CRCs checked, so that libpng prints nothing on
   standard error: :mod:`vision.png_chunks`; a GIF's logical screen grown to hold its first
   frame: :mod:`vision.gifscreen`) and normalises,
   strip by strip (never a second full-size array in a wider type): greyscale becomes three
   equal channels; an alpha channel is composited on white (transparent parts of a scan read
   as a white table, not black), unless a BMP's or TIFF's is zero everywhere (a fourth channel
   that holds no transparency, as a TIFF's unspecified extra sample or a BMP's unused alpha
   bytes: dropped); 16-bit samples are scaled to 8 bits (``round(v / 257)``);
   CMYK JPEG is converted by the decoder; an animated GIF, APNG or multi-page TIFF gives its
   first frame;
4. turns the image upright by its EXIF orientation tag (1..8), read here from a JPEG's APP1
   segment, a PNG's ``eXIf`` chunk or a WebP's ``EXIF`` chunk rather than left to the decoder,
   so the rule is one tested function (:func:`apply_orientation`); OpenCV's TIFF decoder
   (libtiff) applies a TIFF's own orientation tag whatever the flags, so TIFF is left to it.

The memory this takes at its peak is ``vision.imagelimits.decode_peak_bytes`` of the header.

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

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.file_names import quoted_name
from vision.gifscreen import fit_screen
from vision.imageheader import (
    CorruptImageError,
    EmptyImageError,
    ImageError,
    ImageFileError,
    ImageFormat,
    ImageInfo,
    ImageTooLargeError,
    ImageTooSmallError,
    NoImagesError,
    TooManyPixelsError,
    UnsupportedImageTypeError,
    probe_image,
)
from vision.imagelimits import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_DECODED_BYTES,
    DEFAULT_MAX_PIXELS,
    MIN_SIDE,
    STRIP_BYTES,
    check_limits,
    reduced_side,
)
from vision.jpegdata import ends_in_missing_blocks, mcu_size
from vision.png_chunks import PngChunkError, decoder_png
from vision.settings import PANORAMA, ReaderSettings

if TYPE_CHECKING:
    from vision.detections import Reading

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DECODED_BYTES",
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
    "check_limits",
    "decode_checked",
    "decode_image",
    "decode_reduced",
    "load_image",
    "load_reduced",
    "probe_image",
    "reader_long_side",
    "reduced_factor",
    "reduction_factor",
    "write_image",
    "writes_images",
]


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


def _strip_to_bgr8(strip: NDArray[np.generic]) -> NDArray[np.uint8]:
    """One strip of rows (H, W, C) of 8- or 16-bit samples, C in 1, 3 or 4, as 8-bit BGR."""
    if strip.dtype == np.uint16:
        strip = ((strip.astype(np.uint32) + 128) // 257).astype(np.uint8)
    pixels = _u8(strip)
    channels = pixels.shape[2]
    if channels == 1:
        return _u8(cv2.cvtColor(pixels[:, :, 0], cv2.COLOR_GRAY2BGR))
    if channels == 3:
        return pixels
    colour = pixels[:, :, :3].astype(np.float32)
    alpha = pixels[:, :, 3:4].astype(np.float32) / np.float32(255.0)
    return _u8(colour * alpha + np.float32(255.0) * (1 - alpha) + np.float32(0.5))


_ALPHA_MAYBE_UNUSED = frozenset({ImageFormat.BMP, ImageFormat.TIFF})
"""Formats whose fourth channel may hold no transparency at all (a PNG, WebP or GIF that is
transparent everywhere is meant so)."""


def _to_bgr8(image: NDArray[np.generic], kind: ImageFormat) -> NDArray[np.uint8]:
    """Normalise a decoded array to three 8-bit BGR channels (see the module docstring).

    An 8-bit BGR array is returned as it is; any other is converted into one new array, a
    strip of rows at a time, so the temporaries of the conversion stay under STRIP_BYTES.
    """
    if image.dtype not in (np.uint8, np.uint16):
        raise UnsupportedImageTypeError(
            f"unsupported {kind.name} sample type {image.dtype}: 8- or 16-bit integers only"
        )
    pixels = image[:, :, np.newaxis] if image.ndim == 2 else image
    height, width, channels = pixels.shape
    if channels not in (1, 3, 4):
        raise UnsupportedImageTypeError(f"unsupported {kind.name} with {channels} channels")
    if channels == 3 and pixels.dtype == np.uint8:
        return np.ascontiguousarray(_u8(pixels))
    if channels == 4 and kind in _ALPHA_MAYBE_UNUSED and not pixels[:, :, 3].any():
        # zero alpha everywhere holds no transparency: a TIFF's unspecified fourth sample, a
        # BMP's unused alpha bytes; composited, the photo would be blank white
        pixels = pixels[:, :, :3]
        if pixels.dtype == np.uint8:
            return np.ascontiguousarray(_u8(pixels))
    # the widest temporaries: float32 colour and its products, 4 bytes a sample
    rows = max(1, STRIP_BYTES // (width * 4 * 4 * 3))
    upright = np.empty((height, width, 3), dtype=np.uint8)
    for top in range(0, height, rows):
        upright[top : top + rows] = _strip_to_bgr8(pixels[top : top + rows])
    return upright


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


def _refuse_damaged_jpeg(
    data: bytes, info: ImageInfo, decoded: NDArray[np.generic], factor: int
) -> None:
    """CorruptImageError for a single-scan JPEG whose last MCUs the decoder had no data for:
    ``decoded``, the array decoded at ``1 / factor``, ends in their flat grey, in the shape
    missing data leaves, and the code before the end-of-image marker is not that of a flat
    area (``vision.jpegdata``). A scan whose restart markers were all counted can only have
    lost MCUs of its last interval (every one of them when it ends at its last marker)."""
    tail = data[max(0, info.scan_end - 256) : info.scan_end]
    missing = info.last_interval_mcus or None
    if ends_in_missing_blocks(decoded, factor, tail, mcu_size(info.sampling), missing):
        raise CorruptImageError(
            "corrupt JPEG: the image data ends before its last blocks, which decode to the "
            "flat grey (128, 128, 128) a decoder paints where data is missing (a damaged or "
            "cut-short upload)"
        )


def _decode(data: bytes, info: ImageInfo, factor: int) -> NDArray[np.uint8]:
    """Decode checked bytes (a JPEG reduced by ``factor``), normalise and turn upright."""
    if info.format is ImageFormat.GIF:  # a first frame past the logical screen grows it
        data = fit_screen(data, (info.width, info.height))
    if info.format is ImageFormat.PNG:  # nothing for libpng to print on standard error
        try:
            data = decoder_png(data)
        except PngChunkError as error:
            raise CorruptImageError(f"corrupt PNG: {error}") from None
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
    if info.format is ImageFormat.JPEG and info.scans == 1:
        # (a JPEG of several scans has its first, the one that sets each block's level, whole)
        _refuse_damaged_jpeg(data, info, decoded, factor)
    stored = {(reduced_side(info.height, factor), reduced_side(info.width, factor))}
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
    del decoded  # (freed before the upright copy is made, when normalising made a new array)
    if info.format is ImageFormat.TIFF:
        return image  # libtiff turns TIFF images upright itself, whatever the flags say
    return apply_orientation(image, info.orientation)


def decode_image(
    data: bytes,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES,
    min_side: int = MIN_SIDE,
) -> NDArray[np.uint8]:
    """Decode image bytes into an upright (H, W, 3) BGR ``uint8`` array; see the module docstring.

    Raises, all ImageError: EmptyImageError, ImageTooLargeError (over ``max_bytes``),
    UnsupportedImageTypeError, CorruptImageError (damaged, truncated), TooManyPixelsError (over
    ``max_pixels`` or ``max_decoded_bytes`` by the header, before decoding), ImageTooSmallError
    (a side under ``min_side``).
    """
    info = check_limits(
        data,
        max_bytes=max_bytes,
        max_pixels=max_pixels,
        max_decoded_bytes=max_decoded_bytes,
        min_side=min_side,
    )
    return decode_checked(data, info).image


def reduced_factor(
    info: ImageInfo, min_long_side: int | None = None, min_side: int = MIN_SIDE
) -> int:
    """The factor :func:`decode_reduced` decodes the image of header ``info`` at: 1 but for a
    JPEG (:func:`reduction_factor`; ``min_long_side`` None: :func:`reader_long_side`); a
    panorama's shorter side is kept at least three quarters of ``min_long_side`` too (the
    height of a 4:3 photo's; ``vision.settings.PANORAMA``)."""
    if info.format is not ImageFormat.JPEG:
        return 1
    floor = reader_long_side() if min_long_side is None else min_long_side
    if max(info.width, info.height) > PANORAMA * min(info.width, info.height):
        # a panorama keeps the height of a 4:3 photo: its cards stay as large as that one's
        min_side = max(min_side, -(-floor * 3 // 4))
    return reduction_factor(info.width, info.height, floor, min_side)


def decode_reduced(
    data: bytes,
    *,
    min_long_side: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES,
    min_side: int = MIN_SIDE,
) -> ReducedImage:
    """Decode image bytes like :func:`decode_image`, a JPEG at the largest reduction (2, 4 or
    8) that keeps its longer side at least ``min_long_side`` (default
    :func:`reader_long_side`) and its shorter side at least ``min_side`` pixels (a panorama's
    at least three quarters of ``min_long_side``: the height of a 4:3 photo).

    Other types are decoded whole (factor 1). The limits apply to the photo's own size, from
    its header, before anything is decoded; the errors are those of :func:`decode_image`.
    """
    info = check_limits(
        data,
        max_bytes=max_bytes,
        max_pixels=max_pixels,
        max_decoded_bytes=max_decoded_bytes,
        min_side=min_side,
    )
    return decode_checked(data, info, reduced_factor(info, min_long_side, min_side))


def decode_checked(data: bytes, info: ImageInfo, factor: int = 1) -> ReducedImage:
    """Decode ``data`` whose header walk :func:`check_limits` already made and passed (its
    ``info``), at ``factor`` (1, or for a JPEG :func:`reduced_factor` of ``info``): the one
    walk of the header serves the limits, the decoding budget and the decoder, so a caller
    that holds memory for the decode (``decode_peak_bytes(info, factor)``) reads the header
    once. CorruptImageError when the data does not decode."""
    image = _decode(data, info, factor)
    if factor == 1:
        return ReducedImage(image, 1, (image.shape[1], image.shape[0]))
    turned = info.orientation >= 5
    size_wh = (info.height, info.width) if turned else (info.width, info.height)
    offset_xy = _overhang_xy(info.orientation, -info.width % factor, -info.height % factor)
    return ReducedImage(image, factor, size_wh, offset_xy)


def _read_file(file: Path, max_bytes: int) -> bytes:
    """The file's bytes, refused by its size on the file system before it is read; a pipe or
    a device, which has no size there, is refused once more than ``max_bytes`` have come."""
    try:
        size = file.stat().st_size
        if size > max_bytes:
            raise ImageTooLargeError(
                f"image of {size:,} bytes is over the limit of {max_bytes:,} bytes"
            )
        with file.open("rb") as stream:
            data = stream.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise ImageTooLargeError(f"image is over the limit of {max_bytes:,} bytes")
        return data
    except OSError as error:
        reason = error.strerror or error
        raise ImageFileError(f"{quoted_name(file)}: cannot read: {reason}") from None
    except ImageError as error:
        raise type(error)(f"{quoted_name(file)}: {error}") from None


def load_image(
    path: str | Path,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES,
    min_side: int = MIN_SIDE,
) -> NDArray[np.uint8]:
    """Read and decode an image file with the checks of :func:`decode_image`.

    The size is checked on the file system before the file is read. Every error names the file;
    a file that cannot be opened is ImageFileError.
    """
    file = Path(path)
    data = _read_file(file, max_bytes)
    try:
        return decode_image(
            data,
            max_bytes=max_bytes,
            max_pixels=max_pixels,
            max_decoded_bytes=max_decoded_bytes,
            min_side=min_side,
        )
    except ImageError as error:
        raise type(error)(f"{quoted_name(file)}: {error}") from None


def load_reduced(
    path: str | Path,
    *,
    min_long_side: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES,
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
            max_decoded_bytes=max_decoded_bytes,
            min_side=min_side,
        )
    except ImageError as error:
        raise type(error)(f"{quoted_name(file)}: {error}") from None


def writes_images(path: str | Path) -> bool:
    """Whether :func:`write_image` has an image format for ``path``'s extension (``.png``,
    ``.jpg``...), whatever the rest of its name."""
    import cv2

    return bool(cv2.haveImageWriter("image" + Path(path).suffix))


def write_image(path: str | Path, image: NDArray[np.uint8]) -> bool:
    """Write a BGR image to ``path`` in the format its extension names, as ``cv2.imwrite``
    does, for any name the file system takes (OpenCV's own writer stops the process on a name
    that is not UTF-8 text); False when the extension names no image format or the image does
    not encode in it, OSError (with the path and the reason) when the file cannot be written."""
    import cv2

    file = Path(path)
    if not writes_images(file):
        return False
    try:
        ok, data = cv2.imencode(file.suffix, image)
    except cv2.error:
        return False
    if not ok:
        return False
    file.write_bytes(data.tobytes())
    return True
