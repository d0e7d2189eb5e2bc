"""The card-face check (vision/card_evidence.py): an index on a card's paper passes; the same
glyph printed on felt, or on a chip's inlay that the chip's body closes round, does not.

Pictures are drawn here: a white card with a rank and a pip in its corner on green felt, the
same rank and pip in white print on the felt, and on a red chip with a white inlay (the issue
29 case: a chip read as a certain 5D). Each is checked as it is, under a warm cast, dim beside
a lamp, and cut by the frame.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from vision.card_evidence import card_evidence, doubted_by_card_face, image_light, paper_mask

FELT = (40, 110, 35)
INK = (20, 20, 20)
GLYPH_BOX = (0, 0, 22, 40)
"""The rank-and-pip glyph's box, relative to where it is drawn."""


def felt(width: int = 480, height: int = 360) -> NDArray[np.uint8]:
    image = np.empty((height, width, 3), np.uint8)
    image[:] = FELT
    noise = np.random.default_rng(0).normal(0, 3, image.shape)
    return np.clip(image + noise, 0, 255).astype(np.uint8)


def glyph(image: NDArray[np.uint8], left: int, top: int, colour: tuple[int, int, int]) -> None:
    """A "5" over a round pip, 22 x 40 px, its top-left at (left, top)."""
    cv2.putText(image, "5", (left, top + 22), cv2.FONT_HERSHEY_SIMPLEX, 0.8, colour, 2, cv2.LINE_AA)
    cv2.circle(image, (left + 9, top + 32), 6, colour, -1, cv2.LINE_AA)


def card(
    image: NDArray[np.uint8], left: int, top: int, width: int = 100, height: int = 140
) -> None:
    """A white card with its index in the top-left corner and a few pips on its face."""
    cv2.rectangle(image, (left, top), (left + width, top + height), (245, 245, 245), -1)
    glyph(image, left + 6, top + 6, INK)
    for dx, dy in ((0.5, 0.3), (0.5, 0.7), (0.3, 0.5), (0.7, 0.5)):
        cv2.circle(image, (int(left + dx * width), int(top + dy * height)), 9, INK, -1)


def box_at(left: int, top: int) -> NDArray[np.float32]:
    return np.array([[left, top, left + GLYPH_BOX[2], top + GLYPH_BOX[3]]], np.float32)


def test_an_index_on_a_card_passes_and_print_on_felt_does_not() -> None:
    image = felt()
    card(image, 60, 60)
    glyph(image, 300, 100, (235, 235, 235))  # white print on the cloth
    boxes = np.concatenate([box_at(66, 66), box_at(300, 100)])
    assert card_evidence(image, boxes).tolist() == [True, False]


def test_a_value_on_a_chip_inlay_does_not_pass() -> None:
    """The chip's white inlay is paper round the glyph, but the red body closes it within
    about one glyph's height: no card runs on past it."""
    image = felt()
    centre = (320, 180)
    cv2.circle(image, centre, 52, (40, 40, 200), -1, cv2.LINE_AA)  # red body
    for angle in range(0, 360, 60):  # white edge inserts
        cv2.ellipse(image, centre, (52, 52), 0, angle - 8, angle + 8, (235, 235, 235), -1)
    cv2.circle(image, centre, 34, (40, 40, 200), -1, cv2.LINE_AA)
    cv2.circle(image, centre, 30, (240, 240, 240), -1, cv2.LINE_AA)  # the inlay
    glyph(image, 309, 160, INK)
    card(image, 60, 60)
    boxes = np.concatenate([box_at(309, 160), box_at(66, 66)])
    assert card_evidence(image, boxes).tolist() == [False, True]


def test_a_card_under_a_warm_cast_dim_or_cut_by_the_frame_still_passes() -> None:
    image = felt()
    card(image, 60, 60)
    warm = np.clip(image * np.array([0.7, 0.92, 1.15]), 0, 255).astype(np.uint8)
    assert card_evidence(warm, box_at(66, 66)).tolist() == [True]
    dim = (image * 0.35).astype(np.uint8)
    cv2.circle(dim, (420, 300), 35, (255, 255, 255), -1)  # a lamp's reflection elsewhere
    assert image_light(dim) > 200
    assert card_evidence(dim, box_at(66, 66)).tolist() == [True]
    cut = felt()
    card(cut, -40, -30)  # the card runs off the top-left of the frame
    glyph(cut, 4, 4, INK)
    assert card_evidence(cut, box_at(4, 4)).tolist() == [True]


def test_a_small_card_whose_index_is_a_third_of_it_passes() -> None:
    """A card under four index heights tall lies wholly inside the window; its paper still
    reaches one and a half box heights from the index."""
    image = felt()
    card(image, 100, 100, width=60, height=95)
    assert card_evidence(image, box_at(106, 106)).tolist() == [True]


def test_paper_mask_keeps_grey_paper_not_coloured_cloth() -> None:
    window = np.zeros((20, 20, 3), np.uint8)
    window[:, :10] = (230, 228, 225)  # paper
    window[:, 10:] = (60, 200, 60)  # bright green cloth
    mask = paper_mask(window, 230.0)
    assert mask[:, :8].all() and not mask[:, 12:].any()


@pytest.mark.parametrize(
    "boxes", [np.zeros((0, 4), np.float32), np.array([[5, 5, 5, 5]], np.float32)]
)
def test_no_box_or_a_degenerate_one(boxes: NDArray[np.float32]) -> None:
    image = felt(64, 48)
    answer = card_evidence(image, boxes)
    assert answer.shape == (len(boxes),) and not answer.any()


def test_a_card_goes_only_when_none_of_its_boxes_passes() -> None:
    """``doubted_by_card_face``: a card whose surest box is print on the felt but whose other
    box is an index on a card stays; a card of print alone goes."""
    image = felt()
    card(image, 60, 60)
    glyph(image, 300, 100, (235, 235, 235))
    glyph(image, 380, 200, (235, 235, 235))
    xyxy = np.concatenate([box_at(300, 100), box_at(66, 66), box_at(380, 200)])
    kept_card = np.array([0, 1])  # surest box on the print, its other box on the card
    print_only = np.array([2])
    doubted = doubted_by_card_face(image, xyxy, [kept_card, print_only])
    assert [group.tolist() for group in doubted] == [[2]]
    assert doubted_by_card_face(image, xyxy, []) == []
