"""The local front's own refusals (no route, wrong method, no token, the issuer's keys out of reach,
a path id that is not UTF-8) answer with the API's one error body, as the functions' refusals do."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_memory.api.identity import IdentityProviderUnavailable, issue_token
from agent_memory.api.models.common import ErrorBody
from agent_memory.local.server import LocalApi

SECRET = "a-local-development-secret-of-32-bytes-at-least"


class KeysOutOfReach:
    """A verifier whose issuer cannot be reached (what a JWKS fetch that fails raises)."""

    def verify(self, token: str) -> dict[str, Any]:
        raise IdentityProviderUnavailable("the identity provider's keys cannot be fetched")


@pytest.mark.parametrize(
    ("method", "path", "headers", "status", "code", "field"),
    [
        ("GET", "/v1/nowhere", {}, 404, "not_found", None),
        ("DELETE", "/v1/retrieve", {}, 405, "invalid_request", None),
        ("POST", "/v1/retrieve", {}, 401, "unauthenticated", None),
        ("POST", "/v1/retrieve", {"authorization": "Basic abc"}, 401, "unauthenticated", None),
        ("GET", "/v1/memories/%FF", {"authorization": "Bearer x"}, 503, "unavailable", None),
    ],
)
def test_a_refusal_of_the_front_is_the_apis_error_body(method, path, headers, status, code, field):
    # Given the local front, with an issuer whose keys cannot be fetched
    api = LocalApi(SECRET, 1024, verifier=KeysOutOfReach())
    # When a request it refuses itself arrives
    got_status, got_headers, body = api.handle(method, path, headers, b"")
    # Then the answer is the declared error body, field named only when one is to blame
    parsed = json.loads(body)
    assert got_status == status
    assert ErrorBody.model_validate(parsed).model_dump(mode="json") == parsed
    assert parsed["error"]["code"] == code and parsed["error"]["request_id"]
    assert parsed["error"].get("field") == field
    assert got_headers["Content-Type"] == "application/json"
    # and a 503 says when to try again
    assert ("Retry-After" in got_headers) is (status == 503)


def test_a_path_id_that_is_not_utf8_is_422_naming_the_parameter():
    # Given the local front with its development secret
    api = LocalApi(SECRET, 1024)
    token = issue_token(SECRET, tenant_id="front", sub="agent-1", roles=["agent"])
    # When a path parameter decodes to bytes that are not UTF-8
    status, _, body = api.handle("GET", "/v1/memories/%FF", {"authorization": f"Bearer {token}"}, b"")
    # Then it is refused naming the parameter, in the same error body
    parsed = json.loads(body)
    assert status == 422 and ErrorBody.model_validate(parsed).error.field == "memory_id"
