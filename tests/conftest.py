"""Test tiers: ``python -m pytest -q`` runs the fast tier (pyproject's ``addopts`` leaves out the
``slow``, ``browser`` and ``train`` markers); ``-m slow``, ``-m browser`` or ``-m train`` runs a
tier, whose tests skip with a reason when what they need is missing (torch and ultralytics;
chromium and playwright). The folders mirror the packages; the shared helpers
(``web_fakes``, ``live_scene``, ``benchmark_modules``, ``store_databases``) sit beside this file,
whose folder pytest puts on ``sys.path``."""

from __future__ import annotations

import importlib.util
import shutil

import pytest


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    train_ready = _has("torch") and _has("ultralytics")
    browser_ready = shutil.which("chromium") is not None and _has("playwright")
    for item in items:
        if "train" in item.keywords and not train_ready:
            item.add_marker(
                pytest.mark.skip(reason="needs the train extra: pip install -e '.[train]'")
            )
        if "browser" in item.keywords and not browser_ready:
            item.add_marker(pytest.mark.skip(reason="needs Debian's chromium and playwright"))
