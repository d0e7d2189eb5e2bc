"""What an image's own header says, read before anything is decoded, and the image errors.

:func:`probe_image` tells the type from the leading bytes (never from a file name or a
content-type header): JPEG, PNG, WebP, BMP, GIF or TIFF, anything else is
:class:`UnsupportedImageTypeError` (named when it is a known type: a phone's HEIC photo, a PDF).
It reads the stored size (JPEG SOF, PNG IHDR, GIF logical screen, BMP info header, WebP VP8 /
VP8L / VP8X, TIFF IFD0), the EXIF orientation (a JPEG's APP1 segment, a PNG's ``eXIf`` chunk, a
WebP's ``EXIF`` chunk, a TIFF's own tag) and what one decoded pixel takes: the channels and the
bytes per sample that the decoder gives when it keeps the image as stored (PNG bit depth and
colour type, JPEG precision and components, BMP bits per pixel, TIFF bits and samples per pixel;
WebP and GIF at most four 8-bit channels). Where the header allows several answers (a palette
with or without transparency) the larger one is taken: :attr:`ImageInfo.decoded_bytes` is an
upper bound of the decoded array's size, so a limit on it holds.

Every refusal is an :class:`ImageError` (a ``ValueError``) with a short ``code`` that the HTTP
layer maps to a status, and a message that names the problem and the numbers involved.
"""

from __future__ import annotations

import enum
import re
import struct
from dataclasses import dataclass
from typing import ClassVar

from vision.gifscreen import gif_canvas_size
from vision.jpegdata import DamagedScanError, walk_scans

__all__ = [
    "CorruptImageError",
    "EmptyImageError",
    "ImageError",
    "ImageFileError",
    "ImageFormat",
    "ImageInfo",
    "ImageTooLargeError",
    "ImageTooSmallError",
    "NoImagesError",
    "TooManyPixelsError",
    "TooManyScansError",
    "UnsupportedImageTypeError",
    "probe_image",
]


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


class TooManyScansError(ImageError):
    """A multi-scan (progressive) JPEG of more scans than any camera writes: each scan is a
    pass of the decoder over the whole image, so thousands of them cost minutes of CPU."""

    code = "too_many_scans"


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
    """What the header says: the type, the stored size, the EXIF orientation (1 = upright), and
    the channels and bytes per sample of the array the decoder gives for the stored image (an
    upper bound where the header leaves a choice)."""

    format: ImageFormat
    width: int
    height: int
    orientation: int = 1
    channels: int = 3
    sample_bytes: int = 1
    scans: int = 1
    """JPEG: the scans of the image (a progressive JPEG has several, a camera's baseline one)."""
    coefficient_bytes: int = 0
    """JPEG of several scans: the DCT coefficients the decoder keeps for the whole image until
    the last scan (2 bytes a coefficient, every component at its own sampling), beside the
    decoded array; 0 for a single-scan image, decoded as it streams."""
    sampling: tuple[tuple[int, int], ...] = ()
    """JPEG: each component's horizontal and vertical sampling factors, from the frame header."""
    scan_end: int = 0
    """JPEG: the offset of the end-of-image marker, where the scan data ends."""
    last_interval_mcus: int = 0
    """JPEG of one scan whose restart markers were counted against its MCUs (all there, in
    turn): the MCUs of its last restart interval, the most it can have lost; 0 otherwise."""

    @property
    def pixels(self) -> int:
        """Width times height."""
        return self.width * self.height

    @property
    def decoded_bytes(self) -> int:
        """The size of the decoded array: pixels times channels times bytes per sample."""
        return self.pixels * self.channels * self.sample_bytes

    def describe(self) -> str:
        """``PNG of 7000x7000 pixels, 4 channels of 16 bits``: for messages."""
        return (
            f"{self.format.name} of {self.width}x{self.height} pixels, {self.channels} "
            f"channel{'s' if self.channels > 1 else ''} of {8 * self.sample_bytes} bits"
        )


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


def looks_like_image(head: bytes) -> bool:
    """Whether the leading bytes ``head`` (12 are enough) begin an image: one of the supported
    types, or one named as unsupported (HEIC, AVIF, PDF...), so that its refusal names it."""
    try:
        _sniff(head)
    except UnsupportedImageTypeError:
        return bool(_known_unsupported(head))
    return True


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
    if _SVG_START.match(data[:_SVG_HEAD_BYTES]):
        return "an SVG drawing"
    return ""


_SVG_HEAD_BYTES = 4096
_SVG_START = re.compile(
    rb"(?:\xef\xbb\xbf)?\s*(?:(?:<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>\[]*(?:\[.*?\])?\s*>)\s*)*<svg[\s/>]",
    re.DOTALL | re.IGNORECASE,
)
"""An SVG drawing's start: after a UTF-8 byte-order mark, an XML declaration, comments and a
document type (within the first 4 KiB), the ``<svg`` element."""


def _unpack(fmt: str, data: bytes, offset: int, what: str) -> tuple[int, ...]:
    """``struct.unpack_from`` that raises CorruptImageError when the data is too short."""
    try:
        return struct.unpack_from(fmt, data, offset)
    except struct.error:
        raise CorruptImageError(f"truncated {what} at byte {offset}") from None


@dataclass(frozen=True, slots=True)
class _TiffTags:
    """The tags of a TIFF structure's IFD0 that the probe needs (0 for a missing size tag)."""

    orientation: int = 1
    width: int = 0
    height: int = 0
    bits: int = 1
    samples: int = 1
    photometric: int = 2

    def decoded_layout(self) -> tuple[int, int]:
        """(channels, bytes per sample) of the decoded array: one channel for a grey image,
        else up to four (libtiff gives colour maps, YCbCr and CMYK as BGR or BGRA)."""
        grey = self.samples == 1 and self.photometric in (0, 1)
        return (1 if grey else max(4, self.samples)), max(1, (self.bits + 7) // 8)


def _tiff_tags(tiff: bytes, what: str) -> _TiffTags:
    """The orientation, size, bits per sample and samples per pixel of a TIFF structure's IFD0.

    Used for TIFF files and for the TIFF block inside a JPEG's EXIF segment.
    """
    order = "<" if tiff[:2] == b"II" else ">"
    (ifd,) = _unpack(order + "I", tiff, 4, what)
    (count,) = _unpack(order + "H", tiff, ifd, what)
    found: dict[int, int] = {}
    for entry in range(min(count, 1000)):
        start = ifd + 2 + 12 * entry
        tag, kind, values = _unpack(order + "HHI", tiff, start, what)
        # SHORT (3) values sit in the first two bytes of the value field, LONG (4) in all four;
        # more SHORTs than fit (BitsPerSample of an RGB image) sit where the field points
        value_format = order + ("H" if kind == 3 else "I")
        offset = start + 8
        if kind == 3 and values > 2:
            (offset,) = _unpack(order + "I", tiff, start + 8, what)
        (found[tag],) = _unpack(value_format, tiff, offset, what)
    orientation = found.get(0x0112, 1)
    return _TiffTags(
        orientation if 1 <= orientation <= 8 else 1,
        found.get(0x0100, 0),
        found.get(0x0101, 0),
        found.get(0x0102, 1),  # BitsPerSample (1 when missing, as the specification says)
        found.get(0x0115, 1),  # SamplesPerPixel
        found.get(0x0106, 2),  # PhotometricInterpretation
    )


_JPEG_SOF = frozenset(
    {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
)
_JPEG_STANDALONE = frozenset({0x01, *range(0xD0, 0xD8)})


def _coefficient_bytes(size: tuple[int, int], sampling: tuple[tuple[int, int], ...]) -> int:
    """What libjpeg's whole-image coefficient buffer holds for a multi-scan JPEG: every
    component's blocks at its sampling (padded to whole MCUs), 64 coefficients of 2 bytes."""
    if not sampling:
        return 0
    h_max = max(max(h for h, _ in sampling), 1)
    v_max = max(max(v for _, v in sampling), 1)
    width, height = size
    mcu_columns = -(-width // (8 * h_max))
    mcu_rows = -(-height // (8 * v_max))
    blocks = sum(mcu_columns * h * mcu_rows * v for h, v in sampling)
    return blocks * 64 * 2


def _probe_jpeg(data: bytes) -> ImageInfo:
    """Walk the JPEG segments up to the first scan (size and sampling from SOF, the restart
    interval from DRI, orientation from the first APP1 Exif segment), then the scan data to
    the end-of-image marker (``vision.jpegdata.walk_scans``: the scans, and damaged data)."""
    offset, size, orientation, layout, exif_seen, interval = 2, (0, 0), 1, (3, 1), False, 0
    sampling: tuple[tuple[int, int], ...] = ()
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
            precision, height, width, components = _unpack(
                ">BHHB", data, offset + 4, "JPEG frame header"
            )
            size = (width, height)
            sampling = tuple(
                (body[7 + 3 * i] >> 4, body[7 + 3 * i] & 0x0F)
                for i in range(components)
                if 8 + 3 * i < len(body)
            )
            # grey stays one channel, YCbCr and CMYK come out as BGR; 12-bit as 16-bit samples
            layout = (1 if components == 1 else 3, 2 if precision > 8 else 1)
        elif marker == 0xDD and len(body) >= 2:
            interval = int.from_bytes(body[:2], "big")
        elif marker == 0xE1 and body.startswith(b"Exif\x00\x00") and not exif_seen:
            # the first Exif block is the photo's, as viewers take it (an editor may append one)
            orientation, exif_seen = _exif_orientation(body[6:]), True
        elif marker == 0xDA:  # start of scan: the header is over
            if size == (0, 0):
                raise CorruptImageError("corrupt JPEG: image data before any frame header")
            try:
                walk = walk_scans(data, offset, size, sampling, interval)
            except DamagedScanError as error:
                raise CorruptImageError(str(error)) from None
            return ImageInfo(
                ImageFormat.JPEG,
                size[0],
                size[1],
                orientation,
                *layout,
                scans=walk.scans,
                coefficient_bytes=_coefficient_bytes(size, sampling) if walk.scans > 1 else 0,
                sampling=sampling,
                scan_end=walk.end,
                last_interval_mcus=walk.last_interval_mcus,
            )
        elif marker == 0xD9:
            raise CorruptImageError("corrupt JPEG: end of image before any image data")
        offset += 2 + length


def _exif_orientation(tiff: bytes) -> int:
    """The orientation in an EXIF TIFF block; 1 when it is missing or damaged."""
    if tiff[:4] not in (b"II*\x00", b"MM\x00*"):
        return 1
    try:
        return _tiff_tags(tiff, "Exif block").orientation
    except CorruptImageError:
        return 1  # a damaged Exif block only loses the orientation


def _png_chunks(data: bytes) -> tuple[int, bool]:
    """The orientation of a PNG's ``eXIf`` chunk (1 if none) and whether it has a ``tRNS``
    chunk (transparency: decoded with an alpha channel), walking the chunks up to IEND."""
    offset, orientation, transparent = 8, 1, False
    while offset + 8 <= len(data):
        length, name = struct.unpack_from(">I4s", data, offset)
        if name == b"eXIf":
            orientation = _exif_orientation(data[offset + 8 : offset + 8 + length])
        elif name == b"tRNS":
            transparent = True
        elif name == b"IEND":
            break
        offset += 12 + length
    return orientation, transparent


_PNG_CHANNELS = {0: 1, 2: 3, 3: 3, 4: 4, 6: 4}
"""Channels of the decoded array by PNG colour type (grey, RGB, palette, grey and alpha: BGRA,
RGBA); a ``tRNS`` chunk adds an alpha channel."""


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


def _probe_webp(data: bytes) -> tuple[int, int, int]:
    """(width, height, channels): four channels when the header announces alpha."""
    chunk = data[12:16]
    if chunk == b"VP8 ":
        if data[23:26] != b"\x9d\x01\x2a":
            raise CorruptImageError("corrupt WebP: bad VP8 start code")
        width, height = _unpack("<HH", data, 26, "WebP VP8 header")
        return width & 0x3FFF, height & 0x3FFF, 3
    if chunk == b"VP8L":
        if data[20:21] != b"\x2f":
            raise CorruptImageError("corrupt WebP: bad VP8L signature")
        (bits,) = _unpack("<I", data, 21, "WebP VP8L header")
        alpha = bits >> 28 & 1
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1, 4 if alpha else 3
    if chunk == b"VP8X":
        (flags,) = _unpack("<B", data, 20, "WebP VP8X header")
        low_w, high_w, low_h, high_h = _unpack("<HBHB", data, 24, "WebP VP8X header")
        return (low_w | high_w << 16) + 1, (low_h | high_h << 16) + 1, 4 if flags & 0x10 else 3
    raise CorruptImageError(f"corrupt WebP: unknown first chunk {chunk!r}")


def probe_image(data: bytes) -> ImageInfo:
    """The type, stored size, orientation and decoded layout (channels, bytes per sample) of
    encoded image bytes, from the header only.

    Raises UnsupportedImageTypeError for an unknown type and CorruptImageError for a header
    that is damaged or cut short.
    """
    kind = _sniff(data)
    if kind is ImageFormat.JPEG:
        return _probe_jpeg(data)
    orientation, channels, sample_bytes = 1, 3, 1
    if kind is ImageFormat.PNG:
        if data[12:16] != b"IHDR":
            raise CorruptImageError("corrupt PNG: the first chunk is not IHDR")
        width, height, depth, colour = _unpack(">IIBB", data, 16, "PNG header")
        orientation, transparent = _png_chunks(data)
        channels = 4 if transparent else _PNG_CHANNELS.get(colour, 4)
        sample_bytes = 2 if depth > 8 else 1
    elif kind is ImageFormat.GIF:
        screen = _unpack("<HH", data, 6, "GIF header")
        width, height = gif_canvas_size(data, (screen[0], screen[1]))  # a frame past the screen
        channels = 4  # (a frame may have a transparent colour)
    elif kind is ImageFormat.BMP:
        (header_size,) = _unpack("<I", data, 14, "BMP header")
        if header_size == 12:
            width, height, _, bits = _unpack("<HHHH", data, 18, "BMP header")
        else:
            signed_width, signed_height, _, bits = _unpack("<iiHH", data, 18, "BMP header")
            width, height = abs(signed_width), abs(signed_height)  # negative height: top-down
        channels = 4 if bits >= 32 else 3
    elif kind is ImageFormat.WEBP:
        width, height, channels = _probe_webp(data)
        orientation = _webp_orientation(data)
    else:
        tags = _tiff_tags(data, "TIFF header")
        orientation, width, height = tags.orientation, tags.width, tags.height
        channels, sample_bytes = tags.decoded_layout()
    if width <= 0 or height <= 0:
        raise CorruptImageError(f"corrupt {kind.name}: header gives size {width}x{height}")
    return ImageInfo(kind, width, height, orientation, channels, sample_bytes)
