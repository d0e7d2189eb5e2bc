"""``handreader serve``: run the HTTP API (the same as ``python serve.py``).

Usage::

    handreader serve [--host 127.0.0.1] [--port 8000] [--workers 1] [--models DIR] [--access-log]

Defaults come from ``HANDREADER_HOST``, ``HANDREADER_PORT`` and ``HANDREADER_WORKERS``. The
endpoints, the limits and the error codes are described in ``serve.py`` and at ``/docs``.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from handreader.service.settings import add_server_arguments

__all__ = ["register", "run"]


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
    from handreader.service.app import run_server

    return run_server(args)
