"""Crop bundles (training.crop_bundle): index crops packed as JPEG mosaics to travel to a
GPU machine without card art. No torch needed."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from training.crop_bundle import (
    PER_ROW,
    BundlePart,
    DrawPlan,
    draw_parts,
    load_bundle,
    main,
    pack_bundle,
    parse_part,
)
from vision.crops import CROP_SIZE
from vision.detections import CLASSIFIER_CLASSES, Detections


def _crops(count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Crops that each show their own label: a dark square whose place and colour follow it,
    on a light ground, so a packed crop can be told from its neighbours."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, len(CLASSIFIER_CLASSES), count)
    crops = np.full((count, CROP_SIZE, CROP_SIZE, 3), 230, np.uint8)
    for crop, label in zip(crops, labels, strict=True):
        x, y = 2 + int(label) % 5 * 5, 2 + int(label) // 5 % 5 * 5
        crop[y : y + 8, x : x + 8] = (30, 30, 200) if label % 2 else (20, 20, 20)
    return crops, labels


def _npz(path: Path, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    crops, labels = _crops(count, seed)
    np.savez(path, crops=crops, labels=labels)
    return crops, labels


def test_pack_and_load_round_trip(tmp_path: Path) -> None:
    # more than one mosaic (4,096 crops each) and a last, partly filled row
    count = PER_ROW * PER_ROW + 3 * PER_ROW + 5
    scenes, scene_labels = _npz(tmp_path / "scenes.npz", count, 1)
    photos, photo_labels = _npz(tmp_path / "photos.npz", 70, 2)
    valid, valid_labels = _npz(tmp_path / "valid.npz", 40, 3)
    parts = [
        BundlePart(tmp_path / "scenes.npz"),
        BundlePart(tmp_path / "photos.npz", copies=3),
        BundlePart(tmp_path / "valid.npz", role="valid", copies=0),
    ]
    index = pack_bundle(parts, tmp_path / "bundle", quality=90)
    assert [len(part["images"]) for part in index["parts"]] == [2, 1, 1]  # type: ignore[index]
    crops, labels, valid_crops, loaded_valid = load_bundle(tmp_path / "bundle")
    assert len(crops) == count + 3 * 70
    np.testing.assert_array_equal(labels, np.concatenate([scene_labels, *[photo_labels] * 3]))
    np.testing.assert_array_equal(loaded_valid, valid_labels)
    # every crop comes back in its place, within the JPEG's rounding
    expected = np.concatenate([scenes, *[photos] * 3])
    error = np.abs(crops.astype(int) - expected.astype(int))
    assert error.mean() < 3 and np.percentile(error, 99) < 40
    assert np.abs(valid_crops.astype(int) - valid.astype(int)).mean() < 3
    # a crop's dark square is where its own label put it, not a neighbour's
    for crop, label in zip(crops[::397], labels[::397], strict=True):
        x, y = 2 + int(label) % 5 * 5, 2 + int(label) // 5 % 5 * 5
        assert crop[y + 2 : y + 6, x + 2 : x + 6].mean() < 120


def test_smaller_at_lower_quality_and_far_smaller_than_raw(tmp_path: Path) -> None:
    _npz(tmp_path / "scenes.npz", 3000, 4)
    sizes = {}
    for quality in (95, 75):
        out = tmp_path / f"q{quality}"
        pack_bundle([BundlePart(tmp_path / "scenes.npz")], out, quality=quality)
        sizes[quality] = sum(path.stat().st_size for path in out.iterdir())
    assert sizes[75] < sizes[95] < 3000 * CROP_SIZE * CROP_SIZE * 3 / 4


def test_repacking_replaces_the_old_bundle(tmp_path: Path) -> None:
    _npz(tmp_path / "first.npz", 30, 5)
    _npz(tmp_path / "second.npz", 20, 6)
    out = tmp_path / "bundle"
    pack_bundle([BundlePart(tmp_path / "first.npz")], out)
    (out / "notes.txt").write_text("kept")
    pack_bundle([BundlePart(tmp_path / "second.npz")], out)
    assert not list(out.glob("first*"))
    assert (out / "notes.txt").read_text() == "kept"
    assert len(load_bundle(out)[1]) == 20


def test_part_syntax() -> None:
    assert parse_part("a.npz") == BundlePart(Path("a.npz"))
    assert parse_part("a.npz:4") == BundlePart(Path("a.npz"), copies=4)
    assert parse_part("a.npz:valid") == BundlePart(Path("a.npz"), role="valid", copies=0)
    assert parse_part("a.npz@5") == BundlePart(Path("a.npz"), take=5)
    assert parse_part("a.npz@5:3") == BundlePart(Path("a.npz"), copies=3, take=5)
    assert parse_part("a.npz@7:valid") == BundlePart(Path("a.npz"), "valid", 0, 7)
    for bad in ("a.jpg", "a.npz:0", "a.npz:x", "a.npz:-1", "a.jpg@3"):
        with pytest.raises(ValueError, match=r"expected|copy count"):
            parse_part(bad)
    for bad in ("a.npz@0", "a.npz@x", "a.npz@:2", "a.npz@-1:valid"):
        with pytest.raises(ValueError, match="crop count"):
            parse_part(bad)


def test_a_part_can_be_packed_in_part(tmp_path: Path) -> None:
    """``take`` keeps that many crops, in their order, drawn by one generator over the parts
    in order: the same parts pack the same bundle, another seed another share."""
    crops, labels = _npz(tmp_path / "big.npz", 300, 1)
    _npz(tmp_path / "small.npz", 40, 2)
    parts = [BundlePart(tmp_path / "big.npz", take=120), BundlePart(tmp_path / "small.npz", take=9)]
    index = pack_bundle(parts, tmp_path / "a", 95)
    assert [(e["count"], e["of"]) for e in index["parts"]] == [(120, 300), (9, 40)]
    packed, packed_labels, _, _ = load_bundle(tmp_path / "a")
    assert len(packed) == 129
    # the kept crops, in their order: one generator of the seed (1), part after part
    rng = np.random.default_rng(1)
    big = np.sort(rng.permutation(300)[:120])
    small = np.sort(rng.permutation(40)[:9])
    assert list(packed_labels[:120]) == list(labels[big])
    assert np.abs(packed[:120].astype(int) - crops[big]).mean() < 3
    assert list(packed_labels[120:]) == list(np.load(tmp_path / "small.npz")["labels"][small])
    pack_bundle(parts, tmp_path / "b", 95)
    assert all(
        np.array_equal(x, y)
        for x, y in zip(load_bundle(tmp_path / "a"), load_bundle(tmp_path / "b"), strict=True)
    )
    pack_bundle(parts, tmp_path / "c", 95, seed=2)
    assert not np.array_equal(load_bundle(tmp_path / "c")[1], packed_labels)
    with pytest.raises(ValueError, match="301 crops asked for, 300 held"):
        pack_bundle([BundlePart(tmp_path / "big.npz", take=301)], tmp_path / "d")


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        ({"images": np.zeros((2, 32, 32, 3), np.uint8)}, "expected arrays 'crops' and 'labels'"),
        ({"crops": np.zeros((2, 16, 16, 3), np.uint8), "labels": np.zeros(2)}, "expected uint8"),
        ({"crops": np.zeros((2, 32, 32, 3), np.float32), "labels": np.zeros(2)}, "expected uint8"),
        ({"crops": np.zeros((2, 32, 32, 3), np.uint8), "labels": np.zeros(3)}, "2 crops but 3"),
        ({"crops": np.zeros((1, 32, 32, 3), np.uint8), "labels": np.array([55])}, "labels outside"),
    ],
)
def test_a_malformed_part_is_named(
    tmp_path: Path, arrays: dict[str, np.ndarray], message: str
) -> None:
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match=message) as raised:
        pack_bundle([BundlePart(tmp_path / "bad.npz")], tmp_path / "out")
    assert "bad.npz" in str(raised.value)


def test_missing_and_duplicate_parts_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no such file"):
        pack_bundle([BundlePart(tmp_path / "gone.npz")], tmp_path / "out")
    with pytest.raises(ValueError, match="no parts"):
        pack_bundle([], tmp_path / "out")
    _npz(tmp_path / "a.npz", 5, 7)
    (tmp_path / "other").mkdir()
    _npz(tmp_path / "other" / "a.npz", 5, 8)
    with pytest.raises(ValueError, match="share a file name"):
        pack_bundle(
            [BundlePart(tmp_path / "a.npz"), BundlePart(tmp_path / "other" / "a.npz")],
            tmp_path / "out",
        )


def test_a_broken_bundle_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"no bundle\.json"):
        load_bundle(tmp_path)
    _npz(tmp_path / "a.npz", 50, 9)
    out = tmp_path / "bundle"
    pack_bundle([BundlePart(tmp_path / "a.npz")], out)
    (out / "a-0.jpg").write_bytes(b"not a jpeg")
    with pytest.raises(ValueError, match=r"a-0\.jpg: missing or not a JPEG"):
        load_bundle(out)
    pack_bundle([BundlePart(tmp_path / "a.npz", role="valid", copies=0)], out)
    with pytest.raises(ValueError, match="no train part"):
        load_bundle(out)
    index = json.loads((out / "bundle.json").read_text())
    index["crop_size"] = 48
    (out / "bundle.json").write_text(json.dumps(index))
    with pytest.raises(ValueError, match="crop size 48"):
        load_bundle(out)


def test_a_wrong_count_is_named(tmp_path: Path) -> None:
    _npz(tmp_path / "a.npz", 50, 10)
    out = tmp_path / "bundle"
    pack_bundle([BundlePart(tmp_path / "a.npz")], out)
    np.save(out / "a.labels.npy", np.zeros(49, np.uint8))
    with pytest.raises(ValueError, match="should hold 50 crops, found 50 crops and 49 labels"):
        load_bundle(out)


def test_command_line_packs_and_describes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _npz(tmp_path / "train.npz", 60, 11)
    _npz(tmp_path / "valid.npz", 10, 12)
    out = tmp_path / "bundle"
    args = ["pack", str(out), str(tmp_path / "train.npz") + ":2", f"{tmp_path / 'valid.npz'}:valid"]
    assert main(args) == 0
    assert "120 train crops (copies counted), 10 valid crops" in capsys.readouterr().out
    assert main(["info", str(out)]) == 0
    assert "120 train crops" in capsys.readouterr().out
    assert cv2.imread(str(out / "train-0.jpg")) is not None
    for bad, message in (
        (["pack", str(out), "x.txt"], "expected FILE.npz"),
        (["pack", str(out), str(tmp_path / "train.npz"), "--quality", "20"], "--quality 20"),
        (["info", str(tmp_path)], "no bundle.json"),
    ):
        with pytest.raises(SystemExit) as stopped:
            main(bad)
        assert stopped.value.code == 2
        assert message in capsys.readouterr().err


class _CornerFinder:
    """Finds one box in the top-left corner of every image (most confident first), standing in
    for the detector: on a photo of one card that is its index; in the scenes below it
    overlaps no labelled index, so it is a hard negative."""

    def __init__(self) -> None:
        self.calls = 0

    def detect(self, image: np.ndarray) -> Detections:
        self.calls += 1
        box = np.array([[4, 4, 24, 34]], np.float32)
        return Detections(box, np.array([0.9], np.float32), np.zeros(1, np.int64))


def _scenes(folder: Path, count: int, seed: int) -> int:
    """``count`` scenes in a ``handreader synth`` folder: a light image with two labelled
    indices each, away from the top-left corner; returns the number of labelled indices."""
    rng = np.random.default_rng(seed)
    (folder / "images").mkdir(parents=True)
    (folder / "meta").mkdir()
    for number in range(count):
        image = rng.integers(150, 255, (240, 320, 3)).astype(np.uint8)
        cv2.imwrite(str(folder / "images" / f"{number:07d}.jpg"), image)
        indices = [
            {"card": "7H", "box_xyxy": [200, 150, 220, 180], "card_index": 0},
            {"card": "QS", "box_xyxy": [100, 60, 118, 88], "card_index": 1},
        ]
        (folder / "meta" / f"{number:07d}.json").write_text(json.dumps({"indices": indices}))
    return 2 * count


def _photos(folder: Path) -> Path:
    """Two `split: train` photos of one card (AS, 10D) and one `valid` one, and their manifest."""
    folder.mkdir()
    rows = []
    for name, card, split in (
        ("a.jpg", "AS", "train"),
        ("b.jpg", "10D", "train"),
        ("c.jpg", "KH", "valid"),
    ):
        cv2.imwrite(str(folder / name), np.full((300, 200, 3), 230, np.uint8))
        rows.append(json.dumps({"image": name, "cards": [card], "split": split}))
    manifest = folder / "manifest.jsonl"
    manifest.write_text("\n".join(rows) + "\n")
    return manifest


def test_draw_makes_the_recipes_parts_and_packs_them(tmp_path: Path) -> None:
    """Scene crops (two jittered per index, "none" boxes), photo crops (4 copies, their
    card), hard negatives from scenes and photos, held-out crops as the valid part; a rerun
    keeps the parts already drawn."""
    labelled = _scenes(tmp_path / "scenes", 3, 1)
    held_out = _scenes(tmp_path / "holdout", 2, 2)
    plan = DrawPlan(
        (tmp_path / "scenes",),
        (tmp_path / "holdout",),
        Path("no-detector-needed.onnx"),
        photos=_photos(tmp_path / "photos"),
        glyph_crops=0,
    )
    finder = _CornerFinder()
    parts = draw_parts(plan, tmp_path / "parts", finder)
    assert [(p.path.name, p.role, p.copies) for p in parts] == [
        ("scenes.npz", "train", 1),
        ("photos.npz", "train", 4),
        ("negatives.npz", "train", 1),
        ("holdout.npz", "valid", 0),
    ]
    none = CLASSIFIER_CLASSES.index("none")
    drawn = {p.path.stem: np.load(p.path) for p in parts}
    scene_labels = list(drawn["scenes"]["labels"])
    card_labels = [label for label in scene_labels if label != none]
    assert len(card_labels) == 2 * labelled  # two jittered crops per labelled index
    assert {CLASSIFIER_CLASSES[label] for label in card_labels} == {"7H", "QS"}
    assert 1 <= scene_labels.count(none) <= 2 * 3  # up to two "none" boxes per scene
    photo_labels = [CLASSIFIER_CLASSES[label] for label in drawn["photos"]["labels"]]
    assert sorted(photo_labels) == ["10D", "AS"]  # the train split only, each its own card
    # the corner box lies on no scene index: one negative per scene; on the photos it is
    # the index itself, so none there
    assert list(drawn["negatives"]["labels"]) == [none] * 3
    holdout_labels = list(drawn["holdout"]["labels"])
    assert len([label for label in holdout_labels if label != none]) == held_out
    assert all(
        crops.shape[1:] == (CROP_SIZE, CROP_SIZE, 3)
        for crops in (drawn[name]["crops"] for name in drawn)
    )

    pack_bundle(parts, tmp_path / "bundle", 85)
    train_crops, train_labels, valid_crops, valid_labels = load_bundle(tmp_path / "bundle")
    assert len(train_crops) == len(train_labels) == len(scene_labels) + 4 * 2 + 3
    assert len(valid_crops) == len(holdout_labels) and list(valid_labels) == holdout_labels

    assert sorted(p.name for p in (tmp_path / "parts").iterdir()) == [
        "holdout.npz",
        "negatives.npz",
        "photos.npz",
        "scenes.npz",
    ]  # no unfinished file left beside them
    calls = finder.calls
    (tmp_path / "parts" / "photos.npz").unlink()  # only the missing part is drawn again
    draw_parts(plan, tmp_path / "parts", finder)
    assert finder.calls == calls + 2  # the two training photos, not the scenes' negatives


def test_draw_adds_a_rounds_casino_and_local_letter_parts(tmp_path: Path) -> None:
    """Casino scenes and local letters become their own parts, before the held-out one, and
    ``take`` packs a share of a part."""
    pytest.importorskip("PIL")
    from training.glyph_crops import find_fonts

    if not find_fonts().rank_fonts:
        pytest.skip("needs a font that renders the ranks (fonts-dejavu-core)")
    _scenes(tmp_path / "scenes", 2, 1)
    labelled = _scenes(tmp_path / "casino", 3, 3)
    _scenes(tmp_path / "holdout", 1, 2)
    plan = DrawPlan(
        (tmp_path / "scenes",),
        (tmp_path / "holdout",),
        Path("no-detector-needed.onnx"),
        glyph_crops=0,
        casino_dirs=(tmp_path / "casino",),
        local_crops=12,
        take=(("casino", 4),),
    )
    parts = draw_parts(plan, tmp_path / "parts", _CornerFinder())
    assert [(p.path.stem, p.role, p.take) for p in parts] == [
        ("scenes", "train", 0),
        ("negatives", "train", 0),
        ("local", "train", 0),
        ("casino", "train", 4),
        ("holdout", "valid", 0),
    ]
    none = CLASSIFIER_CLASSES.index("none")
    casino = np.load(tmp_path / "parts" / "casino.npz")["labels"]
    assert len([label for label in casino if label != none]) == 2 * labelled
    assert len(np.load(tmp_path / "parts" / "local.npz")["labels"]) == 12
    index = pack_bundle(parts, tmp_path / "bundle", 85)
    assert {e["name"]: (e["count"], e["of"]) for e in index["parts"]}["casino"] == (4, len(casino))
    with pytest.raises(ValueError, match="--take names no part drawn: chips"):
        draw_parts(replace(plan, take=(("chips", 3),)), tmp_path / "parts", _CornerFinder())
    with pytest.raises(ValueError, match=r"no boxes/manifest\.jsonl"):
        draw_parts(replace(plan, realdata=tmp_path), tmp_path / "parts", _CornerFinder())


def test_draw_names_what_it_cannot_use(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _scenes(tmp_path / "scenes", 1, 1)
    (tmp_path / "empty").mkdir()
    base = ["draw", str(tmp_path / "b"), "--scenes", str(tmp_path / "scenes")]  # shipped detector
    detector = ["--detector", str(tmp_path / "none.onnx")]
    for args, message in (
        ([*base, "--holdout", str(tmp_path / "empty")], "no meta/ folder"),
        ([*base, "--holdout", str(tmp_path / "scenes"), *detector], "no such model"),
        ([*base, "--holdout", str(tmp_path / "scenes"), "--glyph-crops", "-1"], "--glyph-crops -1"),
        ([*base, "--holdout", str(tmp_path / "scenes"), "--local-crops", "-2"], "--local-crops -2"),
        ([*base, "--holdout", str(tmp_path / "scenes"), "--take", "scenes"], "expected NAME=N"),
        ([*base, "--holdout", str(tmp_path / "scenes"), "--take", "x=0"], "expected NAME=N"),
        (
            [*base, "--holdout", str(tmp_path / "scenes"), "--photos", str(tmp_path / "x.jsonl")],
            "no such photo manifest",
        ),
    ):
        with pytest.raises(SystemExit) as stopped:
            main(args)
        assert stopped.value.code == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "b").exists()  # nothing packed
