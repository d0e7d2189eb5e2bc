"""Benchmark of the live pipeline on a video file: frames per second at 640x480, and flicker.

Run: ``.venv/bin/python benchmarks/bench_webcam.py [--frames 750] [--fake] [--fake-ms 0]``.

1. A still video is made from one picture (default: a synthetic table scene of the holdout
   decks, ``datasets/holdout.yaml``, 640x480; or ``--image PHOTO``, resized) with fresh
   Gaussian noise in every frame (``--noise`` sigma, seeded), written with ``cv2.VideoWriter``
   (``mp4v``, 25 fps).
2. The recognizer is the shipped one (``vision.reader.Reader.load()``) when
   ``models/manifest.json`` exists, unless ``--fake``; otherwise a fake reader returns the
   scene's true cards (from the synthetic labels) with ``--misread`` random misreads and
   ``--miss`` missed cards per card and frame, after sleeping ``--fake-ms`` (a stand-in for
   the model's time). With the fake at 0 ms the figures are the pipeline's own overhead
   (decode, track, score, draw, encode); the output says which reader ran.
3. The reader alone is timed on the video's first frames (its ceiling in frames per second).
4. The video is played through ``handreader webcam``'s loop (``run_webcam``, headless, drawing
   every frame) in these configurations, in this order, all in one run so that they share the
   machine's load: every frame read *serially* (read, then track, score and draw: the
   baseline, the loop as it was); the same with Niu Niu's deck in play (the cards shown
   decoded together under it, ``LiveSettings.in_play``: its cost is the ``score`` stage's
   difference from the baseline's); every frame read *overlapped* (the reader works on frame N
   in a worker thread while frame N - 1 is tracked, scored and drawn and frame N + 1 decoded:
   ``handreader webcam``'s default); *two frames read at once* (frames N - 1 and N in two
   workers, so that one frame's detector runs beside the other's classifier: ``--ahead 2``);
   the same as overlapped with the annotated mp4 written; ``read_every =
   0`` (k chosen to hold 25 fps), overlapped, with the mp4 written.

For each: frames per second, frames read, mean milliseconds per frame of each stage (``read``,
``track``, ``score`` from the pipeline; ``decode``, ``draw``, ``output`` wall time of the loop),
and flicker per minute of video after the first ``--settle`` frames (default 25, one second,
while cards are first confirmed): changes of a shown card's code, changes of the shown card
set, changes of the scored table's display (hands, scores, outcomes) and, for comparison,
changes of the card set in the raw readings. The machine's load average (``os.getloadavg``)
is printed before and after: speed figures on a shared machine mean little without it.
Target: 25 fps or more at 640x480 reading every frame; exit status 1 when the
overlapped every-frame configuration misses it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from handreader.cli.webcam import run_webcam
from handreader.tables.live import FrameReader, LiveFrame, LiveSettings, frame_reader, table_summary
from rules.decks import niuniu_deck
from vision.detections import CardReading, Reading
from vision.flicker import FlickerMeter
from vision.tracking import Track, decode_tracks

ROOT = Path(__file__).resolve().parent.parent
SIZE_WH = (640, 480)
TARGET_FPS = 25.0


def synthetic_table(index: int) -> tuple[NDArray[np.uint8], list[CardReading]]:
    """A 640x480 table scene of the holdout decks and its true cards (one per card)."""
    from training.synth.config import Layouts, load_config
    from training.synth.generate import scene_at

    config = load_config(ROOT / "datasets" / "holdout.yaml")
    config = replace(
        config,
        sizes=(SIZE_WH,),
        layouts=Layouts(single=0, table=1, hand=0, fan=0, pits=0, pile=0),
    )
    scene = scene_at(config, index)
    boxes: dict[int, list[tuple[float, float, float, float]]] = {}
    codes: dict[int, str] = {}
    for label in scene.labels:
        boxes.setdefault(label.card, []).append(label.box_xyxy)
        codes[label.card] = label.code
    cards = []
    for card, parts in sorted(boxes.items()):
        union = (
            min(b[0] for b in parts),
            min(b[1] for b in parts),
            max(b[2] for b in parts),
            max(b[3] for b in parts),
        )
        cards.append(CardReading(codes[card], 0.95, union, corners=len(parts)))
    return scene.image, cards


def still_video(image: NDArray[np.uint8], path: Path, frames: int, noise: float, seed: int) -> Path:
    """``frames`` copies of ``image`` with fresh Gaussian noise each, as an mp4 at 25 fps."""
    rng = np.random.default_rng(seed)
    height, width = image.shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"mp4v"), 25.0, (width, height))
    if not writer.isOpened():
        raise SystemExit(f"cannot write {path}")
    base = image.astype(np.float32)
    for _ in range(frames):
        noisy = base + rng.normal(0.0, noise, base.shape).astype(np.float32)
        writer.write(np.clip(noisy + 0.5, 0, 255).astype(np.uint8))
    writer.release()
    return path


@dataclass
class FakeReader:
    """The scene's true cards with random misreads and misses, after a simulated delay."""

    cards: list[CardReading]
    misread: float
    miss: float
    delay_ms: float
    seed: int = 0
    rng: np.random.Generator = field(init=False)

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def read(self, image: NDArray[np.uint8]) -> Reading:
        if self.delay_ms > 0:
            time.sleep(self.delay_ms / 1000)
        from rules.cards import CARD_CLASSES

        found = []
        for card in self.cards:
            if self.rng.random() < self.miss:
                continue
            code = card.code
            if self.rng.random() < self.misread:
                code = CARD_CLASSES[int(self.rng.integers(54))]
            shift = self.rng.uniform(-1.5, 1.5, 4)
            x1, y1, x2, y2 = (float(v + s) for v, s in zip(card.box_xyxy, shift, strict=True))
            found.append(replace(card, code=code, box_xyxy=(x1, y1, x2, y2)))
        return Reading((image.shape[1], image.shape[0]), tuple(found))


@dataclass
class Observer:
    """Collects flicker and timings from the frames of one run."""

    settle: int
    fps: float = 25.0
    tracked: FlickerMeter = field(init=False)
    raw: FlickerMeter = field(init=False)
    summaries: int = 0
    last_summary: str | None = None
    stages: dict[str, list[float]] = field(default_factory=dict)
    last_shown: tuple[Track, ...] = ()
    at_settle: tuple[int, int, int, int] = (0, 0, 0, 0)

    def __post_init__(self) -> None:
        self.tracked = FlickerMeter(self.fps)
        self.raw = FlickerMeter(self.fps)

    def __call__(self, frame: LiveFrame) -> None:
        if frame.index == self.settle:
            tracked, raw = self.tracked.count, self.raw.count
            self.at_settle = (
                tracked.code_changes,
                tracked.set_changes,
                self.summaries,
                raw.set_changes,
            )
        self.tracked.add_tracks(frame.shown)
        self.last_shown = frame.shown
        if frame.reading is not None:
            self.raw.add_reading(frame.reading)
        summary = table_summary(frame.table)
        if summary != self.last_summary:
            self.summaries += 1
            self.last_summary = summary
        for stage, value in frame.timings_ms.items():
            self.stages.setdefault(stage, []).append(value)


def run(
    name: str,
    video: Path,
    reader: FrameReader,
    settings: LiveSettings,
    output: Path | None,
    settle: int,
    overlap: bool,
    ahead: int = 1,
) -> dict[str, Any]:
    """One configuration; its figures (flicker counted from frame ``settle`` on); ``ahead``
    frames are read at once when ``overlap``."""
    observer = Observer(settle)
    stats = run_webcam(
        str(video),
        reader=reader,
        settings=settings,
        headless=True,
        output=output,
        on_frame=observer,
        overlap=overlap,
        ahead=ahead,
    )
    minutes = (stats.frames - settle) / stats.source_fps / 60
    tracked, raw = observer.tracked.count, observer.raw.count
    codes, sets, tables, raws = observer.at_settle
    return {
        "configuration": name,
        "frames": stats.frames,
        "reads": stats.reads,
        "read_every": stats.read_every,
        "fps": round(stats.fps, 1),
        "ms_per_frame": round(1000 / stats.fps, 2) if stats.fps else None,
        "ms_mean": {key: round(value, 2) for key, value in stats.timings_ms.items()},
        "code_changes_per_min": round((tracked.code_changes - codes) / minutes, 2),
        "set_changes_per_min": round((tracked.set_changes - sets) / minutes, 2),
        "table_changes_per_min": round((observer.summaries - tables) / minutes, 2),
        "raw_set_changes_per_min": round((raw.set_changes - raws) / minutes, 2),
        "meets_target": stats.fps >= TARGET_FPS,
        "last_shown": observer.last_shown,
    }


def deck_decoding_us(cards: tuple[Track, ...], repeats: int = 2000) -> dict[str, float]:
    """Microseconds per call of decoding ``cards`` under Niu Niu's deck: as shown, and with
    the last card's code set to the first's (one card claimed twice: the assignment runs)."""
    deck = niuniu_deck()
    cases = {"no conflict": cards}
    if len(cards) >= 2:
        claimed = replace(cards[-1], code=cards[0].code, votes=(*cards[-1].votes, cards[0].code))
        cases["one card claimed twice"] = (*cards[:-1], claimed)
    timings = {}
    for name, shown in cases.items():
        started = time.perf_counter()
        for _ in range(repeats):
            decode_tracks(shown, deck)
        timings[name] = round((time.perf_counter() - started) / repeats * 1e6, 1)
    return timings


def reader_fps(video: Path, reader: FrameReader, frames: int) -> float:
    """Frames per second of the reader alone on the video's first ``frames`` frames."""
    capture = cv2.VideoCapture(str(video))
    images: list[NDArray[np.uint8]] = []
    while len(images) < frames:
        ok, image = capture.read()
        if not ok:
            break
        images.append(np.asarray(image, np.uint8))
    capture.release()
    started = time.perf_counter()
    for image in images:
        reader.read(image)
    return len(images) / (time.perf_counter() - started)


def load() -> str:
    """The load averages over 1, 5 and 15 minutes."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def decode_fps(video: Path) -> float:
    """Frames per second of decoding alone."""
    capture = cv2.VideoCapture(str(video))
    started, frames = time.perf_counter(), 0
    while capture.read()[0]:
        frames += 1
    capture.release()
    return frames / (time.perf_counter() - started)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--image", type=Path, help="picture for the still video (else synthetic)")
    parser.add_argument("--scene", type=int, default=0, help="synthetic scene number")
    parser.add_argument("--frames", type=int, default=750, help="video length (750 = 30 s)")
    parser.add_argument("--noise", type=float, default=4.0, help="noise sigma per frame")
    parser.add_argument(
        "--settle", type=int, default=25, help="frames before flicker is counted (1 s)"
    )
    parser.add_argument("--fake", action="store_true", help="use the fake reader")
    parser.add_argument("--fake-ms", type=float, default=0.0, help="fake reader's delay")
    parser.add_argument("--misread", type=float, default=0.05, help="fake misread rate")
    parser.add_argument("--miss", type=float, default=0.03, help="fake miss rate")
    parser.add_argument("--models", type=Path, help="model folder (default: the shipped one)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    cv2.setNumThreads(2)

    image: NDArray[np.uint8]
    if args.image is not None:
        photo = cv2.imread(str(args.image))
        if photo is None:
            raise SystemExit(f"cannot read {args.image}")
        image = np.asarray(cv2.resize(photo, SIZE_WH), np.uint8)
        truth: list[CardReading] = []
    else:
        image, truth = synthetic_table(args.scene)
    models = args.models or ROOT / "models"
    reader: FrameReader
    if not args.fake and (models / "manifest.json").is_file():
        from vision.reader import Reader

        reader = Reader.load(models)
        which = f"real Reader ({models})"
    else:
        reader = FakeReader(truth, args.misread, args.miss, args.fake_ms)
        which = (
            f"fake reader ({len(truth)} true cards, {args.misread:.0%} misreads, "
            f"{args.miss:.0%} misses, {args.fake_ms:g} ms per read)"
        )
    with tempfile.TemporaryDirectory() as folder:
        video = still_video(image, Path(folder) / "still.mp4", args.frames, args.noise, 1)
        load_before = load()
        decoding = decode_fps(video)
        reading = reader_fps(video, frame_reader(reader), min(args.frames, 100))
        every, auto = LiveSettings(read_every=1), LiveSettings(read_every=0)
        decked = LiveSettings(read_every=1, in_play=niuniu_deck())
        settle = args.settle
        out = Path(folder)
        results = [
            run("serial, every frame (baseline)", video, reader, every, None, args.settle, False),
            run("serial, every frame, deck in play", video, reader, decked, None, settle, False),
            run("overlapped, every frame", video, reader, every, None, args.settle, True),
            run("two frames read at once", video, reader, every, None, args.settle, True, 2),
            run(
                "overlapped, every frame, mp4 out",
                video,
                reader,
                every,
                out / "a.mp4",
                args.settle,
                True,
            ),
            run(
                "overlapped, auto k, mp4 out", video, reader, auto, out / "b.mp4", args.settle, True
            ),
        ]
        load_after = load()
    decoding_us = deck_decoding_us(results[1].pop("last_shown"))
    for row in results:
        row.pop("last_shown", None)
    report = {
        "size": list(SIZE_WH),
        "frames": args.frames,
        "reader": which,
        "load_before": load_before,
        "load_after": load_after,
        "decode_fps": round(decoding, 1),
        "reader_alone_fps": round(reading, 1),
        "target_fps": TARGET_FPS,
        "runs": results,
        "deck_decoding_us": decoding_us,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"{SIZE_WH[0]}x{SIZE_WH[1]}, {args.frames} frames, {which}; flicker counted "
            f"from frame {args.settle}"
        )
        print(f"load average (1, 5, 15 min) before: {load_before}; after: {load_after}")
        print(f"decoding alone: {decoding:.0f} fps; reader alone: {reading:.1f} fps")
        for row in results:
            stages = ", ".join(f"{k} {v:.2f}" for k, v in row["ms_mean"].items())
            print(
                f"- {row['configuration']}: {row['fps']:.1f} fps "
                f"({row['reads']} reads, k={row['read_every']}; ms: {stages}); per minute: "
                f"code changes {row['code_changes_per_min']}, card set "
                f"{row['set_changes_per_min']}, table {row['table_changes_per_min']}, raw card "
                f"set {row['raw_set_changes_per_min']}"
                + ("" if row["meets_target"] else f"  MISSES {TARGET_FPS:g} fps")
            )
        budget = 1000 / TARGET_FPS
        print(
            "deck in play, the cards shown decoded under it per read frame: "
            + ", ".join(f"{name} {value:.1f} us" for name, value in decoding_us.items())
            + f"; against the baseline's {results[0]['ms_per_frame']} ms a frame "
            f"(budget {budget:g} ms)"
        )
    overlapped = next(row for row in results if row["configuration"] == "overlapped, every frame")
    return 0 if overlapped["meets_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
