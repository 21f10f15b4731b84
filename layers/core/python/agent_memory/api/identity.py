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


def local_secret(data_dir: Path, configured: str | None) -> str:
    """MEMORY_JWT_SECRET, else a secret generated once into the data folder (0600)."""
    if configured:
        return configured
    path = data_dir / SECRET_FILE
    if path.exists():
        return path.read_text().strip()
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
    """The caller from its token's claims; anything malformed is unauthenticated, never a crash
    (a signed token with odd claims used to raise TypeError: a 500, or a NUL sent to the database)."""
    try:
        raw_roles = claims.get("roles") or []
        if isinstance(raw_roles, str):
            raw_roles = [r for r in raw_roles.split(",") if r]
        if not isinstance(raw_roles, list):
            raise ValueError("roles must be a list or a comma-separated string")
        roles = frozenset(Role(r) for r in raw_roles if isinstance(r, str) and r in Role._value2member_map_)
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
