"""The OpenAPI document served at ``/openapi.json`` (and shown by ``/docs``): FastAPI's, mended
once, for every route, where it would describe the service wrongly.

- A body schema written from a pydantic model (``handreader.service.requests.request_body_doc``)
  keeps the model's own ``$defs`` inside it, and its ``$ref`` values point at ``#/$defs/...``:
  the document's root, where nothing is (``/docs`` then shows an enum as "any" and ``$defs`` as
  a field). Each such definition moves to ``components/schemas`` and its references follow it,
  so that every ``$ref`` of the document resolves.
- A route with parameters that declares no 422 gets FastAPI's ``HTTPValidationError``
  (``{"detail": [...]}``), a shape the service never answers: it becomes the service's error
  body (``ErrorOut``) with the codes of 422.
- Every route that takes a body may answer 415 ``unsupported_encoding``
  (:mod:`handreader.service.encodings`): declared where the route declares no 415.

Call :func:`install_openapi` on the app once its routes are added.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from fastapi import FastAPI

from handreader.service.errors import error_status_doc
from handreader.service.schemas import ErrorOut

__all__ = ["SCHEMAS_REF", "install_openapi", "mend_document"]

SCHEMAS_REF = "#/components/schemas/"
"""Where a ``$ref`` to a shared schema points."""

_LOCAL_REF = "#/$defs/"
"""Where pydantic's references point inside a model's own schema."""

_FASTAPI_VALIDATION = ("HTTPValidationError", "ValidationError")
"""FastAPI's schemas of its own validation answer, which the service never sends."""

_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})


def install_openapi(app: FastAPI) -> None:
    """Have ``app`` serve :func:`mend_document` of the document FastAPI makes (made once, on
    the first request for it)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = mend_document(build())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def mend_document(document: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``document`` mended as the module docstring says."""
    mended = copy.deepcopy(document)
    schemas: dict[str, Any] = mended.setdefault("components", {}).setdefault("schemas", {})
    if ErrorOut.__name__ not in schemas:
        schemas[ErrorOut.__name__] = ErrorOut.model_json_schema(ref_template=_LOCAL_REF + "{model}")
    for operation in _operations(mended):
        responses = operation.setdefault("responses", {})
        for status, response in list(responses.items()):
            if _refers_to(response, SCHEMAS_REF + _FASTAPI_VALIDATION[0]):
                # (FastAPI adds it for the parameters it checks: validation_error alone)
                responses[status] = _error_doc(int(status), ["validation_error"])
        if "requestBody" in operation and "415" not in responses:
            responses["415"] = _error_doc(415, ["unsupported_encoding"])
    _hoist_definitions(mended, schemas)
    for name in _FASTAPI_VALIDATION:
        if not _refers_to(mended, SCHEMAS_REF + name):
            schemas.pop(name, None)
    return mended


def _error_doc(status: int, codes: list[str] | None = None) -> dict[str, Any]:
    """An error status's response object, its body the service's ``ErrorOut``."""
    described = error_status_doc(status, codes)
    described["content"]["application/json"]["schema"] = {"$ref": SCHEMAS_REF + "ErrorOut"}
    return described


def _operations(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for methods in document.get("paths", {}).values():
        for method, operation in methods.items():
            if method in _METHODS and isinstance(operation, dict):
                yield operation


def _refers_to(node: object, target: str) -> bool:
    """Whether a ``$ref`` within ``node`` is ``target``."""
    return any(holder["$ref"] == target for holder in _reference_holders(node))


def _reference_holders(node: object) -> Iterator[dict[str, Any]]:
    """Every object within ``node`` whose ``$ref`` is a reference (text)."""
    pending = [node]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            if isinstance(item.get("$ref"), str):
                yield item
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)


def _hoist_definitions(node: object, schemas: dict[str, Any]) -> None:
    """Move every ``$defs`` within ``node`` into ``schemas``, pointing its references there.

    A definition keeps its name unless ``schemas`` holds another schema by that name; it then
    takes the first free name with a number after it (``PitsKind2``)."""
    if isinstance(node, list):
        for item in node:
            _hoist_definitions(item, schemas)
        return
    if not isinstance(node, dict):
        return
    definitions = node.pop("$defs", None)
    if isinstance(definitions, dict):
        for definition in definitions.values():
            _hoist_definitions(definition, schemas)  # (its own $defs, were there any)
        as_named = _retargeter({name: name for name in definitions})
        names = {
            name: _free_name(name, _rewritten(definition, as_named), schemas)
            for name, definition in definitions.items()
        }
        retarget = _retargeter(names)
        _rewrite_references(node, retarget)
        for name, definition in definitions.items():
            _rewrite_references(definition, retarget)
            schemas[names[name]] = definition
    for value in list(node.values()):  # (``schemas`` itself may grow on the way)
        _hoist_definitions(value, schemas)


def _free_name(name: str, definition: object, schemas: dict[str, Any]) -> str:
    """``name``, or the first ``name<n>`` that ``schemas`` lacks or holds as ``definition``."""
    candidate, number = name, 1
    while candidate in schemas and schemas[candidate] != definition:
        number += 1
        candidate = f"{name}{number}"
    return candidate


def _retargeter(names: dict[str, str]) -> Callable[[str], str]:
    """A reference to a model's own definition pointed at its place among the shared ones."""

    def retarget(reference: str) -> str:
        if not reference.startswith(_LOCAL_REF):
            return reference
        name, slash, rest = reference.removeprefix(_LOCAL_REF).partition("/")
        if name not in names:
            return reference
        return SCHEMAS_REF + names[name] + slash + rest

    return retarget


def _rewritten(node: object, retarget: Callable[[str], str]) -> object:
    """A copy of ``node`` with its references retargeted."""
    copied = copy.deepcopy(node)
    _rewrite_references(copied, retarget)
    return copied


def _rewrite_references(node: object, retarget: Callable[[str], str]) -> None:
    """Every ``$ref`` within ``node`` (changed in place) retargeted."""
    for holder in _reference_holders(node):
        holder["$ref"] = retarget(holder["$ref"])
