"""Recognizer speed and memory: 640x480 frame with five cards, 12 MP photo, model load, peak RSS.

Prints the bare detector's onnxruntime time beside the whole pipeline's, so the overhead is
visible. For the 12 MP photo, the full-size decode (``decode_image``) and the reduced decode
the commands and the service use (``decode_reduced``: a JPEG at half size, since the reader
shrinks it to 1,400 px anyway) are timed in the same run, alternately, each with its read, and
the cards read from both are compared. A video of the frame (fresh camera noise in each frame)
is also read in order by one stream reader, as the live overlay reads a camera
(``Reader.for_stream()``, whose frame memory spares the indices that have not changed). Medians
of many runs (timings on a busy machine are noisy).

    python benchmarks/bench_reader.py [--frame examples/hand.jpg] [--runs 50] [--models DIR]
    python benchmarks/bench_reader.py --baseline REF [--rounds 2] [--runs 30] [--models DIR]
        [--baseline-models]

Targets: frame <= 25 ms, 12 MP <= 200 ms, load < 0.5 s, peak memory < 500 MB.

With ``--baseline REF`` the code of the git revision ``REF`` (checked out in a temporary
worktree) and the working tree's code are measured in turn, ``--rounds`` times each, every
measurement in a fresh process with the same models, and the headline figures (frame, its
split between the detector, the index classifier, the verifier and the rest, the video frame
(a revision without a stream reader reads it as a lone frame), the 12 MP close-up
and table photos, the live webcam's frames a second (each revision's own ``handreader webcam``
on a still video of the frame), load, memory) are printed side by side with their ratio: both
see the same load. Both read ``--models`` unless ``--baseline-models`` has the baseline read its own
revision's ``models/``. ``--json`` prints those figures of the code imported as one JSON object.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray
from timing import median_ms, paired_median_ms

from vision.imageio import decode_image, decode_reduced
from vision.reader import Reader

ROOT = Path(__file__).resolve().parent.parent


def _twelve_megapixel_jpeg(frame: np.ndarray, repeat: int = 1) -> bytes:
    """The frame upscaled to 4000 x 3000 with light sensor noise, as JPEG bytes; with
    ``repeat`` above 1, ``repeat`` x ``repeat`` copies of it side by side (a table seen from
    farther: indices too small for a close-up, so the photo gets the finer pass)."""
    tiled = np.tile(frame, (repeat, repeat, 1))
    big = cv2.resize(tiled, (4000, 3000), interpolation=cv2.INTER_CUBIC)
    noise = np.random.default_rng(0).integers(-6, 7, big.shape, dtype=np.int16)
    noisy = np.clip(big.astype(np.int16) + noise, 0, 255).astype(np.uint8)
    _, encoded = cv2.imencode(".jpg", noisy, [cv2.IMWRITE_JPEG_QUALITY, 92])
    return encoded.tobytes()


def _frame(path: Path) -> NDArray[np.uint8]:
    loaded = cv2.imread(str(path))
    if loaded is None:
        raise SystemExit(f"cannot read {path}")
    return np.asarray(cv2.resize(loaded, (640, 480), interpolation=cv2.INTER_AREA), np.uint8)


def _still_video(frame: NDArray[np.uint8], count: int, seed: int) -> Iterator[NDArray[np.uint8]]:
    """``count`` frames of a still camera over ``frame``: fresh noise (sigma 4) in each."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield np.clip(frame + rng.normal(0.0, 4.0, frame.shape), 0, 255).astype(np.uint8)


def _live_fps(frame: NDArray[np.uint8], models: Path | None, frames: int = 200) -> float:
    """Frames a second of the code's own ``handreader webcam`` (its defaults, headless, every
    frame read) on a
    still video of ``frame`` with fresh noise in every frame, in a process of its own."""
    with tempfile.TemporaryDirectory(prefix="bench-live-") as folder:
        video = Path(folder) / "still.mp4"
        writer = cv2.VideoWriter(str(video), cv2.VideoWriter.fourcc(*"mp4v"), 25.0, (640, 480))
        for image in _still_video(frame, frames, seed=1):
            writer.write(image)
        writer.release()
        command = [sys.executable, "-c",
                   "import sys; from handreader.cli import main; sys.exit(main(sys.argv[1:]))",
                   "webcam", "--source", str(video), "--headless", "--json",
                   "--max-frames", str(frames), "--read-every", "1"]  # fmt: skip
        if models is not None:
            command += ["--models", str(models.resolve())]  # read from the temporary folder
        # run in the folder: "-c" puts the working directory first on the path, and the
        # revision measured is the one on PYTHONPATH
        out = subprocess.run(command, check=True, capture_output=True, text=True, cwd=folder)
    return float(json.loads(out.stdout.strip().splitlines()[-1])["fps"])


def _video_frame_ms(reader: Reader, frame: NDArray[np.uint8], count: int) -> tuple[float, float]:
    """Median milliseconds a frame of a video of ``frame`` (fresh camera noise in each of
    ``count`` frames, as in :func:`_live_fps`) read in order by one stream reader, as the live
    overlay reads a video (``Reader.for_stream()``: its frame memory; a revision without one
    reads each frame as ``for_frames()``), and the median of the bare detector's run on each of
    those frames, timed just before the frame is read (both see the same load)."""
    for_stream = getattr(reader, "for_stream", None)
    stream = for_stream() if callable(for_stream) else reader.for_frames()
    session = reader.detector._session
    name = session.get_inputs()[0].name
    reads, bare = [], []
    for image in _still_video(frame, count, seed=2):
        tensor, _ = reader.detector.input_tensor(image)
        started = time.perf_counter()
        session.run(None, {name: tensor})
        bare.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        stream.read(image)
        reads.append((time.perf_counter() - started) * 1000)
    return statistics.median(reads), statistics.median(bare)


def _read_photo(reader: Reader, data: bytes, parts: dict[str, list[float]] | None = None) -> object:
    """``data`` decoded reduced and read, as the commands read a photo; with ``parts``, the
    milliseconds of the decode and of the reading's stages (the reader's own timings:
    brightening and detector passes, index classifier, the rest) appended to it."""
    started = time.perf_counter()
    reduced = decode_reduced(data)
    decoded = time.perf_counter()
    reading = reader.read(reduced.image)
    if parts is not None:
        timings = reading.timings_ms
        parts.setdefault("decode", []).append((decoded - started) * 1000)
        parts.setdefault("detect", []).append(timings["detect"])
        parts.setdefault("classify", []).append(timings["classify"])
        rest = timings["total"] - timings["detect"] - timings["classify"]
        parts.setdefault("rest", []).append(rest)
    return reduced.to_original(reading)


def headline(frame_path: Path, runs: int, models: Path | None) -> dict[str, float]:
    """The figures ``--baseline`` compares, measured with the ``vision`` package imported
    (only the reader's public stages, which every revision has): milliseconds unless named."""
    started = time.perf_counter()
    reader = Reader.load(models)
    load_ms = (time.perf_counter() - started) * 1000
    frame = _frame(frame_path)
    frames = reader.for_frames()
    session = reader.detector._session
    tensor, _ = reader.detector.input_tensor(frame)
    name = session.get_inputs()[0].name
    bare = median_ms(lambda: session.run(None, {name: tensor}), runs)
    whole = median_ms(lambda: frames.read(frame), runs)
    video_ms, video_bare = _video_frame_ms(reader, frame, max(50, runs))
    prepared = frames.prepare(frame)
    detections = frames.detect(prepared)
    probabilities, _ = frames.classify(prepared, detections.xyxy)
    detect_ms, classify_ms, verify_ms = paired_median_ms(
        [
            lambda: frames.detect(frames.prepare(frame)),
            lambda: frames.classify(prepared, detections.xyxy),
            lambda: frames.verified_cards(prepared, detections.xyxy, probabilities),
        ],
        runs,
    )
    with ProcessPoolExecutor(max_workers=1) as pool:
        closeup_data = pool.submit(_twelve_megapixel_jpeg, frame).result()
        table_data = pool.submit(_twelve_megapixel_jpeg, frame, 3).result()
    photo_runs = max(5, runs // 5)

    table_parts: dict[str, list[float]] = {}
    closeup_ms, table_ms = paired_median_ms(
        [
            lambda: _read_photo(reader, closeup_data),
            lambda: _read_photo(reader, table_data, table_parts),
        ],
        photo_runs,
    )
    table_split = {part: statistics.median(values) for part, values in table_parts.items()}
    live_fps = _live_fps(frame, models)
    return {
        "bare detector, 640x480 frame": bare,
        "whole pipeline, same frame": whole,
        "pipeline / bare detector (x)": whole / bare,
        "video frame (stream reader), noisy clip": video_ms,
        "video frame / bare detector (x)": video_ms / video_bare,
        "  prepare + detect": detect_ms,
        "  index classifier": classify_ms,
        "  verifier, card-face check, merge": verify_ms,
        "12 MP close-up, reduced decode + read": closeup_ms,
        "12 MP table (the example 3 x 3), reduced decode + read": table_ms,
        **{f"  table: {part}": value for part, value in table_split.items()},
        "live webcam, frames per second": live_fps,
        "model load": load_ms,
        "peak memory (MB)": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def compare(
    baseline: str,
    rounds: int,
    frame: Path,
    runs: int,
    models: Path | None,
    baseline_models: bool = False,
) -> None:
    """Measure the revision ``baseline`` and the working tree in turn (see the module's
    docstring) and print their figures side by side; with ``baseline_models`` each reads its
    own ``models/`` (a change of the models measured with the code)."""
    models_dir = (models or ROOT / "models").resolve()
    with tempfile.TemporaryDirectory(prefix="bench-baseline-") as scratch:
        tree = Path(scratch) / "tree"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), baseline],
            check=True,
        )
        try:
            figures: dict[str, list[dict[str, float]]] = {"baseline": [], "now": []}
            for number in range(rounds):
                for label, code in (("baseline", tree), ("now", ROOT)):
                    own = baseline_models and label == "baseline"
                    read = tree / "models" if own else models_dir
                    command = [sys.executable, str(Path(__file__).resolve()), "--json",
                               "--frame", str(frame.resolve()), "--runs", str(runs),
                               "--models", str(read)]  # fmt: skip
                    env = os.environ | {"PYTHONPATH": str(code)}
                    out = subprocess.run(command, env=env, check=True, capture_output=True)
                    figures[label].append(json.loads(out.stdout))
                    print(f"round {number + 1}/{rounds}: {label} measured", file=sys.stderr)
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False
            )
    print(f"baseline: {baseline} ({_revision(baseline)}); now: the working tree; "
          f"medians of {rounds} fresh processes each, measured in turn")  # fmt: skip
    print(f"models: {'each its own models/' if baseline_models else models_dir}")
    print(f"{'figure':48} {'baseline':>10} {'now':>10} {'now/base':>9}")
    for key in figures["now"][0]:
        base = statistics.median(run[key] for run in figures["baseline"])
        now = statistics.median(run[key] for run in figures["now"])
        print(f"{key:48} {base:10.1f} {now:10.1f} {now / base:9.2f}")


def _revision(ref: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(ROOT), "log", "-1", "--format=%h %s", ref],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return out.stdout.strip()[:70]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--frame", type=Path, default=ROOT / "examples" / "hand.jpg")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--models", type=Path, help="models folder (default: the shipped one)")
    parser.add_argument("--baseline", metavar="REF", help="compare with git revision REF")
    parser.add_argument("--rounds", type=int, default=2, help="with --baseline (default 2)")
    parser.add_argument(
        "--baseline-models",
        action="store_true",
        help="with --baseline, the baseline reads its own revision's models/ (default: both "
        "read --models)",
    )
    parser.add_argument("--json", action="store_true", help="print the headline figures only")
    args = parser.parse_args()
    if args.baseline_models and not args.baseline:
        parser.error("--baseline-models needs --baseline")
    if args.baseline:
        compare(
            args.baseline, args.rounds, args.frame, args.runs, args.models, args.baseline_models
        )
        return
    if args.json:
        print(json.dumps(headline(args.frame, args.runs, args.models)))
        return

    loads = []
    for _ in range(5):
        started = time.perf_counter()
        reader = Reader.load(args.models)
        loads.append(time.perf_counter() - started)
    print(f"model load: median {statistics.median(loads) * 1000:.0f} ms (target < 500 ms)")

    loaded = cv2.imread(str(args.frame))
    if loaded is None:
        raise SystemExit(f"cannot read {args.frame}")
    frame: NDArray[np.uint8] = np.asarray(
        cv2.resize(loaded, (640, 480), interpolation=cv2.INTER_AREA), dtype=np.uint8
    )
    session = reader.detector._session  # the bare detector, for the overhead comparison
    tensor, _ = reader.detector.input_tensor(frame)  # as the reader pads it
    name = session.get_inputs()[0].name
    bare = median_ms(lambda: session.run(None, {name: tensor}), args.runs)
    # a video frame is read as the live overlay reads it (one detector pass); the same image
    # as a still photo also gets the close-up pass when its indices are big (this one's are)
    frames = reader.for_frames()
    # the same reader without the tighter second cut of unsure crops, timed in turn with it
    one_cut = frames.with_settings(dataclasses.replace(frames.settings, retry_contexts=()))
    # and the same reader trying unsure crops at all four quarter turns (the previous release)
    every_turn = frames.with_settings(dataclasses.replace(frames.settings, upright_turns=False))
    # and the same reader without the index verifier (what it costs)
    unverified = frames.with_settings(dataclasses.replace(frames.settings, verify_below=0.0))
    # and the same reader with the card-face check switched the other way
    evidence = not frames.settings.card_evidence
    flipped = frames.with_settings(dataclasses.replace(frames.settings, card_evidence=evidence))
    whole, plain, four, bare_reader, other_check = paired_median_ms(
        [
            lambda: frames.read(frame),
            lambda: one_cut.read(frame),
            lambda: every_turn.read(frame),
            lambda: unverified.read(frame),
            lambda: flipped.read(frame),
        ],
        args.runs,
    )
    cards = len(frames.read(frame).cards)
    photo = median_ms(lambda: reader.read(frame), args.runs)
    print(
        f"640x480 frame ({cards} cards): bare detector {bare:.1f} ms, "
        f"whole pipeline {whole:.1f} ms "
        f"(overhead {whole - bare:.1f} ms; target <= 25 ms; "
        f"without the tighter cut of unsure crops {plain:.1f} ms; "
        f"unsure crops at all four turns {four:.1f} ms; "
        f"without the index verifier {bare_reader:.1f} ms; "
        f"card-face check {'on' if evidence else 'off'} {other_check:.1f} ms); "
        f"read as a still photo {photo:.1f} ms"
    )
    video, video_bare = _video_frame_ms(reader, frame, max(50, args.runs))
    print(
        f"a video of that frame (fresh noise in each), read in order by one stream reader "
        f"(frame memory): {video:.1f} ms a frame, {video / video_bare:.2f}x the bare detector "
        f"timed on each frame before it is read ({video_bare:.1f} ms)"
    )
    if reader.whole_card is not None:
        # a still with at most two certain cards is also shown to the whole-card classifier
        # (the example has five, so the still above does not pay it)
        card_ms = median_ms(lambda: reader.whole_card.probabilities(frame), args.runs)  # type: ignore[union-attr]
        print(f"whole-card classifier on this image (two views): {card_ms:.1f} ms")

    # the 12 MP test photo is made in a child process, so that its construction does not count
    # in this process's peak memory (what is measured is decoding and reading it)
    with ProcessPoolExecutor(max_workers=1) as pool:
        data = pool.submit(_twelve_megapixel_jpeg, frame).result()
    runs = max(5, args.runs // 5)
    big = decode_image(data)
    reduced = decode_reduced(data)
    small = reduced.image
    decode_full, decode_small = paired_median_ms(
        [lambda: decode_image(data), lambda: decode_reduced(data)], runs
    )
    read_full, read_small = paired_median_ms(
        [lambda: reader.read(big), lambda: reduced.to_original(reader.read(small))], runs
    )
    print(
        f"12 MP photo ({len(data) / 1e6:.1f} MB JPEG, 4000x3000; target <= 200 ms decode + read):"
    )
    print(
        f"  full-size decode {decode_full:.0f} ms + read {read_full:.0f} ms "
        f"= {decode_full + read_full:.0f} ms (baseline)"
    )
    print(
        f"  reduced decode (1/{reduced.factor}: {small.shape[1]}x{small.shape[0]}) "
        f"{decode_small:.0f} ms + read {read_small:.0f} ms = {decode_small + read_small:.0f} ms"
    )
    full_reading = reader.read(big)
    small_reading = reduced.to_original(reader.read(small))
    full_cards = {card.code: card for card in full_reading.certain}
    small_cards = {card.code: card for card in small_reading.certain}
    common = sorted(full_cards.keys() & small_cards.keys())
    shift = max(
        (
            np.abs(np.subtract(full_cards[code].box_xyxy, small_cards[code].box_xyxy)).max()
            for code in common
        ),
        default=0.0,
    )
    only_full = " ".join(sorted(full_cards.keys() - small_cards.keys())) or "none"
    only_small = " ".join(sorted(small_cards.keys() - full_cards.keys())) or "none"
    print(
        f"  certain cards: {len(common)} read from both (boxes within {shift:.1f} px of the "
        f"photo); only from the full size: {only_full}; only from the reduced: {only_small}"
    )
    # the example is a close-up (its indices are big), which gets no finer pass; a table photo
    # is not: the example three by three, read as the commands read it
    with ProcessPoolExecutor(max_workers=1) as pool:
        table_data = pool.submit(_twelve_megapixel_jpeg, frame, 3).result()
    table = decode_reduced(table_data)
    unverified_photos = reader.with_settings(dataclasses.replace(reader.settings, verify_below=0.0))
    flipped_photos = reader.with_settings(
        dataclasses.replace(reader.settings, card_evidence=evidence)
    )
    table_ms, table_unverified_ms, table_flipped_ms = paired_median_ms(
        [
            lambda: table.to_original(reader.read(decode_reduced(table_data).image)),
            lambda: table.to_original(unverified_photos.read(decode_reduced(table_data).image)),
            lambda: table.to_original(flipped_photos.read(decode_reduced(table_data).image)),
        ],
        runs,
    )
    table_cards = len(reader.read(table.image).certain)
    print(
        f"12 MP table photo (the example 3 x 3, {table_cards} certain cards, not a close-up): "
        f"reduced decode + read {table_ms:.0f} ms (target <= 200 ms; without the index "
        f"verifier {table_unverified_ms:.0f} ms; card-face check "
        f"{'on' if evidence else 'off'} {table_flipped_ms:.0f} ms)"
    )
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (max RSS of this process): {peak_mb:.0f} MB (target < 500 MB)")


if __name__ == "__main__":
    main()
