"""``GET /v1/source``: the running program's source code, for anyone who uses it over a network.

handreader is under the AGPL-3.0-or-later, whose section 13 asks a program that users reach
over a network to offer them its source. The service serves the source of the code it runs: a
gzipped tar of the files beside the installed packages (``rules``, ``vision``, ``handreader``,
``serve.py``, and in a checkout the project's other text files), built once on the first request
and kept in memory. In a git checkout only the files git tracks are taken, so a stray ``.env``,
key or data file in the tree is never published; in a tree without git only files of the listed
source types, none hidden and none without a type but ``LICENSE``. From an installed package's
folder (site-packages, which other distributions share) only the project's own packages are
taken, with the licence and metadata of its ``dist-info``. An operator who
publishes a modified version elsewhere sets ``HANDREADER_SOURCE_URL`` and the route redirects
there instead. The page links to the route.
"""

from __future__ import annotations

import functools
import gzip
import io
import os
import subprocess
import tarfile
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import RedirectResponse, Response

__all__ = ["SOURCE_URL_VARIABLE", "add_source_route", "source_archive", "source_files"]

SOURCE_URL_VARIABLE = "HANDREADER_SOURCE_URL"

ROOT = Path(__file__).resolve().parents[3]
"""The folder holding the packages: a checkout's root, or site-packages for a wheel."""

_PARTS = (
    "LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml", "MANIFEST.in", "serve.py",
    "rules", "vision", "training", "handreader", "datasets", "benchmarks", "scripts", "tests",
    "examples", "docs", ".ci",
)  # fmt: skip
"""What the archive holds, where it exists under :data:`ROOT` (only the packages and
``serve.py`` in a wheel's install)."""

_TEXT_SUFFIXES = frozenset(
    {".py", ".pyi", ".typed", ".js", ".html", ".css", ".md", ".yaml", ".yml", ".toml", ".json",
     ".txt", ".cfg", ".in", ""}
)  # fmt: skip
"""Source files by suffix (no suffix: ``LICENSE``, ``scripts/install-card-art``, ``.ci/run``).
Pictures, models and compiled files are left out."""

_SKIPPED_FOLDERS = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
_MAX_FILE_BYTES = 2_000_000


def _tracked(root: Path) -> frozenset[Path] | None:
    """The files git tracks under ``root``; None when ``root`` is no git checkout (or git is
    not there to ask)."""
    if not (root / ".git").exists():
        return None
    try:
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z"],
            capture_output=True,
            check=True,
            timeout=30,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return frozenset(Path(name) for name in listed.decode("utf-8", "replace").split("\0") if name)


def _plain_source(relative: Path) -> bool:
    """Whether a file outside git is one to publish: of a source type, not hidden (``.ci``
    aside), and with a type unless it is ``LICENSE``."""
    hidden = [part for part in relative.parts if part.startswith(".") and part != ".ci"]
    return not hidden and (relative.suffix != "" or relative.name == "LICENSE")


_INSTALLED_PARTS = ("serve.py", "rules", "vision", "training", "handreader")
"""What the archive holds of an installed package's folder (site-packages), which other
distributions share: the project's own packages; its licence comes from its ``dist-info``."""


def _installed_metadata(root: Path) -> list[Path]:
    """The licence files and ``METADATA`` (which holds the README) of the project's
    ``dist-info`` folders under ``root``, relative to it: none in a project tree."""
    found: list[Path] = []
    for info in root.glob("handreader-*.dist-info"):
        files = [info / "METADATA", *sorted(info.glob("licenses/**/*")), *info.glob("LICENSE*")]
        found += [file.relative_to(root) for file in files if file.is_file()]
    return found


def source_files(root: Path = ROOT) -> list[Path]:
    """The files the archive holds, relative to ``root``, sorted (the parts do not overlap):
    those git tracks in a checkout, else those :func:`_plain_source` lets through; where
    ``root`` holds the project's ``dist-info`` (an installed package), only its packages,
    ``serve.py``, licence and metadata, never another distribution's folders."""
    tracked = _tracked(root)
    metadata = _installed_metadata(root) if tracked is None else []
    found: list[Path] = list(metadata)
    for part in _INSTALLED_PARTS if metadata else _PARTS:
        path = root / part
        candidates = [path] if path.is_file() else path.rglob("*") if path.is_dir() else []
        for file in candidates:
            relative = file.relative_to(root)
            if (
                (relative in tracked if tracked is not None else _plain_source(relative))
                and file.is_file()
                and not file.is_symlink()
                and file.suffix in _TEXT_SUFFIXES
                and not _SKIPPED_FOLDERS.intersection(relative.parts)
                and file.stat().st_size <= _MAX_FILE_BYTES
            ):
                found.append(relative)
    return sorted(found)


@functools.cache
def source_archive(root: Path = ROOT) -> bytes:
    """A gzipped tar of :func:`source_files` under a ``handreader-source/`` folder. The same
    files give the same bytes (sorted, no times, no owners)."""
    buffer = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as packed,
        tarfile.open(fileobj=packed, mode="w", format=tarfile.PAX_FORMAT) as archive,
    ):
        for relative in source_files(root):
            data = (root / relative).read_bytes()
            info = tarfile.TarInfo(f"handreader-source/{relative.as_posix()}")
            info.size = len(data)
            info.mode = 0o755 if os.access(root / relative, os.X_OK) else 0o644
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def add_source_route(router: APIRouter) -> None:
    """``GET /v1/source``: the archive, or a redirect to ``HANDREADER_SOURCE_URL`` when set."""

    @router.get(
        "/v1/source",
        summary="the source code of this service (AGPL-3.0-or-later, section 13)",
        response_class=Response,
        responses={
            200: {"content": {"application/gzip": {}}, "description": "a .tar.gz"},
            307: {"description": "the operator's published source (HANDREADER_SOURCE_URL)"},
        },
    )
    def source() -> Response:
        elsewhere = os.environ.get(SOURCE_URL_VARIABLE, "").strip()
        if elsewhere:
            return RedirectResponse(elsewhere, status_code=307)
        return Response(
            source_archive(),
            media_type="application/gzip",
            headers={"Content-Disposition": 'attachment; filename="handreader-source.tar.gz"'},
        )
