"""Which verifier checks bearer tokens, as the settings say: the issuer's JWKS (api/jwks.py) or
the deployment's HS256 secret (api/identity.py). It names both, and the JWKS module is built on the
identity one, so the choice lives here rather than in either. The JWKS module loads only when a
JWKS is configured."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from agent_memory.api.identity import SecretVerifier, TokenVerifier
from agent_memory.domain.errors import ConfigurationError

if TYPE_CHECKING:
    from agent_memory.config import Settings


def token_verifier(settings: Settings, secret: str | Callable[[], str] | None = None) -> TokenVerifier:
    """The verifier the settings ask for: JWKS when `MEMORY_JWT_JWKS_URL` is set (HS256 refused),
    else HS256 with `secret` (the local or deployment secret). Built once per process: the JWKS
    verifier holds the issuer's keys between calls."""
    if settings.jwt_jwks_url:
        from agent_memory.api.jwks import JwksVerifier

        return JwksVerifier.from_settings(settings)
    if secret is None:
        raise ConfigurationError("HS256 tokens need a secret (MEMORY_JWT_SECRET) or MEMORY_JWT_JWKS_URL")
    return SecretVerifier(secret)
