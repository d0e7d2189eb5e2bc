"""What giving OpenCV only a PNG's pixel chunks costs (``vision.png_chunks.decoder_png``):
``decode_image`` of a PNG as the service decodes it, beside the same decode of the whole file,
and the chunk pass alone; Pillow's decode of the same file to a BGR array for comparison.

    python benchmarks/bench_png_chunks.py [--runs 30]

The PNGs are ``examples/hand.jpg`` as a 640x480 frame and upscaled to 12 MP (4000x3000),
each written by OpenCV and again with the chunks a phone or an editor adds (a 3 KB ``iCCP``,
``gAMA``, ``cHRM``, ``pHYs``, ``tEXt``), which the pass drops. The decodes are timed in turn
within each run, so that all see the same load; medians (the machine may be shared).
"""

from __future__ import annotations

import argparse
import functools
import io
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import cv2
import numpy as np
from numpy.typing import NDArray
from timing import paired_median_ms

from vision.imageio import decode_image
from vision.png_chunks import decoder_png

ROOT = Path(__file__).resolve().parent.parent


def _chunk(name: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + name + body + struct.pack(">I", zlib.crc32(name + body))


def with_extras(png: bytes, rng: np.random.Generator) -> bytes:
    """``png`` with the ancillary chunks a phone or an editor writes, after its IHDR."""
    profile = zlib.compress(rng.integers(0, 256, 3144, np.uint8).tobytes())
    extras = [
        _chunk(b"iCCP", b"Display P3\0\0" + profile),
        _chunk(b"gAMA", struct.pack(">I", 45455)),
        _chunk(b"cHRM", struct.pack(">8I", 31270, 32900, 64000, 33000, 30000, 60000, 15000, 6000)),
        _chunk(b"pHYs", struct.pack(">IIB", 2835, 2835, 1)),
        _chunk(b"tEXt", b"Software\0bench_png_chunks"),
    ]
    return png[:33] + b"".join(extras) + png[33:]


def _pillow(data: bytes) -> NDArray[np.uint8]:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        rgb = np.asarray(image.convert("RGB"))
    return np.ascontiguousarray(rgb[:, :, ::-1])


def _whole(data: bytes) -> NDArray[np.uint8]:
    """``decode_image`` with OpenCV given the whole file, as before the chunk pass."""
    with mock.patch("vision.imageio.decoder_png", lambda png: png):
        return decode_image(data)


def medians(data: bytes, runs: int) -> dict[str, float]:
    """Median milliseconds over ``runs`` of each way of decoding ``data``, in turn."""
    ways: dict[str, Callable[[bytes], Any]] = {
        "decode_image": decode_image,
        "whole file": _whole,
        "chunk pass alone": decoder_png,
        "Pillow": _pillow,
    }
    calls = [functools.partial(way, data) for way in ways.values()]
    return dict(zip(ways, paired_median_ms(calls, runs), strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    photo = cv2.imread(str(ROOT / "examples" / "hand.jpg"))
    assert photo is not None
    for label, size in (("640x480", (640, 480)), ("12 MP", (4000, 3000))):
        image = cv2.resize(photo, size, interpolation=cv2.INTER_CUBIC)
        plain = cv2.imencode(".png", image)[1].tobytes()
        for kind, data in (("plain", plain), ("with extras", with_extras(plain, rng))):
            assert np.array_equal(decode_image(data), _whole(data))
            assert np.array_equal(decode_image(data), _pillow(data))
            figures = medians(data, args.runs)
            shown = ", ".join(f"{name} {spent:.2f} ms" for name, spent in figures.items())
            print(f"{label} PNG {kind} ({len(data):,} bytes): {shown}")


if __name__ == "__main__":
    main()
