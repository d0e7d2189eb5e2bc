"""How the live pipeline takes its reader: through the recognizer's frame setting
(``for_frames``) or its stream reader with a frame memory (``for_stream``), one a pipeline."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from live_scene import NoisyReader, render_frame
from numpy.typing import NDArray

from handreader.tables.live import LivePipeline, LiveSettings, frame_reader
from vision.detections import Reading


def test_the_pipeline_reads_frames_with_the_readers_frame_setting() -> None:
    """A recognizer offering ``for_frames`` (the real Reader: no close-up pass) is read through
    it; a plain one is used as it is."""

    @dataclass
    class WithFrames:
        inner: NoisyReader
        asked: list[str] = field(default_factory=list)

        def read(self, image: NDArray[np.uint8]) -> Reading:
            self.asked.append("photo")
            return self.inner.read(image)

        def for_frames(self) -> NoisyReader:
            self.asked.append("for_frames")
            return self.inner

    plain = NoisyReader()
    offering = WithFrames(NoisyReader())
    assert frame_reader(plain) is plain
    pipeline = LivePipeline(offering)
    pipeline.process(render_frame(0))
    assert offering.asked == ["for_frames"]
    assert pipeline.reader is offering.inner


def test_the_pipeline_reads_one_video_through_a_stream_reader_unless_told_not_to() -> None:
    """A recognizer offering ``for_stream`` (the real Reader: a memory of the last frame's
    indices) is read through a new one for each pipeline; ``remember=False`` takes its
    ``for_frames`` instead."""

    @dataclass
    class WithStream:
        asked: list[str] = field(default_factory=list)

        def read(self, image: NDArray[np.uint8]) -> Reading:
            return NoisyReader().read(image)

        def for_frames(self) -> NoisyReader:
            self.asked.append("for_frames")
            return NoisyReader()

        def for_stream(self) -> NoisyReader:
            self.asked.append("for_stream")
            return NoisyReader()

    offering = WithStream()
    first, second = LivePipeline(offering), LivePipeline(offering)
    assert first.reader is not second.reader
    LivePipeline(offering, settings=LiveSettings(remember=False))
    assert offering.asked == ["for_stream", "for_stream", "for_frames"]
