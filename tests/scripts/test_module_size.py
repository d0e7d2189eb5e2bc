"""No tracked Python module passes 600 lines (STYLE.md: small modules, one concept each; split
before a file passes about 600 lines). Lines are counted as ``wc -l`` counts them (newlines)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 600


def tracked_python_files(root: Path) -> list[Path]:
    """Every ``*.py`` file git tracks under ``root`` (skips the test outside a git checkout)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed: the tracked files cannot be listed")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", "*.py"], cwd=root, capture_output=True, check=False
    )
    if listed.returncode != 0:
        pytest.skip(f"not a git checkout: {listed.stderr.decode(errors='replace').strip()}")
    return [root / name for name in listed.stdout.decode().split("\0") if name]


def over_limit(paths: Iterable[Path], limit: int = LIMIT) -> list[str]:
    """``"PATH: N lines"`` for every file of more than ``limit`` lines (missing files ignored:
    a tracked file deleted in the working tree)."""
    found = []
    for path in paths:
        if path.is_file():
            lines = path.read_bytes().count(b"\n")
            if lines > limit:
                found.append(f"{path}: {lines} lines")
    return found


def test_no_tracked_module_is_over_600_lines() -> None:
    files = tracked_python_files(ROOT)
    assert len(files) > 200  # the packages, tests, benchmarks and scripts were listed
    assert over_limit(files) == [], "split these modules (one concept each)"


def test_the_count_is_wc_l(tmp_path: Path) -> None:
    """600 lines pass, 601 fail; a last line without a newline is not counted (as ``wc -l``)."""
    at_limit, over, unterminated = (tmp_path / name for name in ("a.py", "b.py", "c.py"))
    at_limit.write_text("x = 1\n" * 600)
    over.write_text("x = 1\n" * 601)
    unterminated.write_text("x = 1\n" * 600 + "y = 2")
    assert over_limit([at_limit, over, unterminated, tmp_path / "gone.py"]) == [
        f"{over}: 601 lines"
    ]
