"""Where the live overlay's frames come from: a camera by number, a video file or a stream URL,
opened with one clear error when it cannot be (``handreader webcam --source``)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["WebcamError", "check_output", "open_source", "parse_source", "quiet_stderr"]


class WebcamError(ValueError):
    """The video source, the output or the window cannot be used."""


def parse_source(text: str) -> int | str:
    """A camera number (``"0"`` -> 0), or the file path / stream URL as given."""
    stripped = text.strip()
    if not stripped:
        raise WebcamError(f"empty video source {text!r}")
    return int(stripped) if stripped.isdigit() else stripped


def _is_file(source: int | str) -> bool:
    return isinstance(source, str) and "://" not in source


def _not_text(name: str) -> bool:
    """Whether a file name holds bytes that are no UTF-8 text (Python keeps them as lone
    surrogates): OpenCV's video reader and writer stop the process on such a name."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def check_output(output: Path, source: int | str) -> None:
    """WebcamError when ``output`` is the source video itself (writing it would destroy the
    video being read) or its name is not UTF-8 text (the video writer cannot take it)."""
    if _not_text(str(output)):
        raise WebcamError(
            f"--output {str(output)!r}: the name is not UTF-8 text, which the video writer "
            "needs: give another name"
        )
    if not _is_file(source):
        return
    try:
        same = output.resolve() == Path(str(source)).resolve() or (
            output.exists() and os.path.samefile(output, str(source))
        )
    except OSError:
        return
    if same:
        raise WebcamError(f"--output {str(output)!r} is the source video: it would be overwritten")


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """Standard error (file descriptor 2, where FFmpeg's decoders write) sent nowhere."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def open_source(source: int | str, size_wh: tuple[int, int] | None = (640, 480)) -> Any:
    """An opened ``cv2.VideoCapture``; WebcamError naming the source when it cannot be opened
    (a name that is not UTF-8 text included).

    A camera is asked for ``size_wh`` (it may give another size); files and streams keep theirs.
    """
    import cv2

    if _is_file(source) and Path(str(source)).is_dir():
        raise WebcamError(f"cannot open video source {source!r}: a folder, not a video file")
    if _is_file(source) and not Path(str(source)).is_file():
        raise WebcamError(f"cannot open video source {source!r}: no such file")
    if isinstance(source, str) and _not_text(source):
        raise WebcamError(
            f"cannot open video source {source!r}: the name is not UTF-8 text, which the video "
            "decoder needs: rename the file or link it under another name"
        )
    logging = cv2.utils.logging
    level = logging.getLogLevel()
    logging.setLogLevel(logging.LOG_LEVEL_SILENT)  # its warnings would bury our one-line error
    try:
        with quiet_stderr():
            capture = cv2.VideoCapture(source)
    finally:
        logging.setLogLevel(level)
    if not capture.isOpened():
        capture.release()
        what = f"camera {source}" if isinstance(source, int) else repr(source)
        raise WebcamError(f"cannot open video source {what}")
    if isinstance(source, str) and "://" not in source:
        # a file that opens may still hold no frame (a text file named .jpg): try one, with
        # the decoder's own complaints kept off the terminal, then start again from the top
        with quiet_stderr():
            ok, _ = capture.read()
        capture.release()
        if not ok:
            raise WebcamError(
                f"cannot read video source {source!r}: no frame decodes (not a video or image)"
            )
        with quiet_stderr():
            capture = cv2.VideoCapture(source)
    if isinstance(source, int) and size_wh is not None:
        capture.set(cv2.CAP_PROP_FRAME_WIDTH, size_wh[0])
        capture.set(cv2.CAP_PROP_FRAME_HEIGHT, size_wh[1])
    return capture
