"""Contrast of text on a colour, by WCAG 2.2's relative luminance and contrast ratio.

Text drawn on a box of a hand's colour is black or white, whichever contrasts more with the
box (:func:`text_colour_on`): on any colour one of the two reaches sqrt(21) = 4.58:1, above
the 4.5:1 that WCAG 1.4.3 asks of text (images of text included). The page's drawing
(``draw.js``, ``textOn``) follows the same rule.
"""

from __future__ import annotations

__all__ = ["BLACK", "WHITE", "Rgb", "contrast_ratio", "relative_luminance", "text_colour_on"]

Rgb = tuple[int, int, int]

BLACK: Rgb = (0, 0, 0)
WHITE: Rgb = (255, 255, 255)


def _linear(channel: int) -> float:
    value = channel / 255
    return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4


def relative_luminance(colour: Rgb) -> float:
    """WCAG's relative luminance of an sRGB colour (0 for black, 1 for white)."""
    red, green, blue = colour
    return 0.2126 * _linear(red) + 0.7152 * _linear(green) + 0.0722 * _linear(blue)


def contrast_ratio(first: Rgb, second: Rgb) -> float:
    """WCAG's contrast ratio of two colours, from 1 (the same) to 21 (black and white)."""
    light, dark = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def text_colour_on(background: Rgb) -> Rgb:
    """Black or white, whichever contrasts more with ``background`` (at least 4.58:1)."""
    if contrast_ratio(BLACK, background) >= contrast_ratio(WHITE, background):
        return BLACK
    return WHITE
