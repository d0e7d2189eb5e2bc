"""Procedural corner indices for the index classifier: many typefaces and pip shapes.

The deck renders teach the classifier twenty designs; a deck it never saw prints its ranks in
another typeface and its pips in another shape (round-lobed clubs, narrow hearts). These crops
widen what it has seen: a rank set in one of the installed fonts (any whose digits and Latin
capitals render), a pip either taken from a font's suit symbol or drawn from a shape with
random proportions, in a card's corner on tinted paper, turned, shrunk to the sizes indices
have in photos and cut out exactly as :func:`vision.crops.crop_index` cuts a detected index.

Training only (it needs Pillow for the fonts): ``glyph_crops(count, seed)`` gives crops and
labels in the format of :mod:`training.photo_crops`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES
from training.classifier import jitter_box
from training.synth.fonts import FONT_DIRS, SUIT_SYMBOLS, GlyphFonts, find_fonts, load_font
from vision.crops import CROP_SIZE, crop_index
from vision.index_letters import ENGLISH, INDEX_LETTERS, shared_letters, unambiguous_letters

__all__ = [
    "FONT_DIRS",
    "LOCAL_RANKS",
    "GlyphFonts",
    "draw_pip",
    "find_fonts",
    "glyph_crops",
    "local_index_crops",
    "local_letters",
    "render_index",
    "renders",
    "unambiguous_local_ranks",
]

LOCAL_RANKS: dict[str, dict[str, str]] = {
    name: {rank: letter for rank, letter in letters.items() if letter != rank}
    for name, letters in INDEX_LETTERS.items()
    if name != ENGLISH
}
"""The letters of decks whose indices are not English, by the English rank they stand for
(:data:`vision.index_letters.INDEX_LETTERS`, less the letters that are the English ones)."""


def unambiguous_local_ranks() -> dict[str, str]:
    """Each local rank letter that stands for one English rank in every deck of
    :data:`LOCAL_RANKS`, with that rank: ``V`` (a French jack, a Dutch queen) is left out."""
    english = set(INDEX_LETTERS[ENGLISH].values())
    return {letter: rank for letter, rank in unambiguous_letters().items() if letter not in english}


def local_letters() -> dict[str, tuple[str, ...]]:
    """Every local rank letter with the ranks a classifier trained on
    :func:`local_index_crops` reads it as: one for most, both of ``V`` (J and Q)."""
    shared = shared_letters()
    return {**{letter: (rank,) for letter, rank in unambiguous_local_ranks().items()}, **shared}


_BASE = 64
"""Rank height, in pixels, at which an index is drawn before it is shrunk."""


def _text_mask(font_path: Path, text: str, height: int) -> NDArray[np.uint8]:
    """The ink of ``text`` in the font, cropped to its bounding box and scaled to ``height``."""
    from PIL import Image, ImageDraw

    font = load_font(font_path, 96)
    left, top, right, bottom = font.getbbox(text)
    image = Image.new("L", (right - left + 8, bottom - top + 8), 0)
    ImageDraw.Draw(image).text((4 - left, 4 - top), text, fill=255, font=font)
    mask = _tight(np.asarray(image, np.uint8))
    scale = height / max(1, mask.shape[0])
    width = max(1, round(mask.shape[1] * scale))
    return cast(NDArray[np.uint8], cv2.resize(mask, (width, height), interpolation=cv2.INTER_AREA))


@functools.cache
def renders(font_path: Path, text: str) -> bool:
    """Whether the font has a glyph of its own for every character of ``text`` (not the
    missing-glyph box it draws for a character it lacks)."""
    missing = _text_mask(font_path, "\U000f0000", 48)
    for character in text:
        mask = _text_mask(font_path, character, 48)
        if mask.shape == missing.shape and np.array_equal(mask, missing):
            return False
        if int((mask > 24).sum()) == 0:
            return False
    return True


def _tight(mask: NDArray[np.uint8]) -> NDArray[np.uint8]:
    rows, cols = np.nonzero(mask > 24)
    if len(rows) == 0:
        return mask
    return mask[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]


def draw_pip(suit: str, height: int, rng: np.random.Generator) -> NDArray[np.uint8]:
    """A filled suit pip of random proportions, ``height`` pixels tall (anti-aliased mask).

    Hearts and spades vary their lobes and point, clubs the size and spread of their three
    leaves and the stem, diamonds their width and how far their sides bow in.
    """
    big = 4 * height
    width = round(big * rng.uniform(0.75, 1.0))
    canvas = np.zeros((big, width), np.uint8)
    w, h = float(width), float(big)

    def heart(points_up: bool) -> None:
        lobe = rng.uniform(0.24, 0.29) * w
        spread = rng.uniform(0.2, 0.27) * w
        lobe_y = lobe * rng.uniform(0.95, 1.15)
        tip = rng.uniform(0.85, 1.0) * h
        layer = np.zeros_like(canvas)
        for side in (-1, 1):
            cv2.circle(layer, (round(w / 2 + side * spread), round(lobe_y)), round(lobe), 255, -1)
        side_y = lobe_y + lobe * rng.uniform(0.2, 0.6)
        polygon = np.array(
            [
                [w / 2 - spread - lobe * 0.97, side_y],
                [w / 2 + spread + lobe * 0.97, side_y],
                [w / 2, tip],
            ]
        )
        cv2.fillPoly(layer, [np.round(polygon).astype(np.int32)], 255)
        canvas[:] = np.maximum(canvas, layer[::-1] if points_up else layer)

    def stem(top: float) -> None:
        half = rng.uniform(0.05, 0.2) * w
        polygon = np.array(
            [
                [w / 2 - 0.03 * w, top],
                [w / 2 + 0.03 * w, top],
                [w / 2 + half, h - 1],
                [w / 2 - half, h - 1],
            ]
        )
        cv2.fillPoly(canvas, [np.round(polygon).astype(np.int32)], 255)

    if suit == "H":
        heart(points_up=False)
    elif suit == "S":
        heart(points_up=True)
        # the spade's body stops short of the bottom to leave room for the stem
        body = canvas.copy()
        canvas[:] = 0
        shrink = rng.uniform(0.72, 0.85)
        resized = cv2.resize(body, (width, round(big * shrink)), interpolation=cv2.INTER_AREA)
        canvas[: resized.shape[0]] = resized
        stem(h * shrink * 0.6)
    elif suit == "C":
        leaf = rng.uniform(0.2, 0.28) * w
        spread = leaf * rng.uniform(0.9, 1.25)
        top_y = leaf * rng.uniform(1.0, 1.1)
        side_y = top_y + leaf * rng.uniform(1.0, 1.5)
        for centre in ((w / 2, top_y), (w / 2 - spread, side_y), (w / 2 + spread, side_y)):
            cv2.circle(canvas, (round(centre[0]), round(centre[1])), round(leaf), 255, -1)
        cv2.circle(canvas, (round(w / 2), round((top_y + side_y) / 2)), round(leaf * 0.8), 255, -1)
        stem(side_y)
    elif suit == "D":
        inset = rng.uniform(0.0, 0.2) * w
        bow = rng.uniform(-0.02, 0.12)
        corners = [(w / 2, 0.0), (w - inset, h / 2), (w / 2, h - 1), (inset, h / 2)]
        outline: list[tuple[float, float]] = []
        middle = np.array([w / 2, h / 2])
        for (x0, y0), (x1, y1) in zip(corners, corners[1:] + corners[:1], strict=True):
            for t in np.linspace(0, 1, 12, endpoint=False):
                point = np.array([x0 + (x1 - x0) * t, y0 + (y1 - y0) * t])
                # pull the side's middle towards the centre (bow > 0) or out (bow < 0)
                point = point + (middle - point) * bow * 4 * t * (1 - t)
                outline.append((float(point[0]), float(point[1])))
        cv2.fillPoly(canvas, [np.round(np.array(outline)).astype(np.int32)], 255)
    else:
        raise ValueError(f"unknown suit {suit!r}: expected one of S, H, D, C")
    small = cv2.resize(canvas, (max(1, width // 4), height), interpolation=cv2.INTER_AREA)
    return _tight(cast(NDArray[np.uint8], small))


def _ink_colour(suit: str, rng: np.random.Generator, four_colour: bool) -> NDArray[np.float64]:
    """A BGR ink colour for the suit: red or near-black, green clubs and blue diamonds in a
    four-colour deck."""
    if four_colour and suit == "C":
        return np.array([rng.uniform(0, 80), rng.uniform(100, 170), rng.uniform(0, 60)])
    if four_colour and suit == "D":
        return np.array([rng.uniform(140, 230), rng.uniform(0, 100), rng.uniform(0, 60)])
    if suit in "HD":
        return np.array([rng.uniform(0, 70), rng.uniform(0, 60), rng.uniform(160, 255)])
    grey = rng.uniform(0, 60)
    return np.array([grey + rng.uniform(0, 25), grey, grey])


def _paste(
    canvas: NDArray[np.float64], mask: NDArray[np.uint8], x: int, y: int, colour: NDArray[Any]
) -> tuple[int, int, int, int]:
    """Ink ``mask`` onto ``canvas`` at (x, y) in ``colour``; returns the pasted box."""
    h, w = mask.shape
    alpha = mask[..., None].astype(np.float64) / 255.0
    region = canvas[y : y + h, x : x + w]
    canvas[y : y + h, x : x + w] = region * (1 - alpha) + colour * alpha
    return x, y, x + w, y + h


def render_index(
    code: str, fonts: GlyphFonts, rng: np.random.Generator, rank_text: str | None = None
) -> tuple[NDArray[np.uint8], NDArray[np.float64]]:
    """A card's top-left corner with the index of ``code`` (one of the 52), drawn large
    (rank about 64 px tall), turned by a random angle: the BGR image and the index's box.

    The rank is set in one of ``fonts.rank_fonts`` (squeezed or widened, sometimes emboldened);
    the pip, under the rank or beside it, comes from a suit font or :func:`draw_pip`. Paper,
    the table beyond the card's rounded edge, a frame line or a big pip of the face near the
    index vary too. ``rank_text`` prints another rank letter than the code's (a local deck's
    ``R`` for a king, see :data:`LOCAL_RANKS`); the rank fonts must render it.
    """
    rank, suit = code[:-1], code[-1]
    if suit not in SUIT_SYMBOLS or not rank:
        raise ValueError(f"render_index draws the 52 cards, not {code!r}")
    fonts_for_rank = fonts.rank_fonts
    if rank_text is not None:
        fonts_for_rank = tuple(font for font in fonts.rank_fonts if renders(font, rank_text))
        if not fonts_for_rank:
            raise ValueError(f"no rank font renders {rank_text!r}")
        rank = rank_text
    size = 6 * _BASE
    table = rng.uniform(0, 255, 3)
    canvas = np.empty((size, size, 3), np.float64)
    canvas[:] = table
    paper = rng.uniform(215, 255) + rng.uniform(-12, 12, 3)
    if rng.random() < 0.1:
        paper = rng.uniform(150, 230, 3)
    corner = round(rng.uniform(1.4, 2.0) * _BASE)
    radius = round(rng.uniform(0.0, 0.6) * _BASE)
    card = np.zeros((size, size), np.uint8)
    cv2.rectangle(card, (corner + radius, corner), (size, size), 255, -1)
    cv2.rectangle(card, (corner, corner + radius), (size, size), 255, -1)
    cv2.circle(card, (corner + radius, corner + radius), radius, 255, -1)
    _paste(canvas, card, 0, 0, paper)

    ink = _ink_colour(suit, rng, four_colour=rng.random() < 0.12)
    rank_height = round(_BASE * rng.uniform(0.85, 1.1))
    glyph = _text_mask(fonts_for_rank[rng.integers(len(fonts_for_rank))], rank, rank_height)
    squeeze = rng.uniform(0.7, 1.15) * (rng.uniform(0.6, 0.9) if rank == "10" else 1.0)
    glyph = cast(
        NDArray[np.uint8],
        cv2.resize(glyph, (max(1, round(glyph.shape[1] * squeeze)), rank_height)),
    )
    if rng.random() < 0.2:  # a heavier weight
        glyph = cast(
            NDArray[np.uint8],
            cv2.dilate(glyph, np.ones((3, 3), np.uint8), iterations=int(rng.integers(1, 3))),
        )
    pip_height = round(rank_height * rng.uniform(0.5, 0.9))
    if fonts.suit_fonts and rng.random() < 0.5:
        font = fonts.suit_fonts[rng.integers(len(fonts.suit_fonts))]
        pip = _text_mask(font, SUIT_SYMBOLS[suit], pip_height)
    else:
        pip = draw_pip(suit, pip_height, rng)

    x = corner + round(rng.uniform(0.1, 0.5) * _BASE)
    y = corner + round(rng.uniform(0.1, 0.45) * _BASE)
    boxes = [_paste(canvas, glyph, x, y, ink)]
    gap = round(rng.uniform(0.04, 0.3) * _BASE)
    if rng.random() < 0.85:  # pip under the rank, centred on it or flush left
        centred = x + (glyph.shape[1] - pip.shape[1]) // 2
        pip_x = centred if rng.random() < 0.75 else x
        pip_x += round(rng.normal(0, 0.05) * _BASE)
        boxes.append(_paste(canvas, pip, max(0, pip_x), y + rank_height + gap, ink))
    else:  # beside it
        boxes.append(_paste(canvas, pip, x + glyph.shape[1] + gap, y, ink))
    box = np.array(
        [
            min(b[0] for b in boxes),
            min(b[1] for b in boxes),
            max(b[2] for b in boxes),
            max(b[3] for b in boxes),
        ],
        np.float64,
    )
    _face_clutter(canvas, box, suit, ink, rng)
    return _turn(canvas, box, rng)


def _face_clutter(
    canvas: NDArray[np.float64],
    box: NDArray[np.float64],
    suit: str,
    ink: NDArray[np.float64],
    rng: np.random.Generator,
) -> None:
    """What lies beside an index on a real face: a court card's frame line, a big pip."""
    right, bottom = int(box[2]), int(box[3])
    if rng.random() < 0.25:
        left = right + round(rng.uniform(0.1, 0.6) * _BASE)
        top = int(box[1]) + round(rng.uniform(-0.2, 0.5) * _BASE)
        colour = ink if rng.random() < 0.5 else rng.uniform(0, 120, 3)
        cv2.rectangle(
            canvas,
            (left, top),
            (canvas.shape[1] + 10, canvas.shape[0] + 10),
            colour.tolist(),
            max(1, round(rng.uniform(0.03, 0.1) * _BASE)),
        )
    if rng.random() < 0.3:
        big = draw_pip(suit, round(rng.uniform(1.2, 2.2) * _BASE), rng)
        x = right + round(rng.uniform(0.2, 1.0) * _BASE)
        y = bottom + round(rng.uniform(-0.5, 0.8) * _BASE)
        h = min(big.shape[0], canvas.shape[0] - y)
        w = min(big.shape[1], canvas.shape[1] - x)
        if h > 0 and w > 0:
            _paste(canvas, np.ascontiguousarray(big[:h, :w]), x, y, ink)


def _turn(
    canvas: NDArray[np.float64], box: NDArray[np.float64], rng: np.random.Generator
) -> tuple[NDArray[np.uint8], NDArray[np.float64]]:
    """Turn the canvas about the index's centre (mostly slightly, up to 45 degrees; the
    training batches add quarter turns); the box becomes the turned box's bounding box."""
    angle = rng.normal(0, 8) if rng.random() < 0.6 else rng.uniform(-45, 45)
    centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
    matrix = cv2.getRotationMatrix2D(centre, float(angle), 1.0)
    turned = cv2.warpAffine(
        np.clip(canvas, 0, 255).astype(np.uint8),
        matrix,
        (canvas.shape[1], canvas.shape[0]),
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    )
    corners = np.array(
        [[box[0], box[1], 1], [box[2], box[1], 1], [box[2], box[3], 1], [box[0], box[3], 1]]
    )
    moved = corners @ matrix.T
    out_box = np.array([*moved.min(axis=0), *moved.max(axis=0)], np.float64)
    return cast(NDArray[np.uint8], turned), out_box


def _shrink_and_cut(
    image: NDArray[np.uint8], box: NDArray[np.float64], rng: np.random.Generator
) -> NDArray[np.uint8]:
    """The index shrunk to a photo's size (longer side 10 to 70 px, most under 40), JPEG'd
    now and then, and cut with a jittered box as :func:`vision.crops.crop_index` cuts."""
    target = float(np.exp(rng.uniform(np.log(10), np.log(70))))
    scale = target / max(box[2] - box[0], box[3] - box[1])
    if scale < 1:
        image = cast(
            NDArray[np.uint8],
            cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA),
        )
        box = box * scale
    if rng.random() < 0.5:
        quality = int(rng.integers(40, 95))
        ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if ok:
            image = cast(NDArray[np.uint8], cv2.imdecode(encoded, cv2.IMREAD_COLOR))
    return crop_index(image, jitter_box(rng, box))


def glyph_crops(
    count: int,
    seed: int,
    fonts: GlyphFonts | None = None,
    codes: Sequence[str] | None = None,
) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """``count`` procedural index crops (N, 32, 32, 3) BGR and their class ids, the 52 cards
    in turn (jokers print no rank and pip; the scenes and photos teach them)."""
    fonts = fonts or find_fonts()
    if not fonts.rank_fonts:
        raise RuntimeError(
            "no font renders the ranks: install one (Debian: fonts-dejavu-core) or pass fonts"
        )
    codes = tuple(codes or (code for code in CARD_CLASSES if code[-1] in SUIT_SYMBOLS))
    class_of = {code: i for i, code in enumerate(CARD_CLASSES)}
    rng = np.random.default_rng(seed)
    crops = np.empty((count, CROP_SIZE, CROP_SIZE, 3), np.uint8)
    labels = np.empty(count, np.int64)
    for i in range(count):
        code = codes[i % len(codes)]
        image, box = render_index(code, fonts, rng)
        crops[i] = _shrink_and_cut(image, box, rng)
        labels[i] = class_of[code]
    return crops, labels


def local_index_crops(
    count: int, seed: int, fonts: GlyphFonts | None = None
) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """``count`` procedural index crops of local decks' letters (:func:`local_letters`, each
    with the four suits, in turn), labelled with the card they stand for: a French ``R`` of
    hearts is ``KH``. A letter of several ranks is labelled with each of them in turn (a ``V``
    of hearts as ``JH``, then ``QH``), so that the classifier reads it as either, equally
    (:mod:`vision.index_letters`). Letters no installed rank font renders are left out."""
    fonts = fonts or find_fonts()
    letters = sorted(
        (letter, ranks)
        for letter, ranks in local_letters().items()
        if any(renders(font, letter) for font in fonts.rank_fonts)
    )
    if not letters:
        raise RuntimeError("no rank font renders the local index letters")
    jobs = [(letter, rank + suit) for letter, ranks in letters for suit in "SHDC" for rank in ranks]
    class_of = {code: i for i, code in enumerate(CARD_CLASSES)}
    rng = np.random.default_rng(seed)
    crops = np.empty((count, CROP_SIZE, CROP_SIZE, 3), np.uint8)
    labels = np.empty(count, np.int64)
    for i in range(count):
        letter, code = jobs[i % len(jobs)]
        image, box = render_index(code, fonts, rng, rank_text=letter)
        crops[i] = _shrink_and_cut(image, box, rng)
        labels[i] = class_of[code]
    return crops, labels
