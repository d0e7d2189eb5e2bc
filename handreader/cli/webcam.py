"""``handreader webcam``: the live picture with the table read, tracked and scored over it.

::

    handreader webcam [--source 0 | FILE | rtsp://...] [--profile P]
                      [--headless --output OUT.mp4] [--max-frames N] [--snapshots DIR]
                      [--read-every K] [--serial] [--game G] [--decks N] [--deck NAME]

``--source`` is a camera number (default 0), a video file or a stream URL; ``--deck`` reads
every frame with a calibrated deck (``handreader.service.routes.decks.DeckReader``). Frames are read
with the Niu Niu deck in play (52 cards, no jokers, the starting profile's number of decks;
``--decks N`` another number, ``--game any`` none: ``handreader.cli.in_play``), and the cards
shown are decoded together under it (``handreader.tables.live``). A window shows each
frame with, drawn over it, the card boxes and codes, each hand's bull triple and rest, its
score, the players' results against the banker (or the winner) and the frame rate. Keys:
``q`` / Esc quit, ``p`` / space pause, ``s`` snapshot (a PNG of the annotated frame in the
current folder or ``--snapshots``), ``n`` next profile.

The reader works on frame N in a worker thread while frame N - 1 is drawn, shown and written
(the picture is one frame behind the camera; ``--serial`` reads each frame before drawing it).
``--headless`` opens no window; ``--output OUT.mp4`` writes the annotated video (MPEG-4 part 2,
``mp4v``, at the source's frame rate; paused frames are not written). At the end one line of
statistics is printed (``--json``: a JSON object): frames, frames read, frames per second, and
the flicker (changes of shown codes per minute of video).

A source that cannot be opened or gives no frame, an output that cannot be written or is the
source itself, or a window on a machine without a display (or whose display does not answer)
is an error (exit status 2). A video file that ends well before the frames it declares (the
rest does not decode) is read as far as it goes, with a warning. Ctrl-C stops the run as the
quit key does: the statistics are printed, and the exit status is 130.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from handreader.cli._amounts import folder
from handreader.cli._usage import UsageError
from handreader.cli.in_play import add_deck_options
from handreader.cli.video_source import (
    WebcamError,
    check_output,
    open_source,
    parse_source,
    quiet_stderr,
)
from handreader.cli.window import Display, Key, Window, check_window_support, key_action
from handreader.tables.live import (
    FrameReader,
    LiveFrame,
    LivePipeline,
    LiveSettings,
    frame_reader,
    next_profile,
)
from handreader.tables.live_stream import LiveStream
from handreader.tables.scoring import BankerRule, TableMode, TableOptions
from rules.decks import deck_in_play, niuniu_deck, niuniu_packs
from rules.niuniu_profiles import DEFAULT_PROFILE, NIU_PROFILES
from vision.flicker import FlickerMeter
from vision.tracking import TrackerSettings

__all__ = [
    "Display",
    "Key",
    "WebcamError",
    "WebcamStats",
    "check_window_support",
    "key_action",
    "open_source",
    "parse_source",
    "register",
    "run",
    "run_webcam",
]

VIDEO_SUFFIXES = frozenset({".mp4", ".m4v", ".mov", ".avi", ".mkv"})
"""The file names ``--output`` writes a video to (MPEG-4 part 2 in each container)."""


DEFAULT_AHEAD = 2
"""Frames the live loop reads at once (``--ahead``): on two cores, two frames read on one thread
each keep both busy (one frame's detector beside the other's classifier), about 1.4 times the
frames a second of one frame read at a time on both (``docs/benchmarks.md``, "Live overlay")."""


@dataclass(frozen=True, slots=True)
class WebcamStats:
    """What a run did: frames shown, frames read, seconds, snapshots, flicker."""

    frames: int
    reads: int
    seconds: float
    source_fps: float
    read_every: int
    profile: str
    snapshots: tuple[Path, ...]
    flicker: dict[str, float | int]
    timings_ms: dict[str, float] = field(default_factory=dict)
    interrupted: bool = False
    """Whether Ctrl-C stopped the run."""
    source_frames: int = 0
    """The frames a video file declares when it ended well before them (the rest does not
    decode); 0 otherwise."""

    @property
    def fps(self) -> float:
        """Frames processed per second of wall time."""
        return self.frames / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, object]:
        """JSON form printed by ``--json``."""
        return {
            "frames": self.frames,
            "reads": self.reads,
            "seconds": round(self.seconds, 3),
            "fps": round(self.fps, 2),
            "source_fps": round(self.source_fps, 2),
            "read_every": self.read_every,
            "profile": self.profile,
            "snapshots": [str(path) for path in self.snapshots],
            "flicker": self.flicker,
            "ms_per_frame": {key: round(value, 3) for key, value in self.timings_ms.items()},
            "interrupted": self.interrupted,
            "source_frames": self.source_frames,
        }

    def line(self) -> str:
        """One readable line."""
        return (
            f"{self.frames} frames ({self.reads} read, every {self.read_every}) in "
            f"{self.seconds:.2f} s: {self.fps:.1f} fps; shown codes changed "
            f"{self.flicker['code_changes']} times, card set {self.flicker['set_changes']} times"
            + ("; stopped by Ctrl-C" if self.interrupted else "")
        )


def _snapshot(image: NDArray[np.uint8], folder: Path, index: int) -> Path:
    from vision.imageio import write_image

    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = folder / f"handreader-{stamp}-{index:06d}.png"
    if not write_image(path, image):
        raise WebcamError(f"cannot write snapshot {str(path)!r}")
    return path


class _Clock:
    """Wall milliseconds spent per stage of the loop (decode, draw, output)."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = {}

    def add(self, stage: str, started: float) -> float:
        now = time.perf_counter()
        self.totals[stage] = self.totals.get(stage, 0.0) + (now - started) * 1000
        return now


def _results(
    capture: Any,
    pipeline: LivePipeline,
    overlap: bool,
    limit: int | None,
    clock: _Clock,
    ahead: int = 1,
    quiet: bool = False,
) -> Generator[tuple[NDArray[np.uint8], LiveFrame], None, None]:
    """Each frame of ``capture`` (up to ``limit``) with its result, in order; with ``overlap``
    the reader works on frames N - ``ahead`` + 1 .. N in worker threads while frame
    N - ``ahead`` is given out. ``quiet`` keeps the decoder's complaints (a damaged file) off
    the terminal."""
    stream = LiveStream(pipeline, ahead) if overlap else None
    taken = 0
    try:
        while limit is None or taken < limit:
            started = time.perf_counter()
            if quiet:
                with quiet_stderr():
                    ok, image = capture.read()
            else:
                ok, image = capture.read()
            clock.add("decode", started)
            if not ok or image is None:
                break
            taken += 1
            if stream is None:
                yield image, pipeline.process(image)
            else:
                result = stream.push(image)
                if result is not None:
                    yield result
        while stream is not None and (last := stream.flush()) is not None:
            yield last
    finally:
        if stream is not None:
            stream.close()


def run_webcam(
    source: int | str,
    *,
    reader: FrameReader,
    options: TableOptions | None = None,
    settings: LiveSettings | None = None,
    headless: bool = False,
    output: Path | None = None,
    max_frames: int | None = None,
    snapshots: Path | None = None,
    display: Display | None = None,
    capture: Any = None,
    on_frame: Callable[[LiveFrame], None] | None = None,
    overlap: bool = True,
    ahead: int = 1,
) -> WebcamStats:
    """Run the live loop on ``source`` until it ends, ``max_frames`` or the quit key.

    Window mode uses ``display`` (a cv2 window by default) and also writes ``output`` when
    given; headless mode shows nothing. ``capture`` is ``source`` already opened (it is released
    at the end). ``on_frame`` sees every processed frame (tests, benchmarks). With ``overlap``
    (the default) the reader works on the next ``ahead`` frames in worker threads while this
    one is drawn, shown and written (:class:`~handreader.tables.live_stream.LiveStream`: the picture
    is ``ahead`` frames behind the camera); without, each frame is read, then drawn.
    """
    import cv2

    from handreader.drawing.live import LiveAnnotator

    if max_frames is not None and max_frames < 1:
        raise WebcamError(f"--max-frames must be 1 or more, got {max_frames!r}")
    if capture is None:
        capture = open_source(source)
    source_fps = float(capture.get(cv2.CAP_PROP_FPS) or 0.0)
    if not 1.0 <= source_fps <= 240.0:
        source_fps = 25.0
    is_file = isinstance(source, str) and "://" not in source
    declared = int(capture.get(cv2.CAP_PROP_FRAME_COUNT) or 0) if is_file else 0
    pipeline = LivePipeline(reader, options, settings)
    annotator = LiveAnnotator()
    window: Display | None = None if headless else (display or Window("handreader"))
    writer: Any = None
    meter = FlickerMeter(source_fps)
    clock = _Clock()
    results = _results(capture, pipeline, overlap, max_frames, clock, ahead, quiet=is_file)
    saved: list[Path] = []
    totals: dict[str, float] = {}
    frames = reads = 0
    paused = interrupted = ran_out = False
    note: str | None = None
    fps: float | None = None
    last_image: NDArray[np.uint8] | None = None
    last_frame: LiveFrame | None = None
    started = previous = time.perf_counter()
    try:
        while True:
            if not paused or last_frame is None:
                result = next(results, None)
                if result is None:
                    ran_out = max_frames is None or frames < max_frames
                    break
                last_image, last_frame = result
                frames += 1
                reads += last_frame.was_read
                for stage, value in last_frame.timings_ms.items():
                    totals[stage] = totals.get(stage, 0.0) + value
                meter.add_tracks(last_frame.shown)
                if on_frame is not None:
                    on_frame(last_frame)
            assert last_image is not None and last_frame is not None
            drawn_at = time.perf_counter()
            annotated = annotator.annotate(
                last_image, last_frame, fps=fps, paused=paused, note=note
            )
            output_at = clock.add("draw", drawn_at)
            if writer is None and output is not None:
                height, width = annotated.shape[:2]
                fourcc = cv2.VideoWriter.fourcc(*"mp4v")
                writer = cv2.VideoWriter(str(output), fourcc, source_fps, (width, height))
                if not writer.isOpened():
                    raise WebcamError(f"cannot write video {str(output)!r}")
            if writer is not None and not paused:
                writer.write(annotated)
            key = Key.NONE
            if window is not None:
                window.show(annotated)
                spent = (time.perf_counter() - previous) * 1000
                delay = max(1, round(1000 / source_fps - spent)) if is_file else 1
                code = window.wait_key(delay)
                if code == -2:
                    break
                key = key_action(code)
            clock.add("output", output_at)
            pipeline.note_overhead((time.perf_counter() - drawn_at) * 1000)
            now = time.perf_counter()
            instant = 1.0 / max(now - previous, 1e-6)
            fps = instant if fps is None else fps + 0.1 * (instant - fps)
            previous = now
            note = None
            if key is Key.QUIT:
                break
            if key is Key.PAUSE:
                paused = not paused
            elif key is Key.SNAPSHOT:
                saved.append(_snapshot(annotated, snapshots or Path.cwd(), last_frame.index))
                note = f"saved {saved[-1].name}"
            elif key is Key.NEXT_PROFILE:
                profile = pipeline.set_profile(next_profile(pipeline.options.profile))
                note = f"profile {profile.name}"
                last_frame = pipeline.rescore(last_frame)
    except KeyboardInterrupt:  # Ctrl-C ends the run as the quit key does, statistics and all
        interrupted = True
    finally:
        results.close()
        capture.release()
        if writer is not None:
            writer.release()
        if window is not None:
            window.close()
    seconds = time.perf_counter() - started
    totals.update(clock.totals)
    return WebcamStats(
        frames=frames,
        reads=reads,
        seconds=seconds,
        source_fps=source_fps,
        read_every=pipeline.read_every,
        profile=pipeline.options.profile.name,
        snapshots=tuple(saved),
        flicker=meter.count.to_dict(),
        timings_ms={key: value / max(frames, 1) for key, value in totals.items()},
        interrupted=interrupted,
        # a file's frame count is an estimate in some containers: only a clear shortfall counts
        source_frames=declared if ran_out and frames < 0.9 * declared - 1 else 0,
    )


def register(subparsers: Any) -> None:
    """Add the ``webcam`` command to the CLI."""
    parser = subparsers.add_parser(
        "webcam",
        help="read and score the table live from a camera or a video",
        description="Show a camera or video with the cards, hands, scores and results drawn "
        "over it. Keys: q quit, p or space pause, s snapshot, n next profile.",
    )
    parser.add_argument(
        "--source", default="0", help="camera number, video file or stream URL (default 0)"
    )
    parser.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        choices=sorted(NIU_PROFILES),
        help=f"Niu Niu rules profile (default {DEFAULT_PROFILE})",
    )
    parser.add_argument(
        "--mode",
        default=TableMode.BANKER.value,
        choices=[mode.value for mode in TableMode],
        help="banker game or trainer ranking (default banker)",
    )
    parser.add_argument(
        "--banker",
        default=BankerRule.TOP.value,
        choices=[rule.value for rule in BankerRule],
        help="which hand is the banker's: the one nearest this edge (default top)",
    )
    parser.add_argument("--headless", action="store_true", help="open no window")
    parser.add_argument("--output", type=Path, metavar="OUT.mp4", help="write the annotated video")
    parser.add_argument("--max-frames", type=int, metavar="N", help="stop after N frames")
    parser.add_argument(
        "--snapshots", type=folder, metavar="DIR", help="folder for snapshots (default: cwd)"
    )
    parser.add_argument(
        "--read-every",
        type=int,
        default=0,
        metavar="K",
        help="read every K-th frame and carry the cards between (default 0: choose K to keep "
        "25 frames per second)",
    )
    parser.add_argument(
        "--confirm-frames",
        type=int,
        default=TrackerSettings().confirm_frames,
        metavar="N",
        help="show a card after N read frames (default %(default)s)",
    )
    parser.add_argument(
        "--drop-after",
        type=int,
        default=TrackerSettings().drop_after,
        metavar="M",
        help="drop a card after M missed read frames (default %(default)s)",
    )
    parser.add_argument(
        "--serial",
        action="store_true",
        help="read each frame before drawing it (default: the reader works on the next frames "
        "in worker threads while this one is drawn)",
    )
    parser.add_argument(
        "--ahead",
        type=int,
        default=DEFAULT_AHEAD,
        metavar="N",
        help=f"frames read at once, sharing the cores (default {DEFAULT_AHEAD}: one frame's "
        "detector runs beside the other's classifier; 1: one frame at a time, its models on "
        "every core); the picture is N frames behind the camera",
    )
    parser.add_argument(
        "--no-memory",
        action="store_true",
        help="classify every index of every frame read (default: an index that has not changed "
        "since the last frames keeps its reading)",
    )
    parser.add_argument("--models", type=Path, metavar="DIR", help="model folder")
    parser.add_argument(
        "--deck", metavar="NAME", help="a calibrated deck (handreader calibrate) to read with"
    )
    parser.add_argument("--json", action="store_true", help="print the statistics as JSON")
    add_deck_options(
        parser, default="niuniu, with the profile's decks", shown="the camera or video shows"
    )
    parser.set_defaults(func=run)


def _calibrated_deck(name: str | None) -> Any:
    """The profile ``--deck`` names (``handreader.store.decks.load_deck``), None without one;
    DeckProfileError (a ValueError) for an empty name or one that is not a usable deck."""
    from handreader.store.decks import load_deck

    return load_deck(name) if name is not None else None


def reading_threads(ahead: int, cores: int | None = None) -> int | None:
    """The threads each reading's models run on when ``ahead`` frames are read at once on
    ``cores`` cores (None: this computer's): an equal share, at least one; None (one a core)
    when frames are read one at a time."""
    if ahead <= 1:
        return None
    return max(1, (cores or os.cpu_count() or 1) // ahead)


def run(args: argparse.Namespace, reader: FrameReader | None = None) -> int:
    """Run the command; ``reader`` replaces the shipped recognizer (tests)."""
    options = TableOptions.create(
        profile=args.profile,
        mode=args.mode,
        banker=args.banker,
        decks=niuniu_packs(args.game, args.decks),
    )
    for flag, value, least in (
        ("--ahead", args.ahead, 1),
        ("--read-every", args.read_every, 0),
        ("--confirm-frames", args.confirm_frames, 1),
        ("--drop-after", args.drop_after, 1),
    ):
        if value < least:
            raise UsageError(f"{flag} must be {least} or more, got {value!r}")
    if args.max_frames is not None and args.max_frames < 1:  # before a window or a source
        raise UsageError(f"--max-frames must be 1 or more, got {args.max_frames!r}")
    in_play = deck_in_play(args.game, args.decks, niuniu_deck(options.profile))
    settings = LiveSettings(
        read_every=args.read_every,
        tracker=TrackerSettings(confirm_frames=args.confirm_frames, drop_after=args.drop_after),
        in_play=in_play,
        remember=not args.no_memory,
    )
    if args.output is not None and args.output.suffix.lower() not in VIDEO_SUFFIXES:
        suffixes = ", ".join(sorted(VIDEO_SUFFIXES))
        raise UsageError(f"--output {str(args.output)!r}: a video file ({suffixes})")
    source = parse_source(args.source)
    if args.output is not None:
        check_output(args.output, source)
    if not args.headless:
        check_window_support()
    profile = _calibrated_deck(args.deck)  # named before the source opens, as a source is
    capture = open_source(source)  # a bad source is reported before the models load
    if reader is None:
        from vision.reader import Reader
        from vision.settings import ReaderSettings

        try:
            # frames read at once share the cores: each reading's models get its share of them
            threads = reading_threads(args.ahead) if not args.serial else None
            reader = Reader.load(
                args.models, ReaderSettings(in_play=in_play, indices=args.indices), threads=threads
            )
        except BaseException:
            capture.release()
            raise
    if profile is not None:  # the video's frame reader, reading each frame with the deck
        from handreader.cli.deck_models import warn_other_models
        from handreader.service.routes.decks import DeckReader, ReaderWithDecks

        warn_other_models("webcam", profile, getattr(reader, "manifest", None))
        # the reader loaded reads with a deck (a stand-in given by a caller must too)
        reader = DeckReader(cast(ReaderWithDecks, frame_reader(reader, settings.remember)), profile)
    stats = run_webcam(
        source,
        capture=capture,
        reader=reader,
        options=options,
        settings=settings,
        headless=args.headless,
        output=args.output,
        max_frames=args.max_frames,
        snapshots=args.snapshots,
        overlap=not args.serial,
        ahead=args.ahead,
    )
    if stats.frames == 0 and not stats.interrupted:
        raise WebcamError(f"no frame could be read from video source {args.source!r}")
    print(json.dumps(stats.to_dict()) if args.json else stats.line(), flush=True)
    if stats.source_frames:
        print(
            f"handreader webcam: warning: the video ended after {stats.frames} of the "
            f"{stats.source_frames} frames it declares: the rest does not decode",
            file=sys.stderr,
        )
    return 130 if stats.interrupted else 0
