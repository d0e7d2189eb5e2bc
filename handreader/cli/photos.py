"""The photos a command is given, as ``handreader read`` and ``handreader score`` take them.

A folder stands for the image files directly inside it (by their extensions, sorted by name);
a photo that cannot be read, or a folder with none, gets one error (a JSON line or a message on
standard error) and the command goes on with the others. Light to import: the image decoding
is imported only when a photo is opened.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vision.imageio import ImageError, ReducedImage

__all__ = ["IMAGE_SUFFIXES", "expand_photos", "open_photo", "report_unreadable"]

IMAGE_SUFFIXES = frozenset(
    {".jpg", ".jpeg", ".jpe", ".png", ".webp", ".bmp", ".gif", ".tif", ".tiff"}
)
"""The file extensions a folder's photos are picked by (any case)."""


def expand_photos(photos: list[str]) -> list[str]:
    """The photos to read: each argument as given, except a folder, which stands for the image
    files directly inside it (sorted by name; a folder with none stays, for :func:`open_photo`
    to refuse)."""
    expanded: list[str] = []
    for photo in photos:
        folder = Path(photo)
        if not folder.is_dir():
            expanded.append(photo)
            continue
        inside = sorted(
            path.name
            for path in folder.iterdir()
            if path.is_file() and path.suffix.lower() in IMAGE_SUFFIXES
        )
        if inside:
            expanded.extend(str(folder / name) for name in inside)
        else:
            expanded.append(photo)
    return expanded


def open_photo(photo: str) -> ReducedImage:
    """The photo decoded as the commands read it (:func:`vision.imageio.load_reduced`: a large
    JPEG at the size the reader works at); ImageError when it cannot be, NoImagesError for a
    folder (one :func:`expand_photos` left: it holds no image file)."""
    from vision.imageio import NoImagesError, load_reduced

    if Path(photo).is_dir():
        kinds = ", ".join(sorted(IMAGE_SUFFIXES))
        raise NoImagesError(f"{photo!r}: no image file ({kinds}) in this folder")
    return load_reduced(photo)


def report_unreadable(command: str, photo: str, error: ImageError, as_json: bool) -> None:
    """A photo that could not be read: ``{"image": ..., "error": {"code", "message"}}`` on
    standard output with ``as_json``, else ``handreader COMMAND: error: ...`` on stderr."""
    if as_json:
        fields = {"code": getattr(error, "code", "unreadable"), "message": str(error)}
        print(json.dumps({"image": photo, "error": fields}), flush=True)
    else:
        print(f"handreader {command}: error: {error}", file=sys.stderr, flush=True)
