"""``handreader serve``: run the HTTP API (the same as ``python serve.py``).

Usage::

    handreader serve [--host 127.0.0.1] [--port 8000] [--workers 1] [--models DIR] [--access-log]

Defaults come from ``HANDREADER_HOST``, ``HANDREADER_PORT`` and ``HANDREADER_WORKERS``. The
endpoints, the limits and the error codes are described in ``serve.py`` and at ``/docs``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["add_server_arguments", "register", "run"]


def add_server_arguments(parser: argparse.ArgumentParser, environ: Mapping[str, str]) -> None:
    """``--host --port --workers --models --access-log --ssl-keyfile --ssl-certfile``, defaults
    from ``HANDREADER_*``."""
    parser.add_argument(
        "--host",
        default=environ.get("HANDREADER_HOST", "127.0.0.1"),
        help="address to listen on (default: $HANDREADER_HOST or 127.0.0.1)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=environ.get("HANDREADER_PORT", "8000"),  # (argparse applies ``type`` to it)
        help="port (default: $HANDREADER_PORT or 8000)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=environ.get("HANDREADER_WORKERS", "1"),
        help="worker processes, each loading the models (default: $HANDREADER_WORKERS or 1)",
    )
    parser.add_argument(
        "--models", type=Path, default=None, help="models folder (default: the shipped models)"
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


def register(subparsers: Any) -> None:
    """Add the ``serve`` command to the CLI (the server itself is imported only to run)."""
    parser = subparsers.add_parser(
        "serve",
        help="run the HTTP API (photos and card codes in, scores out)",
        description="Run the handreader HTTP API with uvicorn; the models load once per worker.",
    )
    add_server_arguments(parser, os.environ)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Start the server; returns when it stops."""
    from serve import run_server

    return run_server(args)
