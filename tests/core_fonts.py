"""Test helper: the six faces of fonts-dejavu-core, the same set wherever the tests run
(fonts-dejavu-extra, which other packages pull in, adds condensed and oblique faces to the
same folder)."""

from __future__ import annotations

from pathlib import Path

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
CORE_FACES = ("DejaVuSans", "DejaVuSans-Bold", "DejaVuSansMono", "DejaVuSansMono-Bold",
              "DejaVuSerif", "DejaVuSerif-Bold")  # fmt: skip


def core_faces_installed() -> bool:
    """Whether every core face is installed."""
    return all((DEJAVU / f"{face}.ttf").is_file() for face in CORE_FACES)
