"""What the pass over a photo's negative costs (``ReaderSettings.dark_faces``), against the same
reader without it, in one run: the example photo (640x480), the 12 MP close-up and the 12 MP
table photo of ``bench_reader.py`` (decoded reduced once, then only the read timed), each read in
turn with the pass on and off so that both see the same load. Medians of ``--runs`` reads;
milliseconds.

    python benchmarks/bench_dark_faces.py [--runs 20] [--models DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from bench_reader import _paired_median_ms, _twelve_megapixel_jpeg

from vision.imageio import decode_reduced, load_image
from vision.reader import Reader

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--models", type=Path, help="models folder (default: the shipped one)")
    args = parser.parse_args()
    with_pass = Reader.load(args.models) if args.models else Reader.load()
    without = with_pass.with_settings(dataclasses.replace(with_pass.settings, dark_faces=False))
    frame = load_image(ROOT / "examples" / "hand.jpg")
    photos = {
        "640x480 photo": frame,
        "12 MP close-up": decode_reduced(_twelve_megapixel_jpeg(frame)).image,
        "12 MP table photo": decode_reduced(_twelve_megapixel_jpeg(frame, repeat=3)).image,
    }
    figures = {}
    for name, image in photos.items():
        on, off = _paired_median_ms(
            [lambda image=image: with_pass.read(image), lambda image=image: without.read(image)],
            args.runs,
        )
        figures[name] = {"with the negative": round(on, 1), "without": round(off, 1)}
        print(
            f"{name}: {on:.1f} ms with the pass over the negative, {off:.1f} without "
            f"({on / off:.2f}x)"
        )
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
