# ruff: noqa: F401, F811
"""The page in Chromium for a user who cannot see it, or sees it narrow: results and verdicts
said in the status lines that screen readers announce, a live stream that does not flood them,
an out-of-date banner that says what is happening at full contrast, reduced motion honoured,
buttons named for what they remove, the Enlarge button beside the drawing, results tables that
fit their column. The server, browser and fakes are ``test_browser``'s."""

from __future__ import annotations

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

_READ = "() => document.getElementById('photo-status').textContent.startsWith('Read in')"


def test_the_status_line_says_the_result_of_each_game(page: Any, tmp_path: Path) -> None:
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_function(_READ)
    status = page.inner_text("#photo-status")
    assert "hands (" in status and "banker's net" in status, status
    assert page.get_attribute("#photo-status", "aria-live") == "polite"
    page.select_option("#photo-game", "pits")
    page.wait_for_function(_READ + " && document.getElementById('photo-status')"
                           ".textContent.includes(': legal') || document.getElementById("
                           "'photo-status').textContent.includes('illegal')")  # fmt: skip
    verdict = page.evaluate("() => document.getElementById('photo-status').textContent")
    assert "legal" in verdict and "hands" not in verdict, verdict


def test_the_dealer_check_announces_its_verdict(page: Any, tmp_path: Path) -> None:
    page.click("#tab-verify")
    page.set_input_files("#verify-file", str(_photo(tmp_path)))
    page.fill("#verify-token", TOKEN)
    page.click("#verify-submit")
    page.wait_for_selector("#verify-verdict")
    status = page.inner_text("#verify-status")
    assert status.startswith("Checked: "), status
    assert page.inner_text("#verify-verdict").lower() in status.lower()
    assert page.get_attribute("#verify-status", "aria-live") == "polite"
    names = page.eval_on_selector_all(
        "#verify-rows .remove", "buttons => buttons.map(b => b.getAttribute('aria-label'))"
    )
    assert names == ["Remove seat 1"]


def test_an_option_refused_by_its_range_keeps_the_photo_and_the_banner_says_why(
    page: Any, tmp_path: Path
) -> None:
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_selector("#photo-players tbody tr")
    page.fill("#photo-stake", "1e20")  # a number the page takes, the server refuses (422)
    page.dispatch_event("#photo-stake", "change")
    page.wait_for_selector("#photo-error:not([hidden])")
    assert "stake" in page.inner_text("#photo-error")
    assert page.locator("#photo-players tbody tr").count() > 0  # the last reading stays
    banner = page.evaluate(
        "() => getComputedStyle(document.getElementById('photo-results'), '::before').content"
    )
    assert "correct the option" in banner and "reading again" not in banner
    # the content in grey, never faded (WCAG AA's 4.5:1 holds for out-of-date text too), the
    # banner at full strength
    content = page.evaluate(
        "() => { const s = getComputedStyle(document.querySelector('#photo-results > *'));"
        " return [s.opacity, s.filter]; }"
    )
    assert content == ["1", "grayscale(1)"]
    assert (
        page.evaluate("() => getComputedStyle(document.getElementById('photo-results')).opacity")
        == "1"
    )


def test_reduced_motion_stops_the_spinner(browser: Any, server: Server, tmp_path: Path) -> None:
    context = browser.new_context(reduced_motion="reduce")
    try:
        tab = context.new_page()
        tab.goto(server.url + "/")
        tab.wait_for_selector("body[data-ready='true']")
        tab.evaluate("() => document.getElementById('photo-status').classList.add('busy')")
        animation = tab.evaluate(
            "() => getComputedStyle(document.getElementById('photo-status'), '::before')"
            ".animationName"
        )
        assert animation == "none"
    finally:
        context.close()


def _box(page: Any, selector: str) -> dict[str, float]:
    box: dict[str, float] = page.locator(selector).bounding_box()
    return box


@pytest.mark.parametrize("width", [1280, 390])
def test_the_enlarge_button_is_beside_the_drawing_and_the_results_fit_their_column(
    browser: Any, server: Server, tmp_path: Path, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        tab = context.new_page()
        tab.goto(server.url + "/")
        tab.wait_for_selector("body[data-ready='true']")
        tab.set_input_files("#photo-file", str(_photo(tmp_path)))
        tab.wait_for_selector("#photo-players tbody tr")
        drawing, button = _box(tab, "#photo-canvas"), _box(tab, "#photo-enlarge")
        assert button["y"] >= drawing["y"] + drawing["height"] - 0.5  # below, not over it
        overflow = tab.evaluate(
            "() => [...document.querySelectorAll('#photo-results table')]"
            ".map(t => t.getBoundingClientRect().width - t.parentElement.clientWidth)"
        )
        assert overflow and max(overflow) <= 0.5, overflow
    finally:
        context.close()


def test_the_live_stream_is_announced_when_the_table_changes_not_every_frame(
    page: Any,
) -> None:
    page.click("#tab-live")
    assert page.get_attribute("#live-status", "aria-live") is None  # frames/s: not announced
    page.evaluate(
        """() => {
            window.announced = [];
            new MutationObserver(() => window.announced.push(
                document.getElementById('live-announce').textContent))
              .observe(document.getElementById('live-announce'),
                       {childList: true, characterData: true, subtree: true});
        }"""
    )
    page.click("#live-start")
    page.wait_for_function(
        "() => document.getElementById('live-status').textContent.includes('frames/s')",
        timeout=30_000,
    )
    page.wait_for_timeout(5000)
    frames = page.evaluate("() => document.getElementById('live-status').textContent")
    announced = page.evaluate("() => window.announced")
    page.click("#live-stop")
    assert float(frames.split(" ")[0]) > 1  # many frames were read meanwhile
    assert 1 <= len(announced) <= 3, announced  # at most one announcement every 3 s
    assert any("hand" in text for text in announced), announced


def test_the_deck_wizard_names_what_each_remove_button_removes(page: Any, tmp_path: Path) -> None:
    page.click("#tab-decks")
    page.fill("#wizard-name", "named")
    page.click("#wizard-start")
    page.wait_for_selector("#wizard-cards:not([hidden])")
    page.set_input_files("#wizard-file", str(_photo(tmp_path)))
    label = page.get_attribute("#wizard-taken li button.remove", "aria-label")
    assert label == "Remove the photo of AS"


def test_tabs_name_the_panel_they_control(page: Any) -> None:
    tabs = page.eval_on_selector_all(
        "[role=tab]", "tabs => tabs.map(t => [t.dataset.mode, t.getAttribute('aria-controls')])"
    )
    assert tabs and all(panel == f"mode-{mode}" for mode, panel in tabs)
    for _, panel in tabs:
        assert page.locator(f"#{panel}[role=tabpanel]").count() == 1


def test_a_large_photo_in_bytes_is_sent_as_a_jpeg(page: Any) -> None:
    sent = page.evaluate(
        """async () => {
            const { uploadable, UPLOAD_MAX_BYTES } = await import('/static/photo.js');
            const canvas = document.createElement('canvas');
            canvas.width = 400; canvas.height = 300;
            canvas.getContext('2d').fillRect(0, 0, 400, 300);
            const png = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
            // the same PNG, padded past the limit after its end (decoders ignore the rest)
            const padded = new File([png, new Uint8Array(UPLOAD_MAX_BYTES)], 'big.png',
                                    { type: 'image/png' });
            const small = new File([png], 'small.png', { type: 'image/png' });
            const [big, kept] = [await uploadable(padded), await uploadable(small)];
            return [big.type, big.size < UPLOAD_MAX_BYTES, kept === small];
        }"""
    )
    assert sent == ["image/jpeg", True, True]


def test_the_pits_play_can_be_read_as_one_kind(page: Any, tmp_path: Path) -> None:
    page.select_option("#photo-game", "pits")
    page.select_option("#photo-pits-kind", "sequence")
    with page.expect_response(lambda response: "/v1/pits" in response.url) as answered:
        page.set_input_files("#photo-file", str(_photo(tmp_path)))
    verdict = answered.value.json()  # the fake's table of hands is no sequence, and says so
    assert verdict["legal"] is False
    assert "is not a sequence" in verdict["reason"], verdict["reason"]
    with page.expect_response(lambda response: "/v1/pits" in response.url) as answered:
        page.select_option("#photo-pits-kind", "")  # any kind: read again
    assert "is not a sequence" not in (answered.value.json()["reason"] or "")


def test_a_stake_the_page_refuses_says_so_in_the_banner(page: Any, tmp_path: Path) -> None:
    page.set_input_files("#photo-file", str(_photo(tmp_path)))
    page.wait_for_function(_READ)
    page.fill("#photo-stake", "-5")
    page.dispatch_event("#photo-stake", "change")
    page.wait_for_selector("#photo-error:not([hidden])")
    banner = page.evaluate(
        "() => getComputedStyle(document.getElementById('photo-results'), '::before').content"
    )
    assert "correct the option" in banner and "reading again" not in banner
    assert page.inner_text("#photo-status").startswith("Not read again")


def test_the_live_tab_keeps_the_servers_reason_for_closing(page: Any, server: Server) -> None:
    from handreader.service.live_streams import LiveStreams

    server.app.state.live_streams = LiveStreams(most=8, per_client=0)  # every stream: busy
    try:
        page.click("#tab-live")
        page.click("#live-start")
        page.wait_for_function(
            "() => document.getElementById('live-status').textContent === 'Stopped'"
        )
        page.wait_for_timeout(300)  # the close arrives after the error
        error = page.inner_text("#live-error")
        assert "live streams" in error and "(busy)" in error, error
    finally:
        server.app.state.live_streams = None


def test_the_dealer_check_names_a_photo_over_the_limit_before_sending_it(
    page: Any, tmp_path: Path
) -> None:
    big = tmp_path / "round.png"  # a photo padded past 20 MiB (decoders ignore the rest)
    big.write_bytes(_photo(tmp_path).read_bytes() + bytes(21 * 1024 * 1024))
    sent: list[str] = []
    page.on("request", lambda request: sent.append(request.url))
    page.click("#tab-verify")
    page.set_input_files("#verify-file", str(big))
    page.wait_for_selector("#verify-error:not([hidden])")
    assert "the dealer check sends it as it is" in page.inner_text("#verify-error")
    assert not any("/v1/" in url for url in sent)  # nothing sent
