"""scripts/check_layers.py: the tree's imports run one way, and the check finds a planted
violation (an upward import inside a function, a sideways one, a circle)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_layers", ROOT / "scripts/check_layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_tree_has_no_upward_import_and_no_circle() -> None:
    problems, count = _checker().check(ROOT)
    assert problems == []
    assert count > 90  # every module of the four packages and serve.py was read


def test_planted_violations_are_named(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "rules/__init__.py": "",
            "rules/cards.py": "def f():\n    from vision import reader\n",
            "vision/__init__.py": "",
            "vision/reader.py": "from rules import cards\n",
            "training/__init__.py": "",
            "handreader/__init__.py": "",
            "handreader/tables/__init__.py": "",
            "handreader/tables/a.py": "from handreader.tables import b\n",
            "handreader/tables/b.py": "from . import a\n",
            "handreader/store/__init__.py": "",
            "handreader/store/log.py": "",
            "handreader/drawing/__init__.py": "",
            "handreader/drawing/draw.py": "import handreader.store.log\n",
            "serve.py": "import handreader\n",
        },
    )
    problems, _ = _checker().check(tmp_path)
    assert "rules.cards imports vision.reader: a higher layer (vision)" in problems
    assert any(
        p.startswith("handreader.drawing.draw imports handreader.store.log") for p in problems
    )
    assert any(
        p.startswith("import circle: handreader.tables.a -> handreader.tables.b") for p in problems
    )
    assert "rules.cards" in " ".join(problems) and len(problems) == 4  # rules<->vision circle too
