"""``handreader webcam`` when things go wrong: Ctrl-C, an output that is the source, a damaged
video, a source with no frame, a display that does not answer; and the one-line usage errors
and Ctrl-C of every command.

The video is ``live_scene.py``'s still table; the reader is its fake (``NoisyReader``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from live_scene import NoisyReader, write_video
from numpy.typing import NDArray

from handreader import cli
from handreader.cli import webcam, window
from handreader.cli.webcam import WebcamError, run_webcam
from handreader.tables.live import LiveFrame

FRAMES = 30


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_video(tmp_path_factory.mktemp("video") / "table.mp4", FRAMES)


@pytest.fixture
def fake_reader(monkeypatch: pytest.MonkeyPatch) -> NoisyReader:
    from vision import reader as reader_module

    reader = NoisyReader(misread=0.0, miss=0.0, ghost=0.0)
    monkeypatch.setattr(reader_module.Reader, "load", classmethod(lambda cls, *a, **k: reader))
    return reader


class ShortCapture:
    """A capture that declares ``declared`` frames and decodes only the first ``decodes``."""

    def __init__(self, video: Path, declared: int, decodes: int) -> None:
        self.inner = cv2.VideoCapture(str(video))
        self.declared, self.decodes, self.read_frames = declared, decodes, 0

    def get(self, prop: int) -> float:
        return float(self.declared) if prop == cv2.CAP_PROP_FRAME_COUNT else self.inner.get(prop)

    def read(self) -> tuple[bool, NDArray[np.uint8] | None]:
        if self.read_frames >= self.decodes:
            return False, None
        self.read_frames += 1
        ok, image = self.inner.read()
        return ok, image

    def release(self) -> None:
        self.inner.release()


def _interrupt_at(frame: int) -> Any:
    def on_frame(live: LiveFrame) -> None:
        if live.index == frame:
            raise KeyboardInterrupt

    return on_frame


@pytest.mark.parametrize("overlap", [True, False])
def test_ctrl_c_ends_the_run_with_its_statistics_and_a_playable_video(
    video: Path, tmp_path: Path, overlap: bool
) -> None:
    out = tmp_path / "annotated.mp4"
    stats = run_webcam(
        str(video),
        reader=NoisyReader(),
        headless=True,
        output=out,
        on_frame=_interrupt_at(5),
        overlap=overlap,
    )
    assert stats.interrupted and stats.frames == 6
    assert "stopped by Ctrl-C" in stats.line() and stats.to_dict()["interrupted"] is True
    written = cv2.VideoCapture(str(out))
    assert int(written.get(cv2.CAP_PROP_FRAME_COUNT)) == 5  # the frames drawn before Ctrl-C
    written.release()


def test_ctrl_c_in_the_command_prints_the_statistics_and_exits_130(
    video: Path,
    fake_reader: NoisyReader,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    real = webcam.run_webcam
    monkeypatch.setattr(
        webcam, "run_webcam", lambda *a, **k: real(*a, **k, on_frame=_interrupt_at(3))
    )
    assert cli.main(["webcam", "--source", str(video), "--headless", "--json"]) == 130
    captured = capsys.readouterr()
    stats = json.loads(captured.out)
    assert stats["interrupted"] is True and stats["frames"] == 4
    assert "Traceback" not in captured.err


def test_ctrl_c_in_any_command_is_one_line_and_exit_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from handreader.cli import score

    def interrupted(args: Any) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(score, "run", interrupted)
    assert cli.main(["score", "AS KS QS JS 10S"]) == 130
    assert capsys.readouterr().err == "handreader score: interrupted\n"


def test_an_output_that_is_the_source_is_refused_and_the_source_kept(
    video: Path, tmp_path: Path, fake_reader: NoisyReader, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "same.mp4"
    source.write_bytes(video.read_bytes())
    for output in (source, tmp_path / "." / "same.mp4"):
        argv = ["webcam", "--source", str(source), "--headless", "--output", str(output)]
        assert cli.main(argv) == 2
        assert "is the source video: it would be overwritten" in capsys.readouterr().err
    assert source.read_bytes() == video.read_bytes()


def test_a_video_name_that_is_not_utf8_is_one_line_not_a_crash(
    video: Path, tmp_path: Path, fake_reader: NoisyReader, capsys: pytest.CaptureFixture[str]
) -> None:
    """OpenCV's video reader and writer stop the process on such a name: it is refused first."""
    import os

    odd = tmp_path / os.fsdecode(b"clip\xe9.mp4")
    odd.write_bytes(video.read_bytes())
    assert cli.main(["webcam", "--source", str(odd), "--headless"]) == 2
    err = capsys.readouterr().err
    assert "cannot open video source" in err and "is not UTF-8 text" in err
    assert len(err.splitlines()) == 1
    output = tmp_path / os.fsdecode(b"out\xe9.mp4")
    assert cli.main(["webcam", "--source", str(video), "--headless", "--output", str(output)]) == 2
    err = capsys.readouterr().err
    assert "the name is not UTF-8 text, which the video writer needs" in err
    assert not output.exists()


def test_webcam_reads_every_frame_with_a_calibrated_deck(
    video: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """docs/cli.md: ``--deck`` reads the live video with a calibrated deck, as the live stream's
    ``deck`` option does; a deck that is not one is one line before the video opens."""
    from vision import reader as reader_module
    from vision.calibration import DeckProfile, profile_json

    class DeckRecorder(NoisyReader):
        def read(self, image: NDArray[np.uint8], deck: Any = None) -> Any:
            self.decks.append(deck)
            return super().read(image)

    recorder = DeckRecorder(misread=0.0, miss=0.0, ghost=0.0)
    recorder.decks = []
    monkeypatch.setattr(reader_module.Reader, "load", classmethod(lambda cls, *a, **k: recorder))
    profile = DeckProfile("mine", {"AS": np.ones((1, 4), np.float32)}, "sha", "now")
    kept = tmp_path / "mine.json"
    kept.write_text(profile_json(profile))
    argv = ["webcam", "--source", str(video), "--headless", "--max-frames", "5"]
    assert cli.main([*argv, "--deck", str(kept)]) == 0
    assert "warning" not in capsys.readouterr().err  # a stand-in names no models
    assert len(recorder.decks) >= 1 and all(deck.name == "mine" for deck in recorder.decks)
    recorder.manifest = {"classifier": {"sha256": "another"}}  # the deck was made for "sha"
    assert cli.main([*argv, "--deck", str(kept)]) == 0
    assert capsys.readouterr().err.startswith(
        "handreader webcam: warning: deck 'mine' was calibrated with other models"
    )
    monkeypatch.setenv("HANDREADER_DATA", str(tmp_path / "data"))
    for name, message in (("nosuch", "no deck profile 'nosuch'"), ("", "--deck is empty")):
        assert cli.main([*argv, "--deck", name]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err


def test_a_video_that_ends_well_before_its_declared_frames_is_read_with_a_warning(
    video: Path,
    fake_reader: NoisyReader,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(webcam, "open_source", lambda source: ShortCapture(video, 60, 19))
    assert cli.main(["webcam", "--source", str(video), "--headless"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("19 frames")
    assert captured.err == (
        "handreader webcam: warning: the video ended after 19 of the 60 frames it declares: "
        "the rest does not decode\n"
    )


@pytest.mark.parametrize(
    ("declared", "decodes", "limit"),
    [(30, 30, None), (31, 30, None), (60, 10, 10)],  # whole; a count off by one; --max-frames
)
def test_no_warning_for_a_video_read_to_its_end_or_to_max_frames(
    video: Path, declared: int, decodes: int, limit: int | None
) -> None:
    stats = run_webcam(
        str(video),
        reader=NoisyReader(),
        headless=True,
        capture=ShortCapture(video, declared, decodes),
        max_frames=limit,
    )
    assert stats.frames == decodes and stats.source_frames == 0


def test_a_stream_that_gives_no_frame_is_an_error(
    video: Path,
    fake_reader: NoisyReader,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(webcam, "open_source", lambda source: ShortCapture(video, 0, 0))
    assert cli.main(["webcam", "--source", "http://camera.local/feed", "--headless"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "handreader webcam: error: no frame could be read from video source "
        "'http://camera.local/feed'\n"
    )


@pytest.fixture
def probe_cache() -> Iterator[None]:
    window._window_problem.cache_clear()
    yield
    window._window_problem.cache_clear()


def test_a_display_that_does_not_answer_is_an_error_not_an_abort(
    monkeypatch: pytest.MonkeyPatch, probe_cache: None
) -> None:
    """A stale DISPLAY made OpenCV's Qt back end abort the process; a child process now tries
    the first window, and the command says what went wrong."""
    monkeypatch.setenv("DISPLAY", ":99")  # no X server answers there
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setattr(cv2, "getBuildInformation", lambda: "  GUI:  QT5\n")
    with pytest.raises(WebcamError, match=r"cannot open a window on display ':99' \(.+\)"):
        window.check_window_support()


def test_a_usage_error_is_one_line_naming_the_command_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for argv, message in (
        (["blackjack", "--stake", "-1"], "--stake must be a positive number, got '-1'"),
        (["paigow", "--cards", "AS KD 9C 9D 5H 3S 2S", "--bogus"], "unrecognized arguments"),
        (["score", "3H", "7S", "--json", "KD", "--bogus"], "unrecognized arguments: --bogus"),
        (["audit", "verify", "--bogus"], "unrecognized arguments"),
        (["paigow", "--house-way", "nope"], "argument --house-way: invalid choice: 'nope'"),
    ):
        with pytest.raises(SystemExit) as exited:
            cli.main(argv)
        assert exited.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err
        assert err.startswith(f"handreader {argv[0]}: error: ")
        assert err.endswith(f"(see handreader {argv[0]} --help)\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "--scenes", "-5"], "--scenes must be at least 1, got -5"),
        (["train", "--round", "--minutes", "-1"], "--minutes must be a positive number"),
        (["webcam", "--max-frames", "0"], "--max-frames must be 1 or more, got 0"),
        (["eval", "x.jsonl", "--set", "verify_below=2"], "verify_below takes a number from 0"),
        (["read"], "give at least one PHOTO"),
        (["read", "--readers", "2", "x.jpg"], "--readers counts the readers of a Ray cluster"),
        (["blackjack", "--dealer", "KD 7S", "--player", ""], "--player 1 holds no card"),
        (["baccarat", "--player", "9H 5C"], "give --player and --banker"),
        (["score", "3H", "7S", "KD", "8C", "6D", "--deck", "mine"], "--deck reads photos"),
        (["synth", "--out", "x"], "--config is required"),
    ],
)
def test_a_refused_option_value_names_the_command_help(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    """The command's own checks of its options end as argparse's refusals do (docs/cli.md)."""
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert err.startswith(f"handreader {argv[0]}: error: ")
    assert err.endswith(f"(see handreader {argv[0]} --help)\n")


@pytest.mark.parametrize("before", [["--json"], ["--bogus"], ["--json", "--bogus"]])
def test_an_option_before_the_command_is_refused_not_dropped(
    capsys: pytest.CaptureFixture[str], before: list[str]
) -> None:
    # ``handreader --json score ...`` printed text and exited 0
    with pytest.raises(SystemExit) as exited:
        cli.main([*before, "score", "3H", "7S", "KD", "8C", "6D"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("handreader: error: unrecognized arguments: ")
    assert f"{' '.join(before)} before the command 'score'" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # an abbreviation was taken for the option it begins: --deck 3 read as --decks 3
        (["round", "--banker", "KS QS JS 10S 9S", "--player", "3H 7S KD 8C 6D", "--deck", "2"],
         "unrecognized arguments: --deck 2"),
        (["score", "3H", "7S", "KD", "8C", "6D", "--js"], "unrecognized arguments: --js"),
        # every command's --decks is 1 to 16, named by argparse alike
        (["score", "3H", "7S", "KD", "8C", "6D", "--decks", "0"],
         "argument --decks: expected at least 1, got '0'"),
        (["baccarat", "--player", "9H 5C", "--banker", "KD 6S", "--decks", "0"],
         "argument --decks: expected at least 1, got '0'"),
        (["blackjack", "--dealer", "KD 7S", "--player", "10H 9C", "--decks", "17"],
         "argument --decks: expected at most 16, got '17'"),
        (["read", "photo.jpg", "--decks", "0"], "argument --decks: expected at least 1, got '0'"),
    ],
)  # fmt: skip
def test_options_are_named_whole_and_decks_are_counted_alike(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert err.endswith(f"(see handreader {argv[0]} --help)\n")


def test_files_may_follow_the_options(capsys: pytest.CaptureFixture[str]) -> None:
    """``read a.jpg --json b.jpg`` reads both, as ``read a.jpg b.jpg --json`` does."""
    example = str(Path(__file__).resolve().parents[3] / "examples" / "hand.jpg")
    assert cli.main(["score", "3H", "7S", "--json", "KD", "8C", "6D"]) == 0
    assert json.loads(capsys.readouterr().out)["label"] == "Niu 4"
    assert cli.main(["read", example, "--json", example]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["image"] for line in lines] == [example, example]
