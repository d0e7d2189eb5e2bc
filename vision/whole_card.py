"""The whole-card classifier: one card filling the image, named from its whole face.

The corner-index reader needs a detected index. In a tight photo of one card (a crop, a scan,
a phone held close) the indices are often faint, stylised, cut at the edge or printed on a
dark or textured face, and the detector finds none. The face then still shows the pips, their
count and layout, and the court figure. This classifier reads that: the image, turned upright
if it is wider than tall, stretched to ``VIEW_SIZE_WH`` (a card's shape), into 54 cards plus
"none" ("this image is not one card filling the frame": a table, a hand, a background).

Identical in training and use: :func:`card_view` makes the network's input from a BGR image.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import cv2
import numpy as np
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES
from vision.crops import planes_to_tensor
from vision.detections import CLASSIFIER_CLASSES, CardReading
from vision.index_detector import ModelError, model_input, session, softmax
from vision.settings import ReaderSettings

__all__ = [
    "VIEW_SIZE_WH",
    "WholeCardClassifier",
    "apply_whole_card",
    "card_view",
    "views_to_tensor",
]

VIEW_SIZE_WH = (56, 80)
"""The network's input, width x height: a card's 0.7 aspect ratio."""


def card_view(image: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """The (80, 56, 3) BGR input for the whole image: a quarter turn if it is wider than tall
    (a card lying sideways), then stretched, area-averaged when shrinking."""
    if image.shape[1] > image.shape[0]:
        image = np.ascontiguousarray(np.rot90(image))
    width, height = VIEW_SIZE_WH
    interpolation = cv2.INTER_AREA if image.shape[0] > height else cv2.INTER_LINEAR
    return cast(NDArray[np.uint8], cv2.resize(image, (width, height), interpolation=interpolation))


def views_to_tensor(views: NDArray[np.uint8]) -> NDArray[np.float32]:
    """(N, 80, 56, 3) BGR uint8 views to the network's (N, 3, 80, 56) RGB float32 in [0, 1]."""
    return planes_to_tensor(views)


class WholeCardClassifier:
    """An ONNX session over card views: ``probabilities(image) -> (55,)``, stateless per call.

    The model's input must be ``views`` (N, 3, 80, 56) and its ``classes`` metadata the 54 cards
    then "none", as the project's label table has them.
    """

    def __init__(self, path: Path, threads: int | None = None) -> None:
        self.path = path
        self._session = session(path, threads)
        metadata = self._session.get_modelmeta().custom_metadata_map
        classes = tuple(json.loads(metadata["classes"])) if "classes" in metadata else ()
        if classes != CLASSIFIER_CLASSES:
            raise ModelError(
                f"whole-card classifier {str(path)!r} names classes that differ from the "
                "project's label table (54 cards, then 'none')"
            )
        width, height = VIEW_SIZE_WH
        self._input = model_input(
            self._session, "views", (3, height, width), "whole-card classifier"
        )

    def probabilities(self, image: NDArray[np.uint8]) -> NDArray[np.float32]:
        """Class probabilities (55,) for the whole image, averaged over the view and the view
        turned half round (a card reads the same both ways up)."""
        view = card_view(image)
        batch = views_to_tensor(np.stack([view, np.ascontiguousarray(view[::-1, ::-1])]))
        (logits,) = self._session.run(["logits"], {self._input: batch})
        return cast(NDArray[np.float32], softmax(logits).mean(axis=0))


def apply_whole_card(
    cards: list[CardReading],
    probabilities: NDArray[np.float32],
    size_wh: tuple[int, int],
    settings: ReaderSettings,
) -> list[CardReading]:
    """The index reader's cards, corrected by the whole-card classifier's card probabilities
    (54,) for an image of ``size_wh`` that may be one card.

    - No certain card from the indices, and the classifier names a card with at least
      ``whole_card_above``: the image is that card (the uncertain index readings go, those of
      its card counted as its corners).
    - One or two certain cards, and the classifier is sure (``whole_card_sure``) of one of them:
      the image is that one card, and the other readings go (the detector fired on a pip or a
      court figure, and the classifier read it as another card).
    - More than two certain cards: a table or a hand, left as read.
    """
    certain = [card for card in cards if not card.uncertain]
    if len(certain) > 2:
        return cards
    best = int(probabilities.argmax())
    confidence = float(probabilities[best])
    code = CARD_CLASSES[best]
    if certain:
        if confidence < settings.whole_card_sure:
            return cards
        same = [card for card in certain if card.code == code]
        return same[:1] if same else cards
    if confidence < settings.whole_card_above:
        return cards
    ranked = np.argsort(-probabilities)[1:3]
    width, height = size_wh
    return [
        CardReading(
            code=code,
            confidence=confidence,
            box_xyxy=(0.0, 0.0, float(width), float(height)),
            corners=sum(card.corners for card in cards if card.code == code),
            uncertain=confidence < settings.uncertain_below,
            alternatives=tuple(
                (CARD_CLASSES[int(i)], round(float(probabilities[i]), 4)) for i in ranked
            ),
        )
    ]
