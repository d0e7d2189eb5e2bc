"""The cost of telling a damaged JPEG (``vision.jpegdata``) on a 12-megapixel photo: the
decode with the check of the decoded array and without it, in one run, and the one walk of
the header and scan data that checks the markers.

    python benchmarks/bench_jpeg_checks.py [PHOTO] [--runs 15]

PHOTO defaults to ``examples/hand.jpg`` enlarged to 4000 x 3000 and saved at quality 92 (a
phone's size); any JPEG may be given. Timed: ``decode_reduced`` (as the commands and the
service decode a photo: at a half here) and ``decode_image`` (full size), each with the check
of the decoded array (``ends_in_missing_blocks``) and with it replaced by nothing, in turn
within each run (which first alternating), so both see the same load; medians (the machine may
be shared). Also the walk alone (``probe_image``: the header, then the scan data to the
end-of-image marker, counting the scans and checking the markers, which every decode makes),
the check of the decoded array alone (on the photo, and with its last row of MCUs grey) and,
with restart markers (every 4 MCUs, as some cameras write them), the walk of that photo.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from timing import median_ms

import vision.imageio
from vision.imageio import decode_image, decode_reduced, probe_image
from vision.jpegdata import ends_in_missing_blocks, mcu_size

ROOT = Path(__file__).resolve().parent.parent


def _photo(path: Path | None, *params: int) -> bytes:
    """The photo's bytes: ``path``'s, or the example enlarged to 12 MP and encoded."""
    if path is not None and not params:
        return path.read_bytes()
    image = cv2.imread(str(path or ROOT / "examples" / "hand.jpg"))
    image = cv2.resize(image, (4000, 3000), interpolation=cv2.INTER_CUBIC)
    ok, buffer = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 92, *params])
    assert ok
    return buffer.tobytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("photo", nargs="?", type=Path)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    data = _photo(args.photo)
    check = vision.imageio.ends_in_missing_blocks

    def without(decode: Callable[[bytes], Any]) -> Callable[[], Any]:
        def run() -> Any:
            vision.imageio.ends_in_missing_blocks = lambda *args: False
            try:
                return decode(data)
            finally:
                vision.imageio.ends_in_missing_blocks = check

        return run

    print(f"photo: {len(data):,} bytes, {decode_image(data).shape[1::-1]}")
    for name, decode in (("decode_reduced", decode_reduced), ("decode_image", decode_image)):
        before, after = [], []
        for run in range(args.runs):  # which goes first alternates
            for first in (run % 2 == 0, run % 2 == 1):
                if first:
                    before.append(median_ms(without(decode), 1))
                else:
                    after.append(median_ms(lambda decode=decode: decode(data), 1))
        base, checked = statistics.median(before), statistics.median(after)
        print(
            f"{name}: without the check {base:.1f} ms, with it {checked:.1f} ms "
            f"({checked - base:+.1f} ms)"
        )
    decoded = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    assert decoded is not None
    info = probe_image(data)
    tail, mcu = data[info.scan_end - 256 : info.scan_end], mcu_size(info.sampling)
    alone = median_ms(lambda: ends_in_missing_blocks(decoded, 1, tail, mcu), args.runs)
    decoded[-mcu[1] :] = 128  # the last row of MCUs grey: the whole shape is looked at
    grey = median_ms(lambda: ends_in_missing_blocks(decoded, 1, tail, mcu), args.runs)
    print(f"check of the decoded array alone: {alone:.3f} ms ({grey:.3f} ms, last row grey)")
    walk = median_ms(lambda: probe_image(data), args.runs)
    print(f"walk of the header and scan data alone: {walk:.2f} ms")
    restarts = _photo(
        args.photo or ROOT / "examples" / "hand.jpg", cv2.IMWRITE_JPEG_RST_INTERVAL, 4
    )
    walk = median_ms(lambda: probe_image(restarts), args.runs)
    count = sum(restarts.count(bytes([0xFF, 0xD0 + n])) for n in range(8))
    print(f"the walk, restart markers every 4 MCUs ({count:,} of them): {walk:.2f} ms")


if __name__ == "__main__":
    main()
