"""`memory serve` configured for an identity provider (MEMORY_JWT_JWKS_URL, issuer, audience,
claim settings in the environment), as an operator runs it: the test issuer's ES256 token is
served, a wrong-audience one and a `memory token` one are refused with their reasons."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from jwks_issuer import AUDIENCE, ISSUER, TestIssuer, start_issuer
from serve_process import MEMORY, memory_serve

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def issuer() -> Iterator[TestIssuer]:
    test_issuer = start_issuer("ES256")
    yield test_issuer
    test_issuer.server.stop()


@pytest.fixture(scope="module")
def served(issuer: TestIssuer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    data_dir = tmp_path_factory.mktemp("jwks-data")
    with memory_serve(
        data_dir,
        ready="tokens:",
        MEMORY_JWT_JWKS_URL=issuer.jwks_url,
        MEMORY_JWT_ISSUER=ISSUER,
        MEMORY_JWT_AUDIENCE=AUDIENCE,
        MEMORY_JWT_ROLES_CLAIM="groups",
        MEMORY_JWT_ROLE_MAP=json.dumps({"Memory Agents": "agent"}),
    ) as served:
        yield {"base": served.base, "banner": served.banner, "env": served.env}


def get(base: str, token: str) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"{base}/v1/subjects/ACC-1/memories", headers={"Authorization": f"Bearer {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_the_banner_says_which_tokens_are_accepted(served):
    assert f"ES256 from {ISSUER} (JWKS), no local tokens" in served["banner"].replace("RS256/", "")


def test_the_issuers_token_is_served_and_wrong_ones_are_refused_with_their_reason(served, issuer):
    # Given the issuer's token with the IdP's group name, one for another audience, and a local one
    good = issuer.token(roles=None, groups=["Memory Agents", "Everyone"])
    wrong_audience = issuer.token(roles=None, groups=["Memory Agents"], aud="another-api")
    local = subprocess.run(
        [MEMORY, "token", "--tenant", "acme", "--sub", "me", "--roles", "agent"],
        env=served["env"],
        capture_output=True,
        text=True,
        check=True,
    )
    # When each is used against the server
    # Then the issuer's is served; the others are 401 with the check that failed
    assert get(served["base"], good)[0] == 200
    status, body = get(served["base"], wrong_audience)
    assert status == 401 and "audience" in body["error"]["message"]
    status, body = get(served["base"], local.stdout.strip())
    assert status == 401 and "algorithm 'HS256' is not accepted" in body["error"]["message"]
    # And `memory token` warned that this server accepts only its issuer's tokens
    assert "accepts only its issuer's tokens" in local.stderr


def test_the_consoles_development_sign_in_is_absent_in_jwks_mode(served):
    # Given `memory serve` on loopback, checking tokens against an identity provider
    # When the console's development sign-in is asked for, from this machine
    try:
        with urllib.request.urlopen(f"{served['base']}/console/dev/token", timeout=60) as response:
            status = response.status
    except urllib.error.HTTPError as err:
        status = err.code
    # Then it does not exist: tokens come from the identity provider only
    assert status == 404
