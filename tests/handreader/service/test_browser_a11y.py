"""The page for a user who cannot see it well, uses a keyboard or a phone: the deck wizard's
layout table shown whole, the bull's cards named in text, a refused dealer check that says so,
seat boxes drawn with the keyboard or two taps, toggle buttons named one way, the enlarged photo
a dialog. The server, browser and fakes are ``test_browser``'s.

Expectations come from WCAG 2.2 (the criterion named in each test) and docs/page.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser_page import PHONE, TOKEN, Server, drawn_labels, start_wizard
from test_browser import (  # the fixtures, used by name: pytest's imports, not Python's
    _BANKER_HOLDS,
    _card_photos,
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

LAPTOP = {"width": 1280, "height": 800}


def _box(page: Any, selector: str) -> dict[str, float]:
    found: dict[str, float] = page.locator(selector).bounding_box()
    assert found is not None, f"{selector} is not shown"
    return found


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1280px", "390px"])
def test_the_whole_deck_step_shows_its_layout_table_with_the_photo_field_under_it(
    page: Any, viewport: dict[str, int]
) -> None:
    """WCAG 1.3.1 and 1.4.10: the 4 x 13 table that says how to lay the deck out is shown at
    the step's full width (scrolling sideways inside its own region on a phone, which the
    keyboard can reach: 2.1.1), and the photo field and Back follow right under it."""
    page.set_viewport_size(viewport)
    start_wizard(page, "layout-deck", grid=True)
    region = _box(page, "#wizard-layout")
    step = _box(page, "#wizard-grid")
    assert region["width"] >= 0.8 * step["width"], (region, step)
    table = _box(page, "#wizard-grid-table")
    assert table["height"] < 400, table  # four rows of chips and a header, not a column of one
    shown = page.evaluate(
        "() => { const r = document.getElementById('wizard-layout');"
        " return [r.clientWidth, r.scrollWidth, r.tabIndex]; }"
    )
    assert shown[0] > 0.8 * region["width"] - 2, shown
    if shown[1] > shown[0]:  # scrolls sideways: the keyboard can reach and scroll it
        assert shown[2] == 0, shown
    field = _box(page, "label:has(#wizard-grid-file)")
    back = _box(page, "#wizard-grid-back")
    bottom = region["y"] + region["height"]
    assert 0 <= field["y"] - bottom < 60, (region, field)
    assert back["y"] - bottom < 120, (region, back)


def _rgb(colour: str) -> tuple[int, int, int]:
    red, green, blue = (
        int(float(part)) for part in colour[colour.index("(") + 1 : -1].split(",")[:3]
    )
    return (red, green, blue)


_HAND_COLOURS = """async () => {
  const draw = await import("/static/draw.js");
  const common = await import("/static/common.js");
  const colours = [...common.SEAT_COLOURS, ...Object.values(common.ROLE_COLOURS),
                   draw.UNCERTAIN_COLOUR, draw.LEFT_OVER_COLOUR];
  return colours.map((colour) => [colour, draw.textOn(colour)]);
}"""


def test_every_code_on_the_drawing_reaches_4_5_to_1_on_its_hands_colour(
    page: Any, tmp_path: Path
) -> None:
    """WCAG 1.4.3 (images of text): a code is written in black or white, whichever contrasts
    more with its box's fill (the hand's colour), as the annotated image writes it; checked
    by the rule on every hand colour and on the codes the photo's drawing shows."""
    from handreader.drawing.contrast import contrast_ratio

    for colour, ink in page.evaluate(_HAND_COLOURS):
        assert contrast_ratio(_rgb(ink), _rgb(colour)) >= 4.5, (colour, ink)
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-hands tbody tr")
    drawn = drawn_labels(page, "photo-canvas")
    assert len(drawn["inks"]) == len(drawn["codes"]) == 15
    for shown in drawn["inks"]:
        assert contrast_ratio(_rgb(shown["ink"]), _rgb(shown["fill"])) >= 4.5, shown


# ruff: noqa: F401, F811


def _covered(drawn: dict[str, Any], label: dict[str, float]) -> float:
    """The area of the cards' index boxes a drawn label covers (canvas pixels)."""
    total = 0.0
    for card in drawn["cards"]:
        w = min(label["x"] + label["w"], card["x"] + card["w"]) - max(label["x"], card["x"])
        h = min(label["y"] + label["h"], card["y"] + card["h"]) - max(label["y"], card["y"])
        total += max(w, 0) * max(h, 0)
    return total


def test_the_pits_verdict_on_a_phone_is_one_short_line_off_the_cards(
    page: Any, tmp_path: Path
) -> None:
    """On a phone the drawing's Pits label says what the play is and its verdict in one line
    and covers no card's index; why the play is illegal is in the results table."""
    page.set_viewport_size(PHONE)
    page.select_option("#photo-game", "pits")
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-hands tbody tr")
    assert "no combination" in page.inner_text("#photo-hands")  # the reason, in the table
    drawn = drawn_labels(page, "photo-canvas")
    (label,) = drawn["labels"]
    assert label["rows"] == 1, label
    assert label["text"] == "no combination \u00b7 illegal"
    assert _covered(drawn, label) == 0, label


def test_the_dealer_checks_evidence_can_be_enlarged_as_a_dialog(page: Any, tmp_path: Path) -> None:
    """The dealer check's drawing has an Enlarge button, as photo mode's: the figure becomes a
    modal dialog over an inert page, Escape closes it and gives the focus back (WCAG 2.4.3)."""
    page.set_viewport_size(PHONE)
    page.click("#tab-verify")
    page.set_input_files("#verify-file", str(_photo(tmp_path)))
    page.wait_for_selector("#verify-enlarge:not([hidden])")
    width = _box(page, "#verify-canvas")["width"]
    page.focus("#verify-enlarge")
    page.keyboard.press("Enter")
    assert page.get_attribute("#verify-figure", "role") == "dialog"
    assert page.get_attribute("#verify-figure", "aria-modal") == "true"
    assert page.inner_text("#verify-enlarge") == "Close"
    assert page.evaluate("document.getElementById('verify-form').inert")
    assert _box(page, "#verify-canvas")["width"] >= 1.9 * width  # twice the screen's width
    page.keyboard.press("Escape")
    assert page.get_attribute("#verify-figure", "role") is None
    assert page.evaluate("document.activeElement.id") == "verify-enlarge"


def test_the_evidence_opened_by_a_tap_takes_the_focus_and_keeps_its_escape(
    page: Any, tmp_path: Path
) -> None:
    """WCAG 2.4.3: a tap (a click) on the drawing opens the dialog with the focus on its Close,
    as its button does; the Escape that closes it is handled (default prevented) before any
    other keydown handler of the page, so live.js's Escape, which leaves seat drawing, does not
    act on it as well."""
    page.add_init_script(  # a handler added before the page's own, as live.js's is
        "document.addEventListener('keydown', (event) => {"
        " if (event.key === 'Escape') window.escapeHandled = event.defaultPrevented; });"
    )
    page.reload()
    page.wait_for_selector("body[data-ready='true']")
    page.click("#tab-verify")
    page.set_input_files("#verify-file", str(_photo(tmp_path)))
    page.wait_for_selector("#verify-enlarge:not([hidden])")
    page.focus("#verify-file")
    page.click("#verify-canvas")
    assert page.get_attribute("#verify-figure", "role") == "dialog"
    assert page.evaluate("document.activeElement.id") == "verify-enlarge"
    page.keyboard.press("Escape")
    assert page.get_attribute("#verify-figure", "role") is None
    assert page.evaluate("window.escapeHandled") is True
    assert page.evaluate("document.activeElement.id") == "verify-enlarge"


def test_a_check_refused_at_once_leaves_no_reading_status_behind(page: Any, tmp_path: Path) -> None:
    """WCAG 4.1.3 and 3.3.1: Check pressed while the seats are still being read, with no
    token: the status ends saying the seats read (or the refusal), never "Reading the seats";
    the alert names the page's token field, which is marked invalid until it is edited."""
    import time

    def slow(route: Any) -> None:  # the seats read answers after the refusal
        time.sleep(0.5)
        route.continue_()

    page.route("**/v1/score", slow)
    page.click("#tab-verify")
    page.set_input_files("#verify-file", str(_photo(tmp_path)))
    page.click("#verify-submit")
    page.wait_for_selector("#verify-error:not([hidden])")
    page.wait_for_function(
        "() => !document.getElementById('verify-status').textContent.startsWith('Checking')"
    )
    page.wait_for_timeout(1500)  # the seats read has answered
    status = page.inner_text("#verify-status")
    assert "Reading the seats" not in status, status
    assert status.startswith(("Seats read", "Not checked")), status
    assert "Operator token field" in page.inner_text("#verify-error")
    assert page.get_attribute("#verify-token", "aria-invalid") == "true"
    assert page.get_attribute("#verify-token", "aria-describedby") == "verify-error"
    page.fill("#verify-token", TOKEN)
    assert page.get_attribute("#verify-token", "aria-invalid") is None


def test_a_refused_token_keeps_the_fields_own_hint(page: Any, tmp_path: Path) -> None:
    """WCAG 1.3.1 and 3.3.1: a refused token field is described by its hint and the error
    together, and by its hint alone again once edited."""
    start_wizard(page, "hinted", token="WRONG")
    page.set_input_files("#wizard-many", _card_photos(tmp_path, 1))
    page.click("#wizard-finish")
    page.wait_for_selector("#wizard-error:not([hidden])")
    assert "unauthorized" in page.inner_text("#wizard-error")
    assert page.get_attribute("#wizard-token", "aria-invalid") == "true"
    described = "wizard-token-hint wizard-error"
    assert page.get_attribute("#wizard-token", "aria-describedby") == described
    page.fill("#wizard-token", TOKEN)
    assert page.get_attribute("#wizard-token", "aria-invalid") is None
    assert page.get_attribute("#wizard-token", "aria-describedby") == "wizard-token-hint"


def test_an_invalid_stake_is_marked_so(page: Any, tmp_path: Path) -> None:
    """WCAG 3.3.1: the stake the page refuses is marked aria-invalid, and unmarked once good."""
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-hands tbody tr")
    page.fill("#photo-stake", "-5")
    page.dispatch_event("#photo-stake", "change")
    page.wait_for_selector("#photo-error:not([hidden])")
    assert page.get_attribute("#photo-stake", "aria-invalid") == "true"
    page.fill("#photo-stake", "5")
    page.dispatch_event("#photo-stake", "change")
    page.wait_for_selector("#photo-error", state="hidden")
    assert page.get_attribute("#photo-stake", "aria-invalid") is None


def test_the_bulls_cards_are_named_in_text_and_framed_in_forced_colours(
    browser: Any, server: Server, tmp_path: Path
) -> None:
    """WCAG 1.4.1 and 1.3.1: the results table names the bull's three cards in text (what a
    screen reader reads), and their chips keep a double frame where forced colours take the
    yellow away; the drawing frames them twice (an inner outline beside the fill)."""
    context = browser.new_context(viewport=LAPTOP, forced_colors="active")
    try:
        tab = context.new_page()
        tab.goto(server.url + "/")
        tab.wait_for_selector("body[data-ready='true']")
        tab.set_input_files("#photo-file", str(_photo(tmp_path)))
        tab.wait_for_selector("#photo-hands tbody tr")
        chips = tab.eval_on_selector_all(
            "#photo-hands .card",
            "chips => chips.map(chip => [chip.classList.contains('bull'), chip.textContent,"
            " getComputedStyle(chip).borderTopStyle])",
        )
    finally:
        context.close()
    bulls = [chip for chip in chips if chip[0]]
    assert len(bulls) == 6  # Niu Niu's and Niu 4's bulls: three cards each (seed 002)
    assert all(text.endswith("(bull)") and style == "double" for _, text, style in bulls), bulls
    assert all("bull" not in text and style == "solid" for bull, text, style in chips if not bull)


def test_the_selected_tab_stands_out_in_forced_colours(browser: Any, server: Server) -> None:
    """WCAG 1.4.1 in forced colours: the selected tab differs from the others in more than the
    background the mode removes (system highlight colours, and underlined)."""
    context = browser.new_context(viewport=LAPTOP, forced_colors="active")
    try:
        tab = context.new_page()
        tab.goto(server.url + "/")
        tab.wait_for_selector("body[data-ready='true']")
        styles = tab.eval_on_selector_all(
            "nav button[role='tab']",
            "tabs => tabs.map(tab => { const s = getComputedStyle(tab);"
            " return [tab.getAttribute('aria-selected'), s.backgroundColor, s.color,"
            " s.textDecorationLine]; })",
        )
    finally:
        context.close()
    chosen = [style[1:] for style in styles if style[0] == "true"]
    others = {tuple(style[1:]) for style in styles if style[0] != "true"}
    assert len(chosen) == 1 and others, styles
    assert tuple(chosen[0]) not in others and chosen[0][2] == "underline", styles


_STREAMING = "() => document.getElementById('live-status').textContent.includes('15 cards')"


def test_seats_are_drawn_from_the_keyboard_with_the_instructions_shown(
    page: Any, fake: DeckFakeReader
) -> None:
    """WCAG 2.1.1, 2.5.7 and 3.3.2: while drawing seats the instructions are shown on the page;
    the arrow keys move a cross on the video and Enter sets a box's two corners; Escape leaves
    drawing mode, the seats drawn sent (the Niu Niu hand, web_fakes.NIU_TABLE at x 0.1 to 0.23,
    y 0.6 to 0.65, made the banker's, as a dragged box makes it)."""
    page.click("#tab-live")
    page.click("#live-start")
    page.wait_for_function(_STREAMING, timeout=30_000)
    assert page.is_hidden("#live-seats-help")
    page.click("#live-seats")
    help_text = page.inner_text("#live-seats-help")
    assert "banker's place" in help_text and "arrow keys" in help_text and "Escape" in help_text
    page.focus("#live-seat-boxes")
    for key, times in (("ArrowLeft", 22), ("Enter", 1), ("ArrowRight", 12), ("ArrowDown", 12)):
        for _ in range(times):
            page.keyboard.press(key)
    assert "opposite corner" in page.inner_text("#live-seats-help")
    page.keyboard.press("Enter")  # (0.06, 0.5) to (0.3, 0.74)
    assert "seat 1's place" in page.inner_text("#live-seats-help")
    page.keyboard.press("Escape")
    assert page.inner_text("#live-seats") == "Draw seats"
    assert page.is_hidden("#live-seats-help")
    assert page.evaluate("document.activeElement.id") == "live-seats"
    page.wait_for_function(_BANKER_HOLDS, arg="K\u2660", timeout=15_000)  # Niu Niu's KS


def test_seats_are_drawn_with_two_taps(page: Any) -> None:
    """WCAG 2.5.7: a box's two opposite corners tapped one after the other make a seat."""
    page.click("#tab-live")
    page.click("#live-start")
    page.wait_for_function(_STREAMING, timeout=30_000)
    page.click("#live-seats")
    box = _box(page, "#live-seat-boxes")
    page.mouse.click(box["x"] + 0.05 * box["width"], box["y"] + 0.5 * box["height"])
    page.mouse.click(box["x"] + 0.3 * box["width"], box["y"] + 0.75 * box["height"])
    assert "seat 1's place" in page.inner_text("#live-seats-help")
    assert "1 drawn" in page.inner_text("#live-seats-help")


def test_the_photo_names_its_results_and_its_hints_are_shown_as_text(
    page: Any, tmp_path: Path
) -> None:
    """WCAG 1.1.1 and 3.3.2: the drawn photo is described by its results (aria-describedby);
    how to enlarge it, and what the deck's name and token fields want, are text on the page,
    not only a title a phone never shows."""
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-hands tbody tr")
    assert page.get_attribute("#photo-canvas", "aria-describedby") == "photo-results"
    assert page.is_visible("#photo-figure figcaption")
    assert "Enlarge" in page.inner_text("#photo-figure figcaption")
    assert page.get_attribute("#photo-figure", "title") is None
    page.click("#tab-decks")
    for field in ("wizard-name", "wizard-token"):
        hint = page.get_attribute(f"#{field}", "aria-describedby")
        assert hint and page.is_visible(f"#{hint}"), field
        assert page.get_attribute(f"#{field}", "title") is None


def test_a_service_out_of_reach_is_said_in_the_pages_words(page: Any, tmp_path: Path) -> None:
    """WCAG 3.3.3: a request the network drops is "the service could not be reached", not the
    browser's "Failed to fetch"."""
    page.route("**/v1/score", lambda route: route.abort())
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-error:not([hidden])")
    message = page.inner_text("#photo-error")
    assert message.startswith("the service could not be reached"), message
    assert "Failed" not in message and "ERR_" not in message


def test_the_trainers_verdict_is_read_apart_from_its_sentence(page: Any) -> None:
    """The badge and the sentence after it are read as two ("Wrong: Hand B wins.")."""
    page.click("#tab-trainer")
    page.click("#trainer-deal")
    page.wait_for_selector("#trainer-hands li button.pick")
    page.locator("#trainer-hands button.pick").first.click()
    page.wait_for_selector("#trainer-verdict")
    said = page.text_content("#trainer-result")
    assert said.startswith(("Right:", "Wrong:")), said


def test_a_dealer_check_of_one_hand_says_there_is_no_player_to_settle(
    page: Any, fake: DeckFakeReader, tmp_path: Path
) -> None:
    """A photo of the banker's hand alone: a sentence, not an empty table of the players."""
    fake.hands = {"KS QS 10S 5C 5S": (0.4, 0.3)}
    page.click("#tab-verify")
    page.set_input_files("#verify-file", str(_photo(tmp_path)))
    page.fill("#verify-token", TOKEN)
    page.click("#verify-submit")
    page.wait_for_selector("#verify-verdict")
    assert page.locator("#verify-results table#verify-computed").count() == 0
    assert "No player to settle" in page.inner_text("#verify-computed")


def test_a_file_that_is_no_image_is_named_without_its_first_bytes(
    page: Any, tmp_path: Path
) -> None:
    """WCAG 3.3.3: the page says which kinds of image it reads, not the bytes the file starts
    with (which the API's message gives its callers)."""
    text = tmp_path / "notes.jpg"
    text.write_bytes(b"this is no picture at all")
    page.set_input_files("#photo-file", str(text))
    page.wait_for_selector("#photo-error:not([hidden])")
    message = page.inner_text("#photo-error")
    assert "not a supported image (JPEG, PNG" in message, message
    assert "first bytes" not in message, message


def test_a_photo_of_one_hand_says_its_score_not_what_cannot_be_settled(
    page: Any, fake: DeckFakeReader, tmp_path: Path
) -> None:
    """WCAG 3.3.2, first-time use: a photo of one hand (as examples/hand.jpg) says its score,
    not that "the banker's net cannot be settled" for a banker the photo never had."""
    fake.hands = {"KS QS 10S 5C 5S": (0.4, 0.3)}
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_function(
        "() => document.getElementById('photo-status').textContent.startsWith('Read in')"
    )
    status = page.inner_text("#photo-status")
    assert "1 hand: Niu Niu" in status and "cannot" not in status, status


def test_a_pits_play_refused_is_named_once(page: Any, fake: DeckFakeReader, tmp_path: Path) -> None:
    """The status line names the play once: the rules' reason already starts with it
    ("KD KC KH KS AH is no combination: ...")."""
    fake.hands = {"KD KC KH KS AH": (0.1, 0.4)}
    page.select_option("#photo-game", "pits")
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_function(
        "() => document.getElementById('photo-status').textContent.includes('illegal')"
    )
    status = page.inner_text("#photo-status")
    assert status.count("no combination") == 1, status


def test_a_calibrated_deck_is_said_once_and_its_sheet_says_what_to_do(
    page: Any, tmp_path: Path
) -> None:
    """The status line says the calibration is done, the result's summary what was made (once
    on the page); the contact sheet says what to do about a wrong picture, not "check that
    every label matches", which asks for sight."""
    start_wizard(page, "said-once")
    page.set_input_files("#wizard-file", _card_photos(tmp_path, 1)[0])
    page.click("#wizard-finish")
    page.wait_for_selector("#wizard-done")
    shown = page.inner_text("#mode-decks")
    assert shown.count("Deck said-once: 1 card") == 1, shown
    assert "check that every label" not in shown
    assert "calibrate again with that card's photo taken anew" in shown
