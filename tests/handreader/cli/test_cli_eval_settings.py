"""``handreader eval --set NAME=VALUE``: a reader setting changed for one evaluation (a switch
on or off, a number), and a one-line error (exit 2) for a name or value it cannot take."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from handreader.cli import main
from handreader.cli.eval import changed_settings
from vision.settings import ReaderSettings

ROOT = Path(__file__).resolve().parents[3]


def test_switches_and_numbers_are_set() -> None:
    settings = changed_settings(
        ReaderSettings(), ["card_evidence=off", "verify_below=0", "turns=2", "fine=ON"]
    )
    assert settings.card_evidence is False and settings.verify_below == 0.0
    assert settings.turns == 2 and isinstance(settings.turns, int) and settings.fine is True
    assert changed_settings(ReaderSettings(), []) == ReaderSettings()


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        ("card_evidence", "expected NAME=VALUE"),
        ("colour=3", "expected NAME=VALUE with NAME one of"),
        ("card_evidence=maybe", "card_evidence is a switch: on or off"),
        ("verify_below=low", "verify_below takes a number"),
        ("turns=2.5", "turns takes a number"),
        ("retry_contexts=1", "retry_contexts cannot be set here"),
        # outside the range of vision.settings.SETTING_RANGES
        ("turns=-3", "turns takes a number from 1 to 4"),
        ("turns=0", "turns takes a number from 1 to 4"),
        ("max_detections=-1", "max_detections takes a number at least 1"),
        ("detection_threshold=1.5", "detection_threshold takes a number from 0 to 1"),
        ("verify_below=-0.1", "verify_below takes a number from 0 to 1"),
        ("exposure_target=300", "exposure_target takes a number from 0 to 255"),
        ("fine_imgsz=0", "fine_imgsz takes a number at least 32"),
        ("merge_distance=-1", "merge_distance takes a number at least 0"),
        # settings of their own options
        ("in_play=niuniu", "in_play is set with --game and --decks"),
        ("indices=french", "indices is set with --indices"),
    ],
)
def test_a_bad_setting_is_a_one_line_error(
    assignment: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps({"image": "x.jpg", "cards": []}) + "\n")
    assert main(["eval", str(manifest), "--set", assignment]) == 2
    error = capsys.readouterr().err.strip()
    assert message in error and "\n" not in error


def test_every_number_has_a_range_and_only_what_can_be_set_is_offered() -> None:
    """The list of names offers switches and numbers alone (in_play and indices have options
    of their own; a tuple cannot be given as one value); each bound of a range is taken."""
    import dataclasses

    from vision.settings import SETTING_RANGES

    numbers = {
        field.name for field in dataclasses.fields(ReaderSettings) if field.type in ("int", "float")
    }
    assert numbers == set(SETTING_RANGES)
    with pytest.raises(ValueError) as refused:
        changed_settings(ReaderSettings(), ["colour=3"])
    offered = str(refused.value).split("NAME one of ")[1].split(", ")
    assert "card_evidence" in offered and "turns" in offered
    for unsettable in ("in_play", "indices", "retry_contexts", "other_corner_reach"):
        assert unsettable not in offered
    for name, (low, high) in SETTING_RANGES.items():
        integer = isinstance(getattr(ReaderSettings(), name), int)
        for bound in (low, high):
            if bound != float("inf"):
                text = str(int(bound)) if integer else str(bound)
                changed = changed_settings(ReaderSettings(), [f"{name}={text}"])
                assert getattr(changed, name) == bound


def test_eval_reads_with_the_setting_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The setting reaches the reader: the example photo read with the detector keeping only
    boxes it is all but sure of (``detection_threshold=0.999``) gives fewer cards than as
    shipped, and with the card-face check off as many as with it (it drops nothing on this
    photo of five cards)."""
    shutil.copyfile(ROOT / "examples" / "hand.jpg", tmp_path / "hand.jpg")
    cards = json.loads((ROOT / "examples" / "hand.json").read_text())["cards"]
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps({"image": "hand.jpg", "cards": cards}) + "\n")

    def figures(*assignments: str) -> dict[str, float]:
        sets = [item for assignment in assignments for item in ("--set", assignment)]
        assert main(["eval", str(manifest), "--json", *sets]) == 0
        result: dict[str, float] = json.loads(capsys.readouterr().out)
        return result

    shipped = figures()
    assert shipped["predicted"] >= 4
    assert figures("detection_threshold=0.999")["predicted"] < shipped["predicted"]
    assert figures("card_evidence=off")["predicted"] == shipped["predicted"]


def test_the_report_is_written_or_its_failure_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copyfile(ROOT / "examples" / "hand.jpg", tmp_path / "hand.jpg")
    cards = json.loads((ROOT / "examples" / "hand.json").read_text())["cards"]
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps({"image": "hand.jpg", "cards": cards}) + "\n")
    report = tmp_path / "report"
    assert main(["eval", str(manifest), "--report", str(report)]) == 0
    assert [path.name for path in report.iterdir()] == [f"confusion_{tmp_path.name}.png"]
    other = tmp_path / "other.jsonl"  # given from its own folder: still named by the folder
    other.write_text(manifest.read_text())
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        assert main(["eval", "other.jsonl", "--report", "again"]) == 0
    assert [path.name for path in (tmp_path / "again").iterdir()] == [
        f"confusion_{tmp_path.name}-other.png"
    ]
    blocked = tmp_path / "blocked"
    (blocked / f"confusion_{tmp_path.name}.png").mkdir(parents=True)  # a folder in its place
    capsys.readouterr()
    assert main(["eval", str(manifest), "--report", str(blocked)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.endswith(": Is a directory") and str(blocked) in error  # the path and why
    assert "\n" not in error
