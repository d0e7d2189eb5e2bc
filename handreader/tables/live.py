"""The live pipeline, one video frame at a time: read, track, score the table.

:class:`LivePipeline` takes BGR frames in order (:meth:`LivePipeline.process`) and gives back a
:class:`LiveFrame`: the frame's own reading (when it was read), the card tracks, and the table
scored from the *shown* tracks (``vision.tracking``), never from a single frame's raw reading,
so a misread in one frame neither flickers a code nor a score.

- **Which frames are read.** ``LiveSettings.read_every = k`` reads every k-th frame (the first
  frame is always read) and carries the tracks through the others. ``read_every = 0`` chooses k
  by itself: from running means of the reader's time and of the rest of a frame's work, the
  smallest k whose average cost per frame fits ``1 / target_fps``, capped at ``max_read_every``
  (a frame costs read / k plus the rest; with the reader in a worker thread,
  ``LiveStream``, the larger of the two).
- **Where the reader runs.** :meth:`LivePipeline.process` reads, tracks and scores in turn;
  ``LiveStream`` reads frame N in a worker thread while the caller draws frame N - 1
  (same results, one frame later).
- **When the table is scored.** Scoring groups the cards into hands (by distance) and scores
  them; it is redone only when the shown cards change (a track shown or dropped, a code or its
  uncertainty changed) or a shown card has moved by more than ``rescore_move`` box sizes since
  the last scoring, else the previous result is kept (so box jitter cannot regroup the hands).
- **Steady hands.** An uncertain track never joins a hand: it is listed as left over until
  it reads for certain (``LiveSettings.uncertain_join`` turns this off), so a phantom reading
  on a wobbling camera cannot make a hand "too many". A new grouping of the cards into hands
  (or a new banker) is shown only once it has held for ``LiveSettings.hold_frames``
  consecutive frames; until then the previous table stays (the first hands are shown at
  once; a card dealt later joins its hand after ``confirm_frames`` + ``hold_frames``). The
  banker's hand stays the banker while a hand of the same cards is on the table, whatever
  the banker rule would pick now. A track must also be read in
  ``TrackerSettings.confirm_frames`` frames before it is shown at all.
- **A locked layout.** :meth:`LivePipeline.lock_layout` turns the hands shown into regions
  (the banker's and each player's), so that from then on the cards are grouped by where they
  lie, not by their geometry: a dealer locks the table once the hands are down.
- **The deck in play.** With ``LiveSettings.in_play`` (or :attr:`LivePipeline.in_play` set
  later), the cards shown are decoded together under that deck before they are scored and
  drawn (:func:`vision.tracking.decode_tracks`): two tracks never show one card of a one-deck
  game for certain, and no track shows a card the deck lacks, whatever each track voted.

Nothing here opens a camera or a window; the ``webcam`` command does (``handreader.cli``).
The reader is anything with ``read(image_bgr) -> Reading`` (the recognizer's ``Reader``, or a
fake in tests). A pipeline holds one stream's state: one pipeline per stream, not shared between
threads (a ``LiveStream``'s worker only calls the reader; ``handreader.tables.live_stream``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol, TypeVar, cast

import numpy as np
from numpy.typing import NDArray

from handreader.tables.grouping import Region
from handreader.tables.layout_lock import LOCK_MARGIN, Layout, layout_of
from handreader.tables.scoring import TableCard, TableOptions, TableResult, score_reading
from rules.decks import Deck
from rules.niuniu_profiles import NIU_PROFILES, NiuProfile, get_profile
from vision.detections import Reading, ReadingFlag
from vision.exposure import bgr_image
from vision.tracking import (
    CardTracker,
    Track,
    TrackerSettings,
    decode_tracks,
    tracks_to_reading,
)

__all__ = [
    "LOCK_MARGIN",
    "FrameReader",
    "Layout",
    "LiveError",
    "LiveFrame",
    "LivePipeline",
    "LiveSettings",
    "check_frame",
    "frame_reader",
    "next_profile",
    "table_summary",
]


_R = TypeVar("_R")


class LiveError(ValueError):
    """Live settings out of range, a frame that is not a BGR image, or no hands to lock."""


class FrameReader(Protocol):
    """What the pipeline needs of a recognizer: ``read(image_bgr) -> Reading``."""

    def read(self, image: NDArray[np.uint8]) -> Reading:
        """The cards in a BGR uint8 image (H, W, 3)."""
        ...


def frame_reader(reader: _R, remember: bool = True) -> _R:
    """``reader`` as it reads one video: ``reader.for_stream()`` if it has that and
    ``remember`` (the ``Reader``: one detector pass a frame, and a new memory of the last
    frame's indices, :mod:`vision.frame_memory`), else its ``for_frames()``, else itself."""
    made = getattr(reader, "for_stream", None) if remember else None
    made = made if callable(made) else getattr(reader, "for_frames", None)
    return cast(_R, made()) if callable(made) else reader


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
    hold_frames: int = 8
    """Frames a new grouping of the hands (or a new banker) must hold before it is shown
    (about half a second of a 16 frames/s stream)."""
    uncertain_join: bool = False
    """Whether an uncertain track may join a hand (off: it is left over until certain)."""
    keep_banker: bool = True
    """Whether the banker's hand stays the banker while a hand of its cards is on the table."""
    tracker: TrackerSettings = field(default_factory=TrackerSettings)
    in_play: Deck | None = None
    """The deck in play: the cards shown are decoded together under it (None: as tracked)."""
    remember: bool = True
    """Whether the reader remembers the last frame's indices (:func:`frame_reader`)."""

    def __post_init__(self) -> None:
        if self.read_every < 0:
            raise LiveError(f"read_every={self.read_every!r} must be 0 (auto) or more")
        if not self.target_fps > 0:
            raise LiveError(f"target_fps={self.target_fps!r} must be positive")
        if self.max_read_every < 1:
            raise LiveError(f"max_read_every={self.max_read_every!r} must be 1 or more")
        if self.rescore_move < 0:
            raise LiveError(f"rescore_move={self.rescore_move!r} must be 0 or more")
        if self.hold_frames < 1:
            raise LiveError(f"hold_frames={self.hold_frames!r} must be 1 or more")


@dataclass(frozen=True, slots=True)
class LiveFrame:
    """What the pipeline made of one frame.

    ``reading`` is this frame's raw reading (None when the frame was not read); ``tracks`` are
    all live tracks ordered by id, tentative ones included; ``cards`` (also :attr:`shown`) the
    cards shown: the confirmed tracks, the corners of one card made one
    (:attr:`vision.tracking.CardTracker.shown`); ``table`` is scored from ``cards``;
    ``read_every`` is the k in force; ``timings_ms`` has ``read`` (when read: the reader's own
    time, wherever it ran), ``track``, ``score`` and ``total`` (their sum); ``layout`` the
    locked regions, if any.
    """

    index: int
    size_wh: tuple[int, int]
    was_read: bool
    reading: Reading | None
    tracks: tuple[Track, ...]
    cards: tuple[Track, ...]
    table: TableResult
    read_every: int
    rescored: bool
    timings_ms: dict[str, float] = field(compare=False)
    layout: Layout | None = None
    """The locked regions the hands are held to (:meth:`LivePipeline.lock_layout`)."""

    @property
    def shown(self) -> tuple[Track, ...]:
        """The cards shown (confirmed tracks, a card's corners made one), ordered by id."""
        return self.cards

    def to_dict(self) -> dict[str, object]:
        """JSON form (for a WebSocket client): frame index, tracks shown, table, timings."""
        return {
            "frame": self.index,
            "read": self.was_read,
            "read_every": self.read_every,
            "cards": [track.to_dict() for track in self.shown],
            "table": self.table.to_dict(),
            "ms": {key: round(value, 2) for key, value in self.timings_ms.items()},
            "layout": None if self.layout is None else self.layout.to_dict(),
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


def check_frame(frame: object) -> NDArray[np.uint8]:
    return bgr_image(frame, "frame", LiveError)


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
    """Read -> track -> score, frame after frame (see the module docstring).

    :meth:`process` does the three in turn. They are also given apart, for a reader one frame
    ahead in a worker thread (``LiveStream``): :meth:`plan` (is the next frame read?),
    :meth:`read_frame` (no pipeline state: any thread), :meth:`advance` (track and score, in
    frame order). ``overlapped`` (set by ``LiveStream``) tells ``read_every = 0`` that the
    reader's time overlaps the rest of the frame's work.
    """

    def __init__(
        self,
        reader: FrameReader,
        options: TableOptions | None = None,
        settings: LiveSettings | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.settings = settings or LiveSettings()
        self.reader = frame_reader(reader, self.settings.remember)
        self._options = options or TableOptions()
        self._clock = clock
        self.tracker = CardTracker(self.settings.tracker)
        self._index = 0
        self._since_read = 0
        self._read_next = True
        self.overlapped = False
        self._read_every = max(self.settings.read_every, 1)
        self._read_ms = _RunningMean()
        self._other_ms = _RunningMean()
        self._extra_ms = _RunningMean()
        self._table: TableResult | None = None
        self._scored_key: tuple[tuple[int, str, bool], ...] | None = None
        self._scored_at: dict[int, tuple[float, float, float]] = {}
        self._last_flags = ReadingFlag.NONE
        self._in_play = self.settings.in_play
        self._decoded: tuple[tuple[Track, ...], tuple[Track, ...]] | None = None
        self._held: tuple[object, TableResult] | None = None  # the grouping shown, its table
        self._candidate: tuple[object, int] | None = None  # a new grouping, frames it held
        self._layout: Layout | None = None
        self._unlocked: tuple[Region | None, tuple[Region, ...]] = (None, ())

    @property
    def in_play(self) -> Deck | None:
        """The deck the cards shown are decoded under (None: shown as tracked)."""
        return self._in_play

    @in_play.setter
    def in_play(self, deck: Deck | None) -> None:
        self._in_play = deck
        self._decoded = None

    def _shown(self) -> tuple[Track, ...]:
        """The tracker's cards shown, decoded under the deck in play (once per tracker update:
        frames that are not read reuse it)."""
        shown = self.tracker.shown
        if self._in_play is None:
            return shown
        if self._decoded is None or self._decoded[0] is not shown:
            certain_above = self.settings.tracker.certain_above
            self._decoded = (shown, decode_tracks(shown, self._in_play, certain_above))
        return self._decoded[1]

    @property
    def options(self) -> TableOptions:
        """How the table is scored (profile, banker rule, bet, ...)."""
        return self._options

    @options.setter
    def options(self, options: TableOptions) -> None:
        self._options = options
        self._scored_key = None  # score again on the next frame
        self._held = self._candidate = None  # and show that table at once

    def set_options(self, options: TableOptions) -> None:
        """Score with ``options`` from the next frame on; a locked layout stays locked (its
        regions replace those of ``options``, which :meth:`unlock_layout` then gives back)."""
        if self._layout is not None:
            self._unlocked = (options.banker_region, options.player_regions)
            options = replace(
                options, banker_region=self._layout.banker, player_regions=self._layout.players
            )
        self.options = options

    def set_profile(self, profile: str | NiuProfile) -> NiuProfile:
        """Score with another profile from the next frame on; returns it."""
        chosen = get_profile(profile)
        self.options = replace(self._options, profile=chosen)
        return chosen

    @property
    def read_every(self) -> int:
        """The k in force: every k-th frame is read."""
        return self._read_every

    @property
    def layout(self) -> Layout | None:
        """The regions the hands are held to (:meth:`lock_layout`); None when not locked."""
        return self._layout

    def lock_layout(self, margin: float = LOCK_MARGIN) -> Layout:
        """Hold the hands shown now to their places (:func:`handreader.tables.layout_lock.
        layout_of`), so that a wobbling camera or a card put down between two hands no longer
        regroups them; a card outside every region is left over. Replaces regions given
        before, which :meth:`unlock_layout` gives back. LiveError when no hand is shown yet."""
        table = self._held[1] if self._held is not None else self._table
        layout = layout_of(table, margin) if table is not None else None
        if layout is None:
            raise LiveError("no hands to lock yet: show the table to the camera first")
        if self._layout is None:
            self._unlocked = (self._options.banker_region, self._options.player_regions)
        self._layout = layout
        self.options = replace(
            self._options, banker_region=layout.banker, player_regions=layout.players
        )
        return layout

    def unlock_layout(self) -> None:
        """Group the hands as before :meth:`lock_layout` (the regions given before, if any)."""
        if self._layout is None:
            return
        banker, players = self._unlocked
        self._layout = None
        self.options = replace(self._options, banker_region=banker, player_regions=players)

    def reset(self) -> None:
        """Forget the tracks and the scored table (a new scene)."""
        self.tracker.reset()
        self._read_next = True
        self._table = None
        self._scored_key = None
        self._scored_at = {}
        self._held = None
        self._candidate = None

    def _choose_read_every(self) -> None:
        settings = self.settings
        if settings.read_every > 0 or self._read_ms.value is None:
            return
        other = (self._other_ms.value or 0.0) + (self._extra_ms.value or 0.0)
        # overlapped, a frame costs the larger of read / k and the rest; else their sum
        budget = 1000.0 / settings.target_fps - (0.0 if self.overlapped else other)
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
        joining = shown
        if not self.settings.uncertain_join:
            joining = tuple(track for track in shown if not track.uncertain)
        keep = None
        held = self._held[1] if self._held is not None else None
        if self.settings.keep_banker and held is not None and held.banker is not None:
            keep = frozenset(card.code for card in held.hands[held.banker].cards)
        table = score_reading(
            tracks_to_reading(joining, size_wh, self._last_flags), self._options, keep_banker=keep
        )
        if len(joining) != len(shown):  # the uncertain tracks are listed, in no hand
            apart = tracks_to_reading([track for track in shown if track.uncertain], size_wh).cards
            table = replace(
                table,
                left_over=table.left_over + tuple(TableCard.from_reading(card) for card in apart),
                flags=table.flags | ReadingFlag.LOW_CONFIDENCE,
                problem=None if table.hands else table.problem,
            )
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

    def _steady(self, table: TableResult) -> TableResult:
        """The table to show: ``table`` when its grouping is the one shown (its scores may
        change), when no hand was shown yet, or when its new grouping (other hands, other cards
        in them, another banker) has now held for ``hold_frames`` frames; else the table
        shown."""
        grouping = _grouping(table)
        if (
            self._held is None
            or self._held[0] == grouping
            or not any(hand.cards for hand in self._held[1].hands)  # (regions' empty hands)
        ):  # the first cards in hands, or the same grouping: shown at once
            self._held, self._candidate = (grouping, table), None
            return table
        frames = (
            self._candidate[1] + 1
            if self._candidate is not None and self._candidate[0] == grouping
            else 1
        )
        if frames >= self.settings.hold_frames:
            self._held, self._candidate = (grouping, table), None
            return table
        self._candidate = (grouping, frames)
        return self._held[1]

    def plan(self) -> bool:
        """Whether the next frame is to be read (the first one, and every k-th after it);
        counts the frame as taken. :meth:`process` calls it; so does ``LiveStream``."""
        read = self._read_next or self._since_read + 1 >= self._read_every
        self._read_next = False
        self._since_read = 0 if read else self._since_read + 1
        return read

    def read_frame(self, image: NDArray[np.uint8]) -> tuple[Reading, float]:
        """The reader's reading of ``image`` and the milliseconds it took. Touches no state of
        the pipeline, so it may run in another thread while the previous frame is tracked."""
        started = self._clock()
        reading = self.reader.read(image)
        return reading, (self._clock() - started) * 1000

    def advance(self, image: NDArray[np.uint8], read: tuple[Reading, float] | None) -> LiveFrame:
        """Track and score the next frame: ``read`` is its :meth:`read_frame` result when
        :meth:`plan` chose to read it, else None."""
        size_wh = (int(image.shape[1]), int(image.shape[0]))
        started = self._clock()
        timings: dict[str, float] = {}
        reading: Reading | None = None
        if read is not None:
            reading, timings["read"] = read
            self._read_ms.add(timings["read"])
            self._last_flags = reading.flags
            tracks = self.tracker.update(reading)
        else:
            tracks = self.tracker.tracks
        tracked = self._clock()
        timings["track"] = (tracked - started) * 1000
        shown = self._shown()
        rescored = self._needs_scoring(shown) or self._candidate is not None
        table = self._score(shown, size_wh) if rescored else self._table
        assert table is not None  # (scored on the first frame)
        if table.size_wh != size_wh:
            table = self._score(shown, size_wh)
            rescored = True
        table = self._steady(table)
        finished = self._clock()
        timings["score"] = (finished - tracked) * 1000
        timings["total"] = timings.get("read", 0.0) + (finished - started) * 1000
        self._other_ms.add((finished - started) * 1000)
        result = LiveFrame(
            index=self._index,
            size_wh=size_wh,
            was_read=read is not None,
            reading=reading,
            tracks=tracks,
            cards=shown,
            table=table,
            read_every=self._read_every,
            rescored=rescored,
            timings_ms=timings,
            layout=self._layout,
        )
        self._index += 1
        self._choose_read_every()
        return result

    def process(self, frame: NDArray[np.uint8]) -> LiveFrame:
        """Take the next frame of the stream (read it when it is its turn, track, score); see
        :class:`LiveFrame`."""
        image = check_frame(frame)
        return self.advance(image, self.read_frame(image) if self.plan() else None)

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


def _grouping(table: TableResult) -> object:
    """What a table's grouping is: each hand's cards (codes and seat role) and the banker's."""
    hands = tuple(
        (hand.role.value, tuple(sorted(card.code for card in hand.cards))) for hand in table.hands
    )
    return hands, table.banker
