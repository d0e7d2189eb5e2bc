"""The synthetic-scene config: a YAML file in ``datasets/`` parsed into frozen, validated records.

Every field has a default; a wrong type, range or unknown key is a ``ConfigError`` naming the
field (``photometry.blur_probability: expected a number in [0, 1], got 'yes'``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "DECK_SPLITS",
    "PROJECT_ROOT",
    "Casino",
    "ConfigError",
    "Legibility",
    "SceneConfig",
    "load_config",
    "project_file",
]


class ConfigError(ValueError):
    """A synthetic-scene config with a missing, unknown or out-of-range field."""


@dataclass(frozen=True, slots=True)
class Layouts:
    """Relative weights of the scene layouts (need not sum to 1)."""

    single: float = 0.1
    table: float = 0.2
    hand: float = 0.25
    fan: float = 0.2
    pits: float = 0.1
    pile: float = 0.15
    closeup: float = 0.0
    """One card filling the frame, often stretched (``datasets/closeups.yaml``); off by
    default, so the other configs draw the same scenes as before it existed."""
    casino: float = 0.0
    """A casino table (blackjack, baccarat, poker, Niu Niu) with its print, chips, card backs,
    shoe and dealer's hands (:mod:`training.synth.casino`, ``datasets/casino.yaml``); off by
    default."""
    tight_fan: float = 0.0
    """One to four hands of up to 13 cards fanned tight, so that only a sliver of each index
    shows (bridge hands); off by default."""


@dataclass(frozen=True, slots=True)
class Geometry:
    """Where and how big cards appear."""

    max_tilt_degrees: float = 60.0
    card_height_fraction: tuple[float, float] = (0.12, 0.62)
    min_index_px: float = 12.0
    joker_probability: float = 0.08
    mixed_decks_probability: float = 0.1
    joker_restyle_probability: float = 0.0
    """Share of jokers drawn with another corner mark (a star, a ring, a disc, a word;
    :mod:`training.synth.jokers`). 0 (the default) draws nothing, so configs without it give the
    same scenes as before it existed."""
    perspective_probability: float = 0.0
    """Share of scenes seen by a camera at the table's side, ``perspective_degrees`` from the
    table's normal, near the table: far cards small and foreshortened (a dealer-side camera).
    0 (the default) draws nothing, so configs without it give the same scenes as before it
    existed."""
    perspective_degrees: tuple[float, float] = (30.0, 70.0)
    """The range of that camera's angle from the table's normal, degrees."""
    dark_face_probability: float = 0.0
    """Share of scenes whose cards are printed light on dark (each card face drawn as its
    negative: light indices on black paper, as decks with dark faces print them). 0 (the
    default) draws nothing, so configs without it give the same scenes as before it existed."""
    visible_part_boxes: bool = False
    """Whether a partly covered index that is labelled (``min_visible``) is boxed where it
    shows (a sliver of a fanned card) rather than whole; off by default, so older configs keep
    their labels."""


@dataclass(frozen=True, slots=True)
class Casino:
    """What a casino table carries besides its cards (``layouts.casino``)."""

    card_free_probability: float = 0.1
    """Share of casino tables with no card face up: chips, print, backs, nothing to find."""
    printed_cards_probability: float = 0.5
    """Share of layouts that print pictures of cards on the cloth."""
    loose_chips: tuple[int, int] = (0, 6)
    """How many single chips lie flat on the table (low, high)."""
    shoe_probability: float = 0.4
    """Share of tables with a dealing shoe and a discard tray."""
    rack_probability: float = 0.4
    """Share of tables with the dealer's chip rack at the far edge."""
    hands_probability: float = 0.3
    """Share of tables with the dealer's hands reaching in."""


@dataclass(frozen=True, slots=True)
class Legibility:
    """Which labelled indices a person can read: the others are labelled for the detector but
    their cards are ``optional`` in the scenes' manifest (see ``docs/training.md``)."""

    min_index_px: float = 16.0
    """Smallest index height (rank and pip, image pixels) a person reads."""
    min_visible: float = 0.8
    """Smallest share of an index on top and in the frame that a person reads."""


@dataclass(frozen=True, slots=True)
class Photometry:
    """Probabilities and ranges of the camera and lighting effects."""

    gradient_probability: float = 0.6
    shadow_probability: float = 0.5
    glare_probability: float = 0.25
    color_cast_probability: float = 0.5
    blur_probability: float = 0.35
    motion_blur_probability: float = 0.15
    noise_probability: float = 0.5
    low_resolution_probability: float = 0.15
    overexposure_probability: float = 0.0
    """Share of scenes overexposed (flash, a bright window): every value times 1.3 to 1.9,
    clipped at white. 0 (the default) draws nothing, so configs without it give the same
    scenes as before it existed."""
    jpeg_quality: tuple[int, int] = (45, 95)


@dataclass(frozen=True, slots=True)
class Backgrounds:
    """Where background photos come from, and how often they are used over procedural ones."""

    photo_dirs: tuple[str, ...] = ("/usr/share/wallpapers", "/usr/share/backgrounds")
    photo_probability: float = 0.5
    printed_probability: float = 0.0
    """Share of scenes with printed pages (text: a book, a menu) laid on the table under the
    cards (:mod:`training.synth.printed`). 0 (the default) draws nothing, so configs without it
    give the same scenes as before it existed."""


DECK_SPLITS = (
    "train",
    "holdout",
    "extra",
    "train+extra",
    "all",
    "letters-french",
    "letters-german",
    "letters-russian",
)
"""The values of ``deck_split`` (:func:`training.synth.assets.decks_for_split`)."""


@dataclass(frozen=True, slots=True)
class SceneConfig:
    """Everything that drives scene generation; the same config and seed give the same bytes."""

    seed: int = 0
    deck_split: str = "train"
    card_render_height: int = 480
    sizes: tuple[tuple[int, int], ...] = (
        (640, 480),
        (480, 640),
        (800, 600),
        (320, 240),
        (1024, 768),
    )
    min_visible: float = 0.8
    layouts: Layouts = field(default_factory=Layouts)
    geometry: Geometry = field(default_factory=Geometry)
    photometry: Photometry = field(default_factory=Photometry)
    backgrounds: Backgrounds = field(default_factory=Backgrounds)
    casino: Casino = field(default_factory=Casino)
    legibility: Legibility = field(default_factory=Legibility)


def _number(value: Any, where: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ConfigError(f"{where}: expected a number in [{low}, {high}], got {value!r}")
    return float(value)


def _whole(value: Any, where: str, low: float, high: float) -> int:
    """A whole number in range (``480.0`` is accepted, ``480.7`` is not silently truncated)."""
    number = _number(value, where, low, high)
    if not number.is_integer():
        raise ConfigError(f"{where}: expected a whole number in [{low}, {high}], got {value!r}")
    return int(number)


def _pair(
    value: Any,
    where: str,
    low: float,
    high: float,
    integer: bool = False,
    ordered: bool = True,
    shape: str = "[low, high]",
) -> tuple[Any, Any]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise ConfigError(f"{where}: expected a pair {shape}, got {value!r}")
    convert = _whole if integer else _number
    first, second = (convert(item, where, low, high) for item in value)
    if ordered and first > second:
        raise ConfigError(f"{where}: low {first} is above high {second}")
    return (int(first), int(second)) if integer else (first, second)


_SECTIONS = {
    "layouts": Layouts,
    "geometry": Geometry,
    "photometry": Photometry,
    "backgrounds": Backgrounds,
    "casino": Casino,
    "legibility": Legibility,
}


def _section(kind: type, raw: Any, name: str) -> Any:
    if raw is None:
        return kind()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{name}: expected a mapping, got {raw!r}")
    known = {f.name for f in fields(kind)}
    for key in raw:
        if key not in known:
            raise ConfigError(f"{name}.{key}: unknown field (known: {', '.join(sorted(known))})")
    values: dict[str, Any] = {}
    defaults = kind()
    for key, value in raw.items():
        where = f"{name}.{key}"
        default = getattr(defaults, key)
        if key == "photo_dirs":
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise ConfigError(f"{where}: expected a list of folder paths, got {value!r}")
            values[key] = tuple(value)
        elif key == "jpeg_quality":
            values[key] = _pair(value, where, 1, 100, integer=True)
        elif key == "card_height_fraction":
            values[key] = _pair(value, where, 0.01, 1.0)
        elif key == "max_tilt_degrees":
            values[key] = _number(value, where, 0, 75)
        elif key == "min_index_px":
            values[key] = _number(value, where, 1, 200)
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: expected true or false, got {value!r}")
            values[key] = value
        elif key == "perspective_degrees":
            values[key] = _pair(value, where, 0, 80)
        elif key == "loose_chips":
            values[key] = _pair(value, where, 0, 50, integer=True)
        elif isinstance(default, float) and name == "layouts":
            values[key] = _number(value, where, 0, 1000)
        else:
            values[key] = _number(value, where, 0, 1)
    result = kind(**values)
    if name == "layouts" and sum(getattr(result, f.name) for f in fields(kind)) <= 0:
        raise ConfigError("layouts: at least one layout needs a positive weight")
    return result


def parse_config(raw: Any) -> SceneConfig:
    """Validate a parsed YAML mapping into a SceneConfig."""
    if raw is None:
        raise ConfigError("config: the file is empty: it needs the settings of the scenes")
    if not isinstance(raw, Mapping):
        shown = {list: "a list", str: "text", int: "a number", float: "a number"}.get(
            type(raw), type(raw).__name__
        )
        raise ConfigError(f"config: expected a mapping of settings at the top level, got {shown}")
    known = {f.name for f in fields(SceneConfig)}
    for key in raw:
        if key not in known:
            raise ConfigError(f"{key}: unknown field (known: {', '.join(sorted(known))})")
    values: dict[str, Any] = {}
    if "seed" in raw:
        seed = raw["seed"]
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ConfigError(f"seed: expected a non-negative integer, got {seed!r}")
        values["seed"] = seed
    if "deck_split" in raw:
        if raw["deck_split"] not in DECK_SPLITS:
            raise ConfigError(
                f"deck_split: expected one of {', '.join(DECK_SPLITS)}, got {raw['deck_split']!r}"
            )
        values["deck_split"] = raw["deck_split"]
    if "card_render_height" in raw:
        height = raw["card_render_height"]
        values["card_render_height"] = _whole(height, "card_render_height", 64, 2000)
    if "sizes" in raw:
        sizes = raw["sizes"]
        if not isinstance(sizes, list) or not sizes:
            raise ConfigError(f"sizes: expected a list of [width, height] pairs, got {sizes!r}")
        values["sizes"] = tuple(
            _pair(
                size,
                f"sizes[{number}]",
                64,
                8192,
                integer=True,
                ordered=False,
                shape="[width, height]",
            )
            for number, size in enumerate(sizes)
        )
    if "min_visible" in raw:
        values["min_visible"] = _number(raw["min_visible"], "min_visible", 0.05, 1)
    for name, kind in _SECTIONS.items():
        if name in raw:
            values[name] = _section(kind, raw[name], name)
    return SceneConfig(**values)


PROJECT_ROOT = Path(__file__).resolve().parents[2]
"""The folder holding ``training/``: in a checkout, the project's root (``datasets/``)."""


def project_file(path: str | Path) -> Path:
    """``path``, or a relative ``path`` that is not there from the working folder taken from
    :data:`PROJECT_ROOT` where it is there (``datasets/scenes.yaml`` read from any folder)."""
    path = Path(path)
    if path.is_absolute() or path.exists() or not (PROJECT_ROOT / path).exists():
        return path
    return PROJECT_ROOT / path


def load_config(path: str | Path) -> SceneConfig:
    """Read and validate a config file (a relative path found as :func:`project_file` finds
    it): UTF-8 text, a byte-order mark at its start allowed; errors name the file as given
    and the field, or the first byte that is not UTF-8."""
    path = Path(path)
    try:
        raw = yaml.safe_load(project_file(path).read_bytes().decode("utf-8"))
    except OSError as error:
        raise ConfigError(f"cannot read config {str(path)!r}: {error.strerror}") from error
    except UnicodeDecodeError as error:
        byte = error.object[error.start]
        raise ConfigError(
            f"config {str(path)!r} is not UTF-8 text (byte 0x{byte:02x} at position {error.start})"
        ) from None
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" at line {where.line + 1}, column {where.column + 1}" if where is not None else ""
        problem = getattr(error, "problem", None) or "a syntax error"
        raise ConfigError(f"config {str(path)!r} is not valid YAML{line}: {problem}") from error
    try:
        return parse_config(raw)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from error
