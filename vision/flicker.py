"""Flicker of a live display: changes of the codes shown, counted frame after frame.

:class:`FlickerMeter` counts what a display would change, from the tracker's shown cards
(:class:`vision.tracks.Track`) or from raw readings; :class:`FlickerCount` gives the counts and
their rates per minute of video.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from vision.detections import Reading
from vision.tracks import Track

__all__ = ["FlickerCount", "FlickerMeter"]


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
