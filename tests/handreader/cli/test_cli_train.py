"""`handreader train` names a bad argument before it needs torch or starts any work."""

from __future__ import annotations

from pathlib import Path

import pytest

from handreader.cli import main


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--classifier-widths", "16,32,64"], "--classifier-widths must be four positive"),
        (["--classifier-widths", "16,32,x,96"], "got '16,32,x,96'"),
        (["--classifier-widths", "16,0,64,96"], "--classifier-widths must be four positive"),
        (["--scenes", "0"], "--scenes must be at least 1, got 0"),
        (["--finetune-epochs", "-1"], "--finetune-epochs must be 0 or more"),
        (["--closeup-scenes", "-5"], "--closeup-scenes must be 0 or more, got -5"),
        (["--card-scenes", "-1"], "--card-scenes must be 0 or more, got -1"),
        (["--glyph-crops", "-3"], "--glyph-crops must be 0 or more, got -3"),
        (["--card-epochs", "0"], "--card-epochs must be at least 1, got 0"),
        (["--verifier-scenes", "-2"], "--verifier-scenes must be 0 or more, got -2"),
        (["--verifier-epochs", "0"], "--verifier-epochs must be at least 1, got 0"),
        (["--only-verifier", "--verifier-scenes", "0"], "--only-verifier needs --verifier-scenes"),
        (["--photos", "no/such.jsonl"], "no such manifest file"),
        (["--shape-jitter", "1.5"], "--shape-jitter must be a share from 0 to 1, got 1.5"),
        (["--shape-jitter", "-0.1"], "--shape-jitter must be a share from 0 to 1, got -0.1"),
        (["--device", "tpu"], "device 'tpu': expected auto, cpu, cuda or cuda:N"),
        (["--device", "cuda:x"], "device 'cuda:x': expected"),
    ],
)
def test_bad_training_arguments_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], message: str
) -> None:
    work = tmp_path / "runs"
    status = main(["train", "--work", str(work), "--models", str(tmp_path / "m"), *arguments])
    assert status == 2
    assert message in capsys.readouterr().err
    assert not work.exists()  # nothing generated or trained
