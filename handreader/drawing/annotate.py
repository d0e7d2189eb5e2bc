"""Drawing a scored table over its photo: card boxes, splits, hand labels and results.

:class:`Annotator` holds the style (set once in ``__init__``); :meth:`Annotator.annotate`
draws a Niu Niu table (``handreader.tables.scoring.TableResult``) or a Pits verdict
(``handreader.tables.pits.PitsResult``) on a copy of the photo, which keeps its size:

- each hand has a colour (the banker's is gold); every card box is outlined in it, the cards
  of the bull (the three that make the multiple of ten) are filled lightly and framed twice (an
  inner outline: not told by colour alone), and each
  card's code is written at its box, or, where the codes of a hand would overlap (a tight fan
  on a small photo), in a row beside the hand with a leader line to each card
  (:func:`handreader.drawing.layout.place_codes`);
- a card read with low confidence is outlined in the uncertain colour with ``?`` after its code;
- each code and label is written in black or white, whichever contrasts more with its box
  (:func:`handreader.drawing.contrast.text_colour_on`, at least 4.5:1);
- each hand's label (seat and role, score, outcome and net for a settled player, ``WINNER`` in
  the trainer, or why the hand is not scored) goes where it covers no card's index or code and
  no other label (:mod:`handreader.drawing.layout`), joined to its hand by a leader line when
  it lies away from it;
- cards left outside every region are grey; a summary line (banker's net, winner or problem)
  runs along the bottom.

:meth:`Annotator.annotate_reading` draws a reading without a game (``handreader read
--annotate``): each card's box and its code, uncertain ones marked as above, the codes laid out
as a table's are, the cards whose codes would cover one another's code or index taken as one
group (:meth:`Annotator.reading_layout`).

Colours are stored as RGB and converted to OpenCV's BGR in one place (:func:`bgr`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import cv2
import numpy as np
from numpy.typing import NDArray

from handreader.drawing.contrast import Rgb, text_colour_on
from handreader.drawing.layout import LabelPlace, code_groups, place_codes, place_labels
from handreader.tables.wording import counted

if TYPE_CHECKING:
    from handreader.tables.pits import PitsResult
    from handreader.tables.scoring import HandResult, TableCard, TableResult
    from vision.detections import Reading

__all__ = ["DEFAULT_PALETTE", "Annotator", "Rgb", "TableLayout", "bgr", "text_size"]

DEFAULT_PALETTE: tuple[Rgb, ...] = (
    (31, 119, 180),
    (44, 160, 44),
    (148, 103, 189),
    (23, 190, 207),
    (227, 119, 194),
    (140, 86, 75),
    (188, 189, 34),
)
"""Player hand colours, by seat (tab10 without red, orange and grey, which mean other things)."""


@functools.lru_cache(maxsize=4096)
def text_size(text: str, scale: float, weight: int) -> tuple[tuple[int, int], int]:
    """``cv2.getTextSize`` of ``text`` in the overlay's font: ((width, height), baseline),
    remembered (a live overlay draws the same labels frame after frame)."""
    (width, height), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, weight)
    return (int(width), int(height)), int(base)


def bgr(colour: Rgb) -> tuple[int, int, int]:
    """The one place where a stored RGB colour becomes OpenCV's BGR order (both annotators
    draw through it)."""
    red, green, blue = colour
    return (int(blue), int(green), int(red))


def _floats(box: Sequence[float]) -> tuple[float, float, float, float]:
    return (float(box[0]), float(box[1]), float(box[2]), float(box[3]))


@dataclass(frozen=True, slots=True)
class TableLayout:
    """What a drawing of a table holds, in image pixels: each card's code box and index box
    (the hands' cards in order, then the cards left over), each code's leader line to its card
    (``None`` at its card), each hand's box, and each hand's label (the hand, its text, its
    place). A reading drawn without a game (:meth:`Annotator.reading_layout`) has no hands and
    no labels."""

    codes: tuple[tuple[int, int, int, int], ...]
    code_leaders: tuple[tuple[tuple[float, float], tuple[float, float]] | None, ...]
    cards: tuple[tuple[float, float, float, float], ...]
    hands: tuple[tuple[float, float, float, float], ...]
    labels: tuple[tuple[HandResult, str, LabelPlace], ...]


class Annotator:
    """Draws table results over photos; the style is fixed at construction.

    ``thickness`` and ``font_scale`` of None scale with the image (about 1/400 and 1/900 of its
    shorter side). ``fill_opacity`` is the strength of the bull cards' fill. ``text_colour`` of
    None writes each code and label in black or white, whichever contrasts more with its box
    (:func:`handreader.drawing.contrast.text_colour_on`: 4.5:1 at least on every colour).
    """

    def __init__(
        self,
        *,
        palette: Sequence[Rgb] = DEFAULT_PALETTE,
        banker_colour: Rgb = (255, 190, 0),
        uncertain_colour: Rgb = (230, 30, 30),
        left_over_colour: Rgb = (150, 150, 150),
        text_colour: Rgb | None = None,
        thickness: int | None = None,
        font_scale: float | None = None,
        fill_opacity: float = 0.25,
    ) -> None:
        if not palette:
            raise ValueError("palette needs at least one colour, got none")
        if not 0 <= fill_opacity <= 1:
            raise ValueError(f"fill_opacity must lie in 0..1, got {fill_opacity!r}")
        self.palette = tuple(palette)
        self.banker_colour = banker_colour
        self.uncertain_colour = uncertain_colour
        self.left_over_colour = left_over_colour
        self.text_colour = text_colour
        self.thickness = thickness
        self.font_scale = font_scale
        self.fill_opacity = fill_opacity

    # --- style derived from the image ------------------------------------------------------------

    def _line(self, image: NDArray[np.uint8]) -> int:
        return self.thickness or max(1, round(min(image.shape[:2]) / 400))

    def _scale(self, image: NDArray[np.uint8]) -> float:
        return self.font_scale or max(0.35, min(image.shape[:2]) / 900)

    # --- drawing primitives (all colours pass through bgr) ---------------------------------------

    def _text_box(
        self, image: NDArray[np.uint8], text: str, origin: tuple[int, int]
    ) -> tuple[int, int, int, int]:
        """The box (x1, y1, x2, y2) :meth:`_text` fills for ``text`` whose bottom-left corner
        is ``origin``, moved inside the image."""
        scale, weight = self._scale(image), max(1, self._line(image) // 2)
        (width, height), base = text_size(text, scale, weight)
        rows, columns = image.shape[:2]
        x = min(max(origin[0], 0), max(columns - width - 4, 0))
        y = min(max(origin[1], height + base + 4), rows - 1)
        return (x, y - height - base - 4, x + width + 4, y)

    def _text(
        self, image: NDArray[np.uint8], text: str, origin: tuple[int, int], background: Rgb
    ) -> None:
        """Text on a filled box; moved inside the image when it would leave it."""
        scale, weight = self._scale(image), max(1, self._line(image) // 2)
        x, top, right, y = self._text_box(image, text, origin)
        base = text_size(text, scale, weight)[1]
        cv2.rectangle(image, (x, top), (right, y), bgr(background), -1)
        cv2.putText(
            image,
            text,
            (x + 2, y - base - 2),
            cv2.FONT_HERSHEY_SIMPLEX,
            scale,
            bgr(self.text_colour or text_colour_on(background)),
            weight,
            cv2.LINE_AA,
        )

    def _box(
        self, image: NDArray[np.uint8], box: Sequence[float], colour: Rgb, thickness: int
    ) -> None:
        x1, y1, x2, y2 = (round(value) for value in box)
        cv2.rectangle(image, (x1, y1), (x2, y2), bgr(colour), thickness, cv2.LINE_AA)

    def _fill(self, image: NDArray[np.uint8], box: Sequence[float], colour: Rgb) -> None:
        rows, columns = image.shape[:2]
        x1, y1, x2, y2 = (round(value) for value in box)
        x1, x2 = max(x1, 0), min(x2, columns)
        y1, y2 = max(y1, 0), min(y2, rows)
        if x2 <= x1 or y2 <= y1:
            return
        patch = image[y1:y2, x1:x2]
        tint = np.empty_like(patch)
        tint[:] = bgr(colour)
        # mixed in place, in 8 bits (rounded to the nearest): no float copy of the patch
        cv2.addWeighted(patch, 1 - self.fill_opacity, tint, self.fill_opacity, 0.0, dst=patch)

    def _card(
        self,
        image: NDArray[np.uint8],
        card: TableCard,
        colour: Rgb,
        part: str | None,
    ) -> None:
        """The card's box (filled for the bull); its code is written by :meth:`_codes`."""
        if card.box_xyxy is None:
            return
        line = self._line(image)
        outline = self.uncertain_colour if card.uncertain else colour
        if part == "bull":  # filled and framed twice: not told by the colour alone
            self._fill(image, card.box_xyxy, colour)
            x1, y1, x2, y2 = card.box_xyxy
            inset = 2 * line
            if min(x2 - x1, y2 - y1) > 3 * inset:
                inner = (x1 + inset, y1 + inset, x2 - inset, y2 - inset)
                self._box(image, inner, colour, max(1, line // 2))
        self._box(image, card.box_xyxy, outline, line)

    def _leader(
        self,
        image: NDArray[np.uint8],
        leader: tuple[tuple[float, float], tuple[float, float]],
        colour: Rgb,
        width: int,
    ) -> None:
        start, end = leader
        cv2.line(
            image,
            (round(start[0]), round(start[1])),
            (round(end[0]), round(end[1])),
            bgr(colour),
            width,
            cv2.LINE_AA,
        )

    def _codes(
        self,
        image: NDArray[np.uint8],
        shown: Sequence[tuple[TableCard, Rgb]],
        boxes: Sequence[tuple[int, int, int, int]],
        leaders: Sequence[tuple[tuple[float, float], tuple[float, float]] | None],
    ) -> None:
        """Each card's code in its box (a place of the layout): every leader line first, then
        every code, so that no line is drawn over another card's code."""
        width = max(1, self._line(image) // 2)
        for (card, colour), leader in zip(shown, leaders, strict=True):
            if leader is not None:
                outline = self.uncertain_colour if card.uncertain else colour
                self._leader(image, leader, outline, width)
        for (card, colour), box in zip(shown, boxes, strict=True):
            outline = self.uncertain_colour if card.uncertain else colour
            self._text(image, card.shown, (box[0], box[3]), outline)

    def _code_box(self, image: NDArray[np.uint8], card: TableCard) -> tuple[int, int, int, int]:
        assert card.box_xyxy is not None
        x1, y1 = round(card.box_xyxy[0]), round(card.box_xyxy[1])
        return self._text_box(image, card.shown, (x1, y1 - self._line(image)))

    def _code_places(
        self,
        image: NDArray[np.uint8],
        owners: Sequence[tuple[int, TableCard]],
        drawn_over: Sequence[tuple[float, float, float, float]],
    ) -> tuple[
        list[tuple[int, int, int, int]],
        tuple[tuple[tuple[float, float], tuple[float, float]] | None, ...],
    ]:
        """Where the codes of ``owners`` (each card with a box, and its hand's number) are
        drawn (:func:`handreader.drawing.layout.place_codes`): each code's box as drawn, in
        whole pixels, and its leader line."""
        cards = [card for _, card in owners]
        at_cards = [self._code_box(image, card) for card in cards]
        places = place_codes(
            [_floats(card.box_xyxy) for card in cards if card.box_xyxy is not None],
            [(float(a), float(b), float(c), float(d)) for a, b, c, d in at_cards],
            [number for number, _ in owners],
            drawn_over,
            (float(image.shape[1]), float(image.shape[0])),
            float(2 * self._line(image)),
        )
        # the boxes as drawn: text whose bottom-left corner is the place's
        codes = [
            box
            if place.leader is None
            else self._text_box(image, card.shown, (round(place.box[0]), round(place.box[3])))
            for card, box, place in zip(cards, at_cards, places, strict=True)
        ]
        return codes, tuple(place.leader for place in places)

    def layout(
        self,
        image: NDArray[np.uint8],
        result: TableResult,
        reserved: Sequence[tuple[float, float, float, float]] = (),
    ) -> TableLayout:
        """Where :meth:`annotate` draws ``result`` over ``image``: each card's index and code
        boxes (to keep clear), and each hand's label place (:mod:`handreader.drawing.layout`),
        clear of the summary line and of the ``reserved`` boxes (drawn over afterwards: the
        live overlay's status line)."""
        line = self._line(image)
        owners = [
            (number, card)
            for number, hand in enumerate(result.hands)
            for card in hand.cards
            if card.box_xyxy is not None
        ]
        count = len(result.hands)
        owners += [
            (count + number, card)  # a card of no hand is a group of its own
            for number, card in enumerate(result.left_over)
            if card.box_xyxy is not None
        ]
        cards = [card for _, card in owners]
        clear: list[tuple[float, float, float, float]] = [
            (float(x1), float(y1), float(x2), float(y2))
            for x1, y1, x2, y2 in (card.box_xyxy for card in cards if card.box_xyxy)
        ]
        hands, sizes, texts = [], [], []
        for hand in result.hands:
            box = hand.box_xyxy
            if box is None:
                continue
            margin = 3 * line
            hands.append((box[0] - margin, box[1] - margin, box[2] + margin, box[3] + margin))
            text = self._hand_label(hand, result)
            x1, y1, x2, y2 = self._text_box(image, text, (0, image.shape[0] - 1))
            sizes.append((float(x2 - x1), float(y2 - y1)))
            texts.append((hand, text))
        summary = self._summary(result)
        drawn_over = list(reserved)
        if summary is not None:
            sx1, sy1, sx2, sy2 = self._summary_box(image, summary)
            drawn_over.append((float(sx1), float(sy1), float(sx2), float(sy2)))
        codes, leaders = self._code_places(image, owners, drawn_over)
        places = place_labels(
            hands,
            sizes,
            [*((float(a), float(b), float(c), float(d)) for a, b, c, d in codes), *drawn_over],
            (float(image.shape[1]), float(image.shape[0])),
            float(2 * line),
            clear,
        )
        return TableLayout(
            codes=tuple(codes),
            code_leaders=leaders,
            cards=tuple(clear),
            hands=tuple(hands),
            labels=tuple(
                (hand, text, place) for (hand, text), place in zip(texts, places, strict=True)
            ),
        )

    # --- hands and results -----------------------------------------------------------------------

    def _colour(self, hand: HandResult, banker: int | None) -> Rgb:
        if banker is not None and hand.seat == banker:
            return self.banker_colour
        return self.palette[hand.seat % len(self.palette)]

    @staticmethod
    def _hand_label(hand: HandResult, result: TableResult) -> str:
        role = "Banker" if hand.seat == result.banker else f"Seat {hand.seat}"
        if hand.hand is None:
            cards = counted(len(hand.cards), "card")
            return f"{role}: {hand.status.value.replace('_', ' ')} ({cards})"
        text = f"{role}: {hand.hand.label}"
        if not hand.scored:
            return text + f"? ({hand.status.value})"
        for player in result.players:
            if player.seat == hand.seat and player.outcome is not None:
                net = player.settlement.net if player.settlement is not None else 0
                text += f" | {player.outcome.value} {float(net):+g}"
        if hand.seat in result.winners:
            text += " | TIE" if result.is_tie else " | WINNER"
        return text

    @staticmethod
    def _summary(result: TableResult) -> str | None:
        if result.problem is not None:
            return result.problem
        if result.winners:
            seats = ", ".join(str(seat) for seat in result.winners)
            return f"tie between seats {seats}" if result.is_tie else f"winner: seat {seats}"
        net = result.banker_net
        if net is not None:
            return f"banker net {float(net):+g}"
        return None

    def _summary_box(self, image: NDArray[np.uint8], summary: str) -> tuple[int, int, int, int]:
        return self._text_box(image, summary, (0, image.shape[0] - 1))

    def annotate(
        self,
        scene: NDArray[np.uint8],
        result: TableResult | PitsResult,
        reserved: Sequence[tuple[float, float, float, float]] = (),
    ) -> NDArray[np.uint8]:
        """A copy of ``scene`` (BGR, H x W x 3) with ``result`` drawn over it, same size; no
        hand's label is placed over the ``reserved`` boxes (what the caller draws after)."""
        if scene.ndim != 3 or scene.shape[2] != 3:
            raise ValueError(f"scene must be an (H, W, 3) BGR image, got shape {scene.shape}")
        image = np.ascontiguousarray(scene.copy())
        from handreader.tables.pits import PitsResult as Play  # imported when first drawn

        if isinstance(result, Play):
            self._draw_play(image, result)
        else:
            self._draw_table(image, result, reserved)
        return image

    @staticmethod
    def _reading_cards(reading: Reading) -> list[TableCard]:
        """The cards of ``reading`` that have a box, as table cards, in the reading's order."""
        from handreader.tables.scoring import TableCard as Card  # imported when first drawn

        cards = [Card.from_reading(card) for card in reading.cards]
        return [card for card in cards if card.box_xyxy is not None]

    def reading_layout(self, image: NDArray[np.uint8], reading: Reading) -> TableLayout:
        """Where :meth:`annotate_reading` draws ``reading`` over ``image``: each card's index
        and code boxes and each code's leader line, in the reading's order. The cards have no
        hands: cards whose codes at their cards would cover one another's code or index are
        one group (:func:`handreader.drawing.layout.code_groups`), spread as a crowded hand is
        (:func:`handreader.drawing.layout.place_codes`); no hands, no labels."""
        cards = self._reading_cards(reading)
        boxes = [_floats(card.box_xyxy) for card in cards if card.box_xyxy is not None]
        at_cards = [_floats(self._code_box(image, card)) for card in cards]
        groups = code_groups(boxes, at_cards)
        codes, leaders = self._code_places(image, list(zip(groups, cards, strict=True)), ())
        return TableLayout(
            codes=tuple(codes), code_leaders=leaders, cards=tuple(boxes), hands=(), labels=()
        )

    def annotate_reading(self, scene: NDArray[np.uint8], reading: Reading) -> NDArray[np.uint8]:
        """A copy of ``scene`` with each card read drawn: its box (uncertain ones outlined in the
        uncertain colour, ``?`` after the code) and its code, laid out by
        :meth:`reading_layout` (codes that would cover one another or a card's index spread in
        a row beside their cards, each joined to its card by a leader line)."""
        if scene.ndim != 3 or scene.shape[2] != 3:
            raise ValueError(f"scene must be an (H, W, 3) BGR image, got shape {scene.shape}")
        image = np.ascontiguousarray(scene.copy())
        layout = self.reading_layout(image, reading)
        shown = [(card, self.palette[0]) for card in self._reading_cards(reading)]
        for card, colour in shown:
            self._card(image, card, colour, None)
        self._codes(image, shown, layout.codes, layout.code_leaders)
        return image

    def _draw_table(
        self,
        image: NDArray[np.uint8],
        result: TableResult,
        reserved: Sequence[tuple[float, float, float, float]],
    ) -> None:
        line = self._line(image)
        layout = self.layout(image, result, reserved)
        coloured = []  # each card with a box, and its colour, in the layout's order
        for hand in result.hands:
            colour = self._colour(hand, result.banker)
            for card, part in zip(hand.cards, hand.parts(), strict=True):
                self._card(image, card, colour, part)
                coloured.append((card, colour))
        for hand_box, (hand, _, _) in zip(layout.hands, layout.labels, strict=True):
            self._box(image, hand_box, self._colour(hand, result.banker), max(1, line // 2))
        for card in result.left_over:
            self._card(image, card, self.left_over_colour, None)
            coloured.append((card, self.left_over_colour))
        shown = [(card, colour) for card, colour in coloured if card.box_xyxy is not None]
        # every leader line (the labels' and the codes') under every code and label
        for hand, _, place in layout.labels:
            if place.leader is not None:
                self._leader(image, place.leader, self._colour(hand, result.banker), max(1, line))
        self._codes(image, shown, layout.codes, layout.code_leaders)
        for hand, text, place in layout.labels:
            x1, _, _, y2 = (round(value) for value in place.box)
            self._text(image, text, (x1, y2), self._colour(hand, result.banker))
        summary = self._summary(result)
        if summary is not None:
            self._text(image, summary, (0, image.shape[0] - 1), (40, 40, 40))

    def _draw_play(self, image: NDArray[np.uint8], result: PitsResult) -> None:
        colour = self.palette[0]
        if result.combination is not None:
            verdict = {True: "legal", False: "illegal", None: "undecided"}[result.legal]
            summary = f"{result.combination.describe()}: {verdict}"
        else:
            summary = result.reason or "no combination"
        # the play's cards are one hand; each card on the table is one of its own
        coloured = [(0, card, colour) for card in result.cards if card.box_xyxy is not None]
        coloured += [
            (1 + number, card, self.left_over_colour)
            for number, card in enumerate(result.table)
            if card.box_xyxy is not None
        ]
        for _, card, shade in coloured:
            self._card(image, card, shade, None)
        sx1, sy1, sx2, sy2 = self._summary_box(image, summary)
        codes, leaders = self._code_places(
            image,
            [(number, card) for number, card, _ in coloured],
            [(float(sx1), float(sy1), float(sx2), float(sy2))],
        )
        self._codes(image, [(card, shade) for _, card, shade in coloured], codes, leaders)
        self._text(image, summary, (0, image.shape[0] - 1), (40, 40, 40))
