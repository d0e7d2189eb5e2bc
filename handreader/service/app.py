"""The handreader HTTP API: photos of card tables in, hands, scores, winners and payouts out.

Run it with ``python serve.py`` (or ``handreader serve``): 127.0.0.1:8000, one worker; flags
``--host --port --workers`` or the environment ``HANDREADER_HOST / _PORT / _WORKERS``. The
models load once per worker, in the app's lifespan; inference runs in a thread pool, so the
event loop keeps answering. Card codes are scored on the event loop itself: a table of codes
costs well under a millisecond of CPU and never waits, less than the hop to a thread and back.
uvicorn parses HTTP with httptools (a dependency) when it is installed, else with h11.

Endpoints (documented with examples at ``/docs``):

- ``GET /health``: 200 when the models are loaded, 503 otherwise; the answer names the models
  and the store (backend, location, schema version, whether the database answers).
- ``POST /v1/read``: image -> the cards read, with boxes and confidences.
- ``POST /v1/score``: image, or JSON card codes -> hands, splits, scores, winner, payouts.
- ``POST /v1/pits``: image, or JSON card codes -> the play's combination and its verdict.
- ``POST /v1/annotated``: image -> the score drawn over it, JPEG or PNG (``?format=`` or
  ``Accept``).
- ``GET /`` the browser page, ``WS /v1/live``, ``/v1/trainer/*``, ``POST /v1/baccarat``,
  ``/v1/blackjack``, ``/v1/paigow``, ``POST /v1/verify``, ``GET /v1/audit``:
  ``handreader.service.routes.reading`` (its router is included here).

An image comes as a multipart upload (field ``image``, optional JSON field ``options``) or as
the raw request body (options as query parameters: each by name, or all as ``options=<JSON>``).
The type is told from the bytes, never from a name or a header.

Errors become statuses in one place (``handreader.service.errors``: the table and the handlers
that :func:`create_app` installs); the body is always ``{"error": {"code": ..., "message": ...}}``:

====  ========================================================================================
400   ``malformed_json``, ``malformed_multipart``, ``bad_card``, ``bad_hand``,
      ``unknown_profile``, ``bad_options``, ``no_combination``, ``empty``, ``corrupt``,
      ``illegal_play`` (a foul, a draw against the rules), ``bad_declaration`` (verification),
      ``bad_host`` (a ``Host`` name the service does not answer: ``HANDREADER_ALLOWED_HOSTS``),
      ``client_disconnected`` (the client left before its body arrived whole: one log line)
401   ``unauthorized``: missing or wrong operator token (verification, audit log, deck writes)
403   ``forbidden``: deck writes while no operator token is set (and decks are not open)
404   ``not_found`` (the message names the method and path); 405 ``method_not_allowed`` (the
      message and the ``Allow`` header name the methods the path answers)
406   ``not_acceptable``: the annotated image in no format the client accepts
408   ``request_timeout``: a request body slower than ``HANDREADER_BODY_TIMEOUT``
409   ``quota_exceeded``: a deck past the number of decks or the storage they may take;
      ``deck_exists``: a calibration over a deck of its name that would lose cards of it,
      or over one that cannot be read, without ``replace``
429   ``too_many_attempts``: too many wrong operator tokens from one address in a minute
      (``Retry-After`` says when to try again; :mod:`handreader.service.token_guard`)
413   ``too_large`` (bytes), ``too_many_pixels`` (pixels, or the decoded array's bytes: read
      from the header, before decoding), ``too_many_scans`` (a JPEG of more than 64 scans)
415   ``unsupported_type``: not a JPEG, PNG, WebP, BMP, GIF or TIFF; ``unsupported_encoding``:
      a body sent compressed (a ``Content-Encoding`` other than ``identity``)
422   ``validation_error`` (a field of the wrong type or shape), ``missing_image``,
      ``too_small`` (a side under 32 pixels)
500   ``recognizer_failed``, ``audit_failed`` (the audit log's database), ``store_failed``
      (the store's database refused), ``internal_error`` (a bug: logged, the server keeps
      serving)
503   ``not_ready`` (models not loaded), ``recognizer_timeout`` (slower than the limit),
      ``busy`` (the decoding memory budget held by other images past the time limit, or
      another long read of the audit log running in the worker),
      ``audit_not_configured`` (no operator token set), ``store_unavailable`` (the store's
      database cannot be reached)
507   ``storage_full``: the store's disk is full, nothing was written (the photo was read;
      the answer names no path)
====  ========================================================================================
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import FastAPI
from starlette.exceptions import HTTPException

from handreader.drawing.annotate import Annotator
from handreader.service.connections import BodyDeadline, quiet_accept_errors
from handreader.service.cors import CrossOrigin
from handreader.service.deps import (
    NoReader,
    ReaderLike,
    Runtime,
    ServiceHooks,
    get_reader,
    get_runtime,
    load_reader,
)
from handreader.service.encodings import IdentityBodies
from handreader.service.errors import (
    KNOWN_ERRORS,
    UnexpectedErrors,
    describe_error,
    handle_error,
    handle_http,
)
from handreader.service.headers import HeadAsGet, SecurityHeaders, VaryByAccept
from handreader.service.hosts import BIND_ENV, HostCheck
from handreader.service.openapi import install_openapi
from handreader.service.routes.deck_access import DeckAccess
from handreader.service.routes.docs import add_docs_routes
from handreader.service.routes.reading import create_router
from handreader.service.routes.scoring import NEGOTIATED_PATHS, add_scoring_routes
from handreader.service.routes.verification import AuditLogHolder, AuditSettings
from handreader.service.settings import (
    OneLineParser,
    Settings,
    add_server_arguments,
    server_numbers,
)
from handreader.store.database import configured_url

if TYPE_CHECKING:
    from types import FrameType

    import uvicorn

__all__ = ["LIVE_QUEUE", "SHUTDOWN_GRACE_S", "Settings", "create_app", "main", "run_server"]

INTERRUPTED_STATUS = 128 + signal.SIGINT
"""The exit status after Ctrl-C, as a shell reports a process that SIGINT ended."""

SHUTDOWN_GRACE_S = 8
"""Seconds a stopping server (SIGTERM, Ctrl-C) waits for the requests in flight before it
cancels those left (an upload stalled mid-body waits no longer): under a container's usual
ten seconds between its stop signal and its kill."""

LIVE_QUEUE = 2
"""Frames a live connection may send ahead of the one being read: the server stops reading the
connection's socket past them, so a client that does not wait for its answers holds at most
three frames of memory."""


def quiet_decoder_errors() -> None:
    """Keep OpenCV's own error lines (``[ERROR:0@...] grfmt_gif.cpp...``) out of the log: every
    image its decoders refuse is answered, and logged where it must be, with an error of the
    service that names the problem; only fatal ones are still written."""
    import cv2

    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_FATAL)


def create_app(reader: ReaderLike | None = None, settings: Settings | None = None) -> FastAPI:
    """The API. ``reader`` given: used as is; None: ``vision.reader.Reader.load`` runs once in
    the lifespan (a failure leaves the image endpoints answering 503 and is logged).
    ``settings`` None: read from the environment."""
    chosen = settings or Settings.from_env()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        quiet_accept_errors()
        quiet_decoder_errors()
        if reader is None:
            app.state.reader = load_reader(chosen)
        yield
        app.state.runtime.pool.shutdown(wait=False, cancel_futures=True)

    app = FastAPI(
        title="handreader",
        version="1",
        summary=(
            "Read card hands from photos and score them: Niu Niu tables, Zheng Shangyou / "
            "Pits plays, Baccarat, Blackjack and Pai Gow Poker, deck calibration and the "
            "dealer's verification log."
        ),
        description=(__doc__ or "").split("\n\n", 1)[0],
        lifespan=lifespan,
        docs_url=None,  # served from the package's own files (routes/docs.py), not a CDN
        redoc_url=None,
        # /v1/read/ is a 404, not a redirect that has the client send a 20 MiB photo twice
        redirect_slashes=False,
    )
    app.state.reader = reader if reader is not None else NoReader("the models are loading")
    app.state.runtime = Runtime(chosen)
    for family in KNOWN_ERRORS:
        app.add_exception_handler(family, handle_error)
    app.add_exception_handler(HTTPException, handle_http)
    app.add_middleware(UnexpectedErrors)  # any other exception: a bug, answered 500
    app.add_middleware(BodyDeadline, timeout_s=chosen.body_timeout_s)
    app.add_middleware(IdentityBodies)  # a compressed body: 415, before a route misreads it
    app.add_middleware(SecurityHeaders)
    app.add_middleware(HeadAsGet)
    app.add_middleware(CrossOrigin, origins=chosen.allowed_origins)  # (its host checked first)
    app.add_middleware(HostCheck, hosts=chosen.allowed_hosts, origins=chosen.allowed_origins)
    app.add_middleware(VaryByAccept, paths=NEGOTIATED_PATHS)  # (outermost: every answer)
    audit = AuditLogHolder(AuditSettings.from_env())
    app.state.audit = audit  # GET /health reports the store
    decks = DeckAccess.from_env()
    app.state.deck_access = decks  # GET /health takes its token as an operator's
    add_docs_routes(app)
    add_scoring_routes(app, Annotator())
    hooks = ServiceHooks(get_reader, get_runtime, describe_error)
    app.include_router(create_router(hooks, audit, decks))
    install_openapi(app)
    return app


def _tcp_listener(listener: socket.socket) -> socket.socket:
    """The listening socket with its protocol set to TCP.

    uvicorn binds the socket it hands to several workers with protocol 0; accepted connections
    inherit it, and asyncio then leaves Nagle's algorithm on (it sets TCP_NODELAY only for
    IPPROTO_TCP), so every keep-alive response waits ~40 ms for the client's delayed ACK
    (Kludex/uvicorn#3149). Re-wrapping the same descriptor fixes the metadata.
    """
    if listener.family not in (socket.AF_INET, socket.AF_INET6) or listener.proto:
        return listener
    family, kind = listener.family, listener.type
    return socket.socket(family, kind, socket.IPPROTO_TCP, fileno=listener.detach())


def check_tls(keyfile: str | None, certfile: str | None) -> None:
    """ValueError unless the TLS key and certificate are given together and load as a pair
    (checked before the server starts, so that a bad file is one line, not a traceback)."""
    import ssl

    if keyfile is None and certfile is None:
        return
    if keyfile is None or certfile is None:
        raise ValueError("--ssl-keyfile and --ssl-certfile go together: give both")
    for flag, path in (("--ssl-keyfile", keyfile), ("--ssl-certfile", certfile)):
        if not Path(path).is_file():
            why = "a folder, not a file" if Path(path).is_dir() else "no such file"
            raise ValueError(f"{flag} {path!r}: {why}")
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(certfile, keyfile)
    except (ssl.SSLError, OSError) as error:
        raise ValueError(f"the TLS key and certificate do not load as a pair: {error}") from None


def check_host(host: str) -> None:
    """ValueError naming ``--host`` (``$HANDREADER_HOST``) when the address resolves to none
    (checked before the server starts: uvicorn's own message names neither)."""
    import socket

    try:
        socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise ValueError(
            f"--host {host!r} (or HANDREADER_HOST): no address to listen on: {reason}"
        ) from None


def check_port(host: str, port: int) -> None:
    """ValueError naming the address when nothing can listen on ``host``:``port`` (in use, or a
    privileged port), checked before the models load: uvicorn's own refusal is its log lines
    and exit status 3."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        with socket.socket(family, kind, proto) as probe:
            if os.name != "nt":  # as asyncio's server binds: a port left in TIME_WAIT is free
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as error:
        reason = error.strerror or str(error)
        raise ValueError(
            f"cannot listen on {host}:{port} (--host, --port or HANDREADER_HOST, _PORT): {reason}"
        ) from None


def check_models(folder: Path) -> None:
    """ValueError naming ``--models`` (``$HANDREADER_MODELS``) when the folder holds no readable
    model manifest (checked before the server starts; models that fail to load later, a hash
    that does not match, leave a server that answers 503 and logs why)."""
    manifest = folder / "manifest.json"
    if not folder.is_dir():
        why = "a file, not a folder" if folder.exists() else "no such folder"
        raise ValueError(f"--models {str(folder)!r} (or HANDREADER_MODELS): {why}")
    try:
        content = json.loads(manifest.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(
            f"--models {str(folder)!r} (or HANDREADER_MODELS): no manifest.json in it"
        ) from None
    except (OSError, UnicodeError, ValueError) as error:
        raise ValueError(
            f"--models {str(folder)!r}: manifest.json is unreadable: {error}"
        ) from None
    if not isinstance(content, dict):
        raise ValueError(f"--models {str(folder)!r}: manifest.json is not a JSON object")


def run_server(args: argparse.Namespace, factory: str = "handreader.service.app:create_app") -> int:
    """Start uvicorn with the app ``factory`` (an import string; benchmarks pass their own);
    the settings reach every worker by the environment.

    ValueError, before anything starts, for an address, a port (in use, privileged), TLS
    files, models or settings that cannot be used (``HANDREADER_DATABASE_URL`` among them).
    Returns 0 after a clean stop, 1 when uvicorn still refuses to start (its reason in its
    log, then one line), and 130 after Ctrl-C (SIGINT) with one line on stderr (``handreader
    serve: interrupted``), with one worker or several. SIGTERM ends it as uvicorn does: one
    worker re-raises the signal after its shutdown (the process ends by SIGTERM), several
    workers' supervisor returns 0.
    """
    import uvicorn

    from handreader.service.connections import ConnectionLimits

    server_numbers(args, os.environ)  # a count of workers below 1 is refused there
    check_tls(getattr(args, "ssl_keyfile", None), getattr(args, "ssl_certfile", None))
    check_host(args.host)
    check_port(args.host, args.port)
    configured_url(os.environ)  # a URL that is no postgresql:// one, or does not read
    if args.models is not None:
        os.environ["HANDREADER_MODELS"] = str(args.models.resolve())
    settings = Settings.from_env()  # fail here, once, on a bad HANDREADER_* value
    if settings.models_dir is not None:
        check_models(settings.models_dir)
    os.environ[BIND_ENV] = args.host  # the workers answer the names of the address they bind
    ConnectionLimits()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    config = uvicorn.Config(
        factory,
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        access_log=args.access_log,
        log_level="info",
        ssl_keyfile=getattr(args, "ssl_keyfile", None),
        ssl_certfile=getattr(args, "ssl_certfile", None),
        # a live frame is one image: no larger than an upload, and few wait per connection
        ws_max_size=settings.max_bytes,
        ws_max_queue=LIVE_QUEUE,
        # idle and slow connections time out, their number stays under the descriptor limit
        http="handreader.service.connections:GuardedHttpToolsProtocol",
        # a stop (SIGTERM) waits this long for requests in flight, not for a stalled upload
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )
    server = _server(config)
    try:
        if config.workers > 1:
            interrupted = _supervise(config, [_tcp_listener(config.bind_socket())])
        else:
            server.run()  # after a shutdown on SIGINT, uvicorn raises SIGINT again...
            interrupted = bool(getattr(server, "interrupted", False))  # (...unheard if ignored)
    except KeyboardInterrupt:
        interrupted = True
    except SystemExit as stopped:  # uvicorn's own refusal to start, its reason logged above
        if stopped.code in (0, None):
            raise
        print(f"{_program(args)}: error: the server could not start", file=sys.stderr)
        return 1
    if interrupted:
        print(f"{_program(args)}: interrupted", file=sys.stderr)
        return INTERRUPTED_STATUS
    return 0 if config.workers > 1 or server.started else 1


def _server(config: uvicorn.Config) -> uvicorn.Server:
    """uvicorn's server, noting in ``interrupted`` whether SIGINT stopped it: uvicorn raises the
    signal again after its shutdown, but a process started with SIGINT ignored (a background
    job of a script) would not hear it."""
    import uvicorn

    class Server(uvicorn.Server):
        interrupted = False

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if sig == signal.SIGINT:
                self.interrupted = True
            super().handle_exit(sig, frame)

    return Server(config)


def _supervise(config: uvicorn.Config, sockets: list[socket.socket]) -> bool:
    """Run ``config.workers`` workers under uvicorn's supervisor until a signal stops them;
    True when the signal was SIGINT (the supervisor stops alike on SIGINT and SIGTERM and says
    which only in its log)."""
    from uvicorn.supervisors import Multiprocess

    class Supervisor(Multiprocess):
        interrupted = False

        def handle_int(self) -> None:
            self.interrupted = True
            super().handle_int()

    supervisor = Supervisor(config, sockets=sockets)
    supervisor.run()
    return supervisor.interrupted


def _program(args: argparse.Namespace) -> str:
    """The name a message of the server's command starts with: ``handreader serve``, or the
    script's own name (``serve.py``)."""
    command = getattr(args, "command", None)
    return f"handreader {command}" if command else Path(sys.argv[0]).name


def main(
    argv: Sequence[str] | None = None, factory: str = "handreader.service.app:create_app"
) -> int:
    """``python serve.py [--host H] [--port P] [--workers N] [--models DIR]``."""
    parser = OneLineParser(prog="serve.py", description="Run the handreader API.")
    add_server_arguments(parser, os.environ)
    try:
        return run_server(parser.parse_args(argv), factory)
    except ValueError as error:
        print(f"serve.py: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
