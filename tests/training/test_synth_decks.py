"""The deck catalogue and its renders ("Card art" and "every deck in use renders all
its cards").

Catalogue tests need nothing installed. Render tests use ``rsvg-convert`` and the Debian card
packages (``scripts/install-card-art``) and skip with the reason when they are missing; renders
are cached in ``~/.cache/handreader`` (``$HANDREADER_CACHE``), so only a cold cache is slow.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES
from training.synth.assets import JOKER_MARK_HEIGHT, load_assets, prepare_assets
from training.synth.decks import (
    DECKS,
    EXCLUDED_DECKS,
    GNOME_DIR,
    KDE_DIR,
    Deck,
    deck_by_name,
    render_card,
    render_deck,
    render_paths,
)
from training.synth.index_box import (
    MEASURE_VERSION,
    measure_index_box,
    measure_joker_mark,
    paper_colour,
)

HEIGHT = 200
"""Render height of these tests (shared with tests/synth_drawing.py: one cache)."""

USED = tuple(deck.name for deck in DECKS)


def require_art(deck: Deck) -> None:
    """Skip (with the reason) when ``deck`` cannot be rendered (art or rasteriser missing)."""
    if not deck.available:
        pytest.skip(f"card art not installed ({deck.path}): run scripts/install-card-art")
    if shutil.which("rsvg-convert") is None:
        pytest.skip("rsvg-convert not installed (librsvg2-bin): run scripts/install-card-art")


# ---------------------------------------------------------------------------------------------
# the catalogue


def test_deck_names_are_unique() -> None:
    assert len(set(USED)) == len(USED)


def test_used_and_excluded_decks_are_disjoint() -> None:
    assert not set(USED) & set(EXCLUDED_DECKS)
    assert all(reason.strip() for reason in EXCLUDED_DECKS.values())


def test_at_least_four_designs_held_out() -> None:
    """Required: "Keep at least 4 designs out of training entirely"."""
    held_out = [deck for deck in DECKS if deck.split == "holdout"]
    assert len(held_out) >= 4
    assert {deck.split for deck in DECKS} == {
        "train",
        "holdout",
        "extra",
        "letters-french",
        "letters-german",
        "letters-russian",
    }


def test_corner_counts() -> None:
    """Indices sit in two opposite corners, or in all four."""
    assert {deck.corners for deck in DECKS} <= {2, 4}


@pytest.mark.parametrize(
    ("name", "code", "element"),
    [
        # gnome-cards-data names elements suit_rank, aces "1", courts in words
        ("anglo", "AC", "club_1"),
        ("anglo", "10D", "diamond_10"),
        ("anglo", "QH", "heart_queen"),
        ("paris", "JS", "spade_jack"),
        ("anglo", "JB", "joker_black"),
        ("anglo", "JR", "joker_red"),
        # kdegames-card-data-kf5 names them rank_suit
        ("kde-standard", "KS", "king_spade"),
        ("kde-standard", "2H", "2_heart"),
        ("kde-standard", "AD", "1_diamond"),
        ("kde-nicu-white", "JB", "black_joker"),
        ("kde-nicu-white", "JR", "red_joker"),
    ],
)
def test_element_ids(name: str, code: str, element: str) -> None:
    assert deck_by_name(name).element_id(code) == element


def test_missing_joker_is_an_error() -> None:
    with pytest.raises(ValueError, match="deck 'kde-standard' has no joker 'JR'"):
        deck_by_name("kde-standard").element_id("JR")


def test_unknown_deck_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown deck 'swiss-xvii'; known: anglo, "):
        deck_by_name("swiss-xvii")


@pytest.mark.parametrize(
    "deck", [d for d in DECKS if d.ranks is None], ids=[d.name for d in DECKS if d.ranks is None]
)
def test_codes_are_the_52_and_the_decks_jokers(deck: Deck) -> None:
    """Required: "Both jokers, red and black, from the decks that have them"."""
    jokers = {code for code, _ in deck.jokers}
    assert jokers in (set(), {"JB", "JR"})
    assert set(deck.codes) == (set(CARD_CLASSES) - {"JB", "JR"}) | jokers
    assert len(deck.codes) == 52 + len(jokers)


@pytest.mark.parametrize(
    ("name", "jokers"),
    [
        # gnome-cards-data decks carry both jokers ...
        ("anglo", ("JB", "JR")),
        # ... except dondorf, whose joker_black and joker_red render one grey picture with no
        # corner mark: no classifier can tell JB from JR on it, so they are left out
        ("dondorf", ()),
        # of the kde decks only nicu-white has jokers
        ("kde-nicu-white", ("JB", "JR")),
        ("kde-standard", ()),
    ],
)
def test_which_decks_have_jokers(name: str, jokers: tuple[str, ...]) -> None:
    assert tuple(code for code, _ in deck_by_name(name).jokers) == jokers


EXTRA = [deck for deck in DECKS if deck.split == "extra"]


@pytest.mark.parametrize("deck", EXTRA, ids=[deck.name for deck in EXTRA])
def test_extra_decks_lend_only_cards_whose_index_reads_as_ours(deck: Deck) -> None:
    """A deck of split extra prints other court letters (German D and B, French R, D and V,
    Cyrillic T for the ace): it lends its 2 to 10 of every suit, the A and K only where
    printed so, never a queen or a jack, and no joker."""
    numbers = {
        rank + suit for rank in ("2", "3", "4", "5", "6", "7", "8", "9", "10") for suit in "SHDC"
    }
    assert deck.ranks is not None and not deck.jokers
    assert numbers <= set(deck.codes) <= numbers | {r + s for r in "AK" for s in "SHDC"}
    assert {code[:-1] for code in deck.codes} == set(deck.ranks)


def test_extra_decks_ranks() -> None:
    ranks = {deck.name: sorted(set(deck.ranks or ()) - set("23456789") - {"10"}) for deck in EXTRA}
    assert ranks == {
        "ancient_french": [],
        "atlasnye_skat": ["A", "K"],
        "Атласные": ["K"],
        "berlin": ["A", "K"],
        "lattmann": ["A", "K"],
        "rheinland": ["A", "K"],
        "slavic_costumes": ["K"],
        "tarocco": ["A"],
    }


LETTERED = [deck for deck in DECKS if deck.split.startswith("letters-")]


def test_lettered_decks_are_whole_extra_decks_in_their_letters() -> None:
    """The held-out sets of other letters are the extra decks whole (their courts and aces
    too, as the letters they print: checked on their renders), under names of their own."""
    from vision.index_letters import INDEX_LETTERS

    extra = {deck.path: deck for deck in EXTRA}
    letters = {deck.path.name.removesuffix(".svgz"): deck.letters for deck in LETTERED}
    assert letters == {
        "ancient_french": "french",
        "atlasnye_skat": "german",
        "berlin": "german",
        "lattmann": "german",
        "rheinland": "german",
        "Атласные": "russian",
        "slavic_costumes": "russian",
    }
    for deck in LETTERED:
        assert deck.split == f"letters-{deck.letters}" and deck.letters in INDEX_LETTERS
        assert deck.path in extra and deck.name != extra[deck.path].name
        assert len(deck.codes) == 52 and not deck.jokers
    assert all(deck.letters == "english" for deck in DECKS if deck not in LETTERED)


@pytest.mark.skipif(
    not all(deck.available for deck in LETTERED),
    reason="card art not installed: run scripts/install-card-art",
)
def test_the_lettered_decks_are_drawn_only_when_asked_for() -> None:
    from training.synth.assets import decks_for_split

    assert not set(decks_for_split("all")) & set(LETTERED)
    assert {deck.name for deck in decks_for_split("letters-russian")} == {
        "Атласные-russian",
        "slavic_costumes-russian",
    }


def installed_deck_names() -> list[str]:
    """Catalogue names of the decks installed here (gnome by file, kde by folder)."""
    names = [path.name.removesuffix(".svgz") for path in GNOME_DIR.glob("*.svgz")]
    names += ["kde-" + path.name.removeprefix("svg-") for path in KDE_DIR.glob("svg-*")]
    return sorted(names)


@pytest.mark.skipif(
    not GNOME_DIR.is_dir() or not KDE_DIR.is_dir(),
    reason="card art not installed: run scripts/install-card-art",
)
def test_every_installed_deck_is_used_or_excluded_with_a_reason() -> None:
    """Use every Latin-index deck, "leave out the others and say which and why"."""
    installed = installed_deck_names()
    unaccounted = [name for name in installed if name not in USED and name not in EXCLUDED_DECKS]
    assert not unaccounted
    assert all(deck.available for deck in DECKS)


# ---------------------------------------------------------------------------------------------
# renders (slow with a cold cache: 26 decks x 52-54 cards, two rsvg-convert runs each)


def test_a_card_renders_through_files_of_its_own_process(tmp_path: Path) -> None:
    """Two processes rendering one deck into one cache never share a half-written file: each
    renders through files named for it, and the card reaches its path in one rename."""
    deck = DECKS[0]
    require_art(deck)
    out = tmp_path / "AS.png"
    partial, finished = render_paths(out)
    assert partial != finished
    assert all(str(os.getpid()) in path.name for path in (partial, finished))
    # a half-written measuring render of another process, where every process once put its own
    stale = out.with_suffix(".part.png")
    stale.write_bytes(b"\x89PNG half written")
    assert render_card(deck, "AS", 120, out) == out
    image = cv2.imread(str(out), cv2.IMREAD_UNCHANGED)
    assert image is not None and abs(image.shape[0] - 120) <= 2
    assert sorted(path.name for path in tmp_path.iterdir()) == ["AS.part.png", "AS.png"]


def composite_white(rgba: NDArray[np.uint8]) -> NDArray[np.int16]:
    alpha = rgba[:, :, 3:4].astype(np.float32) / 255.0
    return np.asarray(rgba[:, :, :3] * alpha + 255.0 * (1.0 - alpha), np.int16)


@pytest.mark.slow
@pytest.mark.parametrize("name", USED)
def test_deck_renders_all_its_cards(name: str) -> None:
    """Every code renders: a card-shaped, opaque, ``HEIGHT``-px image, all of one size
    (within 5%: some court cards' art overhangs a little)."""
    deck = deck_by_name(name)
    require_art(deck)
    paths = render_deck(deck, HEIGHT)
    assert set(paths) == set(deck.codes)
    widths = []
    for code, path in paths.items():
        image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        assert image is not None and image.ndim == 3 and image.shape[2] in (3, 4), code
        height, width = image.shape[:2]
        assert abs(height - HEIGHT) <= 2, f"{code}: {height} px tall"
        assert 0.55 <= width / height <= 0.8, f"{code}: aspect {width / height:.2f}"
        if image.shape[2] == 4:
            assert (image[:, :, 3] > 250).mean() > 0.85, f"{code}: mostly transparent"
        widths.append(width)
    middle = float(np.median(widths))
    assert max(widths) <= 1.05 * middle and min(widths) >= 0.95 * middle, (
        f"card widths vary: {min(widths)}..{max(widths)}"
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", USED)
def test_deck_cards_are_all_different(name: str) -> None:
    """No two codes of a deck render the same picture (a wrong element id would, and a
    classifier cannot learn two classes from one picture)."""
    deck = deck_by_name(name)
    require_art(deck)
    codes_by_digest: dict[str, list[str]] = {}
    for code, path in render_deck(deck, HEIGHT).items():
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        codes_by_digest.setdefault(digest, []).append(code)
    same = [codes for codes in codes_by_digest.values() if len(codes) > 1]
    assert not same, f"rendered alike: {same}"


@pytest.mark.slow
@pytest.mark.parametrize("name", USED)
def test_index_box_is_plausible(name: str) -> None:
    """The measured index box lies in the card's top-left quarter, near the corner, and has
    the size of an index: 3-35% of the card's width, 8-45% of its height (ornamental and
    kde-nicu-white print a suit pip as tall as the rank under it: their index runs from 6%
    to 43% of the card's height, 0.44 of it with the box's margin)."""
    deck = deck_by_name(name)
    require_art(deck)
    x1, y1, x2, y2 = load_assets(name, HEIGHT).index_box
    assert 0.0 <= x1 < x2 <= 0.5 and 0.0 <= y1 < y2 <= 0.5
    assert x1 <= 0.1 and y1 <= 0.1
    assert 0.03 <= x2 - x1 <= 0.35
    assert 0.08 <= y2 - y1 <= 0.45


def suit_under_rank_in_box(
    rgba: NDArray[np.uint8], box: tuple[float, float, float, float]
) -> bool | None:
    """Whether the suit pip printed under the rank glyph lies in ``box`` (None: not found).

    The rank is the largest ink blob centred in the upper half of the box; the suit pip is the
    nearest blob starting below the rank (within 12% of the card's height) and overlapping it
    horizontally. 2% of the card's height is allowed for antialiasing.
    """
    height, width = rgba.shape[:2]
    rgb = composite_white(rgba)
    opaque = (
        cv2.erode(
            (rgba[:, :, 3] > 250).astype(np.uint8),
            np.ones((3, 3), np.uint8),
            iterations=max(2, round(0.03 * width)),
        )
        > 0
    )
    region = np.zeros((height, width), bool)
    region[: height // 2, : int(0.35 * width)] = True
    selected = opaque & region
    paper = np.median(rgb[selected].reshape(-1, 3), axis=0)
    ink = (np.abs(rgb - paper).sum(axis=2) > 90) & selected
    count, _, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    x1, y1, x2, y2 = box[0] * width, box[1] * height, box[2] * width, box[3] * height
    blobs = [
        tuple(int(v) for v in stats[i, :4])
        for i in range(1, count)
        if stats[i, cv2.CC_STAT_AREA] >= 5
    ]
    ranks = [
        b for b in blobs if x1 <= b[0] + b[2] / 2 <= x2 and y1 <= b[1] + b[3] / 2 <= (y1 + y2) / 2
    ]
    if not ranks:
        return None
    rx, ry, rw, rh = max(ranks, key=lambda b: b[2] * b[3])
    below = [
        b
        for b in blobs
        if ry + rh - 1 <= b[1] <= ry + rh + 0.12 * height
        and b[0] < rx + rw
        and b[0] + b[2] > rx
        and b != (rx, ry, rw, rh)
    ]
    if not below:
        return None
    sx, sy, sw, sh = min(below, key=lambda b: b[1])
    slack = 0.02 * height
    return bool(
        sx >= x1 - slack and sy >= y1 - slack and sx + sw <= x2 + slack and sy + sh <= y2 + slack
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", USED)
def test_index_box_holds_the_suit(name: str) -> None:
    """An index is the rank with its suit pip under it (training/synth/index_box.py); the box
    must hold both, or crops cannot tell 7S from 7H. Checked on the A-9 of every suit."""
    deck = deck_by_name(name)
    require_art(deck)
    assets = load_assets(name, HEIGHT)
    results = [
        suit_under_rank_in_box(assets.cards[rank + suit], assets.index_box)
        for rank in "A23456789"
        for suit in "SHDC"
        if rank + suit in assets.cards
    ]
    found = [result for result in results if result is not None]
    assert len(found) >= 20, f"rank and suit found on only {len(found)} of 36 cards"
    assert sum(found) >= 0.8 * len(found), f"suit outside the box on {found.count(False)} cards"


# ---------------------------------------------------------------------------------------------
# measuring indices and joker marks (on drawn cards: nothing installed)

CARD_WH = (210, 300)

Shape = tuple[float, float, float, float]
"""A filled rectangle (x1, y1, x2, y2) as fractions of the card, or an ellipse in that box."""


def drawn_card(
    rectangles: tuple[Shape, ...] = (), ellipses: tuple[Shape, ...] = (), half_turn: bool = True
) -> NDArray[np.uint8]:
    """A white card (BGRA, transparent 3 px margin) with black shapes; ``half_turn`` repeats
    them turned half a turn, as a card's bottom-right corner does."""
    width, height = CARD_WH
    card = np.zeros((height, width, 4), np.uint8)
    card[3:-3, 3:-3] = 255
    for x1, y1, x2, y2 in rectangles:
        cv2.rectangle(
            card,
            (round(x1 * width), round(y1 * height)),
            (round(x2 * width) - 1, round(y2 * height) - 1),
            (0, 0, 0, 255),
            -1,
        )
    for x1, y1, x2, y2 in ellipses:
        center = (round((x1 + x2) / 2 * width), round((y1 + y2) / 2 * height))
        axes = (round((x2 - x1) / 2 * width), round((y2 - y1) / 2 * height))
        cv2.ellipse(card, center, axes, 0, 0, 360, (0, 0, 0, 255), -1)
    if half_turn:
        turned = card[::-1, ::-1]
        card = np.where(turned[:, :, :1] == 0, turned, card)
    return card


def number_cards(
    rank: Shape, suit: Shape, other: tuple[Shape, ...] = ()
) -> dict[str, NDArray[np.uint8]]:
    """The A, 2, 3 and 10 of each suit, all with ``rank`` over ``suit`` (the 10 twice as wide)
    and a picture in the middle that runs out of the corner area."""
    picture = (0.3, 0.3, 0.7, 0.7)
    cards = {}
    for suit_letter in "SHDC":
        for rank_name in ("A", "2", "3"):
            cards[rank_name + suit_letter] = drawn_card((rank, picture, *other), (suit,))
        ten = (rank[2] + 0.01, rank[1], 2 * rank[2] - rank[0] + 0.01, rank[3])
        cards["10" + suit_letter] = drawn_card((rank, ten, picture, *other), (suit,))
    return cards


@pytest.mark.parametrize(
    ("case", "suit", "other", "bottom"),
    [
        # (suit pip, other ink, the box's expected bottom as a fraction of the card)
        # a small pip right under the rank, as most decks print it
        ("small pip", (0.07, 0.22, 0.15, 0.3), (), (0.3, 0.33)),
        # ornamental and kde-nicu-white: a pip as tall as the rank, 6% of the card under it
        ("large pip well under", (0.05, 0.26, 0.18, 0.42), (), (0.42, 0.46)),
        # a picture's ink far under the pip (more than 1.2 of its own height) is not the index
        ("ink far under", (0.07, 0.22, 0.15, 0.3), ((0.07, 0.44, 0.15, 0.48),), (0.3, 0.33)),
        # ink under the pip but off to the side is not the index either
        ("ink aside", (0.07, 0.22, 0.15, 0.3), ((0.2, 0.32, 0.28, 0.38),), (0.3, 0.33)),
    ],
)
def test_index_box_follows_the_suit_under_the_rank(
    case: str, suit: Shape, other: tuple[Shape, ...], bottom: tuple[float, float]
) -> None:
    """The index is the rank with its suit pip under it (training/synth/index_box.py)."""
    rank = (0.06, 0.05, 0.14, 0.18)
    x1, y1, x2, y2 = measure_index_box(number_cards(rank, suit, other))
    assert x1 <= min(rank[0], suit[0]) and y1 <= rank[1]
    assert x2 >= 2 * rank[2] - rank[0], "the box covers the 10"
    assert bottom[0] <= y2 <= bottom[1], f"{case}: bottom {y2:.3f}"


WHITE = np.array([255.0, 255.0, 255.0])


@pytest.mark.parametrize(
    ("case", "card", "expected"),
    [
        # (drawn joker, expected (box it must hold, box it must stay in, corners) or None)
        ("blank", drawn_card(), None),
        ("picture only", drawn_card(((0.3, 0.3, 0.7, 0.7),)), None),
        (
            "disc",
            drawn_card((), ((0.06, 0.04, 0.2, 0.14),)),
            ((0.06, 0.04, 0.2, 0.14), (0.04, 0.02, 0.22, 0.16), 2),
        ),
        (
            "disc in all four corners",
            drawn_card((), ((0.06, 0.04, 0.2, 0.14), (0.8, 0.04, 0.94, 0.14))),
            ((0.06, 0.04, 0.2, 0.14), (0.04, 0.02, 0.22, 0.16), 4),
        ),
        (
            "word set down the edge",
            drawn_card(tuple((0.06, 0.05 + 0.09 * k, 0.14, 0.12 + 0.09 * k) for k in range(5))),
            ((0.06, 0.05, 0.14, 0.48), (0.04, 0.03, 0.16, 0.5), 2),
        ),
        (
            "word across the corner",
            drawn_card(tuple((0.05 + 0.06 * k, 0.04, 0.1 + 0.06 * k, 0.12) for k in range(5))),
            ((0.05, 0.04, 0.34, 0.12), (0.03, 0.02, 0.36, 0.14), 2),
        ),
        # a title word across the top, well apart from the disc, is not the corner mark
        (
            "disc beside a title",
            drawn_card(
                tuple((0.32 + 0.06 * k, 0.05, 0.37 + 0.06 * k, 0.13) for k in range(4)),
                ((0.06, 0.04, 0.2, 0.14),),
            ),
            ((0.06, 0.04, 0.2, 0.14), (0.04, 0.02, 0.22, 0.16), 2),
        ),
        # the picture reaching into the corner is no mark
        (
            "disc over a picture",
            drawn_card(((0.1, 0.25, 0.9, 0.75),), ((0.06, 0.04, 0.2, 0.14),)),
            ((0.06, 0.04, 0.2, 0.14), (0.04, 0.02, 0.22, 0.16), 2),
        ),
    ],
)
def test_joker_mark(
    case: str, card: NDArray[np.uint8], expected: tuple[Shape, Shape, int] | None
) -> None:
    """A joker's mark is the ink starting in its corner, followed down and across; none when
    the corner holds no ink apart from the picture."""
    place = measure_joker_mark(card, WHITE)
    if expected is None:
        assert place is None, case
        return
    holds, within, corners = expected
    assert place is not None, case
    x1, y1, x2, y2 = place.box
    assert within[0] <= x1 <= holds[0] + 0.01 and within[1] <= y1 <= holds[1] + 0.01, place.box
    assert holds[2] - 0.01 <= x2 <= within[2] and holds[3] - 0.01 <= y2 <= within[3], place.box
    assert place.corners == corners


def test_paper_colour_is_the_cards_own() -> None:
    card = drawn_card()
    card[:, :, :3] = (200, 230, 240)
    assert paper_colour(card).tolist() == [200, 230, 240]


# ---------------------------------------------------------------------------------------------
# the measurement cache


@pytest.mark.slow
def test_stale_measurements_are_measured_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cached index_box.json from another measurement version (or without the jokers'
    marks) is never used: it is measured again and rewritten."""
    deck = deck_by_name("simplistic")
    require_art(deck)
    jokers = [code for code, _ in deck.jokers]
    sources = render_deck(deck, HEIGHT)
    marks = render_deck(deck, JOKER_MARK_HEIGHT, ["2S", *jokers])
    monkeypatch.setenv("HANDREADER_CACHE", str(tmp_path))
    folder = tmp_path / "cards" / f"h{HEIGHT}" / deck.name
    folder.mkdir(parents=True)
    for path in sources.values():
        shutil.copy(path, folder / path.name)
    (tmp_path / "cards" / f"h{JOKER_MARK_HEIGHT}" / deck.name).mkdir(parents=True)
    for path in marks.values():
        shutil.copy(path, tmp_path / "cards" / f"h{JOKER_MARK_HEIGHT}" / deck.name / path.name)
    stale = [0.0, 0.0, 0.01, 0.01]
    box_file = folder / "index_box.json"
    for old in (
        {"index_box": stale},
        {"version": MEASURE_VERSION - 1, "index_box": stale, "jokers": {}},
        {"version": MEASURE_VERSION, "index_box": stale, "jokers": {}},
    ):
        box_file.write_text(json.dumps(old))
        assert prepare_assets(deck, HEIGHT) == box_file
        measured = json.loads(box_file.read_text())
        assert measured["version"] == MEASURE_VERSION
        assert measured["index_box"] != stale
        assert set(measured["jokers"]) == set(jokers)
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [f"{code}.png" for code in sources] + ["index_box.json"]
    )
