"""Requests of the HTTP API: reading bodies within limits, options, formats, request errors.

``serve.py`` owns the app, the endpoints and the one table from error codes to statuses; this
module reads what a request carries:

- :func:`read_upload`: the body, cut at the byte limit before it is all in memory (413 from the
  ``Content-Length`` header alone when it announces too much): a multipart upload (field
  ``image``, optional JSON field ``options``), a JSON document (card codes), or the raw image;
  query parameters add options (each by name, or all as ``options=<JSON>``);
- :func:`image_format`: the annotated image's format from ``?format=`` or ``Accept``;
- :func:`request_body_doc`: the OpenAPI description of those bodies, with examples;
- the :class:`ServiceError` family: each error has a ``code`` (its status is serve.py's
  business).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar

from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

from handreader.service.multipart_hints import (
    boundary,
    looks_multipart,
    multipart_sent_as,
    names_file_only_as_extended,
    oversized_part_header,
)
from rules.money import MAX_PLACES, WrittenNumber, decimal_places
from vision.imageheader import UnsupportedImageTypeError, looks_like_image

__all__ = [
    "JSON_DEPTH",
    "JSON_LIMIT",
    "LIVE_TEXT_LIMIT",
    "MULTIPART_SLACK",
    "BadOptionsError",
    "MalformedJsonError",
    "MalformedMultipartError",
    "MissingImageError",
    "NotAcceptableError",
    "NotReadyError",
    "PayloadTooLargeError",
    "RecognizerFailedError",
    "RecognizerTimeoutError",
    "RequestTimeoutError",
    "ServerBusyError",
    "ServiceError",
    "Upload",
    "check_query",
    "image_format",
    "json_body_doc",
    "parse_json_object",
    "parse_json_off_loop",
    "read_body",
    "read_upload",
    "request_body_doc",
]

JSON_LIMIT = 64 * 1024
"""Largest JSON body (card codes, the trainer's check, an options field) accepted: a table of
hundreds of hands takes a few KB, and a body this size parses in milliseconds, off the event
loop (:func:`parse_json_off_loop`)."""
LIVE_TEXT_LIMIT = 4096
"""Largest text (control) message on ``WS /v1/live``: its commands take a few hundred bytes."""
JSON_DEPTH = 32
"""Deepest nesting of objects and arrays accepted in any JSON the service reads (its own
documents go four levels deep): deeper nesting is refused before anything walks it
recursively."""
MULTIPART_SLACK = 64 * 1024
"""Room for the multipart framing and the options field around the image."""


class ServiceError(Exception):
    """An error of the request or of the service itself; ``code`` picks the status."""

    code: ClassVar[str] = "internal_error"


class MalformedJsonError(ServiceError, ValueError):
    """A JSON body or ``options`` field that does not parse."""

    code = "malformed_json"


class MalformedMultipartError(ServiceError, ValueError):
    """A multipart body that does not parse."""

    code = "malformed_multipart"


class MissingImageError(ServiceError, ValueError):
    """A multipart upload without the ``image`` field."""

    code = "missing_image"


class BadOptionsError(ServiceError, ValueError):
    """Options that are well-formed JSON but mean nothing here."""

    code = "bad_options"


class PayloadTooLargeError(ServiceError, ValueError):
    """A request body over the limit."""

    code = "too_large"


class NotAcceptableError(ServiceError, ValueError):
    """No image format the client accepts."""

    code = "not_acceptable"


class NotReadyError(ServiceError):
    """The recognizer's models are not loaded."""

    code = "not_ready"


class RecognizerTimeoutError(ServiceError):
    """The recognizer took longer than the limit."""

    code = "recognizer_timeout"


class RequestTimeoutError(ServiceError, ValueError):
    """A request body that did not arrive within the time limit."""

    code = "request_timeout"


class ServerBusyError(ServiceError):
    """No room to decode an image within the time limit: the budget is held by others."""

    code = "busy"


class RecognizerFailedError(ServiceError):
    """The recognizer raised on an image it had accepted."""

    code = "recognizer_failed"


@dataclass(frozen=True, slots=True)
class Upload:
    """A request body: image bytes with options, or a JSON document (card codes)."""

    image: bytes | None
    options: dict[str, Any]
    document: dict[str, Any] | None = None


def _too_deep(value: object, limit: int) -> bool:
    """Whether ``value`` nests objects and arrays deeper than ``limit`` (walked without
    recursion)."""
    pending: list[tuple[object, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        pending.extend((child, depth + 1) for child in children)
    return False


NUMBER_DIGITS = 100
"""Longest whole number read from JSON, in digits: far more than any count or amount the
service takes (amounts stop at 16 digits), and short enough that no number costs time."""


class _LongNumberError(ValueError):
    """A whole number in JSON longer than :data:`NUMBER_DIGITS`."""


def _whole_number(text: str) -> int:
    """A JSON integer's value (``json.loads``'s ``parse_int``), refused when too long."""
    if len(text.lstrip("-")) > NUMBER_DIGITS:
        raise _LongNumberError(f"a whole number of {len(text.lstrip('-')):,} digits")
    return int(text)


def _fraction(text: str) -> float:
    """A JSON number with a fraction or an exponent (``json.loads``'s ``parse_float``): a
    float where the text is the double's shortest form (``0.1``) or its 17 significant digits
    (``0.10000000000000001``, ``%.17g``) finer than an amount is read (:data:`MAX_PLACES`);
    else a :class:`rules.money.WrittenNumber` (``33977286960856.172``, ``1e-400``, ``1e400``),
    the nearest float keeping the text, which an amount reads whole (every digit of an amount
    the rules take) and every other field takes as the float it is."""
    number = float(text)
    if len(text) < 16 and "e" not in text.lower():  # 15 digits at most, no exponent: exact
        return number
    if not math.isfinite(number):
        return WrittenNumber(text)
    try:
        written = Decimal(text)
    except InvalidOperation:  # an exponent past Decimal's own range (1e-99999999999999999999)
        return WrittenNumber(text)
    if written == Decimal(repr(number)):
        return number
    too_fine = decimal_places(written) > MAX_PLACES  # 0.10000000000000001: 0.1, not refused
    return number if too_fine and written == Decimal(f"{number:.17g}") else WrittenNumber(text)


def _loads(text: str | bytes, what: str) -> Any:
    """``json.loads`` of ``text``, with no whole number over :data:`NUMBER_DIGITS` digits
    (BadOptionsError naming ``what``: the JSON is valid, the number too long to be any
    option) and a number a double cannot carry as a float keeping its text
    (:func:`_fraction`)."""
    try:
        return json.loads(text, parse_int=_whole_number, parse_float=_fraction)
    except _LongNumberError as error:
        raise BadOptionsError(
            f"{what} holds {error}: numbers of at most {NUMBER_DIGITS} digits are read"
        ) from None


def parse_json_object(text: str | bytes, what: str) -> dict[str, Any]:
    """The JSON object in ``text``; MalformedJsonError (400) naming ``what`` for text that is
    not JSON, not an object, or nested deeper than :data:`JSON_DEPTH`."""
    too_deep = f"{what} nests objects or arrays deeper than {JSON_DEPTH} levels"
    try:
        value = _loads(text, what)
    except BadOptionsError:
        raise
    except (ValueError, UnicodeDecodeError) as error:
        raise MalformedJsonError(f"{what} is not valid JSON: {error}") from None
    except RecursionError:
        raise MalformedJsonError(too_deep) from None
    if _too_deep(value, JSON_DEPTH):
        raise MalformedJsonError(too_deep)
    if not isinstance(value, dict):
        raise MalformedJsonError(f"{what} must be a JSON object, got {_json_kind(value)}")
    return value


def _json_kind(value: object) -> str:
    """What a JSON value is, in JSON's words (``null``, ``an array``, ``a string``...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return json.dumps(value)
    kinds = ((list, "an array"), (str, "a string"), ((int, float), "a number"))
    return next(kind for types, kind in kinds if isinstance(value, types))


async def parse_json_off_loop(text: str | bytes, what: str) -> dict[str, Any]:
    """:func:`parse_json_object` in the thread pool: a large body never holds the event loop
    (``/health``, the live streams) while it is parsed."""
    return await run_in_threadpool(parse_json_object, text, what)


async def read_body(request: Request, limit: int, told: str = "") -> bytes:
    """The request body, refused (PayloadTooLargeError, 413) as soon as it passes ``limit``
    bytes: by its ``Content-Length`` before any of it is read, else while it streams in. The
    message names the limit as ``told`` says it (default: its bytes)."""
    told = told or f"{limit:,} bytes"
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise PayloadTooLargeError(
            f"request body of {int(declared):,} bytes is over the limit of {told}"
        )
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLargeError(f"request body is over the limit of {told}")
        chunks.append(chunk)
    return b"".join(chunks)


_FORM_START_BYTES = 512
"""Leading bytes enough to tell a multipart form's first boundary and header."""
_SIGNATURE_BYTES = 12
"""Leading bytes enough to tell an image from JSON (``vision.imageheader.looks_like_image``)."""


async def _json_or_image(request: Request, max_bytes: int) -> tuple[bytes, bool]:
    """A body sent as ``application/json``, and whether it is an image after all: an image's
    type is told from its bytes, never from a header, so a photo sent with that type is read
    as a photo (within ``max_bytes``), and anything else as JSON (within ``JSON_LIMIT``, by its
    ``Content-Length`` as soon as its first bytes are known)."""
    declared = request.headers.get("content-length", "")
    chunks: list[bytes] = []
    size = 0
    image: bool | None = None  # until the first bytes tell
    limit = JSON_LIMIT
    async for chunk in request.stream():
        chunks.append(chunk)
        size += len(chunk)
        if image is None and size >= _SIGNATURE_BYTES:
            head = b"".join(chunks)[:_FORM_START_BYTES]
            if looks_multipart(head):  # (told before its size is, by the JSON limit)
                raise UnsupportedImageTypeError(multipart_sent_as("application/json"))
            image = looks_like_image(head[:_SIGNATURE_BYTES])
            limit = max_bytes if image else JSON_LIMIT
            if declared.isdigit() and int(declared) > limit:
                raise PayloadTooLargeError(
                    f"request body of {int(declared):,} bytes is over the limit of {limit:,} bytes"
                )
        if size > limit:
            raise PayloadTooLargeError(f"request body is over the limit of {limit:,} bytes")
    body = b"".join(chunks)
    if looks_multipart(body):
        raise UnsupportedImageTypeError(multipart_sent_as("application/json"))
    return body, looks_like_image(body) if image is None else image


_QUERY_ONLY = frozenset({"format"})
"""Query parameters that are no options (``game`` is one: the game whose deck is in play, which
``/v1/annotated`` also draws)."""


def _query_options(request: Request) -> dict[str, Any]:
    return query_options(request.query_params, skip=_QUERY_ONLY)


def query_options(query: QueryParams, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The options of a query (but the names in ``skip``): each by name, a list as JSON
    (``banker_region=[0,0,1,0.5]``), anything else as its text (the options' models convert
    numbers and names), and ``options=<JSON>``, which wins where both name one (as a multipart
    body's ``options`` field does). A name given twice is a BadOptionsError (400)."""
    options: dict[str, Any] = {}
    for name, value in _once(query):
        if name in skip:
            continue
        if name != "options":
            listed = value.lstrip().startswith("[")
            options[name] = _json_list(value, f"the query parameter {name}") if listed else value
    if "options" in query:
        options |= parse_json_object(query["options"], "the options query parameter")
    return options


def _once(query: QueryParams) -> list[tuple[str, str]]:
    """The query's names and values; BadOptionsError (400) for a name given twice."""
    given: set[str] = set()
    for name, _ in query.multi_items():
        if name in given:
            raise BadOptionsError(
                f"the query parameter {name} is given more than once: give it once"
            )
        given.add(name)
    return query.multi_items()


def check_query(request: Request) -> None:
    """BadOptionsError (400) for a query parameter given twice or not one of the route's own
    typed parameters (its signature's, read from the route): the framework would take the last
    of two values and ignore a name it does not know, so a mistyped filter would answer as if
    not given."""
    known: set[str] = set()
    pending = [getattr(request.scope.get("route"), "dependant", None)]
    while pending:  # the route's own parameters and its dependencies'
        dependant = pending.pop()
        if dependant is not None:
            known.update(field.alias for field in dependant.query_params)
            pending.extend(dependant.dependencies)
    for name, _ in _once(request.query_params):
        if name not in known:
            names = ", ".join(sorted(known))
            raise BadOptionsError(f"unknown query parameter {name!r}: known are {names}")


def _json_list(text: str, what: str) -> Any:
    """The JSON list ``text`` gives; MalformedJsonError naming ``what`` gave it."""
    try:
        value = _loads(text, what)
    except BadOptionsError:
        raise
    except (ValueError, RecursionError) as error:
        raise MalformedJsonError(f"{what} is not a valid JSON list: {error}") from None
    if _too_deep(value, JSON_DEPTH):
        raise MalformedJsonError(f"{what} nests arrays deeper than {JSON_DEPTH} levels")
    return value


def _closed(request: Request, body: bytes) -> bool:
    """Whether a multipart body holds its closing delimiter (``--BOUNDARY--``; an epilogue may
    follow it)."""
    named = boundary(request.headers.get("content-type", ""))
    if named is None:
        return True  # the parser has named what is wrong already
    return b"--" + named + b"--" in body


_EXTENDED_NAME_ONLY = (
    "the multipart field 'image' names its file only as filename*= (RFC 5987), which is not "
    'read: give a plain filename="photo.jpg" as well (curl -F image=@photo.jpg does)'
)


async def _multipart(request: Request, body: bytes) -> tuple[bytes, dict[str, Any]]:
    async def stream() -> AsyncGenerator[bytes, None]:
        yield body

    parser = MultiPartParser(
        request.headers, stream(), max_files=4, max_fields=16, max_part_size=JSON_LIMIT
    )
    try:
        form = await parser.parse()
    except MultiPartException as error:
        content_type = request.headers.get("content-type", "")
        if "maximum size" in error.message and names_file_only_as_extended(
            body, content_type, "image"
        ):
            raise MissingImageError(_EXTENDED_NAME_ONLY) from None
        if "maximum size" in error.message:  # only text fields have a size of their own
            raise MissingImageError(
                f"a multipart field over {JSON_LIMIT // 1024} KB came as text, without a file "
                "name: send the photo as a file part (curl -F image=@photo.jpg)"
            ) from None
        told = oversized_part_header(body, content_type) or error.message
        raise MalformedMultipartError(f"malformed multipart body: {told}") from None
    try:
        if len(form.getlist("image")) > 1:
            raise MalformedMultipartError(
                "the multipart body holds several 'image' fields: send one"
            )
        image = form.get("image")
        if image is None and not _closed(request, body):  # a part cut off is no part
            raise MalformedMultipartError(
                "malformed multipart body: it ends before its closing boundary (cut short?)"
            )
        if image is None:
            raise MissingImageError("multipart upload without an 'image' field")
        if isinstance(image, str) and names_file_only_as_extended(
            body, request.headers.get("content-type", ""), "image"
        ):
            raise MissingImageError(_EXTENDED_NAME_ONLY)
        if isinstance(image, str):  # a part without a file name: its bytes were taken as text
            raise MissingImageError(
                "the multipart field 'image' came as text, without a file name: send the photo "
                "as a file part (curl -F image=@photo.jpg)"
            )
        data = await image.read()
        found: dict[str, Any] = {}
        given: set[str] = set()
        for name, value in form.multi_items():  # other text fields: options by name, as the query's
            if name == "image":
                continue
            if name in given:
                raise MalformedMultipartError(f"the multipart body holds several {name!r} fields")
            given.add(name)
            if name == "options":
                continue
            if not isinstance(value, str):
                raise MalformedMultipartError(
                    f"the multipart field {name!r} is a file: only 'image' takes one"
                )
            listed = value.lstrip().startswith("[")
            found[name] = _json_list(value, f"the multipart field {name!r}") if listed else value
        options = form.get("options")
        if isinstance(options, str):
            found |= parse_json_object(options, "the options field")
        elif options is not None:
            found |= parse_json_object(await options.read(), "the options field")
        return data, found
    finally:
        await form.close()


async def read_upload(request: Request, max_bytes: int) -> Upload:
    """Read the body within the limits: JSON (``JSON_LIMIT``), multipart (``max_bytes`` plus
    ``MULTIPART_SLACK``) or a raw image (``max_bytes``; one sent as ``application/json`` too,
    told by its bytes); options from the query and the multipart ``options`` field (the field
    wins)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    options = _query_options(request)
    if kind == "application/json":
        body, is_image = await _json_or_image(request, max_bytes)
        if is_image:
            return Upload(body, options)
        return Upload(None, options, await parse_json_off_loop(body, "the request body"))
    if kind == "multipart/form-data":
        told = f"{max_bytes:,} bytes for the photo (and {MULTIPART_SLACK // 1024} KiB of form)"
        body = await read_body(request, max_bytes + MULTIPART_SLACK, told)
        image, fields = await _multipart(request, body)
        return Upload(image, {**options, **fields})
    body = await read_body(request, max_bytes)
    if looks_multipart(body[:_FORM_START_BYTES]):
        raise UnsupportedImageTypeError(multipart_sent_as(kind or "(none)"))
    if body.lstrip()[:1] in (b"{", b"["):
        raise UnsupportedImageTypeError(
            "the body is JSON sent without Content-Type: application/json: send card codes "
            "with that type (to /v1/score, /v1/pits or a game's endpoint), or send a photo"
        )
    return Upload(body, options)


_FORMATS = {
    "jpeg": (".jpg", "image/jpeg"),
    "jpg": (".jpg", "image/jpeg"),
    "png": (".png", "image/png"),
}


def image_format(request: Request) -> tuple[str, str]:
    """The drawing's format from ``?format=``, else the first the ``Accept`` header allows."""
    asked = request.query_params.get("format")
    if asked is not None:
        if asked.lower() not in _FORMATS:
            raise BadOptionsError(f"unknown format {asked!r}: jpeg or png")
        return _FORMATS[asked.lower()]
    accepted: list[tuple[float, int, str]] = []
    for position, item in enumerate(request.headers.get("accept", "*/*").split(",")):
        media, *parameters = (part.strip().lower() for part in item.split(";"))
        quality = 1.0
        for parameter in parameters:
            if parameter.startswith("q="):
                try:
                    quality = float(parameter[2:])
                except ValueError:
                    quality = 0.0
        if quality > 0:
            accepted.append((-quality, position, media))
    for _, _, media in sorted(accepted):
        if media == "image/png":
            return _FORMATS["png"]
        if media in ("image/jpeg", "image/*", "*/*"):
            return _FORMATS["jpeg"]
    raise NotAcceptableError(
        f"cannot answer Accept {request.headers.get('accept')!r}: image/jpeg or image/png"
    )


_IMAGE_BODY: dict[str, Any] = {
    "multipart/form-data": {
        "schema": {
            "type": "object",
            "required": ["image"],
            "properties": {
                "image": {"type": "string", "format": "binary"},
                "options": {"type": "string", "description": "options as a JSON object"},
            },
        }
    },
    "image/jpeg": {"schema": {"type": "string", "format": "binary"}},
    "image/png": {"schema": {"type": "string", "format": "binary"}},
    "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
}


def request_body_doc(
    json_model: type[BaseModel] | None = None, options_model: type[BaseModel] | None = None
) -> dict[str, Any]:
    """The OpenAPI ``requestBody`` of an endpoint taking an image (with the ``options`` field
    described by ``options_model``), and card codes as JSON when ``json_model`` is given (its
    schema and examples)."""
    content = copy.deepcopy(_IMAGE_BODY)
    if options_model is None:
        del content["multipart/form-data"]["schema"]["properties"]["options"]
    else:
        schema = options_model.model_json_schema()
        field: dict[str, Any] = {
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": schema,
            "description": f"options as a JSON object ({options_model.__name__}); for a raw "
            "body, the same as query parameters",
        }
        if schema.get("examples"):
            field["example"] = json.dumps(schema["examples"][0])
        multipart = content["multipart/form-data"]["schema"]
        multipart["properties"] = {**multipart["properties"], "options": field}
    if json_model is not None:
        schema = json_model.model_json_schema()
        examples = schema.get("examples", [])
        named = {f"example {n}": {"value": value} for n, value in enumerate(examples, start=1)}
        content = {"application/json": {"schema": schema, "examples": named}} | content
    return {"requestBody": {"required": True, "content": content}}


def json_body_doc(json_model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI ``requestBody`` of an endpoint taking a JSON document only (its schema and
    examples)."""
    content = request_body_doc(json_model)["requestBody"]["content"]
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": content["application/json"]},
        }
    }
