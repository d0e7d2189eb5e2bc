"""Signs that a JPEG's image data is damaged, which the decoder itself only warns about.

libjpeg decodes a JPEG whose entropy-coded data is damaged or cut short without failing: it
prints ``Corrupt JPEG data: premature end of data segment`` on standard error (which OpenCV
does not report) and paints every block it could not decode in flat grey, or decodes garbage
after a flipped bit. Two checks catch this without a second decode:

1. :func:`walk_scans`, the one walk of the bytes from the first start-of-scan marker to the
   end-of-image marker (made by the header probe, ``vision.imageheader``, which counts the
   scans on it): inside the entropy-coded data a 0xFF byte is followed by 0x00 (a stuffed
   byte), a restart marker (RST0 to RST7, in turn, when a restart interval is set) or a
   marker that may lie between scans (tables, the next scan, comments, application data, the
   end of the image). Any other marker, a restart marker out of turn, or a single-scan JPEG
   with fewer restart markers than its restart interval needs, is damaged data (reliable: no
   valid JPEG has them);
2. :func:`ends_in_missing_blocks`, on the decoded array of a single-scan JPEG: libjpeg gives
   the blocks of every MCU after the one where its data ran out zero coefficients, which
   decode to exactly (128, 128, 128). Data cut short so leaves a grey region of one shape, the
   last MCUs in decoding order: from some MCU to the right edge of its row of MCUs, and all
   the rows below. A photo is never that exact neutral grey over a whole MCU (sensor noise,
   chroma); a drawing can be, so this check is a heuristic. It refuses only that shape, ending
   in code that does not repeat (identical flat MCUs encode the same each), and no more MCUs
   than a scan whose restart markers were all counted can lose (those of its last interval):
   a band down the right edge, a corner taller than a row of MCUs, a grey background ending in
   flat code or cut by restart markers are read.

Both run for every JPEG read (the walk in ``vision.imageheader.probe_image``, the check of the
array in ``vision.imageio.decode_checked``): on a 12-megapixel photo the walk, which counts the
scans anyway, takes about 0.6 ms and the check of the array microseconds
(``benchmarks/bench_jpeg_checks.py``).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["DamagedScanError", "ScanWalk", "ends_in_missing_blocks", "mcu_size", "walk_scans"]


class DamagedScanError(ValueError):
    """Scan data no valid JPEG has, or cut short (the message names what and where)."""


_MARKER = re.compile(rb"\xff[^\x00\xd0-\xd7\xff]")
"""A marker other than a restart marker (0xFF fill bytes before it are skipped: the match is on
the last 0xFF; a 0xFF in entropy-coded data is stuffed with 0x00)."""
_RESTART = re.compile(rb"\xff([\xd0-\xd7])")
"""A restart marker, RST0 to RST7 (the group: its second byte)."""
_CYCLE = bytes(range(0xD0, 0xD8))

_BETWEEN_SCANS = frozenset({0xC4, 0xCC, 0xD9, 0xDA, 0xDB, 0xDC, 0xDD, 0xFE, *range(0xE0, 0xF0)})
"""Markers that may follow a scan: DHT, DAC, EOI, SOS, DQT, DNL, DRI, COM and APP0-APP15."""

_RST0, _EOI, _SOS, _DRI = 0xD0, 0xD9, 0xDA, 0xDD
TAIL_BYTES = 32
"""The bytes of code before the end-of-image marker looked at for a repeating pattern: of a
period of at most half of them, over at least :data:`_REPEAT_BYTES` bytes. Every MCU of a flat
area has the same code (the DC unchanged, no AC coefficient): 32 bits in the standard tables
for a 4:2:0 MCU, 14 for a 4:4:4 one, 6 for a one-channel block, so the data of an image that
ends in four such 4:2:0 MCUs (64 pixels along the bottom edge), twelve 4:4:4 ones or sixteen
blocks of one channel ends in a repeating code. The code of a photo's blocks does not repeat
(a chance of about one in 2**32 over 8 bytes)."""
_REPEAT_BYTES = 8
_GREY = 128
"""What a block without coefficients decodes to, in every channel (the level shift)."""
_BLEND = 1
"""Pixels at the edge of a missing region that may differ from grey: the decoder's chroma
upsampling blends each pixel with its neighbour's chroma sample."""


@dataclass(frozen=True, slots=True)
class ScanWalk:
    """What the walk of the scan data found: the scans, the offset of the end-of-image marker
    and, for a single scan whose restart markers were counted against its MCUs, the MCUs of its
    last restart interval (the interval, or fewer when the interval does not divide the MCUs;
    0 otherwise)."""

    scans: int
    end: int
    last_interval_mcus: int


def mcu_size(sampling: tuple[tuple[int, int], ...]) -> tuple[int, int]:
    """(width, height) in pixels of a scan's MCU holding every component of ``sampling`` (each
    component's horizontal and vertical sampling factors): 8 x 8 for one component."""
    if len(sampling) <= 1:
        return 8, 8
    return 8 * max(max(h for h, _ in sampling), 1), 8 * max(max(v for _, v in sampling), 1)


def _scan_mcus(
    size: tuple[int, int], sampling: tuple[tuple[int, int], ...], in_scan: int, interval: int
) -> int | None:
    """The MCUs of a scan of ``in_scan`` components, when it holds every component of the frame
    and a restart interval is set (else None: a progressive or non-interleaved scan, or one
    without restart markers, is not counted)."""
    if interval <= 0 or not sampling or in_scan != len(sampling):
        return None
    mcu_width, mcu_height = mcu_size(sampling)
    return -(-size[0] // mcu_width) * -(-size[1] // mcu_height)


def _check_restart_order(data: bytes, offset: int, restarts: bytes, seen: int) -> None:
    """DamagedScanError unless ``restarts``, the restart markers' second bytes from ``offset``
    on, go on in turn after ``seen`` restart markers of the scan."""
    start = seen % 8
    expected = (_CYCLE[start:] + _CYCLE * (len(restarts) // 8 + 1))[: len(restarts)]
    if restarts == expected:
        return
    wrong = next(
        i for i, (got, due) in enumerate(zip(restarts, expected, strict=True)) if got != due
    )
    at = next(itertools.islice(_RESTART.finditer(data, offset), wrong, None)).start()
    raise DamagedScanError(
        f"corrupt JPEG: restart marker {restarts[wrong] - _RST0} at byte {at:,} where "
        f"{expected[wrong] - _RST0} was due (damaged image data)"
    )


def walk_scans(
    data: bytes,
    offset: int,
    size: tuple[int, int],
    sampling: tuple[tuple[int, int], ...],
    interval: int,
) -> ScanWalk:
    """Walk a JPEG's scans from the start-of-scan marker at ``offset`` to the end-of-image
    marker; ``size`` (width, height), ``sampling`` and ``interval`` (the restart interval set
    before the first scan) come from the header.

    Segments between the scans (a progressive JPEG's tables) are skipped by their length, and
    nothing after the end of the image is looked at: a phone's motion photo carries its video
    there. DamagedScanError for a marker that may not lie in or between scans, a restart
    marker out of turn, a single-scan JPEG with fewer restart markers than its MCUs need, or
    no end-of-image marker.
    """
    scans, seen, due, last_mcus = 0, 0, None, 0
    while (found := _MARKER.search(data, offset)) is not None:
        at, marker = found.start(), data[found.start() + 1]
        if interval > 0:  # the restart markers since the last marker (thousands in a photo)
            restarts = b"".join(_RESTART.findall(data, offset, at))
            _check_restart_order(data, offset, restarts, seen)
            seen += len(restarts)
        if marker not in _BETWEEN_SCANS:
            raise DamagedScanError(
                f"corrupt JPEG: marker 0xFF{marker:02X} inside the image data at byte {at:,} "
                "(damaged image data)"
            )
        if marker == _EOI:
            if scans == 1 and due is not None and seen < due:
                raise DamagedScanError(
                    f"corrupt JPEG: the image data ends after {seen + 1:,} of its {due + 1:,} "
                    "restart intervals (premature end of the image data)"
                )
            return ScanWalk(scans, at, last_mcus if scans == 1 and due is not None else 0)
        if at + 4 > len(data):
            break
        length = int.from_bytes(data[at + 2 : at + 4], "big")
        if marker == _DRI and length >= 4 and at + 6 <= len(data):
            interval = int.from_bytes(data[at + 4 : at + 6], "big")
        elif marker == _SOS:
            scans, seen, due = scans + 1, 0, None
            in_scan = data[at + 4] if at + 4 < len(data) else 0
            units = _scan_mcus(size, sampling, in_scan, interval)
            if units is not None:  # a marker after every interval but the last
                due = -(-units // interval) - 1
                last_mcus = units - due * interval
        offset = at + 2 + length
    raise DamagedScanError(
        f"truncated JPEG: the end-of-image marker is missing ({len(data)} bytes received)"
    )


def _repeats(tail: bytes) -> bool:
    """Whether ``tail`` ends in a code that repeats, with a period of at most half its length,
    over twice the period or :data:`_REPEAT_BYTES` (the longer): the code of identical
    blocks (an encoded flat area), not that of a photo's blocks."""
    for period in range(1, len(tail) // 2 + 1):
        length = max(_REPEAT_BYTES, 2 * period)
        if len(tail) >= length and tail[-length + period :] == tail[-length:-period]:
            return True
    return False


def _grey_run(line: NDArray[np.generic]) -> int:
    """Where the run of exact grey that ends ``line`` (pixels, or pixels of channels) starts."""
    grey = line == _GREY
    if grey.ndim > 1:
        grey = grey.all(axis=-1)
    other = np.flatnonzero(~grey)
    return int(other[-1]) + 1 if other.size else 0


def _on_grid(edge: int, unit: int, lead: int = 0) -> bool:
    """Whether ``edge`` lies on a multiple of ``unit`` (or the blended pixels after one, or the
    ``lead`` pixels before one)."""
    return edge % unit <= _BLEND or edge % unit >= unit - lead


def ends_in_missing_blocks(
    decoded: NDArray[np.generic],
    factor: int,
    scan_end: bytes,
    mcu_wh: tuple[int, int] = (8, 8),
    max_missing: int | None = None,
) -> bool:
    """Whether a JPEG decoded at ``1 / factor`` ends in MCUs (of ``mcu_wh`` stored pixels) the
    decoder had no data for.

    Its bottom-right ``max(2, 8 // factor)`` pixels square is exactly (128, 128, 128) (grey:
    128), the value of a block without coefficients, while its top-left one is not (an image
    that is that grey everywhere is so); ``scan_end``, the bytes before the end-of-image marker,
    are no repeating code (:data:`TAIL_BYTES` of them: an area of identical MCUs encoded flat
    ends so); and the grey has the shape missing data leaves, the last MCUs in decoding order:
    the grey up the right edge begins on the MCU grid and the grey along the bottom edge on it
    or less than half an MCU before it (the MCU where the data ran out is decoded from the zero
    bits the decoder pads with: after a restart marker, near that grey and at places exactly
    it), and when the grey reaches above the last row of MCUs the bottom edge is grey across (a
    band down the right edge, or a grey corner taller than a row of MCUs, is not so).
    ``max_missing``: the most MCUs that can be missing (a scan whose restart markers were all
    counted can only lose the MCUs of its last interval, all of them when the data ends at its
    last restart marker); a larger grey region is no missing data. 8-bit samples only.
    """
    if decoded.dtype != np.uint8 or decoded.ndim < 2:
        return False
    side = max(2, 8 // factor)
    rows, columns = decoded.shape[:2]
    if rows < side or columns < side:
        return False
    if not (decoded[-side:, -side:] == _GREY).all() or (decoded[:side, :side] == _GREY).all():
        return False
    unit_w, unit_h = max(1, mcu_wh[0] // factor), max(1, mcu_wh[1] // factor)
    top, left = _grey_run(decoded[:, -1]), _grey_run(decoded[-1, :])
    lead = unit_w // 2  # (the MCU where the data ran out may end in that grey by chance)
    if not _on_grid(top, unit_h) or (left > _BLEND and not _on_grid(left, unit_w, lead)):
        return False
    row, last_row = top // unit_h, (rows - 1) // unit_h
    if row < last_row and left > _BLEND:
        return False  # grey up the right edge, not across the bottom: a band or a corner
    per_row = -(-columns // unit_w)
    least = per_row * (last_row - row) + (1 if row < last_row else per_row - left // unit_w)
    if max_missing is not None and least > max_missing:
        return False
    # (the last byte before the marker carries the encoder's padding bits)
    return not _repeats(scan_end[-TAIL_BYTES - 1 : -1])
