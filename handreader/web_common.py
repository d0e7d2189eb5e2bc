"""What the browser-facing routes share: the hooks into serve.py and the photo-reading helper.

``serve.py`` owns the app, the recognizer, the thread pool with its time limit and the one table
from error codes to statuses. The routes of ``handreader.web`` (the page, the live WebSocket,
the trainer), ``handreader.web_games`` (Baccarat, Blackjack, Pai Gow Poker) and
``handreader.web_verify`` (dealer verification, the audit log) reach those through
:class:`ServiceHooks`, handed over by ``serve.create_app``; so the dependency that tests
override (``serve.get_reader``) is the very one these routes use, and no module here imports
``serve``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np
from fastapi.responses import Response
from numpy.typing import NDArray
from pydantic import BaseModel

from handreader.table import TableCard
from handreader.table_requests import Upload
from handreader.web_decks import with_deck
from vision.detections import CardReading, Reading
from vision.imageio import ReducedImage, decode_reduced

__all__ = [
    "LimitsLike",
    "ReaderLike",
    "RuntimeLike",
    "ServiceHooks",
    "card_dicts",
    "json_response",
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
    ``deck`` option names: ``handreader.web_decks``); the timings in milliseconds.

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
