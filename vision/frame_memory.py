"""What the last frames of one video said of their indices, so that an index that has not
changed is not read again (:meth:`vision.reader.Reader.for_stream`).

A video of a card table shows the same indices frame after frame. Each frame's detector still
runs; an index box of the new frame is matched to a remembered box it overlaps by at least
``MemorySettings.overlap`` (intersection over union). When the two crops look alike (the mean
absolute difference of their 8 x 8 grey thumbnails (:func:`box_thumbnails`), 0-255, is at most
``MemorySettings.difference``: a camera's noise stays well under it, a moved glyph does not)
and the index has read alike the last ``MemorySettings.confirmations`` times it was read (the
same class, each time sure, with its probability at least ``MemorySettings.sure``, or each
time unsure, or within ``MemorySettings.wobble`` of the mean of the readings before it), the
remembered probabilities and embedding are used instead of the
index classifier's, and, when the index verifier believed the remembered box, the verifier is
not shown it again. A remembered reading is used for at most ``MemorySettings.frames`` frames
in a row, then read afresh, so the memory never holds a reading longer than that. The
confirmations keep an index the classifier wavers over (read now as one card for sure, now as
another or unsure: the other corner of a card) read afresh in every frame, as without a memory;
an index read alike every time, sure or unsure, reads alike from its memory. The probabilities
remembered are the mean of the fresh readings alike in a row (the last
``MemorySettings.confirmations`` of them at most), so that an index read near a threshold, now
above it and now under, stands for its mean rather than for whichever frame was read last.

One memory serves one video: frames read at once (``handreader webcam --ahead``) share it under
a lock, and a frame's readings are kept only when no later frame's have been.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.crops import CROP_CONTEXT
from vision.index_detector import box_iou

__all__ = ["FrameMemory", "MemorySettings", "Recalled", "box_thumbnails"]

THUMBNAIL = 8
"""The side of the grey thumbnail two crops are compared by."""


@dataclass(frozen=True, slots=True)
class MemorySettings:
    """When a remembered reading stands for a new frame's index (see the module docstring)."""

    overlap: float = 0.8
    """Least intersection over union of the new box and the remembered one."""
    difference: float = 5.0
    """Largest mean absolute difference of the two crops' grey thumbnails (0-255)."""
    sure: float = 0.9
    """The probability of a class from which a reading of it is sure."""
    frames: int = 12
    """Most frames in a row a remembered reading is used before the index is read afresh."""
    confirmations: int = 5
    """Fresh readings alike in a row (the same class, all sure or all unsure) before a
    reading is used."""
    wobble: float = 0.05
    """A reading of the same class whose probability lies within this of the mean of the
    readings alike before it is alike too, on whichever side of ``sure`` it falls (an index
    read at 0.89 and 0.91 in turn reads alike)."""

    def __post_init__(self) -> None:
        if not 0.0 < self.overlap <= 1.0:
            raise ValueError(f"overlap must be in (0, 1], got {self.overlap}")
        if self.difference < 0.0:
            raise ValueError(f"difference must be at least 0, got {self.difference}")
        if not 0.0 < self.sure <= 1.0:
            raise ValueError(f"sure must be in (0, 1], got {self.sure}")
        if self.frames < 1:
            raise ValueError(f"frames must be at least 1, got {self.frames}")
        if self.confirmations < 1:
            raise ValueError(f"confirmations must be at least 1, got {self.confirmations}")
        if not 0.0 <= self.wobble < 1.0:
            raise ValueError(f"wobble must be in [0, 1), got {self.wobble}")


@dataclass(frozen=True, slots=True)
class Recalled:
    """A new frame's indices as the memory knows them (rows of the frame's boxes)."""

    ticket: int
    """The frame's place in the video's order of reading (:meth:`FrameMemory.keep` needs it)."""
    known: NDArray[np.bool_]
    """(N,) whether the row's remembered reading stands for it."""
    probabilities: NDArray[np.float32]
    """(N, C) the remembered probabilities (zeros where not ``known``)."""
    embeddings: NDArray[np.float32]
    """(N, E) the remembered embeddings (zeros where not ``known``)."""
    uses: NDArray[np.int32]
    """(N,) frames in a row the reading has now stood for its index (0 where not ``known``)."""
    believed: NDArray[np.bool_]
    """(N,) whether the index verifier believed the remembered box (False where not known)."""
    state: NDArray[np.intp]
    """(N,) what was last read at the row's place (the remembered box it overlaps): twice its
    class, plus one when sure; -1 where nothing was."""
    streak: NDArray[np.int32]
    """(N,) fresh readings alike in a row at the row's place (0 where none)."""
    mean: NDArray[np.float32]
    """(N, C) the mean of those readings, as remembered at the row's place (zeros where
    nothing was)."""


def box_thumbnails(image: NDArray[np.uint8], xyxy: NDArray[np.float32]) -> NDArray[np.float32]:
    """(N, 64) grey thumbnails of the squares the index crops of the boxes ``xyxy`` (N, 4) are
    cut from (:func:`vision.crops.crop_index`: centred on the box, ``CROP_CONTEXT`` times its
    longer side): the means of an 8 x 8 grid of blocks, from the image's integral, without
    cutting a crop (parts outside the image left out of a block; a block wholly outside is 0).
    Two crops look alike when their thumbnails do."""
    count = len(xyxy)
    if count == 0:
        return np.zeros((0, THUMBNAIL * THUMBNAIL), np.float32)
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    integral = cv2.integral(grey, sdepth=cv2.CV_64F)  # (H + 1, W + 1)
    height, width = grey.shape
    side = np.maximum(np.maximum(xyxy[:, 2] - xyxy[:, 0], xyxy[:, 3] - xyxy[:, 1]), 2.0)
    side = side * CROP_CONTEXT
    steps = np.linspace(-0.5, 0.5, THUMBNAIL + 1)[None, :] * side[:, None]  # (N, 9)
    xs = np.clip(np.rint((xyxy[:, 0] + xyxy[:, 2])[:, None] / 2 + steps), 0, width).astype(int)
    ys = np.clip(np.rint((xyxy[:, 1] + xyxy[:, 3])[:, None] / 2 + steps), 0, height).astype(int)
    corners = integral[ys[:, :, None], xs[:, None, :]]  # (N, 9, 9)
    sums = corners[:, 1:, 1:] - corners[:, :-1, 1:] - corners[:, 1:, :-1] + corners[:, :-1, :-1]
    areas = np.diff(ys, axis=1)[:, :, None] * np.diff(xs, axis=1)[:, None, :]
    means = np.where(areas > 0, sums / np.maximum(areas, 1), 0.0)
    return np.asarray(means.reshape(count, THUMBNAIL * THUMBNAIL), np.float32)


class FrameMemory:
    """The readings of one video's last frame read (see the module docstring)."""

    def __init__(self, settings: MemorySettings | None = None) -> None:
        self.settings = settings or MemorySettings()
        self._lock = threading.Lock()
        self._issued = 0
        self._kept_ticket = -1
        self._xyxy = np.zeros((0, 4), np.float32)
        self._thumbnails = np.zeros((0, THUMBNAIL * THUMBNAIL), np.float32)
        self._probabilities = np.zeros((0, 0), np.float32)
        self._embeddings = np.zeros((0, 0), np.float32)
        self._uses = np.zeros(0, np.int32)
        self._believed = np.zeros(0, bool)
        self._streak = np.zeros(0, np.int32)

    def __len__(self) -> int:
        """The number of index readings remembered."""
        return len(self._xyxy)

    def clear(self) -> None:
        """Forget every reading (a cut in the video, another camera)."""
        with self._lock:
            self._xyxy = self._xyxy[:0]
            self._kept_ticket = self._issued

    def recall(
        self, xyxy: NDArray[np.float32], thumbs: NDArray[np.float32], classes: int, width: int
    ) -> Recalled:
        """The remembered readings that stand for the new frame's boxes ``xyxy`` (N, 4) whose
        crops' thumbnails are ``thumbs`` (:func:`box_thumbnails`); ``classes`` and ``width`` are
        the classifier's numbers of probabilities and embedding values."""
        count = len(xyxy)
        with self._lock:
            ticket = self._issued
            self._issued += 1
            old_xyxy, old_thumbs = self._xyxy, self._thumbnails
            old_probabilities, old_embeddings = self._probabilities, self._embeddings
            old_uses, old_believed, old_streak = self._uses, self._believed, self._streak
        known = np.zeros(count, bool)
        probabilities = np.zeros((count, classes), np.float32)
        embeddings = np.zeros((count, width), np.float32)
        uses = np.zeros(count, np.int32)
        believed = np.zeros(count, bool)
        state = np.full(count, -1, np.intp)
        streak = np.zeros(count, np.int32)
        mean = np.zeros((count, classes), np.float32)
        if count == 0 or len(old_xyxy) == 0 or old_probabilities.shape[1] != classes:
            return Recalled(
                ticket, known, probabilities, embeddings, uses, believed, state, streak, mean
            )
        settings = self.settings
        overlaps = box_iou(xyxy.T[:, :, None], old_xyxy[None])  # (N, M)
        nearest = overlaps.argmax(axis=1)
        rows = np.arange(count)
        placed = overlaps[rows, nearest] >= settings.overlap
        state[placed] = self._states(old_probabilities[nearest[placed]])
        streak[placed] = old_streak[nearest[placed]]
        mean[placed] = old_probabilities[nearest[placed]]
        difference = np.abs(thumbs - old_thumbs[nearest]).mean(axis=1)
        known = (
            placed
            & (difference <= settings.difference)
            & (streak >= settings.confirmations)
            & (old_uses[nearest] < settings.frames)
        )
        # one remembered box stands for one new box at most: the one it overlaps most
        for old in np.unique(nearest[known]):
            claimants = np.flatnonzero(known & (nearest == old))
            if len(claimants) > 1:
                known[claimants] = False
                known[claimants[overlaps[claimants, old].argmax()]] = True
        chosen = nearest[known]
        probabilities[known] = old_probabilities[chosen]
        embeddings[known] = old_embeddings[chosen]
        uses[known] = old_uses[chosen] + 1
        believed[known] = old_believed[chosen]
        return Recalled(
            ticket, known, probabilities, embeddings, uses, believed, state, streak, mean
        )

    def _states(self, probabilities: NDArray[np.float32]) -> NDArray[np.intp]:
        """Each reading's class, doubled, plus one when it is sure (:attr:`Recalled.state`)."""
        sure = probabilities.max(axis=1) >= self.settings.sure
        return np.asarray(probabilities.argmax(axis=1) * 2 + sure, np.intp)

    def keep(
        self,
        recalled: Recalled,
        xyxy: NDArray[np.float32],
        thumbs: NDArray[np.float32],
        probabilities: NDArray[np.float32],
        embeddings: NDArray[np.float32],
        believed: NDArray[np.bool_],
    ) -> None:
        """Remember the frame's readings (the classifier's, before any deck or letters are
        applied) and which boxes the verifier believed, unless a frame recalled later has
        already been kept."""
        with self._lock:
            if recalled.ticket < self._kept_ticket:
                return
            self._kept_ticket = recalled.ticket
            self._xyxy = np.asarray(xyxy, np.float32).copy()
            self._thumbnails = thumbs
            alike = self._states(probabilities) == recalled.state
            classes = np.maximum(recalled.state, 0) // 2
            rows = np.arange(len(classes))
            alike |= (
                (recalled.state >= 0)
                & (probabilities.argmax(axis=1) == classes)
                & (
                    np.abs(probabilities[rows, classes] - recalled.mean[rows, classes])
                    <= self.settings.wobble
                )
            )
            fresh = np.where(alike, recalled.streak + 1, 1)
            # a fresh reading alike the last ones joins their mean (of the last few at most)
            weight = 1.0 / np.minimum(fresh, self.settings.confirmations)[:, None]
            mean = np.where(
                alike[:, None],
                recalled.mean + (probabilities - recalled.mean) * weight,
                probabilities,
            )
            self._probabilities = np.where(recalled.known[:, None], probabilities, mean).astype(
                np.float32
            )
            self._embeddings = embeddings.copy()
            self._uses = recalled.uses.copy()
            self._believed = believed.copy()
            self._streak = np.where(recalled.known, recalled.streak, fresh).astype(np.int32)
