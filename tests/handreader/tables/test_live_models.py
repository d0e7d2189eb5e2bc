"""A fanned hand read by the shipped models, as a photo and as a live video: the same hand.

The photo is ``tests/fixtures/fan_niu7.jpg`` (``tests/fan_scene.py``: KS QH 10D 3C 4S held in a
fan, K + Q + 10 = 30 and 3 + 4 = 7, Niu 7 by seed 002's rule). Live reads the video frames with
``Reader.for_frames`` (one detector pass) and scores the tracked cards; before the tracked cards
kept their index size, the top card of this fan (read at two corners) was cut off as a hand of
its own.
"""

from __future__ import annotations

import numpy as np
import pytest
from fan_scene import FAN_HAND, FAN_LABEL, FIXTURE

from handreader.tables.live import LivePipeline, table_summary
from handreader.tables.scoring import HandStatus, score_reading
from vision.imageio import load_image
from vision.reader import Reader, default_models_dir

pytestmark = pytest.mark.skipif(
    not (default_models_dir() / "manifest.json").is_file(),
    reason="no shipped models (models/manifest.json)",
)


def test_a_fanned_hand_scores_live_as_in_the_photo() -> None:
    reader = Reader.load()
    image = load_image(FIXTURE)
    photo = score_reading(reader.read(image))
    assert [(h.status, h.hand and h.hand.label) for h in photo.hands] == [
        (HandStatus.SCORED, FAN_LABEL)
    ]
    assert sorted(card.code for card in photo.hands[0].cards) == sorted(FAN_HAND)
    pipeline = LivePipeline(reader)
    rng = np.random.default_rng(0)
    summaries = []
    for _ in range(6):  # a camera's noise on a still hand
        noise = rng.normal(0, 3, image.shape)
        frame = np.clip(image + noise, 0, 255).astype(np.uint8)
        summaries.append(table_summary(pipeline.process(frame).table))
    # the tracker shows a card once seen in 3 read frames (vision/tracking.py)
    assert summaries[2:] == [table_summary(photo)] * 4
