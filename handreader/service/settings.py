"""The service's settings: limits and the models' place from ``HANDREADER_*``, and the server's
command-line arguments (shared by ``python serve.py`` and ``handreader serve``)."""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from handreader.service.hosts import allowed_hosts
from handreader.service.origins import ORIGINS_ENV, parse_allowed_origins
from vision.imagelimits import DEFAULT_MAX_BYTES, DEFAULT_MAX_DECODED_BYTES, DEFAULT_MAX_PIXELS

__all__ = [
    "DEFAULT_DECODE_MEMORY",
    "MAX_TIMEOUT_S",
    "OneLineParser",
    "Settings",
    "add_server_arguments",
    "server_numbers",
]

MAX_TIMEOUT_S = 86_400.0
"""The longest timeout a ``HANDREADER_*_TIMEOUT`` may set (a day): NaN, infinity and absurd
values stop the server at start, naming the variable."""

DEFAULT_DECODE_MEMORY = 512 * 1024 * 1024
"""The decoding memory budget of a worker: 512 MiB, room for the largest image the default
limits let through (a 200 MiB decoded array peaks at about 458 MiB while it is decoded)."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Service limits and the models' place; :meth:`from_env` reads ``HANDREADER_*``."""

    models_dir: Path | None = None
    max_bytes: int = DEFAULT_MAX_BYTES
    max_pixels: int = DEFAULT_MAX_PIXELS
    max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES
    decode_memory: int = DEFAULT_DECODE_MEMORY
    read_timeout_s: float = 30.0
    read_threads: int = 2
    body_timeout_s: float = 60.0
    live_idle_timeout_s: float = 60.0
    """A live stream silent this long is closed (``handreader.service.live_streams``)."""
    allowed_origins: tuple[str, ...] = ()
    allowed_hosts: frozenset[str] | None = None
    """The ``Host`` names answered (``handreader.service.hosts``); None answers every one."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Settings:
        """Settings from ``HANDREADER_MODELS``, ``_MAX_BYTES``, ``_MAX_PIXELS``,
        ``_MAX_DECODED_BYTES``, ``_DECODE_MEMORY``, ``_READ_TIMEOUT``, ``_READ_THREADS``,
        ``_BODY_TIMEOUT``, ``_LIVE_IDLE_TIMEOUT``, ``_ALLOWED_ORIGINS``
        (``handreader.service.origins``) and ``_ALLOWED_HOSTS`` with the address
        ``handreader serve`` listens on
        (``handreader.service.hosts``);
        ValueError names a bad value."""

        def number(
            name: str, default: float, kind: Callable[[str], float], most: float | None = None
        ) -> Any:
            text = environ.get(f"HANDREADER_{name}")
            if text is None:
                return default
            try:
                value = kind(text)
            except ValueError:
                raise ValueError(f"HANDREADER_{name}={text!r} is not a number") from None
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"HANDREADER_{name}={text!r} must be a positive number")
            if most is not None and value > most:
                raise ValueError(f"HANDREADER_{name}={text!r} must be at most {most:g}")
            return value

        models = environ.get("HANDREADER_MODELS")
        try:
            origins = parse_allowed_origins(environ.get(ORIGINS_ENV, ""))
        except ValueError as error:
            raise ValueError(f"{ORIGINS_ENV}: {error}") from None
        return cls(
            models_dir=Path(models) if models else None,
            max_bytes=number("MAX_BYTES", DEFAULT_MAX_BYTES, int),
            max_pixels=number("MAX_PIXELS", DEFAULT_MAX_PIXELS, int),
            max_decoded_bytes=number("MAX_DECODED_BYTES", DEFAULT_MAX_DECODED_BYTES, int),
            decode_memory=number("DECODE_MEMORY", DEFAULT_DECODE_MEMORY, int),
            read_timeout_s=number("READ_TIMEOUT", 30.0, float, MAX_TIMEOUT_S),
            read_threads=number("READ_THREADS", 2, int),
            body_timeout_s=number("BODY_TIMEOUT", 60.0, float, MAX_TIMEOUT_S),
            live_idle_timeout_s=number("LIVE_IDLE_TIMEOUT", 60.0, float, MAX_TIMEOUT_S),
            allowed_origins=origins,
            allowed_hosts=allowed_hosts(environ),
        )


def _port(text: str) -> int:
    """A TCP port number, 1 to 65535 (argparse names the option and the value otherwise)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port: give 1 to 65535")
    return port


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, the error and where the usage is
    (``serve.py``'s, and the ``handreader`` command's); an option is named whole (``--deck`` is
    never taken for ``--decks``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def refusal(self, message: str) -> str:
        """The line a usage error is told in: the program, the error, where the usage is."""
        return f"{self.prog}: error: {message} (see {self.prog} --help)\n"

    def error(self, message: str) -> NoReturn:
        self.exit(2, self.refusal(message))


def _workers(text: str) -> int:
    """A count of worker processes, at least 1."""
    try:
        workers = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if workers < 1:
        raise argparse.ArgumentTypeError(f"at least 1 worker, got {workers}")
    return workers


def server_numbers(args: argparse.Namespace, environ: Mapping[str, str]) -> None:
    """Fill ``args.port`` and ``args.workers`` that the command line left out from
    ``HANDREADER_PORT`` and ``HANDREADER_WORKERS`` (8000 and 1 when unset); ValueError naming
    the variable for a value that is not one."""
    for name, variable, default, parse in (
        ("port", "HANDREADER_PORT", "8000", _port),
        ("workers", "HANDREADER_WORKERS", "1", _workers),
    ):
        if getattr(args, name, None) is not None:
            continue
        text = environ.get(variable) or default
        try:
            setattr(args, name, parse(text))
        except argparse.ArgumentTypeError as error:
            raise ValueError(f"{variable}: {error}") from None


def add_server_arguments(parser: argparse.ArgumentParser, environ: Mapping[str, str]) -> None:
    """``--host --port --workers --models --access-log --ssl-keyfile --ssl-certfile``: the host
    defaults to ``HANDREADER_HOST``; the port and the workers left out are None until
    :func:`server_numbers` reads ``HANDREADER_PORT`` and ``HANDREADER_WORKERS``."""
    parser.add_argument(
        "--host",
        default=environ.get("HANDREADER_HOST", "127.0.0.1"),
        help="address to listen on (default: $HANDREADER_HOST or 127.0.0.1)",
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=None,  # HANDREADER_PORT is read by server_numbers, so that its errors name it
        help="port (default: $HANDREADER_PORT or 8000)",
    )
    parser.add_argument(
        "--workers",
        type=_workers,
        default=None,
        help="worker processes, each loading the models (default: $HANDREADER_WORKERS or 1)",
    )
    parser.add_argument(
        "--models",
        type=Path,
        default=None,
        metavar="DIR",
        help="models folder (default: $HANDREADER_MODELS or the shipped models)",
    )
    parser.add_argument("--access-log", action="store_true", help="log every request")
    parser.add_argument(
        "--ssl-keyfile",
        default=None,
        help="TLS key file: serve https (phones need it for the camera)",
    )
    parser.add_argument(
        "--ssl-certfile", default=None, help="TLS certificate file (with --ssl-keyfile)"
    )
