"""Test helper: synthetic scenes drawn by hand and the ink of a card's corner.

Cards are placed on a flat cloth under a camera and drawn, fingers over them, as
:func:`training.synth.scene.render_scene` draws them, and labelled by the renderer's own
labelling; the ink of a drawn corner (connected blobs near the corner that do not run into the
picture) is found from the pixels. The label-geometry tests (tests/training/test_synth_geometry.py,
tests/training/test_synth_jokers.py) check the labels against that ink. Cards are rendered at
``HEIGHT`` px (cached in ``~/.cache/handreader``); ``needs_art`` and ``needs_all_art`` skip with
the reason when the card art (``scripts/install-card-art``) is not installed.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from training.synth import scene as scene_module
from training.synth.assets import DeckAssets, load_assets
from training.synth.decks import DECKS, deck_by_name
from training.synth.index_box import corner_quads
from training.synth.layouts import Occluder, Placement, _card_matrix

HEIGHT = 200
"""Card render height for these tests (small: cheap to render, load and warp)."""

FAST_DECKS = ("simplistic", "dondorf")
"""One deck with indices in two corners, one with indices in all four."""

MIN_VISIBLE = 0.8
MIN_INDEX_PX = 12.0
"""The thresholds of ``datasets/scenes.yaml``."""

NUMBER_RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10")
"""Ranks whose corner index stands clear of the picture (court cards' indices touch their
frame, and jokers carry their own corner mark: see tests/test_synth_jokers.py)."""

CORNER_NAMES = ("top-left", "bottom-right", "top-right", "bottom-left")
"""Corners in the order of :func:`training.synth.index_box.corner_quads`."""

FELT_BGR = (40.0, 110.0, 35.0)


def art_missing(names: Sequence[str]) -> str | None:
    """Why the named decks cannot be drawn here, or None when they can."""
    absent = [name for name in names if not deck_by_name(name).available]
    if absent:
        return f"card art not installed ({', '.join(absent)}): run scripts/install-card-art"
    if shutil.which("rsvg-convert") is None:
        return "rsvg-convert not installed (librsvg2-bin): run scripts/install-card-art"
    return None


_fast_missing = art_missing(FAST_DECKS)
needs_art = pytest.mark.skipif(_fast_missing is not None, reason=_fast_missing or "")

USED_DECKS = tuple(deck.name for deck in DECKS)
_all_missing = art_missing(USED_DECKS)
needs_all_art = pytest.mark.skipif(_all_missing is not None, reason=_all_missing or "")


# ---------------------------------------------------------------------------------------------
# drawing scenes by hand


@dataclass(frozen=True)
class Drawn:
    """A scene drawn without background or photometry: image, pixel owners and labels."""

    image: NDArray[np.uint8]
    owner: NDArray[np.int16]
    labels: list[scene_module.IndexLabel]
    placements: list[Placement]
    homography: NDArray[np.float64]


def deck(name: str) -> DeckAssets:
    return load_assets(name, HEIGHT)


def place(
    assets: DeckAssets,
    code: str,
    center: tuple[float, float],
    angle: float = 0.0,
    height_px: float | None = None,
) -> Placement:
    """A card centred at ``center`` (plane pixels), turned by ``angle`` radians.

    ``height_px`` defaults to the render's own height (scale 1, so card pixels are plane pixels).
    """
    own = float(assets.cards[code].shape[0])
    return Placement(assets, code, _card_matrix(assets, code, center, angle, height_px or own))


def draw(
    placements: Sequence[Placement],
    size_wh: tuple[int, int],
    homography: NDArray[np.float64] | None = None,
    occluders: Sequence[Occluder] = (),
) -> Drawn:
    """Draw cards (in order, later on top) and fingers as ``render_scene`` does; label them."""
    width, height = size_wh
    matrix = np.eye(3) if homography is None else homography
    canvas = np.empty((height, width, 3), np.float32)
    canvas[:] = FELT_BGR
    owner = np.full((height, width), -1, np.int16)
    rng = np.random.default_rng(0)
    for index, placement in enumerate(placements):
        scene_module._draw_card(canvas, owner, placement, index, matrix, rng, False)
    for occluder in occluders:
        scene_module._draw_occluder(canvas, owner, occluder, matrix)
    labels, _ = scene_module._index_labels(owner, placements, matrix, MIN_VISIBLE, MIN_INDEX_PX)
    image = np.clip(canvas, 0, 255).astype(np.uint8)
    return Drawn(image, owner, labels, list(placements), matrix)


def project(matrix: NDArray[np.float64], points: NDArray[np.float32]) -> NDArray[np.float32]:
    projected = cv2.perspectiveTransform(points.reshape(-1, 1, 2).astype(np.float64), matrix)
    return projected.reshape(-1, 2).astype(np.float32)


def card_size(placement: Placement) -> tuple[int, int]:
    height, width = placement.assets.cards[placement.code].shape[:2]
    return width, height


def index_quads(placement: Placement, homography: NDArray[np.float64]) -> list[NDArray[np.float32]]:
    """The card's index quads in image pixels, in ``CORNER_NAMES`` order (none for a joker
    without a corner mark)."""
    quads = placement.assets.index_quads(placement.code)
    return [project(homography @ placement.matrix, quad) for quad in quads]


def labelled_corners(drawn: Drawn) -> set[tuple[int, str]]:
    """(card number, corner name) of every label, matched to the card's projected index quads."""
    found = set()
    for label in drawn.labels:
        quads = index_quads(drawn.placements[label.card], drawn.homography)
        distances = [float(np.abs(quad - label.quad).max()) for quad in quads]
        best = int(np.argmin(distances))
        assert distances[best] < 0.01, f"label quad {label.quad} matches no index of its card"
        found.add((label.card, CORNER_NAMES[best]))
    return found


# ---------------------------------------------------------------------------------------------
# the ink of a corner


def ink_zones(placement: Placement, homography: NDArray[np.float64]) -> list[NDArray[np.float32]]:
    """Per corner (``CORNER_NAMES`` order), the image quad of the corner area around the index.

    The area reaches from the card's corner a third of the index's width past it to the right
    and a fifth of its height below it (at most 30% x 40% of the card, or to the box's own
    edge when the box reaches further): room for a glyph the box would miss, yet short of the
    pips and pictures of most decks.
    """
    width, height = card_size(placement)
    where = placement.assets.index_place(placement.code)
    if where is None:
        return []
    x1, y1, x2, y2 = where.box
    reach_x = min(max(0.3, x2), x2 + 0.35 * (x2 - x1))
    reach_y = min(max(0.4, y2), y2 + 0.2 * (y2 - y1))
    zones = corner_quads((0.0, 0.0, reach_x, reach_y), width, height, where.corners)
    return [project(homography @ placement.matrix, zone) for zone in zones]


def corner_ink(drawn: Drawn, card: int, zone: NDArray[np.float32]) -> NDArray[np.int64] | None:
    """(N, 2) x, y of the index ink in ``zone`` of card ``card``; None when none stands clear.

    Ink: pixels of the card that differ from the paper (the zone's median colour) by over 90
    in summed BGR. Only blobs lying wholly inside the zone and away from the card's edge
    count: blobs that run out of the zone belong to the picture or the pips, blobs along the
    edge to the card's printed outline.
    """
    height, width = drawn.owner.shape
    zone_mask = np.zeros((height, width), np.uint8)
    cv2.fillPoly(zone_mask, [np.round(zone).astype(np.int32)], 1)
    kernel = np.ones((3, 3), np.uint8)
    card_mask = np.asarray(
        cv2.erode((drawn.owner == card).astype(np.uint8), kernel, iterations=2), np.uint8
    )
    selected = (card_mask > 0) & (zone_mask > 0)
    inner = cv2.erode(zone_mask * card_mask, kernel, iterations=1) > 0
    if selected.sum() < 20:
        return None
    pixels = drawn.image.astype(np.int16)
    paper = np.median(pixels[selected].reshape(-1, 3), axis=0)
    ink = (np.abs(pixels - paper).sum(axis=2) > 90) & selected
    count, blobs, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    rejected = np.zeros(count, bool)
    rejected[0] = True  # the background
    rejected[np.unique(blobs[ink & ~inner])] = True  # blobs running out of the zone
    rejected |= stats[:, cv2.CC_STAT_AREA] < 3
    keep = ~rejected[blobs]
    if not keep.any():
        return None
    ys, xs = np.nonzero(keep)
    return np.stack([xs, ys], axis=1)


@dataclass(frozen=True)
class InkCheck:
    """How one labelled index's ink sits in its box."""

    where: str
    pixels: int
    share_inside: float
    centroid_inside: bool


def check_ink(drawn: Drawn, card: int) -> tuple[list[InkCheck], list[str]]:
    """Ink checks of every corner of ``card`` lying wholly in the frame; and missing labels.

    A corner wholly in the frame, uncovered (the card is drawn alone) and tall enough must be
    labelled; its ink is then compared with the label's box (1.5 px of tolerance for the
    antialiased glyph edge).
    """
    placement = drawn.placements[card]
    height, width = drawn.owner.shape
    quads = index_quads(placement, drawn.homography)
    labels: dict[str, scene_module.IndexLabel] = {}
    for label in drawn.labels:
        for name, quad in zip(CORNER_NAMES, quads, strict=False):
            if label.card == card and float(np.abs(quad - label.quad).max()) < 0.01:
                labels[name] = label
    checks: list[InkCheck] = []
    missing: list[str] = []
    for name, zone, quad in zip(
        CORNER_NAMES, ink_zones(placement, drawn.homography), quads, strict=False
    ):
        where = f"{placement.assets.deck.name} {placement.code} {name}"
        inside_frame = (
            (zone.min() >= 1) and (zone[:, 0].max() < width - 1) and (zone[:, 1].max() < height - 1)
        )
        tall = float(np.linalg.norm(quad[3] - quad[0]))
        if not inside_frame or tall * placement.assets.height_share(placement.code) < MIN_INDEX_PX:
            continue
        if name not in labels:
            missing.append(where)
            continue
        ink = corner_ink(drawn, card, zone)
        if ink is None:
            continue
        checks.append(ink_in_box(where, ink, labels[name].box_xyxy))
    return checks, missing


def ink_in_box(
    where: str,
    ink: NDArray[np.int64],
    box: tuple[float, float, float, float],
    tolerance: float = 1.5,
) -> InkCheck:
    """How ink pixels sit in a box (``tolerance`` px for the antialiased glyph edge)."""
    x1, y1, x2, y2 = box
    inside = (
        (ink[:, 0] >= x1 - tolerance)
        & (ink[:, 0] <= x2 + tolerance)
        & (ink[:, 1] >= y1 - tolerance)
        & (ink[:, 1] <= y2 + tolerance)
    )
    cx, cy = ink.mean(axis=0)
    return InkCheck(where, len(ink), float(inside.mean()), bool(x1 <= cx <= x2 and y1 <= cy <= y2))


def assert_ink_in_boxes(checks: Sequence[InkCheck], missing: Sequence[str], corners: int) -> None:
    """Every labelled index holds its ink; ink was found for most corners; none went unlabelled.

    At least 90% of a corner's ink pixels must fall in the box, and the ink's centre inside
    it: a box shifted, mirrored, scaled or put on the wrong corner fails both by far.
    """
    assert not missing, f"uncovered indices inside the frame left unlabelled: {missing[:10]}"
    assert len(checks) >= 0.75 * corners, (
        f"index ink found in only {len(checks)} of {corners} corners: the check proves nothing"
    )
    outside = [check for check in checks if check.share_inside < 0.9 or not check.centroid_inside]
    assert not outside, "ink outside the labelled box: " + ", ".join(
        f"{check.where} ({1 - check.share_inside:.0%} of {check.pixels} px out)"
        for check in outside[:10]
    )


def tilted(
    rng: np.random.Generator, size_wh: tuple[int, int], max_tilt: float
) -> NDArray[np.float64]:
    """A camera homography as the renderer draws it."""
    return scene_module._tilt_homography(rng, size_wh[0], size_wh[1], max_tilt)


def single_card_checks(
    assets: DeckAssets, codes: Sequence[str], seed: int, max_tilt: float = 45.0
) -> tuple[list[InkCheck], list[str], int]:
    """Draw each card alone at a random turn under a random camera; check its corners."""
    rng = np.random.default_rng(seed)
    size = (480, 400)
    checks: list[InkCheck] = []
    missing: list[str] = []
    for code in codes:
        angle = rng.uniform(-math.pi, math.pi)
        placement = place(assets, code, (240, 200), angle, height_px=rng.uniform(150, 260))
        drawn = draw([placement], size, tilted(rng, size, max_tilt))
        found, lost = check_ink(drawn, 0)
        checks += found
        missing += lost
    return checks, missing, len(codes) * assets.deck.corners
