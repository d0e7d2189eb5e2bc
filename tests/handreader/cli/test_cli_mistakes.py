"""Mistakes a user makes on the command line: each is one line naming the problem and exit
status 2, never a traceback, and nothing is read or saved before it is named."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from handreader.cli import main
from handreader.cli._usage import UsageError
from handreader.service.app import check_host, check_models, check_port, check_tls
from handreader.service.settings import server_numbers


@pytest.fixture
def no_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading the models fails the test: the mistake must be named first."""

    def load(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the models were loaded")

    monkeypatch.setattr("vision.reader.Reader.load", load)


def _one_line_error(capsys: pytest.CaptureFixture[str], command: str) -> str:
    err = capsys.readouterr().err
    assert err.startswith(f"handreader {command}: error: "), err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


def test_a_missing_manifest_and_a_folder_for_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_models: None
) -> None:
    assert main(["eval", str(tmp_path / "nosuch.jsonl")]) == 2
    assert _one_line_error(capsys, "eval").endswith("nosuch.jsonl: No such file or directory")
    assert main(["eval", str(tmp_path)]) == 2
    assert _one_line_error(capsys, "eval").endswith(f"{tmp_path}: Is a directory")


def test_an_annotation_folder_that_is_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "taken.jpg"
    taken.write_bytes(b"a file, not a folder")
    root = Path(__file__).resolve().parents[3]
    assert main(["read", str(root / "examples" / "hand.jpg"), "--annotate", str(taken)]) == 2
    assert _one_line_error(capsys, "read").endswith(
        f"--annotate '{taken}' is a file: name a folder for the copies"
    )


@pytest.mark.parametrize(
    ("sheet", "message"),
    [
        ("sheet.txt", "no image format for its extension"),
        ("nowhere/sheet.png", "no folder"),
        ("folder.png/", "is a folder: name an image file"),
    ],
)
def test_a_contact_sheet_that_cannot_be_written_is_named_before_calibrating(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    no_models: None,
    monkeypatch: pytest.MonkeyPatch,
    sheet: str,
    message: str,
) -> None:
    monkeypatch.setenv("HANDREADER_DATA", str(tmp_path / "data"))
    photo = tmp_path / "AS.jpg"
    photo.write_bytes(b"")
    if sheet.endswith("/"):
        (tmp_path / sheet).mkdir()
    argv = ["calibrate", "--name", "mine", "--sheet", str(tmp_path / sheet), str(photo)]
    assert main(argv) == 2
    assert message in _one_line_error(capsys, "calibrate")
    assert not (tmp_path / "data").exists()  # nothing saved


def test_eval_refuses_a_negative_limit_and_a_setting_that_is_no_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_models: None
) -> None:
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text('{"image": "a.jpg", "cards": ["7H"]}\n')
    with pytest.raises(SystemExit) as exited:
        main(["eval", str(manifest), "--limit", "-1"])
    assert exited.value.code == 2 and "expected at least 0, got '-1'" in capsys.readouterr().err
    assert main(["eval", str(manifest), "--set", "verify_below=nan"]) == 2
    assert "verify_below takes a finite number" in _one_line_error(capsys, "eval")


def test_score_takes_the_decks_for_card_codes_and_refuses_photo_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["score", "3H", "3H", "KD", "8C", "6D"]) == 2
    assert "more copies than one deck holds" in _one_line_error(capsys, "score")
    assert main(["score", "3H", "3H", "KD", "8C", "6D", "--decks", "2"]) == 0
    assert capsys.readouterr().out.startswith("3H 3H KD 8C 6D: No Niu")
    assert main(["score", "3H", "7S", "KD", "8C", "6D", "--deck", "mine"]) == 2
    assert "--deck reads photos: not with card codes" in _one_line_error(capsys, "score")
    with pytest.raises(SystemExit) as exited:
        main(["score", "3H", "7S", "KD", "8C", "6D", "--decks", "0"])
    assert exited.value.code == 2
    assert "argument --decks: expected at least 1, got '0'" in _one_line_error(capsys, "score")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["baccarat", "--player", "9H 5C", "--banker", "KD 6S", "--game", "any"], "--game reads"),
        (
            ["blackjack", "--dealer", "KD 7S", "--player", "10H 9C", "--dealer-region", "0,0,1,1"],
            "--dealer-region reads",
        ),
        (
            ["paigow", "--cards", "AS KD 9C 9D 5H 3S 2S", "--deck", "mine", "--indices", "french"],
            "--deck, --indices read",
        ),
        (["score", "3H", "7S", "KD", "8C", "6D", "--models", "elsewhere"], "--models reads"),
        # a side has a default; given with card codes it is named as the regions are
        (
            ["baccarat", "--player", "9H 5C", "--banker", "KD 6S", "--player-side", "left"],
            "--player-side reads",
        ),
        (
            ["blackjack", "--dealer", "KD 7S", "--player", "10H 9C", "--dealer-side", "top"],
            "--dealer-side reads",
        ),
        (
            ["paigow", "--cards", "AS KD 9C 9D 5H 3S 2S", "--player-side", "top"],
            "--player-side reads",
        ),
    ],
)
def test_the_games_refuse_photo_options_with_card_codes(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    """Given card codes, a photo option would pass unheeded: each game names it, as score does."""
    assert main(argv) == 2
    assert f"{message} photos: not with card codes" in _one_line_error(capsys, argv[0])


def test_score_reads_standard_input_saved_with_a_byte_order_mark(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("\ufeff3H 7S KD 8C 6D\n"))
    assert main(["score"]) == 0
    assert capsys.readouterr().out.startswith("3H 7S KD 8C 6D: Niu 4")


def test_tls_files_are_checked_before_the_server_starts(tmp_path: Path) -> None:
    check_tls(None, None)  # plain http
    with pytest.raises(ValueError, match=r"--ssl-keyfile .*: a folder, not a file"):
        check_tls(str(tmp_path), str(tmp_path))
    with pytest.raises(ValueError, match="go together: give both"):
        check_tls(str(tmp_path / "key.pem"), None)
    with pytest.raises(ValueError, match=r"--ssl-keyfile .*: no such file"):
        check_tls(str(tmp_path / "key.pem"), str(tmp_path / "cert.pem"))
    for name in ("key.pem", "cert.pem"):
        (tmp_path / name).write_text("not a PEM file")
    with pytest.raises(ValueError, match="do not load as a pair"):
        check_tls(str(tmp_path / "key.pem"), str(tmp_path / "cert.pem"))


def test_a_listening_address_that_resolves_to_none_is_named_before_the_server_starts(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HANDREADER_HOST", "999.1.1.1")
    assert main(["serve", "--port", "8873"]) == 2
    err = _one_line_error(capsys, "serve")
    assert "--host '999.1.1.1' (or HANDREADER_HOST): no address to listen on" in err
    check_host("127.0.0.1")  # a real one passes


def test_an_empty_deck_or_a_folder_named_as_a_profile_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from vision import reader

    monkeypatch.setattr(reader.Reader, "load", classmethod(lambda cls, *a, **k: object()))
    photo = str(Path(__file__).resolve().parents[3] / "examples" / "hand.jpg")
    assert main(["read", photo, "--deck", ""]) == 2  # was read without a deck, exit 0
    assert "--deck is empty: name a calibrated deck" in _one_line_error(capsys, "read")
    folder = tmp_path / "kept.json"
    folder.mkdir()
    assert main(["read", photo, "--deck", str(folder)]) == 2
    assert f"--deck '{folder}' is a folder: name a profile file" in _one_line_error(capsys, "read")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_port_in_use_is_named_before_the_server_starts(
    capsys: pytest.CaptureFixture[str], workers: str
) -> None:
    """uvicorn's own refusal was its log lines and exit status 3."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port), "--workers", workers]) == 2
    err = _one_line_error(capsys, "serve")
    assert f"cannot listen on 127.0.0.1:{port} (--host, --port or HANDREADER_HOST, _PORT): " in err
    assert "in use" in err
    check_port("127.0.0.1", port)  # free again


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("HANDREADER_PORT", "abc", "HANDREADER_PORT: 'abc' is not a port number"),
        ("HANDREADER_PORT", "70000", "HANDREADER_PORT: 70000 is not a port"),
        ("HANDREADER_WORKERS", "0", "HANDREADER_WORKERS: at least 1 worker, got 0"),
    ],
)
def test_a_bad_server_number_in_the_environment_is_named_not_blamed_on_a_flag(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
    message: str,
) -> None:
    monkeypatch.setenv(variable, value)
    args = argparse.Namespace(port=None, workers=None)
    server_numbers(args, {})  # unset: the defaults
    assert (args.port, args.workers) == (8000, 1)
    assert main(["serve"]) == 2
    err = _one_line_error(capsys, "serve")
    assert message in err and "argument --" not in err


def test_serve_py_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from handreader.service.app import main as serve_main

    for argv, message in ((["--port", "abc"], "argument --port: 'abc' is not a port number"),
                          (["--bogus"], "unrecognized arguments: --bogus"),
                          (["--work", "2"], "unrecognized arguments: --work 2")):  # fmt: skip
        with pytest.raises(SystemExit) as exited:
            serve_main(argv)
        assert exited.value.code == 2
        err = capsys.readouterr().err
        assert err == f"serve.py: error: {message} (see serve.py --help)\n"


def test_a_models_folder_without_a_manifest_is_named_before_the_server_starts(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HANDREADER_MODELS", str(tmp_path))  # serve sets it: undone after
    assert main(["serve", "--port", "8873", "--models", str(tmp_path)]) == 2
    err = _one_line_error(capsys, "serve")
    assert f"--models '{tmp_path}' (or HANDREADER_MODELS): no manifest.json in it" in err
    monkeypatch.setenv("HANDREADER_MODELS", str(tmp_path / "missing"))
    assert main(["serve", "--port", "8873"]) == 2
    assert "no such folder" in _one_line_error(capsys, "serve")
    (tmp_path / "a.jpg").write_bytes(b"a photo")
    monkeypatch.setenv("HANDREADER_MODELS", str(tmp_path / "a.jpg"))
    assert main(["serve", "--port", "8873"]) == 2
    assert "a.jpg' (or HANDREADER_MODELS): a file, not a folder" in _one_line_error(capsys, "serve")
    (tmp_path / "manifest.json").write_text("[1, 2")
    with pytest.raises(ValueError, match=r"manifest\.json is unreadable"):
        check_models(tmp_path)
    (tmp_path / "manifest.json").write_text("[]")
    with pytest.raises(ValueError, match="not a JSON object"):
        check_models(tmp_path)
    check_models(Path(__file__).resolve().parents[3] / "models")  # the shipped models pass


def test_help_shows_no_docstring_markup(capsys: pytest.CaptureFixture[str]) -> None:
    from handreader.cli import COMMANDS

    for command in COMMANDS:
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = capsys.readouterr().out
        assert "``" not in out and ":mod:" not in out and ":func:" not in out, command


@pytest.mark.parametrize("command", ["read", "eval"])
def test_readers_without_ray_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_models: None, command: str
) -> None:
    target = tmp_path / ("a.jpg" if command == "read" else "m.jsonl")
    target.write_text('{"image": "a.jpg", "cards": ["7H"]}\n')
    assert main([command, str(target), "--readers", "4"]) == 2
    assert "give it with --ray" in _one_line_error(capsys, command)


def test_a_config_that_is_no_yaml_is_one_line_with_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text("scenes:\n  count: [1, 2\n")
    assert (
        main(["synth", "--config", str(config), "--out", str(tmp_path / "o"), "--count", "1"]) == 2
    )
    message = _one_line_error(capsys, "synth")
    assert "is not valid YAML at line 3, column 1" in message, message


def test_webcam_output_must_be_a_video_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_models: None
) -> None:
    argv = ["webcam", "--source", "0", "--headless", "--output", str(tmp_path / "out.txt")]
    assert main(argv) == 2
    assert "a video file (.avi, .m4v, .mkv, .mov, .mp4)" in _one_line_error(capsys, "webcam")


def test_each_audit_action_names_the_settings_it_reads(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for action in ("verify", "checkpoint", "rekey"):
        with pytest.raises(SystemExit):
            main(["audit", action, "--help"])
        shown = " ".join(capsys.readouterr().out.split())
        for name in ("HANDREADER_DATABASE_URL", "HANDREADER_AUDIT_TOKEN", "HANDREADER_AUDIT_KEY"):
            assert name in shown, (action, name)


def test_a_truncated_png_is_one_line_without_the_decoders_own_complaint(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    import cv2

    example = Path(__file__).resolve().parents[3] / "examples" / "hand.jpg"
    ok, encoded = cv2.imencode(".png", cv2.imread(str(example)))
    assert ok
    truncated = tmp_path / "half.png"
    truncated.write_bytes(encoded.tobytes()[: len(encoded) // 2])
    assert main(["read", str(truncated)]) == 2
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "libpng" not in err
    assert err.startswith("handreader read: error: ") and "corrupt or truncated PNG" in err


def test_calibrate_names_a_bad_deck_name_before_reading_and_saves_only_with_its_sheet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bad name is refused before any photo is read; a contact sheet that cannot be written
    leaves the deck saved before as it was."""
    import numpy as np

    from handreader.store.decks import FolderDeckStore
    from vision import calibrate_deck, imageio, reader
    from vision.calibrate_deck import CalibrationResult
    from vision.calibration import DeckProfile

    monkeypatch.setenv("HANDREADER_DATA", str(tmp_path / "data"))
    photo = tmp_path / "AS.jpg"
    photo.write_bytes(b"")
    assert main(["calibrate", "--name", "a/b", str(photo)]) == 2
    assert "bad deck name 'a/b'" in _one_line_error(capsys, "calibrate")

    made = DeckProfile("mine", {"AS": np.ones((1, 4), np.float32)}, "sha", "now")
    monkeypatch.setattr(reader.Reader, "load", classmethod(lambda cls, *a, **k: object()))
    monkeypatch.setattr(
        calibrate_deck,
        "calibrate",
        lambda *a, save, **k: CalibrationResult(
            made, save(made), np.zeros((8, 8, 3), np.uint8), ()
        ),  # saves through ``save`` as the real one does
    )
    monkeypatch.setattr(imageio, "write_image", lambda *a, **k: False)
    saved: list[str] = []
    monkeypatch.setattr(FolderDeckStore, "_write", lambda self, profile: saved.append(profile.name))
    assert main(["calibrate", "--name", "mine", str(photo)]) == 2
    assert "could not be written" in _one_line_error(capsys, "calibrate")
    assert saved == []


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["score", "3H 7S KD 8C 6D"], "handreader score: interrupted"),
        (["--version"], "handreader: interrupted"),  # no command named yet
    ],
)
def test_ctrl_c_while_the_parser_is_built_is_one_line_and_exit_130(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    line: str,
) -> None:
    """Building the parser imports every command (numpy among them): Ctrl-C then is as in the
    command itself (docs/cli.md: one line and exit status 130)."""
    from handreader import cli

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert main(argv) == 130
    assert capsys.readouterr().err == f"{line}\n"


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["read", "examples/hand.jpg", "--annotate", ""], "--annotate"),
        (
            ["webcam", "--source", "examples/hand.jpg", "--headless", "--snapshots", " "],
            "--snapshots",
        ),
        (["train", "--work", ""], "--work"),
    ],
)
def test_an_empty_folder_to_write_into_is_refused(
    argv: list[str], option: str, capsys: pytest.CaptureFixture[str], no_models: None
) -> None:
    """An empty path would be the current folder, the files written among whatever it holds."""
    with pytest.raises(SystemExit) as refused:
        main(argv)
    assert refused.value.code == 2
    assert f"argument {option}: an empty path names no folder" in _one_line_error(capsys, argv[0])


@pytest.mark.parametrize(
    ("argv", "label"),
    [(["audit", "verify"], "handreader audit verify"), (["score", "KS"], "handreader score")],
)
def test_a_usage_error_is_named_by_the_parser_of_the_command_given(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    label: str,
) -> None:
    def refuse(_args: argparse.Namespace) -> int:
        raise UsageError("--this does not go with --that")

    monkeypatch.setattr(f"handreader.cli.{argv[0]}.run", refuse)
    assert main(argv) == 2
    expected = f"{label}: error: --this does not go with --that (see {label} --help)\n"
    assert capsys.readouterr().err == expected
