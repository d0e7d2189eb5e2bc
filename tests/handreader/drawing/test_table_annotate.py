"""Drawing a scored table (handreader/drawing/annotate.py).

Expectations from the annotator's contract: the drawing is a copy of the photo's size, colours
are given as RGB and land in the BGR image converted once (a pure red banker colour shows as
BGR (0, 0, 255)), the bull's cards are tinted, uncertain cards are outlined in the uncertain
colour, and the photo passed in is left untouched.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray

from handreader.drawing.annotate import Annotator
from handreader.tables.pits import judge_reading
from handreader.tables.scoring import TableOptions, score_reading
from vision.detections import CardReading, Reading

NO_NIU = "AS 2S 3S 4S 8S"
NIU_4 = "3H 7S KD 8C 6D"  # split KD 7S 3H | 8C 6D


def _hand(codes: str, x: float, y: float, uncertain: str = "") -> list[CardReading]:
    return [
        CardReading(code, 0.9, (x + 60 * i, y, x + 60 * i + 40, y + 60),
                    uncertain=code in uncertain.split())
        for i, code in enumerate(codes.split())
    ]  # fmt: skip


def _scene() -> NDArray[np.uint8]:
    return np.full((600, 800, 3), 128, np.uint8)


def _table(uncertain: str = "") -> Reading:
    return Reading((800, 600), (*_hand(NO_NIU, 200, 100), *_hand(NIU_4, 200, 400, uncertain)))


def test_the_drawing_is_a_copy_of_the_same_size() -> None:
    scene = _scene()
    drawn = Annotator().annotate(scene, score_reading(_table()))
    assert drawn.shape == scene.shape and drawn.dtype == np.uint8
    assert (scene == 128).all()  # the photo is untouched
    assert (drawn != 128).any()


def test_colours_are_rgb_converted_once() -> None:
    red, blue = (255, 0, 0), (0, 0, 255)
    annotator = Annotator(banker_colour=red, palette=[blue], thickness=2, fill_opacity=0.0)
    drawn = annotator.annotate(_scene(), score_reading(_table()))
    # the banker's first card box (AS at x 200..240, y 100..160): left edge, halfway down
    assert tuple(drawn[130, 200]) == (0, 0, 255)  # red in BGR
    # the player's last card (6D at x 440..480, y 400..460): left edge
    assert tuple(drawn[430, 440]) == (255, 0, 0)  # blue in BGR


def test_the_bull_is_tinted_and_the_rest_is_not() -> None:
    annotator = Annotator(palette=[(0, 255, 0)], fill_opacity=0.5, thickness=1)
    drawn = annotator.annotate(_scene(), score_reading(_table()))
    # NIU_4's cards left to right: 3H 7S KD (bull), 8C 6D (rest); look inside each box
    inside = [tuple(int(v) for v in drawn[445, 220 + 60 * i]) for i in range(5)]
    tinted = (64, 192, 64)  # half grey 128, half green (0, 255, 0) -> BGR (64, 191.5, 64)
    assert all(abs(a - b) <= 1 for pixel in inside[:3] for a, b in zip(pixel, tinted, strict=True))
    assert inside[3] == inside[4] == (128, 128, 128)


def test_uncertain_cards_take_the_uncertain_colour() -> None:
    annotator = Annotator(uncertain_colour=(255, 0, 255), palette=[(0, 0, 0)], thickness=2)
    drawn = annotator.annotate(_scene(), score_reading(_table(uncertain="KD")))
    assert tuple(drawn[430, 320]) == (255, 0, 255)  # KD's left edge: magenta either way round
    assert tuple(drawn[430, 200]) == (0, 0, 0)  # 3H: the hand's colour


def test_a_card_touching_the_border_stays_inside_the_image() -> None:
    reading = Reading((200, 150), tuple(_hand(NIU_4, -20, -10)))
    drawn = Annotator().annotate(np.zeros((150, 200, 3), np.uint8), score_reading(reading))
    assert drawn.shape == (150, 200, 3)


def test_trainer_and_pits_results_draw() -> None:
    trainer = score_reading(_table(), TableOptions.create(mode="trainer"))
    assert Annotator().annotate(_scene(), trainer).shape == (600, 800, 3)
    play = judge_reading(Reading((800, 600), tuple(_hand("9H 9D", 100, 100))), table=["5H", "5D"])
    assert Annotator().annotate(_scene(), play).shape == (600, 800, 3)


@pytest.mark.parametrize(
    ("arguments", "words"),
    [({"palette": []}, "at least one colour"), ({"fill_opacity": 1.5}, "fill_opacity")],
)
def test_bad_style(arguments: dict[str, object], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        Annotator(**arguments)  # type: ignore[arg-type]


def test_scene_must_be_bgr() -> None:
    with pytest.raises(ValueError, match=r"\(H, W, 3\)"):
        Annotator().annotate(np.zeros((10, 10), np.uint8), score_reading(_table()))
