"""Tokens: HS256, tenant and roles from claims, expired or forged tokens refused."""

from datetime import timedelta

import jwt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_memory.api.identity import (
    WeakSecret,
    authorizer_context,
    issue_token,
    local_secret,
    principal_from_authorizer,
    principal_from_claims,
    verify_token,
)
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
        assert principal_from_authorizer(context) == principal


@pytest.mark.parametrize(
    "roles",
    [
        "agent",  # a string, not a list
        "agent,reviewer",
        ["x,admin", "agent"],  # a comma-joined role smuggled inside a list
        [1, "agent"],
        ["agent", "superuser"],  # an unknown role is not silently dropped
        ["Agent"],
        None,
        {"agent": True},
    ],
)
def test_a_roles_claim_that_is_not_a_list_of_known_roles_is_unauthenticated(roles):
    # Given a correctly signed token whose roles claim is almost right
    claims = {"sub": "u1", "tenant_id": "acme", "exp": 4_102_444_800}
    if roles is not None:
        claims["roles"] = roles
    token = jwt.encode(claims, SECRET)
    # When it is verified, Then it is refused as a whole (401), never read as fewer roles
    with pytest.raises(Unauthenticated, match="roles"):
        verify_token(SECRET, token)


def test_the_authorizer_context_carries_exactly_the_checked_roles():
    token = issue_token(SECRET, tenant_id="acme", sub="u1", roles=["reviewer", "agent"])
    context = authorizer_context(verify_token(SECRET, token))
    assert context["roles"] == "agent,reviewer"
    assert principal_from_authorizer(context).roles == {Role.AGENT, Role.REVIEWER}
    # and a context whose roles were not written by the authorizer is refused
    with pytest.raises(Unauthenticated):
        principal_from_authorizer({**context, "roles": "agent,root"})


@pytest.mark.parametrize("secret", ["", "short", "x" * 31])
def test_a_signing_secret_under_32_bytes_is_refused_with_a_clear_message(secret, tmp_path):
    # Given a configured secret shorter than 32 bytes
    # When the service loads it, or signs or verifies with it
    # Then it refuses, naming the setting and the minimum
    with pytest.raises(WeakSecret, match=r"MEMORY_JWT_SECRET.*32 bytes"):
        local_secret(tmp_path, secret or "x")
    with pytest.raises(WeakSecret):
        issue_token(secret, tenant_id="acme", sub="u1", roles=["agent"])
    with pytest.raises(WeakSecret):
        verify_token(secret, "a.b.c")


def test_a_generated_secret_is_long_enough(tmp_path):
    assert len(local_secret(tmp_path, None).encode()) >= 32


def test_memory_serve_refuses_to_start_with_a_weak_secret(monkeypatch, tmp_path, capsys):
    # Given a configured secret of 10 bytes
    from agent_memory import cli

    monkeypatch.setenv("MEMORY_JWT_SECRET", "0123456789")
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path))
    # When `memory serve` starts, Then it exits with a clear message before serving anything
    assert cli.main(["serve", "--port", "0"]) == 2
    assert "at least 32 bytes" in capsys.readouterr().err


def test_an_invalid_token_says_which_check_failed_without_the_secret():
    # Given tokens wrong in different ways
    other = issue_token("o" * 40, tenant_id="acme", sub="u1", roles=["agent"])
    no_sub = jwt.encode({"tenant_id": "acme", "roles": ["agent"], "exp": 4_102_444_800}, SECRET)
    cases = {other: "signature", "not-a-token": "not a JWT", no_sub: "missing claim 'sub'"}
    for token, said in cases.items():
        # When verified, Then the message names the failed check, and never the secret
        with pytest.raises(Unauthenticated) as refused:
            verify_token(SECRET, token)
        assert said in refused.value.message and SECRET not in refused.value.message
