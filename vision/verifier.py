"""The index verifier: is a detected box a card's corner index, judged from around it?

The classifier sees 1.3 times an index's box: the rank and the pip, hardly anything around them.
Printed text (a book, a menu, a box on the table) has letters and digits of an index's size, and
there the classifier reads cards: "10" from a page number, a joker from "Jo" set in a
column. Around a true index lies the corner of a card (its edge, the paper's margin, the face
beside it); around a letter lie more letters. This small network sees ``VERIFY_CONTEXT`` times
the box, at any angle, and answers the probability that the box is an index. The reader drops
boxes it doubts (``ReaderSettings.verify_below``) before the corners are merged into cards.

Identical in training and use: :func:`verifier_crop` cuts the network's input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from vision.crops import crop_index, crops_to_tensor
from vision.index_detector import ModelError, session, softmax

__all__ = [
    "VERIFIER_CLASSES",
    "VERIFY_CONTEXT",
    "VERIFY_SIZE",
    "IndexVerifier",
    "verifier_crop",
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
    with the verifier's size and context)."""
    return crop_index(image, box_xyxy, size=VERIFY_SIZE, context=VERIFY_CONTEXT)


class IndexVerifier:
    """An ONNX session over verifier crops: ``index_probability(image, xyxy) -> (N,)``.

    Stateless per call, so one instance serves every thread. The model's input must be
    ``crops`` (N, 3, 40, 40) and its ``classes`` metadata ``["none", "index"]``.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._session = session(path)
        metadata = self._session.get_modelmeta().custom_metadata_map
        classes = tuple(json.loads(metadata["classes"])) if "classes" in metadata else ()
        if classes != VERIFIER_CLASSES:
            raise ModelError(
                f"index verifier {str(path)!r} names classes {list(classes)}, "
                f"expected {list(VERIFIER_CLASSES)}"
            )
        model_input = self._session.get_inputs()[0]
        if model_input.name != "crops" or list(model_input.shape[1:]) != [
            3,
            VERIFY_SIZE,
            VERIFY_SIZE,
        ]:
            raise ModelError(
                f"index verifier input is {model_input.name} {model_input.shape}, "
                f"expected crops [N, 3, {VERIFY_SIZE}, {VERIFY_SIZE}]"
            )
        self._input = model_input.name

    def index_probability(
        self, image: NDArray[np.uint8], xyxy: NDArray[np.floating[Any]]
    ) -> NDArray[np.float32]:
        """The probability that each box (N, 4) of the BGR image is a corner index."""
        if len(xyxy) == 0:
            return np.zeros(0, np.float32)
        crops = np.stack([verifier_crop(image, box) for box in xyxy])
        (logits,) = self._session.run(None, {self._input: crops_to_tensor(crops)})
        return softmax(logits)[:, 1].astype(np.float32)
