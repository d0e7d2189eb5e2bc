"""What the pass over a photo's negative costs (``ReaderSettings.dark_faces``), against the same
reader without it, in one run: the example photo (640x480), the 12 MP close-up and the 12 MP
table photo of ``bench_reader.py`` (decoded reduced once, then only the read timed), and that table
photo's negative (a deck printed light on dark, whose negative is read whole), each read in
turn with the pass on and off so that both see the same load; the dark table photo also with its
negative detected again from its full size rather than from the copy its glance read. Medians
of ``--runs`` reads; milliseconds.

With ``--realdata DIR``, also each photo of the folders' manifests over
``ReaderSettings.tile_above_px``: the glance at its negative as the reader takes it (from the copy
the photo is shrunk to for its own passes, ``IndexDetector.detect_and_glance``) against a glance
at the full-size negative, counted as photos where both show the same number of indices the
photo lacks or is less sure of (``vision.dark_faces.negative_boxes``), and where both decide
alike whether the negative is read.

With ``--scenes MANIFEST`` (repeatable), also each photo of the manifest taken as a video's
frame: on how many a video read as it is would turn to its negatives
(:meth:`vision.dark_faces.VideoFaces.turn`), with ``dark_face_surer`` on and off.

    python benchmarks/bench_dark_faces.py [--runs 20] [--models DIR] [--realdata DIR]
        [--scenes MANIFEST ...]
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
from pathlib import Path

from bench_reader import _twelve_megapixel_jpeg
from timing import paired_median_ms

from vision.dark_faces import VideoFaces, negative, negative_boxes
from vision.imageio import decode_reduced, load_image
from vision.reader import Reader

ROOT = Path(__file__).resolve().parent.parent


def large_photo_glances(reader: Reader, realdata: Path) -> dict[str, int]:
    """The photos of ``realdata``'s manifests over ``tile_above_px``, those whose glance at the
    negative shows indices to read either way (``shows indices``), and those whose glance at
    the negative of the shrunk copy finds as many as a glance at the full-size negative
    (``same count``) and decides alike whether the negative is read (``same decision``)."""
    settings, detector = reader.settings, reader.detector
    counts = {"photos": 0, "shows indices": 0, "same count": 0, "same decision": 0}
    for manifest in sorted(realdata.glob("*/manifest.jsonl")):
        for line in manifest.read_text().splitlines():
            name = json.loads(line)["image"]
            path = next(
                (
                    p
                    for p in (manifest.parent / name, manifest.parent / "images" / name)
                    if p.exists()
                ),
                None,
            )
            if path is None:
                continue
            image = load_image(path)
            if max(image.shape[:2]) <= settings.tile_above_px:
                continue
            image = reader.prepare(image)
            found, glanced = detector.detect_and_glance(image, negative)
            shrunk = len(negative_boxes(glanced.found, found, settings)[0])
            whole = len(negative_boxes(detector.glance(negative(image)), found, settings)[0])
            counts["photos"] += 1
            counts["shows indices"] += shrunk > 0 or whole > 0
            counts["same count"] += shrunk == whole
            counts["same decision"] += (shrunk > 0) == (whole > 0)
    return counts


def video_turns(reader: Reader, manifest: Path) -> dict[str, int]:
    """Each photo of ``manifest`` taken as a frame of a video read as it is: whether the rule
    of :meth:`vision.dark_faces.VideoFaces.turn` turns the video to its negatives, with
    ``dark_face_surer`` as the reader has it (``turns``) and off (``turns, surer off``)."""
    frames = reader.for_frames()
    off = dataclasses.replace(frames.settings, dark_face_surer=False)
    counts = {"frames": 0, "turns": 0, "turns, surer off": 0}
    for line in manifest.read_text().splitlines():
        image = frames.prepare(load_image(manifest.parent / json.loads(line)["image"]))
        read = frames.detect(image)
        other = frames.detector.glance(negative(image))
        counts["frames"] += 1
        counts["turns"] += VideoFaces().turn(read, other, frames.settings, False)
        counts["turns, surer off"] += VideoFaces().turn(read, other, off, False)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--models", type=Path, help="models folder (default: the shipped one)")
    parser.add_argument("--realdata", type=Path, help="also check the glance of its large photos")
    parser.add_argument(
        "--scenes",
        type=Path,
        action="append",
        default=[],
        metavar="MANIFEST",
        help="also count the photos of this manifest on which a video would turn; repeatable",
    )
    args = parser.parse_args()
    with_pass = Reader.load(args.models) if args.models else Reader.load()
    without = with_pass.with_settings(dataclasses.replace(with_pass.settings, dark_faces=False))
    frame = load_image(ROOT / "examples" / "hand.jpg")
    photos = {
        "640x480 photo": frame,
        "12 MP close-up": decode_reduced(_twelve_megapixel_jpeg(frame)).image,
        "12 MP table photo": decode_reduced(_twelve_megapixel_jpeg(frame, repeat=3)).image,
    }
    # the same table printed light on dark: its negative is read whole (without the pass, the
    # reader finds little, so only the first column is its cost)
    photos["12 MP table photo, light on dark"] = negative(photos["12 MP table photo"])
    figures: dict[str, dict[str, float]] = {}
    for name, image in photos.items():
        on, off = paired_median_ms(
            [lambda image=image: with_pass.read(image), lambda image=image: without.read(image)],
            args.runs,
        )
        figures[name] = {"with the negative": round(on, 1), "without": round(off, 1)}
        print(
            f"{name}: {on:.1f} ms with the pass over the negative, {off:.1f} without "
            f"({on / off:.2f}x)"
        )
    # the dark table's negative detected again from its full size, as before the glance's copy
    # and boxes were reused (IndexDetector.detect_glanced)
    again = copy.copy(with_pass)
    again.detector = copy.copy(with_pass.detector)
    again.detector.detect_glanced = lambda image, glance: again.detector.detect(image)  # type: ignore[method-assign]
    dark = photos["12 MP table photo, light on dark"]
    reused, fresh = paired_median_ms(
        [lambda: with_pass.read(dark), lambda: again.read(dark)], args.runs
    )
    figures["12 MP table photo, light on dark"]["negative detected again"] = round(fresh, 1)
    print(
        f"12 MP table photo, light on dark: {reused:.1f} ms reading its negative from the "
        f"glance's copy, {fresh:.1f} ms detecting the negative again from its full size"
    )
    if args.realdata is not None:
        counts = large_photo_glances(with_pass, args.realdata)
        print(
            f"photos over {with_pass.settings.tile_above_px} px: {counts['photos']}, "
            f"{counts['shows indices']} whose glance shows indices to read either way; the glance "
            f"from the shrunk copy finds as many as at full size on {counts['same count']}, "
            f"decides alike on {counts['same decision']}"
        )
        figures["large photos"] = {name: float(count) for name, count in counts.items()}
    for manifest in args.scenes:
        turns = video_turns(with_pass, manifest)
        print(
            f"{manifest}: a video would turn to its negatives on {turns['turns']} of "
            f"{turns['frames']} frames ({turns['turns, surer off']} with dark_face_surer off)"
        )
        figures[str(manifest)] = {name: float(count) for name, count in turns.items()}
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
