"""Scoring readings against labelled photos (vision/evaluate.py, ``handreader eval``).

Expectations come from the manifest format of :mod:`vision.evaluate`: ``"K?"`` is a rank
with no suit (scored on rank), ``"JOKER"`` a joker of either colour; and from what
``handreader eval`` reports: card precision, recall and F1, the share of photos read exactly,
the confusions, and top-1 on photos of one card.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from handreader.cli import main
from vision.evaluate import EvalTotals, load_manifest, match_cards, scenes_manifest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("truth", "predicted", "matched", "confusions"),
    [
        (["7H", "KS"], ["KS", "7H"], 2, []),
        (["K?"], ["KD"], 1, []),  # rank-only label: any king
        (["K?"], ["QD"], 0, [("K?", "QD")]),
        (["JOKER"], ["JR"], 1, []),
        (["JOKER"], ["JB"], 1, []),
        (["JOKER"], ["JH"], 0, [("JOKER", "JH")]),
        (["7H"], [], 0, [("7H", "-")]),  # missed
        ([], ["7H"], 0, [("-", "7H")]),  # extra
        (["7H", "7H"], ["7H"], 1, [("7H", "-")]),  # two decks: each card counts once
        (["7H", "K?"], ["KH", "7H"], 2, []),  # exact codes match before ranks
    ],
)
def test_match_cards(
    truth: list[str], predicted: list[str], matched: int, confusions: list[tuple[str, str]]
) -> None:
    assert match_cards(truth, predicted) == (matched, confusions)


def test_totals_precision_recall_f1_exact_and_top1() -> None:
    totals = EvalTotals()
    totals.add(["7H"], ["7H"], surest="7H")  # right
    totals.add(["8H"], [], uncertain=1, surest="8H")  # uncertain, but its surest card is right
    totals.add(["9H"], ["9S"], surest="9S")  # wrong
    totals.add(["2C", "3C"], ["2C"], surest="2C")  # two cards: not a top-1 photo
    assert (totals.photos, totals.truth_cards, totals.predicted_cards, totals.matched) == (
        4,
        5,
        3,
        2,
    )
    assert totals.precision == pytest.approx(2 / 3)
    assert totals.recall == pytest.approx(2 / 5)
    assert totals.f1 == pytest.approx(2 * (2 / 3) * (2 / 5) / (2 / 3 + 2 / 5))
    assert totals.exact_photos == 1
    assert totals.top1 == pytest.approx(2 / 3)
    summary = totals.summary()
    assert summary["one_card_photos"] == 3 and summary["uncertain"] == 1
    assert ["9H", "9S", 1] in summary["confusions"]  # type: ignore[operator]


def test_no_one_card_photos_means_no_top1() -> None:
    totals = EvalTotals()
    totals.add(["2C", "3C"], ["2C", "3C"])
    assert totals.top1 is None and totals.summary()["top1"] is None


def test_load_manifest_keeps_a_split_and_names_a_bad_line(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(
        '{"image": "a.jpg", "cards": ["7H"], "split": "train"}\n'
        '{"image": "b.jpg", "cards": ["K?"], "split": "valid"}\n'
    )
    entries = load_manifest(manifest, "valid")
    assert [(e.image.name, e.cards) for e in entries] == [("b.jpg", ("K?",))]
    manifest.write_text('{"image": "a.jpg", "cards": ["7H"]}\n{"image": "b.jpg"}\n')
    with pytest.raises(ValueError, match="line 2 is not a manifest entry"):
        load_manifest(manifest)


def test_scenes_manifest_lists_each_card_with_a_labelled_index_once(tmp_path: Path) -> None:
    (tmp_path / "meta").mkdir()
    indices = [
        {"card": "7H", "card_index": 0},
        {"card": "7H", "card_index": 0},  # its second corner
        {"card": "7H", "card_index": 3},  # the same code from a second deck
        {"card": "KS", "card_index": 1},
    ]
    (tmp_path / "meta" / "000000.json").write_text(json.dumps({"indices": indices}))
    out = scenes_manifest(tmp_path, tmp_path / "manifest" / "manifest.jsonl")
    entries = load_manifest(out)
    assert entries[0].cards == ("7H", "7H", "KS")
    assert entries[0].image == tmp_path / "manifest" / ".." / "images" / "000000.jpg"


def test_scenes_manifest_lists_cards_showing_only_in_part_as_optional(tmp_path: Path) -> None:
    """A card with no labelled index but a partial one is optional; a labelled card's partial
    corner does not make it optional too."""
    (tmp_path / "meta").mkdir()
    meta = {
        "indices": [{"card": "7H", "card_index": 0}],
        "partial": [
            {"card": "7H", "card_index": 0},  # the labelled card's covered corner
            {"card": "QS", "card_index": 2},
            {"card": "QS", "card_index": 2},
        ],
    }
    (tmp_path / "meta" / "000000.json").write_text(json.dumps(meta))
    (tmp_path / "meta" / "000001.json").write_text(json.dumps({"indices": []}))
    entries = load_manifest(scenes_manifest(tmp_path, tmp_path / "m" / "manifest.jsonl"))
    assert (entries[0].cards, entries[0].optional) == (("7H",), ("QS",))
    assert (entries[1].cards, entries[1].optional) == ((), ())


def test_the_legible_manifest_requires_only_cards_a_person_reads(tmp_path: Path) -> None:
    """A card labelled only where it is not legible (too small, too hidden) is optional in the
    legible manifest and required in the other; one legible index of a card is enough; a
    scene written before the ``legible`` key existed counts every labelled index as legible."""
    (tmp_path / "meta").mkdir()
    meta = {
        "indices": [
            {"card": "7H", "card_index": 0, "legible": True},
            {"card": "9C", "card_index": 1, "legible": False},
            {"card": "KD", "card_index": 2, "legible": False},
            {"card": "KD", "card_index": 2, "legible": True},  # the other corner, readable
        ],
        "partial": [{"card": "QS", "card_index": 3}],
    }
    (tmp_path / "meta" / "000000.json").write_text(json.dumps(meta))
    older = {"indices": [{"card": "2S", "card_index": 0}], "partial": []}
    (tmp_path / "meta" / "000001.json").write_text(json.dumps(older))
    every = load_manifest(scenes_manifest(tmp_path, tmp_path / "m" / "manifest.jsonl"))
    legible = load_manifest(
        scenes_manifest(tmp_path, tmp_path / "m" / "legible.jsonl", legible_only=True)
    )
    assert (every[0].cards, every[0].optional) == (("7H", "9C", "KD"), ("QS",))
    assert (legible[0].cards, legible[0].optional) == (("7H", "KD"), ("9C", "QS"))
    assert legible[1].cards == every[1].cards == ("2S",)


def test_scenes_manifest_can_list_only_the_first_scenes(tmp_path: Path) -> None:
    """``limit`` keeps the first scenes in the order of their names, whatever order the
    files were written in."""
    (tmp_path / "meta").mkdir()
    for name, card in (("000002", "9C"), ("000000", "7H"), ("000001", "8D")):
        meta = {"indices": [{"card": card, "card_index": 0}]}
        (tmp_path / "meta" / f"{name}.json").write_text(json.dumps(meta))
    out = tmp_path / "manifest" / "sample.jsonl"
    first = load_manifest(scenes_manifest(tmp_path, out, limit=2))
    assert [(e.image.name, e.cards) for e in first] == [
        ("000000.jpg", ("7H",)),
        ("000001.jpg", ("8D",)),
    ]
    assert len(load_manifest(scenes_manifest(tmp_path, out))) == 3


def test_optional_cards_are_neither_required_nor_extra() -> None:
    totals = EvalTotals()
    totals.add(["7H"], ["7H", "QS"], optional=["QS"])  # QS read: dropped, not an extra card
    totals.add(["8H"], ["8H"], optional=["QS"])  # QS not read: not missed either
    totals.add(["9H"], ["9H", "QS", "QS"], optional=["QS"])  # once only: the second is extra
    totals.add(["QS"], ["QS"], optional=["QS"])  # a labelled card is matched first
    assert (totals.truth_cards, totals.predicted_cards, totals.matched) == (4, 5, 4)
    assert totals.optional_read == 2
    assert totals.exact_photos == 3
    assert totals.summary()["optional_read"] == 2
    assert totals.confusions == Counter({("-", "QS"): 1})


def test_manifest_optional_must_be_a_list_of_codes(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text('{"image": "a.jpg", "cards": ["7H"], "optional": "QS"}\n')
    with pytest.raises(ValueError, match="line 1: 'optional' must be a list"):
        load_manifest(manifest)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"cards": "KS 2D"}, "'cards' must be a list of card codes, got 'KS 2D'"),
        ({"cards": ["KS", "ZZ"]}, "'cards' holds 'ZZ': not a card code"),
        ({"cards": ["ks"]}, "'cards' holds 'ks'"),  # labels are written as the classes are
        ({"cards": ["KS"], "optional": ["Q"]}, "'optional' holds 'Q'"),
        ({"cards": ["KS"], "image": 3}, "'image' must be a file name"),
        # a JSON whole number past the largest double is no pixel (was a TypeError)
        ({"cards": ["KS"], "objects": [{"box_xyxy": [0, 0, 10**400, 1]}]}, "object 1's"),
    ],
)
def test_a_manifest_label_that_is_no_card_is_named(
    tmp_path: Path, entry: dict[str, object], message: str
) -> None:
    manifest = tmp_path / "manifest.jsonl"
    good = {"image": "a.jpg", "cards": ["10H", "K?", "JOKER", "JB"], "optional": ["A?"]}
    manifest.write_text(json.dumps(good) + "\n" + json.dumps({"image": "b.jpg", **entry}) + "\n")
    with pytest.raises(ValueError, match=re.escape(f"line 2: {message}")):
        load_manifest(manifest)
    manifest.write_text(json.dumps(good) + "\n")
    assert load_manifest(manifest)[0].cards == ("10H", "K?", "JOKER", "JB")


@pytest.mark.parametrize(
    ("second", "split"),
    [
        ({"image": "a.jpg", "cards": ["7H"]}, None),  # the same line twice
        ({"image": "./a.jpg", "cards": ["KS"]}, None),  # the same photo, other labels
        ({"image": "sub/../a.jpg", "cards": ["7H"], "split": "valid"}, "valid"),
    ],
)
def test_a_photo_listed_twice_is_refused_with_both_lines(
    tmp_path: Path, second: dict[str, object], split: str | None
) -> None:
    """Counted twice it would weigh double in every figure, and with two labels one of them
    is wrong: the manifest is refused, whatever split either line is in."""
    manifest = tmp_path / "manifest.jsonl"
    first = {"image": "a.jpg", "cards": ["7H"], "split": "train"}
    other = {"image": "b.jpg", "cards": ["2D"]}
    lines = [json.dumps(first), json.dumps(other), "", json.dumps(second)]
    manifest.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"lines 1 and 4 both name the photo '[^']*a\.jpg'"):
        load_manifest(manifest, split)


def test_a_manifest_that_is_not_utf8_is_named_and_one_with_a_byte_order_mark_is_read(
    tmp_path: Path,
) -> None:
    manifest = tmp_path / "manifest.jsonl"
    line = json.dumps({"image": "a.jpg", "cards": ["7H"]}) + "\n"
    manifest.write_bytes(b"\xff\xfe" + line.encode("utf-16-le"))  # saved as UTF-16
    with pytest.raises(ValueError) as refused:
        load_manifest(manifest)
    assert str(refused.value) == f"{manifest}: not UTF-8 text (byte 0xff at position 0)"
    manifest.write_bytes(b"\xef\xbb\xbf" + line.encode())  # UTF-8 with a byte-order mark
    assert load_manifest(manifest)[0].cards == ("7H",)


def test_a_bad_manifest_stops_eval_before_the_models_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_models(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the models were loaded")

    monkeypatch.setattr("vision.reader.Reader.load", no_models)
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    good.write_text('{"image": "a.jpg", "cards": ["7H"]}\n')
    bad.write_text('{"image": "a.jpg", "cards": "7H"}\n')
    assert main(["eval", str(good), str(bad)]) == 2
    assert "bad.jsonl: line 1: 'cards' must be a list" in capsys.readouterr().err


def test_confusion_pictures_of_the_manifests_given_have_a_name_each() -> None:
    """A manifest is named after its folder, a synthetic set's (``SCENES/manifest/``, as
    ``handreader synth`` writes it) after its scenes' folder; a name taken by an earlier
    manifest is numbered, so that no picture is written over another."""
    from handreader.cli.eval import report_names

    assert report_names(
        [
            Path("scenes/manifest/manifest.jsonl"),
            Path("scenes/manifest/legible.jsonl"),
            Path("realdata/boxes/manifest.jsonl"),
            Path("other/scenes/manifest/manifest.jsonl"),
            Path("copy/Boxes/manifest.jsonl"),  # alike but for case: one file on some disks
            Path("scenes-2/manifest.jsonl"),  # the name the second "scenes" would take
            Path("/manifest/manifest.jsonl"),  # no folder above: named as any other
        ]
    ) == [
        "confusion_scenes.png",
        "confusion_scenes-legible.png",
        "confusion_boxes.png",
        "confusion_scenes-2.png",
        "confusion_Boxes-2.png",
        "confusion_scenes-2-2.png",
        "confusion_manifest.png",
    ]


def test_eval_command_prints_one_json_line_per_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The shipped models on the example photo (its labels in examples/hand.json), plus an
    unreadable file that counts as failed, is named on standard error and makes the exit status
    2; the figures are checked for shape, not accuracy."""
    shutil.copyfile(ROOT / "examples" / "hand.jpg", tmp_path / "hand.jpg")
    (tmp_path / "broken.jpg").write_bytes(b"not an image")
    cards = json.loads((ROOT / "examples" / "hand.json").read_text())["cards"]
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(
        json.dumps({"image": "hand.jpg", "cards": cards})
        + "\n"
        + json.dumps({"image": "broken.jpg", "cards": ["7H"]})
        + "\n"
    )
    assert main(["eval", str(manifest), "--json"]) == 2  # a photo could not be read
    out, err = capsys.readouterr()
    summary = json.loads(out.strip())
    assert summary["photos"] == 2 and summary["failed"] == 1 and summary["cards"] == 6
    assert err.startswith(f"handreader eval: error: {str(tmp_path / 'broken.jpg')!r}: ")
    assert err.count("broken.jpg") == 1
    assert len(err.splitlines()) == 1  # the photo named once, and no progress bar off a terminal
    assert summary["one_card_photos"] == 1 and summary["top1"] == 0.0
    assert 0.0 <= summary["f1"] <= 1.0 and summary["manifest"] == str(manifest)


def test_eval_command_leaves_optional_cards_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The example photo labelled with its 2D alone: its other cards are extra readings, unless
    the manifest lists them as optional; then they are dropped and the text output says so."""
    shutil.copyfile(ROOT / "examples" / "hand.jpg", tmp_path / "hand.jpg")
    others = [
        c for c in json.loads((ROOT / "examples" / "hand.json").read_text())["cards"] if c != "2D"
    ]
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps({"image": "hand.jpg", "cards": ["2D"]}) + "\n")
    assert main(["eval", str(manifest), "--json"]) == 0
    strict = json.loads(capsys.readouterr().out.strip())
    manifest.write_text(
        json.dumps({"image": "hand.jpg", "cards": ["2D"], "optional": others}) + "\n"
    )
    assert main(["eval", str(manifest), "--json"]) == 0
    lenient = json.loads(capsys.readouterr().out.strip())
    assert lenient["optional_read"] == len(others) and strict["optional_read"] == 0
    assert lenient["predicted"] == strict["predicted"] - len(others)
    assert lenient["precision"] > strict["precision"]
    assert main(["eval", str(manifest)]) == 0
    assert f"not counted: {len(others)}" in capsys.readouterr().out
