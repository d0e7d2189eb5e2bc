"""Test helper: images whose header announces far more than their bytes hold."""

from __future__ import annotations

import struct
import zlib


def png_header_only(width: int, height: int, depth: int, colour: int) -> bytes:
    """A PNG whose IHDR announces the size, bit depth and colour type (PNG specification,
    11.2.2), followed by one empty IDAT and IEND: enough for every check made before decoding,
    nothing a decoder could read."""

    def chunk(name: bytes, body: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(name + body))
        return struct.pack(">I", len(body)) + name + body + crc

    ihdr = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", b"") + chunk(b"IEND", b"")
