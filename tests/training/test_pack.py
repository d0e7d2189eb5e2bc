"""The training pack (training/pack.py): deck renders, index boxes and fonts in one tar.

What is promised: the pack round-trips (unpacked, every deck's measurements and fonts are the
files that went in, every render within WebP's small loss of its PNG); a member whose bytes do
not match the manifest's hash is refused; the pack of the training configs' decks stays under
64 MiB (two decks measured, times the deck count, plus the fonts); and a scene drawn from the
unpacked pack is the scene drawn from the renders, same seed, within a small pixel tolerance,
with the same labels. The held-out decks at 200 px keep this cheap; the tests skip with the
reason when the card art is not installed (scripts/install-card-art).
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import numpy as np
import pytest
import yaml

from training import pack as pack_module
from training.pack import (
    DEFAULT_CONFIGS,
    PACK_LIMIT_BYTES,
    PackError,
    build_pack,
    draw_from,
    unpack,
)
from training.synth import scene as scene_module
from training.synth.assets import read_assets
from training.synth.config import parse_config
from training.synth.decks import DECKS
from training.synth.fonts import GlyphFonts

ROOT = Path(__file__).resolve().parents[2]
TWO = ("plastic", "simplistic")


def _art_missing() -> str | None:
    absent = [deck.name for deck in DECKS if deck.name in TWO and not deck.available]
    if absent:
        return f"card art not installed ({', '.join(absent)}): run scripts/install-card-art"
    if shutil.which("rsvg-convert") is None:
        return "rsvg-convert not installed (librsvg2-bin): run scripts/install-card-art"
    return None


_missing = _art_missing()
pytestmark = pytest.mark.skipif(_missing is not None, reason=_missing or "")


def _config_file(tmp_path: Path) -> Path:
    """``datasets/holdout.yaml`` at 200 px (its decks' renders are cheap to make)."""
    raw = yaml.safe_load((ROOT / "datasets" / "holdout.yaml").read_text())
    raw["card_render_height"] = 200
    path = tmp_path / "holdout-200.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


@pytest.fixture(scope="module")
def packed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the pack of two held-out decks at 200 px, its config)."""
    folder = tmp_path_factory.mktemp("pack")
    config = _config_file(folder)
    out = folder / "two.tar"
    build_pack(out, [config], deck_names=TWO)
    return out, config


def test_pack_round_trips(packed: tuple[Path, Path], tmp_path: Path) -> None:
    pack, _ = packed
    manifest = unpack(pack, tmp_path / "cache")
    assert set(manifest["decks"]) == set(TWO)
    for name in TWO:
        folder = tmp_path / "cache" / "cards" / "h200" / name
        # the measurements are the very file the renders were measured into
        source = read_assets(name, 200)
        assert json.loads((folder / "index_box.json").read_text())["index_box"] == list(
            source.index_box
        )
        assert len(list(folder.glob("*.png"))) == len(source.cards)
    fonts = sorted(p.name for p in (tmp_path / "cache" / "fonts").iterdir())
    assert fonts and fonts == sorted(n[6:] for n in manifest["files"] if n.startswith("fonts/"))
    # a second unpack into the same folder writes nothing new and fails nothing
    assert unpack(pack, tmp_path / "cache") == manifest


def test_renders_come_back_within_webp_loss(
    packed: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack, _ = packed
    unpack(pack, tmp_path / "cache")
    source = read_assets(TWO[0], 200)
    monkeypatch.setenv("HANDREADER_CACHE", str(tmp_path / "cache"))
    unpacked = read_assets(TWO[0], 200)
    assert unpacked.index_box == source.index_box and unpacked.joker_marks == source.joker_marks
    for code, card in source.cards.items():
        back = unpacked.cards[code]
        assert back.shape == card.shape
        assert np.array_equal(back[:, :, 3], card[:, :, 3])  # the alpha plane is lossless
        assert np.abs(back.astype(int) - card.astype(int)).mean() < 4.0


def test_a_member_that_does_not_match_its_hash_is_refused(
    packed: tuple[Path, Path], tmp_path: Path
) -> None:
    pack, _ = packed
    tampered = tmp_path / "tampered.tar"
    with tarfile.open(pack) as source, tarfile.open(tampered, "w") as out:
        for member in source.getmembers():
            handle = source.extractfile(member)
            assert handle is not None
            data = handle.read()
            if member.name.endswith("index_box.json"):
                data = data.replace(b"[", b"[ ", 1)
                member.size = len(data)
            out.addfile(member, io.BytesIO(data))
    with pytest.raises(PackError, match="does not match its hash"):
        unpack(tampered, tmp_path / "cache")
    with pytest.raises(PackError, match="cannot read the pack"):
        unpack(tmp_path / "missing.tar", tmp_path / "cache")


def test_pack_of_the_training_decks_is_under_64_mib(packed: tuple[Path, Path]) -> None:
    pack, _ = packed
    with tarfile.open(pack) as tar:
        handle = tar.extractfile("manifest.json")
        assert handle is not None
        files = json.loads(handle.read())["files"]
    fonts = {name: entry["bytes"] for name, entry in files.items() if name.startswith("fonts/")}
    assert "fonts/DejaVuSans.ttf" in fonts
    per_deck = (pack.stat().st_size - sum(fonts.values())) / len(TWO)
    # 200 px renders; the configs draw 480 px ones: WebP grows about with the area (x 5.8)
    per_deck_480 = per_deck * (480 / 200) ** 2
    drawn = [d for d in DECKS if d.split in ("train", "holdout")]
    assert len(DEFAULT_CONFIGS) == 6
    # the fonts fill what the decks leave; the decks must leave room for DejaVu Sans at least
    assert fonts["fonts/DejaVuSans.ttf"] + per_deck_480 * len(drawn) < PACK_LIMIT_BYTES


def test_fonts_beyond_the_limit_are_left_out_dejavu_first(
    packed: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, config = packed
    dejavu = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    if not dejavu.is_file():
        pytest.skip("needs DejaVu Sans (fonts-dejavu-core)")
    big = []
    for index in range(4):  # four faces of 25 MB: two fit beside the deck and DejaVu
        path = tmp_path / f"Aaa{index}.ttf"
        path.write_bytes(bytes(25_000_000))
        big.append(path)
    fonts = GlyphFonts((*big, dejavu), (dejavu,))
    monkeypatch.setattr(pack_module, "find_fonts", lambda: fonts)
    manifest = build_pack(tmp_path / "one.tar", [config], deck_names=[TWO[0]])
    packed_fonts = sorted(name for name in manifest["files"] if name.startswith("fonts/"))
    assert packed_fonts == ["fonts/Aaa0.ttf", "fonts/Aaa1.ttf", "fonts/DejaVuSans.ttf"]
    assert manifest["fonts_left_out"] == ["Aaa2.ttf", "Aaa3.ttf"]
    assert (tmp_path / "one.tar").stat().st_size <= PACK_LIMIT_BYTES


def test_a_scene_from_the_pack_is_the_scene_from_the_renders(
    packed: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack, config_file = packed
    config = parse_config(yaml.safe_load(config_file.read_text()))
    unpack(pack, tmp_path / "cache")
    originals = [read_assets(name, 200) for name in TWO]
    monkeypatch.setenv("HANDREADER_CACHE", str(tmp_path / "cache"))
    from_pack = [read_assets(name, 200) for name in TWO]
    for index in range(4):
        # each draw from its own renders, not the other's shrunk cards (kept by deck and code)
        scene_module._pyramids.clear()
        a = scene_module.render_scene(
            config, originals, np.random.default_rng([config.seed, index])
        )
        scene_module._pyramids.clear()
        b = scene_module.render_scene(
            config, from_pack, np.random.default_rng([config.seed, index])
        )
        assert not np.array_equal(a.image, b.image) or not a.labels  # the pack's own pixels
        assert [label.to_dict() for label in a.labels] == [label.to_dict() for label in b.labels]
        assert a.image.shape == b.image.shape
        assert np.abs(a.image.astype(int) - b.image.astype(int)).mean() < 0.5


def test_cli_builds_and_refuses_a_deck_the_configs_do_not_draw(
    packed: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, config = packed
    out = tmp_path / "one.tar"
    assert pack_module.main(["build", str(out), "--config", str(config), "--deck", TWO[0]]) == 0
    assert "1 decks" in capsys.readouterr().out
    code = pack_module.main(["build", str(out), "--config", str(config), "--deck", "anglo"])
    assert code == 2
    assert "not drawn by the configs" in capsys.readouterr().err
    assert pack_module.main(["unpack", str(tmp_path / "missing.tar")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cannot read the pack") and err.count("\n") == 1


def test_scenes_are_drawn_from_an_unpacked_pack_without_the_card_art(
    packed: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from training.synth import decks
    from training.synth.config import load_config
    from training.synth.decks import cache_dir
    from training.synth.generate import generate

    pack, config_file = packed
    unpack(pack, tmp_path / "cache")
    home = cache_dir()
    monkeypatch.setenv("HANDREADER_CACHE", str(home))  # restored after the test

    def no_art(*_: object) -> None:
        raise AssertionError("drawing from the pack needed the card art")

    # as on a machine without the Debian decks and rsvg-convert
    monkeypatch.setattr(decks.Deck, "available", property(lambda self: False))
    monkeypatch.setattr(decks, "_rsvg", no_art)
    try:
        draw_from(tmp_path / "cache")
        labels = generate(load_config(config_file), tmp_path / "out", 3, workers=1, progress=False)
    finally:
        draw_from(home)  # nothing this process loaded from the pack outlives the test
    assert labels > 0
    assert len(list((tmp_path / "out" / "images").glob("*.jpg"))) == 3
