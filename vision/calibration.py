"""Deck profiles: a few photos of the user's own deck make the reader read it like a known one.

A profile holds, for each card of the deck, prototypes: the classifier's L2-normalised
embeddings of that card's corner indices as photographed by the user. When reading with a
profile, each index's classifier probabilities are combined with a softmax over its cosine
similarity to the prototypes (a product of experts, weighted). No training runs: calibrating
is detection, cropping and one forward pass per index, seconds on two cores.

The weight and temperature of the combination default to :data:`DEFAULT_WEIGHT` and
:data:`DEFAULT_TEMPERATURE`, chosen by ``benchmarks/tune_calibration.py`` on synthetic scenes of
the held-out decks (never on real photos). A profile file records the pair it was made with;
reading a file whose pair is the default of an earlier release (:data:`RETIRED_DEFAULTS`) uses
the current defaults instead, since nobody chose those values for that deck; any other stored
pair is kept as written.

Profiles live in the user's data folder (``$HANDREADER_DATA`` or
``$XDG_DATA_HOME/handreader`` or ``~/.local/share/handreader``), under ``decks/NAME.json``,
never in ``models/``. Reading without a profile is unchanged.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES, parse_card

__all__ = [
    "DEFAULT_TEMPERATURE",
    "DEFAULT_WEIGHT",
    "RETIRED_DEFAULTS",
    "DeckProfile",
    "DeckProfileError",
    "check_deck_name",
    "combine_with_profile",
    "data_dir",
    "grid_order",
    "list_profiles",
    "load_profile",
    "made_for",
    "model_sha",
    "parse_profile",
    "profile_json",
    "save_profile",
]

PROFILE_FORMAT = 1
DEFAULT_WEIGHT = 0.5
"""Share of the profile in the combination, chosen by ``benchmarks/tune_calibration.py`` on
synthetic scenes of the held-out decks (figures in ``docs/``)."""
DEFAULT_TEMPERATURE = 0.03
"""Temperature of the softmax over cosine similarities (see :data:`DEFAULT_WEIGHT`)."""
RETIRED_DEFAULTS: tuple[tuple[float, float], ...] = ((0.7, 0.05),)
"""(weight, temperature) pairs that earlier releases wrote as defaults: read as the current
defaults."""
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
r"""A deck's name: a letter or digit, then up to 63 letters, digits, '_', '.' or '-', and
nothing after (``\Z``, not ``$``, which would let a name end in a newline)."""


class DeckProfileError(ValueError):
    """A deck profile that is missing, corrupt, badly named or made for other models."""


@dataclass(frozen=True)
class DeckProfile:
    """A calibrated deck: per-card prototype embeddings (k, D) and how they were made."""

    name: str
    prototypes: Mapping[str, NDArray[np.float32]]
    model_sha256: str
    created: str
    photos: tuple[str, ...] = ()
    weight: float = DEFAULT_WEIGHT
    temperature: float = DEFAULT_TEMPERATURE

    def matrix(self) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
        """All prototypes stacked (P, D) and the class index (in CARD_CLASSES) of each."""
        rows, owners = [], []
        for code, vectors in self.prototypes.items():
            rows.append(vectors)
            owners += [CARD_CLASSES.index(code)] * len(vectors)
        return np.concatenate(rows).astype(np.float32), np.array(owners, np.int64)


def model_sha(manifest: Mapping[str, Any]) -> str:
    """The sha256 that names the classifier of a models manifest (what a profile is made for)."""
    entry = manifest.get("classifier", {})
    return str(entry.get("sha256") or hashlib.sha256(repr(entry).encode()).hexdigest())


def made_for(profile: DeckProfile, manifest: Mapping[str, Any]) -> bool:
    """Whether ``profile`` was calibrated with the classifier the models ``manifest`` names:
    a profile made with another compares embeddings of a classifier that is not reading, and
    may read worse than no profile."""
    return profile.model_sha256 == model_sha(manifest)


def data_dir() -> Path:
    """The user's handreader data folder."""
    if os.environ.get("HANDREADER_DATA"):
        return Path(os.environ["HANDREADER_DATA"])
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "handreader"


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise DeckProfileError(
            f"bad deck name {name!r}: a letter or digit, then letters, digits, '-', '_' or '.' "
            "(up to 64)"
        )
    return name


def check_deck_name(name: str) -> str:
    """``name`` when it can name a deck (letters, digits, ``-``, ``_``, ``.``; up to 64, the
    first a letter or digit); DeckProfileError otherwise."""
    return _check_name(name)


def profile_path(name: str) -> Path:
    """Where the profile called ``name`` is stored."""
    return data_dir() / "decks" / f"{_check_name(name)}.json"


def profile_json(profile: DeckProfile) -> str:
    """The profile as the JSON text a profile file holds (prototypes rounded to 5 decimals)."""
    body = {
        "format": PROFILE_FORMAT,
        "name": profile.name,
        "model_sha256": profile.model_sha256,
        "created": profile.created,
        "photos": list(profile.photos),
        "weight": profile.weight,
        "temperature": profile.temperature,
        "prototypes": {code: np.round(v, 5).tolist() for code, v in profile.prototypes.items()},
    }
    return json.dumps(body)


def save_profile(profile: DeckProfile) -> Path:
    """Write the profile atomically (a crash leaves the old file or the new one, never half)."""
    path = profile_path(profile.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.part")
    partial.write_text(profile_json(profile))
    partial.replace(path)
    return path


def load_profile(name_or_path: str | Path) -> DeckProfile:
    """Read a profile by name (from the data folder) or by file path; refuse corrupt files.

    A stored weight and temperature that were an earlier release's defaults
    (:data:`RETIRED_DEFAULTS`) are read as the current defaults; other stored values are kept.
    """
    path = Path(name_or_path)
    if not (path.suffix == ".json" and path.exists()):
        path = profile_path(str(name_or_path))
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as error:
        known = ", ".join(list_profiles()) or "none"
        raise DeckProfileError(f"no deck profile {str(name_or_path)!r} (known: {known})") from error
    except (OSError, UnicodeDecodeError) as error:
        raise DeckProfileError(f"deck profile {str(path)!r} is corrupt: {error}") from error
    return parse_profile(text, str(path))


def parse_profile(text: str, source: str) -> DeckProfile:
    """A profile from its JSON text (:func:`profile_json`'s form); ``source`` names it in
    errors (a file path, or a deck in a database). DeckProfileError for a corrupt one.

    A stored weight and temperature that were an earlier release's defaults
    (:data:`RETIRED_DEFAULTS`) are read as the current defaults; other stored values are kept.
    """
    path = source
    try:
        body = json.loads(text)
    except json.JSONDecodeError as error:
        raise DeckProfileError(f"deck profile {str(path)!r} is corrupt: {error}") from error
    except RecursionError:  # arrays nested past Python's recursion limit
        raise DeckProfileError(f"deck profile {str(path)!r} is corrupt: nested too deep") from None
    if not isinstance(body, dict):
        raise DeckProfileError(f"deck profile {str(path)!r} is corrupt: not a JSON object")
    try:
        if body["format"] != PROFILE_FORMAT:
            raise DeckProfileError(
                f"deck profile {str(path)!r} has format {body['format']!r}, "
                f"expected {PROFILE_FORMAT}"
            )
        if not isinstance(body["prototypes"], dict):
            raise DeckProfileError(
                f"deck profile {str(path)!r} is corrupt: its prototypes are not listed by card"
            )
        prototypes: dict[str, NDArray[np.float32]] = {}
        for code, vectors in body["prototypes"].items():
            if code not in CARD_CLASSES:
                raise DeckProfileError(f"deck profile {str(path)!r} names unknown card {code!r}")
            try:
                array = np.asarray(vectors, np.float32)
            except (TypeError, ValueError):  # (not numbers, or rows of different lengths)
                array = np.zeros((0, 0), np.float32)
            if array.ndim != 2 or array.shape[0] == 0 or not np.isfinite(array).all():
                raise DeckProfileError(
                    f"deck profile {str(path)!r}: card {code} has bad prototypes"
                )
            prototypes[code] = array
        if not prototypes:
            raise DeckProfileError(f"deck profile {str(path)!r} holds no card")
        widths = {v.shape[1] for v in prototypes.values()}
        if len(widths) != 1:
            raise DeckProfileError(
                f"deck profile {str(path)!r}: prototypes of different sizes {sorted(widths)}"
            )
        weight, temperature = _number(body, "weight", path), _number(body, "temperature", path)
        if not (0 <= weight <= 1 and temperature > 0):
            raise DeckProfileError(
                f"deck profile {str(path)!r}: weight or temperature out of range"
            )
        if any(
            abs(weight - old_weight) < 1e-9 and abs(temperature - old_temperature) < 1e-9
            for old_weight, old_temperature in RETIRED_DEFAULTS
        ):
            weight, temperature = DEFAULT_WEIGHT, DEFAULT_TEMPERATURE
        photos = body.get("photos", [])
        if not (isinstance(photos, list) and all(isinstance(item, str) for item in photos)):
            raise DeckProfileError(
                f"deck profile {str(path)!r} is corrupt: its 'photos' field must be a list of "
                f"names, got {_kind(photos)}"
            )
        return DeckProfile(
            _text(body, "name", path),
            prototypes,
            _text(body, "model_sha256", path),
            _text(body, "created", path),
            tuple(photos),
            weight,
            temperature,
        )
    except KeyError as error:
        raise DeckProfileError(
            f"deck profile {str(path)!r} is corrupt: it has no {error.args[0]!r} field"
        ) from None
    except (TypeError, ValueError, AttributeError, RecursionError) as error:
        if isinstance(error, DeckProfileError):
            raise
        raise DeckProfileError(
            f"deck profile {str(path)!r} is corrupt: a field of the wrong kind ({error})"
        ) from None


def _kind(value: object) -> str:
    """What a JSON value is, in JSON's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    names = {dict: "an object", list: "a list", str: "text", int: "a number", float: "a number"}
    return names.get(type(value), type(value).__name__)


def _number(body: dict[str, Any], name: str, path: str) -> float:
    """The number in the field ``name`` (KeyError when it is missing); DeckProfileError naming
    the field when it holds anything else."""
    value = body[name]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DeckProfileError(
            f"deck profile {path!r} is corrupt: its {name!r} field must be a number, "
            f"got {_kind(value)}"
        )
    return float(value)


def _text(body: dict[str, Any], name: str, path: str) -> str:
    """The text in the field ``name`` (KeyError when it is missing); DeckProfileError naming
    the field when it holds anything else."""
    value = body[name]
    if not isinstance(value, str):
        raise DeckProfileError(
            f"deck profile {path!r} is corrupt: its {name!r} field must be text, got {_kind(value)}"
        )
    return value


def list_profiles() -> list[str]:
    """Names of the saved profiles, sorted."""
    folder = data_dir() / "decks"
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []


def combine_with_profile(
    probabilities: NDArray[np.float32], embeddings: NDArray[np.float32], profile: DeckProfile
) -> NDArray[np.float32]:
    """Classifier probabilities (N, 55) adjusted by the profile's prototypes.

    Card classes: ``p ** (1 - w) * q ** w``, where ``q`` is a softmax of the best cosine
    similarity to each card's prototypes over ``temperature``, renormalised to the share ``p``
    gave the cards the profile has; cards the profile lacks keep the classifier's share. The
    "none" column (last) is left as the classifier said. Among the cards the profile has, which
    wins depends only on ``w / ((1 - w) * temperature)``, the weight of similarity against
    log-probability; the pair itself also sets how sure the result is.
    """
    if len(probabilities) == 0:
        return probabilities
    matrix, owners = profile.matrix()
    if matrix.shape[1] != embeddings.shape[1]:
        raise DeckProfileError(
            f"deck profile {profile.name!r} was made with {matrix.shape[1]}-d embeddings, "
            f"the classifier gives {embeddings.shape[1]}-d: calibrate again"
        )
    similarity = embeddings @ matrix.T  # (N, P)
    cards = len(CARD_CLASSES)
    best = np.full((len(embeddings), cards), -1.0, np.float32)
    for column, owner in enumerate(owners):
        best[:, owner] = np.maximum(best[:, owner], similarity[:, column])
    present = np.zeros(cards, bool)
    present[np.unique(owners)] = True
    logits = np.where(present, best / profile.temperature, -np.inf)
    logits -= logits.max(axis=1, keepdims=True)
    q = np.exp(logits)
    q /= q.sum(axis=1, keepdims=True)
    card_p = probabilities[:, :cards]
    mass = card_p.sum(axis=1, keepdims=True)
    prior = card_p / np.maximum(mass, 1e-9)
    w = profile.weight
    # the profile only moves probability among the cards it has samples of: their share of the
    # classifier's mass stays theirs, and a card the profile lacks keeps its own probability
    known_mass = (prior * present).sum(axis=1, keepdims=True)
    product = np.where(present, np.exp((1 - w) * np.log(prior + 1e-9) + w * np.log(q + 1e-9)), 0)
    product *= known_mass / np.maximum(product.sum(axis=1, keepdims=True), 1e-30)
    mixed = np.where(present, product, prior)
    mixed /= mixed.sum(axis=1, keepdims=True)
    out = probabilities.copy()
    out[:, :cards] = mixed * mass
    return out


GRID_SUITS = "SHDC"
GRID_RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")


def grid_order() -> list[str]:
    """The documented layout of a whole-deck photo: 4 rows (S, H, D, C) of 13 cards, A to K."""
    return [rank + suit for suit in GRID_SUITS for rank in GRID_RANKS]


def code_from_filename(path: Path) -> str | None:
    """The card code a file name starts with (``10C_00.jpg``, ``qs.png``, ``JR-1.jpg``), or None."""
    match = re.match(
        r"^(10|[2-9AJQKTajqkt])([SHDCshdc])(?=$|[^A-Za-z0-9])|^(J[BR]|j[br])(?=$|[^A-Za-z0-9])",
        path.stem,
    )
    if not match:
        return None
    return str(parse_card(match.group(0)))


def assign_cells(
    centers: NDArray[np.floating[Any]], rows: int, columns: int
) -> tuple[NDArray[np.int64], float]:
    """Grid cell (row * columns + column) of each point, cells spanning the points' extent."""
    low, high = centers.min(axis=0), centers.max(axis=0)
    span = np.maximum(high - low, 1e-6)
    column = np.clip(((centers[:, 0] - low[0]) / span[0] * columns).astype(int), 0, columns - 1)
    row = np.clip(((centers[:, 1] - low[1]) / span[1] * rows).astype(int), 0, rows - 1)
    pitch = float(min(span[0] / max(columns - 1, 1), span[1] / max(rows - 1, 1)))
    return row * columns + column, pitch


def new_profile(
    name: str,
    prototypes: Mapping[str, Sequence[NDArray[np.float32]]],
    model_sha256: str,
    photos: Sequence[str],
) -> DeckProfile:
    """A profile from per-card lists of embeddings (each stacked and kept as prototypes)."""
    _check_name(name)
    stacked = {
        code: np.stack(list(vectors)).astype(np.float32)
        for code, vectors in prototypes.items()
        if vectors
    }
    if not stacked:
        raise DeckProfileError("no card could be read from the calibration photos")
    created = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return DeckProfile(name, stacked, model_sha256, created, tuple(photos))
