"""The page as a player and a dealer use it, on a phone's screen, in a real headless Chromium.

The server is the real app with a fake recognizer (``web_fakes.DeckFakeReader``: the hands it
is given, read from any image), the camera Chromium's fake device playing grey frames. The
expectations are the product's: every mode fits a 390 px wide screen with no sideways scrolling;
a photo is read once, a failed upload leaves no earlier result shown, an option changed marks
the results out of date and reads the photo again; the dealer check shows the photo with the
hands read and each seat's cards; the trainer keeps a deal's number whole, names its pick
buttons and keeps the focus; the API's documentation works with no network. Scores come from
seed 002 (trainer profile: No Niu banker against Niu Niu and Niu 4, both players win, +95 on
100 at the equal bet, +190 at the double bet, whose Niu Niu pays 2 and Niu 4 pays 1 less 5%
commission... taken from the rules engine, not typed here).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_page import PHONE, TOKEN, Server, chromium_with_camera, drawn_labels, sideways_overflow
from web_fakes import NIU_4, NIU_NIU, NIU_TABLE, NO_NIU, DeckFakeReader, image_bytes, write_y4m

from handreader.service.routes.verification import AuditSettings
from handreader.tables.scoring import TableOptions, score_codes
from rules.money import json_amount
from rules.niuniu_profiles import BetType

pytestmark = pytest.mark.browser

pytest.importorskip("playwright.sync_api")


class SlowFake(DeckFakeReader):
    """The fake recognizer, taking ``delay_s`` per read (to see what the page shows meanwhile)."""

    delay_s = 0.0

    def read(self, image_bgr: Any, deck: object = None) -> Any:
        time.sleep(self.delay_s)
        return super().read(image_bgr, deck)


@pytest.fixture(scope="module")
def fake() -> SlowFake:
    return SlowFake(NIU_TABLE)


@pytest.fixture(scope="module")
def server(fake: SlowFake, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("data")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HANDREADER_DATA", str(folder))
        patch.setenv("HANDREADER_AUDIT_TOKEN", TOKEN)
        patch.setenv("HANDREADER_AUDIT_DB", str(folder / "audit.sqlite3"))
        assert AuditSettings.from_env().token == TOKEN
        with Server(fake) as running:
            yield running


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    video = write_y4m(tmp_path_factory.mktemp("camera") / "grey.y4m")
    with chromium_with_camera(video) as chromium:
        yield chromium


@pytest.fixture
def page(browser: Any, server: Server, fake: SlowFake) -> Iterator[Any]:
    fake.hands, fake.uncertain, fake.delay_s = dict(NIU_TABLE), [], 0.0
    context = browser.new_context(
        viewport=PHONE, device_scale_factor=3, is_mobile=True, has_touch=True
    )
    context.grant_permissions(["camera"], origin=server.url)
    tab = context.new_page()
    problems: list[str] = []
    tab.on("pageerror", lambda error: problems.append(str(error)))
    tab.goto(server.url + "/")
    tab.wait_for_selector("body[data-ready='true']")
    yield tab
    context.close()
    assert problems == [], f"JavaScript errors on the page: {problems}"


@pytest.fixture
def photo(tmp_path: Path) -> Path:
    path = tmp_path / "table.png"
    path.write_bytes(image_bytes(800, 600, ".png"))
    return path


def _read_in(page: Any) -> None:
    page.wait_for_function(
        "() => document.getElementById('photo-status').textContent.startsWith('Read in')"
    )


def _fits(page: Any, what: str) -> None:
    assert sideways_overflow(page) == 0, f"{what}: wider than the phone's screen"


def test_every_mode_fits_a_phone_screen(page: Any, fake: SlowFake, photo: Path) -> None:
    _fits(page, "the page as it opens")
    page.set_input_files("#photo-file", str(photo))
    page.wait_for_selector("#photo-players tbody tr")
    _fits(page, "photo mode with a Niu Niu reading")
    labels = drawn_labels(page, "photo-canvas")
    assert labels["fontCss"] >= 16  # the hands' labels read at arm's length
    fake.hands = {"9H 5C 3D": (0.1, 0.4), "KD 6S": (0.7, 0.4)}
    page.select_option("#photo-game", "baccarat")  # read again by itself, as baccarat
    page.wait_for_function(
        "() => document.getElementById('photo-results').textContent.includes('Result')"
    )
    _fits(page, "photo mode with a Baccarat reading")
    page.click("#tab-live")
    page.click("#live-start")
    page.wait_for_function(
        "() => document.getElementById('live-status').textContent.includes('frames/s')",
        timeout=30_000,
    )
    _fits(page, "live mode while streaming")
    page.click("#live-stop")
    page.click("#tab-trainer")
    page.click("#trainer-deal")
    page.locator("#trainer-hands button.pick").first.click()
    page.wait_for_selector("#trainer-verdict")
    _fits(page, "the trainer after a pick")
    page.click("#tab-verify")
    page.click("#verify-add")
    page.click("#verify-add")
    _fits(page, "the dealer check's form")
    for button in page.locator("#verify-rows .remove").all():
        box = button.bounding_box()
        assert box is not None and box["x"] + box["width"] <= PHONE["width"]
    fake.hands = dict(NIU_TABLE)
    page.set_input_files("#verify-file", str(photo))
    page.fill("#verify-token", TOKEN)
    page.click("#verify-submit")
    page.wait_for_selector("#verify-verdict")
    _fits(page, "the dealer check's result")
    page.click("#tab-decks")
    page.fill("#wizard-name", "phone-deck")
    page.click("#wizard-start")
    page.wait_for_selector("#wizard-cards:not([hidden])")
    _fits(page, "the deck wizard")


def test_a_pits_verdict_with_a_long_reason_fits_the_frame(
    page: Any, fake: SlowFake, photo: Path
) -> None:
    """docs/page.md: the drawing's Pits label is what the play is and its verdict, inside the
    frame; the reason (no " · " to break at, it once ran past the frame's edge, then covered
    the cards in five lines) is in the results table."""
    fake.hands = {"KS 2D JD 3D JC": (0.1, 0.4)}  # no combination: a long reason
    page.select_option("#photo-game", "pits")
    page.set_input_files("#photo-file", str(photo))
    _read_in(page)
    drawn = drawn_labels(page, "photo-canvas")
    (label,) = drawn["labels"]
    assert label["text"] == "no combination \u00b7 illegal"
    assert "is no combination" in page.inner_text("#photo-hands")
    assert label["x"] >= 0 and label["x"] + label["w"] <= drawn["width"] + 0.5, (label, drawn)
    assert label["textW"] <= drawn["width"] and label["rows"] == 1, (label, drawn)  # text too


def test_a_photo_is_read_once_and_a_failed_upload_leaves_nothing_stale(
    page: Any, fake: SlowFake, photo: Path, tmp_path: Path
) -> None:
    before = len(fake.sizes)
    page.set_input_files("#photo-file", str(photo))
    page.wait_for_selector("#photo-players tbody tr")
    assert len(fake.sizes) == before + 1
    assert page.locator("#photo-canvas").is_visible()
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"this is no picture")
    page.set_input_files("#photo-file", str(broken))
    page.wait_for_selector("#photo-error:not([hidden])")
    assert not page.locator("#photo-canvas").is_visible()
    assert not page.locator("#photo-annotated").is_visible()
    assert page.inner_text("#photo-results") == ""


def _nets(page: Any) -> list[str]:
    cells: list[str] = page.eval_on_selector_all(
        "#photo-players tbody tr", "rows => rows.map(row => row.cells[2].textContent)"
    )
    return cells


def test_a_changed_option_marks_the_results_and_reads_the_photo_again(
    page: Any, fake: SlowFake, photo: Path
) -> None:
    page.select_option("#photo-profile", "trainer")
    page.fill("#photo-stake", "100")
    page.set_input_files("#photo-file", str(photo))
    page.wait_for_selector("#photo-players tbody tr")
    assert _nets(page) == ["+95", "+95"]
    reads = len(fake.sizes)
    fake.delay_s = 1.0
    page.select_option("#photo-bet", "double")
    # at once: the old results are marked out of date while the photo is read again
    page.wait_for_selector("#photo-results.stale")
    assert "Out of date" in page.inner_text("#photo-status")
    page.wait_for_selector("#photo-results:not(.stale) #photo-players tbody tr", timeout=15_000)
    assert len(fake.sizes) == reads + 1
    double = TableOptions.create(profile="trainer", bet=BetType.DOUBLE, stake=100)
    expected = score_codes([NO_NIU, NIU_NIU, NIU_4], banker=0, options=double)
    nets = [json_amount(player.settlement.net) for player in expected.players if player.settlement]
    assert _nets(page) == [f"+{net}" for net in nets]


def test_the_dealer_check_shows_the_photo_and_each_seats_cards(
    page: Any, fake: SlowFake, photo: Path
) -> None:
    page.click("#tab-verify")
    page.set_input_files("#verify-file", str(photo))
    page.select_option("#verify-profile", "trainer")
    page.fill("#verify-token", TOKEN)
    page.fill("#verify-rows tr:nth-child(1) .payout", "95")
    page.click("#verify-submit")
    page.wait_for_selector("#verify-verdict")
    assert page.locator("#verify-canvas").is_visible()
    drawn = drawn_labels(page, "verify-canvas")
    assert len(drawn["labels"]) == 3  # the banker and both players, on the photo
    rows = page.locator("#verify-hands tbody tr")
    assert rows.count() == 3
    for row, hand in enumerate((NO_NIU, NIU_NIU, NIU_4)):
        codes = (
            rows.nth(row).locator(".card").evaluate_all("cards => cards.map(c => c.dataset.code)")
        )
        assert sorted(codes) == sorted(hand.split())
    # the form changed: the result is marked out of date, not checked again (each check is logged)
    page.fill("#verify-stake", "50")
    page.locator("#verify-stake").dispatch_event("change")
    page.wait_for_selector("#verify-results.stale")


def test_a_round_whose_banker_hand_is_incomplete_is_unverified(
    page: Any, fake: SlowFake, photo: Path
) -> None:
    fake.hands = {"AS 2S 3S 4S": (0.4, 0.05), NIU_NIU: (0.1, 0.6), NIU_4: (0.6, 0.6)}
    page.click("#tab-verify")
    page.set_input_files("#verify-file", str(photo))
    page.fill("#verify-token", TOKEN)
    page.click("#verify-add")
    page.fill("#verify-rows tr:nth-child(2) .seat", "2")
    page.click("#verify-submit")
    page.wait_for_selector("#verify-verdict")
    assert page.text_content("#verify-verdict") == "unverified"
    assert "incomplete (4 cards)" in page.inner_text("#verify-hands")


def test_hands_that_are_no_hand_say_so_once_in_words(
    page: Any, fake: SlowFake, photo: Path
) -> None:
    # a stray card far from the hands, and eight cards in one row: 1 card, too many cards
    fake.hands = {NO_NIU: (0.4, 0.05), "QD": (0.05, 0.9), "AH 2H 3H 4H 5H 6H 7H 8H": (0.1, 0.5)}
    page.set_input_files("#photo-file", str(photo))
    page.wait_for_selector("#photo-hands tbody tr")
    text = page.inner_text("#photo-hands")
    assert "1 cards" not in text
    rows = page.locator("#photo-hands tbody tr")
    scores = rows.evaluate_all(
        "rows => rows.map(row => [row.cells[3].textContent, row.cells[4].textContent])"
    )
    assert ["incomplete (1 card)", "1 card (QD): a Niu Niu hand is 5 cards"] in scores
    eight = next(score for score, _ in scores if score.startswith("too many"))
    assert eight == "too many cards (8)"
    assert all(score != note for score, note in scores)


def test_the_baccarat_problem_asks_for_nothing_the_page_lacks(
    page: Any, fake: SlowFake, photo: Path
) -> None:
    fake.hands = {"9H 5C": (0.05, 0.4), "3D": (0.5, 0.4), "KD 6S": (0.85, 0.4)}
    page.select_option("#photo-game", "baccarat")
    page.set_input_files("#photo-file", str(photo))
    page.wait_for_selector("#photo-results .error")
    message = page.inner_text("#photo-results .error")
    assert "found 3 groups" in message
    assert "_region" not in message
    assert "lay the player's and the banker's cards apart" in message


def test_the_photo_form_names_each_choice_once(page: Any) -> None:
    # the controls shown with a game (Niu Niu's by default), named by their labels' own text
    names: list[str] = page.eval_on_selector_all(
        "#photo-form select, #photo-form input:not([type=file])",
        """controls => controls.filter(c => c.offsetParent !== null).map(c =>
            [...c.closest('label').childNodes].filter(n => n.nodeType === Node.TEXT_NODE)
                .map(n => n.textContent).join(' ').trim())""",
    )
    assert "Game" in names and "Round" in names
    assert len(names) == len(set(names)), names


def test_the_trainer_keeps_the_deal_number_whole_and_the_focus(page: Any) -> None:
    page.click("#tab-trainer")
    seed = "2519830273476819826"  # over 2^53: a JavaScript number would lose its last digits
    page.fill("#trainer-seed", seed)
    page.click("#trainer-deal")
    page.wait_for_selector("#trainer-hands li button.pick")
    assert page.get_attribute("#trainer-prompt", "data-seed") == seed
    assert seed in page.inner_text("#trainer-prompt")
    first = page.eval_on_selector_all(
        "#trainer-hands .card", "cards => cards.map(c => c.dataset.code)"
    )
    names = page.locator("#trainer-hands button.pick").all_inner_texts()
    assert names == ["Hand A wins", "Hand B wins", "Hand C wins"]
    page.get_by_role("button", name="Hand B wins").click()
    page.wait_for_selector("#trainer-verdict")
    assert page.evaluate("() => document.activeElement.id") == "trainer-result"
    # a deal drawn by the server is shown whole, and replays the same hands
    page.fill("#trainer-seed", "")
    page.click("#trainer-next")
    page.wait_for_selector("#trainer-hands li button.pick:not([disabled])")
    drawn = page.get_attribute("#trainer-prompt", "data-seed")
    assert drawn and re.fullmatch(r"\d+", drawn) and int(drawn) < 2**53
    page.fill("#trainer-seed", seed)
    page.click("#trainer-deal")
    page.wait_for_function(
        f"() => document.getElementById('trainer-prompt').dataset.seed === '{seed}'"
    )
    again = page.eval_on_selector_all(
        "#trainer-hands .card", "cards => cards.map(c => c.dataset.code)"
    )
    assert again == first


def test_the_api_documentation_works_with_no_network(browser: Any, server: Server) -> None:
    context = browser.new_context()
    blocked: list[str] = []

    def only_here(route: Any) -> None:
        if route.request.url.startswith(server.url):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort("internetdisconnected")

    context.route("**/*", only_here)
    page = context.new_page()
    try:
        page.goto(server.url + "/docs")
        page.wait_for_selector(".swagger-ui .info .title", timeout=30_000)
        assert "handreader" in page.inner_text(".swagger-ui .info .title")
        page.wait_for_selector(".opblock-summary-path[data-path='/v1/score']")
        page.wait_for_load_state("networkidle")
    finally:
        context.close()
    assert blocked == []


def test_a_tap_enlarges_the_photo_to_the_whole_screen_and_another_closes_it(
    page: Any, photo: Path
) -> None:
    page.set_input_files("#photo-file", str(photo))
    _read_in(page)
    canvas = page.locator("#photo-canvas")
    small = canvas.bounding_box()
    assert small is not None and small["width"] <= PHONE["width"]
    canvas.tap()
    page.wait_for_selector("#photo-figure.enlarged")
    big = canvas.bounding_box()
    assert big is not None and big["width"] >= 2 * PHONE["width"] - 1  # scroll and pinch
    assert page.inner_text("#photo-enlarge") == "Close"  # the label says it: no aria-pressed
    # the labels are drawn again at the new size: still LABEL_CSS_PX on the screen
    assert abs(drawn_labels(page, "photo-canvas")["fontCss"] - 18) < 1.5
    page.locator("#photo-enlarge").tap()
    page.wait_for_selector("#photo-figure:not(.enlarged)")
    back = canvas.bounding_box()
    assert back is not None and abs(back["width"] - small["width"]) < 1


def test_the_dealer_sees_the_seats_before_declaring(page: Any, fake: SlowFake, photo: Path) -> None:
    """Choosing the photo reads it (nothing logged) and draws each hand with its seat, so the
    dealer declares by the seats the check will use."""
    page.click("#tab-verify")
    page.set_input_files("#verify-file", str(photo))
    page.wait_for_function(
        "() => document.getElementById('verify-status').textContent.startsWith('Seats read')"
    )
    assert page.inner_text("#verify-status").startswith("Seats read: 0 (banker), 1, 2.")
    drawn = drawn_labels(page, "verify-canvas")
    assert [label["text"].split(" \u00b7 ")[0] for label in drawn["labels"]] == [
        "Banker 0", "Seat 1", "Seat 2",
    ]  # fmt: skip
    assert page.locator("#verify-verdict").count() == 0  # no check made, nothing logged


def test_deck_and_letters_say_what_they_mean_when_tapped(page: Any) -> None:
    """WCAG 3.3.2: the header's Deck and Letters choices are explained by text on the page (the
    selects' aria-describedby), shown under the header when a choice is tapped (focused), not
    by a title a phone never shows; the text fits the screen."""
    for select, words in (("deck-select", "calibrate"), ("indices-select", "corners")):
        assert page.get_attribute(f"#{select}", "title") is None, select
        hint = page.get_attribute(f"#{select}", "aria-describedby")
        assert hint, select
        assert page.is_hidden(f"#{hint}"), hint  # out of the way until asked for
        page.locator(f"#{select}").tap()
        page.wait_for_selector(f"#{hint}", state="visible")
        assert words in page.inner_text(f"#{hint}"), hint
        box = page.locator(f"#{hint}").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
        page.locator("main").tap(position={"x": 5, "y": 5})  # elsewhere: the hint goes
        page.wait_for_selector(f"#{hint}", state="hidden")


_SMALL_TARGETS = """() => {
  // a checkbox, radio or file field is used through its label, the target a finger meets
  const target = (node) => node.matches("input[type=checkbox], input[type=radio], input[type=file]")
    ? node.closest("label") : node;
  return [...document.querySelectorAll("button, select, input, textarea, summary, a[href]")]
    .filter((node) => node.offsetParent !== null || node.matches("input[type=file]"))
    .map((node) => [node.id || node.textContent.trim().slice(0, 30) || node.outerHTML.slice(0, 60),
                    target(node).getBoundingClientRect()])
    .filter(([, box]) => box.width > 0 && (box.width < 44 || box.height < 44))
    .map(([name, box]) => `${name}: ${Math.round(box.width)} x ${Math.round(box.height)}`);
}"""


def test_every_control_is_a_finger_sized_target_on_a_touch_screen(page: Any) -> None:
    """WCAG 2.5.5 (and the platforms' guidance): on a touch screen (pointer: coarse) every
    button, select, field, summary and link is at least 44 x 44 CSS px, in every mode."""
    assert page.evaluate("matchMedia('(pointer: coarse)').matches")
    small: dict[str, list[str]] = {}
    for tab in ("photo", "live", "trainer", "verify", "decks"):
        page.click(f"#tab-{tab}")
        if tab == "live":
            page.click("#mode-live details.help summary")
        if tab == "trainer":
            page.click("#trainer-deal")
            page.wait_for_selector("#trainer-hands li button.pick")
        if tab == "verify":
            page.click("#audit summary")
        if tab == "decks":
            page.fill("#wizard-name", "finger-deck")
            page.click("#wizard-start")
            page.wait_for_selector("#wizard-cards:not([hidden])")
        found = page.evaluate(_SMALL_TARGETS)
        if found:
            small[tab] = found
    assert small == {}, small


def test_the_header_wraps_at_200_percent_zoom_on_a_phone(page: Any) -> None:
    """WCAG 1.4.10 beyond its 320 px: a 390 px phone at 200% zoom is 195 CSS px wide; the
    header wraps its tabs and its Deck and Letters choices, so nothing sticks out."""
    page.set_viewport_size({"width": 195, "height": 422})
    for tab in ("photo", "live", "trainer", "verify", "decks"):
        page.click(f"#tab-{tab}")
        # a phone's browser widens its layout to what sticks out: measured against 195 px
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 195, f"the {tab} tab is {width} px wide at 195 px"
        wide = page.eval_on_selector_all(
            "header *",
            "nodes => nodes.filter(n => n.offsetParent !== null"
            " && n.getBoundingClientRect().right > 195.5).map(n => n.id || n.tagName)",
        )
        assert wide == [], (tab, wide)
