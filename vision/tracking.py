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

Frames that are not read (the pipeline may read every k-th frame) do not touch the tracker:
``drop_after``, ``confirm_frames`` and the windows count read frames. Tracks come back ordered
by id, that is by first sighting, so the order of the cards does not change from frame to
frame.

:class:`FlickerMeter` measures the result: changes of shown codes per minute.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice

import numpy as np
from numpy.typing import NDArray

from vision.detections import CardReading, Reading, ReadingFlag

__all__ = [
    "CardTracker",
    "FlickerCount",
    "FlickerMeter",
    "Track",
    "TrackerError",
    "TrackerSettings",
    "merge_shown",
    "tracks_to_reading",
]

Box = tuple[float, float, float, float]


class TrackerError(ValueError):
    """Tracker settings out of range."""


@dataclass(frozen=True, slots=True)
class TrackerSettings:
    """How the tracker pairs, covers, confirms, drops and votes (see the module docstring)."""

    confirm_frames: int = 3
    """A track is shown after this many consecutive read frames with a sighting."""
    drop_after: int = 8
    """A shown track is deleted after this many consecutive read frames without a sighting."""
    vote_window: int = 24
    """Readings that choose a tentative track's code; a shown track's code absent from them
    is replaced."""
    memory: int = 64
    """Readings that weigh against a change of a shown track's code (at least vote_window)."""
    switch_ratio: float = 3.0
    """A shown track's code changes to one with more than this many times its weight."""
    min_vote_weight: float = 0.05
    """The smallest weight of a vote (a reading's confidence, at least this)."""
    min_overlap: float = 0.3
    """Smallest intersection over the smaller box for a reading to pair with a track."""
    max_center_distance: float = 1.0
    """Largest centre distance, in box sizes (longer side of the smaller box), for a pair."""
    rescale_limit: float = 2.0
    """Largest ratio of sizes for a pair; a several-corner reading more than this many times
    larger than a track may cover it."""
    cover_inside: float = 0.8
    """Share of a track's box inside a several-corner reading for the reading to cover it."""
    cover_touch: float = 0.3
    """A covered track within this many of its sizes of the reading box's border is one of the
    reading's corners."""
    code_penalty: float = 1.0
    """Extra cost of pairing a reading with a track of another code."""
    smoothing: float = 0.5
    """Weight of the new box in the running box (1: no smoothing)."""
    certain_above: float = 0.5
    """An uncertain track turns certain when its support rises above this."""
    uncertain_below: float = 1 / 3
    """A certain track turns uncertain when its support falls below this."""

    def __post_init__(self) -> None:
        checks: tuple[tuple[str, float, bool], ...] = (
            ("confirm_frames", self.confirm_frames, self.confirm_frames >= 1),
            ("drop_after", self.drop_after, self.drop_after >= 1),
            ("vote_window", self.vote_window, self.vote_window >= 1),
            ("memory", self.memory, self.memory >= self.vote_window),
            ("switch_ratio", self.switch_ratio, self.switch_ratio >= 1.0),
            ("min_vote_weight", self.min_vote_weight, 0.0 < self.min_vote_weight <= 1.0),
            ("min_overlap", self.min_overlap, 0.0 < self.min_overlap <= 1.0),
            ("max_center_distance", self.max_center_distance, self.max_center_distance >= 0.0),
            ("rescale_limit", self.rescale_limit, self.rescale_limit >= 1.0),
            ("cover_inside", self.cover_inside, 0.0 < self.cover_inside <= 1.0),
            ("cover_touch", self.cover_touch, self.cover_touch >= 0.0),
            ("code_penalty", self.code_penalty, self.code_penalty >= 0.0),
            ("smoothing", self.smoothing, 0.0 < self.smoothing <= 1.0),
            ("certain_above", self.certain_above, 0.0 <= self.certain_above < 1.0),
            (
                "uncertain_below",
                self.uncertain_below,
                0.0 <= self.uncertain_below <= self.certain_above,
            ),
        )
        for name, value, ok in checks:
            if not ok:
                raise TrackerError(f"tracker setting {name}={value!r} is out of range")


@dataclass(frozen=True, slots=True)
class Track:
    """A card followed across frames, as shown at one moment.

    ``hits`` is the current streak of read frames with a sighting, ``missed`` the current
    streak without; ``shown`` is True once confirmed (until deleted); ``votes`` holds the codes
    of the last ``vote_window`` readings, oldest first; ``links`` the ids of the tracks found to
    be other corners of its card. A card of :attr:`CardTracker.shown` may stand for several
    tracks: ``members`` lists their ids (its own first).
    """

    track_id: int
    code: str
    box_xyxy: Box
    confidence: float
    uncertain: bool
    shown: bool
    hits: int
    missed: int
    age: int
    votes: tuple[str, ...] = field(compare=False)
    links: tuple[int, ...] = field(default=(), compare=False)
    members: tuple[int, ...] = field(default=(), compare=False)
    index_px: float = field(default=0.0, compare=False)
    """The median ``index_px`` of the recent readings of its code (0 when none gave one)."""
    corners: int = field(default=1, compare=False)
    """The corners of its latest reading of its code (a card of several tracks: their sum)."""

    @property
    def center_xy(self) -> tuple[float, float]:
        """Centre of the (smoothed) box."""
        x1, y1, x2, y2 = self.box_xyxy
        return (x1 + x2) / 2, (y1 + y2) / 2

    def as_card(self) -> CardReading:
        """The track as a card reading (code by vote, smoothed box, its readings' index size
        and corners, so that grouping sees the card as a photo's reading shows it)."""
        others = Counter(code for code in self.votes if code != self.code)
        total = max(len(self.votes), 1)
        alternatives = tuple(
            (code, round(count / total, 4)) for code, count in others.most_common(2)
        )
        return CardReading(
            code=self.code,
            confidence=self.confidence,
            box_xyxy=self.box_xyxy,
            uncertain=self.uncertain,
            alternatives=alternatives,
            corners=self.corners,
            index_px=self.index_px,
        )

    def to_dict(self) -> dict[str, object]:
        """JSON form: id, code, box, confidence, uncertain, shown."""
        return {
            "id": self.track_id,
            "card": self.code,
            "box": [round(value, 1) for value in self.box_xyxy],
            "confidence": round(self.confidence, 4),
            "uncertain": self.uncertain,
            "shown": self.shown,
        }


class _State:
    """Mutable state of one track (private to the tracker, one per track)."""

    __slots__ = (
        "age",
        "box",
        "code",
        "hits",
        "links",
        "memory_count",
        "memory_weight",
        "missed",
        "readings",
        "settings",
        "shown",
        "track_id",
        "uncertain",
    )

    def __init__(self, track_id: int, card: CardReading, settings: TrackerSettings) -> None:
        self.settings = settings
        self.track_id = track_id
        self.box: Box = card.box_xyxy
        self.code = card.code
        self.readings: deque[CardReading] = deque(maxlen=settings.memory)
        self.memory_weight: dict[str, float] = {}
        self.memory_count: Counter[str] = Counter()
        self.remember(card)
        self.hits = 1
        self.missed = 0
        self.age = 1
        self.links: set[int] = set()
        self.shown = False
        self.uncertain = True
        self.vote()

    def recent(self) -> list[CardReading]:
        """The last ``vote_window`` readings, oldest first."""
        skip = max(len(self.readings) - self.settings.vote_window, 0)
        return list(islice(self.readings, skip, None))

    def seen(self, card: CardReading | None, move_box: bool = True) -> None:
        """A sighting: ``card`` (if any) votes and, when ``move_box``, moves the box."""
        if card is not None:
            if move_box:
                alpha = self.settings.smoothing
                x1, y1, x2, y2 = self.box
                n1, n2, n3, n4 = card.box_xyxy
                self.box = (
                    x1 + alpha * (n1 - x1),
                    y1 + alpha * (n2 - y1),
                    x2 + alpha * (n3 - x2),
                    y2 + alpha * (n4 - y2),
                )
            self.remember(card)
        self.hits += 1
        self.missed = 0
        self.age += 1
        self.vote()

    def missing(self) -> None:
        """A read frame without a sighting."""
        self.age += 1
        self.hits = 0
        self.missed += 1

    def weight(self, reading: CardReading) -> float:
        """A reading's vote: its confidence, at least ``min_vote_weight``."""
        return max(reading.confidence, self.settings.min_vote_weight)

    def remember(self, card: CardReading) -> None:
        """Keep ``card`` (the oldest reading leaves a full memory), with running sums."""
        if len(self.readings) == self.readings.maxlen:
            oldest = self.readings[0]
            self.memory_count[oldest.code] -= 1
            if self.memory_count[oldest.code]:
                self.memory_weight[oldest.code] -= self.weight(oldest)
            else:
                del self.memory_count[oldest.code], self.memory_weight[oldest.code]
        self.readings.append(card)
        self.memory_count[card.code] += 1
        self.memory_weight[card.code] = self.memory_weight.get(card.code, 0.0) + self.weight(card)

    def vote(self) -> None:
        """Update the code by weighted vote, the uncertain flag, and whether it is shown."""
        settings = self.settings
        recent = self.recent()
        weights: dict[str, float] = {}
        counts: Counter[str] = Counter()
        certain: Counter[str] = Counter()
        for reading in recent:
            weights[reading.code] = weights.get(reading.code, 0.0) + self.weight(reading)
            counts[reading.code] += 1
            if not reading.uncertain:
                certain[reading.code] += 1
        # the heaviest code; on a tie the current one, then the first in text order
        best = min(weights, key=lambda code: (-weights[code], code != self.code, code))
        if best != self.code:
            if not self.shown:
                switch = weights[best] > weights.get(self.code, 0.0)
            else:
                remembered = self.memory_weight
                sure = certain[best] > settings.certain_above * counts[best]
                if self.code not in weights:  # not read lately: the card was replaced?
                    switch = sure or self.code not in remembered
                else:
                    switch = (
                        sure and remembered[best] > settings.switch_ratio * remembered[self.code]
                    )
            if switch:
                self.code = best
        count = len(recent)
        support = certain[self.code] / count
        if self.uncertain and support > settings.certain_above:
            self.uncertain = False
        elif not self.uncertain and support < settings.uncertain_below:
            self.uncertain = True
        if not self.shown:
            confirm, votes = settings.confirm_frames, counts[self.code]
            runner_up = max((n for code, n in counts.items() if code != self.code), default=0)
            self.shown = (
                (self.hits >= confirm and votes >= confirm and 2 * votes > count)
                or (self.hits >= 2 * confirm and votes > runner_up)
                or self.hits >= max(2 * confirm, settings.vote_window)
            )

    def snapshot(self) -> Track:
        recent = self.recent()
        same = [reading for reading in recent if reading.code == self.code]
        agreeing = [reading.confidence for reading in same]
        sizes = [reading.index_px for reading in same if reading.index_px > 0]
        return Track(
            track_id=self.track_id,
            code=self.code,
            box_xyxy=self.box,
            confidence=sum(agreeing) / len(agreeing) if agreeing else 0.0,
            uncertain=self.uncertain,
            shown=self.shown,
            hits=self.hits,
            missed=self.missed,
            age=self.age,
            votes=tuple(reading.code for reading in recent),
            links=tuple(sorted(self.links)),
            members=(self.track_id,),
            index_px=float(np.median(sizes)) if sizes else 0.0,
            corners=same[-1].corners if same else 1,
        )


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


class CardTracker:
    """Follows the cards of one video; feed it each read frame with :meth:`update`.

    Not thread-safe: one tracker per video stream (it holds the stream's state).
    """

    def __init__(self, settings: TrackerSettings | None = None) -> None:
        self.settings = settings or TrackerSettings()
        self._states: list[_State] = []
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
        corners: dict[int, list[_State]] = {c: [self._states[s]] for s, c in pairs}
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
        kept: list[_State] = []
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
                kept.append(_State(self._next_id, card, self.settings))
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


@dataclass(frozen=True, slots=True)
class FlickerCount:
    """Flicker over a run of frames: changes counted, and per minute at the video's rate.

    ``code_changes``: a shown track's code changed between consecutive frames.
    ``set_changes``: the multiset of shown codes differed from the previous frame (a card shown,
    hidden, or recoded); the first frame's cards count as changes from nothing.
    """

    frames: int
    fps: float
    code_changes: int
    set_changes: int

    @property
    def minutes(self) -> float:
        """Length of the run in minutes."""
        return self.frames / self.fps / 60.0 if self.fps > 0 else 0.0

    def per_minute(self, count: int) -> float:
        """``count`` per minute of video."""
        return count / self.minutes if self.minutes > 0 else 0.0

    def to_dict(self) -> dict[str, float | int]:
        """JSON form with the per-minute rates."""
        return {
            "frames": self.frames,
            "fps": self.fps,
            "code_changes": self.code_changes,
            "code_changes_per_minute": round(self.per_minute(self.code_changes), 2),
            "set_changes": self.set_changes,
            "set_changes_per_minute": round(self.per_minute(self.set_changes), 2),
        }


class FlickerMeter:
    """Counts changes of what is shown, frame after frame (see :class:`FlickerCount`)."""

    def __init__(self, fps: float) -> None:
        self.fps = fps
        self._frames = 0
        self._code_changes = 0
        self._set_changes = 0
        self._codes: dict[int, str] = {}
        self._multiset: Counter[str] = Counter()

    def add(self, shown: Iterable[tuple[int, str]]) -> None:
        """One frame's shown cards as (track id, code) pairs (use ``-1 - i`` ids for raw cards)."""
        codes = dict(shown)
        self._frames += 1
        self._code_changes += sum(
            1 for key, code in codes.items() if key in self._codes and self._codes[key] != code
        )
        multiset = Counter(codes.values())
        if multiset != self._multiset:
            self._set_changes += 1
        self._codes, self._multiset = codes, multiset

    def add_tracks(self, tracks: Iterable[Track]) -> None:
        """One frame's tracks (only the shown ones count)."""
        self.add((track.track_id, track.code) for track in tracks if track.shown)

    def add_reading(self, reading: Reading) -> None:
        """One frame's raw reading, untracked: cards keyed by their position in the reading."""
        self.add((-1 - index, card.code) for index, card in enumerate(reading.cards))

    @property
    def count(self) -> FlickerCount:
        """The changes counted so far."""
        return FlickerCount(self._frames, self.fps, self._code_changes, self._set_changes)
