"""Many photos read on a Ray cluster: ``handreader read --ray`` and ``handreader eval --ray``.

The photos' paths become a Ray Data dataset; a pool of reader actors, one per worker process
and each with one CPU, loads the models once (``vision.reader.Reader.load``) and reads the
photos given to it, one at a time, as the plain command does (``handreader.cli.photos``:
decoded upright, a large JPEG at a reduced scale, boxes in the photo's own pixels). The
readings come back in the photos' order. A photo that cannot be read comes back as its error
(code and message) and the run goes on.

Where: ``address`` None (or ``"local"``) starts a local Ray instance (all the machine's CPUs)
unless this process already joined one (``ray.init`` called before); ``"auto"`` joins the
cluster the local machine is part of; ``HOST:PORT`` is a cluster's head; ``ray://HOST:10001``
is a remote cluster through Ray Client (:func:`cluster_address` tells an address from a photo).
Every worker must see the photos at the paths given (a shared folder), and have handreader
installed with the models (or ``models`` at the same path as here: the folder is checked here
first, as the plain command checks it, before Ray starts).

What Ray prints of its own is kept to what a user needs: its Python loggers at ERROR, Ray
Data's at CRITICAL (the run's failure is one line), the workers' output left in their log
files, and the C++ core's log lines at FATAL (``RAY_BACKEND_LOG_LEVEL``, unless it is set).

This module imports Ray (the ``scale`` extra: ``pip install 'handreader[scale]'``); the commands
import it only when ``--ray`` is given.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from handreader.cli._usage import UsageError
from rules.decks import Deck
from vision.calibration import DeckProfile
from vision.detections import Reading
from vision.model_files import ModelError, model_paths

if TYPE_CHECKING:
    from vision.reader import Reader

__all__ = [
    "REACH_TIMEOUT_S",
    "RayJob",
    "RayRunError",
    "ReadOutcome",
    "check_reachable",
    "cluster_address",
    "is_ray_address",
    "read_on_ray",
]

_KEYWORDS = ("auto", "local")
_HOST_PORT = re.compile(r"(?P<host>[A-Za-z0-9][A-Za-z0-9.\-]*|\[[0-9A-Fa-f:.]+\]):(?P<port>\d+)")
_ADDRESS_FORMS = "auto, local, HOST:PORT or ray://HOST:PORT"


def _address_problem(text: str) -> str | None:
    """Why ``text``, written as a cluster's address, names none (None: it names one)."""
    if text in _KEYWORDS:
        return None
    place = text.removeprefix("ray://").removesuffix("/") if text.startswith("ray://") else text
    if "://" in place or not (found := _HOST_PORT.fullmatch(place)):
        return f"not a Ray address ({_ADDRESS_FORMS})"
    if not 1 <= int(found["port"]) <= 65535:
        return f"the port must be 1 to 65535, got {int(found['port'])}"
    return None


def _written_as_address(text: str) -> bool:
    """Whether ``text`` can only be meant as an address: a scheme (``ray://``), a host in
    brackets, or no path separator and a last ``:`` followed by digits or nothing
    (``head:99999``, ``head:``). Any other name is a photo's."""
    if "://" in text or text.startswith("["):
        return True
    return "/" not in text and "\\" not in text and re.fullmatch(r".*:\d*", text) is not None


def is_ray_address(text: str) -> bool:
    """Whether ``text`` names a Ray cluster: ``auto``, ``local``, ``HOST:PORT`` or
    ``ray://HOST:PORT`` (``[IPV6]`` as the host), the port from 1 to 65535."""
    return _address_problem(text) is None


def cluster_address(text: str) -> str | None:
    """What ``--ray TEXT`` names: ``text`` when it is a cluster's address
    (:func:`is_ray_address`), None when it is a photo's name (``--ray PHOTO`` reads PHOTO on a
    local instance); ValueError naming ``text`` when it can only be meant as an address (a
    scheme such as ``ray://``, a host in brackets, or no path separator and a last ``:``
    followed by digits or nothing) but names no cluster: ``ray://``, ``head:99999``. A photo
    whose name looks like an address is given with its folder: ``./head:1``."""
    problem = _address_problem(text)
    if problem is None:
        return text
    if _written_as_address(text):
        raise UsageError(f"--ray {text!r}: {problem}")
    return None


class RayRunError(ValueError):
    """Ray is missing, the cluster cannot be reached, or its readers could not start."""


@dataclass(frozen=True, slots=True)
class RayJob:
    """Where and how to read: the cluster's ``address`` (see the module docstring), the model
    folder (None: the shipped models; the workers see it at the same path), the deck profile,
    how many readers (None: one per CPU of the cluster, at most one per photo), the deck in
    play (None: any card) and its index letters (``vision.index_letters``)."""

    address: str | None = None
    models: Path | None = None
    deck: DeckProfile | None = None
    readers: int | None = None
    in_play: Deck | None = None
    indices: str | None = None


@dataclass(frozen=True, slots=True)
class ReadOutcome:
    """One photo's result: its reading, or the error that stopped it (code, message)."""

    photo: str
    reading: Reading | None
    error: tuple[str, str] | None = None


class PhotoReader:
    """A reader actor: the models loaded once, then photos read one batch at a time.

    A worker that cannot load the models (a folder it does not see) fails its first batch with
    RayRunError saying why, and so the run, rather than its own start: Ray would start it again
    and print each failure's traceback on the command's standard output."""

    def __init__(
        self,
        models: str | None,
        deck: DeckProfile | None,
        in_play: Deck | None = None,
        indices: str | None = None,
    ) -> None:
        from vision.reader import Reader
        from vision.settings import ReaderSettings

        folder = Path(models) if models else None
        self.problem: ModelError | None = None
        self.reader: Reader | None = None
        try:
            self.reader = Reader.load(folder, ReaderSettings(in_play=in_play, indices=indices))
        except ModelError as error:
            self.problem = error
        self.deck = deck

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``{"index", "photo"}`` in; ``{"index", "reading" (pickled), "code", "message"}``
        out, one row per photo (an empty reading and the error when it failed)."""
        from handreader.cli.photos import open_photo

        if self.reader is None:
            raise RayRunError(f"a worker cannot load the models: {self.problem}")

        readings: list[bytes] = []
        codes: list[str] = []
        messages: list[str] = []
        for photo in batch["photo"]:
            try:
                image = open_photo(str(photo))
                reading = image.to_original(self.reader.read(image.image, self.deck))
            except Exception as error:  # a bad photo is reported, never the end of the run
                readings.append(b"")
                codes.append(str(getattr(error, "code", "read_failed")))
                messages.append(str(error) or type(error).__name__)
                continue
            readings.append(pickle.dumps(reading))
            codes.append("")
            messages.append("")
        return {
            "index": np.asarray(batch["index"]),
            "reading": np.array(readings, dtype=object),
            "code": np.array(codes, dtype=object),
            "message": np.array(messages, dtype=object),
        }


REACH_TIMEOUT_S = 5.0
"""How long a cluster's address may take to accept a connection before ``--ray`` gives up (Ray
itself retries an address nobody answers for minutes)."""


def _host_port(address: str) -> tuple[str, int] | None:
    """The host and port of ``HOST:PORT`` or ``ray://HOST:PORT`` (None for ``auto``, ``local``
    or an address without a port)."""
    found = re.match(r"^(?:ray://)?\[?([^\[\]]+?)\]?:(\d{1,5})/?$", address)
    return (found.group(1), int(found.group(2))) if found else None


def check_reachable(address: str, timeout_s: float = REACH_TIMEOUT_S) -> None:
    """RayRunError naming ``address`` when nothing accepts a connection there within
    ``timeout_s`` seconds (the head's port: 6379 for ``HOST:PORT``, Ray Client's 10001)."""
    import socket

    place = _host_port(address)
    if place is None:
        return
    try:
        socket.create_connection(place, timeout=timeout_s).close()
    except OSError as error:
        reason = error.strerror or str(error) or type(error).__name__
        raise RayRunError(
            f"cannot reach the Ray cluster at {address}: {reason} (is its head running, and "
            "is this the port it listens on?)"
        ) from None


_CORE_LOG_LEVEL = "RAY_BACKEND_LOG_LEVEL"
"""The variable that sets the level of Ray's C++ core's log lines, read as the core starts."""


@contextlib.contextmanager
def _quiet_core() -> Iterator[None]:
    """Ray started with its C++ core's log lines at FATAL, unless ``RAY_BACKEND_LOG_LEVEL``
    says otherwise: on a terminal they are notices for Ray's developers (an actor pool's
    ``max_restarts > 0`` warning on every run). The core announces a level so set on standard
    error as it starts, which is therefore sent nowhere meanwhile (a failed start is an
    exception). The variable is unset again after (the processes started keep it)."""
    if _CORE_LOG_LEVEL in os.environ:
        yield
        return
    from handreader.cli.video_source import quiet_stderr

    os.environ[_CORE_LOG_LEVEL] = "fatal"
    try:
        with quiet_stderr():
            yield
    finally:
        os.environ.pop(_CORE_LOG_LEVEL, None)


def _connect(address: str | None) -> Any:
    try:
        import ray.data
    except ImportError:
        raise RayRunError("--ray needs Ray: pip install 'handreader[scale]'") from None
    if ray.is_initialized():
        return ray
    quiet: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": False}
    try:
        if address is None or address == "local":
            with _quiet_core():
                ray.init(include_dashboard=False, **quiet)
        else:
            check_reachable(address)
            with _quiet_core():
                ray.init(address=address, **quiet)
    except (ConnectionError, RuntimeError, ValueError) as error:
        if isinstance(error, RayRunError):
            raise
        where = address or "a local instance"
        said = re.sub(r"by setting [`']--address[`'] flag", "with --ray ADDRESS", str(error))
        raise RayRunError(f"cannot start Ray on {where}: {said}") from None
    return ray


_RAISED = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception)): (.+)$", re.MULTILINE)


def _failure_reason(error: BaseException) -> str:
    """What stopped a Ray run, in one line: the message of the last error raised by other code
    than Ray's in the tracebacks the error carries (a worker's own, without its class), else
    the error's last line."""
    text = str(error).strip()
    raised = [found[2] for found in _RAISED.finditer(text) if not found[1].startswith("ray.")]
    if raised:
        return raised[-1].strip()
    return text.splitlines()[-1] if text else repr(error)


def read_on_ray(
    photos: Sequence[str], job: RayJob, progress: str | None = None
) -> Iterator[ReadOutcome]:
    """Each photo's outcome, in the order given (see the module docstring); ``progress`` names
    a progress bar on standard error (None: none). ModelError, before Ray is started or
    joined, when the model folder fails the plain command's check
    (:func:`vision.model_files.model_paths`); RayRunError when Ray is missing, the cluster
    cannot be reached, or the readers cannot load the models."""
    model_paths(job.models)
    if not photos:
        return
    ray = _connect(job.address)
    from tqdm import tqdm

    # the command's output is the readings and its errors, not Ray Data's notices of its plan
    # nor its tracebacks of a failed run (RayRunError says it in one line); set after Ray Data
    # configures its logger on import (_connect imports it)
    logging.getLogger("ray.data").setLevel(logging.CRITICAL)
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False
    cpus = int(ray.cluster_resources().get("CPU", 1))
    readers = max(1, min(job.readers or cpus, len(photos)))
    items = [{"index": index, "photo": photo} for index, photo in enumerate(photos)]
    # small blocks keep results and the progress bar flowing; a bounded number of them keeps
    # the planning cheap for a night of photos
    blocks = min(len(items), max(readers * 8, 256))
    dataset = ray.data.from_items(items, override_num_blocks=blocks)
    outcomes = dataset.map_batches(
        PhotoReader,
        fn_constructor_kwargs={
            "models": str(job.models.resolve()) if job.models else None,
            "deck": job.deck,
            "in_play": job.in_play,
            "indices": job.indices,
        },
        batch_size=1,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=readers),
        num_cpus=1,
    )
    bar = tqdm(total=len(photos), desc=progress, unit="photo", disable=progress is None)
    try:
        for row in outcomes.iter_rows():
            index = int(row["index"])
            bar.update(1)
            if row["code"]:
                yield ReadOutcome(photos[index], None, (str(row["code"]), str(row["message"])))
            else:
                yield ReadOutcome(photos[index], pickle.loads(row["reading"]))
    except ray.exceptions.RayError as error:
        raise RayRunError(f"the Ray run failed: {_failure_reason(error)}") from None
    finally:
        bar.close()
