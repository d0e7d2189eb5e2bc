"""Synthetic-scene config validation ("a bad config gets a clear error naming the field").

Each bad config in the table must raise ``ConfigError`` (a ``ValueError``) whose message names
the offending field (dotted for nested sections, ``sizes[i]`` for list items); the CLI turns it
into ``handreader synth: error: ...`` and exit status 2. No card art is needed here.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from handreader import cli
from training.synth.config import (
    PROJECT_ROOT,
    ConfigError,
    SceneConfig,
    load_config,
    parse_config,
    project_file,
)

ROOT = Path(__file__).resolve().parents[2]
LAYOUT_NAMES = ("single", "table", "hand", "fan", "pits", "pile", "closeup")

BAD_CONFIGS: list[tuple[str, Any, str]] = [
    # (case, parsed YAML, substring the message must contain)
    (
        "top level is a list",
        [1, 2],
        "config: expected a mapping of settings at the top level, got a list",
    ),
    ("empty file", None, "config: the file is empty"),
    ("unknown top-level key", {"seeds": 3}, "seeds: unknown field"),
    ("negative seed", {"seed": -1}, "seed: expected a non-negative integer, got -1"),
    ("boolean seed", {"seed": True}, "seed: expected a non-negative integer, got True"),
    ("text seed", {"seed": "7"}, "seed: expected a non-negative integer, got '7'"),
    (
        "unknown split",
        {"deck_split": "test"},
        "deck_split: expected one of train, holdout, extra, train+extra, all, letters-french, "
        "letters-german, letters-russian, got 'test'",
    ),
    ("render height too small", {"card_render_height": 10}, "card_render_height: expected"),
    (
        "render height fractional",
        {"card_render_height": 480.7},
        "card_render_height: expected a whole",
    ),
    ("sizes not a list", {"sizes": "640x480"}, "sizes: expected a list of [width, height]"),
    ("sizes empty", {"sizes": []}, "sizes: expected a list of [width, height]"),
    ("size flat pair", {"sizes": [640, 480]}, "sizes[0]: expected a pair [width, height], got 640"),
    ("size of three", {"sizes": [[640, 480, 3]]}, "sizes[0]: expected a pair [width, height]"),
    ("second size too small", {"sizes": [[640, 480], [32, 24]]}, "sizes[1]: expected"),
    ("size fractional", {"sizes": [[640.5, 480]]}, "sizes[0]: expected a whole number"),
    ("size text", {"sizes": [["640", 480]]}, "sizes[0]: expected"),
    ("min_visible zero", {"min_visible": 0}, "min_visible: expected a number in [0.05, 1]"),
    ("min_visible above one", {"min_visible": 1.5}, "min_visible: expected a number"),
    ("section not a mapping", {"geometry": [1]}, "geometry: expected a mapping"),
    ("unknown section key", {"photometry": {"blur": 0.3}}, "photometry.blur: unknown field"),
    (
        "probability as text",
        {"photometry": {"blur_probability": "yes"}},
        "photometry.blur_probability: expected a number in [0, 1], got 'yes'",
    ),
    (
        "probability as bool",
        {"photometry": {"noise_probability": True}},
        "photometry.noise_probability: expected a number",
    ),
    (
        "probability above one",
        {"photometry": {"glare_probability": 1.2}},
        "photometry.glare_probability: expected a number in [0, 1]",
    ),
    (
        "probability not a number",
        {"geometry": {"joker_probability": float("nan")}},
        "geometry.joker_probability: expected a number",
    ),
    (
        "jpeg quality reversed",
        {"photometry": {"jpeg_quality": [90, 40]}},
        "photometry.jpeg_quality: low 90 is above high 40",
    ),
    (
        "jpeg quality out of range",
        {"photometry": {"jpeg_quality": [0, 90]}},
        "photometry.jpeg_quality: expected",
    ),
    (
        "jpeg quality fractional",
        {"photometry": {"jpeg_quality": [35.5, 90]}},
        "photometry.jpeg_quality: expected a whole number",
    ),
    (
        "jpeg quality single",
        {"photometry": {"jpeg_quality": 80}},
        "photometry.jpeg_quality: expected a pair [low, high], got 80",
    ),
    (
        "tilt beyond 75",
        {"geometry": {"max_tilt_degrees": 80}},
        "geometry.max_tilt_degrees: expected a number in [0, 75]",
    ),
    (
        "card size reversed",
        {"geometry": {"card_height_fraction": [0.5, 0.2]}},
        "geometry.card_height_fraction: low 0.5 is above high 0.2",
    ),
    (
        "card size zero",
        {"geometry": {"card_height_fraction": [0, 0.5]}},
        "geometry.card_height_fraction: expected",
    ),
    ("index size zero", {"geometry": {"min_index_px": 0}}, "geometry.min_index_px: expected"),
    ("negative layout weight", {"layouts": {"fan": -1}}, "layouts.fan: expected a number"),
    ("unknown layout", {"layouts": {"poker": 1}}, "layouts.poker: unknown field"),
    (
        "all layouts off",
        {"layouts": dict.fromkeys(LAYOUT_NAMES, 0)},
        "layouts: at least one layout needs a positive weight",
    ),
    (
        "photo dirs a string",
        {"backgrounds": {"photo_dirs": "/usr/share/wallpapers"}},
        "backgrounds.photo_dirs: expected a list of folder paths",
    ),
    (
        "photo dirs numbers",
        {"backgrounds": {"photo_dirs": [1, 2]}},
        "backgrounds.photo_dirs: expected a list of folder paths",
    ),
    (
        "printed pages above 1",
        {"backgrounds": {"printed_probability": 1.5}},
        "backgrounds.printed_probability: expected a number in [0, 1]",
    ),
    (
        "restyled jokers below 0",
        {"geometry": {"joker_restyle_probability": -0.1}},
        "geometry.joker_restyle_probability: expected a number in [0, 1]",
    ),
]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(raw, expected) for _, raw, expected in BAD_CONFIGS],
    ids=[case for case, _, _ in BAD_CONFIGS],
)
def test_bad_config_names_the_field(raw: Any, expected: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config(raw)
    assert expected in str(raised.value)
    assert isinstance(raised.value, ValueError)  # so the CLI reports it and exits 2


GOOD_CONFIGS: list[tuple[str, Any, dict[str, Any]]] = [
    # (case, parsed YAML, attribute path -> expected value)
    ("empty mapping keeps defaults", {}, {"seed": 0, "deck_split": "train"}),
    ("whole float height", {"card_render_height": 480.0}, {"card_render_height": 480}),
    ("sizes as pairs", {"sizes": [[320, 240], [480, 640]]}, {"sizes": ((320, 240), (480, 640))}),
    (
        "one layout on",
        {"layouts": {"single": 1, "table": 0, "hand": 0, "fan": 0, "pits": 0, "pile": 0}},
        {"layouts.single": 1.0, "layouts.fan": 0.0},
    ),
    (
        "partial section keeps other defaults",
        {"photometry": {"blur_probability": 0}},
        {"photometry.blur_probability": 0.0, "photometry.noise_probability": 0.5},
    ),
    ("no photos", {"backgrounds": {"photo_dirs": []}}, {"backgrounds.photo_dirs": ()}),
    ("no printed pages unless asked", {}, {"backgrounds.printed_probability": 0.0}),
    (
        "printed pages",
        {"backgrounds": {"printed_probability": 0.7}},
        {"backgrounds.printed_probability": 0.7},
    ),
    ("jokers keep their marks unless asked", {}, {"geometry.joker_restyle_probability": 0.0}),
    (
        "restyled jokers",
        {"geometry": {"joker_restyle_probability": 0.7}},
        {"geometry.joker_restyle_probability": 0.7},
    ),
]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(raw, expected) for _, raw, expected in GOOD_CONFIGS],
    ids=[case for case, _, _ in GOOD_CONFIGS],
)
def test_good_config_values(raw: Any, expected: dict[str, Any]) -> None:
    config = parse_config(raw)
    for path, value in expected.items():
        found: Any = config
        for part in path.split("."):
            found = getattr(found, part)
        assert found == value, path


@pytest.mark.parametrize(
    ("name", "split"),
    [
        ("scenes.yaml", "train"),
        ("holdout.yaml", "holdout"),
        ("extra.yaml", "extra"),
        ("overexposed.yaml", "train"),
        ("verifier.yaml", "train"),
        ("printed-holdout.yaml", "holdout"),
        ("letters-french.yaml", "letters-french"),
        ("letters-german.yaml", "letters-german"),
        ("letters-russian.yaml", "letters-russian"),
    ],
)
def test_shipped_configs_load(name: str, split: str) -> None:
    """The configs in datasets/ are valid; training uses train decks, validation held-out ones."""
    config = load_config(ROOT / "datasets" / name)
    assert config.deck_split == split
    assert (640, 480) in config.sizes


def test_shipped_configs_have_different_seeds() -> None:
    """Training and validation scenes must not be the same draws."""
    seeds = [
        load_config(ROOT / "datasets" / name).seed
        for name in (
            "scenes.yaml",
            "holdout.yaml",
            "extra.yaml",
            "closeups.yaml",
            "cards.yaml",
            "overexposed.yaml",
            "verifier.yaml",
            "printed-holdout.yaml",
            "letters-french.yaml",
            "letters-german.yaml",
            "letters-russian.yaml",
        )
    ]
    assert len(set(seeds)) == len(seeds)


def test_config_equality_is_by_value() -> None:
    """Workers compare configs to reuse loaded decks; equal files must give equal configs."""
    assert parse_config({"seed": 5}) == parse_config({"seed": 5}) == SceneConfig(seed=5)
    assert parse_config({"seed": 5}) != parse_config({"seed": 6})


def test_load_config_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("seed: 1\nphotometry:\n  blur_probability: 2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.yaml: photometry\.blur_probability: expected"):
        load_config(path)


def test_load_config_rejects_invalid_yaml(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("seed: [1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="is not valid YAML"):
        load_config(path)


def test_load_config_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path / "absent.yaml")


def test_load_config_names_a_file_that_is_not_utf8_and_reads_a_byte_order_mark(
    tmp_path: Path,
) -> None:
    path = tmp_path / "saved.yaml"
    path.write_bytes("seed: 7\n".encode("utf-16"))  # starts with the mark ff fe
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    assert str(refused.value) == f"config {str(path)!r} is not UTF-8 text (byte 0xff at position 0)"
    path.write_bytes(b"\xef\xbb\xbfseed: 7\n")  # UTF-8 saved with a byte-order mark
    assert load_config(path).seed == 7


def test_a_shipped_config_is_found_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``datasets/scenes.yaml`` names the project's config from any working folder; a file of
    that name in the working folder wins, and a missing one is named as given."""
    monkeypatch.chdir(tmp_path)
    assert load_config("datasets/scenes.yaml") == load_config(PROJECT_ROOT / "datasets/scenes.yaml")
    assert project_file("datasets/scenes.yaml") == PROJECT_ROOT / "datasets/scenes.yaml"
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets/scenes.yaml").write_text("seed: 5\n", encoding="utf-8")
    assert load_config("datasets/scenes.yaml").seed == 5
    with pytest.raises(ConfigError, match=r"cannot read config 'datasets/absent\.yaml'"):
        load_config("datasets/absent.yaml")


# ---------------------------------------------------------------------------------------------
# the CLI's error path (no scene is rendered: every case fails before generation)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``handreader ARGV`` (argparse usage errors exit)."""
    try:
        status = cli.main(list(argv))
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else 1
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cli_bad_config_exits_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text("geometry:\n  max_tilt_degrees: 90\n", encoding="utf-8")
    status, out, err = run_cli(
        capsys, "synth", "--config", str(config), "--out", str(tmp_path / "out"), "--count", "2"
    )
    assert status == 2
    assert out == ""
    assert err.startswith("handreader synth: error: ")
    assert "geometry.max_tilt_degrees: expected a number in [0, 75], got 90" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--out", "OUT", "--count", "2"], "--config is required"),
        (["--config", "datasets/scenes.yaml", "--out", "OUT"], "--count is required"),
        (
            ["--config", "datasets/scenes.yaml", "--out", "OUT", "--count", "0"],
            "expected at least 1",
        ),
        (["--config", "datasets/scenes.yaml", "--out", "OUT", "--count", "x"], "expected a whole"),
        (
            ["--config", "datasets/scenes.yaml", "--out", "OUT", "--count", "1", "--workers", "0"],
            "expected at least 1",
        ),
        (
            ["--config", "datasets/scenes.yaml", "--out", "OUT", "--count", "1", "--start", "-1"],
            "expected at least 0",
        ),
        (["--preview-only", "--out", "OUT"], "no scenes to preview"),
        # a generation's options, which the sheet of scenes already written would not heed
        (
            ["--preview-only", "--out", "OUT", "--config", "datasets/scenes.yaml", "--count", "1"],
            "takes no --config, --count (--preview writes scenes, then their sheet)",
        ),
        (["--preview-only", "--out", "OUT", "--start", "0"], "takes no --start"),
        (["--preview-only", "--out", "OUT", "--workers", "2"], "takes no --workers"),
    ],
)
def test_cli_bad_arguments_exit_2(
    argv: list[str], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [str(tmp_path / "out") if item == "OUT" else item for item in argv]
    argv = [str(ROOT / item) if item.startswith("datasets/") else item for item in argv]
    status, _, err = run_cli(capsys, "synth", *argv)
    assert status == 2
    assert expected in err and len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["--config", "datasets/scenes.yaml", "--out", "", "--count", "1"],
        ["--config", "datasets/scenes.yaml", "--out", " ", "--count", "1"],
        ["--preview-only", "--out", ""],
    ],
)
def test_cli_refuses_an_empty_out_which_would_be_the_current_folder(
    argv: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = [str(ROOT / item) if item.startswith("datasets/") else item for item in argv]
    status, out, err = run_cli(capsys, "synth", *argv)
    assert status == 2 and out == ""
    assert "argument --out: an empty path names no folder" in err and len(err.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []  # nothing written here


def test_cli_names_a_config_that_is_not_utf8(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "saved.yaml"
    config.write_bytes(b"\xffseed: 7\n")
    status, _, err = run_cli(
        capsys, "synth", "--config", str(config), "--out", str(tmp_path / "out"), "--count", "1"
    )
    assert status == 2
    assert err == (
        f"handreader synth: error: config {str(config)!r} is not UTF-8 text "
        "(byte 0xff at position 0)\n"
    )


@pytest.mark.parametrize(
    "path", sorted((ROOT / "datasets").glob("*.yaml")), ids=lambda path: path.name
)
def test_every_shipped_config_loads(path: Path) -> None:
    """Each config in datasets/ is valid, so its documented command runs."""
    assert isinstance(load_config(path), SceneConfig)


def test_the_joker_config_is_the_training_config_with_more_jokers_drawn_otherwise() -> None:
    """datasets/jokers.yaml draws the training scenes' world (decks, layouts, camera), with
    jokers in most scenes and most of them drawn with another mark, from its own seed."""
    scenes = load_config(ROOT / "datasets" / "scenes.yaml")
    jokers = load_config(ROOT / "datasets" / "jokers.yaml")
    assert jokers.seed != scenes.seed
    assert jokers.geometry.joker_probability > scenes.geometry.joker_probability
    assert jokers.geometry.joker_restyle_probability > 0.5
    assert replace(jokers, seed=scenes.seed, geometry=scenes.geometry) == scenes
