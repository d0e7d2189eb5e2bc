"""Whether a calibrated deck (``--deck``, ``handreader decks``) fits the models read with.

A deck profile holds embeddings of the classifier it was calibrated with
(``vision.calibration.made_for``); read with other models, its prototypes compare embeddings of
another classifier and may read worse than no deck. The commands still read with it, as the
API does (its ``models_match``), and say so: one warning line on standard error before the
first photo, and a remark on the deck's line of ``handreader decks``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from vision.calibration import DeckProfile

__all__ = ["models_manifest", "warn_other_models"]


def models_manifest(models: Path | None) -> Mapping[str, Any]:
    """The manifest of the model folder ``models`` (None: the shipped models), read without
    loading the models; ModelError (a ValueError: one line, exit 2) when the folder fails the
    check every command makes of it (:func:`vision.model_files.model_paths`)."""
    from vision.model_files import model_paths

    manifest, _ = model_paths(models, verify_hashes=False)
    return cast("Mapping[str, Any]", manifest)


def warn_other_models(command: str, deck: DeckProfile | None, manifest: object) -> None:
    """One warning line on standard error, ``handreader COMMAND: warning: deck 'NAME' was
    ...``, when ``deck`` was calibrated with other models than those of ``manifest`` (the
    loaded reader's); nothing without a deck or a manifest (a stand-in reader)."""
    from vision.calibration import made_for

    if deck is None or not isinstance(manifest, Mapping) or made_for(deck, manifest):
        return
    print(
        f"handreader {command}: warning: deck {deck.name!r} was calibrated with other models "
        "than those loaded and may read worse than no deck: calibrate it again",
        file=sys.stderr,
        flush=True,
    )
