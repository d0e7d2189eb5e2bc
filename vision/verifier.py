"""The index verifier: is a detected box a card's corner index, judged from around it?

The classifier sees 1.3 times an index's box: the rank and the pip, hardly anything around them.
Printed text (a book, a menu, a box on the table) has letters and digits of an index's size, and
there the classifier reads cards: "10" from a page number, a joker from "Jo" set in a
column. Around a true index lies the corner of a card (its edge, the paper's margin, the face
beside it); around a letter lie more letters. This small network sees ``VERIFY_CONTEXT`` times
the box, at any angle, and answers the probability that the box is an index. Once the corners
are merged, the reader drops a certain card when the verifier doubts every one of its boxes
(``ReaderSettings.verify_below``, :meth:`vision.reader.Reader.verified_cards`).

Identical in training and use: :func:`verifier_crops` cuts the network's input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.crops import crop_index, crops_to_tensor
from vision.index_detector import ModelError, model_input, session, softmax

__all__ = [
    "VERIFIER_CLASSES",
    "VERIFY_CONTEXT",
    "VERIFY_SIZE",
    "IndexVerifier",
    "verifier_crop",
    "verifier_crops",
]

VERIFY_SIZE = 40
"""Side of the verifier's input in pixels."""

VERIFY_CONTEXT = 3.0
"""The verifier's crop is this many times the box's longer side: the index and the card's
corner around it."""

VERIFIER_CLASSES = ("none", "index")
"""The verifier's two classes, in the order of its logits."""


def verifier_crop(
    image: NDArray[np.uint8], box_xyxy: tuple[float, float, float, float] | NDArray[Any]
) -> NDArray[np.uint8]:
    """The verifier's (40, 40, 3) BGR input around one box (:func:`vision.crops.crop_index`
    with the verifier's size and context), cut from the image as it is."""
    return crop_index(image, box_xyxy, size=VERIFY_SIZE, context=VERIFY_CONTEXT)


def verifier_crops(image: NDArray[np.uint8], xyxy: NDArray[np.floating[Any]]) -> NDArray[np.uint8]:
    """The verifier's inputs (N, 40, 40, 3) for the boxes (N, 4), as training and reading cut
    them.

    Each is :func:`verifier_crop` taken from the coarsest level of a pyramid of the image
    (each level half the one before, area-averaged) at which the cut still spans at least 40
    px: nearly the picture a cut from the image itself gives (an area average computed in
    steps, its corner rounded to the level's pixels), for a fraction of the work. A 12 MP
    table photo has a hundred indices whose cuts span about 200 px: 24 ms cut from the photo
    itself, 5 ms from the pyramid. The verifier is trained on these very cuts."""
    levels = [image]
    crops = np.zeros((len(xyxy), VERIFY_SIZE, VERIFY_SIZE, 3), np.uint8)
    for number, box in enumerate(np.asarray(xyxy, np.float64).reshape(-1, 4)):
        span = max(box[2] - box[0], box[3] - box[1], 2.0) * VERIFY_CONTEXT
        level = 0
        while span / 2 ** (level + 1) >= VERIFY_SIZE:
            if len(levels) == level + 1:
                finer = levels[-1]
                if min(finer.shape[:2]) < 2 * VERIFY_SIZE:
                    break
                size = (finer.shape[1] // 2, finer.shape[0] // 2)
                levels.append(
                    cast(NDArray[np.uint8], cv2.resize(finer, size, interpolation=cv2.INTER_AREA))
                )
            level += 1
        chosen = levels[level]
        scale_x, scale_y = chosen.shape[1] / image.shape[1], chosen.shape[0] / image.shape[0]
        crops[number] = verifier_crop(chosen, box * (scale_x, scale_y, scale_x, scale_y))
    return crops


class IndexVerifier:
    """An ONNX session over verifier crops: ``index_probability(image, xyxy) -> (N,)``.

    Stateless per call, so one instance serves every thread. The model's input must be
    ``crops`` (N, 3, 40, 40) and its ``classes`` metadata ``["none", "index"]``.
    """

    def __init__(self, path: Path, threads: int | None = None) -> None:
        self.path = path
        self._session = session(path, threads)
        metadata = self._session.get_modelmeta().custom_metadata_map
        classes = tuple(json.loads(metadata["classes"])) if "classes" in metadata else ()
        if classes != VERIFIER_CLASSES:
            raise ModelError(
                f"index verifier {str(path)!r} names classes {list(classes)}, "
                f"expected {list(VERIFIER_CLASSES)}"
            )
        self._input = model_input(
            self._session, "crops", (3, VERIFY_SIZE, VERIFY_SIZE), "index verifier"
        )

    def index_probability(
        self, image: NDArray[np.uint8], xyxy: NDArray[np.floating[Any]]
    ) -> NDArray[np.float32]:
        """The probability that each box (N, 4) of the BGR image is a corner index."""
        if len(xyxy) == 0:
            return np.zeros(0, np.float32)
        crops = verifier_crops(image, xyxy)
        (logits,) = self._session.run(None, {self._input: crops_to_tensor(crops)})
        return softmax(logits)[:, 1].astype(np.float32)
