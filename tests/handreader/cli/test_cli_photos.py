"""``handreader read`` and ``handreader score`` on photos, with a fake recognizer.

A large JPEG is decoded at a reduced scale (``vision.imageio.load_reduced``), but the boxes the
commands print and the annotated copies they write must be in the photo's own pixels. The fake
reader (tests/web_fakes.py) places its boxes at fractions of whatever image it is given, so the
expected boxes are those it gives for the photo at full size; it also records the size it saw.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray
from web_fakes import NIU_TABLE, FakeReader

from handreader.cli import main
from vision.detections import CardReading, Reading
from vision.imageio import load_image


class CliFakeReader(FakeReader):
    """The web tests' fake, called as the CLI calls the reader (with a deck profile)."""

    def read(self, image_bgr: NDArray[np.uint8], deck: object = None) -> Reading:
        return super().read(image_bgr)


GREY = 100


def _photo(folder: Path, extension: str, width: int = 4000, height: int = 3000) -> Path:
    """A plain grey photo (12 MP by default: the size of the product's speed target)."""
    path = folder / f"table{extension}"
    ok, buffer = cv2.imencode(extension, np.full((height, width, 3), GREY, np.uint8))
    assert ok
    path.write_bytes(buffer.tobytes())
    return path


def _expected_boxes(
    hands: dict[str, tuple[float, float]], width: int, height: int
) -> set[tuple[float, ...]]:
    """The boxes the fake gives for an image of the photo's own size, rounded as printed."""
    reading = FakeReader(hands).read(np.zeros((height, width, 3), np.uint8))
    return {tuple(round(v, 1) for v in card.box_xyxy) for card in reading.cards}


def _use(monkeypatch: pytest.MonkeyPatch, reader: CliFakeReader) -> None:
    monkeypatch.setattr("vision.reader.Reader.load", lambda *args, **kwargs: reader)


@pytest.mark.parametrize(
    ("extension", "seen"),
    [(".jpg", (2000, 1500)), (".png", (4000, 3000))],  # JPEG reduced by 2; PNG decoded whole
)
def test_read_prints_boxes_in_photo_pixels(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    extension: str,
    seen: tuple[int, int],
) -> None:
    hands = {"10H QS": (0.25, 0.5)}
    reader = CliFakeReader(hands)
    _use(monkeypatch, reader)
    photo = _photo(tmp_path, extension)
    assert main(["read", str(photo), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert reader.sizes == [seen]
    assert record["size"] == [4000, 3000]
    assert {tuple(card["box"]) for card in record["cards"]} == _expected_boxes(hands, 4000, 3000)
    assert record["problem"] is None


def test_read_json_of_a_photo_without_cards_names_the_problem_as_the_api_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _use(monkeypatch, CliFakeReader({}))
    assert main(["read", str(_photo(tmp_path, ".jpg")), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["cards"] == [] and record["problem"] == "no cards found"


def test_read_annotates_at_the_photos_size_with_the_boxes_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hands = {"10H": (0.25, 0.5)}
    _use(monkeypatch, CliFakeReader(hands))
    photo = _photo(tmp_path, ".jpg")
    out = tmp_path / "drawn"
    assert main(["read", str(photo), "--json", "--annotate", str(out)]) == 0
    box = json.loads(capsys.readouterr().out)["cards"][0]["box"]
    assert box == [1000.0, 1500.0, 1090.0, 1650.0]  # 0.25 x 4000, 0.5 x 3000; 0.05 x 3000 high
    drawn = load_image(out / "table.jpg").astype(int)
    assert drawn.shape == (3000, 4000, 3)  # the photo's size, not the reduced decode's
    change = np.abs(drawn - GREY).sum(axis=2)
    assert change[1500, 1010:1080].mean() > 60  # the outline along the box's top edge
    assert change[1600, 1010:1080].mean() < 10  # its inside is left as it was
    assert change[750, 500:545].mean() < 10  # nothing where the reduced box would be


def test_score_prints_boxes_in_photo_pixels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reader = CliFakeReader(NIU_TABLE)
    _use(monkeypatch, reader)
    photo = _photo(tmp_path, ".jpg")
    assert main(["score", str(photo), "--json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert reader.sizes == [(2000, 1500)]
    assert len(records) == 3  # the three hands of NIU_TABLE
    boxes = {tuple(box) for record in records for box in record["boxes"]}
    assert boxes == _expected_boxes(NIU_TABLE, 4000, 3000)


class _SixCards:
    """A reader that finds a hand of five and, inside it, one uncertain reading."""

    def read(self, image_bgr: NDArray[np.uint8], deck: object = None) -> Reading:
        cards = [
            CardReading(code, 0.97, (100 + 30 * i, 100, 124 + 30 * i, 140))
            for i, code in enumerate(["3H", "7S", "KD", "8C", "6D"])
        ]
        cards.append(CardReading("JH", 0.36, (150, 110, 174, 150), uncertain=True))
        return Reading((image_bgr.shape[1], image_bgr.shape[0]), tuple(cards))


def test_score_names_an_uncertain_reading_left_out_of_the_hand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("vision.reader.Reader.load", lambda *args, **kwargs: _SixCards())
    photo = _photo(tmp_path, ".jpg", 640, 480)
    assert main(["score", str(photo)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("hand 0: ") and "Niu 4" in lines[0] and "JH" not in lines[0]
    assert lines[1] == "left over (in no hand): JH? (uncertain) 0.36"


class _UnsureHand:
    """A reader that finds one hand of five whose KD is uncertain."""

    def read(self, image_bgr: NDArray[np.uint8], deck: object = None) -> Reading:
        cards = tuple(
            CardReading(code, 0.3 if code == "KD" else 0.97,
                        (100 + 30 * i, 100, 124 + 30 * i, 140), uncertain=code == "KD")
            for i, code in enumerate(["3H", "7S", "KD", "8C", "6D"])
        )  # fmt: skip
        return Reading((image_bgr.shape[1], image_bgr.shape[0]), cards)


def test_score_marks_an_uncertain_card_and_gives_its_hand_no_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("vision.reader.Reader.load", lambda *args, **kwargs: _UnsureHand())
    photo = _photo(tmp_path, ".jpg", 640, 480)
    assert main(["score", str(photo)]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert line.startswith("hand 0: 3H 7S KD? 8C 6D [uncertain: unverified: uncertain reading")
    assert "Niu 4" not in line  # the provisional score is no result
    assert main(["score", str(photo), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["status"] == "uncertain" and record["score"] is None
    assert record["provisional"]["label"] == "Niu 4"
    assert [card["uncertain"] for card in record["readings"]] == [False, False, True, False, False]


def test_read_takes_a_folder_as_its_image_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder stands for the image files directly inside it, sorted; other files and
    sub-folders are left alone; an empty folder is an error line, the rest still read."""
    reader = CliFakeReader({"10H": (0.25, 0.5)})
    _use(monkeypatch, reader)
    table = _photo(tmp_path, ".png", 640, 480)
    folder = tmp_path / "photos"
    (folder / "deeper").mkdir(parents=True)
    for name in ("b.JPG", "a.png", "c.webp"):
        (folder / name).write_bytes(table.read_bytes())  # the bytes tell the type, not the name
    (folder / "notes.txt").write_text("not a photo")
    (folder / "deeper" / "d.png").write_bytes(table.read_bytes())
    empty = tmp_path / "empty"
    empty.mkdir()
    status = main(["read", str(folder), str(empty), str(table), "--json"])
    assert status == 2  # the empty folder
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["image"] for line in lines] == [
        str(folder / "a.png"),
        str(folder / "b.JPG"),
        str(folder / "c.webp"),
        str(empty),
        str(table),
    ]
    assert [card["card"] for card in lines[0]["cards"]] == ["10H"]
    assert lines[3]["error"]["code"] == "no_images"
    assert "no image file" in lines[3]["error"]["message"]
    assert len(reader.sizes) == 4  # every photo read, the empty folder not


def test_annotated_copies_of_photos_sharing_a_name_are_all_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _use(monkeypatch, CliFakeReader({"10H": (0.25, 0.5)}))
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    photos = [
        _photo(first, ".png", 640, 480),
        _photo(second, ".png", 640, 480),
        _photo(second, ".jpg", 640, 480),
    ]
    out = tmp_path / "drawn"
    assert main(["read", *map(str, photos), "--annotate", str(out)]) == 0
    capsys.readouterr()
    assert sorted(path.name for path in out.iterdir()) == [
        "table-2.jpg",
        "table-3.jpg",
        "table.jpg",
    ]


def test_annotated_copies_never_replace_the_photos_being_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _use(monkeypatch, CliFakeReader({"10H": (0.25, 0.5)}))
    photo = _photo(tmp_path, ".jpg", 640, 480)
    kept = photo.read_bytes()
    for given in (str(photo), str(tmp_path)):  # the photo, or its folder
        assert main(["read", given, "--annotate", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert "holds the photos being read: the annotated copies would replace them" in err
    assert photo.read_bytes() == kept and sorted(tmp_path.iterdir()) == [photo]


def test_an_annotated_copy_that_cannot_be_written_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _use(monkeypatch, CliFakeReader({"10H": (0.25, 0.5)}))
    photo = _photo(tmp_path, ".jpg", 640, 480)
    out = tmp_path / "drawn"
    (out / "table.jpg").mkdir(parents=True)  # a folder where the copy goes
    assert main(["read", str(photo), "--annotate", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{out / 'table.jpg'}: Is a directory" in err  # the path and the reason


def test_score_takes_several_photos_and_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The models are loaded once; each photo's hands follow a ``== PHOTO`` line; a bad file
    is named on stderr and the others are still scored (exit 2)."""
    loads: list[object] = []
    reader = CliFakeReader(NIU_TABLE)

    def load(*args: object, **kwargs: object) -> CliFakeReader:
        loads.append(args)
        return reader

    monkeypatch.setattr("vision.reader.Reader.load", load)
    folder = tmp_path / "round"
    folder.mkdir()
    first = _photo(folder, ".png", 640, 480)
    second = folder / "second.jpg"
    second.write_bytes(_photo(tmp_path, ".jpg", 640, 480).read_bytes())
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"\xff\xd8\xff" + b"\x00" * 10)
    status = main(["score", str(folder), str(broken)])
    out, err = capsys.readouterr()
    assert status == 2
    assert len(loads) == 1 and len(reader.sizes) == 2
    headers = [line for line in out.splitlines() if line.startswith("== ")]
    assert headers == [f"== {folder / 'second.jpg'}", f"== {first}", f"== {broken}"]
    assert out.count("banker 0:") == 2  # the fake table read from each photo
    assert f"'{broken}'" in err and "JPEG" in err

    assert main(["score", str(first), str(second), "--json"]) == 0
    images = {json.loads(line)["image"] for line in capsys.readouterr().out.splitlines()}
    assert images == {str(first), str(second)}


def test_score_refuses_cards_beside_photos(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _use(monkeypatch, CliFakeReader(NIU_TABLE))
    photo = _photo(tmp_path, ".png", 640, 480)
    assert main(["score", str(photo), "3H"]) == 2
    assert "give either cards or photos, not both: '3H'" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["read", "score", "baccarat"])
def test_json_lines_stay_utf8_when_a_photos_name_is_not(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
) -> None:
    """docs/cli.md: a name whose bytes are no UTF-8 (here ``\\xe9\\xff``, Latin-1 "é" and a
    byte no encoding of text uses) is written in ``"image"`` with those bytes as ``\\xNN``;
    the lines of a photo read and of one that cannot be read are valid UTF-8 JSON."""
    import os

    _use(monkeypatch, CliFakeReader(NIU_TABLE))
    name = os.fsdecode(b"h\xe9\xff")
    photo = _photo(tmp_path, ".png", 640, 480).rename(tmp_path / f"{name}.png")
    missing = tmp_path / f"{name}-missing.png"
    main([command, "--json", str(photo), str(missing)])
    out = capsys.readouterr().out
    lines = [json.loads(line) for line in out.encode("utf-8").decode("utf-8").splitlines()]
    assert {line["image"] for line in lines} == {
        f"{tmp_path}/h\\xe9\\xff.png",
        f"{tmp_path}/h\\xe9\\xff-missing.png",
    }
    assert [line["error"]["code"] for line in lines if "error" in line] == ["unreadable_file"]


@pytest.mark.parametrize("content", [b"not a photo", None])  # unsupported; missing
def test_a_name_that_is_not_utf8_is_shown_alike_in_image_and_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | None
) -> None:
    """One rule for a name's bytes that are no UTF-8 (here 0xE9, Latin-1 "é"): ``\\xe9`` in
    ``"image"``, in the ``"message"`` that names the photo and on the line without ``--json``,
    never the lone surrogate Python holds it as (``\\udce9``)."""
    import os

    photo = tmp_path / os.fsdecode(b"h\xe9.png")
    if content is not None:
        photo.write_bytes(content)
    assert os.fsencode(photo).endswith(b"/h\xe9.png")  # a real name of that byte
    assert main(["read", "--json", str(photo)]) == 2
    out = capsys.readouterr().out
    line = json.loads(out)
    shown = f"{tmp_path}/h\\xe9.png"
    assert line["image"] == shown
    assert line["error"]["message"].startswith(f"'{shown}': "), line
    assert "udc" not in out
    assert main(["read", str(photo)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"handreader read: error: '{shown}': ") and "udc" not in err, err


def test_an_annotated_copy_is_written_whatever_the_bytes_of_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """OpenCV's own image writer stops the process on a name that is not UTF-8 text; the copy
    is written under the photo's name, bytes and all (vision.imageio.write_image)."""
    import os

    _use(monkeypatch, CliFakeReader({"10H": (0.25, 0.5)}))
    name = os.fsdecode(b"h\xe9\xff")
    photo = _photo(tmp_path, ".png", 640, 480).rename(tmp_path / f"{name}.png")
    out = tmp_path / os.fsdecode(b"drawn\xe9")
    assert main(["read", "--json", str(photo), "--annotate", str(out)]) == 0
    capsys.readouterr()
    written = out / f"{name}.jpg"
    assert [path.name for path in out.iterdir()] == [written.name]
    assert load_image(written).shape == (480, 640, 3)


def test_a_missing_path_is_a_file_that_cannot_be_read_not_an_unknown_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _use(monkeypatch, CliFakeReader(NIU_TABLE))
    for missing in (str(tmp_path / "no_such_photo"), "3H/7S"):  # no card code holds a "/"
        assert main(["score", missing]) == 2
        err = capsys.readouterr().err
        assert f"'{missing}': cannot read: No such file or directory" in err
        assert "unknown card" not in err


def test_score_json_carries_the_left_over_cards_and_the_flags_the_text_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import dataclasses

    from vision.detections import ReadingFlag

    class Grey(CliFakeReader):  # a photo without colour, as the reader flags one
        def read(self, image_bgr: NDArray[np.uint8], deck: object = None) -> Reading:
            reading = super().read(image_bgr)
            flags = ReadingFlag.COLOURLESS | ReadingFlag.LOW_CONFIDENCE
            return dataclasses.replace(reading, flags=flags)

    _use(monkeypatch, Grey({"3H 7S KD 8C 6D": (0.1, 0.1), "QH": (0.9, 0.9)}, "QH"))
    photo = _photo(tmp_path, ".png", 640, 480)
    assert main(["score", str(photo)]) == 0
    out = capsys.readouterr().out
    assert "left over (in no hand): QH? (uncertain)" in out and "note: the photo has no" in out
    assert main(["score", "--json", str(photo)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["label"] for line in lines] == ["Niu 4"]
    assert lines[0]["flags"] == ["low_confidence", "colourless"]
    assert [(card["card"], card["uncertain"]) for card in lines[0]["left_over"]] == [("QH", True)]
    _use(monkeypatch, CliFakeReader({}))
    assert main(["score", "--json", str(photo)]) == 0
    blank = json.loads(capsys.readouterr().out)
    assert blank["problem"] == "no cards found" and blank["left_over"] == []


def test_score_help_names_photos_too(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "[CARD|PHOTO ...]" in out and "or read photos (and folders of them)" in out


def test_a_card_code_is_a_card_beside_a_folder_of_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/cli.md: a token that reads as card codes and holds no path separator is cards, even
    where a folder of that name exists; ``./KD`` names the folder. The hand is seed 000's
    (bull 3 + 7 + K, rest 8 + 6: Niu 4, as tests/handreader/cli/test_cli_score.py has it)."""
    _use(monkeypatch, CliFakeReader(NIU_TABLE))
    (tmp_path / "KD").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["score", "3H", "7S", "KD", "8C", "6D"]) == 0
    assert capsys.readouterr().out.startswith("3H 7S KD 8C 6D: Niu 4")
    assert main(["score", "3H 7S KD 8C 6D"]) == 0  # one quoted argument
    assert capsys.readouterr().out.startswith("3H 7S KD 8C 6D: Niu 4")
    assert main(["score", "./KD"]) == 2  # the folder, which holds no photo
    assert "'./KD': no image file" in capsys.readouterr().err


class FailingOnWideReader(CliFakeReader):
    """Fails as the recognizer failed on a thin strip (an OpenCV assertion), reads the rest."""

    def read(self, image_bgr: NDArray[np.uint8], deck: object = None) -> Reading:
        if image_bgr.shape[1] > 10 * image_bgr.shape[0]:
            raise cv2.error("(-215:Assertion failed) inv_scale_x > 0 in function 'resize'")
        return super().read(image_bgr)


@pytest.mark.parametrize("as_json", [False, True])
def test_a_folder_run_goes_on_past_a_photo_the_reader_fails_on(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    as_json: bool,
) -> None:
    _use(monkeypatch, FailingOnWideReader({"10H QS": (0.25, 0.5)}))
    for name, size in (("a.png", (64, 48)), ("b.png", (3200, 32)), ("c.png", (64, 48))):
        _ok, buffer = cv2.imencode(".png", np.full((size[1], size[0], 3), GREY, np.uint8))
        (tmp_path / name).write_bytes(buffer.tobytes())
    assert main(["read", str(tmp_path), *(["--json"] if as_json else [])]) == 2
    captured = capsys.readouterr()
    if as_json:
        records = [json.loads(line) for line in captured.out.splitlines()]
        assert [Path(record["image"]).name for record in records] == ["a.png", "b.png", "c.png"]
        assert records[1]["error"]["code"] == "recognizer_failed"
        assert "inv_scale_x" in records[1]["error"]["message"]
    else:
        assert captured.out.count("10H") == 2  # a.png and c.png were read
        lines = captured.err.splitlines()
        assert len(lines) == 1 and "b.png" in lines[0] and "Traceback" not in captured.err
        assert lines[0].startswith("handreader read: error: ")


def test_a_folder_run_picks_jfif_extensionless_and_refused_photo_types(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # .jfif is JPEG; a photo saved without an extension is told by its bytes; an iPhone's
    # HEIC and an AVIF are named with what to do, not passed over unseen
    _use(monkeypatch, CliFakeReader({"10H QS": (0.25, 0.5)}))
    _ok, jpeg = cv2.imencode(".jpg", np.full((48, 64, 3), GREY, np.uint8))
    (tmp_path / "IMG_0005.jfif").write_bytes(jpeg.tobytes())
    (tmp_path / "noext").write_bytes(jpeg.tobytes())
    (tmp_path / "notes").write_bytes(b"not a photo")
    (tmp_path / "notes.txt").write_bytes(jpeg.tobytes())  # another extension: not a photo
    heic = b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + bytes(64)
    (tmp_path / "IMG_0001.HEIC").write_bytes(heic)
    avif = b"\x00\x00\x00\x20ftypavif\x00\x00\x00\x00avifmif1miafMA1B" + bytes(64)
    (tmp_path / "IMG_0002.avif").write_bytes(avif)
    assert main(["read", str(tmp_path), "--json"]) == 2
    records = {Path(json.loads(line)["image"]).name: json.loads(line) for line in
               capsys.readouterr().out.splitlines()}  # fmt: skip
    assert set(records) == {"IMG_0005.jfif", "noext", "IMG_0001.HEIC", "IMG_0002.avif"}
    assert "cards" in records["IMG_0005.jfif"] and "cards" in records["noext"]
    assert "HEIC" in records["IMG_0001.HEIC"]["error"]["message"]
    assert "AVIF" in records["IMG_0002.avif"]["error"]["message"]
    assert "export it as JPEG" in records["IMG_0002.avif"]["error"]["message"]
