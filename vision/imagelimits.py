"""The limits an image meets before it is decoded, and what decoding it will cost in memory.

:func:`check_limits` runs on the encoded bytes and their header alone (``vision.imageheader``):

1. empty data, and data over ``max_bytes`` (default :data:`DEFAULT_MAX_BYTES`, 20 MiB), are
   refused without looking further;
2. the header's size over ``max_pixels`` (default :data:`DEFAULT_MAX_PIXELS`, 50 megapixels)
   is refused, and so is a side over :data:`MAX_SIDE` (1,000,000 px: what the decoders take)
   and a decoded array over ``max_decoded_bytes`` (default
   :data:`DEFAULT_MAX_DECODED_BYTES`, 200 MiB): pixels times channels times bytes per sample,
   so that a few hundred kilobytes of 16-bit RGBA PNG (a "decompression bomb" under the pixel
   limit) cost nothing; both are :class:`~vision.imageheader.TooManyPixelsError` (HTTP 413);
3. a side under ``min_side`` (default :data:`MIN_SIDE`, 32 px) is
   :class:`~vision.imageheader.ImageTooSmallError`: nothing can be read in it;
4. a JPEG of more than ``max_scans`` scans (default :data:`DEFAULT_MAX_SCANS`) is
   :class:`~vision.imageheader.TooManyScansError` (HTTP 413): cameras and encoders write 1
   (baseline) to about 12 (progressive), and each scan is a decoding pass over the whole image,
   so a few hundred kilobytes of 6,000 one-coefficient scans would cost half a minute of CPU.

:func:`decode_peak_bytes` is the memory that decoding and normalising an image takes at its
peak, from the header: what a caller that decodes many images at once (the HTTP service)
reserves before decoding one, so that their sum stays bounded.
"""

from __future__ import annotations

from vision.imageheader import (
    EmptyImageError,
    ImageInfo,
    ImageTooLargeError,
    ImageTooSmallError,
    TooManyPixelsError,
    TooManyScansError,
    probe_image,
)

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DECODED_BYTES",
    "DEFAULT_MAX_PIXELS",
    "DEFAULT_MAX_SCANS",
    "MAX_SIDE",
    "MIN_SIDE",
    "STRIP_BYTES",
    "check_limits",
    "decode_peak_bytes",
    "reduced_side",
]

DEFAULT_MAX_BYTES = 20 * 1024 * 1024
"""Largest accepted encoded image: 20 MiB."""
DEFAULT_MAX_PIXELS = 50_000_000
"""Largest accepted image area: 50 megapixels."""
DEFAULT_MAX_DECODED_BYTES = 200 * 1024 * 1024
"""Largest accepted decoded array: 200 MiB, a 50-megapixel photo of four 8-bit channels (a
16-bit RGBA image of 50 megapixels would be 400 MB)."""
MAX_SIDE = 1_000_000
"""Longest accepted side in pixels: libpng refuses a longer one (OpenCV's own limit, 2**20, is
just above it), so a thin strip under the pixel limit is refused by its side, not called
corrupt."""
MIN_SIDE = 32
"""Smallest accepted width and height in pixels: below it no card index can be read."""
DEFAULT_MAX_SCANS = 64
"""Most scans accepted in a JPEG: libjpeg's progressive script writes 10 (6 for grey), mozjpeg
and phone encoders up to about 20."""

STRIP_BYTES = 8 * 1024 * 1024
"""Most memory one strip of rows takes while an image is normalised to 8-bit BGR (the
conversion runs strip by strip, so it never holds a second full-size copy in wider types)."""


def reduced_side(side: int, factor: int) -> int:
    """A side decoded at ``1 / factor`` (libjpeg's rounding: up)."""
    return -(-side // factor)


def decode_peak_bytes(info: ImageInfo, factor: int = 1) -> int:
    """The most memory decoding the image (a JPEG reduced by ``factor``), normalising it to
    8-bit BGR and turning it upright takes at once, in bytes.

    OpenCV's decoders hold two arrays of the decoded size while they run (measured for every
    supported type: 2.0 to 2.4 times the array); the normalised copy (3 bytes a pixel) then
    lives beside the decoded array, and turning it by its EXIF orientation makes one more
    copy. The strips of the normalisation add at most :data:`STRIP_BYTES`. A JPEG of several
    scans also holds its whole-image coefficient buffer (``ImageInfo.coefficient_bytes``, at
    full size whatever ``factor``: a progressive 7000 x 7000 4:4:4 JPEG, 294 MB) while it is
    decoded.
    """
    pixels = reduced_side(info.width, factor) * reduced_side(info.height, factor)
    decoded = pixels * info.channels * info.sample_bytes
    upright = 3 * pixels
    peak = max(2 * decoded + decoded // 4 + info.coefficient_bytes, decoded + upright, 2 * upright)
    return peak + STRIP_BYTES


def check_limits(
    data: bytes,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES,
    min_side: int = MIN_SIDE,
    max_scans: int = DEFAULT_MAX_SCANS,
) -> ImageInfo:
    """The header of ``data`` after the checks that come before decoding (the module docstring).

    Raises EmptyImageError, ImageTooLargeError (over ``max_bytes``), UnsupportedImageTypeError,
    CorruptImageError (a damaged header), TooManyPixelsError (over ``max_pixels``,
    :data:`MAX_SIDE` or ``max_decoded_bytes``), TooManyScansError (a JPEG of more than
    ``max_scans`` scans), ImageTooSmallError (a side under ``min_side``).
    """
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
    if max(info.width, info.height) > MAX_SIDE:
        raise TooManyPixelsError(
            f"{info.format.name} of {info.width}x{info.height} pixels: a side over "
            f"{MAX_SIDE:,} pixels, more than the image decoders take"
        )
    if info.decoded_bytes > max_decoded_bytes:
        raise TooManyPixelsError(
            f"{info.describe()} decodes to {info.decoded_bytes:,} bytes, over the limit of "
            f"{max_decoded_bytes:,} bytes"
        )
    if info.scans > max_scans:
        raise TooManyScansError(
            f"JPEG of {info.scans:,} scans is over the limit of {max_scans} (a camera's "
            "progressive JPEG has about 10)"
        )
    if min(info.width, info.height) < min_side:
        raise ImageTooSmallError(
            f"{info.format.name} of {info.width}x{info.height} pixels is too small: "
            f"each side needs at least {min_side} pixels"
        )
    return info
