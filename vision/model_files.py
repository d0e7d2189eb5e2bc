"""Where the models are, how the manifest names a model file, and the check of a model folder."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

__all__ = ["ModelError", "default_models_dir", "file_sha256", "model_paths"]


class ModelError(ValueError):
    """The shipped models are missing, corrupt, or disagree with the project's label table."""


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


def model_paths(
    models_dir: Path | None = None, verify_hashes: bool = True
) -> tuple[Any, dict[str, Path]]:
    """The manifest of ``models_dir/manifest.json`` (None: :func:`default_models_dir`) and the
    file of each model it names: ``detector`` and ``classifier``, and ``card_classifier`` and
    ``verifier`` where it names them. ModelError, naming the manifest or the file, when the
    manifest is missing or unreadable or lacks a model's file, a file is missing, or (with
    ``verify_hashes``) a file does not match its sha256 in the manifest. Reads no model."""
    folder = models_dir or default_models_dir()
    manifest_path = folder / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise ModelError(f"no model manifest at {str(manifest_path)!r}") from error
    except (OSError, json.JSONDecodeError) as error:
        raise ModelError(f"model manifest {str(manifest_path)!r} is unreadable: {error}") from error
    paths = {}
    optional = tuple(part for part in ("card_classifier", "verifier") if part in manifest)
    for part in ("detector", "classifier", *optional):
        try:
            entry = manifest[part]
            path = folder / entry["file"]
        except (KeyError, TypeError) as error:
            raise ModelError(f"model manifest {str(manifest_path)!r} lacks {part}.file") from error
        if not path.is_file():
            raise ModelError(f"{part} model {str(path)!r} named in the manifest is missing")
        if verify_hashes and entry.get("sha256") and file_sha256(path) != entry["sha256"]:
            raise ModelError(
                f"{part} model {str(path)!r} does not match its sha256 in the manifest"
            )
        paths[part] = path
    return manifest, paths
