"""One card's track: the tracker's settings, the track as shown, and the state that votes.

A track keeps the recent readings of one card, chooses its code by weighted vote with
hysteresis, flags it uncertain from its support, and decides when it is shown: rules 3 to 5 of
:mod:`vision.tracking`, which pairs readings with tracks, covers and merges them.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from itertools import islice

import numpy as np

from vision.detections import CardReading

__all__ = ["Box", "Track", "TrackState", "TrackerError", "TrackerSettings"]

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


class TrackState:
    """Mutable state of one track: its readings, votes, code, flags and streaks (held by the
    tracker, one per track; :meth:`snapshot` gives the frozen :class:`Track`)."""

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
