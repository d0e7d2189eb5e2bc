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


def test_the_bulls_cards_are_framed_twice_not_told_by_colour_alone() -> None:
    """WCAG 1.4.1: the bull's cards carry an inner outline (2 lines in) besides the tint."""
    annotator = Annotator(palette=[(0, 255, 0)], fill_opacity=0.0, thickness=1)
    drawn = annotator.annotate(_scene(), score_reading(_table()))
    # NIU_4's cards (boxes x 200 + 60 i to + 40, y 400 to 460): 3H 7S KD the bull, 8C 6D not
    inner = [tuple(int(v) for v in drawn[430, 200 + 60 * i + 2]) for i in range(5)]
    assert all(blue < 40 and green > 200 and red < 40 for blue, green, red in inner[:3]), inner
    assert inner[3] == inner[4] == (128, 128, 128)


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


def _fanned(codes: str, x: float, y: float, step: float = 26.0) -> list[CardReading]:
    """A tight row: index boxes 24 x 40 px, ``step`` px apart (a fan seen from above)."""
    return [
        CardReading(code, 0.95, (x + step * i, y, x + step * i + 24, y + 40))
        for i, code in enumerate(codes.split())
    ]


SCENES = {
    # a banker at the top edge, two players below: the banker's label cannot go above
    "banker at the top edge": (
        (1000, 700),
        [_fanned(NO_NIU, 380, 4), _fanned("KS QS 10S 5C 5S", 120, 330), _fanned(NIU_4, 640, 330)],
    ),
    # four hands in two rows a label's height apart: labels between the rows would cover codes
    "two close rows": (
        (900, 600),
        [
            _fanned("AH 2H 3H 4H 6H", 80, 150), _fanned("7C 8C 9C JC QC", 480, 150),
            _fanned("AD 2D 3D 4D 6D", 80, 235), _fanned("7D 8D 9D JD QD", 480, 235),
        ],
    ),
    # a phone photo: hands near the left and right edges, a stray card between them
    "hands at the edges": (
        (640, 480),
        [
            _fanned("KS QS 10S 5C 5S", 0, 220, 22), _fanned(NIU_4, 530, 210, 22),
            [CardReading("9H", 0.95, (300, 230, 324, 270))],
        ],
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(SCENES))
def test_no_label_covers_a_card_code_or_another_label(name: str) -> None:
    from handreader.drawing.layout import overlap_area

    size, hands = SCENES[name]
    reading = Reading(size, tuple(card for hand in hands for card in hand))
    result = score_reading(reading, TableOptions.create(stake=10))
    image = np.full((size[1], size[0], 3), 90, np.uint8)
    annotator = Annotator()
    layout = annotator.layout(image, result)
    assert len(layout.labels) == len(result.hands) >= 2
    labels = [place.box for _, _, place in layout.labels]
    keep_clear = [*layout.cards, *layout.codes]
    for number, box in enumerate(labels):
        assert box[0] >= 0 and box[1] >= 0 and box[2] <= size[0] and box[3] <= size[1]
        for other in keep_clear:
            assert overlap_area(box, other) == 0, (name, box, other)
        for other in labels[number + 1 :]:
            assert overlap_area(box, other) == 0, (name, box, other)
    # the drawing is that layout: every label's box is painted in its hand's colour
    drawn = annotator.annotate(image, result)
    for hand, _, place in layout.labels:
        x1, y1 = round(place.box[0]) + 1, round(place.box[1]) + 1
        assert tuple(drawn[y1, x1]) != (90, 90, 90), (name, hand.seat)


def test_a_label_far_from_its_hand_is_joined_by_a_leader_line() -> None:
    from handreader.drawing.layout import place_labels

    hand = (100.0, 100.0, 300.0, 140.0)
    # everything just around the hand is taken: the label goes a ring out, with a leader
    blocked = [(0.0, 40.0, 1000.0, 99.0), (0.0, 141.0, 1000.0, 200.0), (0.0, 100.0, 99.0, 140.0),
               (301.0, 100.0, 1000.0, 140.0)]  # fmt: skip
    (place,) = place_labels([hand], [(120.0, 20.0)], blocked, (1000.0, 800.0), 4.0)
    assert place.leader is not None
    assert place.box[1] >= 200 or place.box[3] <= 40
    (near,) = place_labels([hand], [(120.0, 20.0)], [], (1000.0, 800.0), 4.0)
    assert near.leader is None and near.box == (100.0, 76.0, 220.0, 96.0)  # just above


def test_labels_keep_clear_of_the_summary_line_and_of_reserved_boxes() -> None:
    """A hand along the top edge and another along the bottom: no label lies under a box the
    caller reserves (the live status line) or under the table's summary line."""
    from handreader.drawing.layout import overlap_area

    hands = [_fanned("KS QS 10S 5C 5S", 20, 10, 22), _fanned(NIU_4, 20, 420, 22)]
    reading = Reading((640, 480), tuple(card for hand in hands for card in hand))
    result = score_reading(reading, TableOptions.create(stake=10))
    image = np.full((480, 640, 3), 90, np.uint8)
    annotator = Annotator()
    summary = annotator._summary(result)
    assert summary is not None
    reserved = (0.0, 0.0, 320.0, 40.0)
    layout = annotator.layout(image, result, [reserved])
    kept = [reserved, tuple(map(float, annotator._summary_box(image, summary)))]
    for _, _, place in layout.labels:
        for box in kept:
            assert overlap_area(place.box, box) == 0, (place.box, box)
