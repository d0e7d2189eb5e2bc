"""Things on a casino table that are not cards' faces: chips (single or stacked), card backs, a
shoe, a discard tray, a chip rack.

Each is drawn as a BGRA picture (:class:`Sprite`) that lies on the table plane and goes through
the scene's camera as a card does; a chip stack also rises from the plane
(:func:`draw_stack`). None of them is labelled. Chips carry what fools a card reader: a value
(1, 2, 5, 10, 25...) and often a suit symbol printed on a light inlay, the size of a card's
corner index.

Every random draw takes the ``numpy.random.Generator`` passed in.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from training.synth.fonts import SUIT_SYMBOLS, find_fonts, load_font

__all__ = [
    "CHIP_COLOURS_BGR",
    "CHIP_VALUES",
    "Sprite",
    "card_back",
    "chip_face",
    "chip_rack",
    "discard_tray",
    "draw_sprite",
    "draw_stack",
    "glyph_fonts",
    "placed",
    "project",
    "shoe",
    "stamp",
    "suit_mask",
    "text_mask",
]

CHIP_COLOURS_BGR: tuple[tuple[int, int, int], ...] = (
    (232, 232, 228),  # white
    (40, 40, 200),  # red
    (60, 140, 40),  # green
    (35, 35, 35),  # black
    (170, 80, 30),  # blue
    (130, 40, 110),  # purple
    (40, 200, 230),  # yellow
    (30, 120, 240),  # orange
    (180, 130, 240),  # pink
    (140, 140, 140),  # grey
)
"""Body colours of casino chips (BGR)."""

CHIP_VALUES = ("1", "2", "5", "10", "20", "25", "50", "100", "500", "1K", "5K", "A", "K")
"""What a chip's inlay prints: values, and now and then a letter of a card's rank."""

_OCCLUDED = -2
"""The owner value of a pixel covered by something that is not a card (see the scene)."""


@dataclass(frozen=True)
class Sprite:
    """A picture lying on the table plane: ``image`` (BGRA) and ``matrix`` (3x3, its pixels to
    plane pixels). It is drawn after the first ``after`` cards of the scene, so later cards lie
    on it; ``covers`` says whether it hides what lies under it (a chip, a card back), or is
    print on the cloth that nothing under it could show through anyway."""

    image: NDArray[np.uint8]
    matrix: NDArray[np.float64]
    after: int
    covers: bool = True


def placed(
    image: NDArray[np.uint8], center: tuple[float, float], angle: float, scale: float = 1.0
) -> NDArray[np.float64]:
    """The matrix that puts ``image``'s centre at ``center`` on the plane, turned by ``angle``
    radians and scaled by ``scale``."""
    h, w = image.shape[:2]
    cos, sin = math.cos(angle) * scale, math.sin(angle) * scale
    return np.array(
        [
            [cos, -sin, center[0] - cos * w / 2 + sin * h / 2],
            [sin, cos, center[1] - sin * w / 2 - cos * h / 2],
            [0.0, 0.0, 1.0],
        ]
    )


def project(matrix: NDArray[np.float64], points: NDArray[Any]) -> NDArray[np.float32]:
    """Points (N, 2) mapped by a 3x3 homography."""
    mapped = cv2.perspectiveTransform(points.reshape(-1, 1, 2).astype(np.float64), matrix)
    return mapped.reshape(-1, 2).astype(np.float32)


def draw_sprite(
    canvas: NDArray[np.float32],
    owner: NDArray[np.int16],
    image: NDArray[np.uint8],
    matrix: NDArray[np.float64],
    covers: bool,
) -> None:
    """Blend a BGRA picture into the BGR float ``canvas`` through ``matrix`` (its pixels to
    image pixels); where it covers (``covers``, alpha over 0.5) no card shows any more."""
    h, w = image.shape[:2]
    corners = project(matrix, np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32))
    height, width = canvas.shape[:2]
    x0, y0 = np.floor(corners.min(axis=0)).astype(int) - 1
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 1
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)
    if x0 >= x1 or y0 >= y1:
        return
    shift = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64)
    patch = cv2.warpPerspective(
        image,
        shift @ matrix,
        (x1 - x0, y1 - y0),
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=(0, 0, 0, 0),
    )
    alpha = patch[:, :, 3].astype(np.float32) / 255.0
    region = canvas[y0:y1, x0:x1]
    region *= (1.0 - alpha)[..., None]
    region += patch[:, :, :3].astype(np.float32) * alpha[..., None]
    if covers:
        owner[y0:y1, x0:x1][alpha > 0.5] = _OCCLUDED


def _rgba(height: int, width: int) -> NDArray[np.uint8]:
    return np.zeros((height, width, 4), np.uint8)


@functools.lru_cache(maxsize=1)
def glyph_fonts() -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """The installed fonts for ranks and for suit symbols (looked for once per process)."""
    found = find_fonts()
    return found.rank_fonts, found.suit_fonts


def text_mask(font: Path, text: str, size: int) -> NDArray[np.uint8]:
    """``text`` set in ``font`` at ``size`` px, as a tight 0-255 mask."""
    from PIL import Image, ImageDraw

    face = load_font(font, max(4, size))
    left, top, right, bottom = face.getbbox(text)
    picture = Image.new("L", (max(1, right - left + 2), max(1, bottom - top + 2)), 0)
    ImageDraw.Draw(picture).text((1 - left, 1 - top), text, font=face, fill=255)
    return np.asarray(picture, np.uint8).copy()


def stamp(
    image: NDArray[np.uint8],
    mask: NDArray[np.uint8],
    center: tuple[float, float],
    colour: tuple[float, float, float],
    angle_degrees: float = 0.0,
    opacity: float = 1.0,
) -> None:
    """Paint ``colour`` through ``mask`` (turned by ``angle_degrees``) centred at ``center`` of
    the BGRA ``image``, in place; the image's alpha grows to cover what is painted."""
    if angle_degrees:
        h, w = mask.shape
        turn = cv2.getRotationMatrix2D((w / 2, h / 2), angle_degrees, 1.0)
        side = math.ceil(math.hypot(w, h))
        turn[:, 2] += (side - w) / 2, (side - h) / 2
        mask = np.asarray(
            cv2.warpAffine(mask, turn, (side, side), flags=cv2.INTER_LINEAR), np.uint8
        )
    h, w = mask.shape
    x0, y0 = round(center[0] - w / 2), round(center[1] - h / 2)
    ih, iw = image.shape[:2]
    cx0, cy0, cx1, cy1 = max(0, x0), max(0, y0), min(iw, x0 + w), min(ih, y0 + h)
    if cx0 >= cx1 or cy0 >= cy1:
        return
    weight = mask[cy0 - y0 : cy1 - y0, cx0 - x0 : cx1 - x0].astype(np.float32) / 255.0 * opacity
    region = image[cy0:cy1, cx0:cx1].astype(np.float32)
    paint = np.array(colour, np.float32)
    region[..., :3] = region[..., :3] * (1 - weight[..., None]) + paint * weight[..., None]
    region[..., 3] = np.maximum(region[..., 3], weight * 255)
    image[cy0:cy1, cx0:cx1] = np.clip(region, 0, 255).astype(np.uint8)


def _ink(rng: np.random.Generator, suit: str | None = None) -> tuple[float, float, float]:
    """Dark or red print."""
    red = suit in ("H", "D") if suit else rng.random() < 0.4
    if red:
        return (
            float(rng.uniform(10, 60)),
            float(rng.uniform(10, 50)),
            float(rng.uniform(150, 230)),
        )
    grey = float(rng.uniform(0, 60))
    return (grey, grey, grey)


def chip_face(rng: np.random.Generator, diameter: int) -> NDArray[np.uint8]:
    """A casino chip seen from above, ``diameter`` px across (BGRA, transparent around it).

    A body colour, edge inserts round the rim, a ring, and an inlay (mostly light) printed
    with a value, a suit symbol or both, as an index prints a rank over its pip."""
    diameter = max(8, int(diameter))
    rank_fonts, suit_fonts = glyph_fonts()
    image = _rgba(diameter, diameter)
    radius = diameter / 2 - 0.5
    center = (diameter / 2 - 0.5, diameter / 2 - 0.5)
    body = np.array(CHIP_COLOURS_BGR[int(rng.integers(len(CHIP_COLOURS_BGR)))], np.float64)
    body *= rng.uniform(0.85, 1.1)
    scale = 8  # supersampled drawing, for smooth edges
    big = np.zeros((diameter * scale, diameter * scale, 3), np.float32)
    alpha = np.zeros((diameter * scale, diameter * scale), np.float32)
    middle = (int(center[0] * scale + scale / 2), int(center[1] * scale + scale / 2))
    cv2.circle(big, middle, int(radius * scale), body.tolist(), -1)
    cv2.circle(alpha, middle, int(radius * scale), 255.0, -1)
    inserts = int(rng.choice([0, 4, 6, 6, 8, 8, 12]))
    insert_colour = (
        CHIP_COLOURS_BGR[0]
        if rng.random() < 0.6
        else CHIP_COLOURS_BGR[int(rng.integers(len(CHIP_COLOURS_BGR)))]
    )
    start = rng.uniform(0, 360)
    span = rng.uniform(8, 22)
    for k in range(inserts):
        angle = start + k * 360 / inserts
        cv2.ellipse(
            big,
            middle,
            (int(radius * scale), int(radius * scale)),
            0,
            angle - span / 2,
            angle + span / 2,
            insert_colour,
            -1,
        )
    inlay_share = rng.uniform(0.5, 0.72)
    inlay_radius = int(radius * inlay_share * scale)
    if rng.random() < 0.7:
        ring = tuple(float(v) for v in rng.uniform(150, 255, 3))
        cv2.circle(big, middle, int(inlay_radius * 1.08), ring, max(1, scale // 2))
    choice = rng.random()
    if choice < 0.6:
        inlay = tuple(float(v) for v in rng.uniform(205, 250, 3))  # white or cream
    elif choice < 0.8:
        inlay = tuple(float(v) for v in np.clip(body * 0.5 + 130, 0, 255))
    else:
        inlay = tuple(float(v) for v in body)
    cv2.circle(big, middle, inlay_radius, inlay, -1)
    small = cv2.resize(big, (diameter, diameter), interpolation=cv2.INTER_AREA)
    image[..., :3] = np.clip(small, 0, 255).astype(np.uint8)
    image[..., 3] = cv2.resize(alpha, (diameter, diameter), interpolation=cv2.INTER_AREA).astype(
        np.uint8
    )
    suit = "SHDC"[int(rng.integers(4))]
    dark = body * 0.6
    ink = (
        _ink(rng, suit) if rng.random() < 0.7 else (float(dark[0]), float(dark[1]), float(dark[2]))
    )
    inlay_px = inlay_radius / scale * 2
    angle = float(rng.uniform(-180, 180))
    kind = rng.random()
    value = CHIP_VALUES[int(rng.integers(len(CHIP_VALUES)))]
    if rank_fonts and kind < 0.45:
        # a value over a suit symbol: the shape of a card's corner index
        value_mask = text_mask(
            rank_fonts[int(rng.integers(len(rank_fonts)))], value, int(inlay_px * 0.42)
        )
        pip = suit_mask(rng, suit, suit_fonts, int(inlay_px * 0.3))
        stacked = _stack_masks(value_mask, pip)
        stamp(image, stacked, center, ink, angle)
    elif rank_fonts and kind < 0.8:
        value_mask = text_mask(
            rank_fonts[int(rng.integers(len(rank_fonts)))], value, int(inlay_px * 0.5)
        )
        stamp(image, value_mask, center, ink, angle)
    else:
        pip = suit_mask(rng, suit, suit_fonts, int(inlay_px * 0.55))
        stamp(image, pip, center, ink, angle)
    return image


def suit_mask(
    rng: np.random.Generator, suit: str, fonts: tuple[Path, ...], size: int
) -> NDArray[np.uint8]:
    """A suit symbol ``size`` px tall: from a font that prints it, else a drawn diamond."""
    if fonts:
        return text_mask(fonts[int(rng.integers(len(fonts)))], SUIT_SYMBOLS[suit], size)
    size = max(3, size)
    mask = np.zeros((size, size), np.uint8)
    half = size / 2
    points = np.array([[half, 0], [size - 1, half], [half, size - 1], [0, half]], np.int32)
    cv2.fillPoly(mask, [points], 255)
    return mask


def _stack_masks(top: NDArray[np.uint8], bottom: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """Two masks one over the other, centred, with a small gap."""
    gap = max(1, top.shape[0] // 10)
    width = max(top.shape[1], bottom.shape[1])
    out = np.zeros((top.shape[0] + gap + bottom.shape[0], width), np.uint8)
    left = (width - top.shape[1]) // 2
    out[: top.shape[0], left : left + top.shape[1]] = top
    left = (width - bottom.shape[1]) // 2
    out[top.shape[0] + gap :, left : left + bottom.shape[1]] = bottom
    return out


def draw_stack(
    canvas: NDArray[np.float32],
    owner: NDArray[np.int16],
    homography: NDArray[np.float64],
    center: tuple[float, float],
    radius: float,
    count: int,
    rng: np.random.Generator,
) -> None:
    """A stack of ``count`` chips standing on the plane at ``center`` (plane pixels), seen
    through the camera: the top chip's face, and under it, where the camera looks from the
    side, the chips' rims with their stripes. It hides what it stands on."""
    circle = np.array(
        [
            [center[0] + radius * math.cos(t), center[1] + radius * math.sin(t)]
            for t in np.linspace(0, 2 * math.pi, 36, endpoint=False)
        ]
    )
    outline = project(homography, circle)
    middle = project(homography, np.array([center]))[0]
    span = outline - middle
    major = float(np.linalg.norm(span, axis=1).max())
    minor = float(np.linalg.norm(span, axis=1).min())
    if major < 2:
        return
    # how far the camera looks from the side: a circle seen flat (minor == major) hides the rims
    side = math.sqrt(max(0.0, 1.0 - (minor / major) ** 2))
    along = span[int(np.linalg.norm(span, axis=1).argmin())]
    up = -along / max(float(np.linalg.norm(along)), 1e-6)
    if up[1] > 0:  # the rims show below the top face on the picture
        up = -up
    thickness = 0.17 * major * side  # a chip is about a twelfth as thick as it is wide
    height, width = canvas.shape[:2]
    colours = [
        np.array(CHIP_COLOURS_BGR[int(rng.integers(len(CHIP_COLOURS_BGR)))], np.float32)
        for _ in range(3)
    ]
    uniform = rng.random() < 0.6
    for k in range(count):
        colour = colours[0] if uniform else colours[int(rng.integers(len(colours)))]
        offset = up * thickness * k
        polygon = np.round(outline + offset).astype(np.int32)
        x0, y0 = np.maximum(polygon.min(axis=0), 0)
        x1, y1 = np.minimum(polygon.max(axis=0) + 1, (width, height))
        if x0 >= x1 or y0 >= y1:
            continue
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillPoly(mask, [polygon - (x0, y0)], 1)
        shade = 0.75 + 0.25 * (k % 2)
        inside = mask > 0
        canvas[y0:y1, x0:x1][inside] = colour * shade
        owner[y0:y1, x0:x1][inside] = _OCCLUDED
        # rim stripes: white inserts on the chip's near half
        for t in np.linspace(0, math.pi, 5):
            stripe = middle + offset + span[int(t / (2 * math.pi) * len(span)) % len(span)]
            cv2.circle(
                canvas,
                (int(stripe[0]), int(stripe[1])),
                max(1, int(major * 0.08)),
                (225, 225, 225),
                -1,
            )
    face = chip_face(rng, round(2 * major))
    lift = np.array(
        [[1, 0, up[0] * thickness * count], [0, 1, up[1] * thickness * count], [0, 0, 1]]
    )
    scale = np.diag([radius * 2 / face.shape[1], radius * 2 / face.shape[0], 1.0])
    corner = np.array([[1, 0, center[0] - radius], [0, 1, center[1] - radius], [0, 0, 1]])
    draw_sprite(canvas, owner, face, lift @ homography @ corner @ scale, covers=True)


def card_back(rng: np.random.Generator, width: int, height: int) -> NDArray[np.uint8]:
    """A card lying face down (BGRA, rounded corners): a white border (mostly) round a pattern
    of lines, a lattice or dots in one colour, with no index."""
    width, height = max(8, int(width)), max(8, int(height))
    colour = np.array(
        [(40, 40, 170), (150, 70, 30), (30, 30, 30), (50, 110, 40), (110, 40, 100)][
            int(rng.integers(5))
        ],
        np.float64,
    ) * rng.uniform(0.8, 1.2)
    paper = rng.uniform(220, 250)
    image = _rgba(height, width)
    image[..., :3] = int(paper)
    radius = max(1, int(min(width, height) * 0.06))
    alpha = np.zeros((height, width), np.uint8)
    cv2.rectangle(alpha, (radius, 0), (width - 1 - radius, height - 1), 255, -1)
    cv2.rectangle(alpha, (0, radius), (width - 1, height - 1 - radius), 255, -1)
    for x, y in ((radius, radius), (width - 1 - radius, radius), (radius, height - 1 - radius)):
        cv2.circle(alpha, (x, y), radius, 255, -1)
    cv2.circle(alpha, (width - 1 - radius, height - 1 - radius), radius, 255, -1)
    image[..., 3] = alpha
    border = int(min(width, height) * rng.uniform(0.05, 0.1)) if rng.random() < 0.8 else 0
    ih, iw = height - 2 * border, width - 2 * border
    inner = np.empty((ih, iw, 3), np.uint8)
    inner[:] = np.clip(colour, 0, 255).astype(np.uint8)
    light = tuple(float(v) for v in np.clip(colour * 0.5 + 120, 0, 255))
    kind = int(rng.integers(3))
    step = max(3, int(min(width, height) * rng.uniform(0.06, 0.14)))
    if kind == 0:  # lattice
        for offset in range(-ih, iw + ih, step):
            cv2.line(inner, (offset, 0), (offset + ih, ih), light, 1)
            cv2.line(inner, (offset, ih), (offset + ih, 0), light, 1)
    elif kind == 1:  # dots
        for y in range(step // 2, ih, step):
            for x in range(step // 2, iw, step):
                cv2.circle(inner, (x, y), max(1, step // 4), light, -1)
    else:  # a frame and an oval medallion
        cv2.rectangle(inner, (step // 2, step // 2), (iw - step // 2, ih - step // 2), light, 1)
        cv2.ellipse(inner, (iw // 2, ih // 2), (iw // 4, ih // 5), 0, 0, 360, light, -1)
    image[border : height - border, border : width - border, :3] = inner
    return image


def shoe(rng: np.random.Generator, card_width: int, card_height: int) -> NDArray[np.uint8]:
    """A dealing shoe seen from above (BGRA): a dark box a little wider than a card and longer,
    with the next card's back showing at its mouth."""
    width, height = (
        int(card_width * rng.uniform(1.2, 1.45)),
        int(card_height * rng.uniform(1.4, 2.0)),
    )
    image = _rgba(height, width)
    body = rng.uniform(15, 60, 3)
    image[..., :3] = body.astype(np.uint8)
    image[..., 3] = 255
    cv2.rectangle(image, (2, 2), (width - 3, height - 3), (*(body * 1.8).tolist(), 255), 2)
    back = card_back(rng, int(card_width * 0.95), int(card_height * 0.35))
    top = height - back.shape[0] - int(height * 0.04)
    left = (width - back.shape[1]) // 2
    region = image[top : top + back.shape[0], left : left + back.shape[1]]
    weight = back[..., 3:4].astype(np.float32) / 255
    region[..., :3] = (region[..., :3] * (1 - weight) + back[..., :3] * weight).astype(np.uint8)
    return image


def discard_tray(rng: np.random.Generator, card_width: int, card_height: int) -> NDArray[np.uint8]:
    """A discard tray seen from above (BGRA): a frame round a pile of used cards' edges and
    backs."""
    width, height = (
        int(card_width * rng.uniform(1.15, 1.35)),
        int(card_height * rng.uniform(0.6, 1.1)),
    )
    image = _rgba(height, width)
    frame = rng.uniform(20, 200, 3)
    image[..., :3] = frame.astype(np.uint8)
    image[..., 3] = 255
    margin = max(2, width // 14)
    pile = image[margin : height - margin, margin : width - margin]
    pile[..., :3] = int(rng.uniform(200, 240))
    for y in range(0, pile.shape[0], max(2, int(rng.integers(2, 5)))):
        shade = float(rng.uniform(120, 200))
        cv2.line(pile, (0, y), (pile.shape[1] - 1, y), (shade, shade, shade, 255), 1)
    return image


def chip_rack(rng: np.random.Generator, width: int, height: int) -> NDArray[np.uint8]:
    """The dealer's chip rack seen from above (BGRA): columns of chips lying on their rims,
    each column one colour with its rims' stripes."""
    width, height = max(16, int(width)), max(8, int(height))
    image = _rgba(height, width)
    image[..., :3] = rng.uniform(10, 50, 3).astype(np.uint8)
    image[..., 3] = 255
    columns = int(rng.integers(6, 13))
    column_width = width / columns
    for column in range(columns):
        colour = np.array(CHIP_COLOURS_BGR[int(rng.integers(len(CHIP_COLOURS_BGR)))], np.float64)
        x0, x1 = int(column * column_width + 2), int((column + 1) * column_width - 2)
        cv2.rectangle(image, (x0, 2), (x1, height - 3), (*colour.tolist(), 255), -1)
        for y in range(2, height - 2, max(2, int(column_width * 0.12))):
            cv2.line(image, (x0, y), (x1, y), (*(colour * 0.6).tolist(), 255), 1)
            if rng.random() < 0.3:
                cv2.line(
                    image, ((x0 + x1) // 2, y), ((x0 + x1) // 2 + 2, y), (230, 230, 230, 255), 1
                )
    return image
