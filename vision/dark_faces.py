"""Cards whose faces are dark: light indices on black paper, found on the photo's negative.

The detector and the classifiers were trained on dark or red ink on light paper. A deck printed
the other way round (gold or white indices on black faces) shows them, in a photo's negative
(:func:`negative`), what they know: dark ink on light paper. :func:`negative_boxes` gives the
boxes to read in the negative (those the photo lacks, and an index both show that the negative
shows surer);
the reader classifies those crops, keeps an index read both ways where it reads surer
(:func:`both_ways`), shows them to the index verifier and looks for their card's face in the
negative (``ReaderSettings.dark_faces``). :func:`looked` runs one of those looks on each box in
the image it was found in. A video is read one way or the other, not both (:class:`VideoFaces`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.detections import Detections
from vision.index_detector import box_iou
from vision.settings import ReaderSettings

__all__ = [
    "GLANCE_EVERY",
    "PHOTO_OVERLAP",
    "Readings",
    "VideoFaces",
    "both_ways",
    "looked",
    "negative",
    "negative_boxes",
]

PHOTO_OVERLAP = 0.3
"""A box of the negative that overlaps one of the photo's own boxes by more than this
(intersection over union) is that index, already found."""

GLANCE_EVERY = 30
"""A video's reader glances at the other way of its frames once in this many frames."""

Look = Callable[[NDArray[np.uint8], NDArray[np.float32]], NDArray[Any]]
"""A look at some boxes (N, 4) of an image: one answer per box (N, ...)."""


def negative(image: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """The photo's negative (each channel 255 minus its value): a black face's light index
    becomes dark ink on light paper."""
    return np.asarray(cv2.bitwise_not(image), np.uint8)


def negative_boxes(
    found: Detections, photo: Detections, settings: ReaderSettings, overlap: float = PHOTO_OVERLAP
) -> tuple[Detections, NDArray[np.bool_]]:
    """The boxes ``found`` in a photo's negative to read there, and for each the photo's own
    boxes (``photo``) that are its index too, (len(read), len(photo)). A box counts when it is
    at least ``settings.dark_face_threshold`` sure and holds the centre of no photo box it does
    not overlap (an index holds no other index: a box round indices the photo shows is a card
    or more). One that overlaps photo boxes by more than ``overlap`` (intersection over union)
    is their index: found already, unless ``settings.dark_face_surer`` and it is surer than
    each of them (one index the photo shows faintly, a light index on a black face), to be read
    where it reads surer (:func:`both_ways`)."""
    keep = found.confidence >= settings.dark_face_threshold
    partners = np.zeros((len(found), len(photo)), bool)
    if len(photo) and keep.any():
        partners = box_iou(found.xyxy.T[:, :, None], photo.xyxy[None]) > overlap  # (found, photo)
        for row in np.flatnonzero(keep & partners.any(axis=1)):
            surest = photo.confidence[partners[row]].max()
            if not settings.dark_face_surer or found.confidence[row] <= surest:
                keep[row] = False  # one index, found in the photo already
        centres = (photo.xyxy[:, :2] + photo.xyxy[:, 2:]) / 2
        low, high = found.xyxy[:, None, :2], found.xyxy[:, None, 2:]
        inside = np.all((centres[None] > low) & (centres[None] < high), axis=2)
        keep &= ~np.any(inside & ~partners, axis=1)
    rows = np.flatnonzero(keep)
    return found[rows], partners[rows]


Readings = tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32]]
"""Boxes (N, 4), the index classifier's probabilities (N, 55) and embeddings (N, 128)."""


def both_ways(
    photo: Readings, dark: Readings, partners: NDArray[np.bool_]
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32], NDArray[np.bool_]]:
    """The photo's readings then the negative's, less one side of each index read both ways
    (``partners``: :func:`negative_boxes`), and which rows are the negative's. A box of the
    negative whose surest card is surer than each of its photo boxes' is kept and they go;
    else it goes: an index is read where it reads surest. ValueError when ``partners`` does not
    pair the two."""
    count = len(photo[0])
    if partners.shape != (len(dark[0]), count):
        raise ValueError(
            f"partners {partners.shape} do not pair {len(dark[0])} boxes with {count} photo boxes"
        )
    card = np.concatenate([photo[1], dark[1]])[:, :-1].max(axis=1)
    keep = np.ones(len(card), bool)
    paired = partners.any(axis=1)
    if count and paired.any():
        best = np.where(partners, card[None, :count], -1.0).max(axis=1)  # (negative boxes,)
        wins = card[count:] > best
        keep[count:] = ~paired | wins
        keep[:count] = ~partners[paired & wins].any(axis=0)
    is_dark = np.r_[np.zeros(count, bool), np.ones(len(dark[0]), bool)]
    joined = [np.concatenate([first, second]) for first, second in zip(photo, dark, strict=True)]
    return joined[0][keep], joined[1][keep], joined[2][keep], is_dark[keep]


def looked(
    look: Look,
    image: NDArray[np.uint8],
    xyxy: NDArray[np.float32],
    dark: NDArray[np.bool_] | None,
    negative_image: NDArray[np.uint8] | None,
) -> NDArray[Any]:
    """``look`` at each box of ``xyxy`` in the image it was found in: the boxes ``dark`` marks
    in ``negative_image``, the others in ``image`` (all of them when ``dark`` is None)."""
    if dark is not None and len(dark) != len(xyxy):
        raise ValueError(f"dark marks {len(dark)} boxes, xyxy holds {len(xyxy)}")
    if dark is None or negative_image is None or not dark.any():
        return np.asarray(look(image, xyxy))
    light = np.flatnonzero(~dark)
    on_dark = np.flatnonzero(dark)
    from_dark = np.asarray(look(negative_image, xyxy[on_dark]))
    answers = np.zeros((len(xyxy), *from_dark.shape[1:]), from_dark.dtype)
    answers[on_dark] = from_dark
    if len(light):
        answers[light] = look(image, xyxy[light])
    return answers


class VideoFaces:
    """Which way one video's cards are printed: frames read as they are (light faces) or as
    their negatives (dark faces). A frame costs one detector pass, so a video is read one way
    at a time: once every ``every`` frames (:meth:`due`) the reader glances at the frame the
    other way, and :meth:`turn` switches the video to it when that shows more indices than the
    frame read. Safe to share between the threads reading one video."""

    def __init__(self, every: int = GLANCE_EVERY) -> None:
        if every < 1:
            raise ValueError(f"every must be at least 1 frame, got {every}")
        self.every = every
        self.dark = False
        """Whether the video's frames are read as their negatives."""
        self._frames = 0
        self._lock = threading.Lock()

    def due(self) -> bool:
        """Count a frame; whether it is one to glance at the other way."""
        with self._lock:
            self._frames += 1
            return self._frames % self.every == 0

    def shown(self, frame: NDArray[np.uint8]) -> tuple[NDArray[np.uint8], bool]:
        """The frame as the video is read now (itself, or its negative), and whether that is
        its negative (the way to give :meth:`turn`)."""
        dark = self.dark
        return (negative(frame) if dark else frame), dark

    def turn(
        self, read: Detections, other: Detections, settings: ReaderSettings, dark: bool
    ) -> bool:
        """Switch the video from the way ``dark`` (the way the frame was read: :meth:`shown`) to
        the other when the other way's glance (``other``) found more indices to read than the
        frame read (``read``) holds at least ``settings.dark_face_threshold`` sure, two at the
        least: indices outside the frame's boxes, or with ``settings.dark_face_surer`` surer
        than the frame's boxes over them (:func:`negative_boxes`); whether it switched (not
        when another frame has switched it already)."""
        sure = int((read.confidence >= settings.dark_face_threshold).sum())
        new = len(negative_boxes(other, read, settings)[0])
        if new < 2 or new <= sure:
            return False
        with self._lock:
            if self.dark != dark:
                return False
            self.dark = not dark
        return True
