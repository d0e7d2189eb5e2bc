"""Live frames read ahead on worker threads: :class:`LiveStream` runs a
:class:`handreader.tables.live.LivePipeline` with its reader working on the next frames while
the caller draws the one given back."""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType

import numpy as np
from numpy.typing import NDArray

from handreader.tables.live import LiveError, LiveFrame, LivePipeline, check_frame
from vision.detections import Reading

__all__ = ["LiveStream"]

_Pending = tuple[NDArray[np.uint8], "Future[tuple[Reading, float]] | None"]
"""A frame handed to :class:`LiveStream` and its reading in progress (None: not read)."""


class LiveStream:
    """A :class:`LivePipeline` whose reader works ahead of the frames given out, in worker
    threads.

    :meth:`push` hands over frame N (a worker starts reading it when it is to be read) and
    gives back frame N - ``depth`` with its :class:`LiveFrame` (None for the first ``depth``
    frames), so that the caller draws, shows or writes that frame and decodes frame N + 1
    while the frames after it are read. With ``depth`` 1 one frame is read at a time; with 2,
    two are, on two workers: the detector of one frame runs while the classifier and the
    verifier of the one before it do, which keeps both cores of a small machine busy (the
    picture is then two frames behind the camera). :meth:`flush` gives back the oldest frame
    still pushed. The results are those of :meth:`LivePipeline.process` on the same frames, in
    the same order, ``depth`` frames later (with ``read_every = 0`` the k chosen may differ,
    as it comes from measured times). The reader must be thread-safe (the recognizer's
    ``Reader`` is: onnxruntime releases the GIL while it runs, which is what makes the overlap
    pay). Use it as a context manager, or call :meth:`close`.
    """

    def __init__(self, pipeline: LivePipeline, depth: int = 1) -> None:
        if depth < 1:
            raise LiveError(f"depth must be 1 or more frames, got {depth!r}")
        self.pipeline = pipeline
        self.depth = depth
        pipeline.overlapped = True
        self._pool = ThreadPoolExecutor(max_workers=depth, thread_name_prefix="handreader-read")
        self._pending: deque[_Pending] = deque()

    def push(self, frame: NDArray[np.uint8]) -> tuple[NDArray[np.uint8], LiveFrame] | None:
        """Take frame N; return frame N - ``depth`` and its result (None while fewer frames
        were pushed)."""
        image = check_frame(frame)
        future = (
            self._pool.submit(self.pipeline.read_frame, image) if self.pipeline.plan() else None
        )
        self._pending.append((image, future))
        if len(self._pending) <= self.depth:
            return None
        return self._finish(self._pending.popleft())

    def flush(self) -> tuple[NDArray[np.uint8], LiveFrame] | None:
        """The oldest frame pushed and not yet given back, with its result (None when there
        is none left); call it until None to drain the stream."""
        return self._finish(self._pending.popleft()) if self._pending else None

    def _finish(self, pending: _Pending) -> tuple[NDArray[np.uint8], LiveFrame]:
        image, future = pending
        return image, self.pipeline.advance(image, None if future is None else future.result())

    def close(self) -> None:
        """Stop the workers (frames being read are finished first, their results dropped)."""
        self._pending.clear()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.pipeline.overlapped = False

    def __enter__(self) -> LiveStream:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
