"""Writing a data set: determinism, file layout, label format, and the ``handreader synth`` CLI.

"the same config and seed give byte-identical images and labels"; scene ``i`` is drawn
from ``default_rng([seed, i])`` (training/synth/generate.py), so the number of workers and the
``--start`` split must not change a byte. The held-out decks at 200 px keep this cheap; the
tests skip with the reason when the card art is not installed (scripts/install-card-art).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from pathlib import Path
from typing import Any

import cv2
import pytest

from handreader import cli
from rules.cards import CARD_CLASSES
from training.synth import generate as generate_module
from training.synth.assets import DeckAssets, read_assets
from training.synth.config import ConfigError, SceneConfig, parse_config
from training.synth.decks import DECKS
from training.synth.generate import CONFIG_RECORD, generate

SPLIT = "holdout"
SPLIT_DECKS = tuple(deck for deck in DECKS if deck.split == SPLIT)

RAW_CONFIG: dict[str, Any] = {
    "seed": 5,
    "deck_split": SPLIT,
    "card_render_height": 200,
    "sizes": [[320, 240], [640, 480]],
}


def _art_missing() -> str | None:
    absent = [deck.name for deck in SPLIT_DECKS if not deck.available]
    if absent:
        return f"card art not installed ({', '.join(absent)}): run scripts/install-card-art"
    if shutil.which("rsvg-convert") is None:
        return "rsvg-convert not installed (librsvg2-bin): run scripts/install-card-art"
    return None


_missing = _art_missing()
pytestmark = pytest.mark.skipif(_missing is not None, reason=_missing or "")


def config(**changes: Any) -> SceneConfig:
    return parse_config({**RAW_CONFIG, **changes})


def files_of(root: Path) -> dict[str, bytes]:
    """Every scene file under ``root`` (relative path -> bytes): all but the config record."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path != root / CONFIG_RECORD
    }


@pytest.fixture(scope="module")
def six_scenes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Scenes 0-5 of the test config, written by one worker."""
    out = tmp_path_factory.mktemp("one_worker")
    generate(config(), out, 6, workers=1, progress=False)
    return out


def test_layout_of_the_output(six_scenes: Path) -> None:
    """images/NNNNNNN.jpg, labels/NNNNNNN.txt, meta/NNNNNNN.json for scenes 0-5."""
    names = [f"{index:07d}" for index in range(6)]
    assert sorted(p.stem for p in (six_scenes / "images").glob("*.jpg")) == names
    assert sorted(p.stem for p in (six_scenes / "labels").glob("*.txt")) == names
    assert sorted(p.stem for p in (six_scenes / "meta").glob("*.json")) == names


def test_two_workers_write_the_same_bytes(six_scenes: Path, tmp_path: Path) -> None:
    generate(config(), tmp_path, 6, workers=2, progress=False)
    assert files_of(tmp_path) == files_of(six_scenes)


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(),
    reason="workers inherit the decks only when forked",
)
def test_workers_share_the_decks_loaded_once(
    six_scenes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With several workers the calling process reads each deck once and forks the workers,
    which load nothing themselves; afterwards the caller holds no decks and its OpenCV
    threads are as they were. The bytes are those of one worker."""
    monkeypatch.setattr(generate_module, "_worker_state", {})
    read: list[str] = []

    def counting_read(name: str, height: int) -> DeckAssets:
        read.append(name)
        return read_assets(name, height)

    def no_loading(name: str, height: int) -> DeckAssets:
        raise AssertionError(f"a worker loaded {name!r} itself")

    monkeypatch.setattr(generate_module, "read_assets", counting_read)
    monkeypatch.setattr(generate_module, "load_assets", no_loading)
    threads = cv2.getNumThreads()
    generate(config(), tmp_path, 6, workers=2, progress=False)
    assert sorted(read) == sorted(deck.name for deck in SPLIT_DECKS)
    assert generate_module._worker_state == {}
    assert cv2.getNumThreads() == threads
    assert files_of(tmp_path) == files_of(six_scenes)


def test_a_second_run_writes_the_same_bytes(six_scenes: Path, tmp_path: Path) -> None:
    generate(config(), tmp_path, 6, workers=1, progress=False)
    assert files_of(tmp_path) == files_of(six_scenes)


def test_start_continues_the_same_sequence(six_scenes: Path, tmp_path: Path) -> None:
    """Scenes 3-5 written alone equal scenes 3-5 of the whole run (runs can be split)."""
    generate(config(), tmp_path, 3, start=3, workers=1, progress=False)
    later = files_of(tmp_path)
    assert len(later) == 9
    assert later == {name: data for name, data in files_of(six_scenes).items() if name in later}


def test_another_seed_gives_other_scenes(six_scenes: Path, tmp_path: Path) -> None:
    generate(config(seed=6), tmp_path, 2, workers=1, progress=False)
    for index in range(2):
        name = f"images/{index:07d}.jpg"
        assert (tmp_path / name).read_bytes() != (six_scenes / name).read_bytes()


def test_scenes_of_another_config_are_refused_not_mixed(six_scenes: Path, tmp_path: Path) -> None:
    """The folder records its config: more scenes of it are drawn beside the others, scenes of
    another config are refused before a file is written, naming what differs."""
    generate(config(), tmp_path, 2, workers=1, progress=False)
    assert json.loads((tmp_path / CONFIG_RECORD).read_text())["seed"] == config().seed
    before = files_of(tmp_path)
    with pytest.raises(ConfigError, match=r"holds scenes of another config \(it differs in seed\)"):
        generate(config(seed=6), tmp_path, 2, workers=1, progress=False)
    assert files_of(tmp_path) == before
    generate(config(), tmp_path, 1, start=2, workers=1, progress=False)
    assert len(files_of(tmp_path)) == 9


def test_yolo_labels_match_the_meta(six_scenes: Path) -> None:
    """One YOLO line per visible index: class 0 ("index"), centre and size normalised to
    [0, 1], equal to the box in meta/*.json; meta names real cards of the split's decks."""
    split_names = {deck.name for deck in SPLIT_DECKS}
    total = 0
    for label_path in sorted((six_scenes / "labels").glob("*.txt")):
        meta = json.loads((six_scenes / "meta" / f"{label_path.stem}.json").read_text())
        image = cv2.imread(str(six_scenes / "images" / f"{label_path.stem}.jpg"))
        assert image is not None
        width, height = meta["size_wh"]
        assert image.shape[:2] == (height, width)
        assert [width, height] in RAW_CONFIG["sizes"]
        lines = label_path.read_text().splitlines()
        assert len(lines) == len(meta["indices"])
        for line, item in zip(lines, meta["indices"], strict=True):
            fields = line.split()
            assert len(fields) == 5 and fields[0] == "0"
            cx, cy, w, h = (float(value) for value in fields[1:])
            assert cx - w / 2 >= -1e-6 and cx + w / 2 <= 1 + 1e-6
            assert cy - h / 2 >= -1e-6 and cy + h / 2 <= 1 + 1e-6
            x1, y1, x2, y2 = item["box_xyxy"]
            assert cx * width == pytest.approx((x1 + x2) / 2, abs=0.02)
            assert cy * height == pytest.approx((y1 + y2) / 2, abs=0.02)
            assert w * width == pytest.approx(x2 - x1, abs=0.02)
            assert h * height == pytest.approx(y2 - y1, abs=0.02)
            assert item["card"] in CARD_CLASSES
            assert item["deck"] in split_names
            assert 0.8 <= item["visible"] <= 1.0
            assert len(item["quad"]) == 4
        for item in meta["partial"]:  # shown but unlabelled: no YOLO line
            assert item["card"] in CARD_CLASSES and len(item["box_xyxy"]) == 4
            assert item not in meta["indices"]
            total += 1
    assert total > 0


EXTRA_DECKS = tuple(deck for deck in DECKS if deck.split == "extra")


@pytest.mark.skipif(
    not all(deck.available for deck in EXTRA_DECKS),
    reason="card art not installed: run scripts/install-card-art",
)
def test_extra_split_draws_only_the_cards_the_decks_lend(tmp_path: Path) -> None:
    """deck_split: extra draws the decks with other court letters, and only the cards they
    lend, in every layout (a Zheng Shangyou play of queens keeps none of them: it becomes one
    card the deck has)."""
    lent = {deck.name: set(deck.codes) for deck in EXTRA_DECKS}
    generate(
        config(deck_split="extra", layouts={"pits": 1.0, "table": 1.0, "fan": 1.0}),
        tmp_path,
        12,
        workers=1,
        progress=False,
    )
    cards = []
    for meta_path in sorted((tmp_path / "meta").glob("*.json")):
        meta = json.loads(meta_path.read_text())
        for item in meta["indices"] + meta["partial"]:
            assert item["card"] in lent[item["deck"]], item
            cards.append(item["card"])
    assert len(cards) > 30
    assert not {card[:-1] for card in cards} & {"Q", "J", "JB", "JR"}


def test_negative_count_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="count and start must be non-negative"):
        generate(config(), tmp_path, -1, workers=1, progress=False)


# ---------------------------------------------------------------------------------------------
# the CLI


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        status = cli.main(list(argv))
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else 1
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def write_config(tmp_path: Path, **changes: Any) -> Path:
    path = tmp_path / "test.yaml"
    path.write_text(json.dumps({**RAW_CONFIG, **changes}), encoding="utf-8")  # JSON is YAML
    return path


def test_cli_writes_scenes_and_preview(
    six_scenes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``synth --config --out --count --workers 2 --preview``: the scenes (same bytes as the
    library call) and a contact sheet of 4 tiles, 2 tiles wide (4 columns at most)."""
    out = tmp_path / "out"
    status, stdout, _ = run_cli(
        capsys,
        "synth",
        "--config",
        str(write_config(tmp_path)),
        "--out",
        str(out),
        "--count",
        "4",
        "--workers",
        "2",
        "--preview",
        "--quiet",
    )
    assert status == 0
    assert "wrote scenes 0..3 (4 images" in stdout
    assert "contact_sheet.png" in stdout
    written = files_of(out)
    sheet = written.pop("contact_sheet.png")
    manifest = written.pop("manifest/manifest.jsonl").decode().splitlines()
    legible = written.pop("manifest/legible.jsonl").decode().splitlines()
    assert str(out / "manifest" / "manifest.jsonl") in stdout
    assert str(out / "manifest" / "legible.jsonl") in stdout
    for lines in (manifest, legible):
        assert [json.loads(line)["image"] for line in lines] == [
            f"../images/{index:07d}.jpg" for index in range(4)
        ]
    for every, readable in zip(manifest, legible, strict=True):
        # a card required in the legible manifest is required in the other too
        assert set(json.loads(readable)["cards"]) <= set(json.loads(every)["cards"])
    expected = {
        name: data for name, data in files_of(six_scenes).items() if int(Path(name).stem) < 4
    }
    assert written == expected
    image = cv2.imread(str(out / "contact_sheet.png"))
    assert image is not None and len(sheet) > 0
    assert image.shape[1] == 4 * 480  # four tiles of 480 px side by side


def test_cli_preview_only(
    six_scenes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "copy"
    shutil.copytree(six_scenes, out)
    status, stdout, _ = run_cli(
        capsys, "synth", "--preview-only", "--out", str(out), "--preview-count", "2"
    )
    assert status == 0
    image = cv2.imread(str(out / "contact_sheet.png"))
    assert image is not None and image.shape[1] == 2 * 480
    assert str(out / "contact_sheet.png") in stdout


def test_cli_uses_all_cores_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Required: "using all cores" unless --workers says otherwise."""
    seen: dict[str, Any] = {}

    def fake_generate(
        config: SceneConfig,
        out: Path,
        count: int,
        start: int = 0,
        workers: int | None = None,
        progress: bool = True,
    ) -> int:
        seen.update(count=count, start=start, workers=workers, progress=progress)
        return 0

    monkeypatch.setattr("training.synth.generate.generate", fake_generate)
    status, _, _ = run_cli(
        capsys,
        "synth",
        "--config",
        str(write_config(tmp_path)),
        "--out",
        str(tmp_path / "out"),
        "--count",
        "7",
        "--start",
        "20",
    )
    assert status == 0
    assert seen == {"count": 7, "start": 20, "workers": os.cpu_count() or 1, "progress": True}


@pytest.mark.parametrize("quiet", [False, True])
def test_cli_says_it_renders_the_card_art_into_an_empty_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, quiet: bool
) -> None:
    """A first run renders every deck before its first scene (15 s a deck on a core): one line
    on standard error says so, where the renders go and about how long, unless ``--quiet``."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("HANDREADER_CACHE", str(cache))
    monkeypatch.setattr("training.synth.generate.generate", lambda *args, **kwargs: 0)
    argv = ["--config", str(write_config(tmp_path)), "--out", str(tmp_path / "out")]
    status, _, err = run_cli(
        capsys, "synth", *argv, "--count", "1", "--workers", "2", *(["--quiet"] if quiet else [])
    )
    assert status == 0
    if quiet:
        assert err == ""
        return
    assert err.count("\n") == 1
    assert f"rendering the card art of {len(SPLIT_DECKS)} decks at 200 px" in err
    assert str(cache / "cards" / "h200") in err
    assert "min with 2 workers" in err


def test_cli_counts_as_to_render_only_decks_without_their_renders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One test of what is left to render, for the notice and for the need of rsvg-convert:
    a deck whose cards are all rendered at the config's height (its measurements, a read of
    those files, still to do) is not announced, and one card gone makes its deck one to
    render, which without rsvg-convert is refused by name."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("HANDREADER_CACHE", str(cache))
    monkeypatch.setattr("training.synth.generate.generate", lambda *args, **kwargs: 0)
    for deck in SPLIT_DECKS:
        (cache / "cards" / "h200" / deck.name).mkdir(parents=True)
        for code in deck.codes:
            (cache / "cards" / "h200" / deck.name / f"{code}.png").write_bytes(b"")
    argv = ["synth", "--config", str(write_config(tmp_path)), "--out", str(tmp_path / "out")]
    status, _, err = run_cli(capsys, *argv, "--count", "1")
    assert status == 0 and err == ""
    first = SPLIT_DECKS[0]
    (cache / "cards" / "h200" / first.name / f"{first.codes[0]}.png").unlink()
    status, _, err = run_cli(capsys, *argv, "--count", "1")
    assert status == 0 and "rendering the card art of 1 deck at 200 px" in err
    monkeypatch.setattr("shutil.which", lambda name: None)
    status, _, err = run_cli(capsys, *argv, "--count", "1")
    assert status == 2
    assert f"rsvg-convert not found and decks {first.name} are not rendered at height 200" in err


def test_cli_reports_missing_decks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the card packages the CLI names the install script, exit status 2."""
    monkeypatch.setattr("training.synth.assets.DECKS", ())
    status, _, err = run_cli(
        capsys,
        "synth",
        "--config",
        str(write_config(tmp_path)),
        "--out",
        str(tmp_path / "out"),
        "--count",
        "1",
    )
    assert status == 2
    assert "scripts/install-card-art" in err
    # from an installed package, where the script is not: the packages it installs
    assert "apt-get install gnome-cards-data kdegames-card-data-kf5 librsvg2-bin" in err


def test_cached_renders_stand_in_for_the_packages(
    six_scenes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine without the card packages (a GPU machine that cannot reach Debian) draws the
    same scenes from a copied render cache: a deck whose SVG is gone but whose renders and
    measurements are cached at the config's height still counts, and nothing is rendered."""
    import dataclasses

    from training.synth.assets import decks_for_split

    # the six scenes were drawn with this config, so its decks are cached at 200 px
    gone = tuple(
        dataclasses.replace(deck, path=tmp_path / "uninstalled" / deck.path.name)
        if deck.split == SPLIT
        else deck
        for deck in DECKS
    )
    monkeypatch.setattr("training.synth.assets.DECKS", gone)
    assert not any(deck.available for deck in gone if deck.split == SPLIT)
    with pytest.raises(
        RuntimeError, match="no installed deck for split 'holdout' and no renders at 999 px"
    ):
        decks_for_split(SPLIT, 999)  # nothing cached at that height
    assert [deck.name for deck in decks_for_split(SPLIT, 200)] == [d.name for d in SPLIT_DECKS]
    monkeypatch.setattr("training.synth.decks.render_card", _no_rendering)
    out = tmp_path / "from_cache"
    generate(config(), out, 6, workers=1, progress=False)
    assert files_of(out) == files_of(six_scenes)


def _no_rendering(*args: object) -> None:
    raise AssertionError("a cached deck was rendered again")


def test_printed_pages_change_only_the_scenes_that_ask(six_scenes: Path, tmp_path: Path) -> None:
    """``backgrounds.printed_probability`` 0 (the default) draws nothing more: the scenes are
    the bytes they were. With 1, every scene lies on pages, and its cards keep their labels."""
    generate(
        config(backgrounds={"printed_probability": 0.0}),
        tmp_path / "off",
        6,
        workers=1,
        progress=False,
    )
    assert files_of(tmp_path / "off") == files_of(six_scenes)
    generate(
        config(backgrounds={"printed_probability": 1.0}),
        tmp_path / "on",
        6,
        workers=1,
        progress=False,
    )
    before, after = files_of(six_scenes), files_of(tmp_path / "on")
    images = [name for name in before if name.startswith("images")]
    assert all(before[name] != after[name] for name in images)
    labelled = [json.loads(after[f"meta/{index:07d}.json"])["indices"] for index in range(6)]
    assert sum(len(indices) for indices in labelled) > 0


def test_restyled_jokers_change_only_the_scenes_that_ask(six_scenes: Path, tmp_path: Path) -> None:
    """``geometry.joker_restyle_probability`` 0 (the default) draws nothing more: the scenes
    are the bytes they were. With 1 (and jokers in most scenes), every joker is drawn with
    another mark, so its labelled boxes move, and the other cards' labels stay."""
    generate(
        config(geometry={"joker_restyle_probability": 0.0}),
        tmp_path / "off",
        6,
        workers=1,
        progress=False,
    )
    assert files_of(tmp_path / "off") == files_of(six_scenes)
    jokers = {"joker_probability": 0.9}
    generate(config(geometry=jokers), tmp_path / "plain", 6, workers=1, progress=False)
    generate(
        config(geometry={**jokers, "joker_restyle_probability": 1.0}),
        tmp_path / "drawn",
        6,
        workers=1,
        progress=False,
    )

    def boxes(root: Path, jokers: bool) -> list[tuple[str, tuple[float, ...]]]:
        return [
            (index["card"], tuple(index["box_xyxy"]))
            for scene in range(6)
            for index in json.loads((root / f"meta/{scene:07d}.json").read_text())["indices"]
            if (index["card"] in ("JB", "JR")) is jokers
        ]

    assert boxes(tmp_path / "plain", True), "no joker labelled in the plain scenes"
    assert boxes(tmp_path / "drawn", True)
    assert set(boxes(tmp_path / "drawn", True)).isdisjoint(boxes(tmp_path / "plain", True))
