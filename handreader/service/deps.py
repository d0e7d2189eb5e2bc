"""The service's dependencies, in one module: the recognizer (loaded once per app, or a stand-in
that answers 503), the per-app runtime (limits, the thread pool that reads within the time
limit), the upload, and the helpers every route uses (validation, JSON answers, reading a photo).

Routes reach the recognizer and the runtime through :class:`ServiceHooks` (handed over by
``handreader.service.app.create_app``), so the dependency that tests override
(:func:`get_reader`) is the very one every route uses.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol, TypeVar

import numpy as np
from fastapi import Depends, Request
from fastapi.responses import Response
from numpy.typing import NDArray
from pydantic import BaseModel
from starlette.requests import HTTPConnection

from handreader.service.requests import (
    NotReadyError,
    RecognizerFailedError,
    RecognizerTimeoutError,
    ServiceError,
    Upload,
    read_upload,
)
from handreader.service.routes.decks import with_deck
from handreader.service.settings import Settings
from handreader.tables.scoring import TableCard
from vision.detections import CardReading, Reading
from vision.imageio import ImageError, ReducedImage, decode_reduced

LOG = logging.getLogger("handreader.serve")

__all__ = [
    "LimitsLike",
    "NoReader",
    "ReaderDep",
    "ReaderLike",
    "Runtime",
    "RuntimeDep",
    "RuntimeLike",
    "ServiceHooks",
    "UploadDep",
    "card_dicts",
    "get_reader",
    "get_runtime",
    "json_response",
    "load_reader",
    "read_photo",
    "validate",
]


class ReaderLike(Protocol):
    """A recognizer: ``vision.reader.Reader`` or a test fake."""

    def read(self, image_bgr: NDArray[np.uint8]) -> Reading:
        """The cards read from a BGR image."""
        ...


class LimitsLike(Protocol):
    """The service's limits on uploads (``serve.Settings``)."""

    @property
    def max_bytes(self) -> int:
        """Largest upload, in bytes."""
        ...

    @property
    def max_pixels(self) -> int:
        """Largest image, in pixels."""
        ...


class RuntimeLike(Protocol):
    """serve.py's per-app runtime: the limits, and reading within the time limit."""

    @property
    def settings(self) -> LimitsLike:
        """The service's settings."""
        ...

    def read(self, reader: ReaderLike, image: NDArray[np.uint8]) -> Reading:
        """``reader.read(image)`` within the time limit (service errors when it fails)."""
        ...


@dataclass(frozen=True, slots=True)
class ServiceHooks:
    """serve.py's dependencies and error description, for routes defined outside it.

    ``get_reader`` and ``get_runtime`` are FastAPI dependencies taking the connection (an HTTP
    request or a WebSocket); ``describe_error`` gives an exception's API error code and message
    (serve.py's one mapping), for answers that are not HTTP responses (WebSocket messages).
    """

    get_reader: Callable[..., Awaitable[ReaderLike]]
    get_runtime: Callable[..., Awaitable[RuntimeLike]]
    describe_error: Callable[[BaseException], tuple[str, str]]


_Model = TypeVar("_Model", bound=BaseModel)


def validate(model: type[_Model], values: Mapping[str, Any]) -> _Model:
    """``model`` from ``values``; pydantic's ValidationError (422) names a bad field."""
    return model.model_validate(dict(values))


def json_response(
    payload: Mapping[str, Any], timings: Mapping[str, float] | None = None
) -> Response:
    """Compact JSON, with ``timings_ms`` rounded to hundredths when given."""
    body = dict(payload)
    if timings is not None:
        body["timings_ms"] = {name: round(value, 2) for name, value in timings.items()}
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return Response(text, media_type="application/json")


def read_photo(
    upload: Upload, reader: ReaderLike, runtime: RuntimeLike
) -> tuple[ReducedImage, Reading, dict[str, float]]:
    """Decode the upload within the limits and read its cards (with the deck profile its
    ``deck`` option names: ``handreader.service.routes.decks``); the timings in milliseconds.

    A large JPEG is decoded at a reduced scale (``vision.imageio.decode_reduced``: the reader
    would shrink it to that size anyway); the reading's boxes and size are mapped back to the
    photo's own pixels, and ``ReducedImage.full_size()`` gives an image they fit, to draw on.
    """
    reader = with_deck(reader, upload.options.get("deck"))
    limits = runtime.settings
    start = time.perf_counter()
    photo = decode_reduced(
        upload.image or b"", max_bytes=limits.max_bytes, max_pixels=limits.max_pixels
    )
    decoded = time.perf_counter()
    reading = photo.to_original(runtime.read(reader, photo.image))
    done = time.perf_counter()
    return photo, reading, {"decode": (decoded - start) * 1e3, "read": (done - decoded) * 1e3}


def card_dicts(cards: tuple[CardReading, ...] | list[CardReading]) -> list[dict[str, object]]:
    """The JSON of cards read (code, box, confidence, uncertain), as the Niu Niu table gives."""
    return [TableCard.from_reading(card).to_dict() for card in cards]


@dataclass(frozen=True, slots=True)
class NoReader:
    """Stands in for the recognizer when its models did not load; every read is 503."""

    reason: str

    def read(self, image_bgr: NDArray[np.uint8]) -> Reading:
        raise NotReadyError(f"the recognizer is not ready: {self.reason}")


def load_reader(settings: Settings) -> ReaderLike:
    """Load the models once; a failure leaves a stand-in that answers 503 (and is logged)."""
    try:
        from vision.reader import Reader  # imported here: loading models is the lifespan's job

        reader: ReaderLike = Reader.load(settings.models_dir)
    except (ImportError, ValueError, OSError) as error:
        LOG.error("models not loaded, image endpoints answer 503: %s", error)
        return NoReader(str(error))
    return reader


@dataclass
class Runtime:
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


async def get_runtime(request: HTTPConnection) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


ReaderDep = Annotated[ReaderLike, Depends(get_reader)]
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


async def upload_dependency(request: Request) -> Upload:
    return await read_upload(request, (await get_runtime(request)).settings.max_bytes)


UploadDep = Annotated[Upload, Depends(upload_dependency)]
