"""The `subjects` claim and refused tokens, in the identity layer (no database)."""

from datetime import timedelta

import pytest

from agent_memory.api.identity import (
    TokenRefused,
    authorizer_context,
    issue_token,
    principal_from_authorizer,
    principal_from_claims,
    refused_context,
    verify_token,
)
from agent_memory.domain.errors import Unauthenticated

SECRET = "s" * 40


def test_a_bound_token_keeps_its_subjects_through_the_authorizers_string_context():
    token = issue_token(SECRET, tenant_id="acme", sub="u1", roles=["agent"], subjects=["C-1", "C-2"])
    context = authorizer_context(verify_token(SECRET, token))
    assert isinstance(context["subjects"], str)  # API Gateway context values are strings
    assert principal_from_authorizer(context).subjects == {"C-1", "C-2"}


def test_a_token_without_the_claim_is_unbound_and_its_context_unchanged():
    context = authorizer_context(
        verify_token(SECRET, issue_token(SECRET, tenant_id="acme", sub="u1", roles=["agent"]))
    )
    assert "subjects" not in context and principal_from_authorizer(context).subjects is None


@pytest.mark.parametrize("raw", ['"C-1"', "[]", "{}", "not json", '["C-1", "../x"]'])
def test_a_context_whose_subjects_are_not_a_list_of_ids_is_never_a_principal(raw):
    context = {"tenant_id": "acme", "sub": "u1", "roles": "agent", "subjects": raw}
    with pytest.raises(Unauthenticated):
        principal_from_authorizer(context)


def test_an_expired_token_signed_by_the_service_is_refused_naming_its_tenant_and_subject():
    token = issue_token(SECRET, tenant_id="acme", sub="u1", roles=["agent"], ttl=timedelta(seconds=-1))
    with pytest.raises(TokenRefused) as refused:
        verify_token(SECRET, token)
    assert (refused.value.tenant_id, refused.value.actor, refused.value.message) == (
        "acme",
        "u1",
        "token expired",
    )


def test_a_token_signed_with_another_secret_names_no_tenant():
    token = issue_token("o" * 40, tenant_id="acme", sub="u1", roles=["agent"], ttl=timedelta(seconds=-1))
    with pytest.raises(Unauthenticated) as refused:
        verify_token(SECRET, token)
    assert not isinstance(refused.value, TokenRefused)


def test_the_context_of_a_refused_token_authorizes_nothing():
    context = refused_context(TokenRefused("token expired", tenant_id="acme", actor="u1"))
    with pytest.raises(Unauthenticated):
        principal_from_authorizer({**context, "roles": "admin"})


def test_issuing_a_token_with_a_binding_this_service_would_refuse_fails():
    with pytest.raises(ValueError, match="subjects"):
        issue_token(SECRET, tenant_id="acme", sub="u1", roles=["agent"], subjects=[])
    with pytest.raises(Unauthenticated):
        principal_from_claims({"sub": "u1", "tenant_id": "acme", "roles": ["agent"], "subjects": None})
