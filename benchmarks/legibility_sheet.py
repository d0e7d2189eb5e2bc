"""Can a person read an index of this size? Sheets of index crops to read by eye, and their score.

    python benchmarks/legibility_sheet.py make --scenes HELDOUT --out DIR [--per-band N] [--seed S]
    python benchmarks/legibility_sheet.py score --out DIR --answers ANSWERS.txt

``make`` draws ``--per-band`` labelled indices (no jokers) of each band of index height
(``BANDS``, the ``index_px`` of the scenes' metadata) from a folder written by
``handreader synth``, shuffles them, and writes ``DIR/sheet0.png``, ``sheet1.png``... (24 crops
a sheet, each numbered) and ``DIR/key.json``. Each crop is the index turned upright with a
margin of 0.4 of its height round it, at the scene's own resolution, then enlarged four times
pixel by pixel: what a person sees zooming into the photo. The person writes one line per crop,
``NUMBER CODE`` (``12 QS``), or ``NUMBER ?`` when it cannot be read, without looking at the key.
``score`` prints, per band, the crops read right (rank and suit), the rank alone, and those
left unread.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import cv2
import numpy as np

BANDS = ((12, 14), (14, 16), (16, 18), (18, 20), (20, 24), (24, 32))
"""Bands of index height in pixels (low included, high not)."""

PER_SHEET = 24


def _crop(image: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """The index upright, with 0.4 of its height round it, at the image's resolution."""
    width = float(np.linalg.norm(quad[1] - quad[0]))
    height = float(np.linalg.norm(quad[3] - quad[0]))
    margin = 0.4 * height
    across = (quad[1] - quad[0]) / max(width, 1e-6)
    down = (quad[3] - quad[0]) / max(height, 1e-6)
    source = np.array(
        [
            quad[0] - margin * across - margin * down,
            quad[1] + margin * across - margin * down,
            quad[2] + margin * across + margin * down,
            quad[3] - margin * across + margin * down,
        ],
        np.float32,
    )
    size = (round(width + 2 * margin), round(height + 2 * margin))
    target = np.array([[0, 0], [size[0], 0], [size[0], size[1]], [0, size[1]]], np.float32)
    matrix = cv2.getPerspectiveTransform(source, target)
    return cv2.warpPerspective(image, matrix, size, flags=cv2.INTER_LINEAR)


def make(scenes: Path, out: Path, per_band: int, seed: int) -> None:
    pool: dict[tuple[int, int], list[tuple[str, dict[str, object]]]] = {band: [] for band in BANDS}
    for meta_path in sorted((scenes / "meta").glob("*.json")):
        meta = json.loads(meta_path.read_text())
        for item in meta["indices"]:
            if item["card"] in ("JB", "JR") or "index_px" not in item:
                continue
            for low, high in BANDS:
                if low <= item["index_px"] < high:
                    pool[(low, high)].append((meta_path.stem, item))
    rng = random.Random(seed)
    chosen = [(band, *pick) for band in BANDS for pick in rng.sample(pool[band], per_band)]
    rng.shuffle(chosen)
    out.mkdir(parents=True, exist_ok=True)
    tiles, key = [], []
    for number, (band, stem, item) in enumerate(chosen):
        image = cv2.imread(str(scenes / "images" / f"{stem}.jpg"))
        crop = _crop(image, np.array(item["quad"], np.float32))
        big = cv2.resize(
            crop, (crop.shape[1] * 4, crop.shape[0] * 4), interpolation=cv2.INTER_NEAREST
        )
        tile = np.full((200, 160, 3), 255, np.uint8)
        big = big[:180, :160]
        tile[20 : 20 + big.shape[0], : big.shape[1]] = big
        cv2.putText(tile, str(number), (2, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 0, 0), 1)
        tiles.append(tile)
        key.append(
            {"number": number, "band": list(band), "card": item["card"], "px": item["index_px"]}
        )
    (out / "key.json").write_text(json.dumps(key))
    for start in range(0, len(tiles), PER_SHEET):
        part = tiles[start : start + PER_SHEET]
        while len(part) % 6:
            part.append(np.full_like(tiles[0], 255))
        rows = [np.hstack(part[i : i + 6]) for i in range(0, len(part), 6)]
        cv2.imwrite(str(out / f"sheet{start // PER_SHEET}.png"), np.vstack(rows))
    print(
        f"wrote {len(tiles)} crops on {(len(tiles) + PER_SHEET - 1) // PER_SHEET} sheets to {out}"
    )


def score(out: Path, answers: Path) -> None:
    key = json.loads((out / "key.json").read_text())
    read = dict(line.split() for line in answers.read_text().splitlines() if line.strip())
    print("index height | crops | read right | rank right | unread")
    for band in BANDS:
        items = [item for item in key if tuple(item["band"]) == band]
        given = [read.get(str(item["number"]), "?") for item in items]
        right = sum(answer == item["card"] for answer, item in zip(given, items, strict=True))
        rank = sum(
            answer != "?" and answer[:-1] == item["card"][:-1]
            for answer, item in zip(given, items, strict=True)
        )
        unread = sum(answer == "?" for answer in given)
        print(f"{band[0]}-{band[1]} px | {len(items)} | {right} | {rank} | {unread}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    making = commands.add_parser("make", help="write the sheets and their key")
    making.add_argument("--scenes", type=Path, required=True)
    making.add_argument("--out", type=Path, required=True)
    making.add_argument("--per-band", type=int, default=16)
    making.add_argument("--seed", type=int, default=29)
    scoring = commands.add_parser("score", help="score a person's answers against the key")
    scoring.add_argument("--out", type=Path, required=True)
    scoring.add_argument("--answers", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "make":
        make(args.scenes, args.out, args.per_band, args.seed)
    else:
        score(args.out, args.answers)


if __name__ == "__main__":
    main()
