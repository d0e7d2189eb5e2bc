"""A GIF's logical screen grown to hold its first frame, as browsers and Pillow show it.

A GIF whose first frame reaches past its logical screen (an encoder that wrote the screen of a
thumbnail, or the frame's size only in the image descriptor) is shown whole by browsers and
Pillow, on a canvas grown to the frame; OpenCV's decoder refuses it (``grfmt_gif.cpp``, with an
error line on standard error). :func:`gif_canvas_size` gives the size the image is shown at,
which the limits check (a 64 x 64 screen holding a 20,000 x 20,000 frame is refused by its
pixels from the header, before anything is decoded), and :func:`fit_screen` writes it into the
header for the decoder.
"""

from __future__ import annotations

import struct

__all__ = ["fit_screen", "gif_canvas_size"]

_EXTENSION, _IMAGE, _TRAILER = 0x21, 0x2C, 0x3B
MAX_SUB_BLOCKS = 65_536
"""Extensions and their sub-blocks walked before the first frame's descriptor, at most: about
ten milliseconds of the walk (each is a step of a Python loop), while an encoder's extensions
before it (a loop count, a frame's delay, a comment, an XMP packet) hold a few thousand at
most. Past them the extent is unknown and the logical screen is taken as the size."""


def _first_frame_extent(data: bytes) -> tuple[int, int] | None:
    """The right and bottom edges (left + width, top + height) of the first frame, from its
    image descriptor; None when the blocks before it do not lead to one (damaged data is left
    to the decoder) within :data:`MAX_SUB_BLOCKS` of them."""
    if len(data) < 13:
        return None
    flags = data[10]
    offset = 13 + (3 << ((flags & 0x07) + 1) if flags & 0x80 else 0)
    budget = MAX_SUB_BLOCKS
    while offset < len(data) and budget > 0:
        block = data[offset]
        if block == _IMAGE:
            if offset + 9 > len(data):
                return None
            left, top, width, height = struct.unpack_from("<HHHH", data, offset + 1)
            return left + width, top + height
        if block != _EXTENSION:
            return None  # the trailer, or damage
        offset += 2  # the introducer and the extension's label
        budget -= 1
        while offset < len(data) and data[offset] and budget > 0:  # each after its length
            offset += data[offset] + 1
            budget -= 1
        offset += 1  # the block terminator
    return None


def gif_canvas_size(data: bytes, screen: tuple[int, int]) -> tuple[int, int]:
    """The size a GIF of logical screen ``screen`` (width, height) is shown at: the screen,
    grown to hold the first frame where the frame reaches past it (the screen alone when the
    frame's descriptor is not found)."""
    extent = _first_frame_extent(data)
    if extent is None:
        return screen
    return max(screen[0], extent[0]), max(screen[1], extent[1])


def fit_screen(data: bytes, size: tuple[int, int]) -> bytes:
    """``data`` with its logical screen set to ``size`` (:func:`gif_canvas_size`); the same
    bytes when it is that already."""
    if struct.unpack_from("<HH", data, 6) == size or not 0 < max(size) <= 0xFFFF:
        return data
    return data[:6] + struct.pack("<HH", *size) + data[10:]
