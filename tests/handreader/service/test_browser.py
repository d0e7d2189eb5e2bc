"""The page in a real headless Chromium (Debian's ``chromium``, driven by Playwright).

The server is the real app (``serve.create_app``) run by uvicorn in a thread on a loopback port,
with a fake recognizer (``web_fakes.FakeReader``), so these tests check the page and the
service, not the models. The camera is Chromium's fake device playing a generated y4m video of
plain grey frames; the overlay check looks for the overlay's card colour in a screenshot, a
colour the grey video cannot contain.

Expectations: seed 002 and the trainer profile (No Niu banker against Niu Niu and Niu 4: both
players win; the equal bet pays 1:1 less 5% commission, +95 on a stake of 100), the rules engine for
the trainer's winner, the requirements for what each mode shows; for decks, the product's
requirements (a calibration wizard on the page, the deck then chosen for photo and live modes; a
photo missing a card is refused naming the position) and the documented order of
``vision.calibrate_deck`` (S, H, D, C from A to K).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from browser_page import TOKEN, Server, chromium_with_camera, drawn_labels, start_wizard
from web_fakes import NIU_TABLE, DeckFakeReader, image_bytes, write_y4m

from handreader.service.routes.verification import AuditSettings
from rules.niuniu import rank_hands
from vision.calibration import load_profile, new_profile, save_profile

pytestmark = pytest.mark.browser

pytest.importorskip("playwright.sync_api")

CARD_COLOUR_RGB = (255, 214, 0)
"""The overlay's colour for a card box (draw.js CARD_COLOUR)."""


@pytest.fixture(scope="module")
def fake() -> DeckFakeReader:
    return DeckFakeReader(NIU_TABLE)


@pytest.fixture(scope="module")
def decks_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The user's data folder of this module's tests (deck profiles), never the real one."""
    folder = tmp_path_factory.mktemp("data")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HANDREADER_DATA", str(folder))
        yield folder


@pytest.fixture(scope="module")
def server(
    fake: DeckFakeReader, decks_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    audit = tmp_path_factory.mktemp("audit") / "audit.sqlite3"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HANDREADER_AUDIT_TOKEN", TOKEN)
        patch.setenv("HANDREADER_AUDIT_DB", str(audit))
        assert AuditSettings.from_env().path == audit
        running = Server(fake)  # the audit settings are read here, from the environment
    with running:
        yield running


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    video = write_y4m(tmp_path_factory.mktemp("camera") / "table.y4m")
    with chromium_with_camera(video) as chromium:
        yield chromium


@pytest.fixture
def page(browser: Any, server: Server, fake: DeckFakeReader) -> Iterator[Any]:
    fake.hands = dict(NIU_TABLE)
    fake.uncertain = []
    fake.deck_calls.clear()
    fake.missing, fake.grid_reads = set(), {}
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["camera"], origin=server.url)
    tab = context.new_page()
    problems: list[str] = []
    tab.on("pageerror", lambda error: problems.append(str(error)))
    tab.goto(server.url + "/")
    tab.wait_for_selector("body[data-ready='true']")
    yield tab
    context.close()
    assert problems == [], f"JavaScript errors on the page: {problems}"


def _photo(tmp_path: Path) -> Path:
    path = tmp_path / "table.png"
    path.write_bytes(image_bytes(800, 600, ".png"))
    return path


def test_page_loads_its_own_files_only(page: Any, server: Server) -> None:
    # Required: plain files, nothing fetched from elsewhere at run time; nothing missing (the
    # favicon included).
    requested: list[str] = []
    failed: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.on("response", lambda response: response.status >= 400 and failed.append(response.url))
    page.reload()
    page.wait_for_selector("body[data-ready='true']")
    page.wait_for_load_state("networkidle")
    assert requested and all(url.startswith(server.url) for url in requested), requested
    assert failed == []
    assert server.url + "/static/favicon.svg" in requested
    assert page.title() == "handreader"


def test_photo_mode_shows_the_annotated_photo_and_the_results(
    page: Any, fake: DeckFakeReader, tmp_path: Path
) -> None:
    page.select_option("#photo-profile", "trainer")
    page.fill("#photo-stake", "100")
    before = len(fake.sizes)
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-players tbody tr")
    assert len(fake.sizes) == before + 1  # the photo is read once
    assert page.locator("#photo-canvas").is_visible()
    assert not page.locator("#photo-annotated").is_visible()
    drawn = drawn_labels(page, "photo-canvas")
    assert (drawn["width"], drawn["height"]) == (800, 600)  # the photo's own size
    # a label per hand, inside the frame, the banker's though its hand touches the top edge
    assert len(drawn["labels"]) == 3
    for label in drawn["labels"]:
        assert label["x"] >= 0 and label["y"] >= 0
        assert label["x"] + label["w"] <= 800 and label["y"] + label["h"] <= 600
    assert any("Banker 0" in label["text"] for label in drawn["labels"])
    hands = page.locator("#photo-hands tbody tr")
    assert hands.count() == 3
    text = page.locator("#photo-results").inner_text()
    for label in ("No Niu", "Niu Niu", "Niu 4"):
        assert label in text
    players = page.locator("#photo-players tbody tr")
    assert players.count() == 2
    # seed 002, trainer profile, equal bet: both players beat No Niu, +95 each on 100
    for row in range(2):
        cells = players.nth(row).locator("td")
        assert cells.nth(1).inner_text() == "win"
        assert cells.nth(2).inner_text() == "+95"
    assert "Banker's net: -190" in text
    # the bull of Niu Niu (K Q 10 make 30) is highlighted in the cards column
    assert page.locator("#photo-hands .card.bull").count() >= 3


def test_photo_mode_baccarat_draws_the_sides(
    page: Any, fake: DeckFakeReader, tmp_path: Path
) -> None:
    # RULES.md section 3: Player 9+5 = 4 draws (3 -> 7); Banker K+6 = 6 stands after a
    # Player third card of 3 (the tableau draws on 6 only after a 6 or 7): Player 7 beats 6.
    fake.hands = {"9H 5C 3D": (0.1, 0.4), "KD 6S": (0.7, 0.4)}
    page.select_option("#photo-game", "baccarat")
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-players tbody tr")
    assert page.locator("#photo-canvas").is_visible()
    assert "Result: player" in page.locator("#photo-results").inner_text()
    sides = page.locator("#photo-hands tbody tr")
    assert sides.nth(0).locator("td").nth(2).inner_text() == "7"
    assert sides.nth(1).locator("td").nth(2).inner_text() == "6"


def test_the_decks_letters_chosen_on_the_page_reach_photo_and_live_reads(
    page: Any, fake: DeckFakeReader, tmp_path: Path
) -> None:
    """The header's Letters choice is sent as ``indices`` with each photo (and the photo read
    again when it changes) and with the live stream (docs/api.md)."""
    fake.letters.clear()
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-players tbody tr")
    assert fake.letters == []  # none named: the default reading
    page.select_option("#indices-select", "french")
    page.wait_for_function("() => !document.getElementById('photo-submit').disabled")
    page.wait_for_function(
        "() => !document.getElementById('photo-status').textContent.includes('Reading')"
    )
    assert "french" in fake.letters
    page.click("#tab-live")
    fake.letters.clear()
    page.click("#live-start")
    page.wait_for_function(
        "() => document.getElementById('live-status').textContent.includes('cards')",
        timeout=30_000,
    )
    page.select_option("#indices-select", "dutch")
    page.wait_for_timeout(500)
    page.click("#live-stop")
    page.select_option("#indices-select", "")
    assert fake.letters[0] == "french" and "dutch" in fake.letters


_BANKER_HOLDS = """(code) => [...document.querySelectorAll('#live-results #photo-hands tbody tr')]
    .some((row) => row.cells[1].textContent === 'banker'
        && row.cells[2].textContent.includes(code))"""
"""Whether the live results' banker row holds the card ``code`` (as the page writes it: A\u2660)."""


def _wait_for_banker(page: Any, code: str) -> None:
    page.wait_for_function(_BANKER_HOLDS, arg=code, timeout=15_000)


def test_the_dealer_draws_the_seats_on_the_video_and_the_hands_follow_them(
    page: Any, fake: DeckFakeReader
) -> None:
    """A box dragged round the Niu Niu hand (web_fakes.NIU_TABLE: x 0.1 to 0.23, y 0.6 to 0.65
    of the frame) makes it the banker's, in place of the hand on top (the default banker
    rule); Clear seats gives the hands back to that rule."""
    page.click("#tab-live")
    page.click("#live-start")
    page.wait_for_function(
        "() => document.getElementById('live-status').textContent.includes('15 cards')",
        timeout=30_000,
    )
    _wait_for_banker(page, "A\u2660")  # No Niu (AS 2S 3S 4S 8S), on top
    page.click("#live-seats")
    assert page.inner_text("#live-seats") == "Done"
    box = page.locator("#live-seat-boxes").bounding_box()
    page.mouse.move(box["x"] + 0.05 * box["width"], box["y"] + 0.5 * box["height"])
    page.mouse.down()
    page.mouse.move(box["x"] + 0.3 * box["width"], box["y"] + 0.75 * box["height"], steps=5)
    page.mouse.up()
    page.click("#live-seats")  # Done: the seats are sent
    _wait_for_banker(page, "K\u2660")  # Niu Niu (KS QS 10S 5C 5S)
    page.click("#live-seats-clear")
    _wait_for_banker(page, "A\u2660")
    page.click("#live-stop")
    assert page.locator("#live-seats").is_disabled()


def _overlay_pixels(page: Any) -> int:
    counted: int = page.evaluate(
        """() => {
            const canvas = document.getElementById('live-overlay');
            if (!canvas.width || !canvas.height) return 0;
            const context = canvas.getContext('2d');
            const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
            let count = 0;
            for (let i = 3; i < data.length; i += 4) if (data[i] > 0) count++;
            return count;
        }"""
    )
    return counted


def test_live_mode_draws_the_overlay_over_the_camera(
    page: Any, fake: DeckFakeReader, tmp_path: Path
) -> None:
    page.click("#tab-live")
    before = len(fake.sizes)
    page.click("#live-start")
    # the tracker shows a card after 3 consecutive read frames (vision/tracking.py)
    page.wait_for_function(
        "() => document.getElementById('live-status').textContent.includes('15 cards')",
        timeout=30_000,
    )
    assert _overlay_pixels(page) > 0
    # frames came from the fake camera (640x480 y4m) as JPEG over the WebSocket
    assert (640, 480) in fake.sizes[before:]
    shot = tmp_path / "live.png"
    page.locator("#live-stage").screenshot(path=str(shot))
    picture = cv2.imread(str(shot), cv2.IMREAD_COLOR)
    assert picture is not None
    red, green, blue = CARD_COLOUR_RGB
    target = np.array([blue, green, red], dtype=np.int16)
    close = np.abs(picture.astype(np.int16) - target).max(axis=2) <= 40
    assert int(close.sum()) > 200, "no overlay colour in the screenshot of the live view"
    # the results under the video show the table scored from the tracked cards
    page.wait_for_selector("#live-results #photo-players tbody tr")
    assert "Niu Niu" in page.locator("#live-results").inner_text()
    page.click("#live-stop")
    assert _overlay_pixels(page) == 0


def _dealt(page: Any) -> list[list[str]]:
    hands: list[list[str]] = page.evaluate(
        """() => [...document.querySelectorAll('#trainer-hands li')].map(
            (item) => [...item.querySelectorAll('.card')].map((card) => card.dataset.code))"""
    )
    return hands


def test_trainer_mode_counts_right_and_wrong_picks(page: Any) -> None:
    page.click("#tab-trainer")
    page.select_option("#trainer-count", "3")
    page.fill("#trainer-seed", "7")
    page.click("#trainer-deal")
    page.wait_for_selector("#trainer-hands li button.pick")
    hands = _dealt(page)
    assert len(hands) == 3 and all(len(hand) == 5 for hand in hands)
    winners = rank_hands([" ".join(hand) for hand in hands], "trainer").winners
    assert len(winners) == 1  # one deck and a high-card tie-break: no full tie (seed 002)
    page.locator("#trainer-hands button.pick").nth(winners[0]).click()
    page.wait_for_selector("#trainer-verdict")
    assert page.text_content("#trainer-verdict") == "Right"
    assert page.inner_text("#trainer-score") == "1 / 1"
    assert page.locator("#trainer-reading tbody tr").count() == 3
    # the next deal: pick a loser on purpose
    page.fill("#trainer-seed", "8")
    page.click("#trainer-next")
    page.wait_for_selector("#trainer-hands li button.pick:not([disabled])")
    hands = _dealt(page)
    winners = rank_hands([" ".join(hand) for hand in hands], "trainer").winners
    loser = next(index for index in range(3) if index not in winners)
    page.locator("#trainer-hands button.pick").nth(loser).click()
    page.wait_for_selector("#trainer-verdict")
    assert page.text_content("#trainer-verdict") == "Wrong"
    assert page.inner_text("#trainer-score") == "1 / 2"
    assert "(deal 8: give it as the seed to play it again)" in page.inner_text("#trainer-prompt")
    # a seed that is no whole number is named in the page's words; the deal shown stays
    page.fill("#trainer-seed", "-1")
    page.click("#trainer-next")
    page.wait_for_selector("#trainer-error:not([hidden])")
    error = page.inner_text("#trainer-error")
    assert "a seed is a whole number from 0 to 2^63 - 1, not -1" in error
    assert page.locator("#trainer-reading tbody tr").count() == 3


def test_dealer_check_names_the_difference(page: Any, tmp_path: Path) -> None:
    page.click("#tab-verify")
    page.set_input_files("#verify-file", str(_photo(tmp_path)))
    page.select_option("#verify-profile", "trainer")
    page.fill("#verify-stake", "100")
    page.fill("#verify-token", TOKEN)
    # seat 1 (Niu Niu) wins +95: declared right; seat 2 (Niu 4) also wins, declared a loss
    page.fill("#verify-rows tr:nth-child(1) .payout", "95")
    page.click("#verify-add")
    page.fill("#verify-rows tr:nth-child(2) .seat", "2")
    page.select_option("#verify-rows tr:nth-child(2) .outcome", "lose")
    page.click("#verify-submit")
    page.wait_for_selector("#verify-verdict")
    assert page.text_content("#verify-verdict") == "mismatch"
    rows = page.locator("#verify-differences tbody tr")
    assert rows.count() == 1
    assert rows.nth(0).locator("td").nth(0).inner_text() == "2"
    # the audit log lists it
    page.click("#audit summary")
    page.click("#audit-list")
    page.wait_for_selector("#audit-table tbody tr")
    assert "mismatch" in page.inner_text("#audit-table")


# --- decks ---------------------------------------------------------------------------------------


def _card_photos(tmp_path: Path, count: int) -> list[str]:
    paths = []
    for index in range(count):
        path = tmp_path / f"card{index}.png"
        path.write_bytes(image_bytes(320, 240, ".png"))
        paths.append(str(path))
    return paths


def test_deck_wizard_calibrates_and_photo_mode_reads_with_the_deck(
    page: Any, fake: DeckFakeReader, decks_dir: Path, tmp_path: Path
) -> None:
    photos = _card_photos(tmp_path, 3)
    page.click("#tab-decks")
    page.fill("#wizard-name", "casino")
    page.fill("#wizard-token", TOKEN)  # (the operator token: saving a deck needs it)
    page.click("#wizard-start")
    page.wait_for_selector("#wizard-cards:not([hidden])")
    # the documented order: S, H, D, C from A to K (vision.calibrate_deck)
    assert page.get_attribute("#wizard-card", "data-code") == "AS"
    page.set_input_files("#wizard-file", photos[0])
    assert page.get_attribute("#wizard-card", "data-code") == "2S"
    page.click("#wizard-skip")
    assert page.get_attribute("#wizard-card", "data-code") == "3S"
    page.set_input_files("#wizard-many", photos[1:])  # 3S and 4S, in order
    assert page.get_attribute("#wizard-card", "data-code") == "5S"
    taken = page.eval_on_selector_all("#wizard-taken li", "items => items.map(i => i.dataset.code)")
    assert taken == ["AS", "3S", "4S"]
    page.click("#wizard-finish")
    page.wait_for_selector("#wizard-done")
    assert "Deck casino: 3 cards from 6 corners" in page.inner_text("#wizard-done")
    page.wait_for_function("() => document.getElementById('wizard-sheet').naturalWidth > 0")
    assert page.evaluate("() => document.getElementById('wizard-sheet').naturalWidth") == 13 * 72
    # the profile holds the cards the wizard named (two corners each: the fake's)
    profile = load_profile("casino")
    assert {code: len(v) for code, v in profile.prototypes.items()} == {"AS": 2, "3S": 2, "4S": 2}
    assert (decks_dir / "decks" / "casino.json").is_file()
    # listed, chosen at the top, and used by photo mode
    assert "casino" in page.inner_text("#decks-table")
    assert page.input_value("#deck-select") == "casino"
    page.click("#wizard-use")
    page.wait_for_selector("#mode-photo:not([hidden])")
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-players tbody tr")
    assert fake.deck_calls == ["casino"]  # /v1/score, once: the page draws its answer
    # the standard reading again, the photo read again by itself: no deck reaches the recognizer
    fake.deck_calls.clear()
    page.select_option("#deck-select", "")
    deadline = time.monotonic() + 20  # (the status still says the last read's "Read in")
    while not fake.deck_calls:
        assert time.monotonic() < deadline, "the photo was not read again"
        page.wait_for_timeout(100)
    page.wait_for_function(
        "() => document.getElementById('photo-status').textContent.startsWith('Read in')"
    )
    assert fake.deck_calls == [None]


def test_deck_wizard_names_the_position_of_a_missing_grid_card(
    page: Any, fake: DeckFakeReader, tmp_path: Path
) -> None:
    fake.missing = {13 + 6}  # the hearts row's 7th place: 7H
    grid = tmp_path / "deck.png"
    grid.write_bytes(image_bytes(1400, 700, ".png"))
    start_wizard(page, "grid-deck", grid=True)
    assert page.locator("#wizard-grid-table tbody tr").count() == 4
    page.set_input_files("#wizard-grid-file", str(grid))
    page.wait_for_selector("#wizard-error:not([hidden])")
    message = page.inner_text("#wizard-error")
    assert "deck.png: no card found at row 2, column 7 (7H)" in message
    assert "grid-deck" not in page.inner_text("#decks-list")  # nothing saved
    # the photo corrected: calibrated, every card of the grid
    fake.missing = set()
    page.set_input_files("#wizard-grid-file", str(grid))
    page.wait_for_selector("#wizard-done")
    assert "Deck grid-deck: 52 cards from 104 corners" in page.inner_text("#wizard-done")


def test_live_mode_reads_with_the_chosen_deck(page: Any, fake: DeckFakeReader) -> None:
    vector = np.ones((1, 128), np.float32) / np.sqrt(128)
    save_profile(new_profile("mine", {"AS": list(vector)}, "fake-classifier", []))
    page.reload()
    page.wait_for_selector("body[data-ready='true']")
    page.wait_for_selector("#deck-select option[value='mine']", state="attached")
    page.select_option("#deck-select", "mine")
    page.click("#tab-live")
    page.click("#live-start")
    page.wait_for_function(
        "() => document.getElementById('live-status').textContent.includes('15 cards')",
        timeout=30_000,
    )
    assert fake.deck_calls and set(fake.deck_calls) == {"mine"}
    page.select_option("#deck-select", "")  # switched while streaming: {"deck": null}
    deadline = time.monotonic() + 20
    while fake.deck_calls[-1] is not None:
        assert time.monotonic() < deadline, "the live stream kept the deck"
        page.wait_for_timeout(100)
    page.click("#live-stop")


def test_a_lone_uncertain_reading_is_no_phantom_banker_on_the_page(
    page: Any, fake: DeckFakeReader, tmp_path: Path
) -> None:
    """A 0.40 "KC" at the top edge, far from every hand: listed outside every hand with its
    question mark; the banker is the real top hand and both players are settled."""
    fake.hands = {**NIU_TABLE, "KC": (0.9, 0.0)}
    fake.uncertain = ["KC"]
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-players tbody tr")
    rows = page.locator("#photo-hands tbody tr")
    assert rows.count() == 3
    assert rows.nth(0).locator("td").nth(0).inner_text() == "0 (banker)"
    assert "KC" not in page.locator("#photo-hands").inner_text()
    outcomes = page.locator("#photo-players tbody tr td:nth-child(2)").all_inner_texts()
    assert outcomes == ["win", "win"]
    text = page.locator("#photo-results").inner_text()
    assert "Cards outside every hand:" in text and "K\u2663?" in text


def test_a_blank_photo_says_no_cards_were_found_without_an_empty_table(
    page: Any, fake: DeckFakeReader, tmp_path: Path
) -> None:
    fake.hands = {}
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-results .error")
    assert page.locator("#photo-results .error").inner_text() == "no cards found"
    assert page.locator("#photo-hands").count() == 0
    assert not page.locator("#photo-submit").is_disabled()  # enabled again once answered


def test_a_large_photo_is_shrunk_in_the_page_before_it_is_sent(
    page: Any, fake: DeckFakeReader, tmp_path: Path
) -> None:
    path = tmp_path / "large.png"
    path.write_bytes(image_bytes(4000, 3000, ".png"))
    page.set_input_files("#photo-file", str(path))
    page.wait_for_selector("#photo-players tbody tr")
    # sent at 3000 x 2250 (the server may halve it again on decoding, as it reduces any
    # large photo): never the 4000 x 3000 photo or its own half, 2000 x 1500
    assert fake.sizes[-1] in ((3000, 2250), (1500, 1125))


def test_the_tabs_answer_the_arrow_keys(page: Any) -> None:
    page.focus("#tab-photo")
    page.keyboard.press("ArrowRight")
    assert page.get_attribute("#tab-live", "aria-selected") == "true"
    assert page.evaluate("document.activeElement.id") == "tab-live"
    assert page.locator("#mode-live").is_visible()
    page.keyboard.press("End")
    assert page.get_attribute("#tab-decks", "aria-selected") == "true"
    page.keyboard.press("ArrowRight")  # wraps round to the first
    assert page.get_attribute("#tab-photo", "aria-selected") == "true"
    # one tab stop for the list: only the chosen tab is in the tab order
    tab_indexes = page.eval_on_selector_all("nav [data-mode]", "tabs => tabs.map(t => t.tabIndex)")
    assert tab_indexes == [0, -1, -1, -1, -1]


def test_results_tables_never_break_a_word_inside_its_letters(
    page: Any, fake: DeckFakeReader, tmp_path: Path
) -> None:
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-players tbody tr")
    # every cell of plain text holding one word is one line high: "Seat", "Commission",
    # "player" are never split
    lines = page.eval_on_selector_all(
        "#photo-results th, #photo-results td",
        """cells => cells.filter((cell) => cell.children.length === 0).map((cell) => {
            const range = document.createRange();
            range.selectNodeContents(cell);
            const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
            return [cell.innerText, tops.size];
        })""",
    )
    assert lines
    for text, count in lines:
        if text and " " not in text.strip():
            assert count <= 1, (text, count)


def _intersect(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] < b["x"] + b["w"]
        and b["x"] < a["x"] + a["w"]
        and (a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"])
    )


PAGE_SCENES = {
    "three hands": dict(NIU_TABLE),
    "banker at the top edge": {"AS 2S 3S 4S 8S": (0.4, 0.0), "KS QS 10S 5C 5S": (0.1, 0.5),
                               "3H 7S KD 8C 6D": (0.6, 0.5)},
    "two close rows": {"AH 2H 3H 4H 6H": (0.1, 0.3), "7C 8C 9C JC QC": (0.55, 0.3),
                       "AD 2D 3D 4D 6D": (0.1, 0.38), "7D 8D 9D JD QD": (0.55, 0.38)},
}  # fmt: skip


@pytest.mark.parametrize("name", list(PAGE_SCENES))
def test_no_label_on_the_page_covers_a_code_or_another_label(
    page: Any, fake: DeckFakeReader, tmp_path: Path, name: str
) -> None:
    fake.hands = PAGE_SCENES[name]
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-hands tbody tr")
    drawn = drawn_labels(page, "photo-canvas")
    labels, keep_clear = drawn["labels"], drawn["codes"] + drawn["cards"]
    assert len(labels) == len(PAGE_SCENES[name])
    assert drawn["codeCss"] >= 14  # codes readable on a phone
    for number, label in enumerate(labels):
        assert not any(_intersect(label, other) for other in keep_clear), (name, label)
        assert not any(_intersect(label, other) for other in labels[number + 1 :]), name


def test_calibrating_a_deck_name_again_asks_before_replacing_it(
    page: Any, server: Server, tmp_path: Path
) -> None:
    photo = _card_photos(tmp_path, 1)[0]
    saved = page.request.post(
        f"{server.url}/v1/decks/kept",
        headers={"Authorization": f"Bearer {TOKEN}"},
        multipart={"photo": {"name": "AS.png", "mimeType": "image/png",
                             "buffer": Path(photo).read_bytes()}},
    )  # fmt: skip
    assert saved.ok, saved.text()
    page.reload()
    page.wait_for_selector("body[data-ready='true']")
    page.click("#tab-decks")
    page.fill("#wizard-name", "kept")
    page.fill("#wizard-token", TOKEN)
    page.click("#wizard-start")
    page.wait_for_selector("#wizard-replace-choice:not([hidden])")
    assert "a deck named kept exists" in page.inner_text("#wizard-error")
    assert page.locator("#wizard-cards").is_hidden()  # nothing started
    page.check("#wizard-replace")
    page.click("#wizard-start")
    page.wait_for_selector("#wizard-cards:not([hidden])")  # asked for: it goes on
    # a photo of 2S only: the deck's AS is lost, which the service takes only when the page
    # sends replace (else 409 deck_exists)
    page.click("#wizard-skip")
    page.set_input_files("#wizard-file", photo)
    page.click("#wizard-finish")
    page.wait_for_selector("#wizard-done")
    assert page.inner_text("#wizard-replaced").startswith("It replaced the deck kept of 1 card,")
    assert list(load_profile("kept").prototypes) == ["2S"]
