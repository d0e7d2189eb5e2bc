"""Where the models are and how the manifest names a model file."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["default_models_dir", "file_sha256"]


def default_models_dir() -> Path:
    """``$HANDREADER_MODELS``, else the project's ``models/`` folder in a checkout, else the
    models an installed package carries (``handreader/models`` beside ``vision``)."""
    configured = os.environ.get("HANDREADER_MODELS")
    if configured:
        return Path(configured)
    root = Path(__file__).resolve().parent.parent
    checkout = root / "models"
    installed = root / "handreader" / "models"
    return installed if not checkout.is_dir() and installed.is_dir() else checkout


def file_sha256(path: Path) -> str:
    """The hex SHA-256 of a file's bytes (how the model manifest names a model file)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()
