"""Label geometry of the synthetic scenes ("Tests: Geometry").

Two promises are checked on rendered pixels, not on the label code's own arithmetic:

* each labelled box contains its index: a card is drawn alone (on a flat cloth, under the
  scene's camera) and the ink of its corner (connected blobs near the corner that do not run
  into the picture) must lie in the labelled box;
* no box is labelled for a covered index: scenes built by hand put a second card, a finger or
  the frame edge over an index, and the index must be labelled exactly when at least
  ``min_visible`` (0.8, as in ``datasets/scenes.yaml``) of it stays visible.

Random scenes from :func:`training.synth.scene.render_scene` are then checked the same way, with
the placements captured from the renderer and the visible share recomputed geometrically
(supersampled polygons of the cards on top and of the fingers).

Cards are rendered at 200 px (cached in ``~/.cache/handreader``); the tests skip with the
reason when the card art (``scripts/install-card-art``) is not installed. The scenes drawn by
hand and the ink of a corner come from tests/synth_drawing.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray
from synth_drawing import (
    CORNER_NAMES,
    FAST_DECKS,
    HEIGHT,
    MIN_INDEX_PX,
    NUMBER_RANKS,
    USED_DECKS,
    Drawn,
    InkCheck,
    assert_ink_in_boxes,
    card_size,
    check_ink,
    corner_ink,
    deck,
    draw,
    index_quads,
    ink_in_box,
    ink_zones,
    labelled_corners,
    needs_all_art,
    needs_art,
    place,
    project,
    single_card_checks,
)

from training.synth import scene as scene_module
from training.synth.assets import DeckAssets
from training.synth.config import parse_config
from training.synth.layouts import Occluder, Placement

pytestmark = needs_art

# ---------------------------------------------------------------------------------------------
# each labelled box contains its index


@pytest.mark.parametrize("name", FAST_DECKS)
def test_label_box_holds_corner_ink(name: str) -> None:
    """Required: "each labelled box contains its index pixels" (one card alone, any turn, tilt)."""
    assets = deck(name)
    codes = [rank + suit for rank, suit in zip(NUMBER_RANKS, "SHDCSHDCSH", strict=True)]
    checks, missing, corners = single_card_checks(assets, codes, seed=3)
    assert_ink_in_boxes(checks, missing, corners)


@pytest.mark.slow
@needs_all_art
@pytest.mark.parametrize("name", USED_DECKS)
def test_label_box_holds_corner_ink_every_deck(name: str) -> None:
    """The same on all 40 number cards of every deck in use (court cards: see NUMBER_RANKS;
    a deck of split extra may lend no aces)."""
    assets = deck(name)
    codes = [rank + suit for rank in NUMBER_RANKS for suit in "SHDC" if rank + suit in assets.cards]
    assert len(codes) >= 36
    checks, missing, corners = single_card_checks(assets, codes, seed=11)
    assert_ink_in_boxes(checks, missing, corners)


def test_label_box_misplaced_would_be_caught() -> None:
    """The ink check is not vacuous: the same ink against a box moved by its own width fails."""
    assets = deck(FAST_DECKS[0])
    placement = place(assets, "7H", (240, 200))
    drawn = draw([placement], (480, 400))
    checks, missing = check_ink(drawn, 0)
    assert len(checks) == 2 and not missing
    assert all(check.share_inside > 0.9 for check in checks)
    zone = ink_zones(placement, drawn.homography)[0]
    ink = corner_ink(drawn, 0, zone)
    assert ink is not None
    (label,) = [label for label in drawn.labels if label.quad[:, 1].mean() < 200]
    x1, y1, x2, y2 = label.box_xyxy
    for dx, dy in ((x2 - x1, 0.0), (0.0, y2 - y1), (-(x2 - x1) / 2, (y2 - y1) / 2)):
        moved = ink_in_box("moved", ink, (x1 + dx, y1 + dy, x2 + dx, y2 + dy))
        assert moved.share_inside < 0.6 and not moved.centroid_inside


# ---------------------------------------------------------------------------------------------
# no box for a covered index


def upright_pair(name: str, cover_x: float, cover_y: float) -> tuple[Drawn, DeckAssets]:
    """Card 0 upright at (260, 300); card 1 on top, shifted by (cover_x, cover_y) card sizes."""
    assets = deck(name)
    under = place(assets, "9S", (260, 300))
    width, height = card_size(under)
    over = place(assets, "4D", (260 + cover_x * width, 300 + cover_y * height))
    return draw([under, over], (560, 560)), assets


@pytest.mark.parametrize("name", FAST_DECKS)
def test_index_under_another_card_is_not_labelled(name: str) -> None:
    """Required: "An index covered by another card ... is not labelled as visible".

    Card 1 lies up and to the left of card 0, over card 0's top-left index only; every other
    index of both cards is in the frame and uncovered.
    """
    drawn, assets = upright_pair(name, -0.6, -0.55)
    expected = {(0, "bottom-right"), (1, "top-left"), (1, "bottom-right")}
    if assets.deck.corners == 4:
        expected |= {(0, "top-right"), (0, "bottom-left"), (1, "top-right"), (1, "bottom-left")}
    assert labelled_corners(drawn) == expected


@pytest.mark.parametrize(
    ("covered", "labelled"),
    [
        # share of the top-left index's width under the card on top -> labelled?
        # (min_visible 0.8: labelled when at least 80% stays visible)
        (0.0, True),
        (0.1, True),
        (0.35, False),
        (0.6, False),
        (1.2, False),
    ],
)
def test_partly_covered_index_uses_min_visible(covered: float, labelled: bool) -> None:
    """A card slid in from the left over card 0's top-left index, its straight edge crossing it."""
    assets = deck(FAST_DECKS[0])
    under = place(assets, "9S", (300, 260))
    width, height = card_size(under)
    x1, y1, x2, y2 = assets.index_box
    left = 300 - width / 2
    edge = left + (x1 + covered * (x2 - x1)) * width
    index_middle = 260 - height / 2 + (y1 + y2) / 2 * height
    over = place(assets, "KD", (edge - width / 2, index_middle))
    drawn = draw([under, over], (600, 520))
    assert ((0, "top-left") in labelled_corners(drawn)) is labelled
    assert (0, "bottom-right") in labelled_corners(drawn)


@pytest.mark.parametrize(
    ("outside", "labelled"),
    [
        # share of the top-left index's width beyond the frame's left edge -> labelled?
        (-0.2, True),
        (0.1, True),
        (0.4, False),
        (1.5, False),
    ],
)
def test_index_cut_by_the_frame_uses_min_visible(outside: float, labelled: bool) -> None:
    """An index "cut by the frame is not labelled as visible"."""
    assets = deck(FAST_DECKS[0])
    probe = place(assets, "9S", (0, 0))
    width, _ = card_size(probe)
    x1, _, x2, _ = assets.index_box
    center_x = width / 2 - (x1 + outside * (x2 - x1)) * width
    drawn = draw([place(assets, "9S", (center_x, 200))], (400, 400))
    assert ((0, "top-left") in labelled_corners(drawn)) is labelled
    assert ((0, "bottom-right") in labelled_corners(drawn)) is (center_x + width / 2 <= 400)


def test_index_under_a_finger_is_not_labelled() -> None:
    """Fingers over a fanned hand hide indices; a hidden one is not labelled."""
    assets = deck(FAST_DECKS[0])
    card = place(assets, "QH", (200, 220))
    width, height = card_size(card)
    x1, y1, x2, y2 = assets.index_box
    corner = (200 - width / 2 + (x1 + x2) / 2 * width, 220 - height / 2 + (y1 + y2) / 2 * height)
    finger = Occluder(
        corner,
        (0.6 * (x2 - x1) * width + 4, 0.6 * (y2 - y1) * height + 4),
        0.0,
        (120.0, 160.0, 210.0),
    )
    assert labelled_corners(draw([card], (400, 440))) == {(0, "top-left"), (0, "bottom-right")}
    assert labelled_corners(draw([card], (400, 440), occluders=[finger])) == {(0, "bottom-right")}


@pytest.mark.parametrize(
    ("card_height_px", "labelled"),
    [
        # min_index_px 12: an index about a quarter of the card tall is too short on a 30 px card
        (30.0, False),
        (120.0, True),
    ],
)
def test_tiny_index_is_not_labelled(card_height_px: float, labelled: bool) -> None:
    assets = deck(FAST_DECKS[0])
    drawn = draw([place(assets, "5C", (150, 150), 0.3, card_height_px)], (300, 300))
    assert bool(drawn.labels) is labelled
    for label in drawn.labels:
        assert float(np.linalg.norm(label.quad[3] - label.quad[0])) >= MIN_INDEX_PX


# ---------------------------------------------------------------------------------------------
# random scenes from the renderer


@dataclass
class Captured:
    """What ``render_scene`` drew: cards in order, fingers, camera, size and its labels."""

    placements: list[Placement]
    occluders: list[Occluder]
    homography: NDArray[np.float64]
    owner_shape: tuple[int, int]
    labels: list[scene_module.IndexLabel]


def render_captured(
    monkeypatch: pytest.MonkeyPatch,
    decks: Sequence[DeckAssets],
    seeds: Sequence[int],
    **overrides: Any,
) -> list[Captured]:
    """Render scenes with ``render_scene`` and capture its placements, fingers and labels."""
    raw: dict[str, Any] = {
        "card_render_height": HEIGHT,
        "sizes": [[640, 480], [320, 240]],
        "backgrounds": {"photo_dirs": []},
    }
    raw.update(overrides)
    config = parse_config(raw)
    captured: list[Captured] = []
    occluders: list[Occluder] = []
    Labels = list[scene_module.IndexLabel]
    real_labels: Callable[..., tuple[Labels, Labels]] = scene_module._index_labels
    real_occluder: Callable[..., None] = scene_module._draw_occluder

    def spy_occluder(canvas: Any, owner: Any, occluder: Occluder, homography: Any) -> None:
        occluders.append(occluder)
        real_occluder(canvas, owner, occluder, homography)

    def spy_labels(
        owner: NDArray[np.int16],
        placements: Sequence[Placement],
        homography: NDArray[np.float64],
        *rest: float,
    ) -> tuple[Labels, Labels]:
        labels, partial = real_labels(owner, placements, homography, *rest)
        captured.append(
            Captured(
                list(placements),
                list(occluders),
                homography,
                (owner.shape[0], owner.shape[1]),
                labels,
            )
        )
        occluders.clear()
        return labels, partial

    with monkeypatch.context() as patch:
        patch.setattr(scene_module, "_index_labels", spy_labels)
        patch.setattr(scene_module, "_draw_occluder", spy_occluder)
        for seed in seeds:
            rng = np.random.default_rng([config.seed, seed])
            scene = scene_module.render_scene(config, decks, rng)
            assert scene.labels == captured[-1].labels
    assert len(captured) == len(seeds)
    return captured


def geometric_visibility(shot: Captured, card: int, quad: NDArray[np.float32]) -> float:
    """Share of ``quad`` inside the frame and under no later card's outline and no finger.

    Rasterised 4x finer than the image, from the outlines alone (not the renderer's pixel
    owners): cards as their projected rectangles, fingers as their projected ellipses.
    """
    factor = 4
    height, width = shot.owner_shape
    x0, y0 = np.floor(quad.min(axis=0)).astype(int) - 1
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 1
    shift = np.array([x0, y0], np.float32)
    size = ((y1 - y0) * factor, (x1 - x0) * factor)

    def raster(points: NDArray[np.float32]) -> NDArray[np.bool_]:
        mask = np.zeros(size, np.uint8)
        cv2.fillPoly(mask, [np.round((points - shift) * factor).astype(np.int32)], 1)
        return mask > 0

    index = raster(quad)
    visible = index.copy()
    frame = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    visible &= raster(frame)
    for later in shot.placements[card + 1 :]:
        w, h = card_size(later)
        outline = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
        visible &= ~raster(project(shot.homography @ later.matrix, outline))
    for occluder in shot.occluders:
        ellipse = np.asarray(
            cv2.ellipse2Poly(
                (int(occluder.center[0]), int(occluder.center[1])),
                (max(1, int(occluder.axes[0])), max(1, int(occluder.axes[1]))),
                int(occluder.angle_degrees),
                0,
                360,
                10,
            ),
            np.float32,
        )
        visible &= ~raster(project(shot.homography, ellipse))
    return float(visible.sum() / max(int(index.sum()), 1))


def check_scene_coverage(shot: Captured) -> list[str]:
    """Disagreements between the labels and the geometric visible share of every index.

    Labelled indices must be at least 70% visible by outline (the renderer asks 80% of pixels;
    card outlines overstate cover by their rounded corners); indices under 50% visible by
    outline must not be labelled.
    """
    labelled = {(label.card, tuple(np.round(label.quad.ravel(), 3))) for label in shot.labels}
    problems = []
    for card, placement in enumerate(shot.placements):
        for name, quad in zip(CORNER_NAMES, index_quads(placement, shot.homography), strict=False):
            is_labelled = (card, tuple(np.round(quad.ravel(), 3))) in labelled
            tall = float(np.linalg.norm(quad[3] - quad[0]))
            tall *= placement.assets.height_share(placement.code)  # as the labels count it
            if tall < 2:
                assert not is_labelled
                continue
            share = geometric_visibility(shot, card, quad)
            where = f"card {card} {placement.code} {name}: {share:.0%} visible"
            if is_labelled and (share < 0.7 or tall < MIN_INDEX_PX):
                problems.append(f"{where}, {tall:.1f} px tall, labelled")
            if not is_labelled and share < 0.5:
                continue
            if not is_labelled and share > 0.97 and tall >= MIN_INDEX_PX + 1:
                problems.append(f"{where}, {tall:.1f} px tall, not labelled")
    return problems


def test_random_scenes_label_exactly_the_visible_indices(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the renderer's own scenes (all layouts): covered or cut indices are unlabelled,
    fully visible ones are labelled."""
    decks = [deck(name) for name in FAST_DECKS]
    shots = render_captured(monkeypatch, decks, range(12))
    assert sum(len(shot.labels) for shot in shots) > 30  # the scenes do hold indices
    problems = [
        f"scene {seed}: {problem}"
        for seed, shot in enumerate(shots)
        for problem in check_scene_coverage(shot)
    ]
    assert not problems, problems[:10]


def test_random_scenes_label_boxes_hold_ink(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each labelled card of a rendered scene, redrawn alone under the same camera, has its
    corner ink in the labelled box (indices at least 24 px tall, number cards)."""
    decks = [deck(name) for name in FAST_DECKS]
    shots = render_captured(
        monkeypatch,
        decks,
        range(100, 106),
        layouts={"single": 1, "hand": 1, "pits": 1, "table": 0, "fan": 0, "pile": 0},
    )
    checks: list[InkCheck] = []
    for shot in shots:
        height, width = shot.owner_shape
        for card in sorted({label.card for label in shot.labels}):
            placement = shot.placements[card]
            if placement.code[:-1] not in NUMBER_RANKS:
                continue
            quad = index_quads(placement, shot.homography)[0]
            if float(np.linalg.norm(quad[3] - quad[0])) < 24:
                continue
            alone = draw([placement], (width, height), shot.homography)
            found, missing = check_ink(alone, 0)
            assert not missing
            checks += found
    assert len(checks) >= 4
    assert_ink_in_boxes(checks, [], len(checks))


@pytest.mark.slow
def test_random_scenes_every_layout_many_seeds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The coverage check on 120 scenes of all layouts, with mixed decks."""
    decks = [deck(name) for name in FAST_DECKS]
    shots = render_captured(
        monkeypatch, decks, range(1000, 1120), geometry={"mixed_decks_probability": 0.5}
    )
    problems = [
        f"scene {seed}: {problem}"
        for seed, shot in zip(range(1000, 1120), shots, strict=True)
        for problem in check_scene_coverage(shot)
    ]
    assert not problems, problems[:10]


def test_closeup_layout_fills_the_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    """The close-up layout (datasets/closeups.yaml): one card spanning most of a square-on
    frame, stretched or not, its labelled indices against the frame's edges and exactly the
    visible ones."""
    decks = [deck(name) for name in FAST_DECKS]
    shots = render_captured(
        monkeypatch,
        decks,
        range(40),
        sizes=[[224, 224], [640, 480]],
        layouts={"closeup": 1, "single": 0, "table": 0, "hand": 0, "fan": 0, "pits": 0, "pile": 0},
        geometry={"max_tilt_degrees": 0, "min_index_px": 10, "mixed_decks_probability": 0},
    )
    near_edge = labelled = 0
    for seed, shot in enumerate(shots):
        assert len(shot.placements) == 1
        assert not check_scene_coverage(shot), f"scene {seed}"
        height, width = shot.owner_shape
        width_px, height_px = card_size(shot.placements[0])
        outline = np.array(
            [[0, 0], [width_px, 0], [width_px, height_px], [0, height_px]], np.float32
        )
        corners = project(shot.homography @ shot.placements[0].matrix, outline)
        span = corners.max(axis=0) - corners.min(axis=0)
        assert span[0] >= 0.3 * width and span[1] >= 0.65 * height, f"scene {seed}: {span}"
        for label in shot.labels:
            x1, y1, x2, y2 = label.box_xyxy
            labelled += 1
            near_edge += min(x1, y1, width - x2, height - y2) < 0.15 * min(width, height)
    assert labelled >= 40 and near_edge >= 0.8 * labelled


def test_indices_that_show_unlabelled_are_listed_apart() -> None:
    """Indices left unlabelled (under ``min_visible`` on top, or too small) that still show are
    the scene's ``partial``: never also labelled, each at least ``PARTIAL_VISIBLE`` on top; the
    labelled ones all meet ``min_visible``."""
    decks = [deck(name) for name in FAST_DECKS]
    config = parse_config(
        {"card_render_height": HEIGHT, "sizes": [[640, 480]], "backgrounds": {"photo_dirs": []}}
    )
    scenes = [
        scene_module.render_scene(config, decks, np.random.default_rng([config.seed, seed]))
        for seed in range(12)
    ]
    assert sum(len(scene.partial) for scene in scenes) >= 5  # piles and fans cover indices
    for scene in scenes:
        labelled = {(label.card, tuple(np.round(label.quad.ravel(), 3))) for label in scene.labels}
        assert all(label.visible >= config.min_visible for label in scene.labels)
        for label in scene.partial:
            assert (label.card, tuple(np.round(label.quad.ravel(), 3))) not in labelled
            assert label.visible >= scene_module.PARTIAL_VISIBLE
