"""A camera at the table's side: a true perspective view of the table plane.

The scenes' usual camera (:func:`training.synth.scene.render_scene`) tilts the plane by up to
``geometry.max_tilt_degrees`` but keeps every card nearly the same size. A camera at the
dealer's side, low over the table, sees the near cards large and the far ones small and
foreshortened: :func:`side_camera` is a pinhole camera ``degrees`` from the table's normal, at
about a table's width from its centre, looking at it from any side.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
from numpy.typing import NDArray

__all__ = ["far_near_ratio", "side_camera"]


def side_camera(
    rng: np.random.Generator, width: int, height: int, degrees: tuple[float, float]
) -> NDArray[np.float64]:
    """Plane-to-image homography (3x3) of a pinhole camera at an angle drawn from ``degrees``
    from the table's normal, from a side drawn at random, fitted so that the plane's width
    fills 0.9 to 1.4 of the frame's at the plane's centre."""
    tilt = math.radians(rng.uniform(*degrees))
    side = rng.uniform(-math.pi, math.pi)
    distance = rng.uniform(0.9, 1.6)  # from the plane's centre, in plane sides
    roll = math.radians(rng.normal(0, 6))
    unit = float(max(width, height))
    centre = np.array([[1, 0, -width / 2], [0, 1, -height / 2], [0, 0, unit]], np.float64)
    turn = np.array(
        [
            [math.cos(side), -math.sin(side), 0],
            [math.sin(side), math.cos(side), 0],
            [0, 0, 1],
        ]
    )
    # x across, y away from the camera's foot towards it (+y is near), depth = distance - y sin
    pinhole = np.array(
        [
            [1.0, 0.0, 0.0],
            [0.0, math.cos(tilt), 0.0],
            [0.0, -math.sin(tilt), distance],
        ]
    )
    view = pinhole @ turn @ centre
    view /= view[2, 2]
    # fit: the plane's centre at the frame's (shifted a little), its local scale drawn
    middle = cv2.perspectiveTransform(np.array([[[width / 2, height / 2]]], np.float64), view)[0, 0]
    local = _local_scale(view, width / 2, height / 2)
    zoom = rng.uniform(0.9, 1.4) / local
    shift = rng.normal(0, 0.06, 2) * [width, height]
    roll_matrix = np.array(
        [
            [math.cos(roll) * zoom, -math.sin(roll) * zoom, 0],
            [math.sin(roll) * zoom, math.cos(roll) * zoom, 0],
            [0, 0, 1],
        ]
    )
    to_frame = np.array(
        [[1, 0, width / 2 + shift[0]], [0, 1, height / 2 + shift[1]], [0, 0, 1]], np.float64
    )
    from_middle = np.array([[1, 0, -middle[0]], [0, 1, -middle[1]], [0, 0, 1]], np.float64)
    result: NDArray[np.float64] = to_frame @ roll_matrix @ from_middle @ view
    result /= result[2, 2]
    return result


def _local_scale(matrix: NDArray[np.float64], x: float, y: float) -> float:
    """How much the homography enlarges lengths near the plane point (x, y) (the square root
    of its Jacobian's determinant)."""
    step = 1.0
    points = np.array([[[x, y]], [[x + step, y]], [[x, y + step]]], np.float64)
    mapped = cv2.perspectiveTransform(points, matrix)[:, 0]
    jacobian = np.stack([mapped[1] - mapped[0], mapped[2] - mapped[0]], axis=1) / step
    return math.sqrt(abs(float(np.linalg.det(jacobian))))


def far_near_ratio(matrix: NDArray[np.float64], width: int, height: int) -> float:
    """The smallest local scale over the plane's corners and centre divided by the largest:
    1 for a camera straight above, well under 1 for a camera at the side."""
    points = [(0.0, 0.0), (width, 0.0), (width, height), (0.0, height), (width / 2, height / 2)]
    scales = [_local_scale(matrix, float(x), float(y)) for x, y in points]
    return min(scales) / max(scales)
