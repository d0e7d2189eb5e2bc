"""``handreader eval``: which manifests it takes and where its pictures go. A manifest or split
that selects no photo, a photo listed twice, a file that is not UTF-8 and a ``--report`` that
is a file are each one line naming them and exit status 2, before the models load; each
manifest's confusion picture has a name of its own."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from handreader.cli import main

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def no_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading the models fails the test: the mistake must be named first."""

    def load(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the models were loaded")

    monkeypatch.setattr("vision.reader.Reader.load", load)


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("handreader eval: error: "), err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


def _manifest(path: Path, *rows: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.mark.parametrize(
    ("rows", "split", "message"),
    [
        ((), None, "empty.jsonl: no photo listed"),
        ((), "valid", "empty.jsonl: no photo listed"),
        (
            ({"image": "a.jpg", "cards": ["7H"], "split": "valid"},
             {"image": "b.jpg", "cards": ["7H"], "split": "train"}),
            "nonesuch",
            "empty.jsonl: no photo of split 'nonesuch' (its splits: train, valid)",
        ),
        (
            ({"image": "a.jpg", "cards": ["7H"]},),
            "valid",
            "empty.jsonl: no photo of split 'valid' (it names no split)",
        ),
    ],
)  # fmt: skip
def test_a_manifest_or_split_that_selects_no_photo_is_named(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    no_models: None,
    rows: tuple[dict[str, object], ...],
    split: str | None,
    message: str,
) -> None:
    """Measured, it would give figures of zero photos and exit 0, as if the reader were tried."""
    row = {"image": "a.jpg", "cards": ["7H"], "split": split}  # the first selects a photo
    good = _manifest(tmp_path / "good" / "manifest.jsonl", row)
    empty = _manifest(tmp_path / "empty.jsonl", *rows)
    argv = ["eval", str(good), str(empty)] + (["--split", split] if split else [])
    assert main(argv) == 2
    assert _one_line_error(capsys).endswith(message)


def test_a_photo_listed_twice_is_named_with_its_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_models: None
) -> None:
    manifest = _manifest(
        tmp_path / "manifest.jsonl",
        {"image": "a.jpg", "cards": ["7H"]},
        {"image": "a.jpg", "cards": ["KS"]},
    )
    assert main(["eval", str(manifest)]) == 2
    assert _one_line_error(capsys).endswith(
        f"{manifest}: lines 1 and 2 both name the photo 'a.jpg' (a photo is listed once)"
    )


def test_a_manifest_that_is_not_utf8_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_models: None
) -> None:
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_bytes('{"image": "a.jpg", "cards": ["7H"]}\n'.encode("utf-16"))
    assert main(["eval", str(manifest)]) == 2
    assert _one_line_error(capsys) == (
        f"handreader eval: error: {manifest}: not UTF-8 text (byte 0xff at position 0)"
    )


def test_a_report_that_is_a_file_is_named_before_any_manifest_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_models: None
) -> None:
    report = tmp_path / "report.png"
    report.write_bytes(b"kept")
    manifest = _manifest(tmp_path / "manifest.jsonl", {"image": "a.jpg", "cards": ["7H"]})
    assert main(["eval", str(manifest), "--report", str(report)]) == 2
    assert _one_line_error(capsys).endswith(
        f"--report {str(report)!r} is a file: name a folder for the pictures"
    )
    assert report.read_bytes() == b"kept"
    with pytest.raises(SystemExit) as refused:  # '' would be the current folder
        main(["eval", str(manifest), "--report", ""])
    assert refused.value.code == 2
    assert "argument --report: an empty path names no folder" in capsys.readouterr().err


def test_two_synthetic_sets_get_a_confusion_picture_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``handreader synth`` names every set's manifest ``SCENES/manifest/manifest.jsonl``:
    each picture is named after its scenes' folder, and the second no longer replaces the
    first. The example photo (labelled in examples/hand.json) stands for the scenes."""
    cards = json.loads((ROOT / "examples" / "hand.json").read_text())["cards"]
    manifests = []
    for scenes in ("scenes-a", "scenes-b"):
        folder = tmp_path / scenes / "manifest"
        manifests.append(
            _manifest(folder / "manifest.jsonl", {"image": "hand.jpg", "cards": cards})
        )
        shutil.copyfile(ROOT / "examples" / "hand.jpg", folder / "hand.jpg")
    report = tmp_path / "report"
    assert main(["eval", *map(str, manifests), str(manifests[0]), "--report", str(report)]) == 0
    assert sorted(path.name for path in report.iterdir()) == [
        "confusion_scenes-a-2.png",  # the same manifest given again
        "confusion_scenes-a.png",
        "confusion_scenes-b.png",
    ]
    capsys.readouterr()
