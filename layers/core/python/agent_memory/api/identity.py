"""Identity: which tokens the service accepts and the caller they name.

Two ways to verify a bearer token, chosen by settings (`api.verifiers.token_verifier`):
- HS256 with the deployment's secret (local development, `memory token`);
- RS256/ES256 from an identity provider, checked against its published keys (JWKS) with a
  configured issuer and audience, its claims mapped to tenant, roles, clearance and subjects
  (`ClaimMapping`). With a JWKS configured no HS256 token is accepted at all.
Either way the result is the same canonical claims, read into a `Principal` by
`principal_from_claims`, and carried by the API Gateway authorizer as `authorizer_context`.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import secrets
import unicodedata
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agent_memory.domain.enums import Role, Sensitivity
from agent_memory.domain.errors import Unauthenticated, Unavailable

if TYPE_CHECKING:
    from collections.abc import Callable

    import jwt

from agent_memory.domain.ids import ID_RULE, valid_id
from agent_memory.domain.records import Principal

ALGORITHM = "HS256"
SECRET_FILE = "jwt-secret"
# HS256 with a short secret can be brute-forced offline from one token: refuse to sign or verify
# with fewer than 32 bytes (RFC 7518 3.2 asks for a key at least as long as the hash).
MIN_SECRET_BYTES = 32
# A token bound to subjects names a few (RET-02: the authenticated customer); the binding travels
# in the authorizer's context and in a setting read by row-level security, both kept small.
MAX_BOUND_SUBJECTS = 20
# A bearer token longer than this is refused before it is decoded (an IdP's tokens with many
# groups stay well below; API Gateway caps the whole header at 10 KiB).
MAX_TOKEN_CHARS = 16_384
# Registered time claims: NumericDate, a JSON number (RFC 7519 2), never text that reads as one.
TIME_CLAIMS = ("exp", "nbf", "iat")


class InvalidToken(Unauthenticated):
    """A refused token, with the check that failed as `reason`: signature, algorithm, malformed,
    header, unknown_key, issuer, audience, expired, not_yet_valid, claims. The message says the same in
    words; neither ever contains a secret or a key."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class TokenRefused(InvalidToken):
    """A token whose signature verified with a trusted key but which was refused (expired, unknown
    role, malformed binding, wrong audience): the function answers 401 with the reason. When the
    token was also issued for this service (`tenant_id` set: its issuer and audience passed), its
    tenant and subject are genuine and the refusal is recorded in that tenant's audit chain. A
    token whose signature did not verify names nothing anyone can trust: a plain `InvalidToken`."""

    def __init__(
        self, message: str, *, tenant_id: str | None, actor: str | None, reason: str = "claims"
    ) -> None:
        super().__init__(message, reason=reason)
        self.tenant_id = tenant_id
        self.actor = actor


class IdentityProviderUnavailable(Unavailable):
    """The issuer's keys cannot be fetched: no token can be verified, so none is accepted (the
    authorizer fails, which API Gateway answers with 503; the local server answers 503)."""


class WeakSecret(ValueError):
    """The signing secret is too short to be used."""


def require_strong_secret(secret: str) -> str:
    if len(secret.encode("utf-8")) < MIN_SECRET_BYTES:
        raise WeakSecret(
            f"the token signing secret (MEMORY_JWT_SECRET) must be at least {MIN_SECRET_BYTES} bytes;"
            " unset it to have one generated into the data folder"
        )
    return secret


def local_secret(data_dir: Path, configured: str | None) -> str:
    """MEMORY_JWT_SECRET, else a secret generated once into the data folder (0600)."""
    if configured:
        return require_strong_secret(configured)
    path = data_dir / SECRET_FILE
    if path.exists():
        return require_strong_secret(path.read_text().strip())
    data_dir.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(48)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secret)
    return secret


def issue_token(
    secret: str,
    *,
    tenant_id: str,
    sub: str,
    roles: list[str],
    clearance: str = "internal",
    ttl: timedelta = timedelta(hours=12),
    subjects: list[str] | None = None,
) -> str:
    """A signed token. `subjects`: bind it to those subject ids (every read and write of the
    token is restricted to them); None: not bound."""
    require_strong_secret(secret)
    for r in roles:
        Role(r)  # unknown roles are a mistake worth failing on
    Sensitivity(clearance)
    now = datetime.now(UTC)
    claims: dict[str, Any] = {
        "sub": sub,
        "tenant_id": tenant_id,
        "roles": roles,
        "clearance": clearance,
        "iat": now,
        "exp": now + ttl,
    }
    if subjects is not None:
        _subjects(subjects)  # a binding this service would refuse is a mistake worth failing on
        claims["subjects"] = subjects
    import jwt  # here, not at import: handlers behind the authorizer never read a token

    return jwt.encode(claims, secret, algorithm=ALGORITHM)


def verify_token(secret: str, token: str) -> dict[str, Any]:
    """The token's claims, checked; `TokenRefused` when its signature verified and its claims did
    not pass, `InvalidToken` when nothing in it can be trusted."""
    import jwt

    require_strong_secret(secret)
    check_token_form(token)
    try:
        claims = jwt.decode(token, secret, algorithms=[ALGORITHM], options={"require": ["exp", "sub"]})
    except jwt.InvalidSignatureError as exc:
        # The commonest local mistake: a token minted with another data folder's secret.
        raise InvalidToken(
            "invalid token: signature does not match this server's secret (mint it with `memory token`"
            " using the same MEMORY_DATA_DIR or MEMORY_JWT_SECRET as the server)",
            reason="signature",
        ) from exc
    except jwt.InvalidAlgorithmError as exc:
        raise InvalidToken(f"invalid token: algorithm must be {ALGORITHM}", reason="algorithm") from exc
    except jwt.DecodeError as exc:
        raise InvalidToken("invalid token: not a JWT (header.payload.signature)", reason="malformed") from exc
    except jwt.InvalidTokenError as exc:
        message, reason = claims_failure(exc)
        raise refusal_from_claims(_hs256_claims(secret, token), message, reason) from exc
    try:
        principal_from_claims(claims)  # shape check
    except Unauthenticated as exc:
        raise refusal_from_claims(claims, exc.message, "claims") from exc
    return claims


def check_token_form(token: str) -> dict[str, Any]:
    """The token's header, once its form is one this service reads, checked before any key or
    signature: three base64url segments of JSON objects without duplicate names, a header with
    no critical extensions (`crit`: none is supported) and a text `kid` if any, and time claims
    (`exp`, `nbf`, `iat`) that are finite numbers. `InvalidToken` naming the check otherwise:
    whatever a token holds, refusing it is a 401, never a crash."""
    if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_CHARS:
        raise InvalidToken(
            f"invalid token: not a JWT of at most {MAX_TOKEN_CHARS} characters", reason="malformed"
        )
    segments = token.split(".")
    if len(segments) != 3:
        raise InvalidToken("invalid token: not a JWT (header.payload.signature)", reason="malformed")
    header = _json_segment(segments[0], "header")
    claims = _json_segment(segments[1], "payload")
    if "crit" in header:
        raise InvalidToken(
            "invalid token: header 'crit' names extensions this service does not support",
            reason="header",
        )
    if not isinstance(header.get("alg"), str):
        raise InvalidToken("invalid token: header 'alg' must be a string", reason="header")
    if "kid" in header and not isinstance(header["kid"], str):
        raise InvalidToken("invalid token: header 'kid' must be a string", reason="header")
    for name in TIME_CLAIMS:
        value = claims.get(name)
        if name in claims and (
            isinstance(value, bool) or not isinstance(value, int | float) or not _finite(value)
        ):
            raise InvalidToken(
                f"invalid token: claim {name!r} must be a number of seconds (NumericDate)",
                reason="claims",
            )
    return header


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value) and abs(value) < 1e15
    except OverflowError:  # an integer too large for a float
        return False


def _json_segment(segment: str, name: str) -> dict[str, Any]:
    """One segment of a token as a JSON object; duplicate names are refused (RFC 7515 4: a reader
    either refuses them or takes the last, and a signer and this service must not read two)."""
    try:
        raw = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
        value = json.loads(raw, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except (binascii.Error, ValueError, RecursionError) as exc:
        raise InvalidToken(
            f"invalid token: its {name} is not a base64url JSON object without duplicate names",
            reason="malformed",
        ) from exc
    if not isinstance(value, dict):
        raise InvalidToken(f"invalid token: its {name} is not a JSON object", reason="malformed")
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("duplicate name")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def claims_failure(exc: jwt.InvalidTokenError) -> tuple[str, str]:
    """What a failed claim check says, and its reason code (the signature verified)."""
    import jwt

    if isinstance(exc, jwt.ExpiredSignatureError):
        return "token expired", "expired"
    if isinstance(exc, jwt.InvalidIssuerError):
        return "invalid token: issuer is not the one this service trusts", "issuer"
    if isinstance(exc, jwt.InvalidAudienceError):
        return "invalid token: audience is not this service", "audience"
    if isinstance(exc, jwt.ImmatureSignatureError):
        return "invalid token: not valid yet (nbf or iat in the future)", "not_yet_valid"
    if isinstance(exc, jwt.MissingRequiredClaimError):
        reason = {"iss": "issuer", "aud": "audience", "exp": "expired"}.get(exc.claim, "claims")
        return f"invalid token: missing claim {exc.claim!r}", reason
    if isinstance(exc, jwt.exceptions.InvalidSubjectError):
        return "invalid token: claim 'sub' must be a string", "claims"
    if isinstance(exc, jwt.exceptions.InvalidJTIError):
        return "invalid token: claim 'jti' must be a string", "claims"
    if isinstance(exc, jwt.InvalidIssuedAtError):
        return "invalid token: claim 'iat' must be a number of seconds (NumericDate)", "claims"
    return "invalid token: its header or claims are not ones this service accepts", "claims"


def _hs256_claims(secret: str, token: str) -> dict[str, Any] | None:
    """The claims of a token whose signature verifies, read without the time checks."""
    import jwt

    try:
        return dict(jwt.decode(token, secret, algorithms=[ALGORITHM], options=CLAIMS_ONLY))
    except jwt.InvalidTokenError:
        return None


CLAIMS_ONLY: Any = {
    "verify_exp": False,
    "verify_nbf": False,
    "verify_iat": False,
    "verify_iss": False,
    "verify_aud": False,
    "require": [],
}


def refusal_from_claims(claims: dict[str, Any] | None, message: str, reason: str) -> InvalidToken:
    """A refusal naming the token's tenant and subject when its signature verified (`claims`
    are the canonical ones), a plain refusal otherwise."""
    if claims is None:
        return InvalidToken(message, reason=reason)
    try:
        tenant_id = _identity(claims["tenant_id"])
    except (KeyError, ValueError, TypeError):
        return InvalidToken(message, reason=reason)
    try:
        actor = _identity(claims.get("sub"))
    except ValueError:
        actor = "unidentified"
    return TokenRefused(message, tenant_id=tenant_id, actor=actor, reason=reason)


class TokenVerifier(Protocol):
    """Checks a bearer token: its canonical claims (sub, tenant_id, roles, clearance, subjects,
    exp), else `InvalidToken`/`TokenRefused`, or `IdentityProviderUnavailable` when it cannot
    be checked at all."""

    def verify(self, token: str) -> dict[str, Any]: ...


class SecretVerifier:
    """HS256 with the deployment's secret (local development). The secret is asked for on every
    call (`secret` may be a cached lookup, so a rotated secret takes effect without a restart)."""

    mode = "hs256"

    def __init__(self, secret: str | Callable[[], str]) -> None:
        if isinstance(secret, str):
            require_strong_secret(secret)
        self._secret = secret

    def verify(self, token: str) -> dict[str, Any]:
        secret = self._secret() if callable(self._secret) else self._secret
        return verify_token(secret, token)


def authorizer_context(claims: dict[str, Any]) -> dict[str, str]:
    """Flatten claims the way a Lambda authorizer's context must be (strings only), from the
    principal the claims were checked as: the handler sees exactly the roles that were checked
    (a role "x,admin" in a list is dropped, never split into "admin" downstream)."""
    p = principal_from_claims(claims)
    context = {
        "sub": p.sub,
        "tenant_id": p.tenant_id,
        "roles": ",".join(sorted(r.value for r in p.roles)),
        "clearance": p.clearance.value,
    }
    if p.subjects is not None:  # a JSON list as text: the context holds strings only
        context["subjects"] = json.dumps(sorted(p.subjects))
    return context


def refused_context(refusal: TokenRefused) -> dict[str, str]:
    """The authorizer's context for a token whose signature verified and whose claims were refused:
    the request goes on to its function, which answers 401 before routing and records the refusal
    in the tenant's audit chain (`api.http`). It names no roles: it authorizes nothing."""
    context = {"sub": refusal.actor or "unidentified", "refused": refusal.message}
    if refusal.tenant_id is not None:  # issued for this service: the refusal joins its audit chain
        context["tenant_id"] = refusal.tenant_id
    return context


def principal_from_claims(claims: dict[str, Any]) -> Principal:
    """The caller from its token's claims. `roles` must be a list of known roles: a string, or a
    role this service does not know, makes the token unauthenticated (a typo in an IdP mapping
    must fail loudly, not silently grant less or more). Anything malformed is unauthenticated,
    never a crash."""
    raw_roles = claims.get("roles")
    if not isinstance(raw_roles, list) or not all(
        isinstance(r, str) and r in Role._value2member_map_ for r in raw_roles
    ):
        raise Unauthenticated(f"token claim 'roles' must be a list of known roles ({', '.join(Role)})")
    return _principal(claims, frozenset(Role(r) for r in raw_roles), _bound_subjects(claims))


def principal_from_authorizer(context: dict[str, Any]) -> Principal:
    """The caller from the authorizer's context, which `authorizer_context` wrote from checked
    claims (roles as one comma-separated string: the context holds strings only). A context for
    a refused token (`refused_context`) is never a principal."""
    if "refused" in context:
        raise Unauthenticated("missing or invalid bearer token")
    raw = context.get("roles") or ""
    if not isinstance(raw, str):
        raise Unauthenticated("missing or invalid bearer token")
    names = [r for r in raw.split(",") if r]
    if not all(r in Role._value2member_map_ for r in names):
        raise Unauthenticated("missing or invalid bearer token")
    subjects: frozenset[str] | None = None
    if "subjects" in context:
        try:
            decoded = json.loads(context["subjects"])
        except (TypeError, ValueError) as exc:
            raise Unauthenticated("missing or invalid bearer token") from exc
        subjects = _bound_subjects({"subjects": decoded})
    return _principal(context, frozenset(Role(r) for r in names), subjects)


def _principal(claims: dict[str, Any], roles: frozenset[Role], subjects: frozenset[str] | None) -> Principal:
    try:
        return Principal(
            sub=_identity(claims["sub"]),
            tenant_id=_identity(claims["tenant_id"]),
            roles=roles,
            clearance=Sensitivity(claims.get("clearance") or Sensitivity.INTERNAL.value),
            subjects=subjects,
        )
    except (KeyError, ValueError, TypeError) as exc:
        raise Unauthenticated("token claims are incomplete (sub, tenant_id, roles)") from exc


def _bound_subjects(claims: dict[str, Any]) -> frozenset[str] | None:
    """The `subjects` claim: absent, the token is not bound; present, it must be a list of 1 to
    MAX_BOUND_SUBJECTS subject ids. Anything else (a string, null, an empty list, an id outside
    the id rule) makes the token unauthenticated: a binding must never widen silently."""
    if "subjects" not in claims:
        return None
    try:
        return _subjects(claims["subjects"])
    except ValueError as exc:
        raise Unauthenticated(str(exc)) from exc


def _subjects(raw: Any) -> frozenset[str]:
    if (
        not isinstance(raw, list)
        or not 1 <= len(raw) <= MAX_BOUND_SUBJECTS
        or not all(isinstance(s, str) and valid_id(s) for s in raw)
    ):
        raise ValueError(
            f"token claim 'subjects' must be a list of 1-{MAX_BOUND_SUBJECTS} subject ids ({ID_RULE})"
        )
    return frozenset(raw)


def _identity(value: Any) -> str:
    """A tenant or subject claim: 1-200 characters of text (numbers are accepted as text), none
    of them a control, format, surrogate or line-separator character."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError("identity claims must be strings")
    text = str(value).strip()
    if not text or len(text) > 200 or any(unicodedata.category(ch) in _NOT_IN_AN_ID for ch in text):
        raise ValueError("identity claims must be 1-200 characters without control characters")
    return text


_NOT_IN_AN_ID = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
