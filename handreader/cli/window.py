"""The live overlay's window: the keys it answers, and whether a window can open at all
(``handreader webcam`` without ``--headless``)."""

from __future__ import annotations

import enum
import functools
import os
import re
import subprocess
import sys
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from handreader.cli.video_source import WebcamError

__all__ = ["PROBE_SECONDS", "Display", "Key", "Window", "check_window_support", "key_action"]

PROBE_SECONDS = 20
"""How long the test window may take to open before the display counts as not answering."""


class Key(enum.Enum):
    """What a key press asks for."""

    NONE = "none"
    QUIT = "quit"
    PAUSE = "pause"
    SNAPSHOT = "snapshot"
    NEXT_PROFILE = "next_profile"


_KEYS = {
    ord("q"): Key.QUIT,
    ord("Q"): Key.QUIT,
    27: Key.QUIT,  # Esc
    ord("p"): Key.PAUSE,
    ord("P"): Key.PAUSE,
    ord(" "): Key.PAUSE,
    ord("s"): Key.SNAPSHOT,
    ord("S"): Key.SNAPSHOT,
    ord("n"): Key.NEXT_PROFILE,
    ord("N"): Key.NEXT_PROFILE,
}


def key_action(code: int) -> Key:
    """The action of a key code from ``cv2.waitKey`` (-1: no key)."""
    return Key.NONE if code < 0 else _KEYS.get(code & 0xFF, Key.NONE)


class Display(Protocol):
    """Where annotated frames go in window mode (a cv2 window, or a fake in tests)."""

    def show(self, image: NDArray[np.uint8]) -> None:
        """Show one frame."""
        ...

    def wait_key(self, milliseconds: int) -> int:
        """The key pressed within ``milliseconds`` (-1 for none), -2 when the window closed."""
        ...

    def close(self) -> None:
        """Close the window."""
        ...


def check_window_support() -> None:
    """WebcamError when no window can be opened: no display, OpenCV built without GUI, or a
    display that does not answer (a stale ``DISPLAY``).

    (Checked before any window call: OpenCV's Qt back end aborts the process without a display,
    so a child process opens the first test window.)
    """
    import cv2

    display = os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    if sys.platform.startswith("linux") and not display:
        raise WebcamError("no display to open a window on: use --headless --output OUT.mp4")
    if re.search(r"^\s*GUI:\s+NONE\s*$", cv2.getBuildInformation(), re.MULTILINE):
        raise WebcamError(
            "this OpenCV build has no window support (opencv-python-headless): "
            "use --headless --output OUT.mp4, or install opencv-python"
        )
    problem = _window_problem(display or "")
    if problem is not None:
        raise WebcamError(
            f"cannot open a window on display {display!r} ({problem}): "
            "use --headless --output OUT.mp4"
        )


_PROBE = "import cv2; cv2.namedWindow('handreader'); cv2.waitKey(1); cv2.destroyAllWindows()"


@functools.cache
def _window_problem(display: str) -> str | None:
    """None when a child process opens and closes a window on ``display``; else the first line
    it complained with (or its exit status)."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE], capture_output=True, timeout=PROBE_SECONDS
        )
    except subprocess.TimeoutExpired:
        return f"no answer within {PROBE_SECONDS} s"
    if done.returncode == 0:
        return None
    lines = [line.strip() for line in done.stderr.decode(errors="replace").splitlines()]
    said = next((line for line in lines if line), f"exit status {done.returncode}")
    return said if len(said) <= 120 else said[:117] + "..."


class Window:
    """An OpenCV window (after :func:`check_window_support`)."""

    def __init__(self, title: str) -> None:
        check_window_support()
        self.title = title
        self._shown = False

    def show(self, image: NDArray[np.uint8]) -> None:
        import cv2

        try:
            cv2.imshow(self.title, image)
        except cv2.error as error:
            raise WebcamError(f"cannot show a window: {str(error).strip()}") from None
        self._shown = True

    def wait_key(self, milliseconds: int) -> int:
        import cv2

        code = int(cv2.waitKey(max(milliseconds, 1)))
        if self._shown and cv2.getWindowProperty(self.title, cv2.WND_PROP_VISIBLE) < 1:
            return -2
        return code

    def close(self) -> None:
        import cv2

        cv2.destroyWindow(self.title)
