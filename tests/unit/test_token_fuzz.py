"""Generated tokens against both verifiers (HS256 with the local secret, RS256 against a local test
issuer's JWKS served on loopback): headers and claims of every JSON type and size, duplicate
names, `alg: none`, `crit`, key ids that are not text, nested objects, huge numbers, numeric
strings for the time claims; unsigned, signed with the right key and signed with another.
Whatever the token, verifying it either accepts a well-formed token signed with the trusted key
or refuses it with `InvalidToken` naming a known check (a 401); never another exception."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from typing import Any

import jwt
import pytest
from hypothesis import HealthCheck, given, settings

from agent_memory.api.identity import (
    MAX_TOKEN_CHARS,
    TIME_CLAIMS,
    InvalidToken,
    authorizer_context,
    check_token_form,
    verify_token,
)
from agent_memory.api.jwks import JwksVerifier
from jwks_issuer import AUDIENCE, ISSUER, TestIssuer, new_key, start_issuer
from token_strategies import assemble, tokens

SECRET = "s" * 40
REASONS = {
    "signature",
    "algorithm",
    "malformed",
    "header",
    "unknown_key",
    "issuer",
    "audience",
    "expired",
    "not_yet_valid",
    "claims",
}


@pytest.fixture(scope="module")
def issuer() -> Iterator[TestIssuer]:
    test_issuer = start_issuer()
    yield test_issuer
    test_issuer.server.stop()


@pytest.fixture(scope="module")
def jwks(issuer: TestIssuer) -> JwksVerifier:
    return JwksVerifier(jwks_url=issuer.jwks_url, issuer=ISSUER, audiences=[AUDIENCE], refetch_s=3600)


def outcome(verify: Any, token: str) -> dict[str, Any] | InvalidToken:
    """The claims, or the refusal; any other exception fails the test."""
    try:
        return verify(token)
    except InvalidToken as refusal:
        return refusal


def accepted_only_when_sound(result: dict[str, Any] | InvalidToken, token: str, trusted: bool) -> None:
    if isinstance(result, InvalidToken):
        assert result.reason in REASONS, result.reason
        assert result.message.startswith(("invalid token", "token expired", "token claim")), result.message
        return
    # Accepted: signed by the trusted key, in a form this service reads, and a principal follows
    assert trusted
    assert len(token) <= MAX_TOKEN_CHARS
    header = check_token_form(token)
    assert "crit" not in header
    for name in TIME_CLAIMS:
        assert name not in result or type(result[name]) in (int, float)
    assert authorizer_context(result)["tenant_id"]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(drawn=tokens("HS256"))
def test_any_hs256_token_is_accepted_only_when_sound_else_refused_naming_the_check(drawn):
    header, payload, how = drawn
    header = header.replace('"<kid>"', '"local"')
    # Given a generated token, unsigned, signed with the server's secret or with another one
    secret = {"none": None, "trusted": SECRET, "other": "o" * 40}[how["signing"]]
    token = assemble(
        header,
        payload,
        (lambda data: b"")
        if secret is None
        else (lambda data: hmac.new(secret.encode(), data, hashlib.sha256).digest()),
    )
    # When the local verifier checks it, Then it is accepted only when sound, else refused by name
    result = outcome(lambda t: verify_token(SECRET, t), token)
    accepted_only_when_sound(result, token, trusted=how["signing"] == "trusted")


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(drawn=tokens("RS256"))
def test_any_jwks_token_is_accepted_only_when_sound_else_refused_naming_the_check(issuer, jwks, drawn):
    header, payload, how = drawn
    key = issuer.published[0] if how["signing"] != "other" else OTHER_KEY
    header = header.replace('"<kid>"', json.dumps(issuer.published[0].kid))
    # Given a generated token, unsigned, signed with the issuer's key or with a key it never published
    algorithm = jwt.get_algorithm_by_name("RS256")
    sign = (
        (lambda data: b"") if how["signing"] == "none" else (lambda data: algorithm.sign(data, key.private))
    )
    token = assemble(header, payload, sign)
    # When verified against the issuer's JWKS, Then accepted only when sound, else refused by name
    result = outcome(jwks.verify, token)
    accepted_only_when_sound(result, token, trusted=how["signing"] == "trusted")


OTHER_KEY = new_key()


@pytest.mark.parametrize(
    ("header", "claims", "said"),
    [
        ({"alg": "none", "crit": ["exp"]}, {}, "header 'crit'"),
        ({"alg": "RS256", "crit": ["b64"], "b64": True, "kid": "<kid>"}, {}, "header 'crit'"),
        ({"alg": "RS256", "kid": 7}, {}, "header 'kid'"),
        ({"alg": "RS256", "kid": {"nested": ["x"]}}, {}, "header 'kid'"),
        ({"alg": "RS256", "kid": "<kid>"}, {"exp": "<exp>"}, "claim 'exp'"),
        ({"alg": "RS256", "kid": "<kid>"}, {"nbf": "1700000000"}, "claim 'nbf'"),
        ({"alg": "RS256", "kid": "<kid>"}, {"iat": "1700000000"}, "claim 'iat'"),
        ({"alg": "RS256", "kid": "<kid>"}, {"exp": True}, "claim 'exp'"),
        ({"alg": "RS256", "kid": "<kid>"}, {"exp": 10**400}, "claim 'exp'"),
    ],
)
@pytest.mark.parametrize("signed", [False, True])
def test_given_a_token_with_a_critical_header_a_typed_kid_or_text_dates_then_refused_naming_it(
    issuer, jwks, header, claims, said, signed
):
    # Given an issuer token with `crit`, a key id that is not text, or a time claim that is not a
    # number, unsigned or signed with the issuer's own key
    key = issuer.published[0]
    now = int(time.time())
    body = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "a",
        "tenant_id": "acme",
        "roles": ["agent"],
        "exp": now + 600,
    }
    body.update({k: (str(now + 600) if v == "<exp>" else v) for k, v in claims.items()})
    head = json.dumps({k: (key.kid if v == "<kid>" else v) for k, v in header.items()})
    algorithm = jwt.get_algorithm_by_name("RS256")
    token = assemble(
        head, json.dumps(body), (lambda d: algorithm.sign(d, key.private)) if signed else (lambda d: b"")
    )
    hs_token = assemble(
        head.replace("RS256", "HS256"),
        json.dumps(body),
        lambda d: hmac.new(SECRET.encode(), d, hashlib.sha256).digest() if signed else b"",
    )
    # When the JWKS and the local verifiers check it, Then each refuses it naming the check
    for verify, candidate in ((jwks.verify, token), (lambda t: verify_token(SECRET, t), hs_token)):
        with pytest.raises(InvalidToken) as caught:
            verify(candidate)
        assert said in caught.value.message
        assert caught.value.reason in {"header", "claims"}
