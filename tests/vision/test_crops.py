"""The networks' inputs (vision.crops, vision.letterbox): BGR uint8 images as RGB float planes."""

from __future__ import annotations

import numpy as np

from vision.crops import crops_to_tensor, planes_to_tensor
from vision.letterbox import PAD_VALUE, letterbox


def test_images_become_rgb_planes_in_zero_to_one_with_the_values_of_a_plain_division() -> None:
    images = np.random.default_rng(0).integers(0, 256, (5, 7, 9, 3), dtype=np.uint8)
    planes = planes_to_tensor(images)
    assert planes.shape == (5, 3, 7, 9) and planes.dtype == np.float32
    assert planes.flags["C_CONTIGUOUS"]
    expected = images[..., ::-1].transpose(0, 3, 1, 2).astype(np.float32) / np.float32(255.0)
    assert np.array_equal(planes, expected)  # the same floats, not merely close ones
    assert planes[0, 0, 0, 0] == np.float32(images[0, 0, 0, 2]) / np.float32(255.0)  # red first
    assert np.array_equal(crops_to_tensor(images), planes)


def test_the_letterbox_centres_the_image_on_grey_padding_to_the_stride() -> None:
    image = np.zeros((30, 40, 3), np.uint8)
    image[..., 2] = 255  # red
    tensor, transform = letterbox(image, 64, stride=32)
    assert tensor.shape == (1, 3, 64, 64)  # 64 x 48 padded up to 64 x 64
    assert transform.scale == 1.6 and transform.pad_x == 0.0 and transform.pad_y == 8.0
    assert tensor[0, 0, 8:56].min() == 1.0 and tensor[0, 1:, 8:56].max() == 0.0
    assert np.allclose(tensor[0, :, :8], PAD_VALUE / 255.0)
