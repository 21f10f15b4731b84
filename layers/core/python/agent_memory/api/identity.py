"""Identity: HS256 JWTs locally, claims from the API Gateway authorizer in AWS."""

from __future__ import annotations

import os
import secrets
import unicodedata
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jwt

from agent_memory.domain.enums import Role, Sensitivity
from agent_memory.domain.errors import Unauthenticated
from agent_memory.domain.records import Principal

ALGORITHM = "HS256"
SECRET_FILE = "jwt-secret"
# HS256 with a short secret can be brute-forced offline from one token: refuse to sign or verify
# with fewer than 32 bytes (RFC 7518 3.2 asks for a key at least as long as the hash).
MIN_SECRET_BYTES = 32


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
) -> str:
    require_strong_secret(secret)
    for r in roles:
        Role(r)  # unknown roles are a mistake worth failing on
    Sensitivity(clearance)
    now = datetime.now(UTC)
    claims = {
        "sub": sub,
        "tenant_id": tenant_id,
        "roles": roles,
        "clearance": clearance,
        "iat": now,
        "exp": now + ttl,
    }
    return jwt.encode(claims, secret, algorithm=ALGORITHM)


def verify_token(secret: str, token: str) -> dict[str, Any]:
    require_strong_secret(secret)
    try:
        claims = jwt.decode(token, secret, algorithms=[ALGORITHM], options={"require": ["exp", "sub"]})
    except jwt.ExpiredSignatureError as exc:
        raise Unauthenticated("token expired") from exc
    except jwt.InvalidTokenError as exc:
        raise Unauthenticated("invalid token") from exc
    principal_from_claims(claims)  # shape check
    return claims


def authorizer_context(claims: dict[str, Any]) -> dict[str, str]:
    """Flatten claims the way a Lambda authorizer's context must be (strings only), from the
    principal the claims were checked as: the handler sees exactly the roles that were checked
    (a role "x,admin" in a list is dropped, never split into "admin" downstream)."""
    p = principal_from_claims(claims)
    return {
        "sub": p.sub,
        "tenant_id": p.tenant_id,
        "roles": ",".join(sorted(r.value for r in p.roles)),
        "clearance": p.clearance.value,
    }


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
    return _principal(claims, frozenset(Role(r) for r in raw_roles))


def principal_from_authorizer(context: dict[str, Any]) -> Principal:
    """The caller from the authorizer's context, which `authorizer_context` wrote from checked
    claims (roles as one comma-separated string: the context holds strings only)."""
    raw = context.get("roles") or ""
    if not isinstance(raw, str):
        raise Unauthenticated("missing or invalid bearer token")
    names = [r for r in raw.split(",") if r]
    if not all(r in Role._value2member_map_ for r in names):
        raise Unauthenticated("missing or invalid bearer token")
    return _principal(context, frozenset(Role(r) for r in names))


def _principal(claims: dict[str, Any], roles: frozenset[Role]) -> Principal:
    try:
        return Principal(
            sub=_identity(claims["sub"]),
            tenant_id=_identity(claims["tenant_id"]),
            roles=roles,
            clearance=Sensitivity(claims.get("clearance") or Sensitivity.INTERNAL.value),
        )
    except (KeyError, ValueError, TypeError) as exc:
        raise Unauthenticated("token claims are incomplete (sub, tenant_id, roles)") from exc


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
