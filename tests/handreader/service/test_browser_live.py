"""Live mode on a fanned hand, in a real headless Chromium with a fake camera, against photo mode.

The camera plays 10 s (100 frames at 10 frames/s) of ``tests/fixtures/fan_niu7.jpg``, a
rendered fan of KS QH 10D 3C 4S (``tests/fan_scene.py``: Niu 7 by seed 002's rule), each frame
moved by up to 2 px with fresh noise, as a hand-held camera gives. The same JPEG is read first
in photo mode; then every answer of the live WebSocket is compared with that answer's hands
(role, status, cards, score). A fanned hand of five scores live as in photo mode on
at least 95% of the frames of a 10 s video, with its label inside the frame and readable on a
phone (18 CSS px, draw.js).

Two readers: ``FanReader`` (the fan's index boxes, with per-frame noise: jitter, a card missed,
the top card's far corner missed), and the shipped models when they are installed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import cv2
import pytest
from browser_page import PHONE, Server, chromium_with_camera, drawn_labels, hands_key, shaken_video
from fan_scene import FAN_LABEL, FIXTURE, FanReader

from vision.reader import default_models_dir

pytestmark = pytest.mark.browser

pytest.importorskip("playwright.sync_api")

VIDEO_SECONDS = 10.0


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    video = tmp_path_factory.mktemp("camera") / "fan.y4m"
    shaken_video(video, cv2.imread(str(FIXTURE)), seconds=VIDEO_SECONDS)
    with chromium_with_camera(video) as chromium:
        yield chromium


def photo_then_live(browser: Any, server: Server) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Photo mode's answer for the fixture, then the live answers of the video's length, on a
    phone-sized page; the overlay's labels checked inside the frame on the last answer."""
    context = browser.new_context(viewport=PHONE, device_scale_factor=3, is_mobile=True)
    context.grant_permissions(["camera"], origin=server.url)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    answers: list[dict[str, Any]] = []

    def on_socket(socket: Any) -> None:
        socket.on("framereceived", lambda payload: answers.append(json.loads(payload)))

    page.on("websocket", on_socket)
    try:
        page.goto(server.url + "/")
        page.wait_for_selector("body[data-ready='true']")
        with page.expect_response(lambda response: "/v1/score" in response.url) as scored:
            page.set_input_files("#photo-file", str(FIXTURE))
        photo: dict[str, Any] = scored.value.json()
        page.wait_for_selector("#photo-hands tbody tr")
        page.click("#tab-live")
        page.click("#live-start")
        page.wait_for_function(
            "() => document.getElementById('live-status').textContent.includes('frames/s')",
            timeout=30_000,
        )
        started = time.monotonic()
        answers.clear()
        page.wait_for_timeout(VIDEO_SECONDS * 1000)
        elapsed = time.monotonic() - started
        drawn = drawn_labels(page, "live-overlay")
        page.click("#live-stop")
    finally:
        context.close()
    assert problems == [], f"JavaScript errors on the page: {problems}"
    frames = [answer for answer in answers if "table" in answer]
    assert len(frames) >= VIDEO_SECONDS, f"{len(frames)} answers in {elapsed:.1f} s"
    assert drawn["labels"], "no hand label on the overlay"
    for label in drawn["labels"]:
        assert label["x"] >= 0 and label["y"] >= 0
        assert label["x"] + label["w"] <= drawn["width"]
        assert label["y"] + label["h"] <= drawn["height"]
    assert drawn["fontCss"] >= 16  # readable at arm's length
    return photo, frames


def share_as_photo(photo: dict[str, Any], frames: list[dict[str, Any]]) -> float:
    expected = hands_key(photo)
    return sum(hands_key(frame["table"]) == expected for frame in frames) / len(frames)


def test_a_fanned_hand_scores_live_as_in_photo_mode(browser: Any) -> None:
    with Server(FanReader(seed=3)) as server:
        photo, frames = photo_then_live(browser, server)
    assert [hand["score"]["label"] for hand in photo["hands"]] == [FAN_LABEL]
    assert share_as_photo(photo, frames) >= 0.95


@pytest.mark.skipif(
    not (default_models_dir() / "manifest.json").is_file(),
    reason="no shipped models (models/manifest.json)",
)
def test_the_shipped_models_score_a_fanned_hand_live_as_in_photo_mode(browser: Any) -> None:
    from vision.reader import Reader

    with Server(Reader.load(), models_dir=default_models_dir()) as server:
        photo, frames = photo_then_live(browser, server)
    assert [(hand["status"], hand["score"]["label"]) for hand in photo["hands"]] == [
        ("scored", FAN_LABEL)
    ]
    assert share_as_photo(photo, frames) >= 0.95


def test_the_dealer_locks_the_layout_and_sees_its_regions(browser: Any) -> None:
    """``Lock layout`` holds the hand shown to its region (drawn dashed on the overlay, the
    frames' answers carry it); pressed again, it lets go."""
    with Server(FanReader(seed=3)) as server:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.grant_permissions(["camera"], origin=server.url)
        page = context.new_page()
        problems: list[str] = []
        page.on("pageerror", lambda error: problems.append(str(error)))
        answers: list[dict[str, Any]] = []
        page.on(
            "websocket",
            lambda socket: socket.on(
                "framereceived", lambda payload: answers.append(json.loads(payload))
            ),
        )
        try:
            page.goto(server.url + "/")
            page.wait_for_selector("body[data-ready='true']")
            page.click("#tab-live")
            assert page.is_disabled("#live-lock")  # nothing to lock before the camera runs
            page.click("#live-start")
            page.wait_for_selector("#live-lock:not([disabled])", timeout=30_000)
            page.click("#live-lock")
            page.wait_for_selector("#live-lock:text-is('Unlock layout')", timeout=10_000)
            assert page.get_attribute("#live-lock", "aria-pressed") is None  # the label says it
            page.wait_for_function(
                "() => document.getElementById('live-overlay').dataset.regions === '1'",
                timeout=10_000,
            )
            locked = [answer for answer in answers if answer.get("layout")]
            assert locked and len(locked[-1]["layout"]["players"]) == 1
            page.click("#live-lock")
            page.wait_for_selector("#live-lock:text-is('Lock layout')", timeout=10_000)
            page.wait_for_function(
                "() => document.getElementById('live-overlay').dataset.regions === '0'",
                timeout=10_000,
            )
            page.click("#live-stop")
            assert page.is_disabled("#live-lock")
        finally:
            context.close()
    assert problems == [], f"JavaScript errors on the page: {problems}"
