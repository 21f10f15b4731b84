"""Tokens: HS256, tenant and roles from claims, expired or forged tokens refused."""

from datetime import timedelta

import pytest

from agent_memory.api.identity import issue_token, principal_from_claims, verify_token
from agent_memory.domain.enums import Role, Sensitivity
from agent_memory.domain.errors import Unauthenticated

SECRET = "s" * 40


def test_given_a_token_when_verified_then_the_principal_carries_tenant_roles_and_clearance():
    token = issue_token(
        SECRET, tenant_id="acme", sub="u1", roles=["agent", "reviewer"], clearance="confidential"
    )
    p = principal_from_claims(verify_token(SECRET, token))
    assert (p.tenant_id, p.sub) == ("acme", "u1")
    assert p.roles == {Role.AGENT, Role.REVIEWER}
    assert p.clearance is Sensitivity.CONFIDENTIAL


def test_given_an_expired_token_when_verified_then_unauthenticated():
    token = issue_token(SECRET, tenant_id="acme", sub="u1", roles=["agent"], ttl=timedelta(seconds=-1))
    with pytest.raises(Unauthenticated, match="expired"):
        verify_token(SECRET, token)


def test_given_a_token_signed_with_another_secret_when_verified_then_unauthenticated():
    token = issue_token("other" * 10, tenant_id="acme", sub="u1", roles=["agent"])
    with pytest.raises(Unauthenticated):
        verify_token(SECRET, token)


def test_given_claims_without_tenant_when_read_then_unauthenticated():
    with pytest.raises(Unauthenticated):
        principal_from_claims({"sub": "u1", "roles": ["agent"]})
