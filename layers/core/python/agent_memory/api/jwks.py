"""Tokens from an identity provider: RS256/ES256 checked against the issuer's JWKS.

The keys come from PyJWT's `PyJWKClient`: the key set is cached (`jwt_jwks_cache_s`); a token
signed with a key id the cache does not hold fetches the set again, at most once per
`jwt_jwks_refetch_s` (a rotation is picked up; a stream of made-up key ids is not a stream of
requests to the issuer), and an issuer that cannot be reached within `jwt_jwks_timeout_s` is
`IdentityProviderUnavailable`, never an accepted token. The token's algorithm must be one of the
configured asymmetric ones and the key's own: `alg: none` and an HS256 token "signed" with a
public key are refused before any key is looked up.

`ClaimMapping` reads the issuer's claims into the service's canonical ones (sub, tenant_id,
roles, clearance, subjects), which `principal_from_claims` then checks as for any token.
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import jwt

from agent_memory.api.identity import (
    CLAIMS_ONLY,
    IdentityProviderUnavailable,
    InvalidToken,
    TokenRefused,
    check_token_form,
    claims_failure,
    principal_from_claims,
    refusal_from_claims,
)
from agent_memory.domain.enums import Role
from agent_memory.domain.errors import ConfigurationError, Unauthenticated

if TYPE_CHECKING:
    from agent_memory.config import Settings

# Asymmetric algorithms only: an HMAC algorithm would let anyone holding the public key sign.
ASYMMETRIC_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
_MISSING = object()


def claim_at(claims: Mapping[str, Any], path: str) -> Any:
    """The claim named `path`, else the value at its dotted path (`realm_access.roles`);
    `_MISSING` when neither exists. A name with dots of its own (`https://acme.example/tenant`)
    is found whole."""
    if path in claims:
        return claims[path]
    value: Any = claims
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value


@dataclass(frozen=True)
class ClaimMapping:
    """Where the issuer puts the caller's identity, and how its role names read here.

    Roles: the claim is a list, or a space-separated string (an OAuth `scope`). With a prefix,
    only values carrying it are roles of this service (an IdP's other groups are not ours) and
    the prefix is dropped; with a role map, only mapped values count. Whatever is left must be
    a known role, or the token is refused: a typo in the IdP's configuration fails loudly."""

    sub: str = "sub"
    tenant: str = "tenant_id"
    tenant_id: str | None = None
    roles: str = "roles"
    role_prefix: str = ""
    role_map: Mapping[str, str] = field(default_factory=dict)
    clearance: str = "clearance"
    default_clearance: str = "internal"
    subjects: str = "subjects"

    def __post_init__(self) -> None:
        unknown = sorted(set(self.role_map.values()) - set(Role._value2member_map_))
        if unknown:
            raise ConfigurationError(
                f"MEMORY_JWT_ROLE_MAP maps to unknown roles {unknown}; known: {', '.join(Role)}"
            )

    @classmethod
    def from_settings(cls, settings: Settings) -> ClaimMapping:
        return cls(
            sub=settings.jwt_sub_claim,
            tenant=settings.jwt_tenant_claim,
            tenant_id=settings.jwt_tenant_id,
            roles=settings.jwt_roles_claim,
            role_prefix=settings.jwt_role_prefix,
            role_map=dict(settings.jwt_role_map),
            clearance=settings.jwt_clearance_claim,
            default_clearance=settings.jwt_default_clearance,
            subjects=settings.jwt_subjects_claim,
        )

    def canonical(self, claims: Mapping[str, Any]) -> dict[str, Any]:
        """The service's claims from the issuer's; anything the mapping cannot read is left out
        or passed as found, for `principal_from_claims` to refuse with its own message."""
        out: dict[str, Any] = {"exp": claims.get("exp")}
        sub = claim_at(claims, self.sub)
        if sub is not _MISSING:
            out["sub"] = sub
        tenant = claim_at(claims, self.tenant)
        if self.tenant_id is not None:
            if tenant is not _MISSING and tenant != self.tenant_id:
                raise Unauthenticated(f"token claim {self.tenant!r} names another tenant than this issuer's")
            tenant = self.tenant_id
        if tenant is not _MISSING:
            out["tenant_id"] = tenant
        out["roles"] = self._roles(claim_at(claims, self.roles))
        clearance = claim_at(claims, self.clearance)
        out["clearance"] = self.default_clearance if clearance in (_MISSING, None) else clearance
        subjects = claim_at(claims, self.subjects)
        if subjects is not _MISSING:
            out["subjects"] = subjects
        return out

    def _roles(self, raw: Any) -> Any:
        if raw is _MISSING:
            return None
        values = raw.split() if isinstance(raw, str) else raw
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            return raw  # refused by principal_from_claims, naming the claim
        roles: list[str] = []
        for value in values:
            if self.role_prefix:
                if not value.startswith(self.role_prefix):
                    continue
                value = value[len(self.role_prefix) :]
            if self.role_map:
                if value not in self.role_map:
                    continue
                value = self.role_map[value]
            roles.append(value)
        return roles


def _keys_url(url: str) -> str:
    """The JWKS URL, https unless it is on this machine (a test issuer)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        local = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        local = False
    if parts.scheme != "https" and not (parts.scheme == "http" and local):
        raise ConfigurationError("MEMORY_JWT_JWKS_URL must be https (http only on this machine)")
    return url


class JwksVerifier:
    """RS256/ES256 tokens of one issuer, for one audience (or a few), keys from its JWKS."""

    mode = "jwks"

    def __init__(
        self,
        *,
        jwks_url: str,
        issuer: str,
        audiences: list[str],
        algorithms: list[str] | None = None,
        audience_claim: str = "aud",
        required_claims: Mapping[str, str] | None = None,
        mapping: ClaimMapping | None = None,
        leeway_s: float = 30.0,
        cache_s: float = 300.0,
        refetch_s: float = 30.0,
        timeout_s: float = 2.0,
    ) -> None:
        algorithms = algorithms or ["RS256", "ES256"]
        weak = sorted(set(algorithms) - ASYMMETRIC_ALGORITHMS)
        if weak:
            raise ConfigurationError(
                f"MEMORY_JWT_ALGORITHMS: {weak} not accepted with a JWKS (asymmetric algorithms only)"
            )
        if not issuer or not audiences:
            raise ConfigurationError("a JWKS needs MEMORY_JWT_ISSUER and MEMORY_JWT_AUDIENCE")
        self.issuer = issuer
        self.audiences = audiences
        self.algorithms = algorithms
        self.audience_claim = audience_claim
        self.required_claims = dict(required_claims or {})
        self.mapping = mapping or ClaimMapping()
        self.leeway_s = leeway_s
        self.refetch_s = refetch_s
        self._refetch_lock = threading.Lock()
        self._last_refetch: float | None = None
        # The key set is cached for `cache_s`; fetches for unknown key ids are gated here
        # (`_may_refetch`, counted from the last such fetch), not by PyJWT's own cooldown.
        self.keys = jwt.PyJWKClient(
            _keys_url(jwks_url),
            cache_jwk_set=True,
            lifespan=cache_s,
            cooldown_duration=0,
            timeout=timeout_s,
            headers={"User-Agent": "agent-memory"},
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> JwksVerifier:
        return cls(
            jwks_url=settings.jwt_jwks_url or "",
            issuer=settings.jwt_issuer or "",
            audiences=[a.strip() for a in (settings.jwt_audience or "").split(",") if a.strip()],
            algorithms=[a.strip() for a in settings.jwt_algorithms.split(",") if a.strip()],
            audience_claim=settings.jwt_audience_claim,
            required_claims=settings.jwt_required_claims,
            mapping=ClaimMapping.from_settings(settings),
            leeway_s=settings.jwt_leeway_s,
            cache_s=settings.jwt_jwks_cache_s,
            refetch_s=settings.jwt_jwks_refetch_s,
            timeout_s=settings.jwt_jwks_timeout_s,
        )

    def verify(self, token: str) -> dict[str, Any]:
        """The token's canonical claims; `InvalidToken` naming the failed check (`TokenRefused`
        when the signature verified and the mapped claims name a tenant), or
        `IdentityProviderUnavailable` when the issuer's keys cannot be had."""
        key = self._signing_key(token)
        try:
            raw = jwt.decode(
                token,
                key,
                algorithms=self.algorithms,
                issuer=self.issuer,
                audience=self.audiences if self.audience_claim == "aud" else None,
                leeway=self.leeway_s,
                options={
                    "require": ["exp", "iss", *(["aud"] if self.audience_claim == "aud" else [])],
                    "verify_aud": self.audience_claim == "aud",
                },
            )
        except jwt.InvalidSignatureError as exc:
            raise InvalidToken(
                "invalid token: signature does not verify with the issuer's key", reason="signature"
            ) from exc
        except jwt.InvalidAlgorithmError as exc:
            raise InvalidToken(
                "invalid token: its algorithm is not the signing key's", reason="algorithm"
            ) from exc
        except jwt.DecodeError as exc:
            raise InvalidToken(
                "invalid token: not a JWT (header.payload.signature)", reason="malformed"
            ) from exc
        except jwt.InvalidTokenError as exc:
            message, reason = claims_failure(exc)
            raise self._refusal(token, key, message, reason) from exc
        failed = self._other_checks(raw)
        if failed is not None:
            raise self._refusal(token, key, *failed)
        try:
            claims = self.mapping.canonical(raw)
            principal_from_claims(claims)  # shape check, as for a local token
        except Unauthenticated as exc:
            raise self._refusal(token, key, exc.message, "claims") from exc
        return claims

    def _signing_key(self, token: str) -> jwt.PyJWK:
        header = check_token_form(token)  # its form, before any key is looked up
        alg = header.get("alg")
        if alg not in self.algorithms:
            raise InvalidToken(
                f"invalid token: algorithm {str(alg)[:20]!r} is not accepted; tokens are"
                f" {', '.join(self.algorithms)} from the configured issuer",
                reason="algorithm",
            )
        kid = header.get("kid")
        if not isinstance(kid, str) or not kid:
            raise InvalidToken("invalid token: its header names no key (kid)", reason="unknown_key")
        key = jwt.PyJWKClient.match_kid(self._key_set(refresh=False), kid)
        if key is None and self._may_refetch():  # a rotation: the issuer may have a new key
            key = jwt.PyJWKClient.match_kid(self._key_set(refresh=True), kid)
        if key is None:
            raise InvalidToken(
                "invalid token: signed with a key the issuer does not publish (unknown kid)",
                reason="unknown_key",
            )
        if key.algorithm_name not in self.algorithms:
            raise InvalidToken(
                "invalid token: the issuer's key is not for an accepted algorithm", reason="algorithm"
            )
        return key

    def _key_set(self, *, refresh: bool) -> list[jwt.PyJWK]:
        """The issuer's signing keys: cached, fetched when absent, stale or `refresh`."""
        try:
            return self.keys.get_signing_keys(refresh=refresh)
        except (jwt.PyJWKClientError, jwt.PyJWKSetError) as exc:  # unreachable, slow, no usable key
            raise IdentityProviderUnavailable(
                "the identity provider's keys cannot be fetched; retry shortly"
            ) from exc

    def _may_refetch(self) -> bool:
        """At most one fetch for unknown key ids per `refetch_s`, whatever they claim to be."""
        with self._refetch_lock:
            now = time.monotonic()
            if self._last_refetch is not None and now - self._last_refetch < self.refetch_s:
                return False
            self._last_refetch = now
            return True

    def _other_checks(self, raw: Mapping[str, Any]) -> tuple[str, str] | None:
        """The audience read from another claim (Cognito's `client_id`) and the required values."""
        if self.audience_claim != "aud" and not self._audience_ok(raw):
            return f"invalid token: audience ({self.audience_claim}) is not this service", "audience"
        missing = self._required_missing(raw)
        if missing is not None:
            return f"invalid token: claim {missing!r} must be {self.required_claims[missing]!r}", "claims"
        return None

    def _audience_ok(self, raw: Mapping[str, Any]) -> bool:
        value = raw.get(self.audience_claim)
        values = value if isinstance(value, list) else [value]
        return any(isinstance(v, str) and v in self.audiences for v in values)

    def _required_missing(self, raw: Mapping[str, Any]) -> str | None:
        return next((name for name, value in self.required_claims.items() if raw.get(name) != value), None)

    def _refusal(self, token: str, key: jwt.PyJWK, message: str, reason: str) -> InvalidToken:
        """The signature verified: a refusal the function answers with its reason, naming the
        token's tenant and subject only when the token was issued for this service (issuer,
        audience and required claims pass). An IdP's keys may sign for other issuers and
        audiences (Entra's sign for every directory), whose tenant claims mean nothing here."""
        try:
            raw = jwt.decode(token, key, algorithms=self.algorithms, options=CLAIMS_ONLY)
        except jwt.InvalidTokenError:
            return InvalidToken(message, reason=reason)
        if raw.get("iss") != self.issuer or not self._audience_ok(raw) or self._required_missing(raw):
            return TokenRefused(message, tenant_id=None, actor=None, reason=reason)
        try:
            claims = self.mapping.canonical(raw)
        except Unauthenticated:
            return TokenRefused(message, tenant_id=None, actor=None, reason=reason)
        refusal = refusal_from_claims(claims, message, reason)
        if isinstance(refusal, TokenRefused):
            return refusal
        return TokenRefused(message, tenant_id=None, actor=None, reason=reason)  # no tenant claim
