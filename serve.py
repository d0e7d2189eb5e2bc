"""The handreader HTTP API: photos of card tables in, hands, scores, winners and payouts out.

Run it with ``python serve.py`` (or ``handreader serve``): 127.0.0.1:8000, one worker; flags
``--host --port --workers`` or the environment ``HANDREADER_HOST / _PORT / _WORKERS``. The
models load once per worker, in the app's lifespan; inference runs in a thread pool, so the
event loop keeps answering. Card codes are scored on the event loop itself: a table of codes
costs well under a millisecond of CPU and never waits, less than the hop to a thread and back.
uvicorn parses HTTP with httptools (a dependency) when it is installed, else with h11.

Endpoints (documented with examples at ``/docs``):

- ``GET /health``: 200 when the models are loaded, 503 otherwise.
- ``POST /v1/read``: image -> the cards read, with boxes and confidences.
- ``POST /v1/score``: image, or JSON card codes -> hands, splits, scores, winner, payouts.
- ``POST /v1/pits``: image, or JSON card codes -> the play's combination and its verdict.
- ``POST /v1/annotated``: image -> the score drawn over it, JPEG or PNG (``?format=`` or
  ``Accept``).
- ``GET /`` the browser page, ``WS /v1/live``, ``/v1/trainer/*``, ``POST /v1/baccarat``,
  ``/v1/blackjack``, ``/v1/paigow``, ``POST /v1/verify``, ``GET /v1/audit``:
  ``handreader.web`` (its router is included here).

An image comes as a multipart upload (field ``image``, optional JSON field ``options``) or as
the raw request body (options as query parameters: each by name, or all as ``options=<JSON>``).
The type is told from the bytes, never from a name or a header.

Errors become statuses in one place (:data:`ERROR_STATUS` and the handlers installed by
:func:`create_app`); the body is always ``{"error": {"code": ..., "message": ...}}``:

====  ========================================================================================
400   ``malformed_json``, ``malformed_multipart``, ``bad_card``, ``bad_hand``,
      ``unknown_profile``, ``bad_options``, ``no_combination``, ``empty``, ``corrupt``,
      ``illegal_play`` (a foul, a draw against the rules), ``bad_declaration`` (verification)
401   ``unauthorized``: missing or wrong operator token (verification, audit log)
404   ``not_found``; 405 ``method_not_allowed``
406   ``not_acceptable``: the annotated image in no format the client accepts
413   ``too_large`` (bytes), ``too_many_pixels`` (read from the header, before decoding)
415   ``unsupported_type``: not a JPEG, PNG, WebP, BMP, GIF or TIFF
422   ``validation_error`` (a field of the wrong type or shape), ``missing_image``,
      ``too_small`` (a side under 32 pixels)
500   ``recognizer_failed``, ``audit_failed`` (the audit log's database), ``internal_error``
      (a bug: logged, the server keeps serving)
503   ``not_ready`` (models not loaded), ``recognizer_timeout`` (slower than the limit),
      ``audit_not_configured`` (no operator token set)
====  ========================================================================================
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Protocol, TypeVar

import cv2
import numpy as np
from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from numpy.typing import NDArray
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection

from handreader.audit import AuditAuthError, AuditError
from handreader.commands.serve import add_server_arguments
from handreader.table import TableCard, score_codes, score_reading
from handreader.table_grouping import GroupingError, Region
from handreader.table_pits import judge_play, judge_reading
from handreader.table_requests import (
    BadOptionsError,
    NotReadyError,
    RecognizerFailedError,
    RecognizerTimeoutError,
    ServiceError,
    Upload,
    image_format,
    read_upload,
    request_body_doc,
)
from handreader.table_schema import (
    ErrorOut,
    HealthOut,
    PitsCodesIn,
    PitsOptionsIn,
    PitsOut,
    ReadOut,
    ScoreCodesIn,
    TableOptionsIn,
    TableOut,
)
from handreader.verify import VerifyError
from handreader.web import create_router
from handreader.web_common import ServiceHooks, json_response, read_photo
from rules.cards import AnyCard, parse_cards
from rules.errors import CardError, HandError, IllegalPlayError, ProfileError, RulesError
from rules.pits import CombinationError
from vision.annotate import Annotator
from vision.detections import Reading
from vision.imageio import DEFAULT_MAX_BYTES, DEFAULT_MAX_PIXELS, ImageError

__all__ = [
    "ERROR_STATUS",
    "ReaderDep",
    "ServiceError",
    "Settings",
    "create_app",
    "get_reader",
    "main",
]

LOG = logging.getLogger("handreader.serve")
# --- settings and errors -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Settings:
    """Service limits and the models' place; :meth:`from_env` reads ``HANDREADER_*``."""

    models_dir: Path | None = None
    max_bytes: int = DEFAULT_MAX_BYTES
    max_pixels: int = DEFAULT_MAX_PIXELS
    read_timeout_s: float = 30.0
    read_threads: int = 2

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Settings:
        """Settings from ``HANDREADER_MODELS``, ``_MAX_BYTES``, ``_MAX_PIXELS``,
        ``_READ_TIMEOUT`` and ``_READ_THREADS``; ValueError names a bad value."""

        def number(name: str, default: float, kind: Callable[[str], float]) -> Any:
            text = environ.get(f"HANDREADER_{name}")
            if text is None:
                return default
            try:
                value = kind(text)
            except ValueError:
                raise ValueError(f"HANDREADER_{name}={text!r} is not a number") from None
            if value <= 0:
                raise ValueError(f"HANDREADER_{name}={text!r} must be positive")
            return value

        models = environ.get("HANDREADER_MODELS")
        return cls(
            models_dir=Path(models) if models else None,
            max_bytes=number("MAX_BYTES", DEFAULT_MAX_BYTES, int),
            max_pixels=number("MAX_PIXELS", DEFAULT_MAX_PIXELS, int),
            read_timeout_s=number("READ_TIMEOUT", 30.0, float),
            read_threads=number("READ_THREADS", 2, int),
        )


ERROR_STATUS: Mapping[str, int] = {
    "malformed_json": 400,
    "malformed_multipart": 400,
    "bad_card": 400,
    "bad_hand": 400,
    "unknown_profile": 400,
    "bad_options": 400,
    "no_combination": 400,
    "empty": 400,
    "corrupt": 400,
    "illegal_play": 400,
    "bad_declaration": 400,
    "unauthorized": 401,
    "not_found": 404,
    "method_not_allowed": 405,
    "not_acceptable": 406,
    "too_large": 413,
    "too_many_pixels": 413,
    "unsupported_type": 415,
    "validation_error": 422,
    "missing_image": 422,
    "too_small": 422,
    "internal_error": 500,
    "recognizer_failed": 500,
    "audit_failed": 500,
    "not_ready": 503,
    "recognizer_timeout": 503,
    "audit_not_configured": 503,
}
"""The one table from error codes to HTTP statuses."""


def _error_code(error: BaseException) -> str:
    """The API error code of an exception (the families the service knows; else a bug)."""
    if isinstance(error, ServiceError | ImageError):
        return error.code
    if isinstance(error, ValidationError | RequestValidationError):
        return "validation_error"
    if isinstance(error, CombinationError):
        return "no_combination"
    for family, code in (
        (CardError, "bad_card"),
        (HandError, "bad_hand"),
        (ProfileError, "unknown_profile"),
        (IllegalPlayError, "illegal_play"),
        (RulesError, "bad_options"),
        (GroupingError, "bad_options"),
        (VerifyError, "bad_declaration"),
        (AuditAuthError, "unauthorized"),
        (AuditError, "audit_failed"),
    ):
        if isinstance(error, family):
            return code
    return "internal_error"


def _error_message(error: BaseException) -> str:
    if isinstance(error, ValidationError | RequestValidationError):
        parts = []
        for problem in error.errors():
            where = ".".join(str(item) for item in problem.get("loc", ()) if item != "body")
            parts.append(f"{where or 'body'}: {problem.get('msg', 'invalid')}")
        return "; ".join(parts) or "invalid request"
    return str(error) or type(error).__name__


def describe_error(error: BaseException) -> tuple[str, str]:
    """The API error code and message of an exception (for answers that are no HTTP response:
    WebSocket messages)."""
    return _error_code(error), _error_message(error)


def error_response(code: str, message: str) -> JSONResponse:
    """The JSON error body with the status of ``code``."""
    status = ERROR_STATUS.get(code, 500)
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


async def _handle_error(request: Request, error: Exception) -> JSONResponse:
    code = _error_code(error)
    if ERROR_STATUS.get(code, 500) >= 500:
        LOG.error("%s %s failed: %s", request.method, request.url.path, error, exc_info=error)
    return error_response(code, _error_message(error))


async def _handle_http(request: Request, error: Exception) -> JSONResponse:
    status = error.status_code if isinstance(error, HTTPException) else 500
    code = {404: "not_found", 405: "method_not_allowed"}.get(status, "http_error")
    response = error_response(code, str(getattr(error, "detail", "")) or code)
    response.status_code = status
    return response


# --- the recognizer ------------------------------------------------------------------------------


class ReaderLike(Protocol):
    """What the service needs of a recognizer: ``vision.reader.Reader`` or a test fake."""

    def read(self, image_bgr: NDArray[np.uint8]) -> Reading:
        """The cards read from a BGR image."""
        ...


@dataclass(frozen=True, slots=True)
class _NoReader:
    """Stands in for the recognizer when its models did not load; every read is 503."""

    reason: str

    def read(self, image_bgr: NDArray[np.uint8]) -> Reading:
        raise NotReadyError(f"the recognizer is not ready: {self.reason}")


def _load_reader(settings: Settings) -> ReaderLike:
    """Load the models once; a failure leaves a stand-in that answers 503 (and is logged)."""
    try:
        from vision.reader import Reader  # imported here: loading models is the lifespan's job

        reader: ReaderLike = Reader.load(settings.models_dir)
    except (ImportError, ValueError, OSError) as error:
        LOG.error("models not loaded, image endpoints answer 503: %s", error)
        return _NoReader(str(error))
    return reader


@dataclass
class _Runtime:
    """Per-app state: the settings and the pool that runs the recognizer with a timeout."""

    settings: Settings
    pool: ThreadPoolExecutor = field(init=False)

    def __post_init__(self) -> None:
        self.pool = ThreadPoolExecutor(self.settings.read_threads, thread_name_prefix="reader")

    def read(self, reader: ReaderLike, image: NDArray[np.uint8]) -> Reading:
        """``reader.read(image)`` within the time limit; service errors when it fails."""
        future: Future[Reading] = self.pool.submit(reader.read, image)
        try:
            return future.result(timeout=self.settings.read_timeout_s)
        except FutureTimeout:
            future.cancel()
            raise RecognizerTimeoutError(
                f"the recognizer took longer than {self.settings.read_timeout_s:g} s"
            ) from None
        except (ServiceError, ImageError):
            raise
        except Exception as error:
            LOG.exception("the recognizer failed")
            raise RecognizerFailedError(f"the recognizer failed: {error}") from error


async def get_reader(request: HTTPConnection) -> ReaderLike:
    """The app's recognizer (override this dependency in tests with a fake).

    ``async`` only so that FastAPI calls it on the event loop instead of handing a trivial
    look-up to the thread pool; it never waits.
    """
    reader: ReaderLike = request.app.state.reader
    return reader


async def _get_runtime(request: HTTPConnection) -> _Runtime:
    runtime: _Runtime = request.app.state.runtime
    return runtime


ReaderDep = Annotated[ReaderLike, Depends(get_reader)]
RuntimeDep = Annotated[_Runtime, Depends(_get_runtime)]


# --- request bodies ------------------------------------------------------------------------------


async def _upload(request: Request) -> Upload:
    return await read_upload(request, (await _get_runtime(request)).settings.max_bytes)


UploadDep = Annotated[Upload, Depends(_upload)]


# --- endpoints -----------------------------------------------------------------------------------


_Model = TypeVar("_Model", bound=BaseModel)


def _validate(model: type[_Model], values: Mapping[str, Any]) -> _Model:
    """The model of ``values``: pydantic's ValidationError (422) when a field is wrong."""
    return model.model_validate(dict(values))


_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorOut, "description": description}
    for status, description in {
        400: "malformed JSON or multipart, bad card text, unknown profile, bad options, "
        "empty or corrupt image",
        413: "upload over the byte limit, or image over the pixel limit",
        415: "not a JPEG, PNG, WebP, BMP, GIF or TIFF",
        422: "a field of the wrong type or shape, no image field, image under 32 px",
        500: "the recognizer failed",
        503: "models not loaded, recognizer too slow",
    }.items()
}


def _routes(app: FastAPI, annotator: Annotator) -> None:
    @app.get("/health", responses={200: {"model": HealthOut}, 503: {"model": ErrorOut}})
    def health(reader: ReaderDep) -> Response:
        """200 when the models are loaded, 503 otherwise."""
        if isinstance(reader, _NoReader):
            return error_response("not_ready", f"the recognizer is not ready: {reader.reason}")
        return json_response({"status": "ok", "models": _model_info(reader)})

    @app.post(
        "/v1/read", responses={200: {"model": ReadOut}, **_ERRORS}, openapi_extra=request_body_doc()
    )
    def read(upload: UploadDep, reader: ReaderDep, runtime: RuntimeDep) -> Response:
        """Read the cards of a photo: codes, boxes, confidences, flags."""
        _, reading, timings = read_photo(upload, reader, runtime)
        return json_response(dict(reading.to_dict()), timings)

    @app.post(
        "/v1/score",
        responses={200: {"model": TableOut}, **_ERRORS},
        openapi_extra=request_body_doc(ScoreCodesIn, TableOptionsIn),
    )
    async def score(request: Request, reader: ReaderDep) -> Response:
        """Score a Niu Niu table: hands, splits, scores, outcomes and payouts, or the trainer's
        winner. Send a photo (options: ``TableOptionsIn``) or card codes as JSON."""
        runtime = await _get_runtime(request)
        upload = await read_upload(request, runtime.settings.max_bytes)
        if upload.document is not None:
            return _score_codes(upload)
        return await run_in_threadpool(_score_photo, upload, reader, runtime)

    @app.post(
        "/v1/pits",
        responses={200: {"model": PitsOut}, **_ERRORS},
        openapi_extra=request_body_doc(PitsCodesIn, PitsOptionsIn),
    )
    async def pits(upload: UploadDep, reader: ReaderDep, runtime: RuntimeDep) -> Response:
        """Judge a Zheng Shangyou / Pits play: its combination and whether it beats the table.
        Send a photo (options: ``PitsOptionsIn``) or card codes as JSON."""
        if upload.document is not None:
            return _pits_codes(upload)
        return await run_in_threadpool(_pits_photo, upload, reader, runtime)

    @app.post(
        "/v1/annotated",
        responses={
            200: {"content": {"image/jpeg": {}, "image/png": {}}, "description": "the drawing"},
            406: {"model": ErrorOut, "description": "no accepted image format"},
            **_ERRORS,
        },
        openapi_extra=request_body_doc(options_model=TableOptionsIn),
    )
    def annotated(
        request: Request, upload: UploadDep, reader: ReaderDep, runtime: RuntimeDep
    ) -> Response:
        """The photo with the score drawn over it (boxes, splits, results), same size, as JPEG
        or PNG: ``?format=jpeg|png`` or the ``Accept`` header. ``?game=pits`` draws a Pits
        verdict instead of a Niu Niu table. (A large JPEG, read at a reduced scale, is drawn
        on that image enlarged back to the photo's size.)"""
        extension, media = image_format(request)
        game = request.query_params.get("game", "niuniu")
        if game not in ("niuniu", "pits"):
            raise BadOptionsError(f"unknown game {game!r}: niuniu or pits")
        if game == "pits":
            pits_options = _validate(PitsOptionsIn, upload.options)
            table_codes = [str(card) for card in parse_cards(pits_options.table)]
            photo, reading, _ = read_photo(upload, reader, runtime)
            region = _region(pits_options.table_region)
            verdict = judge_reading(reading, table_codes, region)
            drawing = annotator.annotate(photo.full_size(), verdict)
        else:
            options = _validate(TableOptionsIn, upload.options).to_options()
            photo, reading, _ = read_photo(upload, reader, runtime)
            drawing = annotator.annotate(photo.full_size(), score_reading(reading, options))
        ok, encoded = cv2.imencode(extension, drawing)
        if not ok:
            raise RuntimeError(f"could not encode the drawing as {extension}")
        return Response(encoded.tobytes(), media_type=media)


# Card codes are scored on the event loop (see the module docstring); photos (decoding, the
# recognizer, the table) go to the thread pool, so the loop never waits on them.


def _score_codes(upload: Upload) -> Response:
    """``POST /v1/score`` with card codes as JSON."""
    codes = _validate(ScoreCodesIn, {**upload.options, **(upload.document or {})})
    result = score_codes(codes.hands, codes.banker, codes.to_options())
    return json_response(result.to_dict())


def _score_photo(upload: Upload, reader: ReaderLike, runtime: _Runtime) -> Response:
    """``POST /v1/score`` with a photo (blocking: run it in the thread pool)."""
    options = _validate(TableOptionsIn, upload.options).to_options()
    _, reading, timings = read_photo(upload, reader, runtime)
    start = time.perf_counter()
    table = score_reading(reading, options)
    timings["score"] = (time.perf_counter() - start) * 1e3
    return json_response(table.to_dict(), timings)


def _pits_codes(upload: Upload) -> Response:
    """``POST /v1/pits`` with card codes as JSON."""
    codes = _validate(PitsCodesIn, {**upload.options, **(upload.document or {})})
    play = [_code(card) for card in parse_cards(codes.play)]
    table = [_code(card) for card in parse_cards(codes.table)]
    return json_response(judge_play(play, table).to_dict())


def _pits_photo(upload: Upload, reader: ReaderLike, runtime: _Runtime) -> Response:
    """``POST /v1/pits`` with a photo (blocking: run it in the thread pool)."""
    options = _validate(PitsOptionsIn, upload.options)
    table_codes = [str(card) for card in parse_cards(options.table)]
    region = _region(options.table_region)
    _, reading, timings = read_photo(upload, reader, runtime)
    return json_response(judge_reading(reading, table_codes, region).to_dict(), timings)


def _model_info(reader: ReaderLike) -> dict[str, Any]:
    """The model files named by the reader's manifest (empty for a reader without one)."""
    manifest = getattr(reader, "manifest", None)
    if not isinstance(manifest, dict):
        return {}
    return {
        part: entry.get("file")
        for part, entry in manifest.items()
        if isinstance(entry, dict) and "file" in entry
    }


def _code(card: AnyCard) -> TableCard:
    return TableCard(str(card))


def _region(values: Sequence[float] | None) -> Region | None:
    return None if values is None else Region.parse(values)


# --- the app -------------------------------------------------------------------------------------


def create_app(reader: ReaderLike | None = None, settings: Settings | None = None) -> FastAPI:
    """The API. ``reader`` given: used as is; None: ``vision.reader.Reader.load`` runs once in
    the lifespan (a failure leaves the image endpoints answering 503 and is logged).
    ``settings`` None: read from the environment."""
    chosen = settings or Settings.from_env()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if reader is None:
            app.state.reader = _load_reader(chosen)
        yield
        app.state.runtime.pool.shutdown(wait=False, cancel_futures=True)

    app = FastAPI(
        title="handreader",
        version="1",
        summary="Read card hands from photos and score them: Niu Niu tables and Pits plays.",
        description=(__doc__ or "").split("\n\n", 1)[0],
        lifespan=lifespan,
    )
    app.state.reader = reader if reader is not None else _NoReader("the models are loading")
    app.state.runtime = _Runtime(chosen)
    known: tuple[type[Exception], ...] = (ServiceError, ImageError, RulesError, GroupingError)
    for family in (*known, RequestValidationError, ValidationError, Exception):
        app.add_exception_handler(family, _handle_error)  # Exception: a bug, answered 500
    app.add_exception_handler(HTTPException, _handle_http)
    _routes(app, Annotator())
    app.include_router(create_router(ServiceHooks(get_reader, _get_runtime, describe_error)))
    return app


# --- running it ----------------------------------------------------------------------------------


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


def run_server(args: argparse.Namespace, factory: str = "serve:create_app") -> int:
    """Start uvicorn with the app ``factory`` (an import string; benchmarks pass their own);
    the settings reach every worker by the environment.

    Returns 0 after a clean stop, 1 when the server could not start (a port in use).
    """
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    if args.workers < 1:
        raise ValueError(f"--workers must be at least 1, got {args.workers}")
    if args.models is not None:
        os.environ["HANDREADER_MODELS"] = str(args.models.resolve())
    Settings.from_env()  # fail here, once, on a bad HANDREADER_* value
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
    )
    server = uvicorn.Server(config)
    try:
        if config.workers > 1:
            Multiprocess(config, sockets=[_tcp_listener(config.bind_socket())]).run()
            return 0
        server.run()
    except KeyboardInterrupt:
        return 0
    return 0 if server.started else 1


def main(argv: Sequence[str] | None = None, factory: str = "serve:create_app") -> int:
    """``python serve.py [--host H] [--port P] [--workers N] [--models DIR]``."""
    parser = argparse.ArgumentParser(prog="serve.py", description="Run the handreader API.")
    add_server_arguments(parser, os.environ)
    try:
        return run_server(parser.parse_args(argv), factory)
    except ValueError as error:
        print(f"serve.py: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
