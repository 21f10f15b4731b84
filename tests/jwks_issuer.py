"""A local test identity provider: real RSA and EC keys, its JWKS served over HTTP on loopback
(pytest-httpserver), tokens signed the way an IdP signs them. Keys rotate on demand; the server
log counts how often the key set was fetched."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from pytest_httpserver import HTTPServer

ISSUER = "https://idp.test/tenant-acme"
AUDIENCE = "agent-memory-api"
JWKS_PATH = "/.well-known/jwks.json"


@dataclass
class SigningKey:
    kid: str
    alg: str
    private: Any

    def public_jwk(self) -> dict[str, Any]:
        algorithm = jwt.get_algorithm_by_name(self.alg)
        jwk = json.loads(algorithm.to_jwk(self.private.public_key()))
        return {**jwk, "kid": self.kid, "use": "sig", "alg": self.alg}


def new_key(alg: str = "RS256") -> SigningKey:
    private: Any
    if alg.startswith("ES"):
        private = ec.generate_private_key(ec.SECP256R1())
    else:
        private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return SigningKey(kid=f"{alg.lower()}-{uuid.uuid4().hex[:8]}", alg=alg, private=private)


@dataclass
class TestIssuer:
    server: HTTPServer
    issuer: str = ISSUER
    audience: str = AUDIENCE
    published: list[SigningKey] = field(default_factory=list)
    down: bool = False

    __test__ = False  # not a test class

    def __post_init__(self) -> None:
        self.server.expect_request(JWKS_PATH).respond_with_handler(self._jwks)

    def _jwks(self, request: Any) -> Any:
        from werkzeug import Response

        if self.down:
            return Response("unavailable", status=503)
        body = json.dumps({"keys": [k.public_jwk() for k in self.published]})
        return Response(body, content_type="application/json")

    @property
    def jwks_url(self) -> str:
        return self.server.url_for(JWKS_PATH)

    @property
    def fetches(self) -> int:
        """How many times the key set was asked for."""
        return sum(1 for request, _ in self.server.log if request.path == JWKS_PATH)

    def publish(self, key: SigningKey) -> SigningKey:
        self.published.append(key)
        return key

    def rotate(self, alg: str = "RS256") -> SigningKey:
        """A new key replaces every published one (the old kid is no longer in the set)."""
        key = new_key(alg)
        self.published[:] = [key]
        return key

    def token(
        self,
        key: SigningKey | None = None,
        *,
        ttl_s: int = 600,
        headers: dict[str, Any] | None = None,
        **claims: Any,
    ) -> str:
        key = key or self.published[0]
        now = int(time.time())
        body = {
            "iss": self.issuer,
            "aud": self.audience,
            "sub": "agent-7",
            "tenant_id": "acme",
            "roles": ["agent"],
            "iat": now,
            "exp": now + ttl_s,
            **claims,
        }
        body = {k: v for k, v in body.items() if v is not None}  # a claim given as None is left out
        return jwt.encode(body, key.private, algorithm=key.alg, headers={"kid": key.kid, **(headers or {})})


def start_issuer(alg: str = "RS256") -> TestIssuer:
    server = HTTPServer(host="127.0.0.1", port=0)
    server.start()
    issuer = TestIssuer(server)
    issuer.publish(new_key(alg))
    return issuer
