"""The live pipeline, one video frame at a time: read, track, score the table.

:class:`LivePipeline` takes BGR frames in order (:meth:`LivePipeline.process`) and gives back a
:class:`LiveFrame`: the frame's own reading (when it was read), the card tracks, and the table
scored from the *shown* tracks (``vision.tracking``), never from a single frame's raw reading,
so a misread in one frame neither flickers a code nor a score.

- **Which frames are read.** ``LiveSettings.read_every = k`` reads every k-th frame (the first
  frame is always read) and carries the tracks through the others. ``read_every = 0`` chooses k
  by itself: from running means of the reader's time and of the rest of a frame's work, the
  smallest k whose average cost per frame fits ``1 / target_fps``, capped at ``max_read_every``.
- **When the table is scored.** Scoring groups the cards into hands (by distance) and scores
  them; it is redone only when the shown cards change (a track shown or dropped, a code or its
  uncertainty changed) or a shown card has moved by more than ``rescore_move`` box sizes since
  the last scoring, else the previous result is kept (so box jitter cannot regroup the hands).

Nothing here opens a camera or a window; the ``webcam`` command does (``handreader.commands``).
The reader is anything with ``read(image_bgr) -> Reading`` (the recognizer's ``Reader``, or a
fake in tests). A pipeline holds one stream's state: one pipeline per stream, not shared between
threads.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from handreader.table import TableOptions, TableResult, score_reading
from rules.niuniu_profiles import NIU_PROFILES, NiuProfile, get_profile
from vision.detections import Reading, ReadingFlag
from vision.tracking import CardTracker, Track, TrackerSettings, tracks_to_reading

__all__ = [
    "FrameReader",
    "LiveError",
    "LiveFrame",
    "LivePipeline",
    "LiveSettings",
    "next_profile",
    "table_summary",
]


class LiveError(ValueError):
    """Live settings out of range, or a frame that is not a BGR image."""


class FrameReader(Protocol):
    """What the pipeline needs of a recognizer: ``read(image_bgr) -> Reading``."""

    def read(self, image: NDArray[np.uint8]) -> Reading:
        """The cards in a BGR uint8 image (H, W, 3)."""
        ...


@dataclass(frozen=True, slots=True)
class LiveSettings:
    """Frame skipping and re-scoring (see the module docstring) and the tracker's settings."""

    read_every: int = 1
    """Read every k-th frame; 0 chooses k from the measured times (see the module docstring)."""
    target_fps: float = 25.0
    """The frame rate that ``read_every = 0`` aims for."""
    max_read_every: int = 8
    """The largest k that ``read_every = 0`` may choose."""
    rescore_move: float = 0.5
    """Re-score when a shown card's centre moved more than this many box sizes."""
    tracker: TrackerSettings = field(default_factory=TrackerSettings)

    def __post_init__(self) -> None:
        if self.read_every < 0:
            raise LiveError(f"read_every={self.read_every!r} must be 0 (auto) or more")
        if not self.target_fps > 0:
            raise LiveError(f"target_fps={self.target_fps!r} must be positive")
        if self.max_read_every < 1:
            raise LiveError(f"max_read_every={self.max_read_every!r} must be 1 or more")
        if self.rescore_move < 0:
            raise LiveError(f"rescore_move={self.rescore_move!r} must be 0 or more")


@dataclass(frozen=True, slots=True)
class LiveFrame:
    """What the pipeline made of one frame.

    ``reading`` is this frame's raw reading (None when the frame was not read); ``tracks`` are
    all live tracks ordered by id (``shown`` the confirmed ones); ``table`` is scored from the
    shown tracks; ``read_every`` is the k in force; ``timings_ms`` has ``read`` (when read),
    ``track``, ``score`` and ``total``.
    """

    index: int
    size_wh: tuple[int, int]
    was_read: bool
    reading: Reading | None
    tracks: tuple[Track, ...]
    table: TableResult
    read_every: int
    rescored: bool
    timings_ms: dict[str, float] = field(compare=False)

    @property
    def shown(self) -> tuple[Track, ...]:
        """The confirmed tracks, ordered by id."""
        return tuple(track for track in self.tracks if track.shown)

    def to_dict(self) -> dict[str, object]:
        """JSON form (for a WebSocket client): frame index, tracks shown, table, timings."""
        return {
            "frame": self.index,
            "read": self.was_read,
            "read_every": self.read_every,
            "cards": [track.to_dict() for track in self.shown],
            "table": self.table.to_dict(),
            "ms": {key: round(value, 2) for key, value in self.timings_ms.items()},
        }


def next_profile(current: str | NiuProfile) -> NiuProfile:
    """The profile after ``current`` in the project's list, wrapping round."""
    names = list(NIU_PROFILES)
    name = get_profile(current).name
    return NIU_PROFILES[names[(names.index(name) + 1) % len(names)]]


def table_summary(table: TableResult) -> str:
    """A short line of what the table shows: each hand's cards, score label and status, then the
    players' outcomes and nets. Equal lines mean an unchanged display (used to count flicker)."""
    parts = []
    for hand in table.hands:
        label = hand.hand.label if hand.hand is not None else "-"
        codes = " ".join(card.code for card in hand.cards)
        parts.append(f"{hand.seat}:{hand.role.value}:{codes}:{label}:{hand.status.value}")
    for player in table.players:
        outcome = player.outcome.value if player.outcome is not None else "-"
        net = player.settlement.net if player.settlement is not None else "-"
        parts.append(f"p{player.seat}:{outcome}:{net}")
    if table.winners:
        parts.append("winners:" + ",".join(map(str, table.winners)))
    return " | ".join(parts)


def _check_frame(frame: object) -> NDArray[np.uint8]:
    if (
        not isinstance(frame, np.ndarray)
        or frame.dtype != np.uint8
        or frame.ndim != 3
        or frame.shape[2] != 3
    ):
        shape = getattr(frame, "shape", None)
        dtype = getattr(frame, "dtype", None)
        raise LiveError(f"expected a BGR uint8 frame of shape (H, W, 3), got {shape} {dtype}")
    return frame


class _RunningMean:
    """Exponential running mean (None until the first value)."""

    def __init__(self, weight: float = 0.2) -> None:
        self.weight = weight
        self.value: float | None = None

    def add(self, value: float) -> None:
        if self.value is None:
            self.value = value
        else:
            self.value += self.weight * (value - self.value)


class LivePipeline:
    """Read -> track -> score, frame after frame (see the module docstring)."""

    def __init__(
        self,
        reader: FrameReader,
        options: TableOptions | None = None,
        settings: LiveSettings | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.reader = reader
        self.settings = settings or LiveSettings()
        self._options = options or TableOptions()
        self._clock = clock
        self.tracker = CardTracker(self.settings.tracker)
        self._index = 0
        self._since_read = 0
        self._read_every = max(self.settings.read_every, 1)
        self._read_ms = _RunningMean()
        self._other_ms = _RunningMean()
        self._extra_ms = _RunningMean()
        self._table: TableResult | None = None
        self._scored_key: tuple[tuple[int, str, bool], ...] | None = None
        self._scored_at: dict[int, tuple[float, float, float]] = {}
        self._last_flags = ReadingFlag.NONE

    @property
    def options(self) -> TableOptions:
        """How the table is scored (profile, banker rule, bet, ...)."""
        return self._options

    @options.setter
    def options(self, options: TableOptions) -> None:
        self._options = options
        self._scored_key = None  # score again on the next frame

    def set_profile(self, profile: str | NiuProfile) -> NiuProfile:
        """Score with another profile from the next frame on; returns it."""
        chosen = get_profile(profile)
        self.options = replace(self._options, profile=chosen)
        return chosen

    @property
    def read_every(self) -> int:
        """The k in force: every k-th frame is read."""
        return self._read_every

    def reset(self) -> None:
        """Forget the tracks and the scored table (a new scene)."""
        self.tracker.reset()
        self._since_read = 0
        self._table = None
        self._scored_key = None
        self._scored_at = {}

    def _choose_read_every(self) -> None:
        settings = self.settings
        if settings.read_every > 0 or self._read_ms.value is None:
            return
        other = (self._other_ms.value or 0.0) + (self._extra_ms.value or 0.0)
        budget = 1000.0 / settings.target_fps - other
        if budget <= 0:
            self._read_every = settings.max_read_every
            return
        needed = math.ceil(self._read_ms.value / budget - 1e-9)
        self._read_every = min(max(needed, 1), settings.max_read_every)

    def _needs_scoring(self, shown: tuple[Track, ...]) -> bool:
        key = tuple((track.track_id, track.code, track.uncertain) for track in shown)
        if key != self._scored_key or self._table is None:
            return True
        limit = self.settings.rescore_move
        for track in shown:
            x, y, size = self._scored_at[track.track_id]
            cx, cy = track.center_xy
            if math.hypot(cx - x, cy - y) > limit * size:
                return True
        return False

    def _score(self, shown: tuple[Track, ...], size_wh: tuple[int, int]) -> TableResult:
        table = score_reading(tracks_to_reading(shown, size_wh, self._last_flags), self._options)
        self._table = table
        self._scored_key = tuple((track.track_id, track.code, track.uncertain) for track in shown)
        self._scored_at = {
            track.track_id: (
                *track.center_xy,
                max(track.box_xyxy[2] - track.box_xyxy[0], track.box_xyxy[3] - track.box_xyxy[1]),
            )
            for track in shown
        }
        return table

    def process(self, frame: NDArray[np.uint8]) -> LiveFrame:
        """Take the next frame of the stream; see :class:`LiveFrame`."""
        image = _check_frame(frame)
        size_wh = (int(image.shape[1]), int(image.shape[0]))
        started = self._clock()
        timings: dict[str, float] = {}
        was_read = self._index == 0 or self._since_read + 1 >= self._read_every
        reading: Reading | None = None
        if was_read:
            reading = self.reader.read(image)
            read_done = self._clock()
            timings["read"] = (read_done - started) * 1000
            self._read_ms.add(timings["read"])
            self._last_flags = reading.flags
            tracks = self.tracker.update(reading)
            self._since_read = 0
        else:
            read_done = started
            tracks = self.tracker.tracks
            self._since_read += 1
        tracked = self._clock()
        timings["track"] = (tracked - read_done) * 1000
        shown = tuple(track for track in tracks if track.shown)
        rescored = self._needs_scoring(shown)
        table = self._score(shown, size_wh) if rescored else self._table
        assert table is not None  # (scored on the first frame)
        if table.size_wh != size_wh:
            table = self._score(shown, size_wh)
            rescored = True
        finished = self._clock()
        timings["score"] = (finished - tracked) * 1000
        timings["total"] = (finished - started) * 1000
        self._other_ms.add(timings["total"] - timings.get("read", 0.0))
        result = LiveFrame(
            index=self._index,
            size_wh=size_wh,
            was_read=was_read,
            reading=reading,
            tracks=tracks,
            table=table,
            read_every=self._read_every,
            rescored=rescored,
            timings_ms=timings,
        )
        self._index += 1
        self._choose_read_every()
        return result

    def rescore(self, frame: LiveFrame) -> LiveFrame:
        """``frame`` with its table scored again from its shown tracks under the current options
        (after :meth:`set_profile` while paused); reads nothing, moves no track."""
        started = self._clock()
        table = self._score(frame.shown, frame.size_wh)
        timings = {"score": (self._clock() - started) * 1000}
        return replace(frame, table=table, rescored=True, timings_ms=timings)

    def note_overhead(self, milliseconds: float) -> None:
        """Report a frame's work outside the pipeline (drawing, video I/O): ``read_every = 0``
        counts its running mean in the cost of every frame when it chooses k."""
        self._extra_ms.add(milliseconds)
