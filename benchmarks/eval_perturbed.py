"""How the reader holds up when a labelled photo is taken otherwise: turned, smaller, at a
slant, in dimmer, brighter or warmer light, blurred, noisier, compressed harder or in greyscale.

    python benchmarks/eval_perturbed.py MANIFEST [MANIFEST ...] [--models DIR] [--limit N]
        [--only NAME,NAME] [--json]

Each photo of each manifest (the format of :mod:`vision.evaluate`, as ``handreader eval`` reads
it) is read as it is, then once per perturbation of :data:`PERTURBATIONS`; card precision,
recall and F1 are scored as ``handreader eval`` scores them (rank-only labels on rank). The
labels are card lists, not boxes, so every perturbation keeps them true. The first row of each
table, ``as taken``, is the baseline of the same run; the last column is the change of F1
against it. It answers a user's question the folders alone do not: does a photo taken sideways,
from farther, at a slant or in a dim room still read?

Every perturbation is fixed (no random draw but the noise, seeded per photo), so two runs on
one machine print the same table.
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from vision.evaluate import EvalTotals, load_manifest  # noqa: E402
from vision.imageio import ImageError, load_reduced  # noqa: E402
from vision.reader import Reader  # noqa: E402

Image = NDArray[np.uint8]


def _median_colour(image: Image) -> tuple[float, ...]:
    """The photo's median colour, to fill what a warp leaves outside it (a table around it)."""
    return tuple(float(v) for v in np.median(image.reshape(-1, 3), axis=0))


def turned(image: Image, degrees: float) -> Image:
    """``image`` turned ``degrees`` counter-clockwise on a canvas grown to hold all of it, the
    corners filled with the image's median colour (a table around the photo)."""
    if degrees % 90 == 0:
        codes = {
            90: cv2.ROTATE_90_COUNTERCLOCKWISE,
            180: cv2.ROTATE_180,
            270: cv2.ROTATE_90_CLOCKWISE,
        }
        turns = int(degrees) % 360
        return image.copy() if turns == 0 else np.asarray(cv2.rotate(image, codes[turns]), np.uint8)
    height, width = image.shape[:2]
    matrix = cv2.getRotationMatrix2D((width / 2, height / 2), degrees, 1.0)
    cos, sin = abs(float(matrix[0, 0])), abs(float(matrix[0, 1]))
    new_w, new_h = round(height * sin + width * cos), round(height * cos + width * sin)
    matrix[0, 2] += new_w / 2 - width / 2
    matrix[1, 2] += new_h / 2 - height / 2
    fill = _median_colour(image)
    out = cv2.warpAffine(
        image,
        matrix,
        (new_w, new_h),
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=fill,
    )
    return np.asarray(out, np.uint8)


def scaled(image: Image, factor: float) -> Image:
    """``image`` resized by ``factor`` (area averaging, as a camera farther away)."""
    height, width = image.shape[:2]
    size = (max(1, round(width * factor)), max(1, round(height * factor)))
    return np.asarray(cv2.resize(image, size, interpolation=cv2.INTER_AREA), np.uint8)


def tilted(image: Image, squeeze: float) -> Image:
    """``image`` seen at a slant: its top edge ``squeeze`` of the width narrower than its
    bottom, as a camera tipped back over a table."""
    height, width = image.shape[:2]
    inset = squeeze * width / 2
    source = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    target = np.array([[inset, 0], [width - inset, 0], [width, height], [0, height]], np.float32)
    matrix = cv2.getPerspectiveTransform(source, target)
    fill = _median_colour(image)
    out = cv2.warpPerspective(
        image,
        matrix,
        (width, height),
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=fill,
    )
    return np.asarray(out, np.uint8)


def relit(image: Image, gain: float) -> Image:
    """``image`` under dimmer or brighter light: every value times ``gain``, clipped at
    white (overexposed) for a gain over 1."""
    return np.asarray(np.clip(image.astype(np.float32) * gain, 0, 255), np.uint8)


def tinted(image: Image, gains_bgr: tuple[float, float, float]) -> Image:
    """``image`` under coloured light: each channel times its gain (blue, green, red)."""
    scaled_image = image.astype(np.float32) * np.array(gains_bgr, np.float32)
    return np.asarray(np.clip(scaled_image, 0, 255), np.uint8)


def blurred(image: Image, sigma_share: float) -> Image:
    """``image`` out of focus: a Gaussian blur of ``sigma_share`` of its shorter side."""
    sigma = sigma_share * min(image.shape[:2])
    return np.asarray(cv2.GaussianBlur(image, (0, 0), sigmaX=sigma), np.uint8)


def noisy(image: Image, sigma: float, seed: int) -> Image:
    """``image`` with Gaussian sensor noise of ``sigma`` grey levels (seeded)."""
    rng = np.random.default_rng(seed)
    noise = rng.normal(0.0, sigma, image.shape).astype(np.float32)
    return np.asarray(np.clip(image.astype(np.float32) + noise, 0, 255), np.uint8)


def compressed(image: Image, quality: int) -> Image:
    """``image`` through a JPEG of ``quality``."""
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    decoded = cv2.imdecode(data, cv2.IMREAD_COLOR)
    return np.asarray(decoded, np.uint8)


def greyscale(image: Image) -> Image:
    """``image`` without colour (an infrared webcam, a mono filter), still three channels."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    return np.asarray(cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR), np.uint8)


Perturbation = Callable[[Image, int], Image]

PERTURBATIONS: dict[str, Perturbation] = {
    "as taken": lambda image, seed: image,
    "turned 90": lambda image, seed: turned(image, 90),
    "turned 180": lambda image, seed: turned(image, 180),
    "turned 30": lambda image, seed: turned(image, 30),
    "half size": lambda image, seed: scaled(image, 0.5),
    "third size": lambda image, seed: scaled(image, 1 / 3),
    "tilted": lambda image, seed: tilted(image, 0.3),
    "dim (x0.45)": lambda image, seed: relit(image, 0.45),
    "bright x1.6": lambda image, seed: relit(image, 1.6),
    "warm light": lambda image, seed: tinted(image, (0.55, 0.8, 1.0)),
    "blurred": lambda image, seed: blurred(image, 0.004),
    "noisy": lambda image, seed: noisy(image, 12.0, seed),
    "JPEG 25": lambda image, seed: compressed(image, 25),
    "greyscale": lambda image, seed: greyscale(image),
}
"""The perturbations, by the name the table prints; ``as taken`` is the baseline."""


def photo_seed(path: Path) -> int:
    """A seed from the photo's file name (the same on every machine)."""
    return zlib.crc32(path.name.encode())


def evaluate(
    reader: Reader, manifest: Path, names: list[str], limit: int | None = None
) -> dict[str, EvalTotals]:
    """The totals of every perturbation in ``names`` over the manifest's photos."""
    totals = {name: EvalTotals() for name in names}
    for entry in load_manifest(manifest)[:limit]:
        try:
            image = load_reduced(entry.image).image  # as `handreader eval` decodes it
        except ImageError:
            for name in names:
                totals[name].add_unreadable(entry)
            continue
        seed = photo_seed(entry.image)
        for name in names:
            totals[name].add_reading(entry, reader.read(PERTURBATIONS[name](image, seed)))
    return totals


def table_lines(manifest: Path, totals: dict[str, EvalTotals]) -> list[str]:
    """The table of one manifest: F1 and its change against ``as taken``."""
    base = totals["as taken"].f1 if "as taken" in totals else None
    first = next(iter(totals.values()))
    lines = [
        f"{manifest}: {first.photos} photos, {first.truth_cards} cards",
        f"  {'taken':>12}  {'precision':>9}  {'recall':>6}  {'F1':>6}  {'uncertain':>9}  "
        f"{'F1 change':>9}",
    ]
    for name, total in totals.items():
        change = "" if base is None or name == "as taken" else f"{total.f1 - base:+.3f}"
        lines.append(
            f"  {name:>12}  {total.precision:9.3f}  {total.recall:6.3f}  "
            f"{total.f1:6.3f}  {total.uncertain:9d}  {change:>9}"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("manifests", type=Path, nargs="+", metavar="MANIFEST")
    parser.add_argument("--models", type=Path, default=ROOT / "models")
    parser.add_argument("--limit", type=int, default=None, help="first N photos of each")
    parser.add_argument(
        "--only", default=None, help="comma-separated perturbations (the baseline is always read)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON line per manifest")
    args = parser.parse_args(argv)
    names = list(PERTURBATIONS)
    if args.only:
        wanted = [name.strip() for name in args.only.split(",") if name.strip()]
        unknown = [name for name in wanted if name not in PERTURBATIONS]
        if unknown:
            parser.error(
                f"unknown perturbation {', '.join(map(repr, unknown))}; "
                f"known: {', '.join(PERTURBATIONS)}"
            )
        names = ["as taken", *(name for name in wanted if name != "as taken")]
    missing = [str(path) for path in args.manifests if not path.is_file()]
    if missing:
        parser.error(f"no such manifest: {', '.join(missing)}")
    reader = Reader.load(args.models)
    for manifest in args.manifests:
        totals = evaluate(reader, manifest, names, args.limit)
        if args.json:
            print(
                json.dumps(
                    {
                        "manifest": str(manifest),
                        **{name: total.summary(top=3) for name, total in totals.items()},
                    }
                )
            )
        else:
            print("\n".join(table_lines(manifest, totals)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
