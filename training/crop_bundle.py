"""Index crops packed small enough to travel: a folder of JPEG mosaics, label arrays and an index.

The index classifier trains on 32 px crops (:mod:`vision.crops`), and a GPU machine that cannot
render the card art (no ``rsvg-convert``, no wallpapers, no fonts, no network) can still train
it on crops drawn here. Raw, a crop is 3 KB; packed 64 x 64 to a JPEG mosaic it is about 450
bytes at quality 90 (each crop is a whole number of the JPEG's 8 x 8 blocks, so no crop bleeds
into its neighbour). A bundle holds named parts, each with a role: ``train`` parts (repeated
``copies`` times when loaded, as photo crops are in the shipped recipe) and ``valid`` parts,
read only to choose the best epoch.

    python -m training.crop_bundle pack OUT scenes.npz glyphs.npz@20000 photos.npz:4 val.npz:valid
    python -m training.crop_bundle info OUT

``FILE.npz@N`` packs N of the part's crops, drawn at random (one generator, seeded 1, over the
parts in the order given, so the same parts pack the same bundle).

or, in one command, every part of the shipped recipe drawn from scene folders, the fonts and
a photo manifest, then packed (:func:`draw_parts`; each part is kept in ``PARTS`` and a rerun
reuses it):

    python -m training.crop_bundle draw OUT --scenes DIR [DIR ...] --holdout DIR \
        [--photos MANIFEST] [--glyph-crops 45000] [--parts PARTS] [--quality 85] \
        [--realdata REALDATA] [--casino DIR ...] [--local-crops 4000] [--take NAME=N ...]

``--realdata``, ``--casino`` and ``--local-crops`` add the parts a training round's index
classifier learns from (:mod:`training.round_crops`): crops of the real photos' labelled
indices and their negatives (``real``), of casino scenes (``casino``) and of local decks'
letters (``local``).

Each ``.npz`` holds ``crops`` (N, 32, 32, 3) uint8 BGR and ``labels`` (N,) class ids, as
:func:`training.classifier.extract_crops` and the other crop makers write them.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray

from training.photo_crops import FindsIndices
from vision.crops import CROP_SIZE
from vision.detections import CLASSIFIER_CLASSES

__all__ = ["BundlePart", "DrawPlan", "draw_parts", "load_bundle", "pack_bundle", "parse_part"]

FORMAT = 1
PER_ROW = 64
"""Crops per mosaic row and column: a mosaic is 2048 x 2048 and holds 4,096 crops."""
ROLES = ("train", "valid")

Crops = tuple[NDArray[np.uint8], NDArray[np.int64]]
"""Crops (N, 32, 32, 3) BGR and their class ids (N,): one part's content."""


@dataclass(frozen=True)
class BundlePart:
    """One ``.npz`` of crops and labels to pack, its role and how often training repeats it."""

    path: Path
    role: str = "train"
    copies: int = 1
    take: int = 0
    """Pack this many of the part's crops, drawn at random (0: all of them)."""


def parse_part(text: str) -> BundlePart:
    """``FILE.npz``, ``FILE.npz:K`` (train, K copies) or ``FILE.npz:valid``, each optionally
    ``FILE.npz@N`` (N of its crops); ValueError naming the text otherwise."""
    path, _, suffix = text.partition(":")
    path, at, take = path.partition("@")
    if not path.endswith(".npz"):
        raise ValueError(f"{text!r}: expected FILE.npz[@N], FILE.npz[@N]:COPIES or ...:valid")
    if at and not (take.isdigit() and int(take) >= 1):
        raise ValueError(f"{text!r}: the part after '@' must be a crop count >= 1")
    count = int(take) if take else 0
    if suffix in ("", "train"):
        return BundlePart(Path(path), take=count)
    if suffix == "valid":
        return BundlePart(Path(path), role="valid", copies=0, take=count)
    if suffix.isdigit() and int(suffix) >= 1:
        return BundlePart(Path(path), copies=int(suffix), take=count)
    raise ValueError(f"{text!r}: the part after ':' must be a copy count >= 1 or 'valid'")


def _read_npz(path: Path) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    stored = np.load(path)
    if "crops" not in stored or "labels" not in stored:
        raise ValueError(f"{path}: expected arrays 'crops' and 'labels', found {sorted(stored)}")
    crops, labels = stored["crops"], stored["labels"].astype(np.int64)
    shape = (CROP_SIZE, CROP_SIZE, 3)
    if crops.dtype != np.uint8 or crops.ndim != 4 or crops.shape[1:] != shape:
        raise ValueError(
            f"{path}: crops are {crops.dtype} {crops.shape}, expected uint8 (N, {CROP_SIZE}, "
            f"{CROP_SIZE}, 3)"
        )
    if len(labels) != len(crops):
        raise ValueError(f"{path}: {len(crops)} crops but {len(labels)} labels")
    if len(labels) and (labels.min() < 0 or labels.max() >= len(CLASSIFIER_CLASSES)):
        raise ValueError(
            f"{path}: labels outside 0..{len(CLASSIFIER_CLASSES) - 1} "
            f"(min {labels.min()}, max {labels.max()})"
        )
    return crops, labels


def _mosaics(crops: NDArray[np.uint8]) -> list[NDArray[np.uint8]]:
    """The crops laid out PER_ROW x PER_ROW per image, row by row; the last image is only as
    tall as its rows."""
    side, per_image = CROP_SIZE, PER_ROW * PER_ROW
    images = []
    for start in range(0, len(crops), per_image):
        chunk = crops[start : start + per_image]
        rows = -(-len(chunk) // PER_ROW)
        padded = np.zeros((rows * PER_ROW, side, side, 3), np.uint8)
        padded[: len(chunk)] = chunk
        grid = padded.reshape(rows, PER_ROW, side, side, 3).transpose(0, 2, 1, 3, 4)
        images.append(np.ascontiguousarray(grid.reshape(rows * side, PER_ROW * side, 3)))
    return images


def _no_crops() -> NDArray[np.uint8]:
    return np.zeros((0, CROP_SIZE, CROP_SIZE, 3), np.uint8)


def _unmosaic(image: NDArray[np.uint8], count: int) -> NDArray[np.uint8]:
    side = CROP_SIZE
    rows = image.shape[0] // side
    grid = image.reshape(rows, side, PER_ROW, side, 3).transpose(0, 2, 1, 3, 4)
    return grid.reshape(rows * PER_ROW, side, side, 3)[:count]


def pack_bundle(
    parts: list[BundlePart], out: Path, quality: int = 90, seed: int = 1
) -> dict[str, Any]:
    """Write the parts to the folder ``out`` (made if missing; a bundle already there is
    replaced); returns the index written as ``out/bundle.json``. A part's ``take`` keeps that
    many of its crops (in their order), drawn by one generator of ``seed`` in the parts'
    order."""
    if not parts:
        raise ValueError("no parts to pack")
    names = [part.path.stem for part in parts]
    if len(set(names)) != len(names):
        raise ValueError(f"two parts share a file name: {names}")
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*"):
        if old.suffix in (".jpg", ".npy") or old.name == "bundle.json":
            old.unlink()
    index: dict[str, Any] = {"format": FORMAT, "crop_size": CROP_SIZE, "quality": quality}
    entries = []
    rng = np.random.default_rng(seed)
    for part in parts:
        crops, labels = _read_npz(part.path)
        available = len(labels)
        if part.take:
            if part.take > available:
                raise ValueError(f"{part.path}: {part.take} crops asked for, {available} held")
            chosen = np.sort(rng.permutation(available)[: part.take])
            crops, labels = crops[chosen], labels[chosen]
        name = part.path.stem
        files = []
        for number, image in enumerate(_mosaics(crops)):
            file = f"{name}-{number}.jpg"
            ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
            if not ok:
                raise ValueError(f"{part.path}: JPEG encoding failed")
            (out / file).write_bytes(encoded.tobytes())
            files.append(file)
        np.save(out / f"{name}.labels.npy", labels.astype(np.uint8))
        entries.append(
            {
                "name": name,
                "role": part.role,
                "copies": part.copies,
                "count": len(labels),
                "of": available,
                "images": files,
                "labels": f"{name}.labels.npy",
                "source": str(part.path),
            }
        )
    index["parts"] = entries
    (out / "bundle.json").write_text(json.dumps(index, indent=1) + "\n")
    return index


def load_bundle(
    folder: Path,
) -> tuple[NDArray[np.uint8], NDArray[np.int64], NDArray[np.uint8], NDArray[np.int64]]:
    """(train crops, train labels, valid crops, valid labels) of a bundle, each ``train`` part
    repeated its ``copies`` times; ValueError naming what is missing or malformed."""
    index_file = folder / "bundle.json"
    if not index_file.is_file():
        raise ValueError(f"{folder}: no bundle.json (not a crop bundle)")
    index = json.loads(index_file.read_text())
    if index.get("format") != FORMAT or index.get("crop_size") != CROP_SIZE:
        raise ValueError(
            f"{index_file}: format {index.get('format')} crop size {index.get('crop_size')}, "
            f"expected {FORMAT} and {CROP_SIZE}"
        )
    taken: dict[str, tuple[list[NDArray[np.uint8]], list[NDArray[np.int64]]]] = {
        role: ([], []) for role in ROLES
    }
    per_image = PER_ROW * PER_ROW
    for entry in index["parts"]:
        if entry["role"] not in ROLES:
            raise ValueError(f"{index_file}: part {entry['name']!r} has role {entry['role']!r}")
        pieces = []
        for number, file in enumerate(entry["images"]):
            image = cast("NDArray[np.uint8] | None", cv2.imread(str(folder / file)))
            if image is None:
                raise ValueError(f"{folder / file}: missing or not a JPEG")
            left = min(per_image, entry["count"] - number * per_image)
            pieces.append(_unmosaic(image, left))
        crops = np.concatenate(pieces) if pieces else _no_crops()
        labels = np.load(folder / entry["labels"]).astype(np.int64)
        if len(crops) != entry["count"] or len(labels) != entry["count"]:
            raise ValueError(
                f"{folder}: part {entry['name']!r} should hold {entry['count']} crops, found "
                f"{len(crops)} crops and {len(labels)} labels"
            )
        copies = max(1, entry["copies"]) if entry["role"] == "train" else 1
        taken[entry["role"]][0].extend([crops] * copies)
        taken[entry["role"]][1].extend([labels] * copies)

    def joined(role: str) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
        crops_list, labels_list = taken[role]
        if not crops_list:
            return _no_crops(), np.zeros(0, np.int64)
        return np.concatenate(crops_list), np.concatenate(labels_list)

    train_crops, train_labels = joined("train")
    if len(train_labels) == 0:
        raise ValueError(f"{index_file}: no train part")
    return (train_crops, train_labels, *joined("valid"))


@dataclass(frozen=True)
class DrawPlan:
    """What :func:`draw_parts` draws: the shipped index classifier's crops, as
    :mod:`training.pipeline` makes them."""

    scene_dirs: tuple[Path, ...]
    """Training scenes (``training.synth.generate`` folders): two jittered crops per labelled
    index, two "none" boxes per scene."""
    holdout_dirs: tuple[Path, ...]
    """Held-out scenes: one crop per labelled index and one "none" box per scene, the
    ``valid`` part (it only chooses the best epoch)."""
    detector: Path
    """The detector that finds the photos' indices and the hard negatives."""
    photos: Path | None = None
    """A labelled photo manifest: its ``split: train`` rows give index crops (4 copies in the
    bundle) and hard negatives."""
    glyph_crops: int = 45000
    """Procedural index crops in the installed fonts (0 for none)."""
    seed: int = 0
    realdata: Path | None = None
    """Real-photo folders: the ``real`` part, a training round's crops of their ``split:
    train`` photos (:func:`training.round_crops.real_classifier_crops`, six a labelled index)."""
    casino_dirs: tuple[Path, ...] = ()
    """Casino scenes: the ``casino`` part, two jittered crops per labelled index and two
    "none" boxes per scene."""
    local_crops: int = 0
    """Procedural crops of local decks' letters, the ``local`` part (0 for none)."""
    take: tuple[tuple[str, int], ...] = ()
    """(part name, count): pack only that many of a part's crops, drawn at random."""


def draw_parts(
    plan: DrawPlan, parts_dir: Path, finder: FindsIndices | None = None
) -> list[BundlePart]:
    """Each part of ``plan`` as an ``.npz`` in ``parts_dir`` (a part already there is kept), and
    the bundle parts naming them: scenes, glyphs, photos (4 copies), negatives, then real,
    local and casino when asked for, holdout (valid). ``finder`` stands in for
    ``plan.detector`` (loaded only when a part needs it)."""
    from training.classifier import extract_crops
    from training.glyph_crops import glyph_crops, local_index_crops
    from training.negatives import hard_negatives
    from training.photo_crops import photos_crops
    from training.round_crops import real_classifier_crops
    from training.round_plan import RoundPlan
    from vision.index_detector import IndexDetector

    if plan.realdata is not None and not (plan.realdata / "boxes" / "manifest.jsonl").is_file():
        raise ValueError(f"{plan.realdata}: no boxes/manifest.jsonl (not a real-photo folder)")
    for folder in (*plan.scene_dirs, *plan.holdout_dirs, *plan.casino_dirs):
        if not (folder / "meta").is_dir():
            raise ValueError(f"{folder}: no meta/ folder (not a handreader synth folder)")
    if plan.photos is not None and not plan.photos.is_file():
        raise ValueError(f"{plan.photos}: no such photo manifest")
    parts_dir.mkdir(parents=True, exist_ok=True)
    manifests = () if plan.photos is None else (plan.photos,)

    def detector() -> FindsIndices:
        nonlocal finder
        if finder is None:
            finder = IndexDetector(plan.detector, 320)
        return finder

    makers: list[tuple[str, Callable[[], Crops], str, int]] = [
        ("scenes", lambda: extract_crops(plan.scene_dirs, 2, 2, plan.seed), "train", 1),
    ]
    if plan.glyph_crops > 0:
        makers.append(("glyphs", lambda: glyph_crops(plan.glyph_crops, seed=plan.seed), "train", 1))
    if plan.photos is not None:
        makers.append(("photos", lambda: photos_crops(detector(), manifests), "train", 4))
    makers.append(
        ("negatives", lambda: hard_negatives(detector(), plan.scene_dirs, manifests), "train", 1)
    )
    if plan.realdata is not None:
        # the tables/ photos' pseudo-boxes are read by the models beside the detector
        rounds = RoundPlan(parts_dir / "round", plan.realdata, plan.detector.parent)
        makers.append(
            ("real", lambda: real_classifier_crops(rounds, detector(), 6, plan.seed), "train", 1)
        )
    if plan.local_crops > 0:
        makers.append(
            ("local", lambda: local_index_crops(plan.local_crops, plan.seed + 4), "train", 1)
        )
    if plan.casino_dirs:
        makers.append(
            ("casino", lambda: extract_crops(plan.casino_dirs, 2, 2, plan.seed), "train", 1)
        )
    makers.append(
        ("holdout", lambda: extract_crops(plan.holdout_dirs, 1, 1, plan.seed), "valid", 0)
    )
    takes = dict(plan.take)
    unknown = sorted(set(takes) - {name for name, *_ in makers})
    if unknown:
        raise ValueError(f"--take names no part drawn: {', '.join(unknown)}")
    parts = []
    for name, make, role, copies in makers:
        path = parts_dir / f"{name}.npz"
        if path.is_file():
            print(f"{name}: kept {path}", flush=True)
        else:
            print(f"{name}: drawing", flush=True)  # the procedural crops take minutes, silently
            started = time.monotonic()
            crops, labels = make()
            unfinished = path.with_name(path.name + ".partial")  # a killed run leaves no part
            with unfinished.open("wb") as file:
                np.savez(file, crops=crops, labels=labels)
            unfinished.replace(path)
            print(f"{name}: {len(labels)} crops in {time.monotonic() - started:.0f} s", flush=True)
        parts.append(BundlePart(path, role, copies, takes.get(name, 0)))
    return parts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m training.crop_bundle",
        description="Pack index crops (.npz) into a small folder of JPEG mosaics, or describe one.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    pack = commands.add_parser("pack", help="pack .npz crop files into a bundle folder")
    pack.add_argument("out", type=Path)
    pack.add_argument(
        "parts",
        nargs="+",
        help="FILE.npz, FILE.npz:COPIES or FILE.npz:valid; FILE.npz@N takes N of its crops",
    )
    pack.add_argument("--quality", type=int, default=90, help="JPEG quality (default 90)")
    info = commands.add_parser("info", help="count a bundle's crops by role")
    info.add_argument("folder", type=Path)
    draw = commands.add_parser(
        "draw", help="draw the shipped recipe's crops from scenes, fonts and photos, and pack them"
    )
    draw.add_argument("out", type=Path)
    draw.add_argument("--scenes", type=Path, nargs="+", required=True, help="training scenes")
    draw.add_argument("--holdout", type=Path, nargs="+", required=True, help="held-out scenes")
    draw.add_argument("--photos", type=Path, help="a labelled photo manifest (split train used)")
    draw.add_argument("--glyph-crops", type=int, default=45000, help="procedural crops (45000)")
    draw.add_argument(
        "--detector",
        type=Path,
        help="finds the photos' indices and the hard negatives (default: the shipped detector)",
    )
    draw.add_argument("--parts", type=Path, help="where the .npz parts go (default OUT-parts)")
    draw.add_argument("--seed", type=int, default=0)
    draw.add_argument("--quality", type=int, default=85, help="JPEG quality (default 85)")
    draw.add_argument("--realdata", type=Path, help="real-photo folders: a round's real crops")
    draw.add_argument("--casino", type=Path, nargs="+", default=[], help="casino scenes")
    draw.add_argument("--local-crops", type=int, default=0, help="local letters' crops (0)")
    draw.add_argument(
        "--take", action="append", default=[], metavar="NAME=N", help="pack N of a part's crops"
    )
    args = parser.parse_args(argv)
    try:
        if args.command in ("pack", "draw"):
            if not 50 <= args.quality <= 100:
                raise ValueError(f"--quality {args.quality}: expected 50..100")
            if args.command == "pack":
                parts = [parse_part(text) for text in args.parts]
            else:
                for option, value in (
                    ("--glyph-crops", args.glyph_crops),
                    ("--local-crops", args.local_crops),
                ):
                    if value < 0:
                        raise ValueError(f"{option} {value}: expected 0 or more")
                takes = []
                for text in args.take:
                    name, _, count = text.partition("=")
                    if not (count.isdigit() and int(count) >= 1):
                        raise ValueError(f"--take {text!r}: expected NAME=N with N >= 1")
                    takes.append((name, int(count)))
                if args.detector is None:
                    from vision.reader import default_models_dir

                    args.detector = default_models_dir() / "detector.onnx"
                if not args.detector.is_file():
                    raise ValueError(f"--detector {str(args.detector)!r}: no such model")
                plan = DrawPlan(
                    tuple(args.scenes),
                    tuple(args.holdout),
                    args.detector,
                    args.photos,
                    args.glyph_crops,
                    args.seed,
                    args.realdata,
                    tuple(args.casino),
                    args.local_crops,
                    tuple(takes),
                )
                parts_dir = args.parts or args.out.with_name(args.out.name + "-parts")
                parts = draw_parts(plan, parts_dir)
            index = pack_bundle(parts, args.out, args.quality)
            folder, entries = args.out, index["parts"]
            train = sum(e["count"] * max(1, e["copies"]) for e in entries if e["role"] == "train")
            valid = sum(e["count"] for e in entries if e["role"] == "valid")
        else:
            folder = args.folder
            train_crops, _, valid_crops, _ = load_bundle(folder)  # every mosaic decoded: a check
            train, valid = len(train_crops), len(valid_crops)
    except ValueError as error:
        parser.error(str(error))
    size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
    print(
        f"{folder}: {train} train crops (copies counted), {valid} valid crops, {size / 1e6:.1f} MB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
