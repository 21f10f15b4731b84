"""The API's own OpenAPI document, fuzzed: for every route the local front serves, the operation
that the served `/v1/openapi.json` describes gets requests generated from its schema (ones that fit
it and ones that break it), sent through the HTTP front. No request earns a 5xx, and every refusal
carries the API's JSON error body (docs/api.md: {"error": {"code", "message", "request_id"}}).

Under `make test` the "ci" Hypothesis profile (tests/conftest.py) derandomizes, so every run sends
the same requests and a failure in a log replays by running this file again;
`HYPOTHESIS_PROFILE=explore` draws new ones."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from agent_memory.api.identity import issue_token
from agent_memory.domain.enums import Role
from agent_memory.domain.ids import ID_MAX_LENGTH, ID_PATTERN
from agent_memory.functions_spec import FUNCTIONS

pytestmark = [
    pytest.mark.e2e,
    # Hypothesis notes any change to the global `random` state while it draws a case; here that is the
    # service's own background threads (an erasure started by the previous request), not the strategies.
    pytest.mark.filterwarnings("ignore:Do not use the `random` module inside strategies"),
]

TENANT = "fuzz-openapi"
PUBLIC = {(r.method, r.path) for s in FUNCTIONS for r in s.routes if not r.auth}
ROUTES = sorted((r.method, r.path) for s in FUNCTIONS if s.trigger == "api" for r in s.routes)
ROUTE_IDS = [f"{m} {p}" for m, p in ROUTES]

# Requests per operation: with a valid token (half fit the schema, half break it), then without one.
AUTHORIZED = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
ANONYMOUS = settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def served_schema(api) -> Any:
    reply = api.get("/v1/openapi.json")
    assert reply.status == 200 and isinstance(reply.body, dict), reply
    config = {
        "base-url": api.base,
        # A failure prints a curl command to replay it: mask the bearer token, not fields like max_tokens.
        "output": {
            "sanitization": {"keys-to-sanitize": ["authorization"], "sensitive-markers": ["authorization"]}
        },
    }
    return schemathesis.openapi.from_dict(
        with_id_rule(reply.body), config=schemathesis.Config.from_dict(config)
    )


def with_id_rule(document: dict[str, Any]) -> dict[str, Any]:
    """The document with the id rule on every path parameter that does not state it (the served one
    types them as any string): otherwise nearly every generated id is refused before the handler."""
    document = copy.deepcopy(document)
    for operations in document["paths"].values():
        for op in operations.values():
            for param in op.get("parameters", []):
                if param["in"] == "path" and "pattern" not in param["schema"]:
                    param["schema"] = {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": ID_MAX_LENGTH,
                        "pattern": ID_PATTERN,
                    }
    return document


@pytest.fixture(scope="module")
def every_role(api) -> dict[str, str]:
    token = api.token(TENANT, "fuzzer", [r.value for r in Role], clearance="restricted")
    return {"Authorization": f"Bearer {token}"}


def operation(schema: Any, method: str, path: str) -> Any:
    try:
        return schema[path][method]
    except KeyError:
        pytest.fail(f"{method} {path} is served but the OpenAPI document does not describe it")


def cases(op: Any, headers: dict[str, str] | None = None) -> st.SearchStrategy[schemathesis.Case]:
    return st.one_of(
        op.as_strategy(GenerationMode.POSITIVE, headers=headers),
        op.as_strategy(GenerationMode.NEGATIVE, headers=headers),
    )


def no_server_error(ctx: Any, response: schemathesis.Response, case: schemathesis.Case) -> None:
    # The database is up here: a 503, even with Retry-After, would be a defect too.
    assert response.status_code < 500, f"{response.status_code}: {response.text[:500]}"


def error_envelope(ctx: Any, response: schemathesis.Response, case: schemathesis.Case) -> None:
    if response.status_code < 400:
        return
    try:
        body = json.loads(response.content)
    except ValueError:
        raise AssertionError(f"{response.status_code} body is not JSON: {response.text[:200]!r}") from None
    error = body.get("error") if isinstance(body, dict) else None
    assert isinstance(error, dict), f"no error object: {body!r}"
    for key in ("code", "message", "request_id"):
        assert isinstance(error.get(key), str) and error[key], f"error.{key} missing or empty: {body!r}"


def token_accepted(ctx: Any, response: schemathesis.Response, case: schemathesis.Case) -> None:
    assert response.status_code != 401, f"a valid token was refused: {response.text[:200]}"


# What a protected route may answer a caller without a valid token: 401 only (identity is checked
# before anything reads the request, as API Gateway's authorizer does), or 413 for a body too large to
# read at all. Never data, a 403, a 404 that would tell what exists, or a 422 about the body's shape.
BEFORE_IDENTITY = {413}


def refused_unless_public(ctx: Any, response: schemathesis.Response, case: schemathesis.Case) -> None:
    if (case.method.upper(), case.operation.path) not in PUBLIC:
        assert response.status_code == 401 or response.status_code in BEFORE_IDENTITY, (
            f"{response.status_code} without a valid token: {response.text[:200]}"
        )


def test_the_document_describes_every_served_route(served_schema) -> None:
    # Given the routes the local front serves
    # When the served OpenAPI document is read
    # Then each of them is an operation in it
    described = {(op.ok().method.upper(), op.ok().path) for op in served_schema.get_all_operations()}
    assert set(ROUTES) <= described, sorted(set(ROUTES) - described)


@pytest.mark.parametrize(("method", "path"), ROUTES, ids=ROUTE_IDS)
def test_a_token_holding_every_role_never_earns_a_server_error(served_schema, every_role, method, path):
    # Given a token for the fuzz tenant with every role and the highest clearance
    # When the operation is called with inputs generated from its schema, fitting it or not
    # Then no 5xx comes back, every refusal is the API's JSON error, and the token is never refused
    op = operation(served_schema, method, path)

    @AUTHORIZED
    @given(case=cases(op, every_role))
    def call(case: schemathesis.Case) -> None:
        case.call_and_validate(checks=[no_server_error, error_envelope, token_accepted])

    call()


FOREIGN_TOKEN = issue_token("another-service-secret-" + "y" * 32, tenant_id=TENANT, sub="x", roles=["admin"])


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer not.a-real.token", f"Bearer {FOREIGN_TOKEN}", "Basic ZnV6ejpmdXp6"],
    ids=["no-token", "garbage-token", "foreign-signed-token", "not-bearer"],
)
@pytest.mark.parametrize(("method", "path"), ROUTES, ids=ROUTE_IDS)
def test_without_a_valid_token_no_protected_operation_answers(served_schema, authorization, method, path):
    # Given no Authorization header, a bearer token that is not a JWT, one signed with another secret,
    # or another scheme than Bearer
    # When the operation is called with inputs generated from its schema
    # Then a protected operation refuses (401, or 400/413/422 for the request's shape) with the JSON
    # error, a public one answers, and none a 5xx
    op = operation(served_schema, method, path)
    headers = {"Authorization": authorization} if authorization else None

    @ANONYMOUS
    @given(case=cases(op, headers))
    def call(case: schemathesis.Case) -> None:
        if headers is None and case.headers:
            case.headers.pop("Authorization", None)  # the security scheme may have drawn one
        case.call_and_validate(checks=[no_server_error, error_envelope, refused_unless_public])

    call()
