"""Test helpers for the page in a real headless Chromium (Debian's ``chromium``, driven by
Playwright): the app served by uvicorn in a thread, Chromium with a fake camera playing a y4m
video, a y4m writer for any frames, and the page's own measures (sideways scroll, labels).

Used by the browser tests and by ``benchmarks/bench_live_page.py``.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from handreader.service import app as serve

CHROMIUM = "/usr/bin/chromium"
TOKEN = "browser-test-token"
PHONE = {"width": 390, "height": 844}
"""A phone's screen in CSS pixels (the width the page must fit without sideways scrolling)."""


class Server:
    """The app served by uvicorn in a thread, on a loopback socket bound here (no race for a
    free port). ``reader`` is the recognizer (a fake, or the shipped ``Reader``)."""

    def __init__(self, reader: object, models_dir: Path | None = None) -> None:
        import uvicorn

        self.reader = reader
        self.app = serve.create_app(
            reader=reader,
            settings=serve.Settings(models_dir=models_dir or Path("/nonexistent")),
        )
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning"))
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.listener]}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *_: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.listener.close()


def launch(driver: Any, video: Path) -> Any:
    """Headless Chromium whose camera plays ``video`` (a y4m file), allowed without asking."""
    return driver.chromium.launch(
        executable_path=CHROMIUM,
        headless=True,
        args=[
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--use-fake-ui-for-media-stream",
            "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-video-capture={video}",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
        ],
    )


@contextmanager
def chromium_with_camera(video: Path) -> Iterator[Any]:
    """:func:`launch` under its own Playwright driver, closed on the way out: what a module's
    ``browser`` fixture yields."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        chromium = launch(driver, video)
        try:
            yield chromium
        finally:
            chromium.close()


def write_frames_y4m(path: Path, frames: Iterable[NDArray[np.uint8]], fps: int = 10) -> Path:
    """BGR frames (all of one even size) as a YUV4MPEG2 4:2:0 video, the format Chromium's fake
    camera plays (in a loop)."""
    with path.open("wb") as out:
        header = False
        for frame in frames:
            height, width = frame.shape[:2]
            if not header:
                out.write(f"YUV4MPEG2 W{width} H{height} F{fps}:1 Ip A1:1 C420jpeg\n".encode())
                header = True
            out.write(b"FRAME\n")
            out.write(cv2.cvtColor(frame, cv2.COLOR_BGR2YUV_I420).tobytes())
    return path


def shaken_frames(
    picture: NDArray[np.uint8], seconds: float = 10.0, fps: int = 10, seed: int = 0
) -> Iterator[NDArray[np.uint8]]:
    """``seconds`` of a camera held over ``picture``: each frame moved by up to 2 px and given
    fresh noise (sigma 3), seeded."""
    rng = np.random.default_rng(seed)
    height, width = picture.shape[:2]
    for _ in range(round(seconds * fps)):
        dx, dy = rng.uniform(-2, 2, 2)
        shift = np.array([[1, 0, dx], [0, 1, dy]], np.float32)
        moved = cv2.warpAffine(picture, shift, (width, height), borderMode=cv2.BORDER_REFLECT)
        noisy = moved.astype(np.float32) + rng.normal(0, 3, moved.shape).astype(np.float32)
        yield np.clip(noisy + 0.5, 0, 255).astype(np.uint8)


def shaken_video(
    path: Path, picture: NDArray[np.uint8], seconds: float = 10.0, fps: int = 10, seed: int = 0
) -> Path:
    """:func:`shaken_frames` written as a y4m video for the fake camera."""
    return write_frames_y4m(path, shaken_frames(picture, seconds, fps, seed), fps)


def sideways_overflow(page: Any) -> int:
    """How many CSS pixels the page is wider than its window (0: no sideways scrolling)."""
    wider: int = page.evaluate(
        "() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
        " - window.innerWidth"
    )
    return wider


def start_wizard(page: Any, name: str, grid: bool = False, token: str = TOKEN) -> None:
    """The deck wizard started for ``name`` with ``token`` (the operator's), at its first card
    (or, with ``grid``, at the whole-deck photo's step)."""
    page.click("#tab-decks")
    page.fill("#wizard-name", name)
    page.fill("#wizard-token", token)
    if grid:
        page.check("input[name='wizard-layout'][value='grid']")
    page.click("#wizard-start")
    page.wait_for_selector("#wizard-grid:not([hidden])" if grid else "#wizard-cards:not([hidden])")


def drawn_labels(page: Any, canvas_id: str) -> dict[str, Any]:
    """The labels a canvas drawn by the page's draw.js shows: ``width``, ``height`` (canvas
    pixels), ``fontCss`` (label text height in CSS pixels) and ``labels`` ({text, x, y, w, h,
    textW: its widest line with its padding, rows: its lines})."""
    text = page.get_attribute(f"#{canvas_id}", "data-labels")
    assert text, f"#{canvas_id} shows no drawing"
    found: dict[str, Any] = json.loads(text)
    return found


def hands_key(table: dict[str, Any]) -> list[tuple[str, str, tuple[str, ...], str | None]]:
    """What a table's hands show, without boxes: role, status, sorted codes and score label."""
    return [
        (
            hand["role"],
            hand["status"],
            tuple(sorted(card["card"] for card in hand["cards"])),
            hand["score"]["label"] if hand["score"] else None,
        )
        for hand in table["hands"]
    ]
