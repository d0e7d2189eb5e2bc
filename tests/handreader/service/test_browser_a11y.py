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
from browser_page import PHONE, TOKEN, Server, start_wizard
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
