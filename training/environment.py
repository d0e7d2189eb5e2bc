"""Ultralytics run offline: no downloads, no auto-installs, a local font for its plots."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["offline_ultralytics"]

_FONTS = (
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"),
)


def offline_ultralytics(config_dir: Path) -> None:
    """Set the environment so that importing and training ultralytics never touches the network.

    Must run before ``import ultralytics``. Copies a local TrueType font where ultralytics looks
    for ``Arial.ttf`` (it would download one otherwise).
    """
    os.environ["YOLO_OFFLINE"] = "1"
    os.environ["YOLO_AUTOINSTALL"] = "0"
    os.environ.setdefault("YOLO_CONFIG_DIR", str(config_dir))
    target = Path(os.environ["YOLO_CONFIG_DIR"]) / "Ultralytics"
    target.mkdir(parents=True, exist_ok=True)
    for name in ("Arial.ttf", "Arial.Unicode.ttf"):
        destination = target / name
        if not destination.exists():
            source = next((font for font in _FONTS if font.is_file()), None)
            if source is None:
                raise RuntimeError("no TrueType font found: install fonts-dejavu-core")
            shutil.copyfile(source, destination)
