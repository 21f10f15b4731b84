"""The client's response models against the response schemas the running server documents
(`/v1/openapi.json`, generated from the server's own response models in agent_memory.api.models):
every route's answer, field by field both ways and at every depth. A field the server's model gains
or loses that the client's model does not follow fails here."""

from __future__ import annotations

from typing import Any

import pytest
from agent_memory_client import ROUTES, MemoryClient
from agent_memory_client import models as client_models
from pydantic import BaseModel, create_model
from schema_drift import drift, success_schema

from agent_memory.api.models import sessions as server_sessions

pytestmark = pytest.mark.e2e

# The answers the client does not parse into a model: the document itself, the Swagger page, a 204.
UNMODELLED = {"openapi", "docs", "working_delete"}


@pytest.fixture(scope="module")
def document(api) -> dict[str, Any]:
    with MemoryClient(api.base) as client:
        return client.openapi()


def test_every_answer_the_client_parses_matches_the_servers_response_schema(document):
    # Given the served document and the client's route table
    components = document["components"]["schemas"]
    problems: list[str] = []
    compared: list[str] = []
    for route in ROUTES:
        operation = document["paths"][route.path][route.http_method.lower()]
        schema = success_schema(operation, components)
        if route.response is None:
            assert route.method_name in UNMODELLED, route.method_name
            continue
        # Then the server documents every field of the answer and allows no other, so both
        # directions are compared (a field only the client knows is drift too)
        assert schema is not None and schema.get("properties"), route.method_name
        assert schema.get("additionalProperties") is not True, route.method_name
        problems += drift(route.response, schema, components, route.method_name, request=False)
        compared.append(route.method_name)
    assert problems == []
    assert len(compared) == len(ROUTES) - len(UNMODELLED)


def _server_schema(model: type[BaseModel]) -> tuple[dict[str, Any], dict[str, Any]]:
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}", mode="serialization")
    return schema, schema.pop("$defs", {})


def test_a_field_the_servers_model_gains_is_reported():
    # Given the server's real session-status model with one field more than today
    grown = create_model(
        "SessionStatus", __base__=server_sessions.SessionStatus, reviewer_note=(str | None, None)
    )
    schema, components = _server_schema(grown)
    # Then the client's model is reported as not knowing it
    assert drift(client_models.SessionStatus, schema, components, "get_session", request=False) == [
        "get_session.reviewer_note: the server has it, SessionStatus does not"
    ]


def test_a_field_the_servers_model_loses_is_reported():
    # Given the server's real session-status model without its `attempts` field
    fields = {
        name: (info.annotation, info)
        for name, info in server_sessions.SessionStatus.model_fields.items()
        if name != "attempts"
    }
    shrunk = create_model("SessionStatus", __base__=server_sessions.ResponseModel, **fields)  # type: ignore[call-overload]
    schema, components = _server_schema(shrunk)
    # Then the client's model is reported as expecting a field the server no longer sends
    assert drift(client_models.SessionStatus, schema, components, "get_session", request=False) == [
        "get_session.attempts: SessionStatus has it, the server does not"
    ]


def test_the_servers_models_as_they_are_match_the_clients():
    # Given the server's session-status model unchanged, the same comparison finds nothing
    schema, components = _server_schema(server_sessions.SessionStatus)
    assert drift(client_models.SessionStatus, schema, components, "get_session", request=False) == []
