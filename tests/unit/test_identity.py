"""Tokens: HS256, tenant and roles from claims, expired or forged tokens refused."""

from datetime import timedelta

import jwt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_memory.api.identity import authorizer_context, issue_token, principal_from_claims, verify_token
from agent_memory.domain.enums import Role, Sensitivity
from agent_memory.domain.errors import Unauthenticated
from agent_memory.domain.sanitize import unstorable_value

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


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=30)
    | st.sampled_from(["agent", "\x00", "acme"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=5,
)


@settings(max_examples=300)
@given(
    claims=st.fixed_dictionaries(
        {"sub": json_values, "exp": st.just(4_102_444_800)},
        optional={"tenant_id": json_values, "roles": json_values, "clearance": json_values},
    ),
    junk=st.text(max_size=60),
)
def test_any_token_is_a_principal_or_unauthenticated_never_a_crash(claims, junk):
    # Given a correctly signed token with any claims at all, and any string posing as a token
    signed = jwt.encode(claims, SECRET, algorithm="HS256")
    for token in (signed, junk):
        # When it is verified and read
        try:
            claims = verify_token(SECRET, token)
            principal = principal_from_claims(claims)
            context = authorizer_context(claims)
        except Unauthenticated:
            continue
        # Then a principal comes out whole: a tenant and subject the database can hold
        assert principal.tenant_id and principal.sub
        assert unstorable_value([principal.tenant_id, principal.sub]) is None
        assert all(isinstance(r, Role) for r in principal.roles)
        # And the authorizer hands the handler exactly what was checked
        assert principal_from_claims(context) == principal


def test_the_authorizer_passes_on_exactly_the_roles_that_were_checked():
    # Given signed tokens whose role lists hold a comma-joined role and a number
    smuggled = jwt.encode(
        {"sub": "u1", "tenant_id": "acme", "roles": ["x,admin", "agent"], "exp": 4_102_444_800}, SECRET
    )
    numbered = jwt.encode(
        {"sub": "u1", "tenant_id": "acme", "roles": [1, "agent"], "exp": 4_102_444_800}, SECRET
    )
    # When the authorizer flattens them for the handler
    # Then "x,admin" does not become admin downstream, and a number is dropped, not a crash
    for token in (smuggled, numbered):
        context = authorizer_context(verify_token(SECRET, token))
        assert context["roles"] == "agent"
        assert principal_from_claims(context).roles == {Role.AGENT}
