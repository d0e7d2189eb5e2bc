"""Card art: the catalogue of Debian SVG decks and their rendering, one PNG per card, cached.

Decks come from Debian's ``gnome-cards-data`` (``/usr/share/aisleriot/cards``) and
``kdegames-card-data-kf5`` (``/usr/share/carddecks``); each card is one SVG element rendered with
``rsvg-convert -i ID`` from ``librsvg2-bin``. ``scripts/install-card-art`` installs the packages.
Renders are cached outside git (``$HANDREADER_CACHE`` or ``~/.cache/handreader``), keyed by deck
and height, so a second run costs nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from rules.cards import CARD_CLASSES

__all__ = [
    "CARD_ART_HINT",
    "DECKS",
    "JOKER_CODES",
    "Deck",
    "cache_dir",
    "deck_by_name",
    "render_card",
    "render_deck",
    "render_paths",
]

GNOME_DIR = Path("/usr/share/aisleriot/cards")
KDE_DIR = Path("/usr/share/carddecks")

CARD_ART_HINT = (
    "install the Debian packages (apt-get install gnome-cards-data kdegames-card-data-kf5 "
    "librsvg2-bin), or run scripts/install-card-art from a source checkout or the source "
    "distribution"
)
"""How to get the card art, from an installed package as from the source."""

JOKER_CODES = ("JB", "JR")
"""The black and the red joker's codes (``rules.cards.CARD_CLASSES``)."""

_RANK_WORDS = {"A": "1", "J": "jack", "Q": "queen", "K": "king"}
_SUIT_WORDS = {"S": "spade", "H": "heart", "D": "diamond", "C": "club"}


@dataclass(frozen=True, slots=True)
class Deck:
    """One deck design: where its SVG lies, how its element ids are named, which jokers it has.

    ``scheme`` is ``"suit_rank"`` (gnome: ``club_1``, ``heart_queen``) or ``"rank_suit"``
    (kde: ``1_club``, ``queen_heart``). ``jokers`` maps ``JB``/``JR`` to element ids.
    ``split`` is ``"train"``, ``"holdout"`` (never used in training; validation of unseen decks)
    or ``"extra"`` (drawn only by configs that ask for it).
    ``corners`` is 2 (indices top-left and bottom-right) or 4 (indices in all four corners).
    ``ranks``, when set, keeps only the cards of those ranks: a deck whose court cards (or ace)
    carry other letters than A, K, Q, J (German D, B; French R, D, V; a Cyrillic T) lends its
    other cards, whose indices read as ours (split ``"extra"``).
    ``letters`` names the letters its indices print (:data:`vision.index_letters.INDEX_LETTERS`):
    the same decks, whole, are the held-out sets of their letters (splits ``"letters-french"``,
    ``"letters-german"``, ``"letters-russian"``), each card labelled with the English code of
    what it stands for (a French R of hearts is ``KH``).
    """

    name: str
    path: Path
    scheme: str
    jokers: tuple[tuple[str, str], ...]
    split: str = "train"
    corners: int = 2
    ranks: tuple[str, ...] | None = None
    letters: str = "english"

    def element_id(self, code: str) -> str:
        """The SVG element id of a card code such as ``"10H"`` or ``"JR"``."""
        for joker_code, joker_id in self.jokers:
            if joker_code == code:
                return joker_id
        if code in JOKER_CODES:
            raise ValueError(f"deck {self.name!r} has no joker {code!r}")
        rank, suit = code[:-1], code[-1]
        rank_word = _RANK_WORDS.get(rank, rank)
        suit_word = _SUIT_WORDS[suit]
        if self.scheme == "suit_rank":
            return f"{suit_word}_{rank_word}"
        return f"{rank_word}_{suit_word}"

    @property
    def codes(self) -> tuple[str, ...]:
        """The card codes this deck lends: the 52 (or those of its ``ranks``) and its jokers."""
        jokers = {code for code, _ in self.jokers}
        ranks = self.ranks
        return tuple(
            code
            for code in CARD_CLASSES
            if (code in jokers if code in JOKER_CODES else ranks is None or code[:-1] in ranks)
        )

    @property
    def available(self) -> bool:
        """True when the deck's SVG file is installed."""
        return self.path.is_file()


_GNOME_JOKERS = (("JB", "joker_black"), ("JR", "joker_red"))


def _gnome(
    name: str,
    split: str = "train",
    corners: int = 2,
    jokers: bool = True,
    ranks: tuple[str, ...] | None = None,
) -> Deck:
    return Deck(
        name,
        GNOME_DIR / f"{name}.svgz",
        "suit_rank",
        _GNOME_JOKERS if jokers else (),
        split,
        corners,
        ranks,
    )


_NUMBERS = ("2", "3", "4", "5", "6", "7", "8", "9", "10")


def _extra(name: str, *letters: str) -> Deck:
    """A deck of split ``extra``: its number cards and the ranks in ``letters``, no jokers."""
    return _gnome(name, split="extra", jokers=False, ranks=(*letters, *_NUMBERS))


def _lettered(name: str, letters: str) -> Deck:
    """The whole deck ``name`` (no jokers) in split ``letters-LETTERS``: the held-out set of a
    deck whose indices print ``letters``, under its own name (its renders are cached apart)."""
    return Deck(
        f"{name}-{letters}",
        GNOME_DIR / f"{name}.svgz",
        "suit_rank",
        (),
        f"letters-{letters}",
        letters=letters,
    )


def _kde(
    folder: str, file: str, jokers: tuple[tuple[str, str], ...] = (), split: str = "train"
) -> Deck:
    return Deck(f"kde-{folder}", KDE_DIR / f"svg-{folder}" / file, "rank_suit", jokers, split)


DECKS: tuple[Deck, ...] = (
    _gnome("anglo"),
    _gnome("anglo_bitmap"),
    _gnome("anglo_modern"),
    _gnome("anglo_modern_4_color"),
    _gnome("anglo_poker"),
    _gnome("atlasnye"),
    _gnome("bellot"),
    # dondorf's joker_black and joker_red are one grey picture with no corner mark: a
    # classifier cannot tell JB from JR on them, so its jokers are left out
    _gnome("dondorf", corners=4, jokers=False),
    _gnome("gnomangelo"),
    _gnome("gnomangelo_bitmap"),
    _gnome("guyenne-classic"),
    _gnome("neoclassical"),
    _gnome("neoclassical_4_color"),
    _gnome("ornamental"),
    _gnome("paris"),
    _gnome("tango"),
    _kde("standard", "standard.svgz"),
    _kde("jolly-royal", "jolly-royal.svgz"),
    _kde("ancient-egyptians", "Ancient_Egyptians.svgz"),
    _kde("nicu-white", "white.svgz", (("JB", "black_joker"), ("JR", "red_joker"))),
    # Held out of training entirely: unseen designs for validation (whole families, so that
    # no recoloured twin of a held-out deck is trained on).
    _gnome("simplistic", split="holdout"),
    _gnome("plastic", split="holdout"),
    _gnome("orell", split="holdout"),
    _gnome("tigullio", split="holdout"),
    _kde("tigullio-international", "tigullio-international.svgz", split="holdout"),
    _kde("penguins", "penguins.svgz", split="holdout"),
    # Split "extra": decks whose court cards carry other letters lend the cards whose indices
    # read as ours (A and K where printed so; Cyrillic K is the king). Drawn only by configs
    # that ask for them (deck_split: extra or train+extra), so the other configs' scenes are
    # unchanged.
    _extra("ancient_french"),  # ace 1, courts R D V
    _extra("atlasnye_skat", "A", "K"),  # queen D, jack B
    _extra("Атласные", "K"),  # ace T, queen D, jack B (Cyrillic)
    _extra("berlin", "A", "K"),
    _extra("lattmann", "A", "K"),
    _extra("rheinland", "A", "K"),
    _extra("slavic_costumes", "K"),
    _extra("tarocco", "A"),  # courts R D F
    # Splits "letters-...": the same decks whole, their courts and aces in their own letters,
    # which no config trains on (rounds learn the letters from procedural crops only): the sets
    # that measure reading a deck by its letters (ReaderSettings.indices).
    _lettered("ancient_french", "french"),  # 1 R D V
    _lettered("atlasnye_skat", "german"),  # A K D B
    _lettered("berlin", "german"),
    _lettered("lattmann", "german"),
    _lettered("rheinland", "german"),
    _lettered("Атласные", "russian"),  # Т К Д В
    _lettered("slavic_costumes", "russian"),
)
"""Decks in use: every installed deck whose indices read A K Q J 10..2 in Latin letters, and
(split ``extra``) the cards of other decks whose indices do."""

EXCLUDED_DECKS: dict[str, str] = {
    "swiss-xvii": "no indices on the court cards; Swiss-style aces",
    "tango_nuevo": "one index per card, rank and suit side by side on the top edge only",
    "kde-future": "no playing-card indices (symbolic glyphs)",
    "kde-konqi-modern": "rsvg-convert cannot render it ('the SVG has no dimensions')",
    "kde-oxygen": "one index per card, in the top-right corner only, with no suit under it",
    "kde-oxygen-air": "one index per card, in the top-right corner only, with no suit under it",
    "kde-oxygen-white": "one index per card, in the top-right corner only, with no suit under it",
    "kde-dondorf": "same design as gnome's dondorf (kept there)",
    "kde-gm-paris": "same design as gnome's paris (kept there)",
    "kde-nicu-ornamental": "same design as gnome's ornamental (kept there)",
    "kde-xskat-french": "rsvg-convert cannot render it ('the SVG has no dimensions')",
    "kde-xskat-german": "German suits and indices; rsvg-convert cannot render it",
}
"""Decks left out, with the reason (from inspecting their renders)."""


def deck_by_name(name: str) -> Deck:
    """The deck called ``name``; ValueError listing the known names otherwise."""
    for deck in DECKS:
        if deck.name == name:
            return deck
    raise ValueError(f"unknown deck {name!r}; known: {', '.join(d.name for d in DECKS)}")


def cache_dir() -> Path:
    """Where renders are cached: ``$HANDREADER_CACHE`` or ``~/.cache/handreader``."""
    root = os.environ.get("HANDREADER_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "handreader"


def _rsvg(deck: Deck, code: str, zoom: float, out: Path) -> None:
    subprocess.run(
        [
            "rsvg-convert",
            "-i",
            deck.element_id(code),
            "-z",
            f"{zoom:.5f}",
            str(deck.path),
            "-o",
            str(out),
        ],
        check=True,
        capture_output=True,
    )


def _read_rgba(path: Path) -> np.ndarray:
    """An RGBA (BGRA order) image; fully opaque renders come back as RGB and get alpha 255."""
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if image is None or image.ndim != 3:
        raise RuntimeError(f"rsvg-convert wrote no colour image at {path}")
    if image.shape[2] == 3:
        image = cv2.cvtColor(image, cv2.COLOR_BGR2BGRA)
    return image


def _alpha_box(path: Path) -> tuple[int, int, int, int]:
    """Bounding box (x1, y1, x2, y2) of the non-transparent pixels of an RGBA PNG."""
    image = _read_rgba(path)
    ys, xs = np.nonzero(image[:, :, 3] > 8)
    if len(xs) == 0:
        raise RuntimeError(f"render {path} is empty")
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def render_card(deck: Deck, code: str, height: int, out: Path) -> Path:
    """Render one card of ``deck`` as an RGBA PNG ``height`` pixels tall at ``out``.

    Some decks declare element extents far larger than the card (``<use>`` elements with the
    whole sheet's size), so the render is cropped to its visible pixels: a first render at zoom 1
    measures the card, a second renders it at the zoom that gives ``height``. The renders go
    to files of this process's own (:func:`render_paths`) and the card reaches ``out`` whole,
    in one rename: processes rendering the same deck at once (a scene draw beside the tests)
    never read each other's half-written files.
    """
    if shutil.which("rsvg-convert") is None:
        raise RuntimeError(f"rsvg-convert not found: {CARD_ART_HINT}")
    out.parent.mkdir(parents=True, exist_ok=True)
    partial, finished = render_paths(out)
    _rsvg(deck, code, 1.0, partial)
    x1, y1, x2, y2 = _alpha_box(partial)
    zoom = height / (y2 - y1)
    _rsvg(deck, code, zoom, partial)
    x1, y1, x2, y2 = _alpha_box(partial)
    image = _read_rgba(partial)[y1:y2, x1:x2]
    if abs(image.shape[0] - height) > 2:
        image = cv2.resize(
            image,
            (round(image.shape[1] * height / image.shape[0]), height),
            interpolation=cv2.INTER_AREA,
        )
    cv2.imwrite(str(finished), image)
    os.replace(finished, out)
    partial.unlink()
    return out


def render_paths(out: Path) -> tuple[Path, Path]:
    """The files :func:`render_card` renders ``out`` through: the measuring render and the
    finished card before its rename, both named for this process."""
    return (
        out.with_name(f"{out.stem}.{os.getpid()}.part.png"),
        out.with_name(f"{out.stem}.{os.getpid()}.done.png"),
    )


def render_deck(
    deck: Deck, height: int = 400, codes: Iterable[str] | None = None
) -> dict[str, Path]:
    """Render (or reuse cached renders of) the deck's cards; returns code -> PNG path."""
    folder = cache_dir() / "cards" / f"h{height}" / deck.name
    result: dict[str, Path] = {}
    for code in codes if codes is not None else deck.codes:
        out = folder / f"{code}.png"
        if not out.is_file():
            render_card(deck, code, height, out)
        result[code] = out
    return result
