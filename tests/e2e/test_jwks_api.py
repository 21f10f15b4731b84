"""Production identity through the local HTTP front on the embedded database: RS256 tokens from a
local test issuer (its JWKS served on loopback) write and retrieve; tokens with the wrong
audience, issuer or lifetime, or signed by keys the issuer does not publish, are 401 naming the
check; local HS256 tokens are refused while the JWKS is on; an unreachable issuer is a 503."""

from __future__ import annotations

import base64
import hmac
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import jwt
import pytest
from hypothesis import HealthCheck, given, settings

from agent_memory.api.identity import issue_token
from agent_memory.api.jwks import ClaimMapping, JwksVerifier
from agent_memory.domain.enums import EventType
from jwks_issuer import AUDIENCE, ISSUER, TestIssuer, new_key, start_issuer
from token_strategies import assemble, tokens

pytestmark = pytest.mark.e2e

TENANT = "jwks-co"


class Front:
    def __init__(self, base: str) -> None:
        self.base = base

    def call(self, method: str, path: str, token: str, body: Any = None) -> tuple[int, Any, dict[str, str]]:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"null"), dict(response.headers)
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read() or b"null"), dict(err.headers)


@pytest.fixture(scope="module")
def issuer() -> Iterator[TestIssuer]:
    test_issuer = start_issuer()
    yield test_issuer
    test_issuer.server.stop()


@contextmanager
def local_front(container: Any, issuer: TestIssuer) -> Iterator[Front]:
    """The local front verifying tokens against the issuer, roles read from its `groups` claim."""
    from agent_memory.local.server import LocalApi, make_http_server, serve_in_thread

    verifier = JwksVerifier(
        jwks_url=issuer.jwks_url,
        issuer=ISSUER,
        audiences=[AUDIENCE],
        mapping=ClaimMapping(roles="groups", role_prefix="memory-"),
        refetch_s=3600,
    )
    secret = container.settings.jwt_secret.get_secret_value()
    server = make_http_server(LocalApi(secret, container.settings.max_body_bytes, verifier), "127.0.0.1", 0)
    serve_in_thread(server)
    host, port = server.server_address[:2]
    try:
        yield Front(f"http://{host}:{port}")
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def front(container: Any, issuer: TestIssuer) -> Iterator[Front]:
    with local_front(container, issuer) as f:
        yield f


def idp_token(issuer: TestIssuer, **claims: Any) -> str:
    base = {
        "tenant_id": TENANT,
        "roles": None,
        "groups": ["Everyone", "memory-agent"],
        "clearance": "confidential",
    }
    return issuer.token(**{**base, **claims})


def test_given_an_issuer_token_then_the_agent_writes_and_retrieves(front, issuer):
    # Given an RS256 token from the tenant's IdP
    token = idp_token(issuer)
    # When the agent writes a preference and retrieves
    status, body, _ = front.call(
        "POST",
        "/v1/memories",
        token,
        {
            "subject_id": "ACC-9",
            "type": "preference",
            "slot": "preference.contact_channel",
            "content": "Send renewal paperwork by email.",
            "source": {"kind": "customer_confirmed"},
        },
    )
    assert status in (200, 201), body
    status, body, _ = front.call(
        "POST", "/v1/retrieve", token, {"subject_id": "ACC-9", "query": "How do we send the renewal?"}
    )
    # Then the write is found, for the token's tenant
    assert status == 200, body
    assert "email" in json.dumps(body)


def denials(container: Any, actor: str) -> list[Any]:
    with container.store.tenant(TENANT, subjects=None) as s:
        found = s.audit_events(subject_id=None, memory_id=None, since=None, after_seq=None, limit=1000)
    return [e for e in found if e.event_type == EventType.AUTHORIZATION_DENIED.value and e.actor == actor]


@pytest.mark.parametrize(
    ("claims", "reason", "recorded"),
    [
        ({"aud": "another-api"}, "audience", False),
        ({"iss": "https://idp.test/someone-else"}, "issuer", False),
        ({"ttl_s": -300}, "expired", True),
    ],
)
def test_given_a_wrong_token_from_the_issuers_keys_then_401_names_the_check(
    front, issuer, container, claims, reason, recorded
):
    # Given a token signed with the issuer's key, with the wrong audience, issuer or lifetime
    token = idp_token(issuer, sub=f"agent-{reason}", **claims)
    # When it is used
    status, body, _ = front.call("GET", "/v1/subjects/ACC-9/memories", token)
    # Then 401 says which check failed
    assert status == 401 and body["error"]["code"] == "unauthenticated"
    assert reason in body["error"]["message"]
    # And only a token issued for this service (its issuer and audience right) has its refusal
    # recorded in the tenant's audit chain: another audience's tenant claim means nothing here
    assert bool(denials(container, f"agent-{reason}")) is recorded


def test_given_tokens_nobody_trusted_signed_then_401_with_the_reason(front, issuer, container):
    # Given a token under a key the issuer never published, a locally signed HS256 token and the
    # issuer's token with one character of its signature changed
    unknown = issuer.token(new_key(), tenant_id=TENANT)
    secret = container.settings.jwt_secret.get_secret_value()
    local = issue_token(secret, tenant_id=TENANT, sub="u1", roles=["admin"])
    good = idp_token(issuer)
    tampered = good[:-6] + ("AAAAAA" if not good.endswith("AAAAAA") else "BBBBBB")
    # When each is used, Then each is 401 whose message names the failed check
    for token, said in ((unknown, "unknown kid"), (local, "algorithm 'HS256'"), (tampered, "signature")):
        status, body, _ = front.call("GET", "/v1/subjects/ACC-9/memories", token)
        assert status == 401 and body["error"]["code"] == "unauthenticated", body
        assert said in body["error"]["message"]


def test_given_the_issuer_is_down_then_503_with_retry_after(container, issuer):
    # Given a front that has not fetched the issuer's keys yet, and the issuer's key endpoint failing
    issuer.down = True
    try:
        with local_front(container, issuer) as fresh:
            # When a token arrives
            status, body, headers = fresh.call("GET", "/v1/subjects/ACC-9/memories", idp_token(issuer))
    finally:
        issuer.down = False
    # Then the front answers 503 with Retry-After, never the data
    assert status == 503 and body["error"]["code"] == "unavailable"
    assert int(headers["Retry-After"]) > 0


def _unsigned(header: dict[str, Any], claims: dict[str, Any]) -> str:
    def b64(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{b64(header)}.{b64(claims)}."


def test_given_unsigned_tokens_with_crit_or_a_typed_kid_or_signed_text_dates_then_401_naming_the_check(
    front, issuer
):
    # Given an unsigned token with a critical header, one whose key id is a number, and the
    # issuer's own token whose expiry is a number written as text
    kid = issuer.published[0].kid
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "a", "tenant_id": TENANT, "exp": 4_102_444_800}
    cases = (
        (_unsigned({"alg": "none", "crit": ["exp"]}, claims), "header 'crit'"),
        (_unsigned({"alg": "RS256", "kid": 12345}, claims), "header 'kid'"),
        (idp_token(issuer, exp=str(int(time.time()) + 600)), "claim 'exp'"),
        (_unsigned({"alg": "RS256", "kid": kid, "crit": ["b64"], "b64": False}, claims), "header 'crit'"),
    )
    for token, said in cases:
        # When each is used, Then 401 names the check (never a 500)
        status, body, _ = front.call("GET", "/v1/subjects/ACC-9/memories", token)
        assert status == 401 and body["error"]["code"] == "unauthenticated", body
        assert said in body["error"]["message"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=tokens("RS256"), hs=tokens("HS256"))
def test_any_generated_token_not_signed_by_a_trusted_key_is_a_401_in_both_modes(
    front, api, issuer, drawn, hs
):
    # Given generated tokens (any header and claims), unsigned or signed with a key nobody trusts
    foreign = jwt.get_algorithm_by_name("RS256")
    jwks_token = assemble(
        drawn[0].replace('"<kid>"', json.dumps(issuer.published[0].kid)),
        drawn[1],
        (lambda d: b"") if drawn[2]["signing"] == "none" else (lambda d: foreign.sign(d, OTHER_KEY.private)),
    )
    hs_token = assemble(
        hs[0].replace('"<kid>"', '"local"'),
        hs[1],
        (lambda d: b"")
        if hs[2]["signing"] == "none"
        else (lambda d: hmac.new(b"o" * 40, d, "sha256").digest()),
    )
    # When each is used against the JWKS front and the local HS256 front
    status, body, _ = front.call("GET", "/v1/subjects/ACC-9/memories", jwks_token)
    local = api.get("/v1/subjects/ACC-9/memories", token=hs_token)
    # Then both are 401 unauthenticated, never a 5xx
    assert status == 401 and body["error"]["code"] == "unauthenticated", body
    assert local.status == 401 and local.body["error"]["code"] == "unauthenticated", local.body


OTHER_KEY = new_key()
