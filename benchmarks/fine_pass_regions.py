"""How much of a large photo would a fine detector pass over the cards' regions only skip?

A large photo (longer side over ``ReaderSettings.tile_above_px``) that is not a close-up gets
a second, finer detector pass over the whole of its shrunk copy. This measures what that pass
would skip if it read only the regions holding cards: the card paper
(:func:`vision.card_evidence.paper_mask` on a quarter-size view, the reference white the
whitest 2 % of it) and the coarse pass's boxes grown by two sides each way, each region grown
by a margin and overlapping regions merged, as axis-aligned rectangles (what one network pass
reads). For each photo it prints the share of the shrunk copy those rectangles cover and how
many there are (each would be one pass); then the median share over the photos.

    python benchmarks/fine_pass_regions.py REALDATA [--sets tables boxes] [--table-photo]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.card_evidence import image_light, paper_mask
from vision.imageio import decode_reduced
from vision.reader import Reader

ROOT = Path(__file__).resolve().parent.parent
MARGIN = 12
"""Pixels of the shrunk copy each region is grown by (an index's side there)."""


def _overlap(a: list[int], b: list[int]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _merged(rects: list[list[int]]) -> list[list[int]]:
    """Overlapping (x1, y1, x2, y2) rectangles merged until none overlap."""
    merged: list[list[int]] = []
    for rect in rects:
        rect = list(rect)
        # a grown rectangle may now reach ones merged before: take them in until none does
        while touching := [other for other in merged if _overlap(rect, other)]:
            merged = [other for other in merged if not _overlap(rect, other)]
            for other in touching:
                rect = [min(rect[0], other[0]), min(rect[1], other[1]),
                        max(rect[2], other[2]), max(rect[3], other[3])]  # fmt: skip
        merged.append(rect)
    return merged


def regions(small: NDArray[np.uint8], coarse: NDArray[np.float32]) -> list[list[int]]:
    """The rectangles of ``small`` (a large photo's shrunk copy) a regions-only fine pass would
    read; ``coarse``: the coarse pass's boxes in its pixels."""
    height, width = small.shape[:2]
    view = cv2.resize(small, (width // 4, height // 4), interpolation=cv2.INTER_AREA)
    weakest = view.min(axis=2)
    near = weakest >= np.quantile(weakest, 0.98)
    mask = paper_mask(view, image_light(view), near=near).astype(np.uint8)
    count, _, stats, _ = cv2.connectedComponentsWithStats(mask)
    rects = [
        [int(x) * 4, int(y) * 4, int(x + w) * 4, int(y + h) * 4]
        for x, y, w, h, area in stats[1:count]
        if area >= 4
    ]
    for x1, y1, x2, y2 in coarse.tolist():
        side = max(x2 - x1, y2 - y1)
        rects.append(
            [int(x1 - 2 * side), int(y1 - 2 * side), int(x2 + 2 * side), int(y2 + 2 * side)]
        )
    grown = [
        [
            max(0, x1 - MARGIN),
            max(0, y1 - MARGIN),
            min(width, x2 + MARGIN),
            min(height, y2 + MARGIN),
        ]
        for x1, y1, x2, y2 in rects
    ]
    return _merged(grown)


def _photos(realdata: Path, sets: list[str]) -> list[Path]:
    found = []
    for name in sets:
        for line in (realdata / name / "manifest.jsonl").read_text().splitlines():
            row = json.loads(line)
            if row.get("split") == "valid":
                found.append(realdata / name / row["image"])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("realdata", type=Path)
    parser.add_argument("--sets", nargs="+", default=["tables", "boxes"])
    parser.add_argument(
        "--table-photo", action="store_true", help="also bench_reader.py's 12 MP table photo"
    )
    args = parser.parse_args()
    reader = Reader.load()
    detector = reader.detector
    images: list[tuple[str, NDArray[np.uint8]]] = []
    for path in _photos(args.realdata, args.sets):
        images.append((f"{path.parent.name}/{path.name}", decode_reduced(path.read_bytes()).image))
    if args.table_photo:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from bench_reader import _frame, _twelve_megapixel_jpeg

        frame = _frame(ROOT / "examples" / "hand.jpg")
        images.append(("12 MP table", decode_reduced(_twelve_megapixel_jpeg(frame, 3)).image))
    shares = []
    for name, image in images:
        small, factor = detector._shrunk(reader.prepare(image))
        if factor <= 1:
            continue  # not large: no fine pass of this kind
        coarse = detector._detect_once(small).xyxy
        rects = regions(small, coarse)
        area = sum((x2 - x1) * (y2 - y1) for x1, y1, x2, y2 in rects)
        share = area / (small.shape[0] * small.shape[1])
        shares.append(share)
        print(f"{name:48} {share:5.2f} of the copy in {len(rects)} regions")
    if shares:
        print(f"median share over {len(shares)} large photos: {statistics.median(shares):.2f}")


if __name__ == "__main__":
    main()
