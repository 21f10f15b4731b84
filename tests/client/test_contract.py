"""The client's contract with the service: a method for every route the service serves, the
same methods sync and async, and request models that match the running server's `/v1/openapi.json`
(fields both ways and their required set; the vocabulary's enums). The response models are
checked in test_response_drift.py."""

from __future__ import annotations

import inspect
import typing
from typing import Any

import pytest
from agent_memory_client import ROUTES, AsyncMemoryClient, MemoryClient, models
from pydantic import BaseModel
from schema_drift import drift, json_schema, resolve

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


@pytest.mark.e2e  # the running local front's document: the embedded PostgreSQL and moto
def test_request_models_match_the_servers_request_schemas(document):
    components = document["components"]["schemas"]
    problems: list[str] = []
    compared = 0
    for route in ROUTES:
        operation = document["paths"][route.path][route.http_method.lower()]
        schema = json_schema(operation.get("requestBody") or {})
        # a route takes a body in the client exactly when the server documents one
        assert (schema is not None) == (route.request is not None), route.method_name
        if schema is None or route.request is None:
            continue
        # A body of several shapes (a typed write, or a content-only note): the client's model
        # matches one of them exactly
        options = schema.get("oneOf") or [schema]
        problems += min(
            (
                drift(route.request, resolve(option, components), components, route.method_name, request=True)
                for option in options
            ),
            key=len,
        )
        compared += 1
    assert problems == []
    assert compared == sum(1 for r in ROUTES if r.request is not None) >= 14


@pytest.mark.e2e
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
