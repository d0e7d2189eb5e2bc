"""The card codes on the page never overlap: a tight fan of three hands, on a phone and a laptop.

The photo is ``tests/fan_scene.py``'s tight table rendered (three fans of five cards 8 degrees
apart, 640 x 480), read by ``FanReader`` (the fans' index boxes, so the page is checked, not the
models). Written at their cards, its codes (14 CSS px, draw.js CODE_CSS_PX) overlap at both
widths. The requirement (docs/page.md, "Drawing"): every code's box, as the page drew it
(``data-labels`` of the canvas, canvas pixels), overlaps no other code's box and no label's or
tag's, lies inside the frame, and is at least 14 CSS px tall; in photo mode at 390 px (a phone)
and 1280 px, and on the live overlay at 390 px with the camera playing the same picture.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import cv2
import pytest
from browser_page import PHONE, Server, chromium_with_camera, drawn_labels, shaken_video
from fan_scene import SIZE_WH, FanReader, render_fan, tight_table

pytestmark = pytest.mark.browser

pytest.importorskip("playwright.sync_api")

LAPTOP = {"width": 1280, "height": 800}


@pytest.fixture(scope="module")
def photo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("photo") / "tight_table.jpg"
    cv2.imwrite(str(path), render_fan(tight_table(), SIZE_WH, deck=None))
    return path


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with Server(FanReader(layout=tight_table())) as running:
        yield running


@pytest.fixture(scope="module")
def browser(photo: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    video = tmp_path_factory.mktemp("camera") / "tight_table.y4m"
    shaken_video(video, cv2.imread(str(photo)), seconds=3.0)
    with chromium_with_camera(video) as chromium:
        yield chromium


def _intersect(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] < b["x"] + b["w"]
        and b["x"] < a["x"] + a["w"]
        and (a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"])
    )


def _check_codes(drawn: dict[str, Any], count: int) -> None:
    codes = drawn["codes"]
    labels = [*drawn["labels"], *drawn.get("tags", [])]  # a phone's photo: tags for some
    assert len(codes) == count and len(labels) == 3
    assert drawn["codeCss"] >= 14  # readable on a phone
    for number, code in enumerate(codes):
        assert code["x"] >= 0 and code["y"] >= 0
        assert code["x"] + code["w"] <= drawn["width"] + 0.5
        assert code["y"] + code["h"] <= drawn["height"] + 0.5
        crossed = [other for other in codes[number + 1 :] if _intersect(code, other)]
        assert crossed == [], (code, crossed)
        covered = [label["text"] for label in labels if _intersect(code, label)]
        assert covered == [], (code, covered)


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["390px", "1280px"])
def test_no_code_covers_another_code_or_a_label_in_photo_mode(
    browser: Any, server: Server, photo: Path, viewport: dict[str, int]
) -> None:
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    try:
        page.goto(server.url + "/")
        page.wait_for_selector("body[data-ready='true']")
        page.set_input_files("#photo-file", str(photo))
        page.wait_for_selector("#photo-hands tbody tr")
        _check_codes(drawn_labels(page, "photo-canvas"), 15)
    finally:
        context.close()
    assert problems == [], problems


def test_no_code_covers_another_code_or_a_label_on_the_live_overlay(
    browser: Any, server: Server
) -> None:
    context = browser.new_context(viewport=PHONE)
    context.grant_permissions(["camera"], origin=server.url)
    page = context.new_page()
    try:
        page.goto(server.url + "/")
        page.wait_for_selector("body[data-ready='true']")
        page.click("#tab-live")
        page.click("#live-start")
        deadline = time.monotonic() + 30
        drawn: dict[str, Any] = {}
        while time.monotonic() < deadline:  # until the three hands show all their cards
            text = page.get_attribute("#live-overlay", "data-labels")
            drawn = drawn_labels(page, "live-overlay") if text else {}
            if drawn and len(drawn["labels"]) == 3 and len(drawn["codes"]) >= 15:
                break
            page.wait_for_timeout(200)
        page.click("#live-stop")
        assert drawn, "nothing drawn on the overlay"
        _check_codes(drawn, len(drawn["codes"]))
    finally:
        context.close()


BUSY_PIVOTS = ((0.29, 0.57), (0.37, 0.59), (0.55, 0.98), (0.69, 0.87))
"""Four fans of five (cards 0.31 of the photo's height, 7.4 degrees apart) whose codes, on a
phone, go in rows with leader lines that pass over the codes of other hands."""


def _busy_table() -> list[Any]:
    from fan_scene import FAN_HAND, fan_layout

    hands = (FAN_HAND, ("AH", "2H", "3H", "4H", "6H"), ("7C", "8C", "9C", "JC", "QC"),
             ("AD", "2D", "3D", "4D", "5D"))  # fmt: skip
    return [
        card
        for codes, pivot in zip(hands, BUSY_PIVOTS, strict=True)
        for card in fan_layout(SIZE_WH, codes, pivot=pivot, card_height=0.31, step_degrees=7.4)
    ]


_CANVAS_PIXELS = """(canvas) => {
  const { width, height } = canvas;
  const data = canvas.getContext("2d").getImageData(0, 0, width, height).data;
  return [width, height, Array.from(data)];
}"""


@contextmanager
def _photo_read(browser: Any, layout: list[Any], photo: Path, **options: Any) -> Iterator[Any]:
    """A page (a browser context of ``options``) of a service that reads ``layout``, its photo
    mode showing the hands read from ``photo``, drawn from ``layout`` first."""
    cv2.imwrite(str(photo), render_fan(layout, SIZE_WH, deck=None))
    with Server(FanReader(layout=layout)) as server:
        context = browser.new_context(**options)
        try:
            page = context.new_page()
            page.goto(server.url + "/")
            page.wait_for_selector("body[data-ready='true']")
            page.set_input_files("#photo-file", str(photo))
            page.wait_for_selector("#photo-hands tbody tr")
            yield page
        finally:
            context.close()


def _struck_pixels(pixels: Any, code: dict[str, float]) -> int:
    """Pixels inside a code's box (2 px of its edge left out) that are neither its fill, its
    text, nor a blend of the two: a line drawn across it."""
    import numpy as np

    x1, y1 = round(code["x"]) + 2, round(code["y"]) + 2
    x2, y2 = int(code["x"] + code["w"]) - 2, int(code["y"] + code["h"]) - 2
    patch = pixels[y1:y2, x1:x2].reshape(-1, 3).astype(np.float64)
    colours, counts = np.unique(patch, axis=0, return_counts=True)
    fill = colours[np.argmax(counts)]
    ink = patch[np.argmax(np.linalg.norm(patch - fill, axis=1))] - fill
    along = np.clip((patch - fill) @ ink / max(float(ink @ ink), 1e-9), 0, 1)
    return int((np.linalg.norm(patch - (fill + along[:, None] * ink), axis=1) > 40).sum())


def test_no_leader_line_is_drawn_over_a_code_on_a_busy_table(browser: Any, tmp_path: Path) -> None:
    """Every leader line is drawn before every code: where a code's row lies across another
    hand's leader, the code's box shows only its fill and its text (docs/page.md, "Drawing")."""
    import numpy as np

    layout = _busy_table()
    photo = tmp_path / "busy_table.jpg"
    with _photo_read(browser, layout, photo, viewport=PHONE) as page:
        drawn = drawn_labels(page, "photo-canvas")
        width, height, data = page.eval_on_selector("#photo-canvas", _CANVAS_PIXELS)
    pixels = np.array(data, np.uint8).reshape(height, width, 4)[:, :, :3]
    assert sum(code["leader"] is not None for code in drawn["codes"]) >= 10
    struck = [_struck_pixels(pixels, code) for code in drawn["codes"]]
    assert struck == [0] * len(struck)


FOURTH_PIVOT = (0.15, 0.5)
"""tight_table's three fans and a fourth beside the banker's: four hands of five."""


def test_on_a_phone_a_label_that_would_cover_a_code_is_a_numbered_tag_with_a_legend(
    browser: Any, tmp_path: Path
) -> None:
    """docs/page.md, "Drawing": four hands in a frame about 250 px tall on a 390 px screen. A
    hand whose 18 px label cannot go clear of the codes and the cards' indices is marked by its
    seat's number (at 14 px or more) and its label is written in full in the legend under the
    photo, keyed by that number; so no label and no tag covers a code, every hand's label is in
    the legend, and a label that fits stays on the photo at 18 px."""
    from fan_scene import fan_layout

    layout = [
        *tight_table(),
        *fan_layout(SIZE_WH, ("AD", "2D", "3D", "4D", "5D"), pivot=FOURTH_PIVOT,
                    card_height=0.3, step_degrees=8.0),
    ]  # fmt: skip
    photo = tmp_path / "four_hands.jpg"
    with _photo_read(
        browser, layout, photo, viewport=PHONE, is_mobile=True, has_touch=True
    ) as page:
        drawn = drawn_labels(page, "photo-canvas")
        shown = page.locator("#photo-canvas").bounding_box()
        legend = page.eval_on_selector_all(
            "#photo-legend li",
            "items => items.map(item => [item.querySelector('.chip').textContent,"
            " item.textContent])",
        )
        legend_box = page.evaluate(
            "() => document.getElementById('photo-legend')?.getBoundingClientRect().toJSON()"
        )
    assert shown is not None and shown["height"] < 300, shown
    tags = drawn.get("tags", [])
    for mark in [*drawn["labels"], *tags]:
        covered = [code for code in drawn["codes"] if _intersect(mark, code)]
        assert covered == [], (mark, covered)
    assert tags, "every label fitted: the scene no longer crowds the phone's frame"
    assert len(drawn["labels"]) + len(tags) == 4
    assert abs(drawn["fontCss"] - 18) < 1.5 and drawn["tagCss"] >= 14
    texts = [mark["text"] for mark in [*drawn["labels"], *tags]]
    assert len(legend) == 4, legend
    for tag in tags:
        assert [tag["tag"], f"{tag['tag']} {tag['text']}"] in legend, (tag, legend)
    assert all(any(text in item for _, item in legend) for text in texts), (texts, legend)
    assert legend_box is not None and 0 <= legend_box["y"] - (shown["y"] + shown["height"]) < 20
