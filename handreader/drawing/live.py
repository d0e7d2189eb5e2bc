"""Drawing a live frame: the scored table (``handreader.drawing.annotate.Annotator``) plus the
live extras.

:class:`LiveAnnotator` draws, on a copy of the frame:

- the table scored from the stable tracks, by the photo
  :class:`~handreader.drawing.annotate.Annotator` (card boxes and codes, each hand's bull triple
  filled and rest outlined, score labels, the players' outcomes and nets against the banker,
  the winner or the banker's net);
- tracks not yet confirmed (seen in too few consecutive frames) as thin boxes in the tentative
  colour, without a code, so a card being picked up is visible but never read out early; not
  those whose centre lies on a card shown (a corner of it being read again);
- a status line at the top: frames per second, the profile, how many frames are read (every
  k-th), the number of cards shown, and PAUSED or a short note (``snapshot saved``).

Style is set in ``__init__``; colours are RGB, turned into OpenCV's BGR only in :func:`bgr`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import cv2
import numpy as np
from numpy.typing import NDArray

from handreader.drawing.annotate import Annotator, Rgb, bgr, text_size

if TYPE_CHECKING:
    from handreader.tables.live import LiveFrame

__all__ = ["LiveAnnotator", "Rgb"]


class LiveAnnotator:
    """Draws live frames; the style is fixed at construction (see the module docstring).

    ``table`` is the photo annotator used for the table (a default one when None);
    ``font_scale`` of None scales with the frame (about 1/900 of its shorter side).
    """

    def __init__(
        self,
        *,
        table: Annotator | None = None,
        tentative_colour: Rgb = (200, 200, 200),
        status_colour: Rgb = (255, 255, 255),
        status_background: Rgb = (20, 20, 20),
        paused_colour: Rgb = (230, 30, 30),
        font_scale: float | None = None,
        show_tentative: bool = True,
    ) -> None:
        if font_scale is not None and font_scale <= 0:
            raise ValueError(f"font_scale must be positive, got {font_scale!r}")
        self.table = table or Annotator()
        self.tentative_colour = tentative_colour
        self.status_colour = status_colour
        self.status_background = status_background
        self.paused_colour = paused_colour
        self.font_scale = font_scale
        self.show_tentative = show_tentative

    def _scale(self, image: NDArray[np.uint8]) -> float:
        return self.font_scale or max(0.4, min(image.shape[:2]) / 900)

    @staticmethod
    def status_text(
        frame: LiveFrame, fps: float | None, *, paused: bool = False, note: str | None = None
    ) -> str:
        """The status line's text (see the module docstring)."""
        parts = [f"{fps:5.1f} fps" if fps is not None else "-- fps"]
        parts.append(f"profile {frame.table.profile.name}")
        if frame.read_every > 1:
            parts.append(f"read 1/{frame.read_every}")
        parts.append(f"{len(frame.shown)} cards")
        if paused:
            parts.append("PAUSED")
        if note:
            parts.append(note)
        return " | ".join(parts)

    def annotate(
        self,
        scene: NDArray[np.uint8],
        frame: LiveFrame,
        *,
        fps: float | None = None,
        paused: bool = False,
        note: str | None = None,
    ) -> NDArray[np.uint8]:
        """A copy of ``scene`` (BGR, H x W x 3) with ``frame``'s results drawn over it."""
        text = self.status_text(frame, fps, paused=paused, note=note)
        x1, y1, x2, y2 = self._status_box(scene, text)
        status = (float(x1), float(y1), float(x2), float(y2))
        image = self.table.annotate(scene, frame.table, reserved=[status])
        if self.show_tentative:
            cards = [card.box_xyxy for card in frame.shown]
            colour = bgr(self.tentative_colour)
            for track in frame.tracks:
                if track.shown:
                    continue
                x, y = track.center_xy
                if any(x1 <= x <= x2 and y1 <= y <= y2 for x1, y1, x2, y2 in cards):
                    continue
                x1, y1, x2, y2 = (round(value) for value in track.box_xyxy)
                cv2.rectangle(image, (x1, y1), (x2, y2), colour, 1)
        self._status(image, text, paused)
        return image

    def _status_box(self, image: NDArray[np.uint8], text: str) -> tuple[int, int, int, int]:
        """The status line's box (x1, y1, x2, y2), top left."""
        scale = self._scale(image)
        (width, height), base = text_size(text, scale, max(1, round(scale * 1.5)))
        return (0, 0, width + 8, height + base + 8)

    def _status(self, image: NDArray[np.uint8], text: str, paused: bool) -> None:
        scale = self._scale(image)
        weight = max(1, round(scale * 1.5))
        (_, height), _ = text_size(text, scale, weight)
        background = self.paused_colour if paused else self.status_background
        x1, y1, x2, y2 = self._status_box(image, text)
        cv2.rectangle(image, (x1, y1), (x2, y2), bgr(background), -1)
        cv2.putText(
            image,
            text,
            (4, height + 4),
            cv2.FONT_HERSHEY_SIMPLEX,
            scale,
            bgr(self.status_colour),
            weight,
            cv2.LINE_AA,
        )
