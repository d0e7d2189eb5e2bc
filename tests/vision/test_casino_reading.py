"""Casino tables read by the shipped reader with and without the card-face check
(``ReaderSettings.card_evidence``, vision/card_evidence.py; issue 29, part 3).

The tables are scenes of ``datasets/casino-holdout.yaml`` (held-out decks, printed felt, chips,
card backs) drawn the same wherever the tests run: on procedural backgrounds (no background
photos) and with the six faces of fonts-dejavu-core alone (the felt's print, the chips'
values), whatever else the machine has installed. Scenes 0 and 126 of the config drawn
card-free (every layout a casino table, no card face up, as ``benchmarks/eval_casino_tables.py``
draws them) are tables where the check decides: without it the shipped models read something
on the cloth as a certain card (a 10H; a KD); with it they read no certain card (at most an
unsure one). On a table with cards (scene 5) the check keeps every
card read right. On most tables the check changes nothing: most false cards left are the
pictures of cards printed on the cloth, whose faces it cannot tell from a card's
(docs/reading.md).

Slow: the held-out decks are drawn at 480 px (rendered into the cache on first use); skipped
with the reason when the card art is not installed (scripts/install-card-art).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from core_fonts import CORE_FACES, DEJAVU, core_faces_installed

from training.pack import draw_from
from training.synth.config import Layouts, SceneConfig, load_config
from training.synth.decks import DECKS, cache_dir
from training.synth.generate import scene_at
from vision.reader import Reader

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "datasets" / "casino-holdout.yaml"


def _art_missing() -> str | None:
    absent = [deck.name for deck in DECKS if deck.split == "holdout" and not deck.available]
    if absent:
        return f"card art not installed ({', '.join(absent)}): run scripts/install-card-art"
    if shutil.which("rsvg-convert") is None:
        return "rsvg-convert not installed (librsvg2-bin): run scripts/install-card-art"
    return None


_missing = _art_missing()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(_missing is not None, reason=_missing or "")]


def card_free(config: SceneConfig) -> SceneConfig:
    """The config with every scene a casino table with no card face up."""
    layouts = Layouts(**{field.name: 0.0 for field in dataclasses.fields(Layouts)})
    return dataclasses.replace(
        config,
        layouts=dataclasses.replace(layouts, casino=1.0),
        casino=dataclasses.replace(config.casino, card_free_probability=1.0),
    )


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SceneConfig]:
    """The casino held-out config on procedural backgrounds, drawn with the fonts-dejavu-core
    faces alone: a render cache of the usual card renders and those fonts
    (``training.pack.draw_from``), left again after the module."""
    if not core_faces_installed():
        pytest.skip("needs fonts-dejavu-core")
    usual = cache_dir()
    folder = tmp_path_factory.mktemp("casino-cache")
    (folder / "fonts").mkdir()
    for face in CORE_FACES:
        (folder / "fonts" / f"{face}.ttf").symlink_to(DEJAVU / f"{face}.ttf")
    (usual / "cards").mkdir(parents=True, exist_ok=True)
    (folder / "cards").symlink_to(usual / "cards")
    before = os.environ.get("HANDREADER_CACHE")
    draw_from(folder)
    loaded = load_config(CONFIG)
    yield dataclasses.replace(
        loaded, backgrounds=dataclasses.replace(loaded.backgrounds, photo_dirs=())
    )
    if before is None:
        del os.environ["HANDREADER_CACHE"]
        draw_from(usual)
        del os.environ["HANDREADER_CACHE"]
    else:
        draw_from(Path(before))


@pytest.fixture(scope="module")
def readers() -> tuple[Reader, Reader]:
    """The shipped reader without the check and with it."""
    plain = Reader.load()
    checked = plain.with_settings(dataclasses.replace(plain.settings, card_evidence=True))
    plain = plain.with_settings(dataclasses.replace(plain.settings, card_evidence=False))
    return plain, checked


@pytest.mark.parametrize("number", [0, 126])
def test_a_card_free_casino_table_reads_as_no_card(
    number: int, config: SceneConfig, readers: tuple[Reader, Reader]
) -> None:
    plain, checked = readers
    scene = scene_at(card_free(config), number)
    assert scene.labels == [] and scene.game  # a casino table with nothing face up
    without = plain.read(scene.image)
    assert without.certain, "the scene no longer shows what the check decides"
    found = checked.read(scene.image)
    # no certain card; what stays is unsure (how unsure differs a little between CPUs' int8
    # kernels), and never more than without the check
    assert found.certain == ()
    assert len(found.cards) < len(without.cards)


def test_a_casino_table_with_chips_and_print_keeps_every_card_read_right(
    config: SceneConfig, readers: tuple[Reader, Reader]
) -> None:
    plain, checked = readers
    scene = scene_at(config, 5)
    shown = {label.code for label in scene.labels} | {label.code for label in scene.partial}
    assert {"4C", "8S", "9H", "JH", "QC"} <= {label.code for label in scene.labels}
    before = {card.code for card in plain.read(scene.image).certain}
    assert before & shown == {"4C", "8S", "9H", "JH", "QC"}, "the scene no longer reads so"
    after = {card.code for card in checked.read(scene.image).certain}
    assert after <= before  # the check only ever takes cards away
    assert after >= before & shown  # every card of the table read without the check stays
