"""The client's contract with the service: a method for every route the service serves, the
same methods sync and async, and models that match the running server's `/v1/openapi.json`
(request fields both ways and their required set; response fields wherever the server documents
them; the vocabulary's enums)."""

from __future__ import annotations

import inspect
import typing
from typing import Any

import pytest
from agent_memory_client import ROUTES, AsyncMemoryClient, MemoryClient, models
from pydantic import BaseModel

from agent_memory.functions_spec import FUNCTIONS

SERVED = {(r.method, r.path) for spec in FUNCTIONS if spec.trigger == "api" for r in spec.routes}
COVERED = {(r.http_method, r.path): r.method_name for r in ROUTES}
ITERATORS = ("iter_memories", "iter_review_queue", "iter_audit", "iter_export")


def test_every_route_the_service_serves_has_a_client_method():
    # Given the service's route table and the client's
    # Then every served route has a method, and the client names no route the service lacks
    assert sorted(SERVED - COVERED.keys()) == []
    assert sorted(COVERED.keys() - SERVED) == []
    for name in COVERED.values():
        assert callable(getattr(MemoryClient, name, None)), name
        assert inspect.iscoroutinefunction(getattr(AsyncMemoryClient, name, None)), name


def test_the_async_client_has_the_sync_clients_methods_with_the_same_parameters():
    public = [n for n in dir(MemoryClient) if not n.startswith("_") and callable(getattr(MemoryClient, n))]
    assert set(COVERED.values()) | set(ITERATORS) <= set(public)
    for name in public:
        if name == "close":
            continue
        sync, async_ = (
            inspect.signature(getattr(MemoryClient, name)),
            inspect.signature(getattr(AsyncMemoryClient, name)),
        )
        assert list(sync.parameters) == list(async_.parameters), name
        assert [p.default for p in sync.parameters.values()] == [
            p.default for p in async_.parameters.values()
        ], name
    for name in ITERATORS:
        assert inspect.isasyncgenfunction(getattr(AsyncMemoryClient, name)), name


# -- the models against the running server's OpenAPI document ----------------------------------


@pytest.fixture(scope="module")
def document(api) -> dict[str, Any]:
    with MemoryClient(api.base) as client:
        return client.openapi()


def _resolve(schema: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    """Through `$ref`, `anyOf [X, null]` and arrays' `items`, to the schema of one value."""
    while True:
        if "$ref" in schema:
            schema = components[schema["$ref"].rsplit("/", 1)[-1]]
        elif "anyOf" in schema:
            options = [s for s in schema["anyOf"] if s.get("type") != "null"]
            if len(options) != 1:
                return schema
            schema = options[0]
        elif schema.get("type") == "array" and "items" in schema:
            schema = schema["items"]
        else:
            return schema


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _nested_model(arg)
        if found is not None:
            return found
    return None


def drift(
    model: type[BaseModel], schema: dict[str, Any], components: dict[str, Any], where: str, *, request: bool
) -> list[str]:
    """How `model` and the server's object schema disagree (empty: they match)."""
    props: dict[str, Any] = schema.get("properties", {})
    server_required = set(schema.get("required", []))
    mine = {field.alias or name: field for name, field in model.model_fields.items()}
    problems = [
        f"{where}.{n}: the server has it, {model.__name__} does not"
        for n in sorted(props.keys() - mine.keys())
    ]
    if request or schema.get("additionalProperties") is not True:
        problems += [
            f"{where}.{n}: {model.__name__} has it, the server does not"
            for n in sorted(mine.keys() - props.keys())
        ]
    client_required = {n for n, f in mine.items() if f.is_required()}
    if request and client_required != server_required:
        problems.append(
            f"{where}: required {sorted(client_required)} here, {sorted(server_required)} on the server"
        )
    if not request:  # the client may default what the server always sends, never require what it may omit
        problems += [
            f"{where}.{n}: required here, optional on the server"
            for n in sorted(client_required & props.keys() - server_required)
        ]
    for name in sorted(mine.keys() & props.keys()):
        nested = _nested_model(mine[name].annotation)
        sub = _resolve(props[name], components)
        if nested is not None and "properties" in sub:
            problems += drift(nested, sub, components, f"{where}.{name}", request=request)
    return problems


def _json_schema(holder: dict[str, Any]) -> dict[str, Any] | None:
    return (holder.get("content") or {}).get("application/json", {}).get("schema")


def test_request_models_match_the_servers_request_schemas(document):
    components = document["components"]["schemas"]
    problems: list[str] = []
    compared = 0
    for route in ROUTES:
        operation = document["paths"][route.path][route.http_method.lower()]
        schema = _json_schema(operation.get("requestBody") or {})
        # a route takes a body in the client exactly when the server documents one
        assert (schema is not None) == (route.request is not None), route.method_name
        if schema is None or route.request is None:
            continue
        problems += drift(
            route.request, _resolve(schema, components), components, route.method_name, request=True
        )
        compared += 1
    assert problems == []
    assert compared == sum(1 for r in ROUTES if r.request is not None) >= 14


def test_response_models_match_the_servers_documented_response_schemas(document):
    components = document["components"]["schemas"]
    problems: list[str] = []
    compared: list[str] = []
    for route in ROUTES:
        operation = document["paths"][route.path][route.http_method.lower()]
        answers = [
            _json_schema(r) for code, r in sorted(operation["responses"].items()) if code.startswith("2")
        ]
        schema = next((_resolve(s, components) for s in answers if s), None)
        if route.response is None or schema is None or not schema.get("properties"):
            continue  # the server does not document this answer's fields (yet)
        problems += drift(route.response, schema, components, route.method_name, request=False)
        compared.append(route.method_name)
    assert problems == []
    # the ones documented today, at least: this test compares something
    assert {"revalidate", "delete_memory", "working_set", "working_get", "export_subject"} <= set(compared)


def test_the_vocabulary_matches_the_servers_enums(document):
    components = document["components"]["schemas"]
    for name in ("MemoryType", "Authority", "Sensitivity", "Scope", "Speaker", "CommitmentOutcome", "Status"):
        assert set(typing.get_args(getattr(models, name))) == set(components[name]["enum"]), name


def test_drift_is_reported_when_a_field_goes_missing():
    # Given a server schema with a field the model lacks, and a model field the server lacks
    class Reply(BaseModel):
        a: int
        b: str | None = None

    schema = {"properties": {"a": {"type": "integer"}, "c": {"type": "string"}}, "required": ["a", "c"]}
    # Then both are named, for a request and (no extra allowed) for a response
    assert drift(Reply, schema, {}, "op", request=True) == [
        "op.c: the server has it, Reply does not",
        "op.b: Reply has it, the server does not",
        "op: required ['a'] here, ['a', 'c'] on the server",
    ]
    assert drift(Reply, {**schema, "additionalProperties": True}, {}, "op", request=False) == [
        "op.c: the server has it, Reply does not"
    ]
