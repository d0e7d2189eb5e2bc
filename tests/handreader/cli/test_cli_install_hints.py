"""A missing extra is named with the command that installs it from the package index
(``pip install 'handreader[EXTRA]'``), which works from a wheel as from a checkout."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from handreader.cli import main
from handreader.cli.ray_runner import RayRunError, _connect


def test_training_without_the_train_extra_names_the_package_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # ``import torch`` raises ImportError
    monkeypatch.setitem(sys.modules, "ultralytics", None)
    status = main(["train", "--work", str(tmp_path / "runs"), "--models", str(tmp_path / "m")])
    assert status == 2
    err = capsys.readouterr().err
    assert "pip install 'handreader[train]'" in err
    assert "-e" not in err.split("pip install", 1)[1]


def test_ray_without_the_scale_extra_names_the_package_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.setitem(sys.modules, "ray.data", None)
    with pytest.raises(RayRunError, match=r"pip install 'handreader\[scale\]'$"):
        _connect(None)
