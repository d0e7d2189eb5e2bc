"""The built package holds what an installed handreader needs: every package of the tree, the
page's files and the shipped models (``models/`` installed as ``handreader/models``), so that a
wheel installed anywhere reads a photo with no checkout and no ``HANDREADER_MODELS``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOP_PACKAGES = ("rules", "vision", "training", "handreader")
DATA_PACKAGES = {"handreader.models": "models", "handreader.service.static": None}
"""Packages of data only: the models (from the top-level ``models/``) and the page's files."""


def _setuptools() -> dict[str, object]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    tool: dict[str, object] = config["tool"]["setuptools"]
    return tool


def test_the_package_list_names_every_package_of_the_tree() -> None:
    tree = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in TOP_PACKAGES
        for init in (ROOT / top).rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    listed = set(_setuptools()["packages"])  # type: ignore[arg-type]
    assert listed - tree == set(DATA_PACKAGES)
    assert tree <= listed, f"packages missing from pyproject.toml: {sorted(tree - listed)}"
    assert _setuptools()["package-dir"] == {"handreader.models": "models"}
    data = _setuptools()["package-data"]
    assert data["handreader.models"] == ["*.onnx", "manifest.json"]  # type: ignore[index]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # built from a copy: setuptools writes build/ and *.egg-info beside the sources it builds
    source = out / "source"
    skipped = shutil.ignore_patterns(
        ".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", ".*cache"
    )
    shutil.copytree(ROOT, source, ignore=skipped)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (found,) = out.glob("handreader-*.whl")
    return found


@pytest.mark.slow
def test_the_wheel_holds_the_models_and_the_page(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    names = set(archive.namelist())
    for model in ("detector.onnx", "classifier.onnx", "manifest.json"):
        assert f"handreader/models/{model}" in names
    assert "handreader/service/static/index.html" in names and "serve.py" in names
    assert not [name for name in names if name.startswith(("tests/", "docs/", "datasets/"))]
    carried = json.loads(archive.read("handreader/models/manifest.json"))
    assert carried == json.loads((ROOT / "models" / "manifest.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_an_installed_wheel_reads_a_photo_with_its_own_models(wheel: Path, tmp_path: Path) -> None:
    """The wheel's files, first on the path, read the example photo from a folder outside
    the project: the models are found inside the installed package."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "HANDREADER_MODELS"}
    env["PYTHONPATH"] = str(site)
    script = (
        "import sys, vision\n"
        f"assert vision.__file__.startswith({str(site)!r}), vision.__file__\n"
        "from handreader.cli import main\n"
        "sys.exit(main(['score', sys.argv[1]]))\n"
    )
    photo = ROOT / "examples" / "hand.jpg"
    ran = subprocess.run(
        [sys.executable, "-c", script, str(photo)],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.strip() == "hand 0: KS 2D JD 3D JC: Niu 5 (KS JC JD | 3D 2D)"
