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
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol, TypeVar, get_args

import numpy as np
from fastapi import Depends, Request
from fastapi.responses import Response
from numpy.typing import NDArray
from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticCustomError
from starlette.requests import HTTPConnection

from handreader.service.requests import (
    NotReadyError,
    RecognizerFailedError,
    RecognizerTimeoutError,
    ServerBusyError,
    ServiceError,
    Upload,
    read_upload,
)
from handreader.service.routes.decks import with_deck, with_deck_in_play, with_indices
from handreader.service.settings import Settings
from handreader.tables.scoring import TableCard
from rules.decks import Deck
from vision.detections import CardReading, Reading
from vision.imageheader import UnsupportedImageTypeError
from vision.imageio import (
    ImageError,
    ReducedImage,
    check_limits,
    decode_checked,
    reduced_factor,
)
from vision.imagelimits import decode_peak_bytes

LOG = logging.getLogger("handreader.serve")

__all__ = [
    "LimitsLike",
    "MemoryBudget",
    "NoReader",
    "ReaderDep",
    "ReaderLike",
    "Runtime",
    "RuntimeDep",
    "RuntimeLike",
    "ServiceHooks",
    "UploadDep",
    "card_dicts",
    "decoded_photo",
    "drawing_peak_bytes",
    "get_reader",
    "get_runtime",
    "json_response",
    "load_reader",
    "read_photo",
    "reading_photo",
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

    @property
    def max_decoded_bytes(self) -> int:
        """Largest decoded image, in bytes (pixels, channels, bytes per sample)."""
        ...

    @property
    def live_idle_timeout_s(self) -> float:
        """Seconds a live stream may stay silent (``handreader.service.live_streams``)."""
        ...

    @property
    def allowed_origins(self) -> tuple[str, ...]:
        """Origins other than its own whose pages may open the live WebSocket."""
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

    def hold(self, nbytes: int) -> AbstractContextManager[None]:
        """Hold ``nbytes`` of the decoding memory budget while the block runs (blocking)."""
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


def _admits_bool(annotation: Any) -> bool:
    """Whether a field's type takes ``true``/``false`` (bool, or Any, anywhere in it)."""
    if annotation is bool or annotation is Any:
        return True
    return any(_admits_bool(argument) for argument in get_args(annotation))


def validate(model: type[_Model], values: Mapping[str, Any]) -> _Model:
    """``model`` from ``values``; pydantic's ValidationError (422) names a bad field.

    A JSON ``true`` or ``false`` given for a field that is no boolean (a seat, a stake, a
    count) is refused, not taken as 1 or 0."""
    fields = model.model_fields
    wrong = [
        {
            "type": PydanticCustomError("bool_given", "a boolean where a number or text is wanted"),
            "loc": (name,),
            "input": value,
        }
        for name, value in values.items()
        if isinstance(value, bool) and name in fields and not _admits_bool(fields[name].annotation)
    ]
    if wrong:
        raise ValidationError.from_exception_data(model.__name__, wrong)  # type: ignore[arg-type]
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


def drawing_peak_bytes(width: int, height: int, factor: int = 1) -> int:
    """The memory drawing on a ``width`` x ``height`` photo decoded at ``1 / factor`` takes at
    its peak: the decoded photo, kept for the drawing (3 bytes a pixel at its reduced size),
    the photo enlarged back to full size, the annotated copy, the encoded image and the copy
    of it the answer sends (3 bytes a pixel each, at most)."""
    reduced = -(-width // factor) * -(-height // factor)
    return 3 * reduced + 12 * width * height


@contextmanager
def decoded_photo(
    data: bytes, runtime: RuntimeLike, *, reduced: bool = True, to_draw: bool = False
) -> Iterator[ReducedImage]:
    """The photo decoded within the limits (a large JPEG reduced when ``reduced``), while its
    decoding's peak memory (``vision.imagelimits.decode_peak_bytes``, from the header) is held
    in the runtime's budget: the block runs holding it, so the photos decoded and read at once
    never take more than the budget together. With ``to_draw`` the block draws on the photo
    too, and what is held is the larger of the decoding's peak and the drawing's
    (:func:`drawing_peak_bytes`): one hold for the whole request, so the decoded photo is
    never out of the budget while it waits for room to draw. The limits are checked before
    anything is held or decoded; ServerBusyError (503) when no room comes within the time
    limit."""
    limits = runtime.settings
    checks = {
        "max_bytes": limits.max_bytes,
        "max_pixels": limits.max_pixels,
        "max_decoded_bytes": limits.max_decoded_bytes,
    }
    info = check_limits(data, **checks)  # the one walk of the header
    factor = reduced_factor(info) if reduced else 1
    peak = decode_peak_bytes(info, factor)
    if to_draw:
        peak = max(peak, drawing_peak_bytes(info.width, info.height, factor))
    with runtime.hold(peak):
        yield decode_checked(data, info, factor)


def read_photo(
    upload: Upload, reader: ReaderLike, runtime: RuntimeLike, in_play: Deck | None = None
) -> tuple[ReducedImage, Reading, dict[str, float]]:
    """:func:`reading_photo`, its memory given back as soon as the photo is read."""
    with reading_photo(upload, reader, runtime, in_play) as (photo, reading, timings):
        return photo, reading, timings


@contextmanager
def reading_photo(
    upload: Upload,
    reader: ReaderLike,
    runtime: RuntimeLike,
    in_play: Deck | None = None,
    *,
    to_draw: bool = False,
) -> Iterator[tuple[ReducedImage, Reading, dict[str, float]]]:
    """Decode the upload within the limits and read its cards (with the deck profile its
    ``deck`` option names, and ``in_play`` the deck in play, whose cards are decoded together:
    ``handreader.service.routes.decks``); the timings in milliseconds. A JSON body holds no
    photo: UnsupportedImageTypeError (415).

    A large JPEG is decoded at a reduced scale (``vision.imageio.decode_reduced``: the reader
    would shrink it to that size anyway); the reading's boxes and size are mapped back to the
    photo's own pixels, and ``ReducedImage.full_size()`` gives an image they fit, to draw on.
    The decoding memory is held (:func:`decoded_photo`) while the block runs; with
    ``to_draw``, the drawing's too (the block draws on the photo).
    """
    if upload.image is None:
        raise UnsupportedImageTypeError(
            "this endpoint reads a photo, not JSON: send the image as the request body or as "
            "the multipart field 'image' (card codes go to /v1/score and the games)"
        )
    reader = with_indices(reader, upload.options.get("indices"))
    reader = with_deck(with_deck_in_play(reader, in_play), upload.options.get("deck"))
    start = time.perf_counter()
    with decoded_photo(upload.image, runtime, to_draw=to_draw) as photo:
        decoded = time.perf_counter()
        reading = photo.to_original(runtime.read(reader, photo.image))
        done = time.perf_counter()
        yield photo, reading, {"decode": (decoded - start) * 1e3, "read": (done - decoded) * 1e3}


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
        # the answer names no path of the server's: the log has the whole message
        return NoReader("its models did not load (the server's log says why)")
    return reader


class MemoryBudget:
    """Bytes that the photos being decoded and read may take together; thread-safe.

    :meth:`hold` blocks until the bytes asked for fit beside those already held; a request for
    more than the whole budget waits until nothing else is held, then takes it all.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.held = 0
        self._changed = threading.Condition()

    @contextmanager
    def hold(self, nbytes: int, timeout_s: float) -> Iterator[None]:
        """Hold ``nbytes`` while the block runs; ServerBusyError (503) when they do not fit
        within ``timeout_s`` seconds."""
        amount = max(0, min(nbytes, self.capacity))
        with self._changed:
            if not self._changed.wait_for(lambda: self.held + amount <= self.capacity, timeout_s):
                raise ServerBusyError(
                    f"the server is decoding other images: {amount:,} bytes of its "
                    f"{self.capacity:,}-byte decoding budget did not come free within "
                    f"{timeout_s:g} s; try again"
                )
            self.held += amount
        try:
            yield
        finally:
            with self._changed:
                self.held -= amount
                self._changed.notify_all()


@dataclass
class Runtime:
    """Per-app state: the settings, the pool that runs the recognizer with a timeout and the
    decoding memory budget."""

    settings: Settings
    pool: ThreadPoolExecutor = field(init=False)
    memory: MemoryBudget = field(init=False)

    def __post_init__(self) -> None:
        self.pool = ThreadPoolExecutor(self.settings.read_threads, thread_name_prefix="reader")
        self.memory = MemoryBudget(self.settings.decode_memory)

    def hold(self, nbytes: int) -> AbstractContextManager[None]:
        """Hold ``nbytes`` of the decoding budget (waiting at most the read time limit)."""
        return self.memory.hold(nbytes, self.settings.read_timeout_s)

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
