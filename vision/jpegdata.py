"""Signs that a JPEG's image data is damaged, which the decoder itself only warns about.

libjpeg decodes a JPEG whose entropy-coded data is damaged or cut short without failing: it
prints ``Corrupt JPEG data: premature end of data segment`` on standard error (which OpenCV
does not report) and paints every block it could not decode in flat grey, or decodes garbage
after a flipped bit. Two checks catch this without a second decode:

1. :func:`check_scan_markers`, on the bytes before decoding: inside the entropy-coded data a
   0xFF byte is followed by 0x00 (a stuffed byte), a restart marker (RST0 to RST7, in turn,
   when the header sets a restart interval) or a marker that may lie between scans (tables,
   the next scan, comments, application data, the end of the image). Any other marker, a
   restart marker out of turn, or a single-scan JPEG with fewer restart markers than its
   restart interval needs, is damaged data (reliable: no valid JPEG has them);
2. :func:`ends_in_missing_blocks`, on the decoded array: libjpeg gives a block it had no data
   for zero coefficients, which decode to exactly (128, 128, 128). When the data ends early
   the last blocks are missing, so the bottom-right corner is that grey to the last bit. A
   photo's corner is never that exact neutral grey over a whole block (sensor noise, chroma);
   a drawing with a mid-grey background can be, so this check is a heuristic, refused with a
   message that says what was seen.

Both run in :func:`vision.imageio.decode_checked` for every JPEG; together they cost about a
millisecond on a 12-megapixel photo (``benchmarks/bench_jpeg_checks.py``).
"""

from __future__ import annotations

import re

import numpy as np
from numpy.typing import NDArray

from vision.imageheader import CorruptImageError

__all__ = ["check_scan_markers", "ends_in_missing_blocks"]

_MARKER = re.compile(rb"\xff[^\x00\xff]")
"""A marker (0xFF fill bytes before it are skipped: the match is on the last 0xFF)."""

_BETWEEN_SCANS = frozenset({0xC4, 0xCC, 0xD9, 0xDA, 0xDB, 0xDC, 0xDD, 0xFE, *range(0xE0, 0xF0)})
"""Markers that may follow a scan: DHT, DAC, EOI, SOS, DQT, DNL, DRI, COM and APP0-APP15."""

_RST0 = 0xD0
_SOF_MARKERS = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD})
TAIL_BYTES = 32
"""The bytes of code before the end-of-image marker looked at for a repeating pattern (of at
most half their length): the code of a 4:2:0 MCU of flat grey is 4 bytes in the standard
tables, of a one-channel block 3 bytes, so about eight flat MCUs or more end the data so; the
code of a photo's blocks never repeats over 16 bytes."""
_GREY = 128
"""What a block without coefficients decodes to, in every channel (the level shift)."""


def _length(data: bytes, at: int) -> int:
    """The length of the segment whose marker is at ``at`` (CorruptImageError past the end)."""
    if at + 4 > len(data):
        raise CorruptImageError(f"truncated JPEG: a segment header is cut at byte {at:,}")
    return int.from_bytes(data[at + 2 : at + 4], "big")


def _header(data: bytes) -> tuple[int, int, list[tuple[int, int]], int, int]:
    """Width, height, each component's sampling, the restart interval and the offset of the
    first start-of-scan marker, from the segments before it (the header is checked already)."""
    offset, width, height, interval = 2, 0, 0, 0
    sampling: list[tuple[int, int]] = []
    while (found := _MARKER.search(data, offset)) is not None:
        at, marker = found.start(), data[found.start() + 1]
        if marker == 0xDA:
            return width, height, sampling, interval, at
        if _RST0 <= marker <= 0xD8 or marker == 0x01:  # standalone markers
            offset = at + 2
            continue
        length = _length(data, at)
        body = data[at + 4 : at + 2 + length]
        if marker in _SOF_MARKERS and len(body) >= 6:
            height, width = int.from_bytes(body[1:3], "big"), int.from_bytes(body[3:5], "big")
            sampling = [(body[7 + 3 * i] >> 4, body[7 + 3 * i] & 0x0F) for i in range(body[5])]
            sampling = sampling[: max(0, (len(body) - 6) // 3)]
        elif marker == 0xDD and len(body) >= 2:
            interval = int.from_bytes(body[:2], "big")
        offset = at + 2 + length
    raise CorruptImageError("truncated JPEG: the header ends before the image data")


def _restart_markers_due(
    width: int, height: int, sampling: list[tuple[int, int]], in_scan: int, interval: int
) -> int | None:
    """The restart markers a scan of ``in_scan`` components needs, when it holds every
    component of the frame (else None: a progressive or non-interleaved scan is not counted)."""
    if interval <= 0 or not sampling or in_scan != len(sampling):
        return None
    if len(sampling) == 1:
        units = -(-width // 8) * -(-height // 8)
    else:
        h_max = max(max(h for h, _ in sampling), 1)
        v_max = max(max(v for _, v in sampling), 1)
        units = -(-width // (8 * h_max)) * -(-height // (8 * v_max))
    return -(-units // interval) - 1


def check_scan_markers(data: bytes) -> int:
    """Refuse a JPEG whose entropy-coded data holds a marker no valid JPEG has there.

    CorruptImageError, naming the marker and its byte, for a marker that may not lie in or
    between scans, a restart marker out of turn, or (a single-scan JPEG with a restart
    interval) fewer restart markers than its blocks need. Stops at the end-of-image marker
    and returns its offset (what follows it, a motion photo's video, is not looked at; the
    length of ``data`` when there is none).
    """
    width, height, sampling, interval, offset = _header(data)
    scans, due, seen, end = 0, None, 0, len(data)
    while (found := _MARKER.search(data, offset)) is not None:
        at, marker = found.start(), data[found.start() + 1]
        if _RST0 <= marker <= _RST0 + 7:
            if interval > 0 and marker - _RST0 != seen % 8:
                raise CorruptImageError(
                    f"corrupt JPEG: restart marker {marker - _RST0} at byte {at:,} where "
                    f"{seen % 8} was due (damaged image data)"
                )
            seen += 1
            offset = at + 2
            continue
        if marker not in _BETWEEN_SCANS:
            raise CorruptImageError(
                f"corrupt JPEG: marker 0xFF{marker:02X} inside the image data at byte {at:,} "
                "(damaged image data)"
            )
        if marker == 0xD9:
            end = at
            break
        length = _length(data, at)
        if marker == 0xDD and length >= 4:
            interval = int.from_bytes(data[at + 4 : at + 6], "big")
        if marker == 0xDA:
            scans, seen = scans + 1, 0
            in_scan = data[at + 4] if at + 4 < len(data) else 0
            due = _restart_markers_due(width, height, sampling, in_scan, interval)
        offset = at + 2 + length
    if scans == 1 and due is not None and seen < due:
        raise CorruptImageError(
            f"corrupt JPEG: the image data ends after {seen + 1:,} of its {due + 1:,} restart "
            "intervals (premature end of the image data)"
        )
    return end


def _repeats(tail: bytes) -> bool:
    """Whether ``tail`` repeats with a period of at most half its length: the code of many
    identical blocks (an encoded flat area), never that of a photo's blocks."""
    return any(tail[period:] == tail[:-period] for period in range(1, len(tail) // 2 + 1))


def ends_in_missing_blocks(decoded: NDArray[np.generic], factor: int, scan_end: bytes) -> bool:
    """Whether a JPEG decoded at ``1 / factor`` ends in blocks the decoder had no data for.

    Its bottom-right ``max(2, 8 // factor)`` pixels square is exactly (128, 128, 128) (grey:
    128), the value of a block without coefficients, while its top-left one is not (an image
    that is that grey everywhere is so), and ``scan_end``, the bytes before the end-of-image
    marker, are no repeating code (:data:`TAIL_BYTES` of them: an area of identical blocks
    encoded flat ends so). 8-bit samples only.
    """
    if decoded.dtype != np.uint8 or decoded.ndim < 2:
        return False
    side = max(2, 8 // factor)
    if decoded.shape[0] < side or decoded.shape[1] < side:
        return False
    if not (decoded[-side:, -side:] == _GREY).all() or (decoded[:side, :side] == _GREY).all():
        return False
    # (the last byte before the marker carries the encoder's padding bits)
    return not _repeats(scan_end[-TAIL_BYTES - 1 : -1])
