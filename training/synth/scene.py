"""Render one synthetic scene: background, cards under a camera tilt, fingers, lighting; labels.

Every random draw takes the ``numpy.random.Generator`` passed in, so a scene is a pure function
of (config, deck assets, generator state). Labels are exact: an index is labelled only when at
least ``config.min_visible`` of its area is on top (not covered by a later card or a finger)
and inside the frame, and when it is at least ``geometry.min_index_px`` tall (a joker's mark set
down the card's edge: when the deck's index would be, see ``DeckAssets.height_share``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray

from training.synth.assets import DeckAssets
from training.synth.backgrounds import background, photo_files
from training.synth.camera import side_camera
from training.synth.casino import CasinoTable, casino_table
from training.synth.config import Legibility, SceneConfig
from training.synth.decks import JOKER_CODES
from training.synth.felt import casino_felt
from training.synth.jokers import restyled_joker
from training.synth.layouts import LAYOUTS, Occluder, Placement
from training.synth.photometry import apply_photometry, cast_shadow
from training.synth.printed import draw_printed
from training.synth.props import draw_sprite, draw_stack

__all__ = ["IndexLabel", "Scene", "render_scene"]

_OCCLUDED = -2

PARTIAL_VISIBLE = 0.05
"""The share of an unlabelled index that must be on top for it to count as showing."""
_BACKGROUND = -1


@dataclass(frozen=True)
class IndexLabel:
    """One visible corner index: its card, its quad (4x2, image pixels) and its box."""

    code: str
    deck: str
    quad: NDArray[np.float32]
    box_xyxy: tuple[float, float, float, float]
    visible: float
    card: int
    index_px: float = 0.0
    """The index's height in image pixels (a joker's mark: its deck's index's, see
    ``DeckAssets.height_share``)."""
    legible: bool = True
    """Whether a person reads it (``SceneConfig.legibility``): tall enough and enough of it
    showing."""

    def to_dict(self) -> dict[str, object]:
        """JSON-able form written beside the image."""
        return {
            "card": self.code,
            "deck": self.deck,
            "quad": [[round(float(x), 2), round(float(y), 2)] for x, y in self.quad],
            "box_xyxy": [round(v, 2) for v in self.box_xyxy],
            "visible": round(self.visible, 3),
            "card_index": self.card,
            "index_px": round(self.index_px, 2),
            "legible": self.legible,
        }


@dataclass(frozen=True)
class Scene:
    """A rendered scene: the BGR image, its labels, its layout and JPEG quality, and the
    indices that show without being labelled."""

    image: NDArray[np.uint8]
    labels: list[IndexLabel]
    layout: str
    jpeg_quality: int
    partial: list[IndexLabel] = field(default_factory=list)
    """Indices that show but are not labelled (see :func:`_index_labels`)."""
    game: str = ""
    """A casino table's game (``layouts.casino``), else empty."""


def _tilt_homography(
    rng: np.random.Generator, width: int, height: int, max_tilt: float
) -> NDArray[np.float64]:
    """Plane-to-image homography of a camera tilted up to ``max_tilt`` degrees, in any direction."""
    tilt = math.radians(max_tilt) * rng.random() ** 1.3
    near = 1.0
    far = 1.0 / (1.0 + math.sin(tilt) * rng.uniform(0.6, 1.3))
    squash = 0.5 * (1 - math.cos(tilt))
    source = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    top = (1 - far) * width / 2
    bottom = (1 - near) * width / 2
    target: NDArray[np.floating[Any]] = np.array(
        [
            [top, squash * height],
            [width - top, squash * height],
            [width - bottom, height],
            [bottom, height],
        ],
        np.float32,
    )
    center = np.array([width / 2, height / 2], np.float32)
    turn = rng.uniform(-math.pi, math.pi) if tilt > 0.05 else 0.0
    rotation = np.array(
        [[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]], np.float32
    )
    target = (target - center) @ rotation.T
    span = target.max(axis=0) - target.min(axis=0)
    zoom = min(width / span[0], height / span[1]) * rng.uniform(0.95, 1.35)
    target = (
        (target - target.mean(axis=0)) * zoom + center + rng.normal(0, 0.04, 2) * [width, height]
    )
    return cv2.getPerspectiveTransform(source, target.astype(np.float32)).astype(np.float64)


def _project(matrix: NDArray[np.float64], points: NDArray[np.float32]) -> NDArray[np.float32]:
    projected = cv2.perspectiveTransform(points.reshape(-1, 1, 2).astype(np.float64), matrix)
    return projected.reshape(-1, 2).astype(np.float32)


_pyramids: dict[tuple[str, str, int], NDArray[np.uint8]] = {}


def _source(assets: DeckAssets, code: str, scale: float) -> tuple[NDArray[np.uint8], float]:
    """The card image at the pyramid level just above ``scale`` (avoids aliasing when shrinking)."""
    level = 0
    while scale * (2 ** (level + 1)) <= 1.0 and level < 4:
        level += 1
    key = (assets.deck.name, code, level)
    image = _pyramids.get(key)
    if image is None:
        image = assets.cards[code]
        for _ in range(level):
            image = cast(NDArray[np.uint8], cv2.pyrDown(image))
        if len(_pyramids) > 4000:
            _pyramids.clear()
        _pyramids[key] = image
    return image, assets.cards[code].shape[0] / image.shape[0]


def _draw_card(
    canvas: NDArray[np.float32],
    owner: NDArray[np.int16],
    placement: Placement,
    index: int,
    homography: NDArray[np.float64],
    rng: np.random.Generator,
    shadow: bool,
    dark_face: bool = False,
) -> None:
    """Draw one card onto ``canvas`` (its face as its negative when ``dark_face``)."""
    full = placement.assets.cards[placement.code]
    h, w = full.shape[:2]
    matrix = homography @ placement.matrix
    corners = _project(matrix, np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32))
    height, width = canvas.shape[:2]
    x0, y0 = np.floor(corners.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 2
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)
    if x0 >= x1 or y0 >= y1:
        return
    scale = math.sqrt(abs(np.linalg.det(matrix[:2, :2]))) if matrix[2, 0] == 0 else 0.0
    scale = scale or float(np.linalg.norm(corners[0] - corners[3]) / h)
    source, factor = _source(placement.assets, placement.code, scale)
    to_source = np.diag([factor, factor, 1.0])
    shift = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64)
    warp = shift @ matrix @ to_source
    patch = cv2.warpPerspective(
        source,
        warp,
        (x1 - x0, y1 - y0),
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=(0, 0, 0, 0),
    )
    alpha = patch[:, :, 3].astype(np.float32)
    alpha /= 255.0
    if shadow:
        cast_shadow(canvas, alpha, x0, y0, rng)
    tone = rng.uniform(0.82, 1.08) * rng.uniform(0.95, 1.05, 3).astype(np.float32)
    # in place, each step the same float32 operation as region * (1 - alpha) + colour * alpha
    colour = patch[:, :, :3].astype(np.float32)
    if dark_face:
        np.subtract(255.0, colour, out=colour)
    colour *= tone[None, None, :]
    colour *= alpha[..., None]
    region = canvas[y0:y1, x0:x1]
    region *= (1.0 - alpha)[..., None]
    region += colour
    owner[y0:y1, x0:x1][alpha > 0.5] = index


def _draw_occluder(
    canvas: NDArray[np.float32],
    owner: NDArray[np.int16],
    occluder: Occluder,
    homography: NDArray[np.float64],
) -> None:
    outline = np.asarray(
        cv2.ellipse2Poly(
            (int(occluder.center[0]), int(occluder.center[1])),
            (max(1, int(occluder.axes[0])), max(1, int(occluder.axes[1]))),
            int(occluder.angle_degrees),
            0,
            360,
            10,
        )
    ).astype(np.float32)
    projected = np.round(_project(homography, outline)).astype(np.int32)
    mask = np.zeros(owner.shape, np.uint8)
    cv2.fillPoly(mask, [projected], 1)
    shade = cv2.GaussianBlur(mask.astype(np.float32), (0, 0), 3.0)
    colour = np.array(occluder.colour_bgr, np.float32)
    canvas[mask > 0] = colour * (0.8 + 0.25 * shade[mask > 0, None])
    owner[mask > 0] = _OCCLUDED


def _index_labels(
    owner: NDArray[np.int16],
    placements: Sequence[Placement],
    homography: NDArray[np.float64],
    min_visible: float,
    min_index_px: float,
    legibility: Legibility | None = None,
    visible_part_boxes: bool = False,
) -> tuple[list[IndexLabel], list[IndexLabel]]:
    """The indices to label (tall enough, ``min_index_px``, and at least ``min_visible`` on top
    and inside the frame), and those left unlabelled that still show (at least
    ``PARTIAL_VISIBLE`` on top: partly covered, cut by the frame, or too small). A detector may
    rightly fire on the latter, so they are no place to take "none" examples from
    (:mod:`training.negatives`). A labelled index is ``legible`` when it also reaches
    ``legibility``'s height and visible share (every one, without ``legibility``). With
    ``visible_part_boxes``, the box of a partly covered index is that of its pixels that show
    (a sliver of a fanned card), not that of its whole quad."""
    height, width = owner.shape
    labels: list[IndexLabel] = []
    partial: list[IndexLabel] = []
    for index, placement in enumerate(placements):
        matrix = homography @ placement.matrix
        share = placement.assets.height_share(placement.code)
        for quad in placement.assets.index_quads(placement.code):
            projected = _project(matrix, quad)
            area = abs(float(cv2.contourArea(projected)))
            tall = float(np.linalg.norm(projected[3] - projected[0]))
            if area < 4:
                continue
            x0, y0 = np.floor(projected.min(axis=0)).astype(int)
            x1, y1 = np.ceil(projected.max(axis=0)).astype(int) + 1
            cx0, cy0, cx1, cy1 = max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)
            if cx0 >= cx1 or cy0 >= cy1:
                continue
            mask = np.zeros((cy1 - cy0, cx1 - cx0), np.uint8)
            cv2.fillPoly(mask, [np.round(projected - [cx0, cy0]).astype(np.int32)], 1)
            filled = int(mask.sum())
            showing = (owner[cy0:cy1, cx0:cx1] == index) & (mask > 0)
            mine = int(showing.sum())
            # the share of the index's own area that is on top and inside the frame
            visible = mine / max(area, float(filled), 1.0)
            index_px = tall * share
            legible = legibility is None or (
                index_px >= legibility.min_index_px and visible >= legibility.min_visible
            )
            if index_px >= min_index_px and visible >= min_visible:
                shown = labels
            elif visible >= PARTIAL_VISIBLE:
                shown = partial
            else:
                continue
            box = (
                float(max(projected[:, 0].min(), 0)),
                float(max(projected[:, 1].min(), 0)),
                float(min(projected[:, 0].max(), width)),
                float(min(projected[:, 1].max(), height)),
            )
            if visible_part_boxes and mine and visible < 1.0:
                # a sliver of a fanned card: the box of what shows of the index
                rows, columns = np.nonzero(showing)
                box = (
                    float(cx0 + columns.min()),
                    float(cy0 + rows.min()),
                    float(cx0 + columns.max() + 1),
                    float(cy0 + rows.max() + 1),
                )
            shown.append(
                IndexLabel(
                    placement.code,
                    placement.assets.deck.name,
                    projected,
                    box,
                    visible,
                    index,
                    index_px,
                    legible and shown is labels,
                )
            )
    return labels, partial


def render_scene(
    config: SceneConfig, decks: Sequence[DeckAssets], rng: np.random.Generator
) -> Scene:
    """Render one scene with the given decks (one design per scene, sometimes a mix)."""
    width, height = config.sizes[int(rng.integers(len(config.sizes)))]
    names = [f.name for f in fields(config.layouts)]
    weights = np.array([getattr(config.layouts, name) for name in names], np.float64)
    layout = names[int(rng.choice(len(names), p=weights / weights.sum()))]
    first = decks[int(rng.integers(len(decks)))]
    chosen = [first]
    if len(decks) > 1 and rng.random() < config.geometry.mixed_decks_probability:
        chosen.append(decks[int(rng.integers(len(decks)))])
    table: CasinoTable | None = None
    if layout == "casino":
        table = casino_table(
            rng,
            chosen,
            width,
            height,
            config.geometry.card_height_fraction,
            config.geometry.joker_probability,
            config.casino,
        )
        placements, occluders = table.placements, table.occluders
    else:
        placements, occluders = LAYOUTS[layout](
            rng,
            chosen,
            width,
            height,
            config.geometry.card_height_fraction,
            config.geometry.joker_probability,
        )
    restyle = config.geometry.joker_restyle_probability
    if restyle > 0:  # no draw at 0: configs without it keep their scenes
        placements = [
            replace(placement, assets=restyled_joker(placement.assets, placement.code, rng))
            if placement.code in JOKER_CODES and rng.random() < restyle
            else placement
            for placement in placements
        ]
    perspective = config.geometry.perspective_probability
    if perspective > 0 and rng.random() < perspective:  # no draw at 0: older configs' scenes
        homography = side_camera(rng, width, height, config.geometry.perspective_degrees)
    else:
        homography = _tilt_homography(rng, width, height, config.geometry.max_tilt_degrees)
    owner = np.full((height, width), _BACKGROUND, np.int16)
    if table is None:
        photos = photo_files(config.backgrounds.photo_dirs)
        canvas = background(rng, width, height, photos, config.backgrounds.photo_probability)
        printed = config.backgrounds.printed_probability
        if printed > 0 and rng.random() < printed:
            draw_printed(canvas, rng)
    else:
        canvas = casino_felt(rng, width, height, table.felt.felt_bgr)
        draw_sprite(canvas, owner, table.felt.image, homography, covers=False)
    shadows = rng.random() < config.photometry.shadow_probability
    dark = config.geometry.dark_face_probability
    dark_faces = dark > 0 and rng.random() < dark  # no draw at 0: older configs' scenes
    sprites = [] if table is None else sorted(table.sprites, key=lambda sprite: sprite.after)
    for index, placement in enumerate(placements):
        while sprites and sprites[0].after <= index:
            sprite = sprites.pop(0)
            draw_sprite(canvas, owner, sprite.image, homography @ sprite.matrix, sprite.covers)
        _draw_card(canvas, owner, placement, index, homography, rng, shadows, dark_faces)
    for sprite in sprites:
        draw_sprite(canvas, owner, sprite.image, homography @ sprite.matrix, sprite.covers)
    for stack in [] if table is None else table.stacks:
        draw_stack(canvas, owner, homography, stack.center, stack.radius, stack.count, rng)
    for occluder in occluders:
        _draw_occluder(canvas, owner, occluder, homography)
    labels, partial = _index_labels(
        owner,
        placements,
        homography,
        config.min_visible,
        config.geometry.min_index_px,
        config.legibility,
        config.geometry.visible_part_boxes,
    )
    image = apply_photometry(canvas, config.photometry, rng)
    low, high = config.photometry.jpeg_quality
    game = "" if table is None else table.game
    return Scene(image, labels, layout, int(rng.integers(low, high + 1)), partial, game)
