# ruff: noqa: F401, F811
"""The page in Chromium for a keyboard or screen-reader user and for answers that come late:
the focus never falls to the page's start when the control pressed is disabled, each wizard
step and result is announced and focused, a stake the browser cannot parse is named, and a
dealer check that answers after another photo was chosen is never shown as that photo's. The
server, browser and fakes are ``test_browser``'s."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from browser_page import TOKEN, Server, start_wizard
from test_browser import (  # the fixtures, used by name: pytest's imports, not Python's
    _card_photos,
    _photo,
    browser,
    decks_dir,
    fake,
    page,
    server,
)
from web_fakes import DeckFakeReader, image_bytes

pytestmark = pytest.mark.browser

pytest.importorskip("playwright.sync_api")

_FOCUSED = "() => document.activeElement && document.activeElement.id"


def test_a_stake_the_browser_cannot_parse_is_named_not_read_as_one(
    page: Any, fake: DeckFakeReader, tmp_path: Path
) -> None:
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-players tbody tr")
    sizes = len(fake.sizes)
    sent: list[str] = []
    page.on("request", lambda request: "/v1/score" in request.url and sent.append(request.url))
    page.focus("#photo-stake")
    page.keyboard.type("12-3")  # a number field's value is "" for this: not an empty field
    page.keyboard.press("Tab")
    page.wait_for_selector("#photo-error:not([hidden])")
    assert "stake" in page.inner_text("#photo-error")
    page.wait_for_timeout(300)
    assert sent == [] and len(fake.sizes) == sizes  # nothing sent with a stake of 1


def test_a_check_answering_after_another_photo_is_chosen_is_not_shown_as_its(
    page: Any, tmp_path: Path
) -> None:
    first, second = tmp_path / "round.png", tmp_path / "next.png"
    first.write_bytes(image_bytes(800, 600, ".png"))
    second.write_bytes(image_bytes(640, 480, ".png"))
    held: list[Any] = []
    page.route("**/v1/verify", lambda route: held.append(route))  # the answer held back
    page.click("#tab-verify")
    page.set_input_files("#verify-file", str(first))
    page.wait_for_function("() => document.getElementById('verify-status').textContent"
                           ".startsWith('Seats read')")  # fmt: skip
    page.fill("#verify-token", TOKEN)
    page.click("#verify-submit")
    deadline = time.monotonic() + 10
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert held, "the check was never sent"
    page.set_input_files("#verify-file", str(second))
    page.wait_for_function("() => document.getElementById('verify-status').textContent"
                           ".startsWith('Seats read')")  # fmt: skip
    held[0].continue_()  # the first photo's check answers now
    page.wait_for_selector("#verify-error:not([hidden])")
    message = page.inner_text("#verify-error")
    assert "round.png" in message and "another photo was chosen" in message, message
    assert "logged as record" in message
    assert page.locator("#verify-verdict").count() == 0  # no verdict shown for next.png
    assert page.inner_text("#verify-status").startswith("Seats read")


def test_a_pressed_read_button_keeps_the_keyboard_where_it_was(page: Any, tmp_path: Path) -> None:
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-players tbody tr")
    page.focus("#photo-submit")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('photo-status').textContent"
                           ".startsWith('Read in')")  # fmt: skip
    page.wait_for_function("() => !document.getElementById('photo-submit').disabled")
    assert page.evaluate(_FOCUSED) == "photo-submit"


def test_a_new_photo_is_said_to_be_read_not_its_options(page: Any, tmp_path: Path) -> None:
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-players tbody tr")
    statuses: list[str] = []
    page.expose_function("keepStatus", lambda text: statuses.append(text))
    page.evaluate(
        "() => new MutationObserver(() => window.keepStatus("
        "document.getElementById('photo-status').textContent)).observe("
        "document.getElementById('photo-status'), {childList: true, characterData: true,"
        " subtree: true})"
    )
    other = tmp_path / "other.png"
    other.write_bytes(image_bytes(640, 480, ".png"))
    page.set_input_files("#photo-file", str(other))
    page.wait_for_function("() => document.getElementById('photo-status').textContent"
                           ".startsWith('Read in')")  # fmt: skip
    assert "Reading the new photo\u2026" in statuses, statuses
    assert not any("new options" in text for text in statuses), statuses


def test_start_and_stop_hand_the_focus_to_each_other(page: Any) -> None:
    page.click("#tab-live")
    page.focus("#live-start")
    page.keyboard.press("Enter")
    page.wait_for_function("() => !document.getElementById('live-stop').disabled")
    assert page.evaluate(_FOCUSED) == "live-stop"
    page.keyboard.press("Enter")
    page.wait_for_function("() => !document.getElementById('live-start').disabled")
    assert page.evaluate(_FOCUSED) == "live-start"


def test_the_deck_wizard_moves_the_focus_and_announces_its_result(
    page: Any, tmp_path: Path
) -> None:
    photos = _card_photos(tmp_path, 2)
    start_wizard(page, "keyboard")
    assert page.evaluate(_FOCUSED) == "wizard-file"  # the step's first control
    prompt = page.locator("#wizard-cards .prompt")
    assert prompt.get_attribute("aria-live") == "polite"  # each card's prompt is announced
    page.set_input_files("#wizard-file", photos[0])
    page.set_input_files("#wizard-file", photos[1])
    page.focus("#wizard-finish")
    page.keyboard.press("Enter")
    page.wait_for_selector("#wizard-done")
    page.wait_for_function(_FOCUSED + " === 'wizard-done'")
    assert page.get_attribute("#wizard-status", "aria-live") == "polite"
    # the status line says it is done; the result, focused, says what was made (once on the page)
    assert page.inner_text("#wizard-status") == "Calibrated."
    assert page.inner_text("#wizard-done").startswith("Deck keyboard: 2 cards")


def test_skipping_the_last_card_hands_the_focus_to_calibrate(page: Any, tmp_path: Path) -> None:
    start_wizard(page, "skipper")
    page.set_input_files("#wizard-file", _card_photos(tmp_path, 1)[0])
    total = page.evaluate("() => document.getElementById('wizard-progress').textContent")
    page.focus("#wizard-skip")
    while not page.locator("#wizard-skip").is_disabled():
        page.keyboard.press("Enter")
    assert "every card" in page.inner_text("#wizard-card"), total
    assert page.evaluate(_FOCUSED) == "wizard-finish"


def test_declared_rows_name_their_fields_without_the_header(browser: Any, server: Server) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        tab = context.new_page()
        tab.goto(server.url + "/#verify")
        tab.wait_for_selector("body[data-ready='true']")
        names = tab.eval_on_selector_all(
            "#verify-rows tr:first-child input, #verify-rows tr:first-child select",
            "fields => fields.map(f => f.getAttribute('aria-label'))",
        )
        assert names == ["player's seat", "player's outcome", "payout (player's net, optional)"]
    finally:
        context.close()


def test_the_wizard_remove_buttons_are_a_fingers_size_on_a_phone(
    browser: Any, server: Server, tmp_path: Path
) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        tab = context.new_page()
        tab.goto(server.url + "/#decks")
        tab.wait_for_selector("body[data-ready='true']")
        tab.fill("#wizard-name", "thumbs")
        tab.click("#wizard-start")
        tab.wait_for_selector("#wizard-cards:not([hidden])")
        tab.set_input_files("#wizard-file", _card_photos(tmp_path, 1)[0])
        box = tab.locator("#wizard-taken .remove").bounding_box()
        assert box["width"] >= 44 and box["height"] >= 32, box
    finally:
        context.close()


def test_the_wizard_never_drops_the_focus_when_its_control_goes(page: Any, tmp_path: Path) -> None:
    start_wizard(page, "dropless")
    page.set_input_files("#wizard-file", _card_photos(tmp_path, 1)[0])  # AS taken, now 2S
    page.focus("#wizard-taken .remove")
    page.keyboard.press("Enter")  # the button goes with its photo
    assert page.locator("#wizard-taken li").count() == 0
    assert page.evaluate(_FOCUSED) == "wizard-file"
    page.focus("#wizard-back")
    page.keyboard.press("Enter")  # back to the first card: Back is disabled there
    assert page.locator("#wizard-back").is_disabled()
    assert page.evaluate(_FOCUSED) == "wizard-file"
    page.focus("#wizard-skip")
    while not page.locator("#wizard-skip").is_disabled():
        page.keyboard.press("Enter")  # the last card skipped with no photo: Calibrate disabled
    assert page.evaluate(_FOCUSED) == "wizard-back"


def test_a_check_pressed_from_the_keyboard_gives_the_focus_back(page: Any, tmp_path: Path) -> None:
    page.click("#tab-verify")
    page.set_input_files("#verify-file", str(_photo(tmp_path)))
    page.fill("#verify-token", TOKEN)
    page.focus("#verify-submit")
    page.keyboard.press("Enter")
    page.wait_for_selector("#verify-verdict")
    page.wait_for_function("() => !document.getElementById('verify-submit').disabled")
    assert page.evaluate(_FOCUSED) == "verify-submit"


def test_a_control_that_hides_or_disables_itself_hands_its_focus_on(
    page: Any, tmp_path: Path
) -> None:
    """Focus never drops to the page's body: Clear seats (disabled once the seats are
    cleared) hands it to Draw seats, the grid step's Back (hidden with its step) to the setup
    step's first control."""
    page.click("#tab-live")
    page.click("#live-start")
    page.wait_for_function("() => !document.getElementById('live-seats').disabled")
    page.click("#live-seats")  # drawing: Clear seats is enabled
    page.focus("#live-seats-clear")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('live-seats-clear').disabled")
    assert page.evaluate(_FOCUSED) == "live-seats"
    page.click("#live-stop")
    start_wizard(page, "grid", grid=True)
    page.focus("#wizard-grid-back")
    page.keyboard.press("Enter")
    page.wait_for_selector("#wizard-setup:not([hidden])")
    assert page.evaluate(_FOCUSED) == "wizard-name"
