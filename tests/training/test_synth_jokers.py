"""Jokers' corner marks ("Both jokers, red and black, from the decks that have them";
labels "with one consistent meaning per class").

A joker has no rank and suit; each deck prints its own mark in the joker's corner (a star in a
ring, "JOKER" set down the edge or across the corner, a chequered disc), and each joker's mark
is measured on its render (training/synth/index_box.py). The labelled box must hold that mark:
checked against the drawn ink (as tests/training/test_synth_geometry.py does for the number
cards) and against a table written by inspecting the renders. A joker with no corner mark gets
no label.
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray
from synth_drawing import (
    FAST_DECKS,
    card_size,
    check_ink,
    deck,
    draw,
    labelled_corners,
    needs_all_art,
    needs_art,
    place,
)

from training.synth.assets import JOKER_MARK_HEIGHT, DeckAssets
from training.synth.decks import DECKS, deck_by_name, render_deck
from training.synth.index_box import corner_quads, paper_colour
from training.synth.jokers import MARK_STYLES, erased_marks, restyled_joker

pytestmark = needs_art

JOKER_DECKS = tuple(entry.name for entry in DECKS if entry.jokers)

JOKER_MARKS: dict[str, tuple[str, tuple[float, float, float, float], int]] = {
    # deck: (the mark in the top-left corner, its box as fractions of the card, corners)
    # by inspection of the jokers rendered 480 px tall, each box drawn on its card; the
    # bottom-right corner repeats the mark turned half a turn (all four corners: the same
    # mark also upright in the top-right and bottom-left)
    "anglo": ("'Joker' set down the edge", (0.04, 0.05, 0.13, 0.28), 2),
    "anglo_bitmap": ("'Joker' set down the edge", (0.04, 0.05, 0.13, 0.28), 2),
    "anglo_modern": ("star in a ring, all four corners", (0.06, 0.04, 0.20, 0.13), 4),
    "anglo_modern_4_color": ("star in a ring, all four corners", (0.06, 0.04, 0.20, 0.13), 4),
    "anglo_poker": ("star in a ring", (0.04, 0.03, 0.20, 0.14), 2),
    "atlasnye": ("star in a ring over 'JOKER' set down the edge", (0.04, 0.03, 0.18, 0.54), 2),
    "bellot": ("'JOKER' across the corner", (0.03, 0.02, 0.33, 0.15), 2),
    "gnomangelo": ("star", (0.05, 0.03, 0.26, 0.15), 2),
    "gnomangelo_bitmap": ("'JOKER' across the corner", (0.02, 0.05, 0.33, 0.17), 2),
    "guyenne-classic": ("chequered disc", (0.02, 0.02, 0.31, 0.21), 2),
    "neoclassical": ("star in a ring", (0.05, 0.03, 0.23, 0.16), 2),
    "neoclassical_4_color": ("star in a ring", (0.05, 0.03, 0.23, 0.16), 2),
    "ornamental": ("'JOKER' set down the edge", (0.09, 0.05, 0.22, 0.46), 2),
    "paris": ("chequered disc", (0.02, 0.02, 0.31, 0.21), 2),
    "tango": ("'Joker' set down the edge", (0.09, 0.05, 0.23, 0.68), 2),
    "kde-nicu-white": ("'JOKER' set down the edge", (0.09, 0.05, 0.22, 0.46), 2),
    "simplistic": ("star in a ring", (0.05, 0.03, 0.23, 0.15), 2),
    "plastic": ("four-pointed star in a ring, all four corners", (0.04, 0.03, 0.22, 0.16), 4),
    "orell": ("star in a ring on the picture's frame", (0.07, 0.05, 0.20, 0.12), 2),
    "tigullio": ("star in a ring", (0.09, 0.06, 0.28, 0.18), 2),
}
"""Every joker's corner mark. No deck in use has jokers without one (dondorf's, which have
none and look alike, are left out of the catalogue)."""


def test_joker_table_covers_the_joker_decks() -> None:
    assert set(JOKER_MARKS) == set(JOKER_DECKS)


@pytest.mark.slow
@needs_all_art
@pytest.mark.parametrize("name", JOKER_DECKS)
def test_joker_marks_match_inspection(name: str) -> None:
    """Each joker's measured mark is the one seen on its render: each edge of the box within
    2% of the card of the inspected box, and in the inspected number of corners."""
    _, expected, corners = JOKER_MARKS[name]
    assets = deck(name)
    for code in ("JB", "JR"):
        where = assets.index_place(code)
        assert where is not None, f"{name} {code}: no corner mark measured"
        assert where.corners == corners, f"{name} {code}: {where.corners} corners"
        error = max(abs(got - want) for got, want in zip(where.box, expected, strict=True))
        assert error <= 0.02, f"{name} {code}: box {where.box} is not about {expected}"


def joker_assets(name: str) -> DeckAssets:
    """The deck's jokers rendered ``JOKER_MARK_HEIGHT`` tall (where their marks are measured:
    at 200 px some marks merge with the picture, and no ink check could pick them out)."""
    assets = deck(name)
    paths = render_deck(assets.deck, JOKER_MARK_HEIGHT, [code for code, _ in assets.deck.jokers])
    cards: dict[str, NDArray[np.uint8]] = {}
    for code, path in paths.items():
        image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        assert image is not None and image.shape[2] == 4, path
        cards[code] = np.asarray(image, np.uint8)
    return replace(assets, cards=cards)


@pytest.mark.slow
@needs_all_art
def test_joker_corner_marks() -> None:
    """The product asks for both jokers as cards; their labelled boxes hold their corner marks.

    Each joker is drawn alone, upright, at its render's size: every corner mark is labelled,
    and at least 90% of the mark's ink (blobs near the box that do not run into the picture)
    lies in the labelled box, its centre inside.
    """
    wrong = []
    for name in JOKER_DECKS:
        assets = joker_assets(name)
        for code in ("JB", "JR"):
            width, height = card_size(place(assets, code, (0, 0)))
            size = (width + 80, height + 80)
            drawn = draw([place(assets, code, (size[0] / 2, size[1] / 2))], size)
            checks, missing = check_ink(drawn, 0)
            outside = [c for c in checks if c.share_inside < 0.9 or not c.centroid_inside]
            where = assets.index_place(code)
            corners = 0 if where is None else where.corners
            if missing or outside or len(checks) != corners:
                wrong.append(
                    f"{name} {code}: {len(checks)} of {corners} marks checked, "
                    f"missing {missing}, outside {[c.where for c in outside]}"
                )
    assert not wrong, f"joker marks outside their labelled box: {wrong}"


def test_joker_without_a_corner_mark_gets_no_label() -> None:
    """ "An index that is not there is not labelled": a joker whose corner holds no mark
    (``joker_marks`` None) gets no label, however visible; the other joker keeps its own."""
    assets = deck(FAST_DECKS[0])
    unmarked = replace(assets, joker_marks={**assets.joker_marks, "JB": None})
    drawn = draw([place(unmarked, "JB", (150, 160)), place(unmarked, "JR", (400, 160))], (560, 320))
    assert not [label for label in drawn.labels if label.card == 0]
    assert labelled_corners(drawn) == {(1, "top-left"), (1, "bottom-right")}
    assert unmarked.index_quads("JB") == ()


@pytest.mark.parametrize(
    ("name", "card_height_px", "labelled"),
    [
        # atlasnye's mark (a star over "JOKER" set down the edge) is half the card tall, its
        # number index a fifth: on a 40 px card the mark is 20 px tall, the index would be 8
        ("atlasnye", 40.0, False),
        ("atlasnye", 80.0, True),  # the deck's index would be 16 px: labelled
        # simplistic's star is shorter than its index (a ninth of the card): its own height
        ("simplistic", 80.0, False),  # 9 px
        ("simplistic", 140.0, True),  # 16 px
    ],
)
def test_tall_joker_mark_is_labelled_from_the_decks_index_size(
    name: str, card_height_px: float, labelled: bool
) -> None:
    """min_index_px (12) keeps illegibly small indices unlabelled; a mark taller than the
    deck's index is labelled from the card size at which the deck's indices are, not from a
    card a third that size."""
    if not deck_by_name(name).available:
        pytest.skip(f"card art not installed ({name}): run scripts/install-card-art")
    assets = deck(name)
    drawn = draw([place(assets, "JR", (150, 150), 0.0, card_height_px)], (300, 300))
    assert bool(drawn.labels) is labelled


# -- jokers drawn with other marks (training/synth/jokers.py) ------------------------------------


def _ink_mask(card: NDArray[np.uint8], paper: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Pixels of the card (opaque) at least 60 grey levels from its paper in some channel."""
    far = np.abs(card[:, :, :3].astype(np.float64) - paper).max(axis=2) > 60
    return np.asarray(far & (card[:, :, 3] > 200))


@pytest.mark.parametrize("seed", range(8))
def test_restyled_joker_labels_its_drawn_mark(seed: int) -> None:
    """A restyled joker keeps its picture, loses its own corner marks (no ink left where they
    were, outside the new mark) and gets a drawn mark in its top-left and bottom-right
    corners: the labelled boxes hold that mark's ink (as the decks' own marks are checked
    above), red on the red joker and dark on the black one."""
    assets = joker_assets(FAST_DECKS[0])
    rng = np.random.default_rng(seed)
    for code in ("JB", "JR"):
        restyled = restyled_joker(assets, code, rng)
        assert restyled.cards[code] is not assets.cards[code]
        assert all(restyled.cards[c] is assets.cards[c] for c in assets.cards if c != code)
        card = restyled.cards[code]
        paper = paper_colour(assets.cards[code])
        height, width = card.shape[:2]
        new = restyled.index_place(code)
        old = assets.index_place(code)
        assert new is not None and old is not None and new.corners == 2
        inside_new = np.zeros((height, width), bool)
        for quad in restyled.index_quads(code):
            (x1, y1), (x2, y2) = np.floor(quad.min(axis=0)), np.ceil(quad.max(axis=0))
            inside_new[int(y1) - 1 : int(y2) + 1, int(x1) - 1 : int(x2) + 1] = True
            mark = card[int(y1) : int(y2), int(x1) : int(x2)]
            ink = _ink_mask(mark, paper)
            assert ink.mean() > 0.05, f"{code} seed {seed}: no drawn mark in its box"
            blue, green, red = mark[:, :, :3][ink].astype(np.float64).mean(axis=0)
            if code == "JR":
                assert red > green + 80 and red > blue + 80, f"seed {seed}: JR mark not red"
            else:
                assert max(red, green, blue) < 110, f"seed {seed}: JB mark not dark"
        ink = _ink_mask(card, paper)
        for quad in corner_quads(old.box, width, height, old.corners):
            (x1, y1), (x2, y2) = np.floor(quad.min(axis=0)), np.ceil(quad.max(axis=0))
            zone = (slice(int(y1), int(y2)), slice(int(x1), int(x2)))
            left = ink[zone] & ~inside_new[zone]
            assert left.sum() == 0, f"{code} seed {seed}: the old mark's ink is still there"


def test_restyled_joker_draws_only_inside_its_labelled_boxes() -> None:
    """Against the same card with its marks erased, the drawn marks change no pixel outside
    their two labelled boxes (their antialiased edges included), and some inside each."""
    assets = joker_assets(FAST_DECKS[0])
    for seed in range(16):
        rng = np.random.default_rng(100 + seed)
        for code in ("JB", "JR"):
            restyled = restyled_joker(assets, code, rng)
            erased = erased_marks(assets.cards[code], assets.index_place(code))
            changed = np.abs(restyled.cards[code].astype(int) - erased).max(axis=2) > 0
            boxes = np.zeros_like(changed)
            for quad in restyled.index_quads(code):
                (x1, y1), (x2, y2) = np.floor(quad.min(axis=0)), np.ceil(quad.max(axis=0))
                box = (slice(int(y1), int(y2)), slice(int(x1), int(x2)))
                assert changed[box].any(), f"seed {seed} {code}: nothing drawn in a box"
                boxes[box] = True
            assert not (changed & ~boxes).any(), f"seed {seed} {code}: drawn outside its boxes"


@pytest.mark.parametrize("style", sorted(MARK_STYLES))
def test_every_mark_style_draws_ink(style: str) -> None:
    """Each kind of mark draws a patch with ink in the asked colour and nothing else."""
    ink, paper = (30, 30, 200), (250, 250, 250)
    patch = MARK_STYLES[style].draw(np.random.default_rng(3), 96, ink, paper)
    assert patch.ndim == 3 and patch.shape[2] == 4 and patch.dtype == np.uint8
    solid = patch[:, :, 3] == 255
    assert solid.mean() > 0.05, f"{style}: almost nothing drawn"
    colours = patch[:, :, :3][solid].astype(int)
    is_ink = np.abs(colours - ink).max(axis=1) <= 2
    is_paper = np.abs(colours - paper).max(axis=1) <= 2  # the star cut out of a disc
    # (the edge of a star cut out of a disc blends the two)
    assert (is_ink | is_paper).mean() > 0.9, f"{style}: colours other than its ink and paper"
    assert is_ink.mean() > 0.5
    edge = (patch[:, :, 3] > 0) & ~solid
    assert (np.abs(patch[:, :, :3][edge].astype(int) - ink).max(axis=1) <= 2).all(), (
        f"{style}: antialiased edges darkened"
    )
