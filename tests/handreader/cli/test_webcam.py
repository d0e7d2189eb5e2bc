"""``handreader webcam`` on a generated video file: headless output, keys, errors.

The video is ``live_scene.py``'s still table written with ``cv2.VideoWriter``; the reader is its
fake (``NoisyReader``), which decodes the frame number from the picture, so these tests do not
depend on model accuracy. One test uses the real recognizer when ``models/manifest.json`` exists.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from live_scene import LAYOUT, SIZE_WH, NoisyReader, render_frame, write_video
from numpy.typing import NDArray

from handreader import cli
from handreader.cli import webcam
from handreader.cli.webcam import Key, WebcamError, key_action, parse_source, run_webcam
from handreader.tables.live import LiveFrame, LiveSettings
from rules.niuniu_profiles import NIU_PROFILES

FRAMES = 40
MODELS = Path(os.environ.get("HANDREADER_MODELS") or Path(__file__).resolve().parents[3] / "models")


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_video(tmp_path_factory.mktemp("video") / "table.mp4", FRAMES)


def frames_of(path: Path) -> list[NDArray[np.uint8]]:
    capture = cv2.VideoCapture(str(path))
    frames = []
    while True:
        ok, image = capture.read()
        if not ok:
            break
        frames.append(image)
    capture.release()
    return frames


def test_the_generated_video_carries_its_frame_numbers(video: Path) -> None:
    # (the fake reader depends on it)
    from live_scene import frame_number

    assert [frame_number(image) for image in frames_of(video)] == list(range(FRAMES))


def test_headless_run_writes_the_annotated_video(
    video: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reader = NoisyReader(seed=2, misread=0.1, miss=0.05, ghost=0.05)
    from vision import reader as reader_module

    monkeypatch.setattr(reader_module.Reader, "load", classmethod(lambda cls, *a, **k: reader))
    out = tmp_path / "annotated.mp4"
    status = cli.main(
        [
            "webcam",
            "--source",
            str(video),
            "--headless",
            "--output",
            str(out),
            "--read-every",
            "1",
            "--json",
        ]
    )
    assert status == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["frames"] == FRAMES and stats["reads"] == FRAMES
    # every frame read once (two at once by default, so they may finish in either order)
    assert sorted(reader.frames_read) == list(range(FRAMES))
    # 10 % misreads, yet no shown code ever changed
    assert stats["flicker"]["code_changes"] == 0
    written = frames_of(out)
    assert len(written) == FRAMES
    assert written[0].shape == (SIZE_WH[1], SIZE_WH[0], 3)
    source = frames_of(video)
    last, original = written[-1].astype(int), source[-1].astype(int)
    # the overlay is drawn: the status bar at the top left, the banker's gold around its cards
    assert np.abs(last - original).mean() > 3
    x1, y1, x2, y2 = (round(v) for v in LAYOUT[0][1])
    gold = np.array([0, 190, 255])  # the annotator's banker colour (255, 190, 0) in BGR
    patch = written[-1][y1 - 4 : y2 + 4, x1 - 4 : x2 + 4].reshape(-1, 3).astype(int)
    assert (np.abs(patch - gold).sum(axis=1) < 90).any()


def test_headless_run_with_read_every_reads_every_kth_frame(video: Path) -> None:
    reader = NoisyReader(misread=0.0, miss=0.0, ghost=0.0)
    seen: list[LiveFrame] = []
    stats = run_webcam(
        str(video),
        reader=reader,
        settings=LiveSettings(read_every=4),
        headless=True,
        on_frame=seen.append,
    )
    assert stats.frames == FRAMES and stats.reads == FRAMES // 4
    assert reader.frames_read == list(range(0, FRAMES, 4))
    # the tracks are carried between reads: from the 3rd read on, all ten cards are shown
    assert all(len(frame.shown) == 10 for frame in seen[8:])
    assert seen[-1].table.players[0].outcome is not None


@pytest.mark.parametrize("read_every", [1, 3])
def test_overlapped_and_serial_loops_give_the_same_frames(video: Path, read_every: int) -> None:
    # the default loop reads frame N in a worker thread while frame N - 1 is drawn; the
    # results are those of reading each frame before drawing it (--serial), frame by frame
    runs = []
    for overlap in (True, False):
        reader = NoisyReader(seed=6, misread=0.1, miss=0.05, ghost=0.05)
        seen: list[LiveFrame] = []
        stats = run_webcam(
            str(video),
            reader=reader,
            settings=LiveSettings(read_every=read_every),
            headless=True,
            on_frame=seen.append,
            overlap=overlap,
        )
        assert stats.frames == FRAMES and reader.frames_read == list(range(0, FRAMES, read_every))
        runs.append(seen)
    assert runs[0] == runs[1]
    assert {"decode", "draw", "output", "read"} <= set(stats.timings_ms)


def test_serial_flag_reaches_the_loop(
    video: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[bool] = []
    real = webcam.run_webcam

    def spy(*args: object, **kwargs: object) -> webcam.WebcamStats:
        calls.append(bool(kwargs["overlap"]))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(webcam, "run_webcam", spy)
    for extra in ([], ["--serial"]):
        argv = ["webcam", "--source", str(video), "--headless", "--max-frames", "3", *extra]
        assert webcam.run(cli.build_parser().parse_args(argv), reader=NoisyReader()) == 0
    assert calls == [True, False]
    capsys.readouterr()


def test_no_memory_flag_reaches_the_live_settings(
    video: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    remembered: list[bool] = []
    real = webcam.run_webcam

    def spy(*args: object, **kwargs: object) -> webcam.WebcamStats:
        settings = kwargs["settings"]
        assert isinstance(settings, LiveSettings)
        remembered.append(settings.remember)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(webcam, "run_webcam", spy)
    for extra in ([], ["--no-memory"]):
        argv = ["webcam", "--source", str(video), "--headless", "--max-frames", "3", *extra]
        assert webcam.run(cli.build_parser().parse_args(argv), reader=NoisyReader()) == 0
    assert remembered == [True, False]
    capsys.readouterr()


@pytest.mark.parametrize(
    ("extra", "ahead", "threads"),
    [
        ([], 2, 1),  # the default: two frames read at once, each reading on one thread
        (["--ahead", "1"], 1, None),  # one frame at a time, its models on every core
        (["--ahead", "3"], 3, 1),
        (["--serial"], 2, None),  # serially nothing is read at once
    ],
)
def test_frames_read_at_once_share_the_cores(
    extra: list[str],
    ahead: int,
    threads: int | None,
    video: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from vision import reader as reader_module

    loaded: list[object] = []
    given: list[object] = []
    real = webcam.run_webcam

    def load(cls: object, *args: object, **kwargs: object) -> NoisyReader:
        loaded.append(kwargs.get("threads"))
        return NoisyReader()

    def spy(*args: object, **kwargs: object) -> webcam.WebcamStats:
        given.append(kwargs["ahead"])
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(reader_module.Reader, "load", classmethod(load))
    monkeypatch.setattr(webcam, "run_webcam", spy)
    monkeypatch.setattr(webcam.os, "cpu_count", lambda: 2)  # a 2-core computer
    argv = ["webcam", "--source", str(video), "--headless", "--max-frames", "5", *extra]
    assert cli.main(argv) == 0
    assert loaded == [threads] and given == [ahead]
    assert "5 frames" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("ahead", "cores", "threads"),
    [(1, 8, None), (2, 2, 1), (2, 8, 4), (3, 8, 2), (4, 2, 1), (2, 1, 1)],
)
def test_frames_read_at_once_get_an_equal_share_of_the_cores(
    ahead: int, cores: int, threads: int | None
) -> None:
    assert webcam.reading_threads(ahead, cores) == threads


def test_max_frames_stops_early(video: Path) -> None:
    stats = run_webcam(str(video), reader=NoisyReader(), headless=True, max_frames=7)
    assert stats.frames == 7


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--source", "no-such-video.mp4"], "cannot open video source 'no-such-video.mp4'"),
        (["--source", "{text}"], "cannot open video source"),
        (["--source", "99"], "cannot open video source camera 99"),
        (["--source", " "], "empty video source"),
        (["--source", "{video}", "--max-frames", "0"], "--max-frames must be 1 or more"),
        (["--source", "{video}", "--ahead", "0"], "--ahead must be 1 or more, got 0"),
        (["--source", "{video}", "--confirm-frames", "0"], "--confirm-frames must be 1 or more"),
        (["--source", "{video}", "--drop-after", "0"], "--drop-after must be 1 or more, got 0"),
        (["--source", "{video}", "--read-every", "-1"], "--read-every must be 0 or more, got -1"),
        (["--source", "{tmp}"], "a folder, not a video file"),
        (["--source", "{video}", "--output", "{video}"], "is the source video"),
    ],
)
def test_bad_arguments_are_a_clear_error_with_exit_status_2(
    argv: list[str],
    message: str,
    video: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a video")
    from vision import reader as reader_module

    fake = NoisyReader()
    monkeypatch.setattr(reader_module.Reader, "load", classmethod(lambda cls, *a, **k: fake))
    argv = [arg.format(text=text, video=video, tmp=tmp_path) for arg in argv]
    assert cli.main(["webcam", *argv, "--headless"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("handreader webcam: error: ") and message in error


def test_a_file_with_no_frame_is_one_line_and_exit_status_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """A text file named .jpg opens in OpenCV yet decodes no frame: one line naming it, none
    of the decoder's own messages, status 2 (not "0 frames" and 0)."""
    fake_image = tmp_path / "notimage.jpg"
    fake_image.write_text("hello, not an image")
    from vision import reader as reader_module

    fake = NoisyReader()
    monkeypatch.setattr(reader_module.Reader, "load", classmethod(lambda cls, *a, **k: fake))
    assert cli.main(["webcam", "--source", str(fake_image), "--headless"]) == 2
    out, err = capfd.readouterr()
    assert out == ""
    assert err == (
        f"handreader webcam: error: cannot read video source {str(fake_image)!r}: no frame "
        "decodes (not a video or image)\n"
    )


def test_a_window_without_a_display_is_a_clear_error(
    video: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    with pytest.raises(WebcamError, match="no display"):
        run_webcam(str(video), reader=NoisyReader())


def test_the_command_refuses_a_window_without_display_before_loading_models(
    video: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    assert cli.main(["webcam", "--source", str(video), "--models", "/nonexistent"]) == 2
    assert "no display to open a window on" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("code", "action"),
    [
        (-1, Key.NONE),
        (ord("q"), Key.QUIT),
        (27, Key.QUIT),
        (ord("p"), Key.PAUSE),
        (ord(" "), Key.PAUSE),
        (ord("s"), Key.SNAPSHOT),
        (ord("n"), Key.NEXT_PROFILE),
        (ord("N") | 0x100000, Key.NEXT_PROFILE),  # modifier bits from some back ends
        (ord("x"), Key.NONE),
    ],
)
def test_key_actions(code: int, action: Key) -> None:
    assert key_action(code) is action


@pytest.mark.parametrize(
    ("text", "source"),
    [("0", 0), ("2", 2), ("table.mp4", "table.mp4"), ("rtsp://cam/1", "rtsp://cam/1")],
)
def test_parse_source(text: str, source: int | str) -> None:
    assert parse_source(text) == source


class ScriptedDisplay:
    """A window stand-in: records what is shown and presses keys at given frames."""

    def __init__(self, keys: dict[int, str]) -> None:
        self.keys = keys
        self.shown: list[NDArray[np.uint8]] = []
        self.closed = False

    def show(self, image: NDArray[np.uint8]) -> None:
        self.shown.append(image)

    def wait_key(self, milliseconds: int) -> int:
        key = self.keys.get(len(self.shown))
        return -1 if key is None else ord(key)

    def close(self) -> None:
        self.closed = True


def test_window_keys_snapshot_next_profile_pause_and_quit(video: Path, tmp_path: Path) -> None:
    display = ScriptedDisplay({5: "s", 6: "n", 8: "p", 11: "p", 14: "q"})
    seen: list[LiveFrame] = []
    stats = run_webcam(
        str(video),
        reader=NoisyReader(misread=0.0, miss=0.0, ghost=0.0),
        display=display,
        snapshots=tmp_path / "snaps",
        on_frame=seen.append,
    )
    assert display.closed
    # 14 pictures shown; the three shown while paused (after keys at 8, 9, 10) read no frame
    assert len(display.shown) == 14
    assert stats.frames == len(seen) == 14 - 3
    assert len(stats.snapshots) == 1 and stats.snapshots[0].parent == tmp_path / "snaps"
    snapshot = cv2.imread(str(stats.snapshots[0]))
    assert np.array_equal(snapshot, display.shown[4])
    names = list(NIU_PROFILES)
    assert stats.profile == names[(names.index("trainer") + 1) % len(names)]
    assert seen[-1].table.profile.name == stats.profile


def test_iter_frames_stop_when_the_window_is_closed(video: Path) -> None:
    class Closing(ScriptedDisplay):
        def wait_key(self, milliseconds: int) -> int:
            return -2 if len(self.shown) == 3 else -1

    display = Closing({})
    stats = run_webcam(str(video), reader=NoisyReader(), display=display)
    assert stats.frames == 3


def test_register_adds_the_webcam_command() -> None:
    assert "webcam" in cli.COMMANDS
    args = cli.build_parser().parse_args(["webcam", "--headless", "--max-frames", "2"])
    assert args.func is webcam.run and args.source == "0" and args.read_every == 0
    # the tracker's own defaults (vision.tracking.TrackerSettings)
    assert (args.confirm_frames, args.drop_after, args.serial) == (3, 8, False)


def _still_video_of(image: NDArray[np.uint8], path: Path, frames: int) -> Path:
    writer = cv2.VideoWriter(
        str(path), cv2.VideoWriter.fourcc(*"mp4v"), 25.0, (image.shape[1], image.shape[0])
    )
    for _ in range(frames):
        writer.write(image)
    writer.release()
    return path


def _photos() -> Iterator[Path]:
    yield from sorted((Path(__file__).resolve().parents[3] / "examples").glob("*.jpg"))


@pytest.mark.slow
@pytest.mark.skipif(not (MODELS / "manifest.json").is_file(), reason="no models/manifest.json")
def test_real_reader_on_a_still_video(tmp_path: Path) -> None:
    from vision.reader import Reader

    reader = Reader.load(MODELS)
    photo = next(_photos(), None)
    image = render_frame(0) if photo is None else cv2.resize(cv2.imread(str(photo)), SIZE_WH)
    video = _still_video_of(image, tmp_path / "still.mp4", 12)
    seen: list[LiveFrame] = []
    stats = run_webcam(
        str(video),
        reader=reader,
        settings=LiveSettings(read_every=1),
        headless=True,
        output=tmp_path / "out.mp4",
        on_frame=seen.append,
    )
    assert stats.frames == 12 and stats.reads == 12
    assert len(frames_of(tmp_path / "out.mp4")) == 12
    # whatever the reader sees in a still video, the shown cards are the ones it read most
    final = {track.code for track in seen[-1].shown}
    assert final <= {card.code for frame in seen if frame.reading for card in frame.reading.cards}
