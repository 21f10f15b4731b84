"""The API Gateway authorizer in JWKS mode: settings read once per cold start, tokens from a
local test issuer allowed, refused ones answered as API Gateway expects, an unreachable issuer
never allowed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory.api.identity import IdentityProviderUnavailable, issue_token
from agent_memory.functions_spec import by_name, load_handler_module
from agent_memory.local.lambda_context import LocalLambdaContext
from jwks_issuer import AUDIENCE, ISSUER, TestIssuer, new_key, start_issuer

METHOD_ARN = "arn:aws:execute-api:us-east-1:000000000000:abcdef1234/prod/POST/v1/retrieve"


@pytest.fixture
def issuer() -> Iterator[TestIssuer]:
    test_issuer = start_issuer()
    yield test_issuer
    test_issuer.server.stop()


@pytest.fixture
def authorizer(issuer: TestIssuer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The authorizer module as a new execution environment with JWKS settings."""
    for name, value in {
        "MEMORY_JWT_JWKS_URL": issuer.jwks_url,
        "MEMORY_JWT_ISSUER": ISSUER,
        "MEMORY_JWT_AUDIENCE": AUDIENCE,
        "MEMORY_JWT_ROLES_CLAIM": "cognito:groups",
        "MEMORY_JWT_ROLE_PREFIX": "memory-",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("MEMORY_JWT_SECRET", raising=False)
    module = load_handler_module(by_name("authorizer"))
    monkeypatch.setattr(module, "VERIFIER", None)  # a cold start; restored afterwards
    yield module


def invoke(module: Any, token: str) -> dict[str, Any]:
    event = {"type": "TOKEN", "authorizationToken": f"Bearer {token}", "methodArn": METHOD_ARN}
    return module.lambda_handler(event, LocalLambdaContext(function_name="authorizer"))


def test_given_an_issuer_token_when_authorized_then_allowed_with_the_mapped_claims(authorizer, issuer):
    # Given a token from the issuer with its roles in Cognito's groups claim, among other groups
    token = issuer.token(roles=None, **{"cognito:groups": ["memory-agent", "admins"]})
    # When the authorizer runs twice (two requests to one warm environment)
    first = invoke(authorizer, token)
    second = invoke(authorizer, token)
    # Then both are allowed with the mapped tenant and roles
    for policy in (first, second):
        assert policy["policyDocument"]["Statement"][0]["Effect"] == "Allow"
        assert policy["context"]["tenant_id"] == "acme" and policy["context"]["roles"] == "agent"
    # And the settings and keys were read once for the environment, not per call
    assert issuer.fetches == 1


def test_given_a_wrong_audience_then_the_function_answers_401_with_the_reason(authorizer, issuer):
    # Given a token the issuer signed for another API
    policy = invoke(authorizer, issuer.token(aud="another-api", **{"cognito:groups": ["memory-agent"]}))
    # Then the context grants nothing and carries the reason to the function (which answers 401)
    assert "roles" not in policy["context"]
    assert "audience" in policy["context"]["refused"]
    # And names no tenant: a token issued for another audience says nothing trustworthy about one
    assert "tenant_id" not in policy["context"]


@pytest.mark.parametrize("kind", ["unknown kid", "local HS256", "not a JWT"])
def test_given_a_token_nobody_trusted_signed_then_unauthorized(authorizer, issuer, kind):
    token = {
        "unknown kid": issuer.token(new_key()),
        "local HS256": issue_token("s" * 40, tenant_id="acme", sub="u1", roles=["admin"]),
        "not a JWT": "abc.def",
    }[kind]
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        invoke(authorizer, token)


def test_given_the_issuer_is_down_then_the_authorizer_fails_and_never_allows(authorizer, issuer):
    # Given an issuer whose key endpoint fails
    issuer.down = True
    # When a well-formed token arrives, Then the authorizer fails (API Gateway answers 503),
    # neither allowing nor answering 401
    with pytest.raises(IdentityProviderUnavailable):
        invoke(authorizer, issuer.token(**{"cognito:groups": ["memory-agent"]}))
