"""The reader's settings: thresholds and switches of the reading pipeline, one frozen record.

How each default was chosen, with the figures it was chosen on, is in ``docs/reading.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rules.decks import Deck

__all__ = ["PANORAMA", "SETTING_RANGES", "ReaderSettings"]

PANORAMA = 2.0
"""A photo whose longer side is over this many times its shorter is a panorama: it is decoded
and shrunk by its height, never by its length, and is never a close-up
(``vision.index_detector``, ``vision.imageio``)."""


@dataclass(frozen=True, slots=True)
class ReaderSettings:
    """Thresholds and switches of :class:`vision.reader.Reader`; the defaults read photos,
    :meth:`vision.reader.Reader.for_frames` turns off the passes a video frame cannot afford."""

    detection_threshold: float = 0.15
    """The detector's score from which a box is an index candidate."""
    nms_iou: float = 0.5
    """Overlap above which the weaker of two boxes is suppressed."""
    uncertain_below: float = 0.7
    """A card whose classifier probability is under this is marked uncertain."""
    none_above: float = 0.2
    """A crop whose "no index" probability reaches this is not a card."""
    merge_distance: float = 9.0
    """Two same-card indices are one card when closer than this many index heights."""
    tile_above_px: int = 1400
    """Images with a longer side above this are also read at a finer scale: that of four
    overlapping tiles of 0.6 of each side at the detector's size (one pass over the whole
    image when the detector takes any input size, else those four tiles)."""
    closeup_index_share: float = 0.1
    """A close-up: an index found whose longer side is at least this share of the image's
    shorter side (a card filling the frame), or no index found at all; a close-up is read again
    inside a grey margin (``closeup_margin``), and that reading is kept."""
    closeup_surest_share: float = 0.75
    """An index that big makes a close-up only when the detector is at least this share as sure
    of it as of the surest smaller index found (0: whenever one is found): a stack of chips or
    a card back seen as one huge, doubtful index does not make a table photo a close-up."""
    closeup_margin: float = 0.15
    """The margin around a close-up, as a share of the image's longer side."""
    closeup_union_from: int = 5
    """A close-up whose framed reading finds this many indices or more (a hand held near the
    camera, not one card) also keeps those of the image's own boxes that overlap no framed box
    by more than ``nms_iou``; with fewer, or at 0, the framed reading is the answer."""
    closeups: bool = True
    """Whether close-ups are read again."""
    fine: bool = True
    """Whether small indices are read again at ``fine_imgsz``."""
    fine_imgsz: int = 640
    """The detector's input size for the finer pass; an image whose longer side is under this
    size gets no finer pass."""
    fine_below_px: float = 16.0
    """An image (not over ``tile_above_px``) whose found indices have a median side under this
    many pixels of the detector's input is read again at ``fine_imgsz``, and that reading is
    kept."""
    exposure_target: float = 160.0
    """A photo whose 99th-percentile grey level is under this is brightened to it before it is
    read (:func:`vision.reader.brightened`); 0 reads every photo as it is."""
    fourth_corner: bool = True
    """Whether a lone index at the fourth corner of a card read at three others, read as another
    rank of the same suit, is taken as that card's corner, not as a second card
    (:func:`vision.corners.fourth_corners`)."""
    other_corner: bool = True
    """Whether a lone unsure index at another corner of a card read for certain
    (``other_corner_reach`` index heights away) joins that card's reading instead of being an
    uncertain card of its own (:func:`vision.corners.other_corners`)."""
    other_corner_reach: tuple[float, float] = (2.2, 5.5)
    """How far (from, to), in index heights between centres, another corner of a card lies."""
    other_corner_slant: float = 0.25
    """How far across a card its other corner lies: the smaller side of the offset between the
    two indices' centres over the larger at least this (0: anywhere in reach)."""
    other_corner_votes: bool = False
    """Whether such a corner's reading is multiplied into the card's (a card read for certain at
    one corner and otherwise at another may become uncertain), or only named among its
    readings, the card keeping the reading of its sure corners."""
    whole_card: bool = True
    """Whether an image with at most two cards read for certain from its indices is also shown
    to the whole-card classifier (:mod:`vision.whole_card`), when the models include one."""
    whole_card_above: float = 0.4
    """The whole-card classifier's probability from which its card is taken, when the indices
    gave no certain card."""
    whole_card_sure: float = 0.95
    """The whole-card classifier's probability from which, naming one of the one or two certain
    cards, it makes the image that one card."""
    rect_input: bool = True
    """Whether the detector (when it takes any input size) gets the image padded only to a
    multiple of its stride, not to a square (:func:`vision.letterbox.letterbox`)."""
    max_detections: int = 300
    """At most this many boxes are kept from one detector pass."""
    turns: int = 4
    """Quarter turns of each crop shown to the classifier, the surest kept."""
    retry_below: float = 0.9
    """Only crops whose surest card is below this are shown at the other turns."""
    retry_none_below: float = 0.3
    """Nor are crops whose first look gives "none" at least this probability."""
    upright_turns: bool = True
    """With four ``turns``, an unsure crop is shown only at the two turns that stand its box
    upright (:func:`vision.corners.upright_turns`); its first look, as it lies, is kept."""
    verify_below: float = 0.1
    """With an index verifier among the models (:mod:`vision.verifier`), a card read for certain
    goes when the verifier gives none of its boxes this probability of being a card's corner
    index: its boxes are read as "none" and the cards merged again; 0 keeps every card."""
    verify_uncertain: bool = True
    """Whether cards read with low confidence are shown to the index verifier too, by the same
    rule as certain ones."""
    verify_corroborated: bool = True
    """Whether a card two or more of whose boxes read it for sure (two corners alike) skips
    the index verifier and the card-face check: a print, a chip or a pip seldom reads as the
    same card twice at once. Jokers are always checked."""
    card_evidence: bool = True
    """Whether a card goes when none of its boxes has a card's face around it: light grey paper
    round the index that runs on past it, not a felt's print or a chip's inlay
    (:mod:`vision.card_evidence`); checked on the same cards as the index verifier's."""
    dark_faces: bool = True
    """Whether a photo is also read in its negative, for decks that print light indices on dark
    faces (:mod:`vision.dark_faces`): the indices found only there, at least
    ``dark_face_threshold`` sure (and with ``dark_face_surer`` those the photo shows less
    surely), are classified and checked in the negative and join the photo's own.
    :meth:`vision.reader.Reader.for_frames` turns it off for lone frames; a video's reader
    (:meth:`vision.reader.Reader.for_stream`) made while it is on reads each video one way, its
    frames or their negatives (:class:`vision.dark_faces.VideoFaces`)."""
    dark_face_threshold: float = 0.3
    """The detector's score from which an index found in the negative is a candidate; a video
    turns to its other way on indices at least this sure."""
    dark_face_surer: bool = True
    """Whether an index found both in the photo and in its negative (their boxes overlapping
    by more than ``vision.dark_faces.PHOTO_OVERLAP``), the detector surer of it in the
    negative, is classified both ways and kept where the classifier's surest card is surer (a
    light index on a black face that the photo shows faintly); off, the photo's box is the one
    read (:func:`vision.dark_faces.negative_boxes`, :func:`vision.dark_faces.both_ways`)."""
    retry_contexts: tuple[float, ...] = (0.85,)
    """An unsure crop is also cut again around its box with these shares of the usual margin
    (``vision.crops.CROP_CONTEXT``) and read at the same turns; its probabilities are the mean
    of each cut's surest turn."""
    retry_agreeing: bool = True
    """Whether an unsure crop is retried although a sure crop nearby (within
    ``merge_distance``) reads the same card. Off, its first reading only joins that card's
    (most such crops are the card's pips, which the detector also finds): a 12 MP table photo
    then costs about a third fewer classifier crops, for a few cards fewer on webcam frames
    (``docs/reading.md``, "Naming each index")."""
    staged_retry: bool = True
    """An unsure crop is first shown at its other turns alone; only a crop still unsure after
    them is cut again (``retry_contexts``), so that most retries cost one or two views."""
    in_play: Deck | None = None
    """The deck in play (:class:`rules.decks.Deck`): a photo's cards are then decoded together
    (:mod:`vision.decoding`): no card the deck lacks is read, no card more often than the deck
    holds it, and a card that loses its reading falls back to its next reading the deck still
    holds, or is uncertain. None reads each card on its own, whatever it is."""
    indices: str | None = None
    """The letters the deck prints in its indices (a name of
    :data:`vision.index_letters.INDEX_LETTERS`: ``english``, ``french``, ``german``,
    ``russian``, ``dutch``): a letter the classifier reads as several ranks (a ``V``) is then
    read as the rank the deck prints it for, and a card of a rank whose letter the classifier
    was not trained on is uncertain (:mod:`vision.index_letters`). None reads the letters every
    such deck gives one rank (R, D, B, H, 1, Т, К, Д, В and the English ones), a ``V`` as a J
    or a Q of its suit, uncertain."""
    deck_prior: bool = False
    """With a deck in play, whether a card's confidence is its probability among the deck's
    cards (the deck as a prior: what the classifier gave the cards the deck lacks is shared
    out in proportion) or, by default, the classifier's own probability, which the deck never
    raises: a card certain with a deck in play is then certain, with that code, without one,
    and a card that loses its reading (a joker in Niu Niu, a second KD of one deck) is
    uncertain under its next reading unless that reading alone passes ``uncertain_below``.
    Chosen on the real folders (``docs/reading.md``, "Deck-aware decoding")."""


_SHARE = (0.0, 1.0)
_NOT_NEGATIVE = (0.0, math.inf)
SETTING_RANGES: dict[str, tuple[float, float]] = {
    "detection_threshold": _SHARE,
    "nms_iou": _SHARE,
    "uncertain_below": _SHARE,
    "none_above": _SHARE,
    "merge_distance": _NOT_NEGATIVE,
    "tile_above_px": _NOT_NEGATIVE,
    "closeup_index_share": _NOT_NEGATIVE,
    "closeup_surest_share": _NOT_NEGATIVE,
    "closeup_margin": _NOT_NEGATIVE,
    "closeup_union_from": _NOT_NEGATIVE,
    "fine_imgsz": (32.0, math.inf),  # the detector's stride: no smaller input is a pass
    "fine_below_px": _NOT_NEGATIVE,
    "exposure_target": (0.0, 255.0),  # a grey level
    "other_corner_slant": _SHARE,  # the smaller side of an offset over the larger
    "whole_card_above": _SHARE,
    "whole_card_sure": _SHARE,
    "max_detections": (1.0, math.inf),
    "turns": (1.0, 4.0),  # quarter turns: a fifth is the first again
    "retry_below": _SHARE,
    "retry_none_below": _SHARE,
    "verify_below": _SHARE,
    "dark_face_threshold": _SHARE,
}
"""The values each number of :class:`ReaderSettings` means something for, (lowest, highest),
both included: a probability, score or share of one thing in another from 0 to 1, a count or
a distance from 0, a grey level to 255. ``handreader eval --set`` refuses a value outside."""
