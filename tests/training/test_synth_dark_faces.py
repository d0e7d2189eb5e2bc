"""Decks printed light on dark in the synthetic scenes (``geometry.dark_face_probability``):
each card face drawn as its negative, the labels unchanged; nothing drawn otherwise at 0.
Decks are the held-out ones at 200 px; the tests skip with the reason when the card art is not
installed (scripts/install-card-art)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from training.synth import scene as scene_module
from training.synth.assets import DeckAssets, load_assets
from training.synth.config import ConfigError, SceneConfig, load_config, parse_config
from training.synth.decks import DECKS

ROOT = Path(__file__).resolve().parents[2]
HOLDOUT = tuple(deck for deck in DECKS if deck.split == "holdout")
_absent = [deck.name for deck in HOLDOUT[:2] if not deck.available]
needs_art = pytest.mark.skipif(
    bool(_absent),
    reason=f"card art not installed ({', '.join(_absent)}): run scripts/install-card-art",
)


def _decks() -> list[DeckAssets]:
    return [load_assets(deck.name, 200) for deck in HOLDOUT[:2]]


def _config(probability: float) -> SceneConfig:
    return parse_config(
        {
            "deck_split": "holdout",
            "card_render_height": 200,
            "sizes": [[640, 480]],
            "layouts": {"single": 0, "table": 1, "hand": 0, "fan": 0, "pits": 0, "pile": 0},
            "geometry": {"dark_face_probability": probability, "card_height_fraction": [0.3, 0.4]},
            "photometry": {"shadow_probability": 0, "glare_probability": 0},
        }
    )


def test_the_share_is_a_probability() -> None:
    assert (
        parse_config({"geometry": {"dark_face_probability": 0.25}}).geometry.dark_face_probability
        == 0.25
    )
    assert parse_config({}).geometry.dark_face_probability == 0.0
    with pytest.raises(ConfigError, match=r"geometry\.dark_face_probability"):
        parse_config({"geometry": {"dark_face_probability": 1.5}})


def test_the_dark_held_out_config_is_the_held_out_one_with_dark_faces() -> None:
    holdout = load_config(ROOT / "datasets" / "holdout.yaml")
    dark = load_config(ROOT / "datasets" / "dark-holdout.yaml")
    assert dark.geometry.dark_face_probability == 1.0
    assert dark.seed != holdout.seed
    assert replace(dark, seed=holdout.seed, geometry=holdout.geometry) == holdout
    assert replace(dark.geometry, dark_face_probability=0.0) == holdout.geometry


def _index_grey(scene: scene_module.Scene) -> float:
    grey = cv2.cvtColor(scene.image, cv2.COLOR_BGR2GRAY)
    values = [
        np.median(grey[int(y0) : int(y1) + 1, int(x0) : int(x1) + 1])
        for x0, y0, x1, y1 in (label.box_xyxy for label in scene.labels)
    ]
    return float(np.median(values))


@needs_art
def test_dark_faces_are_the_negatives_of_the_light_ones() -> None:
    """The same placements at 0 and 1: the index boxes, mostly paper round the ink, are light
    on light faces and dark on dark ones; the labels are the same."""
    assets = _decks()
    for seed in range(3):
        light = scene_module.render_scene(_config(0.0), assets, np.random.default_rng(seed))
        dark = scene_module.render_scene(_config(1.0), assets, np.random.default_rng(seed))
        assert light.labels and [label.box_xyxy for label in light.labels] == [
            label.box_xyxy for label in dark.labels
        ]
        assert _index_grey(light) > 150 > 100 > _index_grey(dark)


@needs_art
def test_nothing_is_drawn_otherwise_at_zero() -> None:
    """A config naming the share at 0 draws the very bytes of one that does not name it."""
    assets = _decks()
    plain = parse_config({"deck_split": "holdout", "card_render_height": 200})
    named = parse_config(
        {
            "deck_split": "holdout",
            "card_render_height": 200,
            "geometry": {"dark_face_probability": 0},
        }
    )
    for seed in range(3):
        first = scene_module.render_scene(plain, assets, np.random.default_rng(seed))
        second = scene_module.render_scene(named, assets, np.random.default_rng(seed))
        assert (first.image == second.image).all()
