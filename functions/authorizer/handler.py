"""API Gateway Lambda (TOKEN) authorizer: validates the bearer token and passes tenant_id,
roles, sub, clearance and subjects to the handlers as context.

How tokens are verified comes from settings, read once per cold start: RS256/ES256 against the
issuer's JWKS when `MEMORY_JWT_JWKS_URL` is set, else HS256 with the deployment's secret.
"""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api.identity import (
    IdentityProviderUnavailable,
    InvalidToken,
    TokenRefused,
    TokenVerifier,
    authorizer_context,
    refused_context,
)
from agent_memory.api.verifiers import token_verifier
from agent_memory.config import Settings
from agent_memory.domain.errors import Unauthenticated
from agent_memory.observability import logger

# The verifier of this execution environment (it caches the issuer's keys); tests replace it.
VERIFIER: TokenVerifier | None = None


def build_verifier(settings: Settings) -> TokenVerifier:
    """JWKS when configured; else HS256 with MEMORY_JWT_SECRET, or the Secrets Manager secret of
    MEMORY_JWT_SECRET_ARN (looked up through a five-minute cache, so a rotation takes effect)."""
    if settings.jwt_jwks_url:
        return token_verifier(settings)
    if settings.jwt_secret is not None:
        return token_verifier(settings, settings.jwt_secret.get_secret_value())
    arn = settings.jwt_secret_arn
    if not arn:
        raise RuntimeError(
            "the authorizer needs MEMORY_JWT_JWKS_URL, MEMORY_JWT_SECRET or MEMORY_JWT_SECRET_ARN"
        )
    # Only this path reaches Secrets Manager: boto3 loads here, not in every cold import.
    from aws_lambda_powertools.utilities import parameters

    return token_verifier(settings, lambda: str(parameters.get_secret(arn, max_age=300)))


def verifier() -> TokenVerifier:
    global VERIFIER
    if VERIFIER is None:
        VERIFIER = build_verifier(Settings())
    return VERIFIER


@logger.inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    token = (event.get("authorizationToken") or "").removeprefix("Bearer ").strip()
    try:
        ctx = authorizer_context(verifier().verify(token))
    except TokenRefused as exc:
        # Signed by the trusted key, claims refused (expired, unknown role, wrong audience): the
        # function answers 401 with the reason and records the refusal in the tenant's audit
        # chain; the context grants nothing.
        logger.info("token refused", extra={"reason": exc.reason})
        ctx = refused_context(exc)
    except IdentityProviderUnavailable:
        # Nothing can be verified: fail (API Gateway answers 503), never allow.
        logger.warning("identity provider keys unavailable")
        raise
    except Unauthenticated as exc:
        logger.info(
            "token refused", extra={"reason": exc.reason if isinstance(exc, InvalidToken) else "claims"}
        )
        raise Exception("Unauthorized") from exc  # API Gateway's contract for a 401
    return {
        "principalId": ctx["sub"],
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [
                {"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": event["methodArn"]}
            ],
        },
        "context": ctx,
    }
