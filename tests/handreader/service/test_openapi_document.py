"""The OpenAPI document served at ``/openapi.json`` (and shown by ``/docs``) says what the
service does: every ``$ref`` resolves, every example request succeeds, every body a route
takes is declared, and every error status shows the service's own error shape with a code of
that status.

Expectations: docs/api.md ("an example for every body"; the error table), the OpenAPI 3.1
rule that a ``$ref`` is resolved against the document (so ``#/$defs/...`` points at the
document's root), ``handreader.service.errors.ERROR_STATUS`` for the codes of each status, and
``handreader.store.audit_trail.Checkpoint`` for the audit checkpoint.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from web_fakes import NIU_TABLE, FakeReader, fake_client, image_bytes

from handreader.service.errors import ERROR_STATUS
from handreader.service.openapi import mend_document
from handreader.service.schemas import ErrorOut
from handreader.store.audit_trail import Checkpoint

TOKEN = "s3cret-operator-token"
SECRET = "operator secret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
METHODS = ("get", "put", "post", "delete", "patch")


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    monkeypatch.setenv("HANDREADER_DATA", str(tmp_path))
    monkeypatch.setenv("HANDREADER_AUDIT_TOKEN", TOKEN)
    monkeypatch.setenv("HANDREADER_AUDIT_DB", str(tmp_path / "audit.sqlite3"))
    monkeypatch.setenv("HANDREADER_AUDIT_KEY", SECRET)
    with fake_client(FakeReader(NIU_TABLE)) as running:
        yield running


@pytest.fixture
def spec(client: TestClient) -> dict[str, Any]:
    document: dict[str, Any] = client.get("/openapi.json").json()
    return document


def _operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, methods in spec["paths"].items():
        for method, operation in methods.items():
            if method in METHODS:
                yield path, method, operation


def _walk(node: object, where: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object within ``node``, with its JSON pointer."""
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            yield from _walk(value, f"{where}/{str(key).replace('~', '~0').replace('/', '~1')}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _walk(item, f"{where}/{index}")


def _resolve(document: dict[str, Any], reference: str) -> object:
    """What a local ``$ref`` points at in ``document`` (KeyError where nothing is)."""
    assert reference.startswith("#/"), reference
    target: Any = document
    for part in reference[2:].split("/"):
        key = part.replace("~1", "/").replace("~0", "~")
        target = target[int(key)] if isinstance(target, list) else target[key]
    return target


# --- references ----------------------------------------------------------------------------------


def test_every_reference_in_the_document_resolves(spec: dict[str, Any]) -> None:
    # OpenAPI 3.1: a $ref is resolved against the document, so "#/$defs/X" must be at its root
    references = [(where, node["$ref"]) for where, node in _walk(spec) if "$ref" in node]
    assert len(references) > 20  # the photo, game and error answers use shared schemas
    unresolved = []
    for where, reference in references:
        try:
            _resolve(spec, reference)
        except (KeyError, IndexError, ValueError):
            unresolved.append((where, reference))
    assert not unresolved, unresolved
    assert not [where for where, node in _walk(spec) if "$defs" in node]


def test_the_pits_kind_is_a_shared_schema_the_body_points_at(spec: dict[str, Any]) -> None:
    # rules.pits.PitsKind: the kinds a play may be read as, an enum /docs shows by name
    body = spec["paths"]["/v1/pits"]["post"]["requestBody"]["content"]["application/json"]
    kind = body["schema"]["properties"]["kind"]
    references = [node["$ref"] for _, node in _walk(kind) if "$ref" in node]
    assert references == ["#/components/schemas/PitsKind"]
    assert "enum" in spec["components"]["schemas"]["PitsKind"]
    assert "$defs" not in body["schema"]["properties"]


def test_a_definition_clashing_with_a_shared_schema_takes_a_name_of_its_own() -> None:
    # two models' own definitions by one name: each reference keeps pointing at its own
    document: dict[str, Any] = {
        "paths": {},
        "components": {"schemas": {"Kind": {"enum": ["a"]}}},
        "x-body": {"$defs": {"Kind": {"enum": ["b"]}}, "items": {"$ref": "#/$defs/Kind"}},
    }
    mended = mend_document(document)
    assert mended["x-body"] == {"items": {"$ref": "#/components/schemas/Kind2"}}
    assert mended["components"]["schemas"]["Kind"] == {"enum": ["a"]}
    assert mended["components"]["schemas"]["Kind2"] == {"enum": ["b"]}


# --- examples and bodies -------------------------------------------------------------------------


def _json_examples(content: dict[str, Any]) -> list[Any]:
    media = content.get("application/json", {})
    named = [example["value"] for example in media.get("examples", {}).values()]
    return named + list(media.get("schema", {}).get("examples", []))


def _options_examples(content: dict[str, Any]) -> list[Any]:
    field = (
        content.get("multipart/form-data", {})
        .get("schema", {})
        .get("properties", {})
        .get("options")
    )
    if field is None:
        return []
    examples = [json.loads(field["example"])] if "example" in field else []
    return examples + list(field["contentSchema"].get("examples", []))


def _example_requests(spec: dict[str, Any]) -> list[tuple[str, str, str, Any]]:
    """(method, path, what, example) for every request body example of the document."""
    found = []
    for path, method, operation in _operations(spec):
        content = operation.get("requestBody", {}).get("content", {})
        found += [(method, path, "json", example) for example in _json_examples(content)]
        found += [(method, path, "options", example) for example in _options_examples(content)]
    return found


def test_every_example_request_succeeds(client: TestClient, spec: dict[str, Any]) -> None:
    """docs/api.md: "an example for every body"; each one, sent as /docs sends it, answers 200
    (the audit checkpoint aside: its signature holds only under the secret that made it, as
    the next test shows)."""
    examples = _example_requests(spec)
    assert {(path, what) for _, path, what, _ in examples} >= {
        ("/v1/verify", "options"),
        ("/v1/score", "json"),
        ("/v1/score", "options"),
        ("/v1/pits", "options"),
    }
    failed = []
    for method, path, what, example in examples:
        if path == "/v1/audit/verify":
            continue
        if what == "json":
            answer = client.request(method, path, json=example, headers=AUTH)
        else:
            files = {"image": ("table.jpg", image_bytes(), "image/jpeg")}
            data = {"options": json.dumps(example)}
            answer = client.request(method, path, files=files, data=data, headers=AUTH)
        if answer.status_code != 200:
            failed.append((method, path, example, answer.status_code, answer.text[:200]))
    assert not failed, failed


def test_the_verify_example_declares_the_results(spec: dict[str, Any]) -> None:
    body = spec["paths"]["/v1/verify"]["post"]["requestBody"]["content"]["multipart/form-data"]
    options = body["schema"]["properties"]["options"]
    assert "declared" in options["contentSchema"]["required"]
    assert all(
        "declared" in example for example in _options_examples({"multipart/form-data": body})
    )
    assert "declared" in json.loads(options["example"])


def test_the_audit_check_declares_its_checkpoint_body(
    client: TestClient, spec: dict[str, Any]
) -> None:
    """docs/security.md: ``POST /v1/audit/verify`` takes the checkpoint as its body."""
    body = spec["paths"]["/v1/audit/verify"]["post"]["requestBody"]
    assert body["required"] is True
    media = body["content"]["application/json"]
    assert set(media["schema"]["required"]) == {"count", "head", "signature"}
    (example,) = _json_examples(body["content"])[:1]
    assert Checkpoint.from_dict(example).to_dict() == example  # the shape the route reads
    trail = client.get("/v1/audit/verify", headers=AUTH).json()
    signed = {
        "count": trail["records"],
        "head": trail["head"],
        "signature": Checkpoint.sign(trail["records"], trail["head"], SECRET),
    }
    answer = client.post("/v1/audit/verify", json=signed, headers=AUTH)
    assert answer.status_code == 200 and answer.json()["ok"] is True, answer.text


def test_the_drawing_is_declared_as_an_image_only(spec: dict[str, Any]) -> None:
    answers = spec["paths"]["/v1/annotated"]["post"]["responses"]
    assert set(answers["200"]["content"]) == {"image/jpeg", "image/png"}


# --- errors --------------------------------------------------------------------------------------


def test_no_operation_declares_fastapis_validation_answer(
    client: TestClient, spec: dict[str, Any]
) -> None:
    """The service answers a bad parameter with its own error body, not ``{"detail": [...]}``."""
    text = json.dumps(spec)
    assert "HTTPValidationError" not in text
    deal = spec["paths"]["/v1/trainer/deal"]["get"]["responses"]["422"]
    schema = deal["content"]["application/json"]["schema"]
    assert schema == {"$ref": "#/components/schemas/ErrorOut"}
    answer = client.get("/v1/trainer/deal", params={"hands": "abc"})
    assert answer.status_code == 422
    assert ErrorOut.model_validate(answer.json()).error.code == "validation_error"


def test_every_error_status_shows_an_example_of_its_own(spec: dict[str, Any]) -> None:
    """Each declared error status shows the error body with a code ERROR_STATUS answers with
    that status, one of the codes its description lists."""
    shown: dict[str, set[str]] = {}
    for path, method, operation in _operations(spec):
        for status, answer in operation["responses"].items():
            if int(status) < 400:
                continue
            media = answer["content"]["application/json"]
            assert media["schema"] == {"$ref": "#/components/schemas/ErrorOut"}, (path, status)
            example = ErrorOut.model_validate(media["example"])
            code = example.error.code
            assert ERROR_STATUS[code] == int(status), (method, path, status, code)
            assert code in answer["description"].removeprefix("error codes: ").split(", ")
            assert example.error.message and example.error.message != code
            shown.setdefault(status, set()).add(code)
    assert shown["415"] >= {"unsupported_type", "unsupported_encoding"}
    assert shown["400"] >= {"bad_card", "bad_declaration", "bad_options"}
    assert len({code for codes in shown.values() for code in codes}) >= 12


def test_every_route_with_a_body_declares_a_compressed_body_refused(
    spec: dict[str, Any],
) -> None:
    for path, method, operation in _operations(spec):
        if "requestBody" in operation:
            described = operation["responses"]["415"]["description"]
            assert "unsupported_encoding" in described, (method, path)
