"""The service around a stand-in recognizer, for ``benchmarks/bench_service.py``.

The server process imports this module (``stand_in_service:stand_in_app``, the app factory
``serve.main`` is given): the recognizer waits ``BENCH_STAND_IN_MS`` milliseconds without
holding the GIL, as ONNX Runtime does, and reads no card, so that what is measured is the
service's own cost around a recognizer of known time.
"""

from __future__ import annotations

import os
import time
from typing import Any

__all__ = ["StandInReader", "stand_in_app"]


class StandInReader:
    """A recognizer that waits ``milliseconds`` without holding the GIL and reads no card."""

    def __init__(self, milliseconds: float) -> None:
        self.seconds = milliseconds / 1000

    def read(self, image_bgr: Any) -> Any:
        from vision.detections import Reading

        time.sleep(self.seconds)
        return Reading((int(image_bgr.shape[1]), int(image_bgr.shape[0])), ())


def stand_in_app() -> Any:
    """The API around the stand-in (the app factory ``serve.run_server`` is given)."""
    import serve

    return serve.create_app(reader=StandInReader(float(os.environ["BENCH_STAND_IN_MS"])))
