"""Does a video read the same with the frame memory (``Reader.for_stream()``) as without
(``Reader.for_frames()``), and how much of the classifier's and the verifier's work does the
memory save?

Each labelled photo becomes a short clip: the photo fitted into ``--side`` pixels, then
``--frames`` frames of it, each with fresh camera noise (normal, sigma 4 grey levels) and,
with ``--wobble``, moved by up to one pixel either way. Every frame is read by both readers
(the memory's reader reads the clip in order, from an empty memory). Printed per set and
reader: card F1 over every frame (certain cards only, as ``handreader eval``), certain cards
that match no label, uncertain cards a frame, index crops classified and boxes shown to the
verifier a frame, and milliseconds a frame; then the frames whose certain cards differ between
the two readers.

    python benchmarks/eval_frame_memory.py REALDATA [--sets boxes tables ...] [--frames 10]
        [--side 960] [--wobble] [--limit N] [--models DIR] [--memory NAME=VALUE ...] [--json]

``--memory`` sets a field of the memory's ``vision.frame_memory.MemorySettings`` (``wobble=0``).

``REALDATA`` holds the real folders (``boxes/manifest.jsonl``...): their ``valid`` rows are
read, or every row of a folder without splits.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from training.round_report import manifest_sets
from vision.evaluate import EvalTotals, ManifestEntry
from vision.frame_memory import MemorySettings
from vision.imageio import load_image
from vision.reader import Reader


@dataclasses.dataclass
class Figures:
    """One reader's figures on one set."""

    totals: EvalTotals = dataclasses.field(default_factory=EvalTotals)
    frames: int = 0
    uncertain: int = 0
    crops: int = 0
    verified: int = 0
    milliseconds: list[float] = dataclasses.field(default_factory=list)

    def summary(self) -> dict[str, float]:
        frames = max(1, self.frames)
        return {
            "f1": round(self.totals.f1, 4),
            "wrong": self.totals.wrong,
            "uncertain a frame": round(self.uncertain / frames, 3),
            "crops a frame": round(self.crops / frames, 2),
            "verified a frame": round(self.verified / frames, 2),
            "ms a frame": round(statistics.median(self.milliseconds or [0.0]), 2),
        }


class Counting:
    """A reader whose classifier crops and verifier boxes are counted (its own copy)."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.crops = 0
        self.verified = 0
        run = reader._run_classifier

        def counted_run(crops: NDArray[np.uint8]) -> tuple[NDArray[np.float32], ...]:
            self.crops += len(crops)
            return run(crops)

        reader._run_classifier = counted_run  # type: ignore[method-assign]
        if reader.verifier is not None:
            reader.verifier = _CountedVerifier(reader.verifier, self)  # type: ignore[assignment]


class _CountedVerifier:
    def __init__(self, verifier: Any, counting: Counting) -> None:
        self._verifier = verifier
        self._counting = counting

    def index_probability(self, image: NDArray[np.uint8], xyxy: NDArray[np.float32]) -> Any:
        self._counting.verified += len(xyxy)
        return self._verifier.index_probability(image, xyxy)


def clip(image: NDArray[np.uint8], frames: int, side: int, wobble: bool, seed: int) -> list[Any]:
    """The clip of ``image`` (see the module's docstring)."""
    rng = np.random.default_rng(seed)
    scale = min(1.0, side / max(image.shape[:2]))
    if scale < 1.0:
        size = (round(image.shape[1] * scale), round(image.shape[0] * scale))
        image = np.asarray(cv2.resize(image, size, interpolation=cv2.INTER_AREA), np.uint8)
    out = []
    for _ in range(frames):
        frame = image
        if wobble:
            dx, dy = (int(v) for v in rng.integers(-1, 2, size=2))
            shift = np.array([[1, 0, dx], [0, 1, dy]], np.float32)
            frame = cv2.warpAffine(
                image, shift, image.shape[1::-1], borderMode=cv2.BORDER_REPLICATE
            )
        noisy = frame.astype(np.float32) + rng.normal(0.0, 4.0, frame.shape).astype(np.float32)
        out.append(np.clip(noisy, 0, 255).astype(np.uint8))
    return out


def memory_settings(pairs: list[str]) -> MemorySettings:
    """The memory's settings with ``NAME=VALUE`` pairs applied (SystemExit names a bad one)."""
    fields = {field.name: field for field in dataclasses.fields(MemorySettings)}
    changes: dict[str, Any] = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name not in fields or not value:
            raise SystemExit(
                f"--memory {pair!r}: expected NAME=VALUE, NAME one of {sorted(fields)}"
            )
        try:
            changes[name] = int(value) if fields[name].type in (int, "int") else float(value)
        except ValueError:
            raise SystemExit(f"--memory {pair!r}: {value!r} is not a number") from None
    try:
        return MemorySettings(**changes)
    except ValueError as error:
        raise SystemExit(f"--memory: {error}") from None


def measure(
    reader: Reader,
    entries: list[ManifestEntry],
    frames: int,
    side: int,
    wobble: bool,
    memory: MemorySettings | None = None,
) -> tuple[dict[str, Figures], int, int]:
    """Both readers' figures on the clips of ``entries``, the frames whose certain cards
    differ between them, and the frames read."""
    figures = {"without memory": Figures(), "with memory": Figures()}
    differing = total = 0
    for number, entry in enumerate(entries):
        image = load_image(entry.image)
        plain = Counting(reader.for_frames())
        remembering = Counting(reader.for_stream(memory))
        for frame in clip(image, frames, side, wobble, seed=number):
            certain = []
            for name, counting in (("without memory", plain), ("with memory", remembering)):
                started = time.perf_counter()
                reading = counting.reader.read(frame)
                figure = figures[name]
                figure.milliseconds.append((time.perf_counter() - started) * 1000)
                figure.totals.add_reading(entry, reading)
                figure.frames += 1
                figure.uncertain += sum(card.uncertain for card in reading.cards)
                certain.append(Counter(c.code for c in reading.cards if not c.uncertain))
            differing += int(certain[0] != certain[1])
            total += 1
        for name, counting in (("without memory", plain), ("with memory", remembering)):
            figures[name].crops += counting.crops
            figures[name].verified += counting.verified
    return figures, differing, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("realdata", type=Path, help="the real folders' parent")
    parser.add_argument("--sets", nargs="*", default=["boxes", "tables", "singles", "pinochle"])
    parser.add_argument("--frames", type=int, default=10, help="frames a clip")
    parser.add_argument("--side", type=int, default=960, help="a frame's longer side")
    parser.add_argument("--wobble", action="store_true", help="move frames by up to 1 px")
    parser.add_argument("--limit", type=int, default=0, help="photos per set (0: all)")
    parser.add_argument("--models", type=Path, help="models folder (default: the shipped one)")
    parser.add_argument(
        "--memory", action="append", default=[], metavar="NAME=VALUE", help="a memory setting"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    memory = memory_settings(args.memory)

    reader = Reader.load(args.models)
    every = manifest_sets(args.realdata, {})
    results: dict[str, Any] = {}
    for name in args.sets:
        entries = every.get(name)
        if not entries:
            raise SystemExit(f"no set {name!r} under {args.realdata}")
        if args.limit:
            entries = entries[: args.limit]
        figures, differing, total = measure(
            reader, entries, args.frames, args.side, args.wobble, memory
        )
        results[name] = {
            "photos": len(entries),
            "frames": total,
            **{reader_name: figure.summary() for reader_name, figure in figures.items()},
            "frames whose certain cards differ": differing,
        }
        if not args.json:
            print(f"{name} ({len(entries)} photos, {total} frames)")
            for reader_name, figure in figures.items():
                row = "  ".join(f"{key} {value}" for key, value in figure.summary().items())
                print(f"  {reader_name:15s} {row}")
            print(f"  frames whose certain cards differ: {differing} of {total}")
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
