"""Non-maximum suppression and the letterbox: the reader's box arithmetic, no model needed."""

from __future__ import annotations

import numpy as np
import pytest

from vision.index_detector import box_iou
from vision.letterbox import PAD_VALUE, letterbox
from vision.reader import non_max_suppression


def test_nms_keeps_best_of_overlapping_boxes() -> None:
    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [50, 50, 60, 60]], np.float32)
    scores = np.array([0.5, 0.9, 0.7], np.float32)
    assert non_max_suppression(boxes, scores, 0.5).tolist() == [1, 2]


def test_nms_keeps_what_greedy_suppression_one_box_at_a_time_keeps() -> None:
    """The overlaps computed at once keep the same boxes, in the same order, as the plain
    greedy loop (best first; a box goes when it overlaps a kept one by more than the IoU),
    ties and exact duplicates included."""
    rng = np.random.default_rng(7)
    for trial in range(200):
        count = int(rng.integers(0, 60))
        corners = rng.uniform(0, 200, (count, 2))
        boxes = np.concatenate([corners, corners + rng.uniform(2, 50, (count, 2))], axis=1)
        boxes = boxes.astype(np.float32)
        if trial % 3 == 0 and count > 1:
            boxes[: count // 2] = boxes[count - count // 2 :][: count // 2]
        scores = rng.choice([0.3, 0.6, 0.9], count).astype(np.float32)
        expected: list[int] = []
        for i in np.argsort(-scores, kind="stable"):
            if all(box_iou(boxes[k], boxes[i : i + 1])[0] <= 0.5 for k in expected):
                expected.append(int(i))
        assert non_max_suppression(boxes, scores, 0.5).tolist() == expected, trial


def test_letterbox_maps_boxes_back() -> None:
    """A box drawn in the image lands back on itself after the letterbox round trip."""
    image = np.zeros((480, 640, 3), np.uint8)
    tensor, transform = letterbox(image, 320)
    assert tensor.shape == (1, 3, 320, 320)
    assert tensor[0, :, 0, 0] == pytest.approx(PAD_VALUE / 255)  # top band is padding
    network = np.array(
        [
            [
                transform.pad_x + 10 * transform.scale,
                transform.pad_y + 20 * transform.scale,
                transform.pad_x + 110 * transform.scale,
                transform.pad_y + 220 * transform.scale,
            ]
        ],
        np.float32,
    )
    assert transform.to_image(network)[0] == pytest.approx([10, 20, 110, 220], abs=1e-3)


@pytest.mark.parametrize(
    ("shape", "size", "expected"),
    [
        ((480, 640), 320, (256, 320)),  # 320 x 240 padded to the next multiple of 32
        ((640, 480), 320, (320, 256)),
        ((1000, 1000), 320, (320, 320)),
        ((100, 1000), 640, (64, 640)),
        ((480, 640), 640, (480, 640)),  # already multiples: no padding at all
    ],
)
def test_letterbox_with_a_stride_pads_to_its_multiples(
    shape: tuple[int, int], size: int, expected: tuple[int, int]
) -> None:
    """With a stride, the shorter side is padded only to a multiple of it, centred, and boxes
    still map back onto the image."""
    image = np.full((*shape, 3), 255, np.uint8)
    tensor, transform = letterbox(image, size, stride=32)
    assert tensor.shape == (1, 3, *expected)
    inside = tensor[0, 0] == 1.0  # the image's white, not the grey padding
    rows, columns = np.flatnonzero(inside.any(axis=1)), np.flatnonzero(inside.any(axis=0))
    assert (rows[0], columns[0]) == (round(transform.pad_y), round(transform.pad_x))
    assert abs(rows[0] - (expected[0] - 1 - rows[-1])) <= 1  # centred
    corner = np.array([[transform.pad_x, transform.pad_y] * 2], np.float32)
    assert transform.to_image(corner)[0] == pytest.approx([0, 0, 0, 0], abs=1e-3)
