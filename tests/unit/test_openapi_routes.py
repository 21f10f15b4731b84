"""The OpenAPI document shows every route's real shapes: a named response model (not a generic
object) for each success, and for each refusal the route can answer the error body the service
really sends, `{"error": {code, message, field, request_id}}`, as shared components."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from agent_memory.api.http import error_response
from agent_memory.api.models import (
    audit,
    common,
    erasure,
    health,
    memories,
    policy,
    retrieve,
    review,
    sessions,
)
from agent_memory.api.models.common import ErrorBody, MemoryView, ResponseModel
from agent_memory.api.models.retrieve import RetrieveResponse
from agent_memory.api.models.sessions import SessionAccepted
from agent_memory.api.openapi import RESPONSE_EXAMPLES, merged_openapi
from agent_memory.domain.records import MemoryRecord
from agent_memory.functions_spec import FUNCTIONS, Route

ROUTES = [(spec.name, r) for spec in FUNCTIONS if spec.trigger == "api" for r in spec.routes]
IDS = [f"{r.method} {r.path}" for _, r in ROUTES]
AREAS = (audit, common, erasure, health, memories, policy, retrieve, review, sessions)
DOCUMENTED_ERRORS = {401, 403, 404, 409, 413, 415, 422, 429, 503}


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return merged_openapi()


def operation_of(document: dict[str, Any], route: Route) -> dict[str, Any]:
    return document["paths"][route.path][route.method.lower()]


def component(document: dict[str, Any], ref: str) -> dict[str, Any]:
    section, name = ref.removeprefix("#/components/").split("/")
    return document["components"][section][name]


@pytest.mark.parametrize(("function", "route"), ROUTES, ids=IDS)
def test_every_success_names_a_model_with_its_fields(document, function, route):
    # Given a route of the function table, when its operation is read
    operation = operation_of(document, route)
    successes = {code: r for code, r in operation["responses"].items() if code.startswith("2")}
    # Then it is tagged with its function and answers at least one success
    assert operation["tags"] == [function]
    assert successes, route
    for code, answer in successes.items():
        content = answer.get("content")
        if content is None:  # 204: no body at all
            assert code == "204"
            continue
        if "text/html" in content:
            assert route.path == "/v1/docs"
            continue
        schema = content["application/json"]["schema"]
        # And the JSON answer is a named component with declared fields, not `{type: object}`
        assert "$ref" in schema, (route, code, schema)
        model = component(document, schema["$ref"])
        assert model.get("properties"), (route, code)
        if route.path != "/v1/openapi.json":  # the document itself may carry extensions
            # a model that drops or refuses undeclared fields: the answer has no field unlisted
            assert model.get("additionalProperties") is not True, (route, code)


@pytest.mark.parametrize(("function", "route"), ROUTES, ids=IDS)
def test_every_refusal_a_route_can_answer_is_documented_with_the_error_body(document, function, route):
    operation = operation_of(document, route)
    responses = operation["responses"]
    expected = {429, 500}
    if route.auth:
        expected |= {401, 403, 503}
    if "{" in route.path:
        expected |= {404, 422}
    if "requestBody" in operation:
        expected |= {413, 415, 422}
    documented = {int(code) for code in responses if not code.startswith("2")}
    assert expected <= documented, (route, sorted(expected - documented))
    for code in documented:
        answer = responses[str(code)]
        if route.path == "/v1/health" and code == 503:
            continue  # degraded health answers the health body itself
        # Each refusal is a shared component whose body is the service's ErrorBody
        assert "$ref" in answer, (route, code)
        shared = component(document, answer["$ref"])
        media = shared["content"]["application/json"]
        assert media["schema"] == {"$ref": "#/components/schemas/ErrorBody"}
        assert ErrorBody.model_validate(media["example"]).error.message


def test_the_error_body_component_is_the_one_the_service_sends(document):
    # Given the documented error body and a refusal the service really builds
    schemas = document["components"]["schemas"]
    detail = schemas["ErrorDetail"]
    assert set(detail["properties"]) == {"code", "message", "field", "reason", "request_id", "limit"}
    assert set(detail["required"]) == {"code", "message", "request_id"}
    sent = error_response(422, "invalid_request", "subject_id: Field required", "req-1", "subject_id")
    # Then the service's body fits the documented model field for field
    body = sent.body if isinstance(sent.body, dict) else json.loads(sent.body)
    assert ErrorBody.model_validate(body).model_dump(mode="json") == body
    # And every status of the contract has its shared response, 429 and 503 with Retry-After
    statuses = {int(code) for op in _operations(document) for code in op["responses"] if code[0] in "45"}
    assert statuses >= DOCUMENTED_ERRORS
    for name in ("RateLimited", "Unavailable"):
        assert "Retry-After" in document["components"]["responses"][name]["headers"]


def test_no_powertools_validation_shape_is_left_in_the_document(document):
    # The service maps every validation error to its own body (api/http.py): the resolver's
    # default `HTTPValidationError` would describe an answer that is never sent.
    text = json.dumps(document)
    assert "HTTPValidationError" not in text and "ResponseValidationError" not in text


def test_every_route_with_a_body_shows_an_example(document):
    for _, route in ROUTES:
        body = operation_of(document, route).get("requestBody")
        if body is None:
            continue
        media = body["content"]["application/json"]
        schema = (
            component(document, media["schema"]["$ref"]) if "$ref" in media["schema"] else media["schema"]
        )
        assert "example" in media or schema.get("examples"), route


def test_the_tags_are_the_function_tables_functions(document):
    names = [t["name"] for t in document["tags"]]
    assert names == [spec.name for spec in FUNCTIONS if spec.trigger == "api"]


def _operations(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [op for ops in document["paths"].values() for op in ops.values()]


@pytest.mark.parametrize(("function", "route"), ROUTES, ids=IDS)
def test_every_json_answer_shows_an_example(document, function, route):
    for code, answer in operation_of(document, route)["responses"].items():
        media = (answer.get("content") or {}).get("application/json")
        if not code.startswith("2") or media is None or route.path == "/v1/openapi.json":
            continue
        model = component(document, media["schema"]["$ref"])
        assert "example" in media or model.get("examples"), (route, code)


def _response_models() -> list[type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    for area in AREAS:
        for value in vars(area).values():
            if isinstance(value, type) and issubclass(value, ResponseModel) and value is not ResponseModel:
                found[value.__name__] = value
    return sorted(found.values(), key=lambda m: m.__name__)


def test_the_examples_are_answers_the_models_send_unchanged():
    # Given every example the document shows for an answer
    examples = [
        (m, e)
        for m in _response_models()
        for e in (m.model_config.get("json_schema_extra") or {}).get("examples", [])
    ]
    examples += list(RESPONSE_EXAMPLES.values())
    assert len(examples) >= 20
    # Then each one validates against its model and comes out byte for byte as it went in
    for model, example in examples:
        assert model.model_validate(example).model_dump(mode="json") == example, model.__name__


def test_a_field_sent_only_sometimes_is_left_out_when_unset():
    # Given a retrieval without a session and a status without a failure: no `working`, no `reason`
    plain = RetrieveResponse.model_validate(
        {
            "subject_id": "S",
            "context": "",
            "memories": [],
            "live": [],
            "excluded": {},
            "tokens": 0,
            "max_tokens": 9,
        }
    ).model_dump(mode="json")
    assert "working" not in plain and "live_unavailable" not in plain
    # And with them set, they are sent
    flagged = RetrieveResponse.model_validate({**plain, "working": [], "live_unavailable": True})
    assert flagged.model_dump(mode="json")["working"] == [] and flagged.live_unavailable is True


def test_an_undeclared_field_in_an_answer_is_refused():
    # A service answering with a field its model lacks fails (a 500 in the route), never silently
    with pytest.raises(ValidationError):
        SessionAccepted.model_validate({"session_id": "S-1", "status": "queued", "surprise": 1})


def test_the_memory_view_declares_every_field_of_the_record():
    # Reads show a record as its every field plus `verified` and `section`: a field added to the record must be
    # added to the view too (the route would refuse to send it otherwise), and this names it.
    assert list(MemoryView.model_fields) == [*MemoryRecord.model_fields, "verified", "section"]
