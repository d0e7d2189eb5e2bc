"""The one table from error codes to HTTP statuses, and the handlers that answer every error with
``{"error": {"code": ..., "message": ...}}``."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException

from handreader.service.requests import ServiceError
from handreader.service.schemas import ErrorOut
from handreader.store.audit import AuditAuthError, AuditError
from handreader.store.database import StoreError, StoreUnavailableError
from handreader.tables.grouping import GroupingError
from handreader.tables.verification import VerifyError
from rules.errors import CardError, HandError, IllegalPlayError, ProfileError, RulesError
from rules.pits import CombinationError
from vision.imageio import ImageError

__all__ = [
    "ERROR_RESPONSES",
    "ERROR_STATUS",
    "describe_error",
    "error_response",
    "error_responses",
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
    "store_failed": 500,
    "not_ready": 503,
    "recognizer_timeout": 503,
    "audit_not_configured": 503,
    "store_unavailable": 503,
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
        (StoreUnavailableError, "store_unavailable"),
        (AuditError, "audit_failed"),
        (StoreError, "store_failed"),
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


async def handle_error(request: Request, error: Exception) -> JSONResponse:
    code = _error_code(error)
    if ERROR_STATUS.get(code, 500) >= 500:
        LOG.error("%s %s failed: %s", request.method, request.url.path, error, exc_info=error)
    return error_response(code, _error_message(error))


async def handle_http(request: Request, error: Exception) -> JSONResponse:
    status = error.status_code if isinstance(error, HTTPException) else 500
    code = {404: "not_found", 405: "method_not_allowed"}.get(status, "http_error")
    response = error_response(code, str(getattr(error, "detail", "")) or code)
    response.status_code = status
    return response


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` of a route that may answer with ``statuses``: each described by
    the error codes of :data:`ERROR_STATUS` that answer with it (KeyError for a status no code
    has)."""
    responses: dict[int | str, dict[str, Any]] = {}
    for status in statuses:
        codes = [code for code, code_status in ERROR_STATUS.items() if code_status == status]
        if not codes:
            raise KeyError(f"no error code answers with HTTP {status}")
        responses[status] = {"model": ErrorOut, "description": "error codes: " + ", ".join(codes)}
    return responses


ERROR_RESPONSES = error_responses(400, 413, 415, 422, 500, 503)
"""The statuses of a route that reads an uploaded photo or card codes."""
