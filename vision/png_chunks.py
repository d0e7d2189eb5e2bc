"""A PNG as its decoder needs it: only the chunks that make its pixels, each checked.

OpenCV decodes PNG with libpng, whose warnings and errors go straight to the process's
standard error (``libpng warning: iCCP: known incorrect sRGB profile``, ``libpng warning:
tEXt: CRC error``, ``libpng error: IDAT: CRC error``): in the service, one line of the log per
odd upload, which no caller can keep off it (the file descriptor is the whole process's, shared
by every thread). The chunks libpng complains about are, but for the critical ones, chunks that
OpenCV does not use: colour management (``iCCP``, ``sRGB``, ``gAMA``, ``cHRM``, ``cICP``...),
text, time, physical size, background colour, and the ``eXIf`` chunk whose orientation
:mod:`vision.imageheader` has already read. :func:`decoder_png` gives the decoder the chunks
that make the pixels (:data:`PIXEL_CHUNKS`) and nothing else, so the pixels are those OpenCV
gives the whole file, and checks their CRCs first: a damaged critical chunk is named here, not
printed by libpng, and a damaged ``tRNS`` is dropped, as libpng drops it.
"""

from __future__ import annotations

import struct
import zlib

__all__ = ["PIXEL_CHUNKS", "PngChunkError", "decoder_png"]

PIXEL_CHUNKS = frozenset({b"IHDR", b"PLTE", b"IDAT", b"IEND", b"tRNS", b"acTL", b"fcTL", b"fdAT"})
"""The chunks that make a PNG's pixels as OpenCV decodes them: the critical chunks, the
transparency (an alpha channel), and an animated PNG's frames (the first is decoded)."""

_ANIMATION = frozenset({b"acTL", b"fcTL", b"fdAT"})
"""Chunks OpenCV reads itself (libpng knows nothing of animation): passed on unchecked."""

_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class PngChunkError(ValueError):
    """A critical chunk of a PNG whose CRC does not match its bytes."""


def decoder_png(data: bytes) -> bytes:
    """``data`` (a PNG) with only its :data:`PIXEL_CHUNKS`, every one but an animation's
    checked against its CRC: ``data`` itself when it holds nothing else and nothing is
    damaged. PngChunkError names a critical chunk whose CRC fails; a ``tRNS`` whose CRC fails
    is dropped (libpng drops it, with a warning). Bytes the walk cannot follow (a chunk cut
    short) are passed on as they are, for the decoder to refuse."""
    if not data.startswith(_SIGNATURE):
        return data
    view = memoryview(data)
    kept: list[tuple[int, int]] = [(0, len(_SIGNATURE))]  # spans of the bytes passed on
    offset, ended = len(_SIGNATURE), False
    while not ended and offset + 12 <= len(data):
        length, name = struct.unpack_from(">I4s", data, offset)
        end = offset + 12 + length
        if end > len(data):
            break
        if name in PIXEL_CHUNKS:
            (crc,) = struct.unpack_from(">I", data, end - 4)
            if name in _ANIMATION or zlib.crc32(view[offset + 4 : end - 4]) == crc:
                kept.append((offset, end))
            elif not name[0] & 0x20:  # a critical chunk (an upper-case first letter)
                raise PngChunkError(f"its {name.decode('latin-1')} chunk fails its CRC check")
        offset, ended = end, name == b"IEND"
    if not ended:  # cut short: the rest passed on as it is, for the decoder to refuse
        kept.append((offset, len(data)))
    if sum(stop - begin for begin, stop in kept) == len(data):
        return data  # nothing dropped: no copy
    return b"".join(view[begin:stop] for begin, stop in kept)
