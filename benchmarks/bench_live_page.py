"""Benchmark of the page's live mode on a fanned hand: frames per second, and the share of frames
whose hands equal photo mode's answer.

Run: ``python benchmarks/bench_live_page.py [--seconds 10] [--fake] [--grid]``.

1. The camera: ``tests/fixtures/fan_niu7.jpg`` (a rendered fan of KS QH 10D 3C 4S, Niu 7 by
   seed 002's rule; ``tests/fan_scene.py``) as a 10 frames/s video of ``--seconds`` seconds,
   each frame moved by up to 2 px with fresh noise, played by headless Chromium's fake camera.
2. The reader: the shipped models (``vision.reader.Reader.load()``) when
   ``models/manifest.json`` exists, unless ``--fake``: then ``FanReader`` (the fan's index
   boxes with per-frame noise). The output says which ran.
3. In one run, on one page 390 px wide (a phone's):

   - **photo mode** (the baseline): the fixture read five times through the page; the page's
     own "Read in N ms" (upload, read, score, draw), median, and the answer's hands;
   - **live mode**: the camera streamed for ``--seconds`` seconds: answers per second (the
     page sends the next frame when the last is answered, so that is its frame rate), and the
     share of answers whose hands (role, status, cards, score) equal photo mode's;
   - **one frame alone** (the second baseline): each frame of the video read as the live route
     reads it (``Reader.for_frames``) and scored by itself, without tracking: the share equal
     to photo mode's answer.

4. ``--grid``: 27 fans rendered by ``tests/fan_scene.py`` (three hands: Niu 7, the same with a
   sixth card, Niu 6; spreads of 8, 14 and 22 degrees; cards 0.3, 0.5 and 0.8 of the frame's
   height), each read as a photo and live (the live pipeline on 6 noisy frames, no browser):
   how many group live as in the photo.

The machine's load average is printed before and after: speed figures on a shared machine mean
little without it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# the tests' helpers (browser_page, live_scene...); the project's root first, so that the
# tests' own handreader/ folder (no package, only tests) never hides the real one
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from browser_page import (  # noqa: E402
    PHONE,
    Server,
    hands_key,
    launch,
    shaken_frames,
    shaken_video,
)
from fan_scene import FAN_HAND, FIXTURE, FanReader, fan_layout, render_fan  # noqa: E402

from handreader.tables.live import LivePipeline, frame_reader, table_summary  # noqa: E402
from handreader.tables.scoring import score_reading  # noqa: E402
from vision.imageio import load_image  # noqa: E402
from vision.reader import Reader, default_models_dir  # noqa: E402


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min)"


def run_page(reader: Any, video: Path, seconds: float) -> dict[str, Any]:
    """Photo mode five times, then live mode for ``seconds``, on one phone-sized page."""
    from playwright.sync_api import sync_playwright

    answers: list[dict[str, Any]] = []
    with Server(reader, models_dir=default_models_dir()) as server, sync_playwright() as driver:
        browser = launch(driver, video)
        context = browser.new_context(viewport=PHONE, device_scale_factor=3, is_mobile=True)
        context.grant_permissions(["camera"], origin=server.url)
        page = context.new_page()
        page.on(
            "websocket",
            lambda socket: socket.on(
                "framereceived", lambda text: answers.append(json.loads(text))
            ),
        )
        page.goto(server.url + "/")
        page.wait_for_selector("body[data-ready='true']")
        photo_ms = []
        photo: dict[str, Any] = {}
        for attempt in range(5):
            with page.expect_response(lambda response: "/v1/score" in response.url) as scored:
                if attempt == 0:
                    page.set_input_files("#photo-file", str(FIXTURE))
                else:
                    page.click("#photo-submit")
            photo = scored.value.json()
            page.wait_for_function(
                "() => document.getElementById('photo-status').textContent.startsWith('Read in')"
            )
            photo_ms.append(float(page.inner_text("#photo-status").split()[2]))
        page.click("#tab-live")
        page.click("#live-start")
        page.wait_for_function(
            "() => document.getElementById('live-status').textContent.includes('frames/s')",
            timeout=60_000,
        )
        answers.clear()
        started = time.monotonic()
        page.wait_for_timeout(seconds * 1000)
        elapsed = time.monotonic() - started
        frames = [answer for answer in answers if "table" in answer]
        page.click("#live-stop")
        browser.close()
    expected = hands_key(photo)
    same = [hands_key(frame["table"]) == expected for frame in frames]
    return {
        "photo_ms": statistics.median(photo_ms),
        "photo": expected,
        "frames": len(frames),
        "fps": len(frames) / elapsed,
        "share": sum(same) / max(len(same), 1),
        "server_ms": statistics.median(frame["ms"]["total"] for frame in frames) if frames else 0,
    }


def untracked_share(reader: Any, video_frames: list[np.ndarray], photo: Any) -> float:
    """Each frame read as live reads it and scored alone: the share equal to the photo's."""
    framed = frame_reader(reader)
    expected = table_summary(photo)
    same = [table_summary(score_reading(framed.read(frame))) == expected for frame in video_frames]
    return sum(same) / len(same)


def grid(reader: Any) -> tuple[int, int]:
    """(fans grouped live as in the photo, fans) over the 27 rendered fans (module docstring)."""
    rng = np.random.default_rng(0)
    hands = [FAN_HAND, (*FAN_HAND, "9H"), ("2S", "8H", "JD", "5C", "AS")]
    agree = total = 0
    for codes in hands:
        for step in (8, 14, 22):
            for height, pivot in ((0.5, 0.92), (0.8, 1.2), (0.3, 0.8)):
                layout = fan_layout(codes=codes, step_degrees=step, card_height=height,
                                    pivot=(0.5, pivot))  # fmt: skip
                image = render_fan(layout, seed=step)
                photo = table_summary(score_reading(reader.read(image)))
                pipeline = LivePipeline(reader)
                for _ in range(6):
                    noise = rng.normal(0, 3, image.shape)
                    frame = np.clip(image + noise, 0, 255).astype(np.uint8)
                    live = table_summary(pipeline.process(frame).table)
                agree += live == photo
                total += 1
    return agree, total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--fake", action="store_true", help="FanReader instead of the models")
    parser.add_argument("--grid", action="store_true", help="also the 27 rendered fans")
    args = parser.parse_args()
    models = (default_models_dir() / "manifest.json").is_file() and not args.fake
    reader: Any = Reader.load() if models else FanReader(seed=3)
    print(_load())
    print(f"reader: {'the shipped models' if models else 'FanReader (fan boxes with noise)'}")
    with tempfile.TemporaryDirectory() as folder:
        video = shaken_video(Path(folder) / "fan.y4m", load_image(FIXTURE), args.seconds)
        result = run_page(reader, video, args.seconds)
    frames = list(shaken_frames(load_image(FIXTURE), args.seconds))
    photo = score_reading(reader.read(load_image(FIXTURE)))
    print(f"photo mode (baseline): {result['photo_ms']:.0f} ms a photo through the page "
          f"(median of 5), hands {result['photo']}")  # fmt: skip
    print(f"live page: {result['frames']} answers in {args.seconds:.0f} s, "
          f"{result['fps']:.1f} frames/s (server {result['server_ms']:.1f} ms a frame, median); "
          f"hands as in photo mode on {100 * result['share']:.1f}% of the frames")  # fmt: skip
    share = untracked_share(reader, frames, photo)
    print(f"one frame alone (baseline, no tracking): hands as in photo mode on "
          f"{100 * share:.1f}% of {len(frames)} frames")  # fmt: skip
    if args.grid:
        agree, total = grid(reader)
        print(f"rendered fans grouped live as in the photo: {agree} of {total}")
    print(_load())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
