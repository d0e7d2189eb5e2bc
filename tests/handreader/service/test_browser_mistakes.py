# ruff: noqa: F401, F811
"""The page in Chromium against mistakes a user makes: a double click, a bad stake, a typo in
an option, a wrong operator token in the deck wizard, a deck of the wizard's name made
meanwhile (replaced once asked, or another name chosen, the photos kept), a file that is no
photo, the keyboard in the enlarged photo, an audit query that cannot match. The server,
browser and fakes are ``test_browser``'s."""

from __future__ import annotations

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

from vision.calibration import load_profile

pytestmark = pytest.mark.browser

pytest.importorskip("playwright.sync_api")


def _audit_count(server: Server) -> int:
    import httpx

    answer = httpx.get(
        server.url + "/v1/audit", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10
    )
    count: int = answer.json()["count"]
    return count


def test_a_double_click_on_check_logs_one_verification(
    page: Any, server: Server, tmp_path: Path
) -> None:
    before = _audit_count(server)
    page.click("#tab-verify")
    page.set_input_files("#verify-file", str(_photo(tmp_path)))
    page.fill("#verify-token", TOKEN)
    page.dblclick("#verify-submit")
    page.wait_for_selector("#verify-verdict")
    page.wait_for_timeout(300)  # a second request, had one gone out, would be logged by now
    assert _audit_count(server) == before + 1
    assert not page.locator("#verify-submit").is_disabled()


def test_a_stake_that_is_no_positive_number_is_named_not_replaced(
    page: Any, fake: DeckFakeReader, tmp_path: Path
) -> None:
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-players tbody tr")
    sizes = len(fake.sizes)
    page.fill("#photo-stake", "-5")
    page.dispatch_event("#photo-stake", "change")
    page.wait_for_selector("#photo-error:not([hidden])")
    assert "the stake must be a positive number, not -5" in page.inner_text("#photo-error")
    assert len(fake.sizes) == sizes  # nothing sent with a stake the user did not type
    assert page.locator("#photo-players tbody tr").count() > 0  # the last reading stays


def test_a_refused_option_keeps_the_photo_and_names_the_option(page: Any, tmp_path: Path) -> None:
    page.select_option("#photo-game", "pits")
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-results p, #photo-results table")
    page.fill("#photo-pits-table", "garbage!!")
    page.dispatch_event("#photo-pits-table", "change")
    page.wait_for_selector("#photo-error:not([hidden])")
    assert "garbage!!" in page.inner_text("#photo-error")
    assert page.locator("#photo-results").evaluate("node => node.childElementCount") > 0
    assert "correct the option" in page.inner_text("#photo-status")


def test_the_enlarged_photo_keeps_the_focus_and_gives_it_back(page: Any, tmp_path: Path) -> None:
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-enlarge:not([hidden])")
    page.focus("#photo-enlarge")
    page.keyboard.press("Enter")
    assert page.inner_text("#photo-enlarge") == "Close"  # its label says it; no aria-pressed
    assert page.get_attribute("#photo-enlarge", "aria-pressed") is None
    assert page.get_attribute("#photo-figure", "role") == "dialog"
    assert page.get_attribute("#photo-figure", "aria-modal") == "true"
    assert page.evaluate("document.getElementById('photo-form').inert")  # the page behind
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "photo-enlarge"  # not behind it
    page.keyboard.press("Escape")
    assert page.inner_text("#photo-enlarge") == "Enlarge"
    assert page.get_attribute("#photo-figure", "role") is None
    assert not page.evaluate("document.getElementById('photo-form').inert")
    assert page.evaluate("document.activeElement.id") == "photo-enlarge"


def test_an_audit_query_with_since_after_until_is_named(page: Any) -> None:
    page.click("#tab-verify")
    page.click("#audit summary")
    page.fill("#audit-since", "2026-12-06T12:00")
    page.fill("#audit-until", "2026-12-05T12:00")
    page.click("#audit-list")
    page.wait_for_selector("#audit-error:not([hidden])")
    assert "Since is not before Until" in page.inner_text("#audit-error")


def test_a_long_audit_log_is_listed_a_page_at_a_time(page: Any, server: Server) -> None:
    import json

    import httpx

    options = {"options": json.dumps({"stake": 100, "declared": {"1": "win", "2": "lose"}})}
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=server.url, headers=auth, timeout=30) as client:
        while _audit_count(server) <= 120:
            files = {"image": ("round.png", image_bytes(64, 48, ".png"), "image/png")}
            assert client.post("/v1/verify", files=files, data=options).status_code == 200
    count = _audit_count(server)
    page.click("#tab-verify")
    page.fill("#verify-token", TOKEN)
    page.click("#audit summary")
    page.click("#audit-list")
    page.wait_for_selector("#audit-table tbody tr")
    assert page.locator("#audit-table tbody tr").count() == 100
    assert page.inner_text("#audit-count") == f"{count} record(s), the first 100 shown"
    page.select_option("#audit-verdict", "match")  # a filter changed, not listed again
    page.dblclick("#audit-more")  # one page more, of the query listed
    page.wait_for_function(
        "() => !document.getElementById('audit-count').textContent.includes('first 100')"
    )
    page.wait_for_timeout(500)  # a second page, had the double click asked one, is in by now
    shown = min(count, 200)
    assert page.locator("#audit-table tbody tr").count() == shown
    ids = page.locator("#audit-table tbody tr td:first-child").all_inner_texts()
    assert ids == [str(number) for number in range(1, shown + 1)]  # in order, none twice
    assert page.is_hidden("#audit-more") == (count <= 200)
    # the button keeps its focus while it asks; hidden after the last page, it hands it on
    focused = page.evaluate("() => document.activeElement && document.activeElement.id")
    assert focused == ("audit-count" if count <= 200 else "audit-more")


def test_a_wrong_token_in_the_deck_wizard_is_mended_without_losing_the_photos(
    page: Any, tmp_path: Path
) -> None:
    photos = _card_photos(tmp_path, 2)
    note = tmp_path / "notes.txt"
    note.write_text("not a photo")
    start_wizard(page, "mended", token="WRONG")
    page.set_input_files("#wizard-file", str(note))  # no image: named, the card still waits
    assert "notes.txt is no photo" in page.inner_text("#wizard-error")
    assert "an image for A\u2660" in page.inner_text("#wizard-error")  # the prompt's notation
    assert page.get_attribute("#wizard-card", "data-code") == "AS"
    page.set_input_files("#wizard-many", photos)
    assert "2 photos taken" in page.inner_text("#wizard-progress")
    page.click("#wizard-finish")
    page.wait_for_selector("#wizard-error:not([hidden])")
    assert "unauthorized" in page.inner_text("#wizard-error")
    assert page.is_visible("#wizard-token")  # reachable from the cards step
    page.fill("#wizard-token", TOKEN)
    page.click("#wizard-finish")
    page.wait_for_selector("#wizard-done")
    assert "Deck mended: 2 cards" in page.inner_text("#wizard-done")


def _calibrate_over_a_deck_made_meanwhile(
    page: Any, server: Server, tmp_path: Path, name: str
) -> None:
    """The wizard started for ``name``, a deck of that name holding AS saved over the API
    after it (the page's list predates it), then a photo taken for 2S and Calibrate pressed:
    a replacement that would lose the AS."""
    photo = _card_photos(tmp_path, 1)[0]
    start_wizard(page, name)
    saved = page.request.post(
        f"{server.url}/v1/decks/{name}",
        headers={"Authorization": f"Bearer {TOKEN}"},
        multipart={"photo": {"name": "AS.png", "mimeType": "image/png",
                             "buffer": Path(photo).read_bytes()}},
    )  # fmt: skip
    assert saved.ok, saved.text()
    page.click("#wizard-skip")
    page.set_input_files("#wizard-file", photo)  # 2S: the deck's AS would be lost
    page.click("#wizard-finish")


def test_a_deck_made_meanwhile_is_not_replaced_unasked_and_is_replaced_once_ticked(
    page: Any, server: Server, tmp_path: Path
) -> None:
    """The page's list predates the deck: it asks nothing, the service refuses (409); the page
    then offers the replacement there, the photos kept, and Calibrate sends it when ticked."""
    _calibrate_over_a_deck_made_meanwhile(page, server, tmp_path, "meanwhile")
    page.wait_for_selector("#wizard-replace-choice:not([hidden])")
    message = page.inner_text("#wizard-error")
    assert message.startswith("a deck named meanwhile exists and would lose 1 card (A\u2660)")
    assert 'tick "replace" and press Calibrate again' in message
    assert "replace=true" not in message and "deck_exists" not in message
    assert list(load_profile("meanwhile").prototypes) == ["AS"]  # nothing changed
    # the photos kept, in the step they were taken in
    assert page.is_visible("#wizard-cards")
    assert page.locator("#wizard-taken li").count() == 1
    assert page.get_attribute("#wizard-taken li", "data-code") == "2S"
    assert page.inner_text("#wizard-finish") == "Calibrate with 1 photo"
    assert page.evaluate("() => document.activeElement.id") == "wizard-replace"
    page.check("#wizard-replace")
    page.click("#wizard-finish")
    page.wait_for_selector("#wizard-done")
    assert page.inner_text("#wizard-replaced").startswith("It replaced the deck meanwhile of 1")
    assert page.locator("#wizard-replace-choice").is_hidden()
    deck = page.request.get(f"{server.url}/v1/decks/meanwhile").json()
    assert deck["cards"] == 1 and "AS" in deck["missing"] and "2S" not in deck["missing"]


def test_after_a_refused_replacement_another_name_keeps_the_photos(
    page: Any, server: Server, tmp_path: Path
) -> None:
    _calibrate_over_a_deck_made_meanwhile(page, server, tmp_path, "taken")
    page.wait_for_selector("#wizard-rename:not([hidden])")
    page.click("#wizard-rename")
    page.wait_for_selector("#wizard-setup:not([hidden])")
    page.fill("#wizard-name", "other")
    page.click("#wizard-start")
    page.wait_for_selector("#wizard-cards:not([hidden])")
    assert page.get_attribute("#wizard-taken li", "data-code") == "2S"  # not taken again
    page.click("#wizard-finish")
    page.wait_for_selector("#wizard-done")
    assert "Deck other: 1 card" in page.inner_text("#wizard-done")
    assert list(load_profile("taken").prototypes) == ["AS"]


def test_a_wrong_token_keeps_the_seats_read_in_view(page: Any, tmp_path: Path) -> None:
    page.click("#tab-verify")
    page.set_input_files("#verify-file", str(_photo(tmp_path)))
    page.wait_for_function(
        "() => document.getElementById('verify-status').textContent.startsWith('Seats read')"
    )
    seats = page.inner_text("#verify-status")
    page.fill("#verify-token", "WRONG")
    page.click("#verify-submit")
    page.wait_for_selector("#verify-error:not([hidden])")
    assert "unauthorized" in page.inner_text("#verify-error")
    status = page.inner_text("#verify-status")  # the refusal said, the seats still in view
    assert status.startswith("Not checked: ") and status.endswith(seats), status
    assert page.is_visible("#verify-canvas")


def test_a_file_that_is_no_card_photo_is_given_back_when_chosen(page: Any, tmp_path: Path) -> None:
    """docs/page.md: a file that is no image is named and its card waits for a photo: a text
    file named .jpg (its type told from the name) and a photo too small to read were kept, and
    the whole calibration refused at the end."""
    photos = _card_photos(tmp_path, 1)
    named = tmp_path / "named.jpg"
    named.write_text("not a photo")
    tiny = tmp_path / "tiny.jpg"
    tiny.write_bytes(image_bytes(20, 15, ".jpg"))
    start_wizard(page, "checked")
    for bad, why in (
        (named, "is no image this page can read"),
        (tiny, "is 20 x 15 pixels: too small to read a card in"),
    ):
        page.set_input_files("#wizard-file", str(bad))
        page.wait_for_selector("#wizard-error:not([hidden])")
        # the card named as the prompt names it (A\u2660), not by its code
        assert f"{bad.name} {why}: choose another photo of A\u2660" in (
            page.inner_text("#wizard-error")
        )
        assert page.get_attribute("#wizard-card", "data-code") == "AS"
        assert "0 photos taken" in page.inner_text("#wizard-progress")
    page.set_input_files("#wizard-file", photos[0])
    page.click("#wizard-finish")
    page.wait_for_selector("#wizard-done")
    assert "Deck checked: 1 card" in page.inner_text("#wizard-done")


def test_a_bad_file_among_several_is_given_back_and_its_card_shown_again(
    page: Any, tmp_path: Path
) -> None:
    photos = _card_photos(tmp_path, 3)
    named = tmp_path / "named.jpg"
    named.write_text("not a photo")
    sent: list[str] = []
    page.on("request", lambda request: sent.append(request.url))
    start_wizard(page, "several")
    page.set_input_files("#wizard-many", [photos[0], str(named), photos[1]])  # AS, 2S, 3S
    page.wait_for_selector("#wizard-error:not([hidden])")
    assert "named.jpg is no image this page can read: choose another photo of 2\u2660" in (
        page.inner_text("#wizard-error")
    )
    assert not any("/v1/decks/several" in url for url in sent)
    assert page.get_attribute("#wizard-card", "data-code") == "2S"  # its card shown again
    page.set_input_files("#wizard-file", photos[2])  # 2S's photo: the cards go on after 3S
    assert page.get_attribute("#wizard-card", "data-code") == "4S"
    page.click("#wizard-finish")
    page.wait_for_selector("#wizard-done")
    assert "Deck several: 3 cards" in page.inner_text("#wizard-done")
