"""The one table from error codes to HTTP statuses, and the handlers that answer every error with
``{"error": {"code": ..., "message": ...}}``.

:data:`KNOWN_ERRORS` are the exception families of expected errors (bad input, a missing token,
a busy or unready service): :func:`handle_error` answers them and logs at most one line (a
refused token, an expected 5xx), no traceback. Anything else is a bug: :class:`UnexpectedErrors`
answers it 500 ``internal_error``, logs its traceback once and keeps the connection open (the
framework's own last-resort handler re-raises to the server, which logs the traceback again and
drops a kept-alive connection).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from handreader.service.requests import ServiceError
from handreader.service.schemas import REFUSED_BY_RULES, ErrorOut
from handreader.service.token_guard import (
    TooManyAttemptsError,
    note_refusal,
    printable,
)
from handreader.store.audit import AuditAuthError, AuditError, AuditSecretError, CheckpointError
from handreader.store.database import StoreError, StoreFullError, StoreUnavailableError
from handreader.tables.grouping import GroupingError
from handreader.tables.live import LiveError
from handreader.tables.verification import VerifyError
from rules.errors import (
    CardError,
    HandError,
    IllegalPlayError,
    ProfileError,
    RulesError,
    UnknownProfileError,
)
from rules.pits import CombinationError
from vision.imageio import ImageError

__all__ = [
    "ERROR_EXAMPLES",
    "ERROR_RESPONSES",
    "ERROR_STATUS",
    "KNOWN_ERRORS",
    "UnexpectedErrors",
    "describe_error",
    "error_response",
    "error_responses",
    "error_status_doc",
    "handle_error",
    "handle_http",
]

LOG = logging.getLogger("handreader.serve")

ERROR_STATUS: Mapping[str, int] = {
    "malformed_json": 400,
    "malformed_multipart": 400,
    "bad_card": 400,
    "bad_hand": 400,
    "unknown_profile": 400,
    "bad_options": 400,
    "bad_host": 400,
    "no_combination": 400,
    "empty": 400,
    "corrupt": 400,
    "illegal_play": 400,
    "bad_declaration": 400,
    "client_disconnected": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "not_acceptable": 406,
    "request_timeout": 408,
    "quota_exceeded": 409,
    "deck_exists": 409,
    "too_many_attempts": 429,
    "too_large": 413,
    "too_many_pixels": 413,
    "too_many_scans": 413,
    "unsupported_type": 415,
    "unsupported_encoding": 415,
    "validation_error": 422,
    "missing_image": 422,
    "too_small": 422,
    "internal_error": 500,
    "recognizer_failed": 500,
    "audit_failed": 500,
    "store_failed": 500,
    "not_ready": 503,
    "recognizer_timeout": 503,
    "busy": 503,
    "audit_not_configured": 503,
    "store_unavailable": 503,
    "storage_full": 507,
}
"""The one table from error codes to HTTP statuses."""


KNOWN_ERRORS: tuple[type[Exception], ...] = (
    ServiceError,
    ImageError,
    RulesError,
    GroupingError,
    LiveError,
    VerifyError,
    AuditError,
    StoreError,
    RequestValidationError,
    ValidationError,
    ClientDisconnect,
)
"""The exception families of expected errors, each answered by :func:`handle_error`."""


def _error_code(error: BaseException) -> str:
    """The API error code of an exception (the families the service knows; else a bug)."""
    if isinstance(error, ServiceError | ImageError):
        return error.code
    if isinstance(error, ValidationError | RequestValidationError):
        problems = list(error.errors())
        refused = problems and all(p.get("type") == REFUSED_BY_RULES for p in problems)
        return "bad_options" if refused else "validation_error"
    if isinstance(error, CombinationError):
        return "no_combination"
    if isinstance(error, ClientDisconnect):
        return "client_disconnected"
    for family, code in (
        (CardError, "bad_card"),
        (HandError, "bad_hand"),
        (UnknownProfileError, "unknown_profile"),
        (ProfileError, "bad_options"),  # a rules option the profile does not take
        (IllegalPlayError, "illegal_play"),
        (RulesError, "bad_options"),
        (GroupingError, "bad_options"),
        (LiveError, "bad_options"),
        (VerifyError, "bad_declaration"),
        (AuditAuthError, "unauthorized"),
        (AuditSecretError, "audit_not_configured"),
        (CheckpointError, "bad_options"),
        (StoreUnavailableError, "store_unavailable"),
        (StoreFullError, "storage_full"),
        (AuditError, "audit_failed"),
        (StoreError, "store_failed"),
    ):
        if isinstance(error, family):
            return code
    return "internal_error"


_TYPE_TAGS = frozenset({"int", "float", "str", "bool", "decimal", "list", "dict", "none"})
"""Names pydantic puts in an error's place for the member of a union it tried (``stake.str``)."""


def _field_path(location: Any) -> str:
    """An error's place as the request names it (``hands.0``, ``stake``): no ``body``, no
    ``query`` or ``path`` before a parameter's name, no union member tried
    (``constrained-float``, ``list[constrained-str]``)."""
    location = tuple(location)
    if location[:1] in (("query",), ("path",)):
        location = location[1:]
    names = [str(item) for item in location if item != "body" and not _is_tag(item)]
    return ".".join(names)


def _is_tag(item: object) -> bool:
    """Whether a place in an error's location names a union member pydantic tried."""
    return isinstance(item, str) and (item in _TYPE_TAGS or any(c in item for c in "-[]"))


def _union_problems(problems: list[Any]) -> list[Any]:
    """The problems of the union member each value was meant for: a member whose own type the
    value has (no type mismatch at the member itself: a text too long for the text member, not
    "a valid list" for the list member); when the value has none of the members' types, one
    problem naming them all ("Input should be a valid list or a valid string")."""
    unions: dict[tuple[Any, ...], dict[Any, list[Any]]] = {}
    kept: list[Any] = []
    for problem in problems:
        location = tuple(problem.get("loc", ()))
        at = next((i for i, item in enumerate(location) if _is_tag(item)), None)
        if at is None:
            kept.append(problem)
        else:
            unions.setdefault(location[:at], {}).setdefault(location[at], []).append(problem)
    for place, members in unions.items():
        depth = len(place) + 1  # a problem of the member itself, not of an item inside it
        meant = [
            listed
            for listed in members.values()
            if not any(
                len(p.get("loc", ())) == depth and str(p.get("type", "")).endswith("_type")
                for p in listed
            )
        ]
        if meant:
            kept.extend(meant[0])
            continue
        wanted = [str(listed[0].get("msg", "")).removeprefix("Input should be ")
                  for listed in members.values()]  # fmt: skip
        kept.append({"loc": place, "msg": "Input should be " + " or ".join(dict.fromkeys(wanted))})
    return kept


def _error_message(error: BaseException) -> str:
    if isinstance(error, ValidationError | RequestValidationError):
        said: dict[str, list[str]] = {}  # each problem once, with the fields that have it
        seen: set[str] = set()  # a field's first problem only
        for problem in _union_problems(list(error.errors())):
            where = _field_path(problem.get("loc", ()))  # "": the request as a whole
            text = str(problem.get("msg", "invalid")).removeprefix("Value error, ")
            if where not in seen:
                seen.add(where)
                named = problem.get("type") == REFUSED_BY_RULES  # the rules' words name it
                said.setdefault(text, []).append("" if named else where)
        return (
            "; ".join(
                f"{', '.join(place for place in places if place)}: {text}" if any(places) else text
                for text, places in said.items()
            )
            or "invalid request"
        )
    if isinstance(error, ClientDisconnect):
        return DISCONNECTED_MESSAGE
    return str(error) or type(error).__name__


DISCONNECTED_MESSAGE = "the client closed the connection before its request arrived whole"
"""What is logged (in one line, at INFO) of a client gone while its body was on its way: a
dropped phone connection, not a fault of the service."""

INTERNAL_MESSAGE = "the server met an unexpected error; its log has the details"
"""What a client is told of a bug (``internal_error``): its text may name the server's files or
data, and is logged with the traceback instead."""


def describe_error(error: BaseException) -> tuple[str, str]:
    """The API error code and message of an exception (for answers that are no HTTP response:
    WebSocket messages); a bug's own text is never told (:data:`INTERNAL_MESSAGE`)."""
    code = _error_code(error)
    return code, INTERNAL_MESSAGE if code == "internal_error" else _error_message(error)


def error_response(code: str, message: str) -> JSONResponse:
    """The JSON error body with the status of ``code`` (``too_large``: with ``Connection:
    close``, for the rest of the refused body is never read)."""
    status = ERROR_STATUS.get(code, 500)
    # RFC 9110: a 401 names the scheme it wants (the operator token, as a bearer token)
    headers = {"WWW-Authenticate": 'Bearer realm="handreader"'} if status == 401 else None
    if code == "too_large":
        # the body was refused before it was read whole: what is left of it must not be
        # taken for the next request on this connection, so the server closes it
        headers = {"Connection": "close"}
    return JSONResponse(
        {"error": {"code": code, "message": message}}, status_code=status, headers=headers
    )


def _held_off(error: TooManyAttemptsError) -> JSONResponse:
    """429 with its ``Retry-After``."""
    response = error_response(error.code, str(error))
    response.headers["Retry-After"] = str(error.retry_after_s)
    return response


async def handle_error(request: Request, error: Exception) -> JSONResponse:
    """An expected error's answer; an expected 5xx is logged in one line, an unknown exception
    (a bug) with its traceback. A refused token is counted by the worker's token guard
    (:mod:`handreader.service.token_guard`), which says how long to wait before answering and
    which refusals to log (a request without a token is refused, not counted: it guesses
    nothing); a client it holds off gets 429 with ``Retry-After``."""
    code, message = describe_error(error)
    where = printable(f"{request.method} {request.url.path}")  # a client's text, logged
    if code == "internal_error":
        LOG.error("%s failed: %s", where, error, exc_info=error)
    elif code == "unauthorized" and getattr(error, "guessed", True):  # a missing token guesses
        refusal = note_refusal(request, f"{where}: {message}")
        if refusal.retry_after_s is not None:
            return _held_off(TooManyAttemptsError(refusal.retry_after_s))
        if refusal.delay_s > 0:
            await asyncio.sleep(refusal.delay_s)
    elif isinstance(error, TooManyAttemptsError):
        return _held_off(error)
    elif code == "client_disconnected":
        LOG.info("%s: %s", where, message)
    elif ERROR_STATUS.get(code, 500) >= 500:
        LOG.error("%s failed: %s: %s", where, code, message)
    return error_response(code, message)


async def handle_http(request: Request, error: Exception) -> JSONResponse:
    """The framework's HTTP errors (404, 405 with its ``Allow`` header...) in the JSON form.
    The router's own 404 and 405, which say no more than the status's name, are told in
    words: the method and path asked, and for 405 the methods the path answers."""
    status = error.status_code if isinstance(error, HTTPException) else 500
    code = {404: "not_found", 405: "method_not_allowed"}.get(status, "http_error")
    detail = str(getattr(error, "detail", ""))
    allowed = allowed_methods(request) if status == 405 else []
    if detail == _status_phrase(status):  # the router's (a route's own 404 names its thing)
        detail = _routing_message(request, status, allowed) or detail
    response = error_response(code, detail or code)
    response.status_code = status
    headers = getattr(error, "headers", None)
    if headers:
        response.headers.update(headers)
    if status == 405:
        response.headers["Allow"] = ", ".join(allowed)
    return response


_PATH_SHOWN = 200
"""The most characters of a request's path an answer repeats (a 70 KB URL is not echoed)."""


def _status_phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _routing_message(request: Request, status: int, allowed: list[str]) -> str | None:
    """What a 404 or 405 of the router means for this request (None for another status)."""
    path = request.url.path
    if len(path) > _PATH_SHOWN:
        path = path[:_PATH_SHOWN] + "..."
    method = printable(request.method)
    if status == 404:
        return f"no such endpoint: {method} {printable(path)}"
    if status == 405:
        answered = ", ".join(allowed) or "none"
        return f"method {method} is not allowed on {printable(path)}; allowed: {answered}"
    return None


def allowed_methods(request: Request) -> list[str]:
    """Every method some route of the app answers at the request's path (the routing stops at
    the first route whose path matches, so its ``Allow`` alone misses a path's other routes:
    ``GET /v1/decks/NAME`` beside its ``POST`` and ``DELETE``). ``HEAD`` goes with ``GET``."""
    methods = {
        method
        for method in ("DELETE", "GET", "PATCH", "POST", "PUT")
        if any(
            route.matches({**request.scope, "method": method})[0] is Match.FULL
            for route in request.app.router.routes
        )
    }
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods)


class UnexpectedErrors:
    """ASGI middleware: an exception that no handler answered becomes a 500
    ``internal_error`` answer, its traceback logged once, the connection kept.

    An exception raised after the response has started cannot be answered: it goes on to the
    server, which closes the connection.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception as error:
            if started:
                raise
            LOG.error(
                "%s %s failed: %s", scope.get("method"), scope.get("path"), error, exc_info=error
            )
            await error_response("internal_error", INTERNAL_MESSAGE)(scope, receive, send)


ERROR_EXAMPLES: Mapping[str, str] = {
    "bad_card": "unknown card 'ZZ': expected a rank A,2..10,J,Q,K (or T) and a suit S,H,D,C, "
    "or a joker JB / JR",
    "bad_options": "since: time 'yesterday' is not ISO 8601",
    "bad_declaration": "seat 1: unknown outcome 'won': known are win, lose, tie",
    "bad_host": "host 'rebind.attacker.example' is not served here",
    "unauthorized": "missing operator token for the audit log",
    "forbidden": "writing decks is off: the operator sets HANDREADER_OPERATOR_TOKEN (then sends "
    "it as 'Authorization: Bearer <token>') or HANDREADER_OPEN_DECKS=1",
    "not_found": "no deck 'casino-red'",
    "method_not_allowed": "method PUT is not allowed on /v1/score; allowed: POST",
    "not_acceptable": "cannot answer Accept 'application/json': image/jpeg or image/png",
    "request_timeout": "the request body did not arrive within 30 s",
    "quota_exceeded": "the service keeps at most 50 decks: delete one first "
    "(DELETE /v1/decks/NAME)",
    "deck_exists": "deck 'casino-red' has 52 cards; this calibration has 1 and would lose 2S, 3S, "
    "4S, 5S, 6S, 7S and 45 more: send replace=true to replace it, or calibrate another name",
    "too_large": "request body of 31,457,280 bytes is over the limit of 20,971,520 bytes",
    "unsupported_type": "not a supported image (JPEG, PNG, WebP, BMP, GIF or TIFF): first bytes "
    "25 50 44 46 2d 31 2e 37",
    "unsupported_encoding": "Content-Encoding 'gzip' is not supported: send the body uncompressed",
    "validation_error": "stake: Input should be a valid number",
    "too_many_attempts": "too many wrong operator tokens from this address: try again in 60 s",
    "internal_error": INTERNAL_MESSAGE,
    "not_ready": "the recognizer is not ready: the models are loading",
    "audit_not_configured": "audit log not configured: set HANDREADER_AUDIT_TOKEN",
    "storage_full": "the store's disk is full: nothing was written",
}
"""Example messages, as the service words them, of at least one code of each error status:
the API's description shows one with every error status a route declares."""


def error_status_doc(
    status: int, codes: list[str] | None = None, example: str | None = None
) -> dict[str, Any]:
    """The OpenAPI description of the error answers of ``status``: the error codes that answer
    with it (``codes``, default every code of that status in :data:`ERROR_STATUS`), and an
    example answer of ``example`` (default: the first of those codes that
    :data:`ERROR_EXAMPLES` words). KeyError for a status no code has, or an example that is
    not one of the codes."""
    named = codes or [code for code, code_status in ERROR_STATUS.items() if code_status == status]
    if not named:
        raise KeyError(f"no error code answers with HTTP {status}")
    if example is not None and example not in named:
        raise KeyError(f"{example!r} is not an error code of HTTP {status}: {', '.join(named)}")
    shown = example or next((code for code in named if code in ERROR_EXAMPLES), named[0])
    answer = {"error": {"code": shown, "message": ERROR_EXAMPLES.get(shown, shown)}}
    return {
        "description": "error codes: " + ", ".join(named),
        "content": {"application/json": {"example": answer}},
    }


def error_responses(
    *statuses: int, examples: Mapping[int, str] | None = None
) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` of a route that may answer with ``statuses``: each described by
    the error codes of :data:`ERROR_STATUS` that answer with it, with an example answer (of
    the code ``examples`` names for the status, where the route knows a better one than the
    default: :func:`error_status_doc`; KeyError for a status no code has)."""
    chosen = examples or {}
    return {
        status: {"model": ErrorOut, **error_status_doc(status, example=chosen.get(status))}
        for status in statuses
    }


ERROR_RESPONSES = error_responses(400, 413, 415, 422, 500, 503)
"""The statuses of a route that reads an uploaded photo or card codes."""
