"""Cards tracked across video frames, so that a still table shows still codes.

One :class:`CardTracker` follows the cards of one video. Each read frame's
:class:`~vision.detections.Reading` is matched to the tracks (:meth:`CardTracker.update`). The
reader gives a card either as one corner index (a small box) or, when it read several corners of
a card alike, as one card made of them (``corners >= 2``, the union of their boxes); which of
the two it gives may change from frame to frame on a still table. Tracks therefore follow boxes
of one scale each, and a card made of several corners counts as a sighting of the corners'
tracks:

1. **Pairing.** A reading and a track may pair when their sizes (longer sides) are within a
   factor ``rescale_limit`` (default 2) and their boxes overlap (intersection over the smaller
   box at least ``min_overlap``) or their centres lie within ``max_center_distance`` box sizes.
   Each allowed pair costs ``(1 - overlap) + distance / size``, plus ``code_penalty`` when the
   reading's code is not the track's; pairs are taken greedily, cheapest first (deterministic:
   ties go to the older track, then the earlier reading). A paired reading votes for its track
   and moves its box: ``box = (1 - smoothing) * box + smoothing * new box``.
2. **Covering.** A reading made of several corners *covers* a track more than ``rescale_limit``
   times smaller with at least ``cover_inside`` of its box inside the reading's. A covered
   track that was not paired counts as seen (its box stays); when it also touches the
   reading's border (within ``cover_touch`` of its size) it is one of the reading's corners:
   the reading votes for it (the reader joins only corners that it read alike), and the
   corners' tracks are *linked* as one card. A reading that covers a track starts no track.
   Other readings left over start new tracks.
3. **Confirmation.** A new track is *tentative*. It is *shown* once seen in ``confirm_frames``
   consecutive read frames (default 3) with its code read in at least ``confirm_frames`` of
   them and holding more than half of its votes, so a card first seen through a misread is not
   shown under the wrong code and then recoded; or after twice that many frames when its code
   leads the votes; or, whatever the votes, after ``max(2 * confirm_frames, vote_window)``
   frames (a card that cannot be read is shown, as uncertain). A tentative track missed once
   is deleted (the streak is broken), so a one-frame ghost never shows.
4. **Dropping.** A shown track missed in a read frame stays shown (with its last box) and is
   deleted once missed in ``drop_after`` consecutive read frames (default 8).
5. **Codes by weighted vote, with hysteresis.** Each reading votes for its code with its
   confidence (at least ``min_vote_weight``). A tentative track takes the code with the most
   weight among its last ``vote_window`` readings (default 24). A *shown* track keeps its code
   until either (a) the code has no vote left among the last ``vote_window`` readings (the card
   was replaced: a bounded delay of ``vote_window`` read frames, whatever the new card's
   confidence), or (b) another code holds more than ``switch_ratio`` (default 3) times its
   weight among the last ``memory`` readings (default 64) and is mostly read as certain. A
   reader that wavers between two codes, even half and half and in runs of a dozen frames,
   thus does not flip the display. Its *support* is the share of the last ``vote_window``
   readings that give its code and are certain (not flagged uncertain by the reader). The
   track turns *uncertain* when its support falls below ``uncertain_below`` (default 1/3) and
   certain again only when it rises above ``certain_above`` (default 1/2): the gap keeps the
   flag, and so a hand's status, from flickering. Its confidence is the mean confidence of the
   last ``vote_window`` readings that give its code.
6. **Cards shown** (:attr:`CardTracker.shown`, :func:`merge_shown`): shown tracks of one code
   that are linked (corners of one card) or whose boxes intersect (a card's box and one of
   its corners) are one card, with the union of their boxes, under the smallest track id.

7. **The deck in play** (:func:`decode_tracks`): the cards shown are decoded together under
   the deck, as a photo's cards are (:mod:`vision.decoding`), from their votes: one card of a
   one-deck game is shown at most once, and never a card the deck lacks.

Frames that are not read (the pipeline may read every k-th frame) do not touch the tracker:
``drop_after``, ``confirm_frames`` and the windows count read frames. Tracks come back ordered
by id, that is by first sighting, so the order of the cards does not change from frame to
frame.

A track's settings, its frozen view and its voting state live in :mod:`vision.tracks`;
:mod:`vision.flicker` measures the result: changes of shown codes per minute.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES
from rules.decks import Deck
from vision.decoding import deck_table, decode_cards
from vision.detections import CardReading, Reading, ReadingFlag
from vision.tracks import Box, Track, TrackerError, TrackerSettings, TrackState

__all__ = [
    "CardTracker",
    "Track",
    "TrackerError",
    "TrackerSettings",
    "decode_tracks",
    "merge_shown",
    "tracks_to_reading",
]


_Array = NDArray[np.float64]


def _boxes(boxes: Iterable[Box]) -> _Array:
    """An (N, 4) float array of xyxy boxes."""
    return np.array(list(boxes), np.float64).reshape(-1, 4)


def _sizes(boxes: _Array) -> _Array:
    sizes: _Array = np.maximum(boxes[:, 2:] - boxes[:, :2], 0).max(axis=1)
    return np.maximum(sizes, 1e-6)


def _areas(boxes: _Array) -> _Array:
    sides = np.maximum(boxes[:, 2:] - boxes[:, :2], 0)
    areas: _Array = sides[:, 0] * sides[:, 1]
    return areas


def _centres(boxes: _Array) -> _Array:
    centres: _Array = (boxes[:, :2] + boxes[:, 2:]) / 2
    return centres


def _intersections(first: _Array, second: _Array) -> _Array:
    """(N, M) areas of intersection of each box of ``first`` with each of ``second``."""
    width = np.minimum(first[:, None, 2], second[None, :, 2]) - np.maximum(
        first[:, None, 0], second[None, :, 0]
    )
    height = np.minimum(first[:, None, 3], second[None, :, 3]) - np.maximum(
        first[:, None, 1], second[None, :, 1]
    )
    areas: _Array = np.maximum(width, 0) * np.maximum(height, 0)
    return areas


def _intersection(first: Box, second: Box) -> float:
    width = min(first[2], second[2]) - max(first[0], second[0])
    height = min(first[3], second[3]) - max(first[1], second[1])
    return width * height if width > 0 and height > 0 else 0.0


def merge_shown(tracks: Iterable[Track]) -> tuple[Track, ...]:
    """The cards to show: the shown ``tracks``, with those of one code that are linked or whose
    boxes intersect made one card (union box, smallest id, highest confidence, uncertain only
    when all of them are, votes of the smallest id); ordered by id."""
    shown = sorted((track for track in tracks if track.shown), key=lambda t: t.track_id)
    parent = list(range(len(shown)))

    def root(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    for i, first in enumerate(shown):
        for j in range(i + 1, len(shown)):
            second = shown[j]
            if first.code == second.code and (
                second.track_id in first.links
                or first.track_id in second.links
                or _intersection(first.box_xyxy, second.box_xyxy) > 0
            ):
                parent[root(j)] = root(i)
    groups: dict[int, list[Track]] = {}
    for index, track in enumerate(shown):
        groups.setdefault(root(index), []).append(track)
    cards = []
    for members in groups.values():
        first = members[0]
        if len(members) == 1:
            cards.append(first)
            continue
        x1s, y1s, x2s, y2s = zip(*(track.box_xyxy for track in members), strict=True)
        cards.append(
            Track(
                track_id=first.track_id,
                code=first.code,
                box_xyxy=(min(x1s), min(y1s), max(x2s), max(y2s)),
                confidence=max(track.confidence for track in members),
                uncertain=all(track.uncertain for track in members),
                shown=True,
                hits=max(track.hits for track in members),
                missed=min(track.missed for track in members),
                age=max(track.age for track in members),
                votes=first.votes,
                links=tuple(sorted({id for track in members for id in track.links})),
                members=tuple(track.track_id for track in members),
                index_px=max(track.index_px for track in members),
                corners=sum(track.corners for track in members),
            )
        )
    return tuple(sorted(cards, key=lambda card: card.track_id))


_CLASS_INDEX = {code: index for index, code in enumerate(CARD_CLASSES)}


def decode_tracks(
    cards: Sequence[Track], deck: Deck, certain_above: float = 0.5
) -> tuple[Track, ...]:
    """The cards shown (:attr:`CardTracker.shown`) decoded together under ``deck``.

    Each card's distribution is its votes: the number of its recent readings of each code,
    over one more than the most votes any of the ``cards`` holds (a card followed longer is
    surer), times its confidence; its own code counts one vote more than any other code that
    leads it (the tracker's hysteresis may keep a code that no longer leads), so that with no
    conflict every card keeps its code. :func:`vision.decoding.decode_cards` then chooses the
    codes (only codes a card was read as): when two cards claim one copy, the card that would
    lose the most by giving it up (its votes for the code against its next code's) keeps it,
    and the other falls back to its next voted code the deck still holds, shown uncertain
    unless that code holds more than ``certain_above`` of its votes (its confidence is then
    that share). A card with no such code left keeps its
    likeliest voted code of the deck, uncertain; a card never read as a card of the deck is
    not shown. Order and ids are kept; a card that keeps its code is returned unchanged.
    """
    if not cards:
        return ()
    table = deck_table(deck)
    own = np.array([_CLASS_INDEX.get(card.code, -1) for card in cards], np.intp)
    if (own >= 0).all() and table.allowed[own].all():
        used = np.bincount(table.limit_of[own], minlength=len(table.capacity))
        if (used <= table.capacity).all():  # each card's own code leads its row: all kept
            return tuple(cards)
    rows = np.zeros((len(cards), len(CARD_CLASSES)))
    longest = max(len(card.votes) for card in cards) + 1  # (a code's weight may be one more)
    tallies = []
    for row, card in zip(rows, cards, strict=True):
        counts = Counter(code for code in card.votes if code in _CLASS_INDEX)
        tallies.append((counts, max(len(card.votes), 1)))
        weights = dict(counts)
        if card.code in _CLASS_INDEX:
            leader = max((n for code, n in counts.items() if code != card.code), default=0)
            weights[card.code] = max(counts[card.code], leader + 1)
        for code, n in weights.items():
            row[_CLASS_INDEX[code]] = n / longest
        row *= max(card.confidence, 0.05)
    decoded = decode_cards(rows, deck, prior=False, only_read=True)
    shown = []
    for card, code, placed, (counts, total) in zip(
        cards, decoded.codes.tolist(), decoded.placed.tolist(), tallies, strict=True
    ):
        if code < 0:
            continue
        name = CARD_CLASSES[code]
        if not placed:
            kept = card.uncertain and name == card.code
            shown.append(card if kept else replace(card, code=name, uncertain=True))
        elif name == card.code:
            shown.append(card)
        else:
            share = counts[name] / total
            shown.append(
                replace(card, code=name, confidence=share, uncertain=share <= certain_above)
            )
    return tuple(shown)


class CardTracker:
    """Follows the cards of one video; feed it each read frame with :meth:`update`.

    Not thread-safe: one tracker per video stream (it holds the stream's state).
    """

    def __init__(self, settings: TrackerSettings | None = None) -> None:
        self.settings = settings or TrackerSettings()
        self._states: list[TrackState] = []
        self._next_id = 0
        self._frames = 0
        self._tracks: tuple[Track, ...] | None = None
        self._shown: tuple[Track, ...] | None = None

    @property
    def frames(self) -> int:
        """How many read frames the tracker has seen."""
        return self._frames

    def reset(self) -> None:
        """Forget every track (a new scene); ids keep counting up."""
        self._states.clear()
        self._frames = 0
        self._tracks = self._shown = None

    def _associate(self, cards: Sequence[CardReading], boxes: _Array) -> list[tuple[int, int]]:
        """(state index, card index) pairs, cheapest first, each side used once (rule 1)."""
        settings = self.settings
        tracked = _boxes(state.box for state in self._states)
        sizes_t, sizes_c = _sizes(tracked)[:, None], _sizes(boxes)[None, :]
        larger, smaller = np.maximum(sizes_t, sizes_c), np.minimum(sizes_t, sizes_c)
        overlap = _intersections(tracked, boxes) / np.maximum(
            np.minimum(_areas(tracked)[:, None], _areas(boxes)[None, :]), 1e-9
        )
        centres_t, centres_c = _centres(tracked), _centres(boxes)
        distance = (
            np.hypot(
                centres_t[:, None, 0] - centres_c[None, :, 0],
                centres_t[:, None, 1] - centres_c[None, :, 1],
            )
            / smaller
        )
        allowed = (larger <= settings.rescale_limit * smaller) & (
            (overlap >= settings.min_overlap) | (distance <= settings.max_center_distance)
        )
        other_code = np.array(
            [[card.code != state.code for card in cards] for state in self._states], bool
        ).reshape(allowed.shape)
        cost = (1.0 - overlap) + distance + settings.code_penalty * other_code
        rows, columns = np.nonzero(allowed)
        order = np.lexsort((columns, rows, cost[rows, columns]))  # cost, then older, earlier
        used_states: set[int] = set()
        used_cards: set[int] = set()
        pairs = []
        for s, c in zip(rows[order].tolist(), columns[order].tolist(), strict=True):
            if s in used_states or c in used_cards:
                continue
            used_states.add(s)
            used_cards.add(c)
            pairs.append((s, c))
        return pairs

    def _covers(self, cards: Sequence[CardReading], boxes: _Array) -> NDArray[np.int8]:
        """(tracks, cards) array: 0 when the card does not cover the track's box; 1 when it
        does (see the module docstring); 2 when the box is also one of its corners (it touches
        the card's border)."""
        settings = self.settings
        tracked = _boxes(state.box for state in self._states)
        several = np.array([card.corners >= 2 for card in cards], bool)[None, :]
        sizes, areas = _sizes(tracked)[:, None], _areas(tracked)[:, None]
        covered = (
            several
            & (areas > 0)
            & (_sizes(boxes)[None, :] > settings.rescale_limit * sizes)
            & (_intersections(tracked, boxes) >= settings.cover_inside * areas)
        )
        gaps = np.abs(tracked[:, None, :] - boxes[None, :, :])
        touches = (gaps <= settings.cover_touch * sizes[:, :, None]).any(axis=2)
        relations: NDArray[np.int8] = covered.astype(np.int8) * (1 + touches.astype(np.int8))
        return relations

    def update(self, reading: Reading | Iterable[CardReading]) -> tuple[Track, ...]:
        """Match one read frame's cards to the tracks; every track afterwards, ordered by id."""
        cards = tuple(reading.cards if isinstance(reading, Reading) else reading)
        self._frames += 1
        boxes = _boxes(card.box_xyxy for card in cards)
        pairs = self._associate(cards, boxes) if cards and self._states else []
        seen = {s for s, _ in pairs}
        used = {c for _, c in pairs}
        corners: dict[int, list[TrackState]] = {c: [self._states[s]] for s, c in pairs}
        for s, c in pairs:
            self._states[s].seen(cards[c])
        if cards and self._states:
            relations = self._covers(cards, boxes)
            for s, c in zip(*np.nonzero(relations), strict=True):
                used.add(int(c))
                if relations[s, c] == 2:
                    corners.setdefault(int(c), []).append(self._states[s])
            for s in np.nonzero(relations.any(axis=1))[0].tolist():
                if s not in seen:  # seen by the first card that has it as a corner, if any
                    seen.add(s)
                    row = relations[s]
                    corner = np.nonzero(row == 2)[0]
                    card = cards[int(corner[0])] if len(corner) else None
                    self._states[s].seen(card, move_box=False)
        for c, states in corners.items():
            if cards[c].corners >= 2 and len(states) >= 2:
                ids = {state.track_id for state in states}
                for state in states:
                    state.links |= ids - {state.track_id}
        kept: list[TrackState] = []
        for s, state in enumerate(self._states):
            if s not in seen:
                state.missing()
                if not state.shown or state.missed >= self.settings.drop_after:
                    continue
            kept.append(state)
        alive = {state.track_id for state in kept}
        for state in kept:
            state.links &= alive
        for c, card in enumerate(cards):
            if c not in used:
                kept.append(TrackState(self._next_id, card, self.settings))
                self._next_id += 1
        self._states = sorted(kept, key=lambda state: state.track_id)
        self._tracks = self._shown = None
        return self.tracks

    @property
    def tracks(self) -> tuple[Track, ...]:
        """Every live track (tentative and shown), ordered by id."""
        if self._tracks is None:
            self._tracks = tuple(state.snapshot() for state in self._states)
        return self._tracks

    @property
    def shown(self) -> tuple[Track, ...]:
        """The cards to show: the shown tracks, a card's corners made one (see
        :func:`merge_shown`), ordered by id."""
        if self._shown is None:
            self._shown = merge_shown(self.tracks)
        return self._shown


def tracks_to_reading(
    tracks: Iterable[Track], size_wh: tuple[int, int], flags: ReadingFlag = ReadingFlag.NONE
) -> Reading:
    """A reading made of the shown tracks (for scoring the table as if it were one photo).

    Give it the cards of :attr:`CardTracker.shown`. ``flags`` carries the frame's UNREADABLE
    flag if any; LOW_CONFIDENCE and DUPLICATE are recomputed from the tracks.
    """
    cards = tuple(track.as_card() for track in tracks if track.shown)
    flags &= ReadingFlag.UNREADABLE
    if any(card.uncertain for card in cards):
        flags |= ReadingFlag.LOW_CONFIDENCE
    certain = [card.code for card in cards if not card.uncertain]
    if len(certain) != len(set(certain)):
        flags |= ReadingFlag.DUPLICATE
    return Reading(size_wh, cards, flags)
