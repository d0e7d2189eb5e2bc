"""Cards tracked across video frames, so that a still table shows still codes.

One :class:`CardTracker` follows the cards of one video. Each read frame's
:class:`~vision.detections.Reading` is matched to the tracks (:meth:`CardTracker.update`):

1. **Association.** A reading and a track may pair when their boxes overlap (intersection over
   the smaller box at least ``min_overlap``: a reader box covers one corner index or the union of
   a card's corners, so one may lie inside the other) or when their centres lie within
   ``max_center_distance`` box sizes. Each allowed pair costs ``(1 - overlap) + distance / size``
   plus ``code_penalty`` when the reading's code is not the track's code; pairs are taken
   greedily, cheapest first (deterministic: ties go to the older track, then the earlier reading).
   Readings left over start new tracks.
2. **Confirmation.** A new track is *tentative*. It is *shown* once matched in
   ``confirm_frames`` consecutive read frames (default 3) with its code read in at least
   ``confirm_frames`` of them and holding more than half of its votes, so a card first seen
   through a misread is not shown under the wrong code and then recoded; or after twice that
   many frames when its code leads the votes; or, whatever the votes, after
   ``max(2 * confirm_frames, vote_window)`` frames (a card that cannot be read is shown, as
   uncertain). A tentative track missed once is deleted (the streak is broken), so a one-frame
   ghost never shows.
3. **Dropping.** A shown track missed in a read frame stays shown (with its last box) and is
   deleted once missed in ``drop_after`` consecutive read frames (default 5).
4. **Codes by vote.** A track keeps the codes of its last ``vote_window`` readings (default 9).
   Its code is the one with the most votes; a challenger replaces a shown track's code only
   with ``switch_margin`` votes more (default 2; a tentative track's, with one more), so one
   misread never flips it, nor do two that happen to agree; a card really replaced in place
   takes over after 6 frames with the defaults. Its *support* is the share of the window's
   readings that give its code and are certain (not flagged uncertain by the reader). The
   track turns *uncertain* when its support falls below ``uncertain_below`` (default 1/3) and
   certain again only when it rises above ``certain_above`` (default 1/2): the gap keeps the
   flag, and so a hand's status, from flickering. Its confidence is the mean confidence of the
   readings that give its code.
5. **Boxes** are smoothed: ``box = (1 - smoothing) * box + smoothing * new box``.

Frames that are not read (the pipeline may read every k-th frame) do not touch the tracker:
``drop_after`` and ``confirm_frames`` count read frames. Tracks come back ordered by id, that
is by first sighting, so the order of the cards does not change from frame to frame.

:class:`FlickerMeter` measures the result: changes of shown codes per minute.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from vision.detections import CardReading, Reading, ReadingFlag

__all__ = [
    "CardTracker",
    "FlickerCount",
    "FlickerMeter",
    "Track",
    "TrackerError",
    "TrackerSettings",
    "tracks_to_reading",
]

Box = tuple[float, float, float, float]


class TrackerError(ValueError):
    """Tracker settings out of range."""


@dataclass(frozen=True, slots=True)
class TrackerSettings:
    """How the tracker pairs, confirms, drops and votes (see the module docstring)."""

    confirm_frames: int = 3
    """A track is shown after this many consecutive read frames with a match."""
    drop_after: int = 5
    """A shown track is deleted after this many consecutive read frames without a match."""
    vote_window: int = 9
    """How many recent readings vote on a track's code."""
    min_overlap: float = 0.3
    """Smallest intersection over the smaller box for a reading to pair with a track."""
    max_center_distance: float = 1.0
    """Largest centre distance, in box sizes (longer side of the smaller box), for a pair."""
    switch_margin: int = 2
    """A challenger code replaces a track's code only with this many votes more."""
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
            ("min_overlap", self.min_overlap, 0.0 < self.min_overlap <= 1.0),
            ("max_center_distance", self.max_center_distance, self.max_center_distance >= 0.0),
            ("switch_margin", self.switch_margin, self.switch_margin >= 1),
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

    ``hits`` is the current streak of read frames with a match, ``missed`` the current streak
    without; ``shown`` is True once confirmed (until deleted); ``votes`` holds the codes of the
    recent readings, oldest first.
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

    @property
    def center_xy(self) -> tuple[float, float]:
        """Centre of the (smoothed) box."""
        x1, y1, x2, y2 = self.box_xyxy
        return (x1 + x2) / 2, (y1 + y2) / 2

    def as_card(self) -> CardReading:
        """The track as a card reading (code by vote, smoothed box)."""
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
        self.readings: deque[CardReading] = deque([card], maxlen=settings.vote_window)
        self.hits = 1
        self.missed = 0
        self.age = 1
        self.shown = False
        self.uncertain = True
        self.vote()

    def vote(self) -> None:
        """Update the code by vote, the uncertain flag, and whether the track is shown."""
        settings = self.settings
        counts = Counter(reading.code for reading in self.readings)
        best, best_count = min(counts.items(), key=lambda item: (-item[1], item[0]))
        margin = settings.switch_margin if self.shown else 1
        if best != self.code and best_count >= counts.get(self.code, 0) + margin:
            self.code = best
        count = len(self.readings)
        support = sum(1 for r in self.readings if r.code == self.code and not r.uncertain) / count
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
        agreeing = [reading for reading in self.readings if reading.code == self.code]
        confidence = sum(r.confidence for r in agreeing) / len(agreeing) if agreeing else 0.0
        return Track(
            track_id=self.track_id,
            code=self.code,
            box_xyxy=self.box,
            confidence=confidence,
            uncertain=self.uncertain,
            shown=self.shown,
            hits=self.hits,
            missed=self.missed,
            age=self.age,
            votes=tuple(reading.code for reading in self.readings),
        )


def _overlap(first: Box, second: Box) -> float:
    """Intersection over the smaller box's area (1.0 when one box lies inside the other)."""
    width = min(first[2], second[2]) - max(first[0], second[0])
    height = min(first[3], second[3]) - max(first[1], second[1])
    if width <= 0 or height <= 0:
        return 0.0
    smaller = min(
        (first[2] - first[0]) * (first[3] - first[1]),
        (second[2] - second[0]) * (second[3] - second[1]),
    )
    return width * height / smaller if smaller > 0 else 0.0


def _size(box: Box) -> float:
    return max(box[2] - box[0], box[3] - box[1], 1e-6)


def _center(box: Box) -> tuple[float, float]:
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


class CardTracker:
    """Follows the cards of one video; feed it each read frame with :meth:`update`.

    Not thread-safe: one tracker per video stream (it holds the stream's state).
    """

    def __init__(self, settings: TrackerSettings | None = None) -> None:
        self.settings = settings or TrackerSettings()
        self._states: list[_State] = []
        self._next_id = 0
        self._frames = 0

    @property
    def frames(self) -> int:
        """How many read frames the tracker has seen."""
        return self._frames

    def reset(self) -> None:
        """Forget every track (a new scene); ids keep counting up."""
        self._states.clear()
        self._frames = 0

    def _pair_cost(self, state: _State, card: CardReading) -> float | None:
        settings = self.settings
        overlap = _overlap(state.box, card.box_xyxy)
        size = min(_size(state.box), _size(card.box_xyxy))
        (ax, ay), (bx, by) = _center(state.box), _center(card.box_xyxy)
        distance = math.hypot(ax - bx, ay - by) / size
        if overlap < settings.min_overlap and distance > settings.max_center_distance:
            return None
        penalty = 0.0 if card.code == state.code else settings.code_penalty
        return (1.0 - overlap) + distance + penalty

    def _associate(self, cards: Sequence[CardReading]) -> list[tuple[int, int]]:
        """(state index, card index) pairs, cheapest first, each side used once."""
        candidates: list[tuple[float, int, int]] = []
        for s, state in enumerate(self._states):
            for c, card in enumerate(cards):
                cost = self._pair_cost(state, card)
                if cost is not None:
                    candidates.append((cost, s, c))
        candidates.sort()
        used_states: set[int] = set()
        used_cards: set[int] = set()
        pairs = []
        for _, s, c in candidates:
            if s in used_states or c in used_cards:
                continue
            used_states.add(s)
            used_cards.add(c)
            pairs.append((s, c))
        return pairs

    def update(self, reading: Reading | Iterable[CardReading]) -> tuple[Track, ...]:
        """Match one read frame's cards to the tracks; every track afterwards, ordered by id."""
        cards = tuple(reading.cards if isinstance(reading, Reading) else reading)
        settings = self.settings
        self._frames += 1
        pairs = self._associate(cards)
        matched_states = {s for s, _ in pairs}
        matched_cards = {c for _, c in pairs}
        alpha = settings.smoothing
        for s, c in pairs:
            state, card = self._states[s], cards[c]
            state.box = tuple(  # type: ignore[assignment]
                (1 - alpha) * old + alpha * new
                for old, new in zip(state.box, card.box_xyxy, strict=True)
            )
            state.readings.append(card)
            state.hits += 1
            state.missed = 0
            state.age += 1
            state.vote()
        kept: list[_State] = []
        for s, state in enumerate(self._states):
            if s not in matched_states:
                state.age += 1
                state.hits = 0
                state.missed += 1
                if not state.shown or state.missed >= settings.drop_after:
                    continue
            kept.append(state)
        for c, card in enumerate(cards):
            if c not in matched_cards:
                state = _State(self._next_id, card, settings)
                self._next_id += 1
                kept.append(state)
        self._states = sorted(kept, key=lambda state: state.track_id)
        return self.tracks

    @property
    def tracks(self) -> tuple[Track, ...]:
        """Every live track (tentative and shown), ordered by id."""
        return tuple(state.snapshot() for state in self._states)

    @property
    def shown(self) -> tuple[Track, ...]:
        """The tracks to show, ordered by id."""
        return tuple(state.snapshot() for state in self._states if state.shown)


def tracks_to_reading(
    tracks: Iterable[Track], size_wh: tuple[int, int], flags: ReadingFlag = ReadingFlag.NONE
) -> Reading:
    """A reading made of the shown tracks (for scoring the table as if it were one photo).

    ``flags`` carries the frame's UNREADABLE flag if any; LOW_CONFIDENCE and DUPLICATE are
    recomputed from the tracks.
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
