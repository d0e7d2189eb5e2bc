# ruff: noqa: F401, F811
"""The page in Chromium when a user is quicker than the server: a double click on Start camera,
an option mistyped while a photo is being read, a double pick in the trainer or a pick then a
new deal, an audit listing refused before any worked, a dealer check with index letters chosen,
a seats read ending while a refused check is on its way. The server, browser and fakes are
``test_browser``'s."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_page import TOKEN, Server
from test_browser import (  # the fixtures, used by name: pytest's imports, not Python's
    _photo,
    browser,
    decks_dir,
    fake,
    page,
    server,
)
from web_fakes import DeckFakeReader

pytestmark = pytest.mark.browser

pytest.importorskip("playwright.sync_api")


@pytest.fixture
def slow(fake: DeckFakeReader) -> Iterator[None]:
    """Every photo read takes a second: time for a user to act while it is on its way."""
    read = fake.read

    def slowly(*args: Any, **kwargs: Any) -> Any:
        time.sleep(1.0)
        return read(*args, **kwargs)

    fake.read = slowly  # type: ignore[method-assign]
    yield
    del fake.read


def test_a_double_click_on_start_camera_opens_one_stream(page: Any) -> None:
    sockets: list[str] = []
    page.on("websocket", lambda socket: sockets.append(socket.url))
    page.click("#tab-live")
    page.dblclick("#live-start")
    page.wait_for_function(
        "() => document.getElementById('live-status').textContent.includes('frames/s')",
        timeout=30_000,
    )
    page.click("#live-stop")
    page.click("#live-start")
    page.wait_for_function(
        "() => document.getElementById('live-status').textContent.includes('frames/s')",
        timeout=30_000,
    )
    assert len(sockets) == 2, sockets  # one a Start, the double click's second one ignored
    page.click("#tab-photo")  # leaving the tab stops the camera
    assert page.inner_text("#live-status") == "Stopped"


def test_an_option_mistyped_while_a_photo_is_read_leaves_the_form_usable(
    page: Any, slow: None, tmp_path: Path
) -> None:
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-form[aria-busy='true']")
    page.fill("#photo-stake", "-5")
    page.press("#photo-stake", "Tab")  # the change reads again, and is refused in the page
    page.wait_for_selector("#photo-error:not([hidden])")
    assert "the stake must be a positive number" in page.inner_text("#photo-error")
    assert page.get_attribute("#photo-form", "aria-busy") is None
    assert not page.locator("#photo-submit").is_disabled()
    assert page.inner_text("#photo-status") == "Not read: correct the option named below."
    page.fill("#photo-stake", "100")
    page.press("#photo-stake", "Tab")
    page.wait_for_function(
        "() => document.getElementById('photo-status').textContent.startsWith('Read in')"
    )


def test_a_pick_counts_once_and_never_under_another_deal(page: Any) -> None:
    page.click("#tab-trainer")
    page.fill("#trainer-seed", "7")
    page.click("#trainer-deal")
    page.wait_for_selector("#trainer-hands li button.pick")
    page.locator("#trainer-hands button.pick").first.dblclick()
    page.wait_for_selector("#trainer-verdict")
    page.wait_for_timeout(300)  # a second answer, had one been asked for, would be counted now
    assert page.inner_text("#trainer-score").endswith("/ 1")
    page.fill("#trainer-seed", "8")
    page.click("#trainer-next")
    page.wait_for_selector("#trainer-hands li button.pick:not([disabled])")
    page.locator("#trainer-hands button.pick").first.click()
    page.fill("#trainer-seed", "9")
    page.click("#trainer-deal")  # before the pick's answer is shown, or just after
    page.wait_for_function(
        "() => document.getElementById('trainer-prompt').textContent.includes('(deal 9)')"
    )
    page.wait_for_timeout(300)
    assert page.locator("#trainer-verdict").count() == 0  # deal 8's answer is not deal 9's
    assert page.locator("#trainer-hands button.pick:not([disabled])").count() >= 2


def test_an_audit_listing_refused_before_any_worked_is_named(page: Any) -> None:
    page.click("#tab-verify")
    page.fill("#verify-token", "not-the-token")
    page.click("#audit summary")
    page.click("#audit-list")
    page.wait_for_selector("#audit-error:not([hidden])")
    assert "wrong operator token" in page.inner_text("#audit-error")
    # the page fixture fails the test on any uncaught error of the page


def test_the_dealer_check_reads_with_the_letters_chosen_and_clears_a_past_mistake(
    page: Any, fake: DeckFakeReader, tmp_path: Path
) -> None:
    page.select_option("#indices-select", "french")
    page.click("#tab-verify")
    page.click("#verify-submit")  # no photo yet: named
    page.wait_for_selector("#verify-error:not([hidden])")
    fake.letters.clear()
    page.set_input_files("#verify-file", str(_photo(tmp_path)))
    page.wait_for_function(
        "() => document.getElementById('verify-status').textContent.startsWith('Seats read')"
    )
    assert page.locator("#verify-error").is_hidden()  # the past mistake is gone
    assert fake.letters == ["french"]  # the seats are read as the check will read them
    page.fill("#verify-token", TOKEN)
    page.click("#verify-submit")
    page.wait_for_selector("#verify-verdict")
    assert fake.letters == ["french", "french"]
    page.select_option("#indices-select", "german")  # the check shown is out of date
    assert "Out of date" in page.inner_text("#verify-status")


def _held(page: Any, routes: list[Any]) -> None:
    deadline = time.monotonic() + 10
    while not routes and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert routes, "the request was never sent"


def test_seats_read_while_a_refused_check_is_on_its_way_are_said_with_the_refusal(
    page: Any, tmp_path: Path
) -> None:
    reads: list[Any] = []
    checks: list[Any] = []
    page.route("**/v1/score", lambda route: reads.append(route))  # held back
    page.route("**/v1/verify", lambda route: checks.append(route))
    page.click("#tab-verify")
    page.set_input_files("#verify-file", str(_photo(tmp_path)))
    _held(page, reads)
    page.fill("#verify-token", "WRONG")
    page.click("#verify-submit")
    _held(page, checks)
    with page.expect_response("**/v1/score"):
        reads[0].continue_()  # the seats read ends while the check is on its way
    page.wait_for_timeout(500)
    assert page.inner_text("#verify-status") == "Checking\u2026"
    checks[0].continue_()  # refused: the wrong token
    page.wait_for_selector("#verify-error:not([hidden])")
    status = page.inner_text("#verify-status")
    assert status.startswith("Not checked: ") and "Seats read: " in status, status
    assert page.is_visible("#verify-canvas")  # the seats drawn


def test_lock_layout_waits_for_a_card_not_an_empty_seat(page: Any, fake: DeckFakeReader) -> None:
    """A seat drawn on the video with no card in it is no hand to lock: Lock layout stayed
    enabled, and the server's refusal was wiped by the next frame before it could be read."""
    fake.hands = {}
    page.click("#tab-live")
    page.click("#live-start")
    page.wait_for_function(
        "() => document.getElementById('live-status').textContent.includes('frames/s')",
        timeout=30_000,
    )
    page.click("#live-seats")
    box = page.locator("#live-seat-boxes").bounding_box()
    page.mouse.move(box["x"] + 20, box["y"] + 20)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, steps=5)
    page.mouse.up()
    page.click("#live-seats")  # Done: the seat is sent
    page.wait_for_timeout(1500)  # frames read with the seat
    assert page.is_disabled("#live-lock")
    assert page.locator("#live-error").is_hidden()


def test_stop_while_the_camera_is_asked_for_cancels_it(page: Any) -> None:
    """docs/page.md: Stop, before the camera is granted, stops it once it is: no stream opens
    and no camera stays on (the camera is granted a second late here, as a person would)."""
    sockets: list[str] = []
    page.on("websocket", lambda socket: sockets.append(socket.url))
    page.evaluate(
        """() => {
            const ask = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
            window.cameras = [];
            navigator.mediaDevices.getUserMedia = (constraints) => new Promise((resolve, reject) =>
                setTimeout(() => ask(constraints).then((stream) => {
                    window.cameras.push(stream);
                    resolve(stream);
                }, reject), 1000));
        }"""
    )
    page.click("#tab-live")
    page.click("#live-start")
    assert page.evaluate("() => document.activeElement.id") == "live-stop"
    page.click("#live-stop")
    assert page.inner_text("#live-status") == "Stopped"
    page.wait_for_function("() => window.cameras.length === 1")
    page.wait_for_timeout(300)
    live = "() => window.cameras[0].getTracks().filter((t) => t.readyState === 'live').length"
    assert page.evaluate(live) == 0
    assert sockets == [] and not page.locator("#live-start").is_disabled()
