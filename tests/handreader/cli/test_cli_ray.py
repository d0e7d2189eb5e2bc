"""``handreader read --ray`` and ``handreader eval --ray`` (handreader.cli.ray_runner).

Expectations from the product's requirements: "Without --ray nothing changes and Ray is not
imported"; "A local Ray instance (ray.init() with 2 CPUs) reads a folder of rendered tables with the
same results as the plain command"; "results in the same JSON lines, and a failed photo named
without stopping the run". The Ray cases are slow (a Ray instance starts) and skip without the scale
extra.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from live_scene import render_frame

from handreader.cli import main, ray_runner
from handreader.cli.ray_runner import (
    PhotoReader,
    RayRunError,
    ReadOutcome,
    check_reachable,
    is_ray_address,
)
from handreader.cli.read import ray_address

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "hand.jpg"
needs_models = pytest.mark.skipif(
    not (ROOT / "models" / "manifest.json").is_file(), reason="needs the shipped models"
)


@needs_models
def test_a_plain_read_never_imports_ray() -> None:
    script = (
        "import sys\n"
        "from handreader.cli import main\n"
        f"status = main(['read', '--json', {str(EXAMPLE)!r}])\n"
        "assert 'ray' not in sys.modules, 'ray was imported'\n"
        "sys.exit(status)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["image"] == str(EXAMPLE)


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("auto", True), ("local", True), ("ray://head.floor:10001", True),
        ("10.0.0.5:6379", True), ("[::1]:6379", True), ("head:65535", True),
        ("photos/", False), ("table.jpg", False), ("night/2026-12-01", False), ("", False),
        # a port is 1 to 65535 (RFC 6335); Ray Client's address is ray://HOST:PORT
        ("10.0.0.5:99999", False), ("ray://head:0", False), ("ray://", False),
        ("ray://head", False),
    ],
)  # fmt: skip
def test_a_ray_address_is_told_from_a_photo(text: str, address: bool) -> None:
    assert is_ray_address(text) is address


@pytest.mark.parametrize(
    ("given", "address", "photos"),
    [
        ("", None, ["b.jpg"]),
        ("auto", "auto", ["b.jpg"]),
        ("a.jpg", None, ["a.jpg", "b.jpg"]),  # --ray a.jpg b.jpg: a local run of both
        ("./head:99999", None, ["./head:99999", "b.jpg"]),  # a folder named: a photo's name
        ("head:6379", "head:6379", ["b.jpg"]),
    ],
)
def test_ray_takes_an_optional_address(given: str, address: str | None, photos: list[str]) -> None:
    args = argparse.Namespace(ray=given, photos=["b.jpg"])
    assert ray_address(args, "photos") == address
    assert args.photos == photos


@pytest.fixture
def ray_never_started(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any start of, or connection to, Ray fails the test (and starts nothing)."""

    def refuse(address: str | None) -> None:
        raise AssertionError(f"Ray was started or joined (address {address!r})")

    monkeypatch.setattr(ray_runner, "_connect", refuse)


def _manifest(folder: Path) -> Path:
    manifest = folder / "manifest.jsonl"
    manifest.write_text(json.dumps({"image": str(EXAMPLE), "cards": ["AS"]}) + "\n")
    return manifest


@pytest.mark.parametrize("command", ["read", "eval"])
def test_a_bad_model_folder_is_named_before_ray_starts(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], ray_never_started: None
) -> None:
    # the same line and status as the command without --ray, which checks the folder first
    given = str(EXAMPLE) if command == "read" else str(_manifest(tmp_path))
    plain = [command, "--models", str(tmp_path / "nowhere"), given]
    assert main(plain) == 2
    expected = capsys.readouterr().err
    assert expected == (
        f"handreader {command}: error: no model manifest at "
        f"{str(tmp_path / 'nowhere' / 'manifest.json')!r}\n"
    )
    assert main([command, "--ray", "--readers", "1", *plain[1:]]) == 2
    assert capsys.readouterr().err == expected


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("ray://", "not a Ray address (auto, local, HOST:PORT or ray://HOST:PORT)"),
        ("ray:", "not a Ray address (auto, local, HOST:PORT or ray://HOST:PORT)"),
        ("ray://head", "not a Ray address (auto, local, HOST:PORT or ray://HOST:PORT)"),
        ("http://head:8265", "not a Ray address (auto, local, HOST:PORT or ray://HOST:PORT)"),
        ("[::1]", "not a Ray address (auto, local, HOST:PORT or ray://HOST:PORT)"),
        ("head:", "not a Ray address (auto, local, HOST:PORT or ray://HOST:PORT)"),
        ("127.0.0.1:99999", "the port must be 1 to 65535, got 99999"),
        ("ray://head.floor:0", "the port must be 1 to 65535, got 0"),
    ],
)
@pytest.mark.parametrize("command", ["read", "eval"])
def test_a_malformed_address_is_a_one_line_error(
    command: str,
    address: str,
    problem: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    ray_never_started: None,
) -> None:
    given = str(EXAMPLE) if command == "read" else str(_manifest(tmp_path))
    assert main([command, "--ray", address, given]) == 2
    label = f"handreader {command}"
    expected = f"{label}: error: --ray {address!r}: {problem} (see {label} --help)\n"
    assert capsys.readouterr().err == expected


def test_a_worker_that_cannot_load_the_models_fails_its_first_batch(tmp_path: Path) -> None:
    # its start succeeds: Ray would start a reader that fails there again and again
    reader = PhotoReader(str(tmp_path), None)
    batch = {"index": np.array([0]), "photo": np.array([str(EXAMPLE)], dtype=object)}
    where = str(tmp_path / "manifest.json")
    with pytest.raises(RayRunError) as raised:
        reader(batch)
    assert str(raised.value) == f"a worker cannot load the models: no model manifest at {where!r}"


def test_a_failed_run_is_told_by_the_workers_own_error() -> None:
    # the shape of a Ray Data failure whose worker raised RayRunError (Ray 2.60)
    told = (
        "ray::MapWorker(MapBatches(PhotoReader)).submit() (pid=1, ip=10.0.0.2)\n"
        '  File "ray_runner.py", line 166, in __call__\n'
        "handreader.cli.ray_runner.RayRunError: a worker cannot load the models: no manifest\n"
        "\nThe above exception was the direct cause of the following exception:\n\n"
        "ray.exceptions.UserCodeException: UDF failed to process a data block.\n"
        "To change retry attempts, configure `ray.data.DataContext.get_current()`."
    )
    reason = ray_runner._failure_reason(RuntimeError(told))
    assert reason == "a worker cannot load the models: no manifest"
    assert ray_runner._failure_reason(RuntimeError("the head went away")) == "the head went away"


@pytest.mark.parametrize(("terminal", "bar"), [(False, None), (True, "labelled")])
def test_eval_on_ray_shows_its_progress_bar_only_on_a_terminal(
    terminal: bool,
    bar: str | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # as without --ray (the eval command's docstring): a log file gets no bar's redraws
    folder = tmp_path / "labelled"
    folder.mkdir()
    manifest = _manifest(folder)
    asked: list[str | None] = []

    def read_on_ray(
        photos: list[str], job: object, progress: str | None = None
    ) -> Iterator[ReadOutcome]:
        asked.append(progress)
        for photo in photos:
            yield ReadOutcome(photo, None, ("unreadable", f"{photo}: not read here"))

    monkeypatch.setattr(ray_runner, "read_on_ray", read_on_ray)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal)
    assert main(["eval", "--ray", str(manifest)]) == 2  # its one photo failed
    assert asked == [bar]
    assert "not read here" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["read"], ["read", "--ray"], ["eval", "--ray", "auto"]])
def test_a_command_without_inputs_is_a_one_line_error(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(command) == 2
    wanted = "PHOTO" if command[0] == "read" else "MANIFEST"
    label = f"handreader {command[0]}"
    assert capsys.readouterr().err == (
        f"{label}: error: give at least one {wanted} (see {label} --help)\n"
    )


def test_annotate_is_refused_with_ray(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["read", "--ray", "--annotate", str(tmp_path), str(EXAMPLE)])
    assert status == 2
    assert capsys.readouterr().err.strip() == (
        "handreader read: error: --annotate writes files where the photo is read: not with --ray "
        "(see handreader read --help)"
    )


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:  # a port just freed: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_a_cluster_address_nobody_answers_is_named_at_once() -> None:
    import socket

    port = _closed_port()
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        with pytest.raises(RayRunError, match=f"cannot reach the Ray cluster at {address}: "):
            check_reachable(address, timeout_s=2)
    with socket.socket() as head:  # a port that answers passes
        head.bind(("127.0.0.1", 0))
        head.listen()
        check_reachable(f"ray://127.0.0.1:{head.getsockname()[1]}", timeout_s=2)
    check_reachable("auto")  # no port to try: Ray finds its cluster itself


@needs_models  # the model folder is checked before the cluster is tried
@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs the scale extra")
def test_read_on_a_cluster_nobody_answers_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    address = f"127.0.0.1:{_closed_port()}"
    assert main(["read", "--ray", address, str(EXAMPLE)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"handreader read: error: cannot reach the Ray cluster at {address}")
    assert error.count("\n") == 1


# --- on a local Ray instance -----------------------------------------------------------------


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    if importlib.util.find_spec("ray") is None:
        pytest.skip("needs Ray: pip install 'handreader[scale]'")
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of rendered tables (tests/live_scene.py), the example photo and a broken file."""
    folder = tmp_path_factory.mktemp("tables")
    for index in range(4):
        cv2.imwrite(str(folder / f"table-{index}.jpg"), render_frame(index * 7))
    shutil.copy(EXAMPLE, folder / "hand.jpg")
    (folder / "broken.jpg").write_bytes(b"not an image")
    return folder


def _lines(output: str) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in output.splitlines()]
    for line in lines:
        line.pop("ms", None)  # timings differ from run to run
    return lines


@pytest.mark.slow
@needs_models
def test_ray_reads_a_folder_as_the_plain_command(
    local_ray: None, tables: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["read", "--json", str(tables)]) == 2  # the broken photo
    plain = _lines(capsys.readouterr().out)
    assert main(["read", "--json", "--ray", str(tables)]) == 2
    spread = _lines(capsys.readouterr().out)
    assert spread == plain
    assert [Path(str(line["image"])).name for line in spread] == [
        "broken.jpg", "hand.jpg", "table-0.jpg", "table-1.jpg", "table-2.jpg", "table-3.jpg",
    ]  # fmt: skip
    broken = spread[0]["error"]
    assert isinstance(broken, dict) and broken["code"] == "unsupported_type"
    assert any(line.get("cards") for line in spread)  # the tables were read, not only failed
    # Ray Data's notices of its plan ("Starting execution of Dataset...") are not printed
    executor = logging.getLogger("ray.data._internal.execution.streaming_executor")
    assert not executor.isEnabledFor(logging.WARNING)


@pytest.mark.slow
@needs_models
def test_eval_on_ray_gives_the_plain_figures(
    local_ray: None, tables: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = tables / "manifest.jsonl"
    cards = json.loads((ROOT / "examples" / "hand.json").read_text())["cards"]
    entries = [{"image": "hand.jpg", "cards": cards}, {"image": "broken.jpg", "cards": ["AS"]}]
    entries += [{"image": f"table-{i}.jpg", "cards": ["KH", "QS"]} for i in range(4)]
    manifest.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    assert main(["eval", "--json", str(manifest)]) == 2  # a photo could not be read
    here = capsys.readouterr()
    plain = json.loads(here.out)
    assert "broken.jpg" in here.err  # the failed photo is named
    assert main(["eval", "--json", "--ray", "--readers", "2", str(manifest)]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out) == plain
    assert plain["failed"] == 1 and plain["photos"] == 6
    assert "broken.jpg" in captured.err  # named on the cluster's run too


@pytest.mark.slow
@needs_models
@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs the scale extra")
def test_a_run_on_ray_prints_only_its_readings_and_progress_bar() -> None:
    # the command starts its own local instance (ray.init in the command's process): none of
    # Ray's notices (core_worker.cc's max_restarts warning, Ray Data's plan) reach the terminal
    command = [sys.executable, "-m", "handreader.cli", "read", "--ray", "--readers", "1"]
    done = subprocess.run(
        [*command, str(EXAMPLE)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    plain = subprocess.run(
        [sys.executable, "-m", "handreader.cli", "read", str(EXAMPLE)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.stdout == plain.stdout
    # the bar's redraws (tqdm: "read:  50%|#####     | 1/2 [00:06<00:06,  7.00s/photo]") run
    # on without a newline: what follows one on its line is something else's
    left = re.sub(r"read:\s+\d+%\|[^|]*\| \d+/\d+ \[[^\]]*\]", "", done.stderr)
    assert left.strip() == "", left
