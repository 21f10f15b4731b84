"""Tokens from an identity provider: RS256/ES256 checked against a local test issuer's JWKS
(a real HTTP server on loopback), with issuer, audience, expiry, key rotation and claim mapping."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Iterator
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from agent_memory.api.identity import (
    IdentityProviderUnavailable,
    InvalidToken,
    SecretVerifier,
    TokenRefused,
    issue_token,
    principal_from_claims,
)
from agent_memory.api.jwks import ClaimMapping, JwksVerifier, claim_at
from agent_memory.api.verifiers import token_verifier
from agent_memory.config import Settings
from agent_memory.domain.enums import Role, Sensitivity
from agent_memory.domain.errors import ConfigurationError
from jwks_issuer import AUDIENCE, ISSUER, TestIssuer, new_key, start_issuer

LOCAL_SECRET = "s" * 40


@pytest.fixture
def issuer() -> Iterator[TestIssuer]:
    test_issuer = start_issuer()
    yield test_issuer
    test_issuer.server.stop()


def verifier_for(issuer: TestIssuer, **kw: Any) -> JwksVerifier:
    return JwksVerifier(jwks_url=issuer.jwks_url, issuer=ISSUER, audiences=[AUDIENCE], **kw)


def refused(verifier: JwksVerifier, token: str) -> InvalidToken:
    with pytest.raises(InvalidToken) as caught:
        verifier.verify(token)
    return caught.value


def test_given_an_rs256_token_from_the_issuer_when_verified_then_its_principal_comes_out(issuer):
    # Given a token signed with the issuer's published RSA key
    token = issuer.token(roles=["agent", "reviewer"], clearance="confidential", subjects=["C-1"])
    # When it is verified against the issuer's JWKS
    claims = verifier_for(issuer).verify(token)
    # Then the principal carries its tenant, roles, clearance and binding
    p = principal_from_claims(claims)
    assert (p.tenant_id, p.sub) == ("acme", "agent-7")
    assert p.roles == {Role.AGENT, Role.REVIEWER}
    assert p.clearance is Sensitivity.CONFIDENTIAL
    assert p.subjects == {"C-1"}


def test_given_an_es256_token_when_verified_then_accepted():
    es_issuer = start_issuer("ES256")
    try:
        claims = verifier_for(es_issuer).verify(es_issuer.token())
        assert claims["tenant_id"] == "acme"
    finally:
        es_issuer.server.stop()


@pytest.mark.parametrize(
    ("claims", "reason", "said", "for_this_service"),
    [
        ({"aud": "another-api"}, "audience", "audience", False),
        ({"aud": None}, "audience", "missing claim 'aud'", False),
        ({"iss": "https://idp.test/another-tenant"}, "issuer", "issuer", False),
        ({"ttl_s": -120}, "expired", "expired", True),
        ({"nbf": 4_102_444_800}, "not_yet_valid", "not valid yet", True),
        ({"roles": ["agent", "superuser"]}, "claims", "roles", True),
    ],
)
def test_given_a_token_signed_by_the_issuer_but_wrong_when_verified_then_refused_with_the_check(
    issuer, claims, reason, said, for_this_service
):
    # Given a correctly signed token whose audience, issuer, lifetime or roles are wrong
    token = issuer.token(**claims)
    # When verified, Then it is refused, naming the failed check (the function answers it)
    refusal = refused(verifier_for(issuer), token)
    assert isinstance(refusal, TokenRefused)
    assert refusal.reason == reason
    assert said in refusal.message
    # And its tenant is trusted (the refusal joins that tenant's audit chain) only when the token
    # was issued for this service: the same keys may sign for other issuers and audiences
    assert refusal.tenant_id == ("acme" if for_this_service else None)


def test_an_expired_token_for_another_audience_names_no_tenant(issuer):
    refusal = refused(
        verifier_for(issuer), issuer.token(aud="another-api", ttl_s=-120, tenant_id="victim-co")
    )
    assert isinstance(refusal, TokenRefused) and refusal.tenant_id is None


def test_given_a_token_signed_with_another_key_under_a_published_kid_then_the_signature_fails(issuer):
    # Given a token claiming the published key id, signed by another private key
    impostor = new_key()
    impostor.kid = issuer.published[0].kid
    # When verified, Then the signature check fails and no tenant is trusted
    refusal = refused(verifier_for(issuer), issuer.token(impostor))
    assert refusal.reason == "signature" and not isinstance(refusal, TokenRefused)


def test_given_an_unknown_kid_then_refused_after_one_refetch_and_no_more_within_the_cooldown(issuer):
    # Given a verifier that has the issuer's key set, and tokens signed by keys the issuer never published
    verifier = verifier_for(issuer, refetch_s=300)
    verifier.verify(issuer.token())
    assert issuer.fetches == 1
    # When the first one arrives, Then the set is fetched once more and the token refused
    assert refused(verifier, issuer.token(new_key())).reason == "unknown_key"
    assert issuer.fetches == 2
    # And more made-up key ids within the cooldown fetch nothing (no request stream to the issuer)
    for _ in range(5):
        assert refused(verifier, issuer.token(new_key())).reason == "unknown_key"
    assert issuer.fetches == 2


def test_given_the_issuer_rotates_its_key_then_the_new_kid_is_fetched_and_accepted(issuer):
    # Given a verifier holding the issuer's first key
    verifier = verifier_for(issuer, refetch_s=0)
    retired = issuer.published[0]
    verifier.verify(issuer.token(retired))
    # When the issuer rotates to a new key (the old one leaves its set) and signs with it
    rotated = issuer.rotate()
    # Then the new kid is fetched once and the token accepted
    assert verifier.verify(issuer.token(rotated))["sub"] == "agent-7"
    assert issuer.fetches == 2
    # And a token under the retired key is refused now that the set was refreshed without it
    assert refused(verifier, issuer.token(retired)).reason == "unknown_key"


def test_given_the_jwks_endpoint_is_down_then_no_token_is_accepted(issuer):
    # Given an issuer whose key endpoint fails, and one whose port is closed
    issuer.down = True
    token = issuer.token()
    # When a token arrives, Then verification fails as unavailable, never as accepted
    with pytest.raises(IdentityProviderUnavailable):
        verifier_for(issuer).verify(token)
    closed = JwksVerifier(
        jwks_url="http://127.0.0.1:9/jwks.json", issuer=ISSUER, audiences=[AUDIENCE], timeout_s=1
    )
    with pytest.raises(IdentityProviderUnavailable):
        closed.verify(token)


def test_alg_none_and_hs256_signed_with_the_public_key_are_refused(issuer):
    # Given a token with alg none, and an HS256 token whose HMAC key is the issuer's public key
    # (algorithm confusion), both naming a published kid
    key = issuer.published[0]
    claims = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "x",
        "tenant_id": "acme",
        "roles": ["admin"],
        "exp": 4_102_444_800,
    }
    unsigned = jwt.encode(claims, None, algorithm="none", headers={"kid": key.kid})
    pem = key.private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    confused = forged_hs256(claims, {"alg": "HS256", "typ": "JWT", "kid": key.kid}, pem)
    verifier = verifier_for(issuer)
    # When verified with JWKS on, Then both are refused on their algorithm
    for token in (unsigned, confused):
        assert refused(verifier, token).reason == "algorithm"
    # And a locally signed HS256 token is not accepted either
    local = issue_token(LOCAL_SECRET, tenant_id="acme", sub="u1", roles=["admin"])
    assert refused(verifier, local).reason == "algorithm"


def forged_hs256(claims: dict[str, Any], header: dict[str, Any], hmac_key: bytes) -> str:
    """An HS256 token made by hand (PyJWT refuses to use a public key as an HMAC secret)."""

    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    signing_input = f"{part(header)}.{part(claims)}"
    mac = hmac.new(hmac_key, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


def test_a_key_of_another_algorithm_than_the_token_says_is_refused(issuer):
    # Given an ES256 key published, and a token claiming RS256 under its kid
    es_key = issuer.publish(new_key("ES256"))
    rs_token = issuer.token(headers={"kid": es_key.kid})
    # When verified, Then the key's own algorithm wins: refused
    assert refused(verifier_for(issuer), rs_token).reason == "algorithm"


def test_cognito_client_credentials_claims_map_to_tenant_and_roles(issuer):
    # Given Cognito's access token shape: no aud, the app client in client_id, roles as scopes of
    # the resource server, token_use access, and one tenant per user pool
    mapping = ClaimMapping(
        roles="scope", role_prefix="agent-memory/", tenant_id="acme", tenant="custom:tenant"
    )
    verifier = verifier_for(
        issuer, audience_claim="client_id", required_claims={"token_use": "access"}, mapping=mapping
    )
    token = issuer.token(
        aud=None,
        tenant_id=None,
        roles=None,
        client_id=AUDIENCE,
        token_use="access",
        scope="agent-memory/agent agent-memory/reviewer openid",
    )
    # When verified, Then the principal is the pool's tenant with the scoped roles
    p = principal_from_claims(verifier.verify(token))
    assert p.tenant_id == "acme" and p.roles == {Role.AGENT, Role.REVIEWER}
    # And an ID token (token_use id) or another app client is refused
    id_token = issuer.token(aud=None, client_id=AUDIENCE, token_use="id", scope="agent-memory/agent")
    assert refused(verifier, id_token).reason == "claims"
    other = issuer.token(aud=None, client_id="another-client", token_use="access", scope="agent-memory/agent")
    assert refused(verifier, other).reason == "audience"


def test_entra_app_roles_and_okta_groups_map_through_the_role_map_and_prefix(issuer):
    # Given Entra's app roles named by the application, and Okta's groups among unrelated ones
    entra = ClaimMapping(tenant="tid", role_map={"Memory.Agent": "agent", "Memory.Reviewer": "reviewer"})
    okta = ClaimMapping(roles="groups", role_prefix="memory-", clearance="memory_clearance")
    # When their tokens are verified
    e = verifier_for(issuer, mapping=entra).verify(
        issuer.token(tenant_id=None, tid="acme", roles=["Memory.Agent", "Memory.Reviewer", "Other.App"])
    )
    o = verifier_for(issuer, mapping=okta).verify(
        issuer.token(roles=None, groups=["Everyone", "memory-agent"], memory_clearance="confidential")
    )
    # Then only the mapped names are roles here
    assert principal_from_claims(e).roles == {Role.AGENT, Role.REVIEWER}
    assert principal_from_claims(o).roles == {Role.AGENT}
    assert principal_from_claims(o).clearance is Sensitivity.CONFIDENTIAL
    # And a prefixed name that is no role here fails loudly, not silently as fewer roles
    typo = issuer.token(roles=None, groups=["memory-agnet"])
    with pytest.raises(InvalidToken, match="roles"):
        verifier_for(issuer, mapping=ClaimMapping(roles="groups", role_prefix="memory-")).verify(
            issuer.token(roles=None, groups=["memory-agent", "memory-superuser"])
        )
    assert refused(verifier_for(issuer, mapping=okta), typo).reason == "claims"


def test_claim_paths_reach_nested_and_namespaced_claims():
    claims = {"realm_access": {"roles": ["agent"]}, "https://acme.example/tenant": "acme"}
    assert claim_at(claims, "realm_access.roles") == ["agent"]
    assert claim_at(claims, "https://acme.example/tenant") == "acme"


def test_a_token_naming_another_tenant_than_the_issuers_is_refused(issuer):
    mapping = ClaimMapping(tenant_id="acme")
    refusal = refused(verifier_for(issuer, mapping=mapping), issuer.token(tenant_id="globex"))
    assert "another tenant" in refusal.message


def test_misconfigurations_fail_at_start_not_per_request(issuer):
    with pytest.raises(ConfigurationError, match="unknown roles"):
        ClaimMapping(role_map={"Memory.Root": "root"})
    with pytest.raises(ConfigurationError, match="asymmetric"):
        verifier_for(issuer, algorithms=["RS256", "HS256"])
    with pytest.raises(ConfigurationError, match="https"):
        JwksVerifier(jwks_url="http://idp.example/jwks", issuer=ISSUER, audiences=[AUDIENCE])
    with pytest.raises(ConfigurationError, match="AUDIENCE"):
        JwksVerifier(jwks_url=issuer.jwks_url, issuer=ISSUER, audiences=[])


def test_settings_choose_the_verifier(issuer):
    # Given settings with a JWKS URL, issuer and audiences, claim names and a role map
    settings = Settings(
        jwt_jwks_url=issuer.jwks_url,
        jwt_issuer=ISSUER,
        jwt_audience=f"other, {AUDIENCE}",
        jwt_roles_claim="cognito:groups",
        jwt_role_map={"memory-agents": "agent"},
    )
    # When the verifier is built, Then it is the JWKS one with those settings
    verifier = token_verifier(settings, LOCAL_SECRET)
    assert isinstance(verifier, JwksVerifier)
    claims = verifier.verify(issuer.token(roles=None, **{"cognito:groups": ["memory-agents", "admins"]}))
    assert claims["roles"] == ["agent"]
    # And without a JWKS URL it is HS256 with the secret
    assert isinstance(token_verifier(Settings(), LOCAL_SECRET), SecretVerifier)
    with pytest.raises(ConfigurationError):
        token_verifier(Settings())
